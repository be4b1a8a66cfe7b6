/*
 * The index's one-pass JSON scanner (index/index_scan.h). Each rule below is the one
 * jansson 2.14's loader applies, so a line is refused here exactly when
 * line_json_load would refuse it; the fuzz target checks that against jansson itself.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "index/index_scan.h"
#include "journal/envelope.h"
#include "journal/shape.h"

struct scan {
	const char *s;
	size_t p, len;
};

/* A string's shape, learned while checking it. */
struct str_info {
	size_t at, end;
	bool esc;        /* holds a backslash escape */
	bool nul;        /* holds "\u0000" */
};

static int peek(const struct scan *sc)
{
	return sc->p < sc->len ? (unsigned char)sc->s[sc->p] : -1;
}

static void skip_ws(struct scan *sc)
{
	while (sc->p < sc->len) {
		char c = sc->s[sc->p];

		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			return;
		sc->p++;
	}
}

static int hex4(const struct scan *sc, size_t at, unsigned *out)
{
	unsigned v = 0;

	if (sc->len - at < 4)
		return -EINVAL;
	for (size_t i = 0; i < 4; i++) {
		char c = sc->s[at + i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return -EINVAL;
	}
	*out = v;
	return 0;
}

/* "\uXXXX" at p (after the backslash's 'u'), a surrogate pair taking two. */
static int check_u(struct scan *sc, struct str_info *si)
{
	unsigned v, lo;

	if (hex4(sc, sc->p, &v))
		return -EINVAL;
	sc->p += 4;
	if (v == 0)
		si->nul = true;
	if (v >= 0xDC00 && v <= 0xDFFF)
		return -EINVAL;
	if (v >= 0xD800 && v <= 0xDBFF) {
		if (sc->len - sc->p < 6 || sc->s[sc->p] != '\\' || sc->s[sc->p + 1] != 'u' ||
		    hex4(sc, sc->p + 2, &lo) || lo < 0xDC00 || lo > 0xDFFF)
			return -EINVAL;
		sc->p += 6;
	}
	return 0;
}

static int check_escape(struct scan *sc, struct str_info *si)
{
	int c;

	sc->p++;
	c = peek(sc);
	si->esc = true;
	if (c == 'u') {
		sc->p++;
		return check_u(sc, si);
	}
	if (c != '"' && c != '\\' && c != '/' && c != 'b' && c != 'f' && c != 'n' &&
	    c != 'r' && c != 't')
		return -EINVAL;
	sc->p++;
	return 0;
}

/* One UTF-8 sequence at p whose first byte is >= 0x80: jansson's utf8_check_full. */
static int check_utf8(struct scan *sc)
{
	unsigned char c = (unsigned char)sc->s[sc->p];
	unsigned v, n;

	if (c >= 0xC2 && c <= 0xDF)
		n = 2, v = c & 0x1F;
	else if (c >= 0xE0 && c <= 0xEF)
		n = 3, v = c & 0x0F;
	else if (c >= 0xF0 && c <= 0xF4)
		n = 4, v = c & 0x07;
	else
		return -EINVAL;
	if (sc->len - sc->p < n)
		return -EINVAL;
	for (unsigned i = 1; i < n; i++) {
		unsigned char d = (unsigned char)sc->s[sc->p + i];

		if (d < 0x80 || d > 0xBF)
			return -EINVAL;
		v = (v << 6) | (d & 0x3F);
	}
	if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF) || (n == 3 && v < 0x800) ||
	    (n == 4 && v < 0x10000))
		return -EINVAL;
	sc->p += n;
	return 0;
}

/* The string at p (its opening quote); p ends after the closing one. */
static int scan_string(struct scan *sc, struct str_info *si)
{
	*si = (struct str_info){ .at = ++sc->p };
	for (;;) {
		int c = peek(sc), ret = 0;

		if (c < 0x20)          /* the end of the line, or a raw control byte */
			return -EINVAL;
		if (c == '"')
			break;
		if (c == '\\')
			ret = check_escape(sc, si);
		else if (c >= 0x80)
			ret = check_utf8(sc);
		else
			sc->p++;
		if (ret)
			return ret;
	}
	si->end = sc->p++;
	return 0;
}

