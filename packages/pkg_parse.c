/*
 * Parsers of what pip and dpkg leave on disk and of installers' config files. Pure
 * functions over bytes a sandbox may have written: every length is checked, nothing is
 * assumed NUL-terminated, and a value that does not fit is cut, never overflowed.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "packages/pkg.h"

/* One line of buf from *off (without its "\n" or "\r\n"); false at the end. */
static bool next_line(const char *buf, size_t len, size_t *off, const char **l, size_t *ll)
{
	const char *nl;

	if (*off >= len)
		return false;
	*l = buf + *off;
	nl = memchr(*l, '\n', len - *off);
	*ll = nl ? (size_t)(nl - *l) : len - *off;
	*off += *ll + (nl ? 1 : 0);
	if (*ll && (*l)[*ll - 1] == '\r')
		(*ll)--;
	return true;
}

static void trim(const char **s, size_t *n)
{
	while (*n && isspace((unsigned char)**s)) {
		(*s)++;
		(*n)--;
	}
	while (*n && isspace((unsigned char)(*s)[*n - 1]))
		(*n)--;
}

static void put(char *out, size_t cap, const char *s, size_t n)
{
	if (cap == 0)
		return;
	if (n >= cap)
		n = cap - 1;
	memcpy(out, s, n);
	out[n] = '\0';
}

/* "Key: value" with key matched case-insensitively; the value trimmed. */
static bool header(const char *l, size_t ll, const char *key, const char **v, size_t *vl)
{
	size_t k = strlen(key);

	if (ll <= k || strncasecmp(l, key, k) != 0 || l[k] != ':')
		return false;
	*v = l + k + 1;
	*vl = ll - k - 1;
	trim(v, vl);
	return true;
}

void pkg_pep503(const char *name, char *out, size_t outlen)
{
	size_t o = 0;
	bool sep = false;

	if (outlen == 0)
		return;
	for (; *name && o + 1 < outlen; name++) {
		char ch = *name;

		if (ch == '-' || ch == '_' || ch == '.') {
			sep = true;
			continue;
		}
		if (sep && o && o + 2 < outlen)
			out[o++] = '-';
		sep = false;
		out[o++] = (char)tolower((unsigned char)ch);
	}
	out[o] = '\0';
}

int pkg_pip_spec(const char *s, size_t len, struct pkg_spec *spec)
{
	size_t i = 0, n;
	const char *at;

	while (i < len && isspace((unsigned char)s[i]))
		i++;
	n = i;
	while (n < len && (isalnum((unsigned char)s[n]) || s[n] == '-' || s[n] == '_' ||
			   s[n] == '.'))
		n++;
	if (n == i)
		return -EINVAL;
	put(spec->name, sizeof(spec->name), s + i, n - i);
	if (n < len && s[n] == '[') {   /* extras */
		const char *close = memchr(s + n, ']', len - n);

		if (!close)
			return -EINVAL;
		n = (size_t)(close - s) + 1;
	}
	at = memchr(s + n, '@', len - n);
	if (at) {
		spec->is_url = true;
		spec->version[0] = '\0';
		return 0;
	}
	/* the constraint up to an environment marker */
	const char *v = s + n;
	const char *semi = memchr(v, ';', len - n);
	size_t vl = semi ? (size_t)(semi - v) : len - n;

	trim(&v, &vl);
	put(spec->version, sizeof(spec->version), v, vl);
	return 0;
}

int pkg_metadata_parse(const char *buf, size_t len, char *name, size_t nlen,
		       char *version, size_t vlen)
{
	size_t off = 0, ll, vl;
	const char *l, *v;
	bool hn = false, hv = false;

	while (next_line(buf, len, &off, &l, &ll)) {
		if (ll == 0)
			break;   /* the headers end; the description follows */
		if (!hn && header(l, ll, "Name", &v, &vl) && vl) {
			put(name, nlen, v, vl);
			hn = true;
		} else if (!hv && header(l, ll, "Version", &v, &vl) && vl) {
			put(version, vlen, v, vl);
			hv = true;
		}
	}
	return hn && hv ? 0 : -EINVAL;
}

static void hex_lower(char *out, size_t cap, const char *in)
{
	size_t i;

	for (i = 0; in[i] && i + 1 < cap; i++)
		out[i] = (char)tolower((unsigned char)in[i]);
	if (cap)
		out[i] = '\0';
}

static bool is_hex(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isxdigit((unsigned char)*s))
			return false;
	return true;
}

/* archive_info: "hashes": {"sha256": "..."} (PEP 610 since 2022) or "hash": "sha256=...". */
static void direct_hash(json_t *ai, struct pkg_direct_url *d)
{
	json_t *hs = json_object_get(ai, "hashes"), *h = json_object_get(ai, "hash");
	static const char *const prefer[] = { "sha512", "sha384", "sha256", NULL };

	for (size_t i = 0; json_is_object(hs) && prefer[i]; i++) {
		const char *v = json_string_value(json_object_get(hs, prefer[i]));

		if (v && is_hex(v)) {
			snprintf(d->algo, sizeof(d->algo), "%s", prefer[i]);
			hex_lower(d->value, sizeof(d->value), v);
			return;
		}
	}
	if (json_is_string(h)) {
		const char *v = json_string_value(h), *eq = strchr(v, '=');

		if (eq && (size_t)(eq - v) < sizeof(d->algo) && is_hex(eq + 1)) {
			put(d->algo, sizeof(d->algo), v, (size_t)(eq - v));
			hex_lower(d->value, sizeof(d->value), eq + 1);
		}
	}
}

