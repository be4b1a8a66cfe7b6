/*
 * sg_mutate: damages a journal the ways `sandgate verify` must notice, for the
 * mutation test (tests/integration/t_verify_mutation.sh).
 *
 *   sg_mutate DIR KIND SEED [PROOF_OUT]
 *	DIR is the state directory (with journal/) or the journal. KIND: modified
 *	(one byte), deleted, reordered (two adjacent lines), truncated (cut the tail and
 *	the checkpoints file; the checkpoint that proves the cut goes to PROOF_OUT),
 *	bad_signature, unknown_key (re-signed by a fresh key of the same name),
 *	rewritten (one letter changed and every later prev re-chained, no key).
 *	Prints "KIND LO HI ACCEPT": the verifier must report a kind in the
 *	comma-separated ACCEPT and a seq in [LO, HI].
 *   sg_mutate --generate STATE N [SEGMENT_LINES]
 *	Writes a fresh key and a journal of N events with checkpoints every 1000
 *	lines (a fixture for when sg_genjournal is not at hand).
 *
 * Mutations only touch lines covered by the last checkpoint: a change after it is
 * undetectable by design, and the test must not expect otherwise.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <dirent.h>
#include <unistd.h>

#include <jansson.h>

#include "common/hex.h"
#include "journal/envelope.h"
#include "verify/verify.h"
#include "tests/tools/fixture_writer.h"

struct line {
	char *p;          /* points into a segment buffer or owned (owned = 1) */
	size_t len;       /* without '\n' */
	size_t seg;
	int owned;
};

struct jr {
	char dir[512];
	char **seg_path;
	char **seg_data;
	size_t nseg, nseg_all;
	size_t torn_seg;   /* segment whose last line stays without '\n' */
	int *dirty;
	struct line *l;
	size_t n, cap;
	uint64_t last_cp;  /* size of the last checkpoint line */
	uint64_t *sizes;   /* checkpoint sizes in the checkpoints file, ascending */
	size_t nsizes;
	char *cps;         /* the checkpoints file */
	size_t cps_len;
};

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* splitmix64: reproducible from the seed the test prints on failure. */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t rnd_below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

__attribute__((noreturn)) static void die(const char *what)
{
	fprintf(stderr, "sg_mutate: %s\n", what);
	exit(2);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "re");
	char *d;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) < 0)
		die("seek");
	d = malloc((size_t)n + 1);
	if (!d || fread(d, 1, (size_t)n, f) != (size_t)n)
		die("read");
	fclose(f);
	d[n] = '\0';
	*len = (size_t)n;
	return d;
}

