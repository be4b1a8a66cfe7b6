/*
 * The tamper watch's notification parser (nft/nft_watch.c, nft_watch_feed) on messages
 * built as the kernel sends them: a commit's object messages, then NEWGEN with the
 * committing task. Reported only when the commit touched table inet sandgate and was
 * not the daemon's own (a registered port id).
 */
#include <arpa/inet.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netlink.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "nft/nft.h"

struct mb {
	char buf[4096];
	size_t len;
};

static void put_attr(struct mb *m, uint16_t type, const void *data, uint16_t len)
{
	struct nlattr a = { .nla_len = (uint16_t)(NLA_HDRLEN + len), .nla_type = type };

	memcpy(m->buf + m->len, &a, sizeof(a));
	memcpy(m->buf + m->len + NLA_HDRLEN, data, len);
	m->len += NLA_ALIGN(a.nla_len);
}

/* Begins a message; returns its offset for msg_end. */
static size_t msg_begin(struct mb *m, uint16_t type, uint8_t family, uint32_t portid)
{
	struct nlmsghdr h = { .nlmsg_type = (uint16_t)(NFNL_SUBSYS_NFTABLES << 8 | type),
			      .nlmsg_pid = portid, .nlmsg_seq = 1 };
	struct nfgenmsg g = { .nfgen_family = family };
	size_t at = m->len;

	memcpy(m->buf + m->len, &h, sizeof(h));
	memcpy(m->buf + m->len + NLMSG_HDRLEN, &g, sizeof(g));
	m->len += NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(g));
	return at;
}

static void msg_end(struct mb *m, size_t at)
{
	struct nlmsghdr *h = (struct nlmsghdr *)(m->buf + at);

	h->nlmsg_len = (uint32_t)(m->len - at);
}

static void obj(struct mb *m, uint16_t type, uint8_t family, const char *table, uint16_t name_attr,
		const char *name, uint32_t portid)
{
	size_t at = msg_begin(m, type, family, portid);

	put_attr(m, 1, table, (uint16_t)(strlen(table) + 1));
	if (name)
		put_attr(m, name_attr, name, (uint16_t)(strlen(name) + 1));
	msg_end(m, at);
}

static void gen(struct mb *m, uint32_t id, uint32_t pid, const char *comm, uint32_t portid)
{
	size_t at = msg_begin(m, NFT_MSG_NEWGEN, AF_UNSPEC, portid);
	uint32_t v = htonl(id), p = htonl(pid);

	put_attr(m, NFTA_GEN_ID, &v, 4);
	put_attr(m, NFTA_GEN_PROC_PID, &p, 4);
	put_attr(m, NFTA_GEN_PROC_NAME, comm, (uint16_t)(strlen(comm) + 1));
	msg_end(m, at);
}

struct seen {
	int calls;
	struct nft_tamper last;
};

static void on_tamper(void *ctx, const struct nft_tamper *t)
{
	struct seen *s = ctx;

	s->calls++;
	s->last = *t;
}

static void test_flush_reported_and_merged(void **st)
{
	struct nft_watch *w = NULL;
	struct seen s = { 0 };
	struct mb m = { .len = 0 };

	(void)st;
	assert_int_equal(nft_watch_new(&w), 0);
	for (int i = 0; i < 5; i++)
		obj(&m, NFT_MSG_DELRULE, NFPROTO_INET, "sandgate", NFTA_RULE_CHAIN, "session", 77);
	obj(&m, NFT_MSG_DELSETELEM, NFPROTO_INET, "sandgate", NFTA_SET_ELEM_LIST_SET, "allow4", 77);
	gen(&m, 12, 4242, "nft", 77);
	assert_int_equal(nft_watch_feed(w, m.buf, m.len, on_tamper, &s), 0);
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.last.n_changes, 2);
	assert_string_equal(s.last.changes[0].op, "delete");
	assert_string_equal(s.last.changes[0].object, "rule");
	assert_string_equal(s.last.changes[0].name, "session");
	assert_int_equal(s.last.changes[0].count, 5);
	assert_string_equal(s.last.changes[1].object, "element");
	assert_string_equal(s.last.changes[1].name, "allow4");
	assert_int_equal(s.last.total, 6);
	assert_int_equal(s.last.pid, 4242);
	assert_string_equal(s.last.comm, "nft");
	assert_int_equal(s.last.gen_id, 12);
	assert_int_equal(s.last.portid, 77);
	nft_watch_free(w);
}

static void test_other_tables_and_own_commits_ignored(void **st)
{
	struct nft_watch *w = NULL;
	struct seen s = { 0 };
	struct mb m = { .len = 0 };

	(void)st;
	assert_int_equal(nft_watch_new(&w), 0);
	assert_int_equal(nft_watch_own_portid(w, 99), 0);
	obj(&m, NFT_MSG_NEWRULE, NFPROTO_INET, "filter", NFTA_RULE_CHAIN, "input", 5);
	obj(&m, NFT_MSG_NEWRULE, NFPROTO_IPV4, "sandgate", NFTA_RULE_CHAIN, "output", 5);
	obj(&m, NFT_MSG_NEWRULE, NFPROTO_INET, "sandgatex", NFTA_RULE_CHAIN, "output", 5);
	gen(&m, 1, 100, "nft", 5);
	obj(&m, NFT_MSG_NEWSETELEM, NFPROTO_INET, "sandgate", NFTA_SET_ELEM_LIST_SET, "allow4", 99);
	gen(&m, 2, 101, "sandgated", 99);
	assert_int_equal(nft_watch_feed(w, m.buf, m.len, on_tamper, &s), 0);
	assert_int_equal(s.calls, 0);
	nft_watch_free(w);
}

static void test_commit_split_over_reads(void **st)
{
	struct nft_watch *w = NULL;
	struct seen s = { 0 };
	struct mb a = { .len = 0 }, b = { .len = 0 };

	(void)st;
	assert_int_equal(nft_watch_new(&w), 0);
	obj(&a, NFT_MSG_DELTABLE, NFPROTO_INET, "sandgate", 0, NULL, 8);
	gen(&b, 3, 300, "python3", 8);
	assert_int_equal(nft_watch_feed(w, a.buf, a.len, on_tamper, &s), 0);
	assert_int_equal(s.calls, 0);
	assert_int_equal(nft_watch_feed(w, b.buf, b.len, on_tamper, &s), 0);
	assert_int_equal(s.calls, 1);
	assert_string_equal(s.last.changes[0].object, "table");
	assert_string_equal(s.last.comm, "python3");
	/* Truncated and oversized messages are skipped, not read past. */
	((struct nlmsghdr *)a.buf)->nlmsg_len = 0xcacacaca;
	assert_int_equal(nft_watch_feed(w, a.buf, a.len, on_tamper, &s), 0);
	assert_int_equal(nft_watch_feed(w, b.buf, 7, on_tamper, &s), 0);
	assert_int_equal(s.calls, 1);
	nft_watch_free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flush_reported_and_merged),
		cmocka_unit_test(test_other_tables_and_own_commits_ignored),
		cmocka_unit_test(test_commit_split_over_reads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