int pkg_direct_url_parse(const char *buf, size_t len, struct pkg_direct_url *d)
{
	json_t *root = json_loadb(buf, len, JSON_DECODE_ANY, NULL);
	json_t *ai;
	const char *url;
	int ret = -EINVAL;

	memset(d, 0, sizeof(*d));
	if (!root)
		return -EINVAL;
	url = json_string_value(json_object_get(root, "url"));
	if (url) {
		snprintf(d->url, sizeof(d->url), "%s", url);
		ai = json_object_get(root, "archive_info");
		if (json_is_object(ai))
			direct_hash(ai, d);
		d->is_dir = json_is_object(json_object_get(root, "dir_info"));
		d->is_vcs = json_is_object(json_object_get(root, "vcs_info"));
		ret = 0;
	}
	json_decref(root);
	return ret;
}

int pkg_record_parse(const char *buf, size_t len, size_t *files)
{
	size_t off = 0, ll, n = 0;
	const char *l;

	while (next_line(buf, len, &off, &l, &ll)) {
		if (ll == 0)
			continue;
		/* path,hash,size: a quoted path may hold commas; two fields after it */
		const char *c2 = NULL, *c1 = NULL;

		for (size_t i = ll; i-- > 0;)
			if (l[i] == ',') {
				if (!c2)
					c2 = l + i;
				else {
					c1 = l + i;
					break;
				}
			}
		if (!c1 || c1 == l)
			return -EINVAL;
		n++;
	}
	*files = n;
	return 0;
}

/* Copies one status paragraph's fields into e; true when it had a Package field. */
static bool dpkg_field(struct pkg_dpkg_ent *e, const char *l, size_t ll)
{
	const char *v;
	size_t vl;

	if (header(l, ll, "Package", &v, &vl)) {
		put(e->name, sizeof(e->name), v, vl);
		return true;
	}
	if (header(l, ll, "Version", &v, &vl))
		put(e->version, sizeof(e->version), v, vl);
	else if (header(l, ll, "Architecture", &v, &vl))
		put(e->arch, sizeof(e->arch), v, vl);
	else if (header(l, ll, "Status", &v, &vl))
		put(e->status, sizeof(e->status), v, vl);
	return false;
}

int pkg_dpkg_status_parse(const char *buf, size_t len,
			  int (*fn)(void *ctx, const struct pkg_dpkg_ent *e), void *ctx)
{
	struct pkg_dpkg_ent e;
	size_t off = 0, ll;
	const char *l;
	bool has = false;
	int ret;

	memset(&e, 0, sizeof(e));
	for (;;) {
		bool more = next_line(buf, len, &off, &l, &ll);

		if (!more || ll == 0) {
			if (has && (ret = fn(ctx, &e)) != 0)
				return ret;
			memset(&e, 0, sizeof(e));
			has = false;
			if (!more)
				return 0;
			continue;
		}
		if (l[0] == ' ' || l[0] == '\t')
			continue;   /* continuation of a multi-line field */
		if (dpkg_field(&e, l, ll))
			has = true;
	}
}

int pkg_conf_get(const char *buf, size_t len, const char *const *sections, const char *key,
		 char *out, size_t outlen)
{
	size_t off = 0, ll, kl = strlen(key);
	const char *l;
	bool in = sections == NULL, found = false;

	while (next_line(buf, len, &off, &l, &ll)) {
		trim(&l, &ll);
		if (ll == 0 || l[0] == '#' || l[0] == ';')
			continue;
		if (l[0] == '[') {
			in = false;
			for (size_t i = 0; sections && sections[i]; i++) {
				size_t sl = strlen(sections[i]);

				if (ll == sl + 2 && l[ll - 1] == ']' &&
				    strncasecmp(l + 1, sections[i], sl) == 0)
					in = true;
			}
			continue;
		}
		if (!in || ll <= kl || strncmp(l, key, kl) != 0)
			continue;
		const char *v = l + kl;
		size_t vl = ll - kl;

		trim(&v, &vl);
		if (vl == 0 || (v[0] != '=' && v[0] != ':'))
			continue;
		v++;
		vl--;
		trim(&v, &vl);
		put(out, outlen, v, vl);
		found = true;   /* keep going: a later one wins */
	}
	return found ? 0 : -ENOENT;
}

/* Length of "scheme://host" in u (0 when u has no "://"). */
static size_t authority_len(const char *u)
{
	const char *p = strstr(u, "://");

	if (!p)
		return 0;
	p += 3;
	return (size_t)(p - u) + strcspn(p, "/?#");
}

bool pkg_source_approved(const char *url, char *const *prefixes, size_t n)
{
	if (!url || !*url)
		return false;
	for (size_t i = 0; i < n; i++) {
		const char *p = prefixes[i];
		size_t pl = strlen(p), al = authority_len(p);

		while (pl > al && p[pl - 1] == '/')
			pl--;
		if (strlen(url) < pl || al == 0 || authority_len(url) != al)
			continue;
		if (strncasecmp(url, p, al) != 0 || strncmp(url + al, p + al, pl - al) != 0)
			continue;
		if (url[pl] == '\0' || url[pl] == '/' || url[pl] == '?' || url[pl] == '#')
			return true;
	}
	return false;
}
