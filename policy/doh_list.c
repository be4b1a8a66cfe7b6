/*
 * The DoH endpoint list (data/doh-endpoints.txt, data/README.md): names and addresses
 * of public DNS-over-HTTPS servers, read at start and reload from a configurable path
 * so it can be replaced without a rebuild. All or nothing, like the config: any bad
 * line is an error with FILE:LINE and no list is returned.
 */
#include "policy/policy_int.h"
#include "conf/conf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DOH_MAX_FILE_BYTES (1u << 20)
#define DOH_LINE_MAX 300

void doh_list_free(struct doh_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n_names; i++)
		free(l->names[i]);
	free(l->names);
	free(l->v4);
	free(l->v6);
	free(l);
}

size_t doh_list_count(const struct doh_list *l)
{
	return l ? l->n_names + l->n_v4 + l->n_v6 : 0;
}

static int push_addr(uint8_t **v, size_t *n, const void *a, size_t alen)
{
	uint8_t *nv = realloc(*v, (*n + 1) * alen);

	if (!nv)
		return -ENOMEM;
	memcpy(nv + *n * alen, a, alen);
	*v = nv;
	(*n)++;
	return 0;
}

static int push_name(struct doh_list *l, const char *name)
{
	char **nv = realloc(l->names, (l->n_names + 1) * sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	l->names = nv;
	nv[l->n_names] = strdup(name);
	if (!nv[l->n_names])
		return -ENOMEM;
	l->n_names++;
	return 0;
}

static int report(struct config_errors *errs, const char *file, unsigned line,
		  const char *what, const char *entry, const char *why)
{
	char msg[DOH_LINE_MAX + 160];

	snprintf(msg, sizeof(msg), "%s '%s': %s", what, entry, why);
	if (errs && config_errors_add(errs, file, line, 0, msg))
		return -ENOMEM;
	return -EINVAL;
}

/* One entry (comment and blanks already stripped): an address or a name. */
static int parse_entry(struct doh_list *l, const char *file, unsigned line, char *e,
		       struct config_errors *errs)
{
	uint8_t a[16];
	char name[POLICY_NAME_MAX];
	const char *why;

	if (inet_pton(AF_INET, e, a) == 1)
		return push_addr(&l->v4, &l->n_v4, a, 4);
	if (strchr(e, ':')) {
		if (inet_pton(AF_INET6, e, a) == 1)
			return push_addr(&l->v6, &l->n_v6, a, 16);
		return report(errs, file, line, "address", e, "not a valid IPv6 address");
	}
	if (policy_name_normalize(e, strlen(e), name, &why))
		return report(errs, file, line, "name", e, why);
	return push_name(l, name);
}

/* Cuts the comment and the surrounding blanks off line[0..len); returns the entry. */
static char *trim(char *s)
{
	char *end;

	s[strcspn(s, "#")] = '\0';
	while (*s == ' ' || *s == '\t' || *s == '\r')
		s++;
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		*--end = '\0';
	return s;
}

static int parse_line(struct doh_list *l, const char *file, unsigned lineno,
		      const char *p, size_t n, struct config_errors *errs)
{
	char buf[DOH_LINE_MAX + 1], *e;

	if (n > DOH_LINE_MAX)
		return report(errs, file, lineno, "line", "...", "longer than 300 bytes");
	if (memchr(p, '\0', n))
		return report(errs, file, lineno, "line", "...", "contains a NUL byte");
	memcpy(buf, p, n);
	buf[n] = '\0';
	e = trim(buf);
	if (*e == '\0')
		return 0;
	if (strpbrk(e, " \t"))
		return report(errs, file, lineno, "entry", e, "one name or address per line");
	return parse_entry(l, file, lineno, e, errs);
}

int doh_list_parse(const char *name, const char *text, size_t len, struct doh_list **out,
		   struct config_errors *errs)
{
	struct doh_list *l = calloc(1, sizeof(*l));
	unsigned lineno = 0;
	int ret = 0;

	*out = NULL;
	if (!l)
		return -ENOMEM;
	for (size_t off = 0; off < len;) {
		const char *p = text + off, *nl = memchr(p, '\n', len - off);
		size_t n = nl ? (size_t)(nl - p) : len - off;
		int r = parse_line(l, name, ++lineno, p, n, errs);

		if (r == -ENOMEM) {
			ret = r;
			break;
		}
		if (r)
			ret = r;
		off += n + 1;
	}
	if (ret) {
		doh_list_free(l);
		return ret;
	}
	*out = l;
	return 0;
}

static int read_file(const char *path, char **text, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	char *buf = NULL;
	size_t n = 0;
	int ret = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		ret = -errno;
	else if (!S_ISREG(st.st_mode))
		ret = -EINVAL;   /* a directory or a device: say so rather than read it */
	else if (st.st_size > DOH_MAX_FILE_BYTES)
		ret = -EFBIG;
	if (ret)
		goto out;
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		ret = -ENOMEM;
		goto out;
	}
	while (n < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + n, (size_t)st.st_size - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			ret = r < 0 ? -errno : -EIO;
			goto out;
		}
		n += (size_t)r;
	}
	*text = buf;
	*len = n;
	buf = NULL;
out:
	free(buf);
	close(fd);
	return ret;
}

int doh_list_load(const char *path, struct doh_list **out, struct config_errors *errs)
{
	char *text = NULL, msg[200];
	size_t len = 0;
	int ret;

	*out = NULL;
	ret = read_file(path, &text, &len);
	if (ret) {
		snprintf(msg, sizeof(msg), "cannot read the DoH list: %s",
			 ret == -EINVAL ? "not a regular file" : strerror(-ret));
		if (errs && config_errors_add(errs, path, 0, 0, msg))
			return -ENOMEM;
		return ret;
	}
	ret = doh_list_parse(path, text, len, out, errs);
	free(text);
	return ret;
}
