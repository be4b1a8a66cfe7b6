/*
 * `unapproved: block` in the gateway (gateway/pkgguard.c): whether an installer's flow
 * goes to a host of its approved sources, from its SNI, Host, address and bound names.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "gateway/gw_int.h"

static struct gw_pkg_hosts pk;
static struct flow f;
static struct policy_flow pf;
static const char *bound[2];

static int setup(void **state)
{
	(void)state;
	memset(&pk, 0, sizeof(pk));
	memset(&f, 0, sizeof(f));
	memset(&pf, 0, sizeof(pf));
	pk.n = 3;
	snprintf(pk.host[0], sizeof(pk.host[0]), "pkgs.test");
	snprintf(pk.host[1], sizeof(pk.host[1]), "198.18.1.2");
	snprintf(pk.host[2], sizeof(pk.host[2]), "2001:db8:1::2");
	f.family = AF_INET;
	assert_int_equal(inet_pton(AF_INET, "198.18.1.3", f.dst), 1);
	pf.bound_names = bound;
	return 0;
}

static void test_sni_and_host(void **state)
{
	(void)state;
	snprintf(f.sni, sizeof(f.sni), "PKGS.test");
	assert_false(gw_pkg_refused(&pk, &f, &pf, false));
	snprintf(f.http_host, sizeof(f.http_host), "pkgs.test:8080");
	assert_false(gw_pkg_refused(&pk, &f, &pf, false));
	snprintf(f.http_host, sizeof(f.http_host), "other.test");   /* both must be approved */
	assert_true(gw_pkg_refused(&pk, &f, &pf, false));
	f.sni[0] = '\0';
	snprintf(f.http_host, sizeof(f.http_host), "pkgs.test.");
	assert_false(gw_pkg_refused(&pk, &f, &pf, false));
	snprintf(f.http_host, sizeof(f.http_host), "pkgs.test.evil");   /* exact only */
	assert_true(gw_pkg_refused(&pk, &f, &pf, false));
	snprintf(f.http_host, sizeof(f.http_host), "sub.pkgs.test");
	assert_true(gw_pkg_refused(&pk, &f, &pf, false));
	snprintf(f.http_host, sizeof(f.http_host), "198.18.1.2:80");    /* a literal */
	assert_false(gw_pkg_refused(&pk, &f, &pf, false));
	snprintf(f.http_host, sizeof(f.http_host), "[2001:db8:1:0::2]:80");
	assert_false(gw_pkg_refused(&pk, &f, &pf, false));
	snprintf(f.http_host, sizeof(f.http_host), "[2001:db8:1::3]");
	assert_true(gw_pkg_refused(&pk, &f, &pf, false));
}

/* What names no host approves nothing: a bracket without an IPv6 literal in it, an SNI
 * with a port or a bracket (RFC 6066 allows neither). */
static void test_no_host_names(void **state)
{
	static const char *const hosts[] = { "[pkgs.test", "[pkgs.test]", "[pkgs.test]:443",
					      "[2001:db8:1::2]x", "[2001:db8:1::2]:", "[2001:db8:1::2]:4a" };
	static const char *const snis[] = { "[pkgs.test", "pkgs.test:443", "[2001:db8:1::2]",
					     "pkgs.test]" };

	(void)state;
	for (size_t i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++) {
		snprintf(f.http_host, sizeof(f.http_host), "%s", hosts[i]);
		assert_true(gw_pkg_refused(&pk, &f, &pf, false));
	}
	f.http_host[0] = '\0';
	for (size_t i = 0; i < sizeof(snis) / sizeof(snis[0]); i++) {
		snprintf(f.sni, sizeof(f.sni), "%s", snis[i]);
		assert_true(gw_pkg_refused(&pk, &f, &pf, false));
	}
	/* Controls: the same host as a plain SNI, and in brackets as a Host. */
	snprintf(f.sni, sizeof(f.sni), "pkgs.test");
	assert_false(gw_pkg_refused(&pk, &f, &pf, false));
	f.sni[0] = '\0';
	snprintf(f.http_host, sizeof(f.http_host), "[2001:db8:1::2]:443");
	assert_false(gw_pkg_refused(&pk, &f, &pf, false));
}

static void test_without_names(void **state)
{
	(void)state;
	assert_true(gw_pkg_refused(&pk, &f, &pf, false));   /* 198.18.1.3, nothing bound */
	bound[0] = "other.test";
	bound[1] = "pkgs.test";
	pf.n_bound = 1;
	assert_true(gw_pkg_refused(&pk, &f, &pf, false));
	pf.n_bound = 2;
	assert_false(gw_pkg_refused(&pk, &f, &pf, false));
	pf.n_bound = 0;
	assert_int_equal(inet_pton(AF_INET, "198.18.1.2", f.dst), 1);
	assert_false(gw_pkg_refused(&pk, &f, &pf, false));
	f.family = AF_INET6;
	assert_int_equal(inet_pton(AF_INET6, "2001:db8:1::2", f.dst), 1);
	assert_false(gw_pkg_refused(&pk, &f, &pf, false));
}

/* At the SYN: refused only when names are bound and none (nor the address) is approved. */
static void test_early(void **state)
{
	(void)state;
	assert_false(gw_pkg_refused(&pk, &f, &pf, true));   /* no name yet: wait */
	bound[0] = "other.test";
	pf.n_bound = 1;
	assert_true(gw_pkg_refused(&pk, &f, &pf, true));
	bound[1] = "pkgs.test";
	pf.n_bound = 2;
	assert_false(gw_pkg_refused(&pk, &f, &pf, true));
	pf.n_bound = 1;
	assert_int_equal(inet_pton(AF_INET, "198.18.1.2", f.dst), 1);
	assert_false(gw_pkg_refused(&pk, &f, &pf, true));
}

/* An empty approved list approves nothing. */
static void test_empty(void **state)
{
	(void)state;
	pk.n = 0;
	snprintf(f.sni, sizeof(f.sni), "pkgs.test");
	assert_true(gw_pkg_refused(&pk, &f, &pf, false));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_sni_and_host, setup),
		cmocka_unit_test_setup(test_no_host_names, setup),
		cmocka_unit_test_setup(test_without_names, setup),
		cmocka_unit_test_setup(test_early, setup),
		cmocka_unit_test_setup(test_empty, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
