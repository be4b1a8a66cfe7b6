/*
 * Audit record text: the head, key=value pairs, hex values, and EXECVE arguments joined
 * across records (sensors/kaudit/auditrec.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/hex.h"
#include "sensors/kaudit/auditrec.h"

#define ARGC_MAX (1u << 17)          /* more than execve can pass (ARG_MAX / 2 bytes) */

/* Parses decimal digits at s[*i..len) into *v; false when none or overflowing. */
static bool num(const char *s, size_t len, size_t *i, uint64_t *v)
{
	size_t start = *i;

	*v = 0;
	while (*i < len && s[*i] >= '0' && s[*i] <= '9') {
		if (*v > (UINT64_MAX - 9) / 10)
			return false;
		*v = *v * 10 + (uint64_t)(s[*i] - '0');
		(*i)++;
	}
	return *i > start;
}

static bool lit(const char *s, size_t len, size_t *i, const char *want)
{
	size_t n = strlen(want);

	if (len - *i < n || memcmp(s + *i, want, n) != 0)
		return false;
	*i += n;
	return true;
}

int auditrec_head(const char *s, size_t len, uint64_t *serial, uint64_t *ms, size_t *body)
{
	uint64_t sec, msec;
	size_t i = 0;
	const char *m;

	if (len >= 5 && memcmp(s, "type=", 5) == 0) {
		m = memchr(s, ' ', len);
		if (!m)
			return -EINVAL;
		i = (size_t)(m - s) + 1;
		if (!lit(s, len, &i, "msg="))
			return -EINVAL;
	}
	if (!lit(s, len, &i, "audit(") || !num(s, len, &i, &sec) || !lit(s, len, &i, ".") ||
	    !num(s, len, &i, &msec) || !lit(s, len, &i, ":") || !num(s, len, &i, serial) ||
	    !lit(s, len, &i, "):"))
		return -EINVAL;
	if (sec > UINT64_MAX / 1000 - 1000 || msec >= 1000)
		return -EINVAL;
	*ms = sec * 1000 + msec;
	while (i < len && s[i] == ' ')
		i++;
	*body = i;
	return 0;
}

int auditrec_next(const char *s, size_t len, size_t *off, struct auditrec_kv *kv)
{
	size_t i = *off, k;
	const char *q;

	while (i < len && (s[i] == ' ' || s[i] == '\n' || s[i] == '\0'))
		i++;
	if (i == len) {
		*off = i;
		return 0;
	}
	for (k = i; k < len && s[k] != '=' && s[k] != ' '; k++)
		;
	if (k == len || s[k] != '=' || k == i)
		return -EINVAL;
	kv->key = s + i;
	kv->klen = k - i;
	i = k + 1;
	kv->quoted = i < len && s[i] == '"';
	if (kv->quoted) {
		q = memchr(s + i + 1, '"', len - i - 1);
		if (!q)
			return -EINVAL;
		kv->val = s + i + 1;
		kv->vlen = (size_t)(q - kv->val);
		*off = (size_t)(q - s) + 1;
		return 1;
	}
	for (k = i; k < len && s[k] != ' ' && s[k] != '\n'; k++)
		;
	kv->val = s + i;
	kv->vlen = k - i;
	*off = k;
	return 1;
}

