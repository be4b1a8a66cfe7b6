/* A line's fields from its shape (journal/shape.h), without a JSON parse. */
#include "journal/shape.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "journal/envelope.h"

#define PREV_HEX 64

void shape_free(struct shape *s)
{
	free(s->tok);
	s->tok = NULL;
	s->n = s->cap = 0;
}

int shape_tail(const char *line, size_t len, size_t *tail)
{
	struct line_envelope env;

	if (line_envelope_parse(line, len, &env) != 0)
		return -EINVAL;
	*tail = (size_t)(env.prev - line) + PREV_HEX;
	return *tail < len && line[*tail] == '"' ? 0 : -EINVAL;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int shape_string(const char *line, size_t at, size_t len, bool esc, char *out)
{
	const char *p = line + at + 1, *end = line + at + len - 1;
	size_t n = 0;

	if (len < 2 || line[at] != '"' || *end != '"')
		return -EINVAL;
	if (!esc) {
		memcpy(out, p, (size_t)(end - p));
		return (int)(end - p);
	}
	while (p < end) {
		const char *bs = memchr(p, '\\', (size_t)(end - p));
		size_t run = bs ? (size_t)(bs - p) : (size_t)(end - p);
		int hi, lo;

		memcpy(out + n, p, run);
		n += run;
		p += run;
		if (!bs)
			break;
		if (end - p < 2)
			return -EINVAL;
		switch (p[1]) {
		case '"': out[n++] = '"'; break;
		case '\\': out[n++] = '\\'; break;
		case 'n': out[n++] = '\n'; break;
		case 'r': out[n++] = '\r'; break;
		case 't': out[n++] = '\t'; break;
		case 'b': out[n++] = '\b'; break;
		case 'f': out[n++] = '\f'; break;
		case 'u':
			/* The encoder escapes only bytes below 0x20 and 0x7f, as \u00XX. */
			if (end - p < 6 || p[2] != '0' || p[3] != '0')
				return -EINVAL;
			hi = hexval(p[4]);
			lo = hexval(p[5]);
			if (hi < 0 || lo < 0 || hi > 7)
				return -EINVAL;
			out[n++] = (char)(hi << 4 | lo);
			p += 4;
			break;
		default:
			return -EINVAL;
		}
		p += 2;
	}
	return (int)n;
}

static bool digits_value(const char *p, size_t len, int64_t *v);

/* JSON's number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?; *real: a '.' or exponent. */
static bool number_text(const char *p, size_t len, bool *real)
{
	size_t i = 0, d;

	*real = false;
	if (i < len && p[i] == '-')
		i++;
	if (i < len && p[i] == '0') {
		i++;
	} else {
		for (d = i; i < len && p[i] >= '0' && p[i] <= '9'; i++)
			;
		if (i == d)
			return false;
	}
	if (i < len && p[i] == '.') {
		*real = true;
		for (d = ++i; i < len && p[i] >= '0' && p[i] <= '9'; i++)
			;
		if (i == d)
			return false;
	}
	if (i < len && (p[i] == 'e' || p[i] == 'E')) {
		*real = true;
		if (++i < len && (p[i] == '+' || p[i] == '-'))
			i++;
		for (d = i; i < len && p[i] >= '0' && p[i] <= '9'; i++)
			;
		if (i == d)
			return false;
	}
	return i == len;
}

bool shape_int(const char *p, size_t len, int64_t *v)
{
	bool real;

	if (!number_text(p, len, &real) || real)
		return false;
	return digits_value(p, len, v);
}

static bool digits_value(const char *p, size_t len, int64_t *v)
{
	bool neg = len && p[0] == '-';
	uint64_t u = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	size_t i = neg;

	if (i == len)
		return false;
	for (; i < len; i++) {
		unsigned d = (unsigned char)p[i] - '0';

		if (d > 9 || u > (lim - d) / 10)
			return false;
		u = u * 10 + d;
	}
	*v = neg ? (int64_t)(0 - u) : (int64_t)u;
	return true;
}

struct build {
	const char *line;
	size_t len, tail;
	const struct shape *s;
	size_t i;          /* the next token */
	char *scratch;     /* decoded strings: as large as the line */
};

/* A number as jansson reads it: an integer (refused outside int64) or a finite real. */
static json_t *number(const char *p, size_t len)
{
	bool real;
	int64_t i;

	if (!number_text(p, len, &real))
		return NULL;
	if (real) {
		char buf[64];
		double d;

		if (len >= sizeof(buf))
			return NULL;
		memcpy(buf, p, len);
		buf[len] = '\0';
		d = strtod(buf, NULL);
		return isinf(d) ? NULL : json_real(d);
	}
	return digits_value(p, len, &i) ? json_integer(i) : NULL;
}

static json_t *value(struct build *b, size_t at);

/* Keys are the builders' literals: [a-z0-9_], nothing to decode. */
static bool key_ok(const char *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= '0' && p[i] <= '9') || p[i] == '_'))
			return false;
	return true;
}

