/* The gateway's pure tables: mark -> session, name bindings, pending queries, flows. */
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "gateway/dnsbind.h"
#include "gateway/dnspend.h"
#include "gateway/flowtab.h"
#include "gateway/marktab.h"

static void test_marktab(void **state)
{
	struct marktab *t;
	char id[MARKTAB_ID_MAX + 1];
	char longid[MARKTAB_ID_MAX + 2];

	(void)state;
	assert_int_equal(marktab_new(&t), 0);
	assert_int_equal(marktab_get(t, 1, id, sizeof(id)), -ENOENT);
	assert_int_equal(marktab_set(t, 1, "s1", "/sys/fs/cgroup/sg/s1"), 0);
	assert_int_equal(marktab_set(t, 1 + 1024, "s1025", NULL), 0);   /* same bucket */
	assert_int_equal(marktab_get(t, 1, id, sizeof(id)), 0);
	assert_string_equal(id, "s1");
	assert_int_equal(marktab_get(t, 1025, id, sizeof(id)), 0);
	assert_string_equal(id, "s1025");
	assert_int_equal(marktab_get(t, 1025, id, 3), -ENOSPC);
	assert_int_equal(marktab_get_cgroup(t, 1025, id, sizeof(id)), -ENOENT);
	assert_int_equal(marktab_get_cgroup(t, 1, id, sizeof(id)), 0);
	assert_string_equal(id, "/sys/fs/cgroup/sg/s1");
	/* A reused mark takes the new session's id. */
	assert_int_equal(marktab_set(t, 1, "s2", NULL), 0);
	assert_int_equal(marktab_get(t, 1, id, sizeof(id)), 0);
	assert_string_equal(id, "s2");
	assert_int_equal(marktab_count(t), 2);
	assert_int_equal(marktab_set(t, 0, "x", NULL), -EINVAL);
	assert_int_equal(marktab_set(t, 0x100000, "x", NULL), -EINVAL);
	assert_int_equal(marktab_set(t, 5, "", NULL), -EINVAL);
	memset(longid, 'a', sizeof(longid) - 1);
	longid[sizeof(longid) - 1] = '\0';
	assert_int_equal(marktab_set(t, 5, longid, NULL), -EINVAL);
	assert_int_equal(marktab_del(t, 1), 0);
	assert_int_equal(marktab_del(t, 1), -ENOENT);
	assert_int_equal(marktab_get(t, 1, id, sizeof(id)), -ENOENT);
	assert_int_equal(marktab_count(t), 1);
	marktab_free(t);
	marktab_free(NULL);
}

static void test_dnsbind(void **state)
{
	const uint8_t a4[4] = { 198, 18, 1, 2 }, b4[4] = { 198, 18, 1, 3 };
	uint8_t a6[16] = { 0x20, 0x01, 0x0d, 0xb8 };
	struct dnsbind *b;
	char name[DNSBIND_NAME_MAX];

	(void)state;
	assert_int_equal(dnsbind_new(0, &b), -EINVAL);
	assert_int_equal(dnsbind_new(3, &b), 0);
	assert_int_equal(dnsbind_add(b, 1, AF_INET, a4, "a.test", 1000), 0);
	assert_int_equal(dnsbind_add(b, 1, AF_INET6, a6, "a.test", 1000), 0);
	assert_int_equal(dnsbind_lookup(b, 1, AF_INET, a4, 999, name, sizeof(name)), 0);
	assert_string_equal(name, "a.test");
	/* Per session: session 2 never asked. */
	assert_int_equal(dnsbind_lookup(b, 2, AF_INET, a4, 0, name, sizeof(name)), -ENOENT);
	assert_int_equal(dnsbind_lookup(b, 1, AF_INET, b4, 0, name, sizeof(name)), -ENOENT);
	/* The latest answer wins for a shared address. */
	assert_int_equal(dnsbind_add(b, 1, AF_INET, a4, "b.test", 2000), 0);
	assert_int_equal(dnsbind_lookup(b, 1, AF_INET, a4, 1500, name, sizeof(name)), 0);
	assert_string_equal(name, "b.test");
	assert_int_equal(dnsbind_add(b, 2, AF_INET, a4, "c.test", 500), 0);
	assert_int_equal(dnsbind_add(b, 3, AF_INET, a4, "d.test", 500), -ENOSPC);
	/* Expired: gone at lookup, and by the sweep. */
	assert_int_equal(dnsbind_lookup(b, 1, AF_INET, a4, 2000, name, sizeof(name)), -ENOENT);
	assert_int_equal(dnsbind_count(b), 2);
	assert_int_equal(dnsbind_expire(b, 600), 1);
	assert_int_equal(dnsbind_count(b), 1);
	dnsbind_forget(b, 1);
	assert_int_equal(dnsbind_count(b), 0);
	assert_int_equal(dnsbind_add(b, 1, AF_INET, a4, "", 1), -EINVAL);
	assert_int_equal(dnsbind_add(b, 1, 99, a4, "x.test", 1), -EINVAL);
	dnsbind_free(b);
	dnsbind_free(NULL);
}

