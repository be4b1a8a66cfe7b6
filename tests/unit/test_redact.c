/* Redaction of secrets in tool/model summaries: each kind, what is kept, size limits. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "attribution/attribution.h"

static char *red(const char *in, size_t max, bool *cut, size_t *n)
{
	char *out = redact_summary(in, strlen(in), max, cut, n);

	assert_non_null(out);
	return out;
}

/* in must lose secret and contain want. */
static void expect(const char *in, const char *secret, const char *want)
{
	bool cut;
	size_t n;
	char *out = red(in, 4096, &cut, &n);

	if (strstr(out, secret) || !strstr(out, want))
		fail_msg("in: %s\nout: %s\n(secret %s, want %s)", in, out, secret, want);
	assert_true(n >= 1);
	assert_false(cut);
	free(out);
}

static void test_kinds(void **state)
{
	(void)state;
	expect("key AKIAIOSFODNN7EXAMPLE here", "AKIAIOSFODNN7EXAMPLE", "[REDACTED:aws_access_key]");
	expect("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
	       "wJalrXUtnFEMI", "aws_secret_access_key = [REDACTED:");
	expect("ghp_0123456789abcdefghijklmnopqrstuvwxyzAB", "ghp_0123", "[REDACTED:github_token]");
	expect("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuv", "github_pat_11",
	       "[REDACTED:github_token]");
	expect("glpat-abcdefghij0123456789", "glpat-abc", "[REDACTED:gitlab_token]");
	expect("xoxb-123456789012-abcdefghijkl", "xoxb-1234", "[REDACTED:slack_token]");
	expect("post https://hooks.slack.com/services/T000/B000/XXXX", "T000/B000",
	       "[REDACTED:slack_webhook]");
	expect("sk_live_abcdefghijklmnop1234", "sk_live_abc", "[REDACTED:stripe_key]");
	expect("OPENAI sk-proj-abcdefghijklmnopqrstuvwxyz12", "abcdefghijklmnopqrst",
	       "[REDACTED:api_key]");
	expect("AIzaSyA-abcdefghijklmnopqrstuvwxyz01234", "AIzaSyA-abc", "[REDACTED:google_api_key]");
	expect("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
	       "eyJhbGciOiJIUzI1NiJ9", "[REDACTED:jwt]");
	expect("DefaultEndpointsProtocol=https;AccountKey=abcdefghijklmnopqrstuvwxyz==;",
	       "abcdefghijklmnop", "AccountKey=[REDACTED:azure_key]");
	expect("clone https://bob:hunter2@git.example.test/x.git", "hunter2",
	       "https://bob:[REDACTED:url_password]@git.example.test");
	expect("curl -H 'Authorization: Bearer abc.def.ghijklmnop'", "abc.def",
	       "Authorization: Bearer [REDACTED:");
	expect("Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpw", "Basic [REDACTED:");
	expect("{\"password\": \"s3cr3t!\"}", "s3cr3t", "\"password\": [REDACTED:secret]");
	expect("DB_PASSWORD=letmein123 ./run", "letmein123", "DB_PASSWORD=[REDACTED:secret] ./run");
	expect("api_key: 1234567890abcdef", "1234567890abcdef", "api_key: [REDACTED:secret]");
}

static void test_private_key(void **state)
{
	(void)state;
	expect("before\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\nabcd\n"
	       "-----END RSA PRIVATE KEY-----\nafter", "MIIEpAIBAAKCAQEA", "before\n[REDACTED:private_key]\nafter");
	/* Cut off in the middle: everything after BEGIN goes. */
	expect("x -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk", "b3BlbnNzaC1",
	       "x [REDACTED:private_key]");
}

static void test_keeps_plain_text(void **state)
{
	const char *in = "ls -la /tmp && pip install requests==2.31 # a public certificate "
			 "-----BEGIN CERTIFICATE----- MIIB -----END CERTIFICATE-----";
	bool cut;
	size_t n;
	char *out = red(in, 4096, &cut, &n);

	(void)state;
	assert_string_equal(out, in);
	assert_int_equal(n, 0);
	free(out);
}

static void test_truncation(void **state)
{
	char in[3000];
	bool cut;
	size_t n;
	char *out;

	(void)state;
	memset(in, 'a', sizeof(in) - 1);
	in[sizeof(in) - 1] = '\0';
	out = red(in, REDACT_SUMMARY_MAX, &cut, &n);
	assert_true(cut);
	assert_int_equal(strlen(out), REDACT_SUMMARY_MAX);
	free(out);
	/* Never half a UTF-8 character at the cut. */
	out = red("\xc3\xa9\xc3\xa9\xc3\xa9", 3, &cut, &n);
	assert_true(cut);
	assert_string_equal(out, "\xc3\xa9");
	free(out);
}

static void test_secret_across_cut(void **state)
{
	/* Redaction runs before the cut: a secret at the limit never leaks a prefix. */
	char in[64];
	bool cut;
	size_t n;
	char *out;

	(void)state;
	strcpy(in, "xxxxxxxxxx AKIAIOSFODNN7EXAMPLE");
	out = red(in, 20, &cut, &n);
	assert_null(strstr(out, "AKIA"));
	assert_true(cut);
	free(out);
}

static void test_nul_and_empty(void **state)
{
	const char in[] = "a\0password=zz";
	bool cut;
	size_t n;
	char *out = redact_summary(in, sizeof(in) - 1, 100, &cut, &n);

	(void)state;
	assert_non_null(out);
	assert_null(strstr(out, "zz"));
	free(out);
	out = red("", 100, &cut, &n);
	assert_string_equal(out, "");
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_private_key),
		cmocka_unit_test(test_keeps_plain_text),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_secret_across_cut),
		cmocka_unit_test(test_nul_and_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