static size_t digits(struct scan *sc)
{
	size_t n = 0;

	while (sc->p < sc->len && sc->s[sc->p] >= '0' && sc->s[sc->p] <= '9')
		sc->p++, n++;
	return n;
}

/* A JSON integer that fits json_int_t (jansson refuses the others). */
static int int_value(const char *s, size_t n, int64_t *out)
{
	bool neg = s[0] == '-';
	uint64_t v = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;

	for (size_t i = neg; i < n; i++) {
		unsigned d = (unsigned)(s[i] - '0');

		if (v > (lim - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	*out = neg ? (int64_t)(0 - v) : (int64_t)v;
	return 0;
}

/* jansson refuses a real that overflows a double (an underflow is accepted). */
static int real_ok(const char *s, size_t n)
{
	char small[64], *buf = n < sizeof(small) ? small : malloc(n + 1);
	double d;

	if (!buf)
		return -ENOMEM;
	memcpy(buf, s, n);
	buf[n] = '\0';
	d = strtod(buf, NULL);
	if (buf != small)
		free(buf);
	return isinf(d) ? -EINVAL : 0;
}

static int scan_number(struct scan *sc, struct scan_val *v)
{
	size_t start = sc->p;
	bool real = false;

	if (peek(sc) == '-')
		sc->p++;
	if (peek(sc) == '0') {
		sc->p++;
	} else if (digits(sc) == 0) {
		return -EINVAL;
	}
	if (peek(sc) == '.') {
		sc->p++;
		real = true;
		if (digits(sc) == 0)
			return -EINVAL;
	}
	if (peek(sc) == 'e' || peek(sc) == 'E') {
		sc->p++;
		real = true;
		if (peek(sc) == '+' || peek(sc) == '-')
			sc->p++;
		if (digits(sc) == 0)
			return -EINVAL;
	}
	v->kind = real ? SCAN_OTHER : SCAN_INT;
	return real ? real_ok(sc->s + start, sc->p - start)
		    : int_value(sc->s + start, sc->p - start, &v->i);
}

static int scan_literal(struct scan *sc)
{
	static const char *const lits[] = { "true", "false", "null" };
	size_t n = 0;

	/* jansson reads a whole run of letters as one word. */
	while (sc->p + n < sc->len && ((sc->s[sc->p + n] >= 'a' && sc->s[sc->p + n] <= 'z') ||
				       (sc->s[sc->p + n] >= 'A' && sc->s[sc->p + n] <= 'Z')))
		n++;
	for (size_t i = 0; i < 3; i++) {
		if (strlen(lits[i]) == n && memcmp(sc->s + sc->p, lits[i], n) == 0) {
			sc->p += n;
			return 0;
		}
	}
	return -EINVAL;
}

static int scan_value(struct scan *sc, unsigned depth, struct scan_val *v);

static int scan_array(struct scan *sc, unsigned depth)
{
	struct scan_val ignored;
	int ret;

	sc->p++;
	skip_ws(sc);
	if (peek(sc) == ']') {
		sc->p++;
		return 0;
	}
	for (;;) {
		ret = scan_value(sc, depth + 1, &ignored);
		if (ret)
			return ret;
		skip_ws(sc);
		if (peek(sc) == ']')
			break;
		if (peek(sc) != ',')
			return -EINVAL;
		sc->p++;
		skip_ws(sc);
	}
	sc->p++;
	return 0;
}

/*
 * key (NUL-terminated) equals the n bytes at k, which hold no NUL (a raw control byte or
 * "\u0000" in a key is refused): a shorter key differs at its NUL, so the loop never
 * reads past it. Inline, not strncmp: every member of every line comes through here.
 */
static inline bool key_is(const char *key, const char *k, size_t n)
{
	for (size_t j = 0; j < n; j++)
		if (key[j] != k[j])
			return false;
	return key[n] == '\0';
}

/* The key si names among keys (-1: none); keys are plain ASCII, so are compared raw
 * unless the key holds escapes, then decoded when short enough to be one of them. */
static int key_index(const struct scan *sc, const struct str_info *si, const char *const *keys,
		     size_t n_keys)
{
	char buf[64];
	const char *k = sc->s + si->at;
	size_t n = si->end - si->at;

	if (si->esc) {
		struct scan_val sv = { .kind = SCAN_STRING, .esc = true, .at = si->at,
				       .end = si->end };

		if (n >= sizeof(buf))
			return -1;
		n = index_scan_decode(sc->s, &sv, buf);
		k = buf;
	}
	for (size_t i = 0; i < n_keys; i++)
		if (key_is(keys[i], k, n))
			return (int)i;
	return -1;
}

/* An object's members; at depth 1 the wanted keys' values are kept (keys: NULL below). */
static int scan_members(struct scan *sc, unsigned depth, const char *const *keys,
			size_t n_keys, struct scan_val *vals)
{
	for (;;) {
		struct str_info si;
		struct scan_val v = { 0 };
		int k = -1, ret;

		if (peek(sc) != '"')
			return -EINVAL;
		ret = scan_string(sc, &si);
		if (ret)
			return ret;
		if (si.nul)      /* jansson refuses a NUL in a key, whatever the flags */
			return -EINVAL;
		if (keys)
			k = key_index(sc, &si, keys, n_keys);
		skip_ws(sc);
		if (peek(sc) != ':')
			return -EINVAL;
		sc->p++;
		skip_ws(sc);
		ret = scan_value(sc, depth + 1, &v);
		if (ret)
			return ret;
		if (k >= 0)
			vals[k] = v;            /* the last of repeated keys wins */
		skip_ws(sc);
		if (peek(sc) == '}')
			return 0;
		if (peek(sc) != ',')
			return -EINVAL;
		sc->p++;
		skip_ws(sc);
	}
}

static int scan_object(struct scan *sc, unsigned depth, const char *const *keys,
		       size_t n_keys, struct scan_val *vals)
{
	int ret;

	sc->p++;
	skip_ws(sc);
	if (peek(sc) != '}') {
		ret = scan_members(sc, depth, keys, n_keys, vals);
		if (ret)
			return ret;
	}
	sc->p++;
	return 0;
}

static int scan_value(struct scan *sc, unsigned depth, struct scan_val *v)
{
	int c = peek(sc);

	if (depth > JSON_PARSER_MAX_DEPTH)
		return -EINVAL;
	v->kind = SCAN_OTHER;
	if (c == '"') {
		struct str_info si;
		int ret = scan_string(sc, &si);

		*v = (struct scan_val){ .kind = SCAN_STRING, .esc = si.esc, .at = si.at,
					.end = si.end };
		return ret;
	}
	if (c == '{')
		return scan_object(sc, depth, NULL, 0, NULL);
	if (c == '[')
		return scan_array(sc, depth);
	if (c == '-' || (c >= '0' && c <= '9'))
		return scan_number(sc, v);
	return scan_literal(sc);
}

int index_scan(const char *line, size_t len, const char *const *keys, size_t n_keys,
	       struct scan_val *vals)
{
	struct scan sc = { .s = line, .len = len };
	int ret;

	memset(vals, 0, n_keys * sizeof(*vals));
	/* A raw NUL byte has no place in JSON text (inside a string it is "\u0000"). Our
	 * writer never writes one; jansson, the reference, lets one through between some
	 * tokens and not others, so such a line is refused whole (fuzz_index_extract). */
	if (memchr(line, '\0', len))
		return -EINVAL;
	skip_ws(&sc);
	if (peek(&sc) != '{')
		return -EINVAL;
	ret = scan_object(&sc, 1, keys, n_keys, vals);
	if (ret)
		return ret == -ENOMEM ? ret : -EINVAL;
	skip_ws(&sc);
	return sc.p == sc.len ? 0 : -EINVAL;
}

static size_t put_utf8(char *out, unsigned v)
{
	if (v < 0x80) {
		out[0] = (char)v;
		return 1;
	}
	if (v < 0x800) {
		out[0] = (char)(0xC0 | (v >> 6));
		out[1] = (char)(0x80 | (v & 0x3F));
		return 2;
	}
	if (v < 0x10000) {
		out[0] = (char)(0xE0 | (v >> 12));
		out[1] = (char)(0x80 | ((v >> 6) & 0x3F));
		out[2] = (char)(0x80 | (v & 0x3F));
		return 3;
	}
	out[0] = (char)(0xF0 | (v >> 18));
	out[1] = (char)(0x80 | ((v >> 12) & 0x3F));
	out[2] = (char)(0x80 | ((v >> 6) & 0x3F));
	out[3] = (char)(0x80 | (v & 0x3F));
	return 4;
}

/* One escape at s[*i] (the backslash) of a checked string: its code point. */
static unsigned unescape(const char *s, size_t *i)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	struct scan sc = { .s = s, .len = *i + 12 };
	unsigned v = 0, lo = 0;
	char c = s[*i + 1];

	if (c != 'u') {
		*i += 2;
		return (unsigned char)to[strchr(from, c) - from];
	}
	(void)hex4(&sc, *i + 2, &v);
	*i += 6;
	if (v >= 0xD800 && v <= 0xDBFF) {
		(void)hex4(&sc, *i + 2, &lo);
		*i += 6;
		v = 0x10000 + ((v - 0xD800) << 10) + (lo - 0xDC00);
	}
	return v;
}

size_t index_scan_decode(const char *line, const struct scan_val *v, char *out)
{
	size_t i = v->at, n = 0;

	if (!v->esc) {
		n = v->end - v->at;
		memcpy(out, line + v->at, n);
		out[n] = '\0';
		return n;
	}
	while (i < v->end) {
		unsigned cp;

		if (line[i] != '\\') {
			out[n++] = line[i++];
			continue;
		}
		cp = unescape(line, &i);
		if (cp == 0)
			break;
		n += put_utf8(out + n, cp);
	}
	out[n] = '\0';
	return n;
}

int index_scan_shaped(const char *line, size_t len, const struct shape *shape,
		      const char *const *keys, size_t n_keys, struct scan_val *vals)
{
	struct line_envelope env;
	size_t tail, pos;

	memset(vals, 0, n_keys * sizeof(*vals));
	if (shape_tail(line, len, &tail) != 0 || line_envelope_parse(line, len, &env) != 0 ||
	    env.seq > INT64_MAX)
		return -EINVAL;
	/* The envelope's head is not in the shape: its three values at their places. */
	for (size_t k = 0; k < n_keys; k++) {
		if (strcmp(keys[k], "ts") == 0)
			vals[k] = (struct scan_val){ .kind = SCAN_STRING, .at = (size_t)(env.ts - line),
						     .end = (size_t)(env.ts - line) + LINE_TS_LEN };
		else if (strcmp(keys[k], "prev") == 0)
			vals[k] = (struct scan_val){ .kind = SCAN_STRING,
						     .at = (size_t)(env.prev - line),
						     .end = (size_t)(env.prev - line) + 64 };
		else if (strcmp(keys[k], "seq") == 0)
			vals[k] = (struct scan_val){ .kind = SCAN_INT, .i = (int64_t)env.seq };
	}
	/* The line's members one after another from its tail to its '}': each value after
	 * a ',' and its key, where the one before it ends (what is nested inside a member
	 * is inside its span, and its tokens are skipped). */
	pos = tail + 1;
	for (size_t i = 0; i < shape->n; i++) {
		const struct shape_tok *t = &shape->tok[i];
		size_t at = pos + t->key_len + 4;
		const char *key;

		if (t->depth != 0)
			continue;
		if (t->key_len == 0 || t->len == 0 || at + t->len > len || line[pos] != ',' ||
		    line[pos + 1] != '"' || line[at - 2] != '"' || line[at - 1] != ':')
			return -EINVAL;
		pos = at + t->len;
		key = line + at - 2 - t->key_len;
		for (size_t k = 0; k < n_keys; k++) {
			struct scan_val *v = &vals[k];

			if (strlen(keys[k]) != t->key_len || memcmp(keys[k], key, t->key_len) != 0)
				continue;
			*v = (struct scan_val){ .kind = SCAN_OTHER };
			if (SHAPE_KIND(t) == SHAPE_STRING) {
				if (t->len < 2 || line[at] != '"' || line[at + t->len - 1] != '"')
					return -EINVAL;
				v->kind = SCAN_STRING;
				v->esc = t->kind & SHAPE_ESC;
				v->at = at + 1;
				v->end = at + t->len - 1;
			} else if (SHAPE_KIND(t) == SHAPE_NUMBER && shape_int(line + at, t->len, &v->i)) {
				v->kind = SCAN_INT;
			}
		}
	}
	return pos + 1 == len && line[pos] == '}' ? 0 : -EINVAL;
}