/* Two allowed names on one address both stay bound, each with its own expiry. */
static void test_dnsbind_names(void **state)
{
	const uint8_t a4[4] = { 198, 18, 1, 2 };
	char names[DNSBIND_NAMES_PER_ADDR][DNSBIND_NAME_MAX], name[DNSBIND_NAME_MAX], n[16];
	struct dnsbind *b;

	(void)state;
	assert_int_equal(dnsbind_new(4, &b), 0);
	assert_int_equal(dnsbind_add(b, 1, AF_INET, a4, "api.test", 1000), 0);
	assert_int_equal(dnsbind_add(b, 1, AF_INET, a4, "cdn.test", 3000), 0);
	assert_int_equal(dnsbind_names(b, 1, AF_INET, a4, 500, names, 8), 2);
	assert_true((!strcmp(names[0], "api.test") && !strcmp(names[1], "cdn.test")) ||
		    (!strcmp(names[1], "api.test") && !strcmp(names[0], "cdn.test")));
	assert_int_equal(dnsbind_count(b), 1);   /* one address */
	/* The same name again refreshes it, no duplicate. */
	assert_int_equal(dnsbind_add(b, 1, AF_INET, a4, "api.test", 4000), 0);
	assert_int_equal(dnsbind_names(b, 1, AF_INET, a4, 500, names, 8), 2);
	assert_int_equal(dnsbind_lookup(b, 1, AF_INET, a4, 500, name, sizeof(name)), 0);
	assert_string_equal(name, "api.test");   /* the latest answer */
	/* Each name expires on its own. */
	assert_int_equal(dnsbind_names(b, 1, AF_INET, a4, 3500, names, 8), 1);
	assert_string_equal(names[0], "api.test");
	/* At most max copied; other sessions see nothing. */
	assert_int_equal(dnsbind_names(b, 1, AF_INET, a4, 500, names, 1), 1);
	assert_int_equal(dnsbind_names(b, 2, AF_INET, a4, 500, names, 8), 0);
	/* Past DNSBIND_NAMES_PER_ADDR, the name expiring first gives way. */
	for (int i = 0; i < DNSBIND_NAMES_PER_ADDR + 1; i++) {
		snprintf(n, sizeof(n), "n%d.test", i);
		assert_int_equal(dnsbind_add(b, 3, AF_INET, a4, n, 10000 + i), 0);
	}
	assert_int_equal(dnsbind_names(b, 3, AF_INET, a4, 0, names, 8), DNSBIND_NAMES_PER_ADDR);
	for (int i = 0; i < DNSBIND_NAMES_PER_ADDR; i++)
		assert_string_not_equal(names[i], "n0.test");
	/* All expired: the address is gone. */
	assert_int_equal(dnsbind_names(b, 1, AF_INET, a4, 5000, names, 8), 0);
	assert_int_equal(dnsbind_count(b), 1);
	dnsbind_free(b);
}

