/*
 * Name normalisation and policy name matching. Policies and queries are compared in
 * one form only: lowercase ASCII (punycode for IDNs), no trailing dot.
 */
#include "dns/dns.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <idn2.h>

#define NAME_LEN_MAX 253
#define LABEL_LEN_MAX 63

static char lower(char c)
{
	return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

static bool ldh(char c)
{
	/* '_' is not a hostname character, but service names (_dmarc, _443._tcp) are
	 * queried all the time and policies may name them. */
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

/* Checks a lowercase ASCII name: labels of 1..63 LDH characters, total <= 253. */
static int check_ascii(const char *s, size_t n, bool *has_alabel)
{
	size_t label = 0;

	*has_alabel = false;
	if (n == 0 || n > NAME_LEN_MAX)
		return n == 0 ? -EINVAL : -ENAMETOOLONG;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '.') {
			if (label == 0)
				return -EINVAL;
			label = 0;
			continue;
		}
		if (!ldh(s[i]) || ++label > LABEL_LEN_MAX)
			return -EINVAL;
		if (label == 1 && n - i >= 4 && strncmp(s + i, "xn--", 4) == 0)
			*has_alabel = true;
	}
	return label == 0 ? -EINVAL : 0;
}

static bool all_ascii(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s >= 0x80)
			return false;
	return true;
}

/*
 * Runs libidn2 on in (UTF-8 or ASCII with A-labels) and copies the result to
 * out[0..cap). Returns 0, -EINVAL when libidn2 rejects it, -ENOMEM, -ENAMETOOLONG.
 */
static int to_punycode(const char *in, char *out, size_t cap)
{
	char *res = NULL;
	int rc = idn2_to_ascii_8z(in, &res, IDN2_NONTRANSITIONAL);
	int ret;

	if (rc == IDN2_MALLOC)
		return -ENOMEM;
	if (rc == IDN2_TOO_BIG_DOMAIN || rc == IDN2_TOO_BIG_LABEL)
		return -ENAMETOOLONG;
	if (rc != IDN2_OK)
		return -EINVAL;
	ret = strlen(res) < cap ? 0 : -ENAMETOOLONG;
	if (ret == 0)
		memcpy(out, res, strlen(res) + 1);
	idn2_free(res);
	return ret;
}

int dns_name_normalize(const char *in, char *out, size_t cap)
{
	size_t n;
	bool alabel, ascii;
	int ret;

	if (!in || !out || cap == 0)
		return -EINVAL;
	n = strlen(in);
	if (n > 0 && in[n - 1] == '.')
		n--;
	if (n == 0)
		return -EINVAL;
	/* Longer than any name could be even before punycode shrinks nothing. */
	if (n >= 4 * (NAME_LEN_MAX + 1))
		return -ENAMETOOLONG;
	ascii = all_ascii(in);
	if (ascii && n >= cap)
		return -ENAMETOOLONG;
	if (ascii) {
		for (size_t i = 0; i < n; i++)
			out[i] = lower(in[i]);
		out[n] = '\0';
	} else {
		char tmp[4 * (NAME_LEN_MAX + 1)];

		memcpy(tmp, in, n);
		tmp[n] = '\0';
		ret = to_punycode(tmp, out, cap);
		if (ret < 0)
			return ret;
	}
	ret = check_ascii(out, strlen(out), &alabel);
	/* A-labels the client wrote itself must decode to a valid U-label. */
	if (ret == 0 && alabel) {
		char tmp[NAME_LEN_MAX + 1];

		memcpy(tmp, out, strlen(out) + 1);
		ret = to_punycode(tmp, out, cap);
	}
	return ret;
}

int dns_pattern_normalize(const char *in, char *out, size_t cap)
{
	int ret;

	if (!in || !out || cap < 3)
		return -EINVAL;
	if (strncmp(in, "*.", 2) != 0)
		return strchr(in, '*') ? -EINVAL : dns_name_normalize(in, out, cap);
	ret = dns_name_normalize(in + 2, out + 2, cap - 2);
	if (ret == 0) {
		out[0] = '*';
		out[1] = '.';
	}
	return ret;
}

/* Length without one trailing dot. */
static size_t bare_len(const char *s)
{
	size_t n = strlen(s);

	return (n > 0 && s[n - 1] == '.') ? n - 1 : n;
}

bool dns_name_match(const char *pattern, const char *name)
{
	size_t pl, nl;

	if (!pattern || !name)
		return false;
	pl = bare_len(pattern);
	nl = bare_len(name);
	if (pl == 0 || nl == 0)
		return false;
	if (pl >= 2 && pattern[0] == '*' && pattern[1] == '.') {
		/* "*.s" matches "x.s" and "y.x.s": name ends with ".s" and has at least one
		 * label before it; the apex "s" itself does not match. */
		size_t sl = pl - 1;             /* ".s" including the dot */

		if (sl < 2 || nl <= sl)
			return false;
		return strncasecmp(name + nl - sl, pattern + 1, sl) == 0;
	}
	return pl == nl && strncasecmp(pattern, name, nl) == 0;
}
