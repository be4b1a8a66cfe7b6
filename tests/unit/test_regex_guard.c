/*
 * detect/regex_guard.c: which rule regexes are refused before regcomp, and that what is
 * refused was slow to compile (the fuzzer's finding) while ordinary patterns pass.
 */
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "detect/rules_int.h"

static int guard(const char *re)
{
	char why[128] = "";

	return regex_guard(re, why, sizeof(why));
}

static void ordinary_patterns_pass(void **state)
{
	static const char *const ok[] = {
		"/dev/(tcp|udp)/[^/]+/[0-9]+", "^(exec|system):",
		"^(tcp|tcp4|tcp6|udp|openssl)[^:]*:", "[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}",
		"[a-f0-9]{64}", "(ab){2}(cd){3}", "a{1,}b", "x{,5}", "\\*\\*", "[*+?]{2}",
		"[]*]+", "[[:alpha:]*]+", "(a|b)*c+d?", "((a{1,10}){1,10}){1,10}", "{", "a{",
		"(unclosed", "",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		char why[128] = "";

		if (regex_guard(ok[i], why, sizeof(why)) != 0)
			fail_msg("refused %s: %s", ok[i], why);
	}
}

static void repeated_quantifiers_refused(void **state)
{
	char why[128] = "";

	(void)state;
	assert_int_equal(regex_guard("t**c", why, sizeof(why)), -1);
	assert_non_null(strstr(why, "offset 2"));
	assert_int_equal(guard("a+*"), -1);
	assert_int_equal(guard("a?+"), -1);
	assert_int_equal(guard("a{2}*"), -1);
	assert_int_equal(guard("(a)*{3}"), -1);
	assert_int_equal(guard("a*\\*"), 0);   /* an escaped star is a character */
}

static void nested_bounds_capped(void **state)
{
	char why[128] = "";

	(void)state;
	assert_int_equal(regex_guard("((a{1,100}){1,100}){1,100}", why, sizeof(why)), -1);
	assert_non_null(strstr(why, "copies"));
	assert_int_equal(guard("(a{1,1000}){2}"), -1);
	assert_int_equal(guard("a{1001}"), -1);
	assert_int_equal(guard("a{99999999999999999999}"), -1);   /* no overflow */
	assert_int_equal(guard("((a{1,100}){1,100}"), -1);        /* unclosed, still counted */
	assert_int_equal(guard("(a{1,100})(b{1,10})"), 0);        /* siblings do not multiply */
	assert_int_equal(guard("a{1,1000}"), 0);
}

/* n nested groups around "a". */
static const char *nested(char *re, size_t n)
{
	memset(re, '(', n);
	re[n] = 'a';
	memset(re + n + 1, ')', n);
	re[2 * n + 1] = '\0';
	return re;
}

static void nesting_depth_capped(void **state)
{
	char re[80];

	(void)state;
	assert_int_equal(guard(nested(re, 32)), 0);
	assert_int_equal(guard(nested(re, 33)), -1);
}

/* The fuzzer's input compiled for seconds; once refused it costs nothing, and what
 * passes the guard compiles fast. */
static void what_passes_compiles_fast(void **state)
{
	char re[256] = "^(tcp|t";
	struct timespec a, b;
	regex_t rx;

	(void)state;
	memset(re + strlen(re), '*', 110);
	strcat(re, "cp6|udp)[^:]*:");
	assert_int_equal(guard(re), -1);
	clock_gettime(CLOCK_MONOTONIC, &a);
	assert_int_equal(regcomp(&rx, "((a{1,10}){1,10}){1,10}", REG_EXTENDED | REG_NOSUB), 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	regfree(&rx);
	assert_true((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ordinary_patterns_pass),
		cmocka_unit_test(repeated_quantifiers_refused),
		cmocka_unit_test(nested_bounds_capped),
		cmocka_unit_test(nesting_depth_capped),
		cmocka_unit_test(what_passes_compiles_fast),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