int auditrec_decode(const struct auditrec_kv *kv, bool hex, char *out, size_t *outlen)
{
	if (kv->quoted || !hex) {
		memcpy(out, kv->val, kv->vlen);
		*outlen = kv->vlen;
		return 0;
	}
	if (kv->vlen % 2)
		return -EINVAL;
	for (size_t i = 0; i < kv->vlen; i += 2) {
		int hi = hex_digit_any(kv->val[i]), lo = hex_digit_any(kv->val[i + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		out[i / 2] = (char)(hi << 4 | lo);
	}
	*outlen = kv->vlen / 2;
	return 0;
}

void auditrec_execve_init(struct auditrec_execve *e, size_t max)
{
	memset(e, 0, sizeof(*e));
	e->max = max;
}

void auditrec_execve_free(struct auditrec_execve *e)
{
	for (uint32_t i = 0; e->a && i < e->argc; i++)
		free(e->a[i].b);
	free(e->a);
	memset(e, 0, sizeof(*e));
}

/* "aI", "aI_len" or "aI[K]": the index and which form (0, 1, 2). False otherwise. */
static bool arg_key(const struct auditrec_kv *kv, uint64_t *idx, int *form)
{
	size_t i = 1;
	uint64_t k;

	if (kv->klen < 2 || kv->key[0] != 'a' || !num(kv->key, kv->klen, &i, idx))
		return false;
	if (i == kv->klen) {
		*form = 0;
		return true;
	}
	if (lit(kv->key, kv->klen, &i, "_len") && i == kv->klen) {
		*form = 1;
		return true;
	}
	*form = 2;
	return lit(kv->key, kv->klen, &i, "[") && num(kv->key, kv->klen, &i, &k) &&
	       lit(kv->key, kv->klen, &i, "]") && i == kv->klen;
}

/* Appends the decoded value of kv to argument a, within the overall limit. */
static int arg_append(struct auditrec_execve *e, struct auditrec_arg *a,
		      const struct auditrec_kv *kv)
{
	size_t n, keep;
	char *tmp = malloc(kv->vlen ? kv->vlen : 1), *nb;
	int ret;

	if (!tmp)
		return -ENOMEM;
	ret = auditrec_decode(kv, true, tmp, &n);
	if (ret) {
		free(tmp);
		return ret;
	}
	keep = e->total + n > e->max ? e->max - e->total : n;
	e->truncated |= keep < n;
	nb = realloc(a->b, a->len + keep + 1);
	if (!nb) {
		free(tmp);
		return -ENOMEM;
	}
	memcpy(nb + a->len, tmp, keep);
	free(tmp);
	a->b = nb;
	a->len += keep;
	e->total += keep;
	a->enc_got += kv->vlen;
	return 0;
}

static int feed_kv(struct auditrec_execve *e, const struct auditrec_kv *kv)
{
	struct auditrec_arg *a;
	uint64_t idx, v;
	size_t i = 0;
	int form;

	if (kv->klen == 4 && memcmp(kv->key, "argc", 4) == 0) {
		if (e->argc || !num(kv->val, kv->vlen, &i, &v) || i != kv->vlen || v == 0 ||
		    v > ARGC_MAX)
			return -EINVAL;
		e->a = calloc(v, sizeof(*e->a));
		if (!e->a)
			return -ENOMEM;
		e->argc = (uint32_t)v;
		return 0;
	}
	if (!arg_key(kv, &idx, &form))
		return 0;   /* another field */
	if (idx >= e->argc)
		return -EINVAL;
	a = &e->a[idx];
	switch (form) {
	case 0:
		if (a->seen)
			return -EINVAL;
		a->seen = true;
		a->enc_want = kv->vlen;
		return arg_append(e, a, kv);
	case 1:
		if (a->seen || !num(kv->val, kv->vlen, &i, &v) || i != kv->vlen)
			return -EINVAL;
		a->seen = a->pieces = true;
		a->enc_want = v;
		return 0;
	default:
		if (!a->pieces || a->enc_got + kv->vlen > a->enc_want)
			return -EINVAL;
		return arg_append(e, a, kv);
	}
}

int auditrec_execve_feed(struct auditrec_execve *e, const char *body, size_t len)
{
	struct auditrec_kv kv;
	size_t off = 0;
	int ret;

	while ((ret = auditrec_next(body, len, &off, &kv)) > 0)
		if ((ret = feed_kv(e, &kv)) != 0)
			return ret;
	return ret;
}

bool auditrec_execve_complete(const struct auditrec_execve *e)
{
	if (e->argc == 0 || e->truncated)
		return false;
	for (uint32_t i = 0; i < e->argc; i++)
		if (!e->a[i].seen || e->a[i].enc_got != e->a[i].enc_want)
			return false;
	return true;
}