/* New file and rename: the test hard-links its copies of the pristine journal. */
static void spit(const char *path, const char *d, size_t len)
{
	char tmp[700];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.sg_mutate", path);
	f = fopen(tmp, "we");
	if (!f || fwrite(d, 1, len, f) != len || fclose(f) != 0 || rename(tmp, path) < 0)
		die("write");
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_checkpoint_line(const struct line *l)
{
	struct line_envelope env;

	return line_envelope_parse_strict(l->p, l->len, &env) == 0 && env.event_len == 18 &&
	       memcmp(env.event, "journal.checkpoint", 18) == 0;
}

static void add_line(struct jr *j, char *p, size_t len, size_t seg)
{
	if (j->n == j->cap) {
		j->cap = j->cap ? j->cap * 2 : 4096;
		j->l = realloc(j->l, j->cap * sizeof(*j->l));
		if (!j->l)
			die("oom");
	}
	j->l[j->n++] = (struct line){ .p = p, .len = len, .seg = seg };
}

static void load_segment(struct jr *j, size_t s)
{
	size_t len = 0, off = 0;
	char *d = slurp(j->seg_path[s], &len), *nl;

	if (!d)
		die("cannot read a segment");
	j->seg_data[s] = d;
	while (off < len && (nl = memchr(d + off, '\n', len - off))) {
		add_line(j, d + off, (size_t)(nl - d - off), s);
		off = (size_t)(nl - d) + 1;
	}
}

static size_t note_end(const struct jr *j, size_t p);

/* Checkpoint sizes from the checkpoints file: cheaper than parsing every line. */
static void load_sizes(struct jr *j)
{
	struct checkpoint cp;
	size_t p;

	for (p = 0; p < j->cps_len; p = note_end(j, p)) {
		const char *split = memmem(j->cps + p, j->cps_len - p, "\n\n", 2);

		if (!split || note_parse_checkpoint(j->cps + p, (size_t)(split - j->cps - p) + 1,
						    &cp) < 0)
			die("bad checkpoints file");
		j->sizes = realloc(j->sizes, (j->nsizes + 1) * sizeof(*j->sizes));
		if (!j->sizes)
			die("oom");
		/* Only checkpoints whose line is present (sizes ascend in the file). */
		if (cp.size < j->n && is_checkpoint_line(&j->l[cp.size]))
			j->sizes[j->nsizes++] = j->last_cp = cp.size;
	}
	if (j->last_cp < 2)
		die("too few lines or checkpoints");
}

static bool is_cp_seq(const struct jr *j, size_t k)
{
	size_t i;

	for (i = 0; i < j->nsizes; i++)
		if (j->sizes[i] == k)
			return true;
	return false;
}

static void load(struct jr *j, const char *dir)
{
	char sub[600], *names[4096];
	struct dirent *de;
	DIR *d;
	size_t i;

	memset(j, 0, sizeof(*j));
	j->torn_seg = SIZE_MAX;
	snprintf(sub, sizeof(sub), "%s/journal", dir);
	snprintf(j->dir, sizeof(j->dir), "%s", (d = opendir(sub)) ? sub : dir);
	if (!d && !(d = opendir(j->dir)))
		die("no journal directory");
	while ((de = readdir(d)) && j->nseg < 4096)
		if (strlen(de->d_name) == 26 && strstr(de->d_name, ".jsonl"))
			names[j->nseg++] = strdup(de->d_name);
	closedir(d);
	qsort(names, j->nseg, sizeof(char *), cmp_str);
	j->nseg_all = j->nseg;
	j->seg_path = calloc(j->nseg, sizeof(char *));
	j->seg_data = calloc(j->nseg, sizeof(char *));
	j->dirty = calloc(j->nseg, sizeof(int));
	for (i = 0; i < j->nseg; i++) {
		if (asprintf(&j->seg_path[i], "%s/%s", j->dir, names[i]) < 0)
			die("oom");
		free(names[i]);
		load_segment(j, i);
	}
	snprintf(sub, sizeof(sub), "%s/checkpoints", j->dir);
	j->cps = slurp(sub, &j->cps_len);
	if (!j->cps)
		die("journal has no checkpoints file");
	load_sizes(j);
}

static void save(struct jr *j)
{
	size_t s, i;

	for (s = 0; s < j->nseg; s++) {
		struct buf b;

		if (!j->dirty[s])
			continue;
		buf_init(&b);
		for (i = 0; i < j->n; i++)
			if (j->l[i].seg == s) {
				buf_put(&b, j->l[i].p, j->l[i].len);
				buf_putc(&b, '\n');
			}
		if (b.oom)
			die("oom");
		if (s == j->torn_seg && b.len > 0)
			b.len--;   /* the torn line keeps no '\n' */
		spit(j->seg_path[s], b.data ? b.data : "", b.len);
		buf_free(&b);
	}
}

/* The line, editable in place (segment buffers are our own copies); marks it dirty. */
static char *own(struct jr *j, size_t i)
{
	j->dirty[j->l[i].seg] = 1;
	return j->l[i].p;
}

static void mut_modified(struct jr *j)
{
	/* Up to last_cp - 2: a line with two successors, so a joined line still shows. */
	size_t k = rnd_below(j->last_cp - 1), pos = rnd_below(j->l[k].len + 1);
	bool cp = is_cp_seq(j, k), joined;
	char *p = own(j, k);

	joined = pos == j->l[k].len;
	if (joined) {
		/* The '\n': join line k and k+1 into one. */
		char *c = malloc(j->l[k].len + j->l[k + 1].len + 2);

		memcpy(c, p, j->l[k].len);
		c[j->l[k].len] = (char)('!' + rnd_below(90));
		memcpy(c + j->l[k].len + 1, j->l[k + 1].p, j->l[k + 1].len);
		if (j->l[k].owned)
			free(p);
		j->l[k].owned = 1;
		j->l[k].p = c;
		j->l[k].len += j->l[k + 1].len + 1;
		j->dirty[j->l[k + 1].seg] = 1;
		memmove(&j->l[k + 1], &j->l[k + 2], (j->n - k - 2) * sizeof(*j->l));
		j->n--;
	} else {
		p[pos] = (char)(p[pos] ^ (1 + rnd_below(255)));
	}
	/* A joined line also hides line k+1: "deleted" at k+1 is a true account. */
	printf("modified %zu %zu %s%s\n", k ? k - 1 : 0, joined ? k + 1 : k,
	       cp ? "modified,bad_signature,unknown_key" : "modified", joined ? ",deleted" : "");
}

static void mut_deleted(struct jr *j)
{
	size_t k = rnd_below(j->last_cp);

	j->dirty[j->l[k].seg] = 1;
	memmove(&j->l[k], &j->l[k + 1], (j->n - k - 1) * sizeof(*j->l));
	j->n--;
	printf("deleted %zu %zu deleted\n", k, k);
}

static void mut_reordered(struct jr *j)
{
	size_t k = rnd_below(j->last_cp);
	struct line t = j->l[k];

	j->l[k].p = j->l[k + 1].p;
	j->l[k].len = j->l[k + 1].len;
	j->l[k].owned = j->l[k + 1].owned;
	j->l[k + 1].p = t.p;
	j->l[k + 1].len = t.len;
	j->l[k + 1].owned = t.owned;
	j->dirty[j->l[k].seg] = j->dirty[j->l[k + 1].seg] = 1;
	printf("reordered %zu %zu reordered\n", k, k);
}

/* Keeps the notes of the checkpoints file that cover at most t lines. */
static size_t cut_checkpoints(struct jr *j, uint64_t t, char **proof, size_t *proof_len)
{
	size_t p = 0, keep = 0;

	*proof = NULL;
	while (p < j->cps_len) {
		char *split = memmem(j->cps + p, j->cps_len - p, "\n\n", 2);
		char *end = split ? memmem(split + 2, j->cps_len - (size_t)(split + 2 - j->cps),
					   "\n\n", 2) : NULL;
		size_t q = end ? (size_t)(end - j->cps) + 2 : j->cps_len;
		struct checkpoint cp;

		if (!split || note_parse_checkpoint(j->cps + p, (size_t)(split - j->cps - p) + 1,
						    &cp) < 0)
			die("bad checkpoints file");
		if (cp.size <= t)
			keep = q;
		else if (!*proof) {
			*proof = j->cps + p;
			*proof_len = q - p;
		}
		p = q;
	}
	return keep;
}

static void mut_truncated(struct jr *j, const char *proof_out)
{
	uint64_t t = rnd_below(j->last_cp);
	size_t keep, proof_len = 0, s, cut = rnd() & 1 ? rnd_below(j->l[t].len) : 0;
	char path[600], *proof;

	keep = cut_checkpoints(j, t, &proof, &proof_len);
	if (!proof || !proof_out)
		die("truncated needs PROOF_OUT and a checkpoint after the cut");
	spit(proof_out, proof, proof_len);
	snprintf(path, sizeof(path), "%s/checkpoints", j->dir);
	spit(path, j->cps, keep);
	for (s = j->l[t].seg + 1; s < j->nseg; s++)
		if (remove(j->seg_path[s]) < 0)
			die("remove");
	j->nseg = j->l[t].seg + 1;
	j->dirty[j->l[t].seg] = 1;
	/* A partial line t stays when cut > 0: a torn tail without its '\n'. */
	j->l[t].len = cut;
	j->n = cut ? t + 1 : t;
	if (cut)
		j->torn_seg = j->l[t].seg;
	save(j);
	printf("truncated %llu %llu truncated\n", (unsigned long long)t, (unsigned long long)t);
}

/* Offset and length of the base64 of the first signature line in p[0..len). */
static int find_sig(const char *p, size_t len, size_t *off, size_t *blen)
{
	const char *d = memmem(p, len, "\xe2\x80\x94 ", 4), *sp, *e;

	if (!d || !(sp = memchr(d + 4, ' ', len - (size_t)(d + 4 - p))))
		return -1;
	for (e = sp + 1; e < p + len && (strchr("+/=", *e) || (*e >= '0' && *e <= '9') ||
					 ((*e | 0x20) >= 'a' && (*e | 0x20) <= 'z')); e++)
		;
	*off = (size_t)(sp + 1 - p);
	*blen = (size_t)(e - sp - 1);
	return *blen == 92 ? 0 : -1;
}

/* The new base64 signature for note (bad: one bit flipped; else by a fresh key). */
static void new_sig(const char *note, size_t len, bool bad, const char *old, char out[96])
{
	uint8_t sig[68], seed[32];
	struct note_signer *s = NULL;
	char signed_note[NOTE_MAX_LEN], name[NOTE_KEY_NAME_MAX];
	const char *split = memmem(note, len, "\n\n", 2), *d, *sp;
	size_t i;
	int n;

	if (bad) {
		if (note_b64_decode(old, 92, sig, sizeof(sig)) != 68)
			die("signature");
		sig[4 + rnd_below(64)] ^= (uint8_t)(1u << rnd_below(8));
		note_b64_encode(sig, sizeof(sig), out, 96);
		return;
	}
	d = split ? memmem(split, len - (size_t)(split - note), "\xe2\x80\x94 ", 4) : NULL;
	sp = d ? memchr(d + 4, ' ', len - (size_t)(d + 4 - note)) : NULL;
	if (!sp || (size_t)(sp - d - 4) >= sizeof(name))
		die("note");
	snprintf(name, sizeof(name), "%.*s", (int)(sp - d - 4), d + 4);
	for (i = 0; i < sizeof(seed); i++)
		seed[i] = (uint8_t)rnd();
	if (note_signer_from_seed(&s, seed, name) < 0)
		die("key");
	n = note_sign_text(s, note, (size_t)(split - note) + 1, signed_note, sizeof(signed_note));
	note_signer_free(s);
	if (n < 0 || find_sig(signed_note, (size_t)n, &i, &(size_t){ 0 }) < 0)
		die("sign");
	memcpy(out, signed_note + i, 92);
}

/* A checkpoint line's note, through jansson (it is JSON-escaped in the line). */
static json_t *line_note(const struct line *l, const char **note, size_t *len)
{
	json_t *js = json_loadb(l->p, l->len, 0, NULL), *n = json_object_get(js, "note");

	if (!json_is_string(n))
		die("checkpoint line");
	*note = json_string_value(n);
	*len = json_string_length(n);
	return js;
}

static void resign_line(struct jr *j, size_t c, bool bad)
{
	const char *note;
	size_t nlen, off, blen;
	json_t *js = line_note(&j->l[c], &note, &nlen);
	char sig[96], *p = own(j, c);

	if (find_sig(p, j->l[c].len, &off, &blen) < 0)
		die("no signature in the line");
	new_sig(note, nlen, bad, p + off, sig);
	memcpy(p + off, sig, 92);
	json_decref(js);
}

/* End of the note starting at p in the checkpoints file (after its blank line). */
static size_t note_end(const struct jr *j, size_t p)
{
	char *split = memmem(j->cps + p, j->cps_len - p, "\n\n", 2);
	char *end = split ? memmem(split + 2, j->cps_len - (size_t)(split + 2 - j->cps),
				   "\n\n", 2) : NULL;

	return end ? (size_t)(end - j->cps) + 2 : j->cps_len;
}

static void resign_file(struct jr *j, bool bad, uint64_t *size)
{
	size_t notes = 0, pick, p, off, blen;
	char sig[96], path[600];
	struct checkpoint cp;

	for (p = 0; p < j->cps_len; p = note_end(j, p))
		notes++;
	pick = rnd_below(notes);
	for (p = 0; pick--;)
		p = note_end(j, p);
	if (note_open_checkpoint(NULL, j->cps + p, note_end(j, p) - p - 1, &cp) ==
		    NOTE_MALFORMED ||
	    find_sig(j->cps + p, j->cps_len - p, &off, &blen) < 0)
		die("checkpoints file");
	*size = cp.size;
	new_sig(j->cps + p, note_end(j, p) - p - 1, bad, j->cps + p + off, sig);
	memcpy(j->cps + p + off, sig, 92);
	snprintf(path, sizeof(path), "%s/checkpoints", j->dir);
	spit(path, j->cps, j->cps_len);
}

static void mut_signature(struct jr *j, bool bad)
{
	const char *kind = bad ? "bad_signature" : "unknown_key";
	uint64_t size;
	size_t c;

	if (rnd() & 1) {
		resign_file(j, bad, &size);
		printf("%s %llu %llu %s\n", kind, (unsigned long long)size,
		       (unsigned long long)size, kind);
		return;
	}
	c = j->sizes[rnd_below(j->nsizes)];
	resign_line(j, c, bad);
	printf("%s %zu %zu %s\n", kind, c, c, kind);
}

static size_t prev_offset(const struct line *l)
{
	const char *p = memmem(l->p, l->len < 96 ? l->len : 96, ",\"prev\":\"", 9);

	if (!p)
		die("no prev");
	return (size_t)(p + 9 - l->p);
}

static void mut_rewritten(struct jr *j)
{
	struct line_envelope env;
	size_t k, i, pos, start, good = 0, tries = 0;
	uint8_t leaf[MERKLE_HASH_LEN];
	char hex[2 * MERKLE_HASH_LEN + 1], *p;

	do
		k = rnd_below(j->last_cp);
	while (is_cp_seq(j, k) && ++tries < 1000);
	if (line_envelope_parse_strict(j->l[k].p, j->l[k].len, &env) < 0)
		die("envelope");
	start = (size_t)(env.event + env.event_len - j->l[k].p) + 1;
	p = own(j, k);
	do
		pos = start + rnd_below(j->l[k].len - start);
	while (!(p[pos] >= 'a' && p[pos] <= 'z'));
	p[pos] = (char)('a' + (p[pos] - 'a' + 1 + (int)rnd_below(25)) % 26);
	for (i = k + 1; i < j->n; i++) {
		merkle_leaf_hash(j->l[i - 1].p, j->l[i - 1].len, leaf);
		hex_encode(leaf, MERKLE_HASH_LEN, hex);
		memcpy(own(j, i) + prev_offset(&j->l[i]), hex, 2 * MERKLE_HASH_LEN);
	}
	for (i = 0; i < j->nsizes; i++)
		if (j->sizes[i] <= k)
			good = j->sizes[i];
	printf("rewritten %zu %zu rewritten\n", good, k);
}

static int generate(const char *state, uint64_t n, uint64_t seg_lines)
{
	char path[600], pub[600], body[256];
	struct note_signer *s = NULL;
	struct fx f;
	uint64_t i;
	int ret;

	snprintf(path, sizeof(path), "%s/keys", state);
	if ((mkdir(state, 0700) < 0 && errno != EEXIST) || mkdir(path, 0700) < 0)
		die("mkdir");
	snprintf(path, sizeof(path), "%s/keys/journal.key", state);
	snprintf(pub, sizeof(pub), "%s/keys/journal.pub", state);
	if (note_signer_generate(&s, path, pub, "sandgate/h1") < 0)
		die("key");
	snprintf(path, sizeof(path), "%s/journal", state);
	if (mkdir(path, 0700) < 0 || fx_open(&f, path, s, seg_lines, 1000) < 0)
		die("open");
	for (i = 0, ret = 0; i < n && ret == 0; i++) {
		snprintf(body, sizeof(body), ",\"pid\":%llu,\"exe\":\"/usr/bin/tool%llu\","
			 "\"args\":[\"--n\",\"%llx\"],\"argv_complete\":true",
			 (unsigned long long)(1000 + i % 30000), (unsigned long long)(i % 97),
			 (unsigned long long)(i * 2654435761u));
		ret = fx_event(&f, "process.exec", body);
	}
	if (fx_close(&f) < 0 || ret < 0)
		die("write");
	note_signer_free(s);
	return 0;
}

static void jr_free(struct jr *j)
{
	size_t i;

	for (i = 0; i < j->n; i++)
		if (j->l[i].owned)
			free(j->l[i].p);
	for (i = 0; i < j->nseg_all; i++) {
		free(j->seg_path[i]);
		free(j->seg_data[i]);
	}
	free(j->seg_path);
	free(j->seg_data);
	free(j->dirty);
	free(j->l);
	free(j->cps);
	free(j->sizes);
}

int main(int argc, char **argv)
{
	struct jr j;

	if (argc >= 4 && strcmp(argv[1], "--generate") == 0)
		return generate(argv[2], strtoull(argv[3], NULL, 10),
				argc > 4 ? strtoull(argv[4], NULL, 10) : 10000);
	if (argc < 4) {
		fprintf(stderr, "usage: sg_mutate DIR KIND SEED [PROOF_OUT]\n"
				"       sg_mutate --generate STATE N [SEGMENT_LINES]\n");
		return 2;
	}
	rng_state = strtoull(argv[3], NULL, 10);
	load(&j, argv[1]);
	if (strcmp(argv[2], "modified") == 0)
		mut_modified(&j);
	else if (strcmp(argv[2], "deleted") == 0)
		mut_deleted(&j);
	else if (strcmp(argv[2], "reordered") == 0)
		mut_reordered(&j);
	else if (strcmp(argv[2], "truncated") == 0)
		mut_truncated(&j, argc > 4 ? argv[4] : NULL);
	else if (strcmp(argv[2], "bad_signature") == 0 || strcmp(argv[2], "unknown_key") == 0)
		mut_signature(&j, argv[2][0] == 'b');
	else if (strcmp(argv[2], "rewritten") == 0)
		mut_rewritten(&j);
	else
		die("unknown kind");
	if (strcmp(argv[2], "truncated") != 0)
		save(&j);
	jr_free(&j);
	return 0;
}
