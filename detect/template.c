/*
 * Summary templates: literal text with {field.path} placeholders, compiled once at
 * load. A string renders as itself, a number or bool as JSON, an array as its
 * elements joined by spaces, a missing field as "null". "{{" and "}}" are braces.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "detect/detect_int.h"

#define TMPL_FIELD_MAX 128

static int add_seg(struct tmpl *t, const char *text, size_t len, bool field)
{
	struct tseg *v = realloc(t->segs, (t->n + 1) * sizeof(*v));
	struct tseg *sg;
	char *s;
	int ret = 0;

	if (!v)
		return -ENOMEM;
	t->segs = v;
	sg = &t->segs[t->n];
	memset(sg, 0, sizeof(*sg));
	s = strndup(text, len);
	if (!s)
		return -ENOMEM;
	if (field) {
		ret = fpath_parse(s, &sg->f);
		free(s);
	} else {
		sg->text = s;
	}
	if (ret == 0)
		t->n++;
	return ret;
}

static bool field_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '-';
}

/* Literal text up to the next brace, with "{{" / "}}" unescaped. */
static int literal(const char **pp, struct tmpl *t, const char **why)
{
	const char *p = *pp;
	char buf[512];
	size_t n = 0;
	int ret;

	while (*p && n < sizeof(buf)) {
		if ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}')) {
			buf[n++] = *p;
			p += 2;
		} else if (*p == '{') {
			break;
		} else if (*p == '}') {
			*why = "unmatched '}' (write '}}' for a brace)";
			return -EINVAL;
		} else {
			buf[n++] = *p++;
		}
	}
	ret = n ? add_seg(t, buf, n, false) : 0;
	*pp = p;
	return ret;
}

int tmpl_compile(const char *s, struct tmpl *t, const char **why)
{
	const char *p = s, *end;
	int ret = 0;

	memset(t, 0, sizeof(*t));
	while (*p && ret == 0) {
		if (*p != '{') {
			ret = literal(&p, t, why);
			continue;
		}
		end = ++p;
		while (field_char(*end))
			end++;
		if (*end != '}' || end == p || end - p > TMPL_FIELD_MAX) {
			*why = "a placeholder is {field.path} (letters, digits, '_', '-', '.')";
			ret = -EINVAL;
			break;
		}
		ret = add_seg(t, p, (size_t)(end - p), true);
		if (ret == -EINVAL)
			*why = "a placeholder has an empty path component";
		p = end + 1;
	}
	if (ret)
		tmpl_free(t);
	return ret;
}

static void put_value(struct buf *b, const json_t *v)
{
	char num[64];
	size_t i;
	json_t *el;

	if (!v || json_is_null(v)) {
		buf_puts(b, "null");
	} else if (json_is_string(v)) {
		buf_put(b, json_string_value(v), json_string_length(v));
	} else if (json_is_integer(v)) {
		snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(v));
		buf_puts(b, num);
	} else if (json_is_real(v)) {
		snprintf(num, sizeof(num), "%g", json_real_value(v));
		buf_puts(b, num);
	} else if (json_is_boolean(v)) {
		buf_puts(b, json_is_true(v) ? "true" : "false");
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, el) {
			if (i)
				buf_puts(b, " ");
			put_value(b, el);
		}
	} else {
		char *js = json_dumps(v, JSON_COMPACT);

		buf_puts(b, js ? js : "{}");
		free(js);
	}
}

char *tmpl_render(const struct tmpl *t, const struct eval_ctx *x)
{
	struct buf b;
	char *out;

	buf_init(&b);
	for (size_t i = 0; i < t->n; i++) {
		if (t->segs[i].text)
			buf_puts(&b, t->segs[i].text);
		else
			put_value(&b, field_get(&t->segs[i].f, x));
	}
	if (b.oom) {
		buf_free(&b);
		return NULL;
	}
	out = strndup(b.data ? b.data : "", b.len);
	buf_free(&b);
	return out;
}

void tmpl_free(struct tmpl *t)
{
	for (size_t i = 0; t->segs && i < t->n; i++) {
		free(t->segs[i].text);
		fpath_free(&t->segs[i].f);
	}
	free(t->segs);
	t->segs = NULL;
	t->n = 0;
}