/*
 * The members of a container whose text starts at open (its '{' or '['; for the line's
 * own object, the tail, where a ',' comes before every member): the tokens at depth
 * that follow. Each value is where the text before it ends (after a ',' and its key),
 * and the container must close right after its last member: a shape accounts for
 * every byte of the line.
 */
static json_t *members(struct build *b, bool obj, unsigned depth, size_t open, size_t len,
		       json_t *parent)
{
	size_t pos = open + 1;   /* where the next member's separator or key is */
	bool first = depth > 0;

	if (!parent)
		return NULL;
	while (b->i < b->s->n && b->s->tok[b->i].depth >= depth) {
		const struct shape_tok *t = &b->s->tok[b->i];
		size_t want = pos + (first ? 0 : 1), at = want + (obj ? t->key_len + 3u : 0);
		json_t *v;
		char key[128];

		if (t->depth != depth || at >= b->len || (!first && b->line[pos] != ','))
			goto bad;
		if (obj) {
			if (t->key_len == 0 || t->key_len >= sizeof(key) || b->line[want] != '"' ||
			    b->line[at - 2] != '"' || b->line[at - 1] != ':' ||
			    !key_ok(b->line + want + 1, t->key_len))
				goto bad;
			memcpy(key, b->line + want + 1, t->key_len);
			key[t->key_len] = '\0';
		} else if (t->key_len) {
			goto bad;
		}
		v = value(b, at);
		if (!v)
			goto bad;
		if (obj ? json_object_set_new_nocheck(parent, key, v) : json_array_append_new(parent, v))
			goto bad;
		pos = at + t->len;
		first = false;
	}
	/* The closing bracket, right after the last member, where the container ends. */
	if (pos + 1 != open + len || b->line[pos] != (obj ? '}' : ']'))
		goto bad;
	return parent;
bad:
	json_decref(parent);
	return NULL;
}

static bool literal(const char *p, size_t len, const char *lit)
{
	return len == strlen(lit) && memcmp(p, lit, len) == 0;
}

static json_t *value(struct build *b, size_t at)
{
	const struct shape_tok *t = &b->s->tok[b->i++];
	int n;

	if (at + t->len > b->len || t->len == 0)
		return NULL;
	switch (SHAPE_KIND(t)) {
	case SHAPE_STRING:
		n = shape_string(b->line, at, t->len, t->kind & SHAPE_ESC, b->scratch);
		return n < 0 ? NULL : json_stringn_nocheck(b->scratch, (size_t)n);
	case SHAPE_NUMBER:
		return number(b->line + at, t->len);
	case SHAPE_TRUE:
		return literal(b->line + at, t->len, "true") ? json_true() : NULL;
	case SHAPE_FALSE:
		return literal(b->line + at, t->len, "false") ? json_false() : NULL;
	case SHAPE_NULL:
		return literal(b->line + at, t->len, "null") ? json_null() : NULL;
	case SHAPE_OBJECT:
		if (b->line[at] != '{')
			return NULL;
		return members(b, true, t->depth + 1u, at, t->len, json_object());
	case SHAPE_ARRAY:
		if (b->line[at] != '[')
			return NULL;
		return members(b, false, t->depth + 1u, at, t->len, json_array());
	}
	return NULL;
}

int shape_to_json(const char *line, size_t len, const struct shape *s, json_t **out)
{
	struct line_envelope env;
	struct build b = { .line = line, .len = len, .s = s };
	json_t *o;

	*out = NULL;
	if (shape_tail(line, len, &b.tail) != 0 || line_envelope_parse(line, len, &env) != 0 ||
	    env.seq > INT64_MAX)
		return -EINVAL;
	b.scratch = malloc(len);
	o = json_object();
	if (!b.scratch || !o)
		goto nomem;
	/* The envelope's head, at its fixed places; the shape starts after prev. */
	if (json_object_set_new_nocheck(o, "ts", json_stringn_nocheck(env.ts, LINE_TS_LEN)) ||
	    json_object_set_new_nocheck(o, "seq", json_integer((json_int_t)env.seq)) ||
	    json_object_set_new_nocheck(o, "prev", json_stringn_nocheck(env.prev, PREV_HEX)))
		goto nomem;
	/* The line's object: from its tail to its '}' (the line's last byte). */
	o = members(&b, true, 0, b.tail, len - b.tail, o);
	free(b.scratch);
	/* Every token used, none left over: the shape described the whole line. */
	if (!o || b.i != s->n) {
		json_decref(o);
		return -EINVAL;
	}
	*out = o;
	return 0;
nomem:
	free(b.scratch);
	json_decref(o);
	return -ENOMEM;
}