static void test_marktab_policy(void **state)
{
	struct marktab *t;
	char p[MARKTAB_POLICY_MAX + 1], big[MARKTAB_POLICY_MAX + 2];

	(void)state;
	assert_int_equal(marktab_new(&t), 0);
	assert_int_equal(marktab_set_policy(t, 7, "strict"), -ENOENT);
	assert_int_equal(marktab_set(t, 7, "s7", NULL), 0);
	assert_int_equal(marktab_get_policy(t, 7, p, sizeof(p)), 0);
	assert_string_equal(p, "");   /* the default policy */
	assert_int_equal(marktab_set_policy(t, 7, "strict"), 0);
	assert_int_equal(marktab_get_policy(t, 7, p, sizeof(p)), 0);
	assert_string_equal(p, "strict");
	assert_int_equal(marktab_get_policy(t, 7, p, 3), -ENOSPC);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(marktab_set_policy(t, 7, big), -EINVAL);
	assert_int_equal(marktab_set_policy(t, 7, NULL), 0);
	assert_int_equal(marktab_get_policy(t, 7, p, sizeof(p)), 0);
	assert_string_equal(p, "");
	assert_int_equal(marktab_get_policy(t, 8, p, sizeof(p)), -ENOENT);
	marktab_free(t);
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A reused mark: entries that began under the earlier holder stay the earlier holder's. */
static void test_marktab_history(void **state)
{
	struct marktab *t;
	char id[MARKTAB_ID_MAX + 1];
	int64_t t0, t1, t2;

	(void)state;
	assert_int_equal(marktab_new(&t), 0);
	t0 = now_ns();
	assert_int_equal(marktab_set(t, 3, "a", NULL), 0);
	/* The first holder this process knows claims everything before it too. */
	assert_int_equal(marktab_get_at(t, 3, 1, id, sizeof(id)), 0);
	assert_string_equal(id, "a");
	assert_int_equal(marktab_set_since(t, 3, t0), 0);
	assert_int_equal(marktab_get_at(t, 3, t0 - 1, id, sizeof(id)), -ENOENT);
	assert_int_equal(marktab_get_at(t, 3, 0, id, sizeof(id)), 0);
	t1 = now_ns();
	assert_int_equal(marktab_del(t, 3), 0);
	assert_int_equal(marktab_get(t, 3, id, sizeof(id)), -ENOENT);
	assert_int_equal(marktab_count(t), 0);
	/* Retired: still the holder of what began in its time. */
	assert_int_equal(marktab_get_at(t, 3, t1, id, sizeof(id)), 0);
	assert_string_equal(id, "a");
	assert_int_equal(marktab_set(t, 3, "b", NULL), 0);
	t2 = now_ns();
	assert_int_equal(marktab_get_at(t, 3, t1, id, sizeof(id)), 0);
	assert_string_equal(id, "a");
	assert_int_equal(marktab_get_at(t, 3, t2, id, sizeof(id)), 0);
	assert_string_equal(id, "b");
	assert_int_equal(marktab_get(t, 3, id, sizeof(id)), 0);
	assert_string_equal(id, "b");
	/* b's creation said when it began: a's entries before are never b's. */
	assert_int_equal(marktab_set_since(t, 3, t2), 0);
	assert_int_equal(marktab_get_at(t, 3, t2 - 1, id, sizeof(id)), -ENOENT);
	/* Replaced without a del (set with another sid): the old one is retired too. */
	assert_int_equal(marktab_set(t, 3, "c", NULL), 0);
	assert_int_equal(marktab_get_at(t, 3, t2, id, sizeof(id)), 0);
	assert_string_equal(id, "b");
	assert_int_equal(marktab_count(t), 1);
	/* Only the last MARKTAB_RETIRED holders are kept. */
	for (int i = 0; i < 10; i++) {
		char sid[8];

		snprintf(sid, sizeof(sid), "x%d", i);
		assert_int_equal(marktab_set(t, 3, sid, NULL), 0);
	}
	assert_int_equal(marktab_get_at(t, 3, t1, id, sizeof(id)), -ENOENT);
	assert_int_equal(marktab_count(t), 1);
	marktab_free(t);
}

static void pend_entry(struct dnspend_entry *e, uint16_t id, int64_t sent)
{
	memset(e, 0, sizeof(*e));
	e->key.family = AF_INET;
	e->key.dns_id = id;
	e->key.cport = 40000;
	e->key.sport = 53;
	memcpy(e->key.client, "\xc6\x12\x01\x01", 4);
	memcpy(e->key.server, "\xc6\x12\x01\x02", 4);
	snprintf(e->qname, sizeof(e->qname), "q%u.test", id);
	e->sent_ms = sent;
}

static void test_dnspend(void **state)
{
	struct dnspend *p;
	struct dnspend_entry e, out;

	(void)state;
	assert_int_equal(dnspend_new(2, &p), 0);
	pend_entry(&e, 1, 100);
	assert_int_equal(dnspend_add(p, &e), 0);
	e.sent_ms = 200;
	assert_int_equal(dnspend_add(p, &e), -EEXIST);   /* retransmission keeps the first */
	pend_entry(&e, 2, 300);
	assert_int_equal(dnspend_add(p, &e), 0);
	pend_entry(&e, 3, 300);
	assert_int_equal(dnspend_add(p, &e), -ENOSPC);
	pend_entry(&e, 1, 0);
	e.key.tcp = true;
	assert_int_equal(dnspend_take(p, &e.key, &out), -ENOENT);   /* other transport */
	e.key.tcp = false;
	assert_int_equal(dnspend_take(p, &e.key, &out), 0);
	assert_string_equal(out.qname, "q1.test");
	assert_int_equal(out.sent_ms, 100);
	assert_int_equal(dnspend_pop_expired(p, 299, &out), -ENOENT);
	assert_int_equal(dnspend_pop_expired(p, 300, &out), 0);
	assert_string_equal(out.qname, "q2.test");
	assert_int_equal(dnspend_count(p), 0);
	dnspend_free(p);
}

static void key4(struct flow_key *k, uint16_t sport)
{
	memset(k, 0, sizeof(*k));
	k->family = AF_INET;
	k->proto = IPPROTO_TCP;
	memcpy(k->src, "\xc6\x12\x01\x01", 4);
	memcpy(k->dst, "\xc6\x12\x01\x02", 4);
	k->sport = sport;
	k->dport = 443;
}

static bool drop_odd(struct flow *f, void *ctx)
{
	(void)ctx;
	return f->key.sport % 2;
}

static void test_flowtab(void **state)
{
	struct flowtab *t;
	struct flow_key k, rk;
	struct flow *f, *g;
	const uint8_t data[3] = { 1, 2, 3 };

	(void)state;
	assert_int_equal(flowtab_new(3, &t), 0);
	key4(&k, 40001);
	assert_null(flowtab_find(t, &k));
	assert_int_equal(flowtab_add(t, &k, &f), 0);
	assert_int_equal(f->uid, -1);
	assert_int_equal(flowtab_add(t, &k, &g), -EEXIST);
	assert_ptr_equal(f, g);
	/* The reply direction's tuple is the reverse, and not the same flow key. */
	flow_key_reverse(&k, &rk);
	assert_int_equal(rk.sport, 443);
	assert_int_equal(rk.dport, 40001);
	assert_null(flowtab_find(t, &rk));
	flow_key_reverse(&rk, &rk);
	assert_ptr_equal(flowtab_find(t, &rk), f);
	/* The stream buffer is capped. */
	assert_int_equal(flow_buf_append(f, data, 3, 4), 0);
	assert_int_equal(flow_buf_append(f, data, 3, 4), 0);
	assert_int_equal(f->len, 4);
	key4(&k, 40002);
	assert_int_equal(flowtab_add(t, &k, &g), 0);
	key4(&k, 40003);
	assert_int_equal(flowtab_add(t, &k, &g), 0);
	key4(&k, 40004);
	assert_int_equal(flowtab_add(t, &k, &g), -ENOSPC);
	flowtab_sweep(t, drop_odd, NULL);
	assert_int_equal(flowtab_count(t), 1);
	key4(&k, 40002);
	assert_int_equal(flowtab_del(t, &k), 0);
	assert_int_equal(flowtab_del(t, &k), -ENOENT);
	flowtab_free(t);
	flowtab_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_marktab),
		cmocka_unit_test(test_dnsbind),
		cmocka_unit_test(test_dnsbind_names),
		cmocka_unit_test(test_marktab_policy),
		cmocka_unit_test(test_marktab_history),
		cmocka_unit_test(test_dnspend),
		cmocka_unit_test(test_flowtab),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
