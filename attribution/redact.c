/*
 * Secrets out of tool and model summaries before they reach the journal. Each rule is
 * a POSIX extended regex and the group it blanks (0: the whole match), so a
 * "password=hunter2" keeps its key and loses its value. Rules run in order over the
 * whole text; what an earlier rule replaced is not replaced again. Over-redaction is
 * the accepted error: a summary that loses a word is better than a journal that keeps a
 * key forever. Rules and examples: docs/sessions.md, tests/unit/test_redact.c.
 */
#include <errno.h>
#include <pthread.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "attribution/attribution.h"
#include "common/buf.h"

#define REDACTED "[REDACTED"

struct rule {
	const char *kind;
	const char *re;
	int group;
	int flags;
	regex_t rx;
	bool ok;
};

static struct rule rules[] = {
	{ "aws_access_key", "(AKIA|ASIA|ABIA|ACCA|AIDA|AROA)[A-Z0-9]{16}", 0, 0, { 0 }, false },
	{ "github_token", "gh[pousr]_[A-Za-z0-9]{30,255}|github_pat_[A-Za-z0-9_]{22,255}", 0, 0,
	  { 0 }, false },
	{ "gitlab_token", "gl(pat|dt|rt|ptt|cbt|oas|soat)-[A-Za-z0-9_-]{20,}", 0, 0, { 0 }, false },
	{ "slack_token", "xox[abposre]-[A-Za-z0-9-]{10,}", 0, 0, { 0 }, false },
	{ "slack_webhook", "https://hooks\\.slack\\.com/(services|workflows)/[A-Za-z0-9/_-]+", 0, 0,
	  { 0 }, false },
	{ "stripe_key", "[rs]k_(live|test)_[A-Za-z0-9]{16,}", 0, 0, { 0 }, false },
	{ "api_key", "sk-(ant-|proj-)?[A-Za-z0-9_-]{20,}", 0, 0, { 0 }, false },
	{ "google_api_key", "AIza[0-9A-Za-z_-]{35}", 0, 0, { 0 }, false },
	{ "jwt", "eyJ[A-Za-z0-9_-]{8,}\\.eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}", 0, 0, { 0 },
	  false },
	{ "azure_key", "(AccountKey|SharedAccessKey|sig)=([A-Za-z0-9+/%=]{16,})", 2, 0, { 0 },
	  false },
	{ "url_password", "([a-z][a-z0-9+.-]*://[^/[:space:]:@]*:)([^/[:space:]@]+)@", 2,
	  REG_ICASE, { 0 }, false },
	{ "authorization",
	  "authorization[\"']?[[:space:]]*[:=][[:space:]]*[\"']?([a-z]+[[:space:]]+)?"
	  "([^[:space:]\"',;]{6,})", 2, REG_ICASE, { 0 }, false },
	{ "bearer_token", "bearer[[:space:]]+([A-Za-z0-9._~+/=-]{8,})", 1, REG_ICASE, { 0 },
	  false },
	{ "secret",
	  "(password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|"
	  "credential)[a-z0-9_-]*[\"']?[[:space:]]*[:=][[:space:]]*"
	  "(\"[^\"]*\"|'[^']*'|[^[:space:]\"',;&]+)", 2, REG_ICASE, { 0 }, false },
};
#define NRULES (sizeof(rules) / sizeof(rules[0]))

static pthread_once_t compiled = PTHREAD_ONCE_INIT;

static void compile_rules(void)
{
	size_t i;

	for (i = 0; i < NRULES; i++)
		rules[i].ok = regcomp(&rules[i].rx, rules[i].re, REG_EXTENDED | rules[i].flags) == 0;
}

static void put_redacted(struct buf *b, const char *kind)
{
	buf_puts(b, REDACTED ":");
	buf_puts(b, kind);
	buf_putc(b, ']');
}

/* Applies one rule to in, writing to out. Returns the number of replacements. */
static size_t apply(const struct rule *r, const char *in, struct buf *out)
{
	regmatch_t m[4];
	const char *p = in;
	size_t n = 0;

	while (*p && regexec(&r->rx, p, 4, m, p == in ? 0 : REG_NOTBOL) == 0) {
		regmatch_t g = m[r->group].rm_so >= 0 ? m[r->group] : m[0];

		if (m[0].rm_eo == 0) {   /* empty match: step over one byte */
			buf_putc(out, *p++);
			continue;
		}
		if (strncmp(p + g.rm_so, REDACTED, strlen(REDACTED)) == 0) {
			buf_put(out, p, (size_t)m[0].rm_eo);
		} else {
			buf_put(out, p, (size_t)g.rm_so);
			put_redacted(out, r->kind);
			buf_put(out, p + g.rm_eo, (size_t)(m[0].rm_eo - g.rm_eo));
			n++;
		}
		p += m[0].rm_eo;
	}
	buf_puts(out, p);
	return n;
}

/* A PEM private key block, to its END line or to the end of the text (truncated key). */
static size_t redact_pem(const char *in, struct buf *out)
{
	const char *p = in, *begin;
	size_t n = 0;

	while ((begin = strstr(p, "-----BEGIN "))) {
		const char *eol = strstr(begin + 11, "-----");
		const char *stop;

		if (!eol || !memmem(begin, (size_t)(eol - begin), "PRIVATE KEY", 11)) {
			buf_put(out, p, (size_t)(begin + 11 - p));
			p = begin + 11;
			continue;
		}
		buf_put(out, p, (size_t)(begin - p));
		put_redacted(out, "private_key");
		n++;
		stop = strstr(eol + 5, "-----END ");
		stop = stop ? strstr(stop + 9, "-----") : NULL;
		p = stop ? stop + 5 : begin + strlen(begin);
	}
	buf_puts(out, p);
	return n;
}

/* UTF-8 safe cut: never leaves half a character at the end. */
static size_t cut_point(const char *s, size_t len, size_t max)
{
	size_t n = max;

	if (len <= max)
		return len;
	while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
		n--;
	return n;
}

static char *steal(struct buf *b)
{
	char *s;

	buf_putc(b, '\0');
	if (b->oom) {
		buf_free(b);
		return NULL;
	}
	s = b->data;
	buf_init(b);
	return s;
}

char *redact_summary(const char *in, size_t len, size_t max, bool *truncated,
		     size_t *nredacted)
{
	struct buf a, b;
	char *cur;
	size_t i, n;

	pthread_once(&compiled, compile_rules);
	*truncated = len > REDACT_INPUT_MAX;
	len = len > REDACT_INPUT_MAX ? cut_point(in, len, REDACT_INPUT_MAX) : len;
	buf_init(&a);
	buf_put(&a, in, len);
	/* regexec stops at NUL: a NUL inside the text must not hide what follows it. */
	for (i = 0; !a.oom && i < a.len; i++)
		if (a.data[i] == '\0')
			a.data[i] = ' ';
	cur = steal(&a);
	if (!cur)
		return NULL;
	buf_init(&b);
	*nredacted = redact_pem(cur, &b);
	for (i = 0; i < NRULES; i++) {
		free(cur);
		cur = steal(&b);
		if (!cur)
			return NULL;
		if (rules[i].ok)
			*nredacted += apply(&rules[i], cur, &b);
		else
			buf_puts(&b, cur);
	}
	free(cur);
	cur = steal(&b);
	if (cur && (n = cut_point(cur, strlen(cur), max)) < strlen(cur)) {
		cur[n] = '\0';
		*truncated = true;
	}
	return cur;
}
