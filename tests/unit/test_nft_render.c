/* nft/: mark layout, options and the rendered ruleset (pure code, no kernel). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "nft/nft.h"

static void test_mark_layout(void **state)
{
	uint32_t m = nft_mark_make(7);

	(void)state;
	assert_int_equal(m, 0x53000007u);
	assert_true(nft_mark_is_session(m));
	assert_int_equal(nft_mark_id(m), 7);
	assert_int_equal(nft_mark_verdict(m), NFT_MARK_UNDECIDED);
	assert_int_equal(nft_mark_with_verdict(m, NFT_MARK_ALLOW), 0x53100007u);
	assert_int_equal(nft_mark_with_verdict(m, NFT_MARK_DENY), 0x53200007u);
	assert_int_equal(nft_mark_id(nft_mark_with_verdict(m, NFT_MARK_DENY)), 7);
	assert_int_equal(nft_mark_make(0), 0);
	assert_int_equal(nft_mark_make(NFT_SESSION_ID_MAX + 1), 0);
	assert_int_equal(nft_mark_make(NFT_SESSION_ID_MAX), 0x530FFFFFu);
	/* Other rulesets' marks (kube-proxy 0x4000) are not sessions. */
	assert_false(nft_mark_is_session(0x4000));
	assert_int_equal(nft_mark_id(0x4000), 0);
	assert_int_equal(nft_mark_check(m), 0);
	assert_int_equal(nft_mark_check(0x53100007u), -EINVAL);
	assert_int_equal(nft_mark_check(0x53400007u), -EINVAL);
	assert_int_equal(nft_mark_check(0x53000000u), -EINVAL);
	assert_int_equal(nft_mark_check(0x4000), -EINVAL);
}

static void test_options(void **state)
{
	struct nft_options o;
	enum nft_qimpl q;

	(void)state;
	nft_options_init(&o);
	assert_int_equal(nft_options_check(&o), 0);
	assert_false(o.fail_open);
	o.queue_count = 0;
	assert_int_equal(nft_options_check(&o), -EINVAL);
	o.queue_count = 2;
	o.queue_base = 65535;
	assert_int_equal(nft_options_check(&o), -EINVAL);
	o.queue_base = 100;
	o.cgroup_level = 0;
	assert_int_equal(nft_options_check(&o), -EINVAL);
	o.cgroup_level = 3;
	o.netns = "../x";
	assert_int_equal(nft_options_check(&o), -EINVAL);
	o.netns = "/proc/1/ns/net";
	assert_int_equal(nft_options_check(&o), 0);
	o.netns = NULL;
	o.cgroup_mode = o.iface_mode = false;
	assert_int_equal(nft_options_check(&o), -EINVAL);
	assert_int_equal(nft_qimpl_parse("compat", &q), 0);
	assert_int_equal(q, NFT_QIMPL_COMPAT);
	assert_string_equal(nft_qimpl_name(q), "compat");
	assert_int_equal(nft_qimpl_parse("bogus", &q), -EINVAL);
}

/* Renders o into a heap string the caller frees. */
static char *render(const struct nft_options *o, enum nft_qimpl impl)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	assert_int_equal(nft_render(o, impl, f), 0);
	assert_int_equal(fclose(f), 0);
	return text;
}

static void test_render_default(void **state)
{
	struct nft_options o;
	char *t;

	(void)state;
	nft_options_init(&o);
	t = render(&o, NFT_QIMPL_NATIVE);
	assert_non_null(strstr(t, "table inet sandgate {"));
	assert_non_null(strstr(t, "socket cgroupv2 level 2 map @cgroup_sessions"));
	assert_non_null(strstr(t, "iifname map @iface_sessions"));
	assert_non_null(strstr(t, "udp th dport 53 counter queue to 100-101\n"));
	assert_non_null(strstr(t, "fail closed"));
	assert_null(strstr(t, "bypass"));
	/* The constants printed match the header's layout. */
	assert_non_null(strstr(t, "ct mark & 0xff000000 == 0x53000000"));
	assert_non_null(strstr(t, "== 0x00100000 accept"));
	assert_non_null(strstr(t, "== 0x00200000 goto deny"));
	free(t);
}

static void test_render_options(void **state)
{
	struct nft_options o;
	char *t;

	(void)state;
	nft_options_init(&o);
	o.fail_open = true;
	o.fanout = true;
	o.queue_base = 5;
	o.queue_count = 1;
	o.cgroup_level = 4;
	o.iface_mode = false;
	t = render(&o, NFT_QIMPL_COMPAT);
	assert_non_null(strstr(t, "queue flags bypass,fanout to 5\n"));
	assert_non_null(strstr(t, "FAIL-OPEN"));
	assert_non_null(strstr(t, "xt target NFQUEUE rev 3 (nft_compat) queuenum 5 queues_total 1 flags 0x3"));
	assert_non_null(strstr(t, "socket cgroupv2 level 4"));
	assert_null(strstr(t, "iifname map"));
	free(t);
	o.cgroup_mode = false;
	assert_int_equal(nft_render(&o, NFT_QIMPL_NATIVE, stdout), -EINVAL);
}

/* --net-rate values: bits in powers of 1000, bytes in powers of 1024 (as nft). */
static void test_rate_parse(void **state)
{
	static const struct { const char *in; uint64_t out; } ok[] = {
		{ "1mbit", 125000 }, { "100kbytes", 102400 }, { "8bit", 1 },
		{ "2.5mbit/s", 312500 }, { "1gbit", 125000000 }, { "1mbytes", 1048576 },
		{ "1gbytes", 1073741824 }, { "4000bytes", 4000 }, { "1000gbit", NFT_RATE_MAX },
	};
	static const char *const bad[] = { "", "5", "mbit", "-1mbit", "1 mbit", "1mb",
					   "1mbit/", "1Mbit", "0mbit", "nanmbit", "1kbitx" };
	uint64_t r;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		r = 0;
		assert_int_equal(nft_rate_parse(ok[i].in, &r), 0);
		assert_int_equal(r, ok[i].out);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(nft_rate_parse(bad[i], &r), -EINVAL);
	assert_int_equal(nft_rate_parse("1bit", &r), -ERANGE);   /* an eighth of a byte */
	assert_int_equal(nft_rate_parse("1001gbit", &r), -ERANGE);
	assert_int_equal(nft_rate_parse(NULL, &r), -EINVAL);
}

static void test_render_rate(void **state)
{
	struct nft_options o;
	char *t;

	(void)state;
	nft_options_init(&o);
	t = render(&o, NFT_QIMPL_NATIVE);
	assert_non_null(strstr(t, "map rate_limits {\n\t\ttype mark : limit\n"));
	assert_non_null(strstr(t, "map rate_drops {\n\t\ttype mark : counter\n"));
	/* First after neighbour discovery: nothing accepts or queues a packet before it. */
	assert_non_null(strstr(t, "icmpv6 type 133-137 accept\n\t\tlimit name meta mark & "
			       "0xff0fffff map @rate_limits counter name meta mark & 0xff0fffff"
			       " map @rate_drops drop\n"));
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mark_layout),
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_render_default),
		cmocka_unit_test(test_render_options),
		cmocka_unit_test(test_rate_parse),
		cmocka_unit_test(test_render_rate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
