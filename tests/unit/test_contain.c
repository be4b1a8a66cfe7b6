/* Containment's pure code: capability names and lists, the keep set, /proc parsers. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "contain/contain.h"

#define S(x) x, strlen(x)
#define BIT(n) (1ULL << (n))

static void test_names(void **state)
{
	int cap = -1;

	(void)state;
	assert_int_equal(contain_cap_parse("CAP_NET_RAW", &cap), 0);
	assert_int_equal(cap, 13);
	assert_int_equal(contain_cap_parse("sys_admin", &cap), 0);
	assert_int_equal(cap, 21);
	assert_int_equal(contain_cap_parse("cap_bpf", &cap), 0);
	assert_int_equal(cap, 39);
	assert_int_equal(contain_cap_parse("CAP_NOPE", &cap), -EINVAL);
	assert_int_equal(contain_cap_parse("", &cap), -EINVAL);
	assert_string_equal(contain_cap_name(19), "CAP_SYS_PTRACE");
	assert_null(contain_cap_name(64));
	assert_null(contain_cap_name(-1));
}

static void test_lists(void **state)
{
	uint64_t m = 0;
	char bad[64] = "";

	(void)state;
	assert_int_equal(contain_cap_list("CAP_NET_RAW,sys_ptrace", &m, bad, sizeof(bad)), 0);
	assert_true(m == (BIT(13) | BIT(19)));
	assert_int_equal(contain_cap_list("net_raw,", &m, bad, sizeof(bad)), -EINVAL);
	assert_int_equal(contain_cap_list("net_raw,,x", &m, bad, sizeof(bad)), -EINVAL);
	assert_int_equal(contain_cap_list("ALL", &m, bad, sizeof(bad)), -EINVAL);
	assert_string_equal(bad, "ALL");
	assert_int_equal(contain_cap_list("", &m, bad, sizeof(bad)), 0);
	assert_true(m == 0);
}

/* The keep set holds none of the capabilities that reach past a session. */
static void test_keep(void **state)
{
	static const int dropped[] = { 2, 9, 12, 13, 16, 17, 19, 20, 21, 22, 23, 24, 25, 26,
				       27, 29, 30, 32, 33, 34, 35, 36, 37, 38, 39, 40 };
	uint64_t keep = contain_keep_default();
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(dropped) / sizeof(dropped[0]); i++)
		assert_false(keep & BIT(dropped[i]));
	/* Root still owns files, switches users, binds ports. */
	assert_true(keep & BIT(0));
	assert_true(keep & BIT(1));
	assert_true(keep & BIT(7));
	assert_true(keep & BIT(10));
	assert_true(keep >> 41 == 0);
}

static const char status_ok[] =
	"Name:\tsh\nUmask:\t0022\nState:\tS (sleeping)\nCapInh:\t0000000000000000\n"
	"CapPrm:\t000000009004c5fb\nCapEff:\t000000009004c5fb\nCapBnd:\t000000009004c5fb\n"
	"CapAmb:\t0000000000000000\nNoNewPrivs:\t1\nSeccomp:\t2\n";

static void test_status(void **state)
{
	struct contain_status st;
	char why[128] = "";

	(void)state;
	assert_int_equal(contain_parse_status(S(status_ok), &st), 0);
	assert_true(st.bnd == 0x9004c5fbULL && st.no_new_privs);
	assert_int_equal(contain_status_check(&st, contain_keep_default(), 40, why, sizeof(why)), 0);
	st.eff |= BIT(21);
	assert_int_equal(contain_status_check(&st, contain_keep_default(), 40, why, sizeof(why)),
			 -EPERM);
	assert_string_equal(why, "effective set holds CAP_SYS_ADMIN");
	st.eff &= ~BIT(21);
	st.no_new_privs = false;
	assert_int_equal(contain_status_check(&st, contain_keep_default(), 40, why, sizeof(why)),
			 -EPERM);
	/* A bit above cap_last does not exist on this kernel: not an offence. */
	st.no_new_privs = true;
	st.bnd |= BIT(45);
	assert_int_equal(contain_status_check(&st, contain_keep_default(), 40, why, sizeof(why)), 0);
	/* No seccomp filter (user namespaces not refused), or no Seccomp line at all. */
	st.seccomp = 0;
	assert_int_equal(contain_status_check(&st, contain_keep_default(), 40, why, sizeof(why)),
			 -EPERM);
	assert_string_equal(why, "no seccomp filter (new user namespaces are not refused)");
	assert_int_equal(st.seccomp, 0);
	assert_int_equal(contain_parse_status(S("CapInh:\t0\n"), &st), -ENOENT);
	assert_int_equal(contain_parse_status(S("CapInh:\tzz\nCapPrm:\t0\n"), &st), -EINVAL);
	assert_int_equal(contain_parse_status(S("CapInh:\t00000000000000000\n"), &st), -EINVAL);
	/* A process named "CapBnd: 0" cannot forge the line: Name comes first, tab-escaped. */
	assert_int_equal(contain_parse_status(S("Name:\tCapBnd:\t0\nCapInh:\t0\nCapPrm:\t0\n"
						"CapEff:\t0\nCapBnd:\tff\nCapAmb:\t0\n"
						"NoNewPrivs:\t1\n"), &st), 0);
	assert_true(st.bnd == 0xff);
	assert_int_equal(st.seccomp, -1);
	assert_int_equal(contain_status_check(&st, 0xff, 40, why, sizeof(why)), -EPERM);
}

static void test_ppid(void **state)
{
	pid_t p = 0;

	(void)state;
	assert_int_equal(contain_stat_ppid(S("42 (sh) S 7 42 42 0"), &p), 0);
	assert_int_equal(p, 7);
	assert_int_equal(contain_stat_ppid(S("42 (a) S 99 (b) R 1 2"), &p), 0);
	assert_int_equal(p, 1);
	assert_int_equal(contain_stat_ppid(S("42 (sh) S 7"), &p), -EINVAL);
	assert_int_equal(contain_stat_ppid(S("42 (sh)"), &p), -EINVAL);
	assert_int_equal(contain_stat_ppid(S("42 sh S 7 1"), &p), -EINVAL);
	assert_int_equal(contain_stat_ppid(S("42 (sh) S 99999999999 1"), &p), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names), cmocka_unit_test(test_lists),
		cmocka_unit_test(test_keep), cmocka_unit_test(test_status),
		cmocka_unit_test(test_ppid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
