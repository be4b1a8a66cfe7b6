/*
 * npm's hidden lockfile (node_modules/.package-lock.json, lockfileVersion 2 and 3): the
 * packages npm actually placed in node_modules, each with version, the URL or file it
 * was resolved to and the tarball's Subresource Integrity hash.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "common/hex.h"
#include "packages/pkg.h"

static int b64val(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+' || c == '-')
		return 62;
	if (c == '/' || c == '_')
		return 63;
	return -1;
}

/* Base64 (either alphabet, padding optional) of s[0..n) into hex. 0 or -EINVAL. */
static int b64_hex(const char *s, size_t n, char *hex, size_t hlen)
{
	uint32_t acc = 0;
	int bits = 0;
	size_t o = 0;

	while (n && s[n - 1] == '=')
		n--;
	for (size_t i = 0; i < n; i++) {
		int v = b64val(s[i]);

		if (v < 0)
			return -EINVAL;
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (o + 3 > hlen)
				return -EINVAL;
			unsigned byte = (acc >> bits) & 0xff;

			hex[o++] = hex_digits[byte >> 4];
			hex[o++] = hex_digits[byte & 15];
		}
	}
	if (o == 0 || hlen == 0)
		return -EINVAL;
	hex[o] = '\0';
	return 0;
}

static int algo_rank(const char *a, size_t n)
{
	if (n == 6 && memcmp(a, "sha512", 6) == 0)
		return 3;
	if (n == 6 && memcmp(a, "sha384", 6) == 0)
		return 2;
	if (n == 6 && memcmp(a, "sha256", 6) == 0)
		return 1;
	if (n == 4 && memcmp(a, "sha1", 4) == 0)
		return 0;   /* old npm packages: still better than nothing, and named */
	return -1;
}

int pkg_sri_decode(const char *sri, char *algo, size_t alen, char *hex, size_t hlen)
{
	const char *p = sri, *best = NULL;
	size_t best_n = 0, best_a = 0;
	int best_r = -1;

	while (*p) {
		size_t tok = strcspn(p, " \t"), dash;

		dash = strcspn(p, "-");
		if (dash < tok) {
			int r = algo_rank(p, dash);

			if (r > best_r) {
				best_r = r;
				best = p;
				best_a = dash;
				best_n = tok;
			}
		}
		p += tok;
		p += strspn(p, " \t");
	}
	if (!best || best_a + 1 > alen)
		return -EINVAL;
	/* options after '?' (SRI) are not part of the digest */
	size_t dl = best_n - best_a - 1;
	const char *d = best + best_a + 1, *q = memchr(d, '?', dl);

	if (q)
		dl = (size_t)(q - d);
	if (b64_hex(d, dl, hex, hlen) != 0)
		return -EINVAL;
	snprintf(algo, alen, "%.*s", (int)best_a, best);
	return 0;
}

static void str_field(json_t *o, const char *k, char *out, size_t cap)
{
	const char *v = json_string_value(json_object_get(o, k));

	snprintf(out, cap, "%s", v ? v : "");
}

/* The package name of a lock path: what follows its last "node_modules/". */
static void name_of_path(const char *path, char *out, size_t cap)
{
	const char *p = path, *hit = NULL;

	while ((p = strstr(p, "node_modules/"))) {
		hit = p + strlen("node_modules/");
		p = hit;
	}
	snprintf(out, cap, "%s", hit ? hit : path);
}

static int one_entry(const char *key, json_t *v,
		     int (*fn)(void *ctx, const struct pkg_lock_ent *e), void *ctx,
		     struct pkg_lock_ent *e)
{
	const char *integ;

	memset(e, 0, sizeof(*e));
	snprintf(e->path, sizeof(e->path), "%s", key);
	str_field(v, "name", e->name, sizeof(e->name));
	if (!e->name[0])
		name_of_path(key, e->name, sizeof(e->name));
	str_field(v, "version", e->version, sizeof(e->version));
	str_field(v, "resolved", e->resolved, sizeof(e->resolved));
	e->link = json_is_true(json_object_get(v, "link"));
	integ = json_string_value(json_object_get(v, "integrity"));
	if (integ && pkg_sri_decode(integ, e->algo, sizeof(e->algo), e->value,
				    sizeof(e->value)) != 0)
		e->algo[0] = e->value[0] = '\0';
	return fn(ctx, e);
}

int pkg_lock_parse(const char *buf, size_t len,
		   int (*fn)(void *ctx, const struct pkg_lock_ent *e), void *ctx)
{
	json_t *root = json_loadb(buf, len, 0, NULL), *pk, *v;
	struct pkg_lock_ent e;
	const char *key;
	int ret = 0;

	if (!root)
		return -EINVAL;
	pk = json_object_get(root, "packages");
	if (!json_is_object(pk)) {
		json_decref(root);
		return -EINVAL;
	}
	json_object_foreach(pk, key, v) {
		if (!strstr(key, "node_modules/") || !json_is_object(v))
			continue;
		ret = one_entry(key, v, fn, ctx, &e);
		if (ret)
			break;
	}
	json_decref(root);
	return ret;
}
