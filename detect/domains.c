/*
 * The domains each tenant's sessions have reached, for first_domain: a bounded set
 * (DOMAINS_MAX pairs; the oldest learned is forgotten first) kept in
 * STATE_DIR/detect/domains.txt, one "TENANT<TAB>DOMAIN" per line, replaced atomically
 * by detect_flush(). Without a state dir the set lives in memory only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/buf.h"
#include "common/fileio.h"
#include "common/hash.h"
#include "detect/detect_int.h"

#define DOMAINS_MAX 100000
#define DOMAINS_BUCKETS 16384

struct dent {
	char *key;              /* "tenant\tdomain" */
	struct dent *next;      /* hash chain */
};

struct domain_set {
	char *path;             /* NULL: memory only */
	struct dent *buckets[DOMAINS_BUCKETS];
	struct dent **order;    /* insertion ring, DOMAINS_MAX slots */
	size_t head, n;
	bool dirty;
};

static size_t hash_of(const char *s)
{
	return fnv1a(FNV1A_INIT, s, strlen(s)) % DOMAINS_BUCKETS;
}

static void unlink_entry(struct domain_set *s, struct dent *e)
{
	struct dent **pp = &s->buckets[hash_of(e->key)];

	while (*pp && *pp != e)
		pp = &(*pp)->next;
	if (*pp)
		*pp = e->next;
	free(e->key);
	free(e);
}

/* 1 added, 0 known, -ENOMEM. */
static int add_key(struct domain_set *s, const char *key)
{
	size_t b = hash_of(key);
	struct dent *e;

	for (e = s->buckets[b]; e; e = e->next)
		if (strcmp(e->key, key) == 0)
			return 0;
	e = calloc(1, sizeof(*e));
	if (!e || !(e->key = strdup(key))) {
		free(e);
		return -ENOMEM;
	}
	if (s->n == DOMAINS_MAX) {   /* full: forget the oldest */
		unlink_entry(s, s->order[s->head]);
		s->n--;
	}
	s->order[s->head] = e;
	s->head = (s->head + 1) % DOMAINS_MAX;
	s->n++;
	e->next = s->buckets[b];
	s->buckets[b] = e;
	return 1;
}

static int load(struct domain_set *s)
{
	FILE *f = fopen(s->path, "re");
	char line[600];
	int ret = 0;

	if (!f)
		return errno == ENOENT ? 0 : -EIO;
	while (ret >= 0 && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (strchr(line, '\t'))
			ret = add_key(s, line);
	}
	if (ret >= 0 && ferror(f))
		ret = -EIO;
	fclose(f);
	return ret < 0 ? ret : 0;
}

int domains_open(struct domain_set **out, const char *state_dir)
{
	struct domain_set *s = calloc(1, sizeof(*s));
	char dir[4096];
	int ret = 0;

	if (!s || !(s->order = calloc(DOMAINS_MAX, sizeof(*s->order)))) {
		free(s);
		return -ENOMEM;
	}
	if (state_dir) {
		snprintf(dir, sizeof(dir), "%s/detect", state_dir);
		if (mkdir(dir, 0700) != 0 && errno != EEXIST)
			ret = -errno;
		if (ret == 0 && asprintf(&s->path, "%s/domains.txt", dir) < 0) {
			s->path = NULL;
			ret = -ENOMEM;
		}
		if (ret == 0)
			ret = load(s);
	}
	if (ret) {
		domains_free(s);
		return ret;
	}
	*out = s;
	return 0;
}

int domains_add(struct domain_set *s, const char *tenant, const char *domain)
{
	char key[600];
	int r;

	if (strlen(tenant) + strlen(domain) + 2 > sizeof(key) || strpbrk(tenant, "\t\n") ||
	    strpbrk(domain, "\t\n"))
		return 0;   /* not a name we can keep: never reported as new */
	snprintf(key, sizeof(key), "%s\t%s", tenant, domain);
	r = add_key(s, key);
	if (r == 1)
		s->dirty = true;
	return r;
}

int domains_flush(struct domain_set *s)
{
	struct buf b;
	int ret;

	if (!s || !s->path || !s->dirty)
		return 0;
	buf_init(&b);
	for (size_t k = s->n; k > 0; k--) {   /* oldest first */
		buf_puts(&b, s->order[(s->head + DOMAINS_MAX - k) % DOMAINS_MAX]->key);
		buf_putc(&b, '\n');
	}
	ret = b.oom ? -ENOMEM : file_replace_atomic(s->path, b.data ? b.data : "", b.len, 0600);
	buf_free(&b);
	if (ret == 0)
		s->dirty = false;
	return ret;
}

void domains_free(struct domain_set *s)
{
	if (!s)
		return;
	for (size_t b = 0; b < DOMAINS_BUCKETS; b++)
		while (s->buckets[b]) {
			struct dent *e = s->buckets[b];

			s->buckets[b] = e->next;
			free(e->key);
			free(e);
		}
	free(s->order);
	free(s->path);
	free(s);
}
