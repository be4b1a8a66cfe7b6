/*
 * GeoIP enrichment (policy/geo.c) against a real MaxMind DB that the test writes itself
 * with Debian's libmaxmind-db-writer-perl (tests/data/policy/mkgeo.pl) into a temp dir:
 * country, ASN and organisation for lab ranges, partial records, misses, bad files.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "policy/policy.h"

static char dir[] = "/tmp/sg-geo-XXXXXX";
static char db_path[64];
static struct geo_db *db;
static bool no_writer;   /* the perl writer is missing: every test is skipped */

/* Skips the test (cmocka prints SKIPPED) when the database could not be written. */
#define NEED_DB()                 \
	do {                      \
		(void)state;      \
		if (no_writer)    \
			skip();   \
	} while (0)

static int setup(void **state)
{
	const char *data = getenv("SANDGATE_TESTDATA");
	char cmd[512];
	int rc;

	(void)state;
	if (!data) {
		fprintf(stderr, "SANDGATE_TESTDATA is not set\n");
		return -1;
	}
	if (system("perl -MMaxMind::DB::Writer::Tree -e 1 2>/dev/null") != 0) {
		fprintf(stderr, "SKIP: perl module MaxMind::DB::Writer::Tree missing "
			"(apt-get install libmaxmind-db-writer-perl)\n");
		no_writer = true;
		return 0;
	}
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return -1;
	}
	snprintf(db_path, sizeof(db_path), "%s/test.mmdb", dir);
	snprintf(cmd, sizeof(cmd), "perl '%s/policy/mkgeo.pl' '%s'", data, db_path);
	rc = system(cmd);
	if (rc != 0) {
		fprintf(stderr, "%s: exit status %d\n", cmd, rc);
		return -1;
	}
	rc = geo_open(db_path, &db);
	if (rc) {
		fprintf(stderr, "geo_open %s: %s\n", db_path, strerror(-rc));
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	geo_close(db);
	if (db_path[0])
		unlink(db_path);
	if (!no_writer)
		rmdir(dir);
	return 0;
}

static int look(const char *addr, struct geo_info *g)
{
	uint8_t a[16];
	int fam = strchr(addr, ':') ? AF_INET6 : AF_INET;

	assert_int_equal(inet_pton(fam, addr, a), 1);
	return geo_lookup(db, fam, a, g);
}

static void test_full_record(void **state)
{
	struct geo_info g;

	NEED_DB();
	assert_int_equal(look("198.18.1.1", &g), 0);
	assert_string_equal(g.country, "DE");
	assert_int_equal(g.asn, 64496);
	assert_string_equal(g.org, "Lab Transit A");
	assert_int_equal(look("2001:db8:1::1", &g), 0);
	assert_string_equal(g.country, "NL");
	assert_int_equal(g.asn, 64498);
	assert_string_equal(g.org, "Lab IPv6 Org");
}

static void test_partial_records(void **state)
{
	struct geo_info g;

	NEED_DB();
	/* The /24 inside the /16 has its own record: ASN and org, no country. */
	assert_int_equal(look("198.18.7.9", &g), 0);
	assert_string_equal(g.country, "");
	assert_int_equal(g.asn, 64499);
	assert_string_equal(g.org, "Lab Partial");
	/* Only registered_country: used when country is absent. */
	assert_int_equal(look("198.19.200.1", &g), 0);
	assert_string_equal(g.country, "FR");
	assert_int_equal(g.asn, 64497);
}

static void test_long_org_cut(void **state)
{
	struct geo_info g;

	NEED_DB();
	/* 126 bytes of ASCII, then "é" (2 bytes): 127 would split it, so 126 are kept. */
	assert_int_equal(look("198.19.9.1", &g), 0);
	assert_int_equal(g.asn, 64500);
	assert_int_equal(strlen(g.org), 126);
	assert_memory_equal(g.org + 120, "abcdef", 7);
}

static void test_ipv4_forms_in_ipv6_tree(void **state)
{
	struct geo_info g;

	NEED_DB();
	/* alias_ipv6_to_ipv4: the IPv4-mapped form finds the IPv4 record. */
	assert_int_equal(look("::ffff:198.18.1.1", &g), 0);
	assert_string_equal(g.country, "DE");
}

static void test_misses(void **state)
{
	struct geo_info g;
	uint8_t a[16] = { 0 };

	NEED_DB();
	assert_int_equal(look("10.0.0.1", &g), -ENOENT);
	assert_string_equal(g.country, "");
	assert_int_equal(g.asn, -1);
	assert_string_equal(g.org, "");
	assert_int_equal(look("2001:db9::1", &g), -ENOENT);
	assert_int_equal(look("198.20.0.1", &g), -ENOENT);
	assert_int_equal(geo_lookup(db, AF_UNIX, a, &g), -EAFNOSUPPORT);
}

static void test_open_errors(void **state)
{
	static char junk;
	struct geo_db *g = (struct geo_db *)&junk;   /* must be reset to NULL */
	char bad[80];
	int fd;

	NEED_DB();
	assert_int_equal(geo_open("/nonexistent/sandgate.mmdb", &g), -ENOENT);
	assert_null(g);
	snprintf(bad, sizeof(bad), "%s/not-a-db", dir);
	fd = open(bad, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "hello, not a database\n", 22), 22);
	assert_int_equal(close(fd), 0);
	assert_int_equal(geo_open(bad, &g), -EINVAL);
	assert_null(g);
	assert_int_equal(unlink(bad), 0);
	geo_close(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_record),
		cmocka_unit_test(test_partial_records),
		cmocka_unit_test(test_long_org_cut),
		cmocka_unit_test(test_ipv4_forms_in_ipv6_tree),
		cmocka_unit_test(test_misses),
		cmocka_unit_test(test_open_errors),
	};

	return cmocka_run_group_tests_name("geo", tests, setup, teardown);
}
