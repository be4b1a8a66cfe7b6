/* gateway.resolvers left out: the host's, from resolv.conf, through the resolved stub. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/config.h"

static void test_parse(void **state)
{
	static const char text[] =
		"# comment\nsearch lab\nnameserver 198.18.0.53\n  nameserver   2001:db8::53 \n"
		"nameserver fe80::1%eth0\nnameserver not-an-ip\noptions edns0\nnameserver 198.18.0.54";
	struct sg_resolver r[4];
	size_t n;

	(void)state;
	assert_int_equal(config_resolv_parse(text, strlen(text), r, 4, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(r[0].addr.family, AF_INET);
	assert_int_equal(r[0].port, 53);
	assert_int_equal(r[1].addr.family, AF_INET6);
	assert_int_equal(r[2].addr.bytes[3], 54);
	/* at most max kept */
	assert_int_equal(config_resolv_parse(text, strlen(text), r, 1, &n), 0);
	assert_int_equal(n, 1);
}

static char *tmpfile_with(const char *text)
{
	char *p = strdup("/tmp/sg-resolv-XXXXXX");
	int fd = mkstemp(p);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return p;
}

static void test_host(void **state)
{
	char *stub = tmpfile_with("nameserver 127.0.0.53\noptions edns0 trust-ad\n");
	char *up = tmpfile_with("nameserver 198.18.5.1\nnameserver 198.18.5.2\n");
	char *plain = tmpfile_with("nameserver 198.18.6.1\n");
	struct sg_config *c = config_default();
	char from[256];

	(void)state;
	assert_non_null(c);
	/* the stub alone: its upstreams */
	assert_int_equal(config_host_resolvers(&c->gateway, stub, up, from, sizeof(from)), 0);
	assert_string_equal(from, up);
	assert_int_equal(c->gateway.n_resolvers, 2);
	assert_int_equal(c->gateway.resolvers[1].addr.bytes[3], 2);
	/* a plain resolv.conf: as it is */
	assert_int_equal(config_host_resolvers(&c->gateway, plain, up, from, sizeof(from)), 0);
	assert_string_equal(from, plain);
	assert_int_equal(c->gateway.n_resolvers, 1);
	/* no file: none (sessions get no DNS) */
	assert_int_equal(config_host_resolvers(&c->gateway, "/nonexistent/resolv.conf", up, from,
					       sizeof(from)), 0);
	assert_int_equal(c->gateway.n_resolvers, 0);
	config_free(c);
	/* written in the file: kept, even an empty list */
	assert_int_equal(config_load_buffer("t.yaml", "gateway:\n  resolvers: []\n", 25, &c, NULL), 0);
	assert_true(c->gateway.resolvers_set);
	assert_int_equal(config_host_resolvers(&c->gateway, plain, up, from, sizeof(from)), 0);
	assert_int_equal(c->gateway.n_resolvers, 0);
	config_free(c);
	/* null: the host's */
	assert_int_equal(config_load_buffer("t.yaml", "gateway:\n  resolvers: null\n", 27, &c, NULL), 0);
	assert_false(c->gateway.resolvers_set);
	config_free(c);
	unlink(stub);
	unlink(up);
	unlink(plain);
	free(stub);
	free(up);
	free(plain);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_host),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
