/*
 * DNS part tests. Queries are real dig 9.18 output captured at a local listener
 * (tests/data/parsers/dns_dig_*.bin, the TCP one with its length prefix); answers
 * are built with ldns here, since the whole point is exact control of the records.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include <cmocka.h>
#include <ldns/ldns.h>

#include "dns/dns.h"

struct blob {
	uint8_t p[4096];
	size_t n;
};

static void load(const char *name, struct blob *b)
{
	const char *dir = getenv("SANDGATE_TESTDATA");
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/parsers/%s", dir ? dir : "tests/data", name);
	f = fopen(path, "rb");
	assert_non_null(f);
	b->n = fread(b->p, 1, sizeof(b->p), f);
	fclose(f);
	assert_true(b->n > 0);
}

/* A response to "qname qtype" carrying the answer RRs given in zone-file text. */
static uint8_t *make_response(const char *qname, ldns_rr_type qtype, const char **rrs,
			      size_t nrrs, size_t *len)
{
	ldns_pkt *pkt = NULL;
	uint8_t *wire = NULL;

	assert_int_equal(ldns_pkt_query_new_frm_str(&pkt, qname, qtype, LDNS_RR_CLASS_IN,
						    LDNS_RD), LDNS_STATUS_OK);
	ldns_pkt_set_id(pkt, 0x1234);
	ldns_pkt_set_qr(pkt, true);
	ldns_pkt_set_ra(pkt, true);
	for (size_t i = 0; i < nrrs; i++) {
		ldns_rr *rr = NULL;

		assert_int_equal(ldns_rr_new_frm_str(&rr, rrs[i], 0, NULL, NULL), LDNS_STATUS_OK);
		assert_true(ldns_pkt_push_rr(pkt, LDNS_SECTION_ANSWER, rr));
	}
	assert_int_equal(ldns_pkt2wire(&wire, pkt, len), LDNS_STATUS_OK);
	ldns_pkt_free(pkt);
	return wire;
}

static void test_dig_queries(void **state)
{
	static struct dns_msg m;
	struct blob b;

	(void)state;
	load("dns_dig_a.bin", &b);
	assert_int_equal(dns_parse(b.p, b.n, &m), 0);
	assert_false(m.qr);
	assert_true(m.rd);
	assert_string_equal(m.qname, "www.example.test");   /* dig sent WWW.Example.Test */
	assert_string_equal(m.qtype_str, "A");
	assert_true(m.edns);
	assert_int_equal(m.edns_udp_size, 1232);
	load("dns_dig_https.bin", &b);
	assert_int_equal(dns_parse(b.p, b.n, &m), 0);
	assert_int_equal(m.qtype, 65);
	assert_string_equal(m.qtype_str, "HTTPS");
	assert_string_equal(m.qname, "svc.example.test");
}

static void test_cname_chain(void **state)
{
	static struct dns_msg m;
	const char *rrs[] = {
		"www.example.test. 300 IN CNAME CDN.Example.NET.",
		"cdn.example.net. 120 IN CNAME edge.example.net.",
		"edge.example.net. 60 IN A 198.18.0.10",
		"edge.example.net. 600 IN AAAA 2001:db8::10",
		"other.test. 60 IN A 198.18.0.99",
		"www.example.test. 300 IN TXT \"hello world\"",
	};
	size_t len;
	uint8_t *w = make_response("www.example.test.", LDNS_RR_TYPE_A, rrs, 6, &len);
	char buf[64];

	(void)state;
	assert_int_equal(dns_parse(w, len, &m), 0);
	assert_true(m.qr);
	assert_int_equal(m.id, 0x1234);
	assert_int_equal(m.rcode, 0);
	assert_string_equal(dns_rcode_str(m.rcode), "NOERROR");
	assert_int_equal(m.n_answers, 6);
	assert_string_equal(m.answers[0].type_str, "CNAME");
	assert_string_equal(m.answers[0].data, "cdn.example.net");
	assert_int_equal(m.answers[0].ttl, 300);
	assert_string_equal(m.answers[2].data, "198.18.0.10");
	assert_string_equal(m.answers[3].data, "2001:db8::10");
	assert_string_equal(m.answers[5].data, "\"hello world\"");
	assert_int_equal(m.n_cnames, 2);
	assert_string_equal(m.cnames[1], "edge.example.net");
	assert_int_equal(m.cname_ttl_min, 120);
	/* other.test is not on the chain: it binds nothing to www.example.test. */
	assert_int_equal(m.n_addrs, 2);
	assert_int_equal(m.addrs[0].ttl, 60);
	assert_int_equal(m.addrs[1].ttl, 120);    /* clamped by the chain */
	assert_string_equal(inet_ntop(m.addrs[1].family, m.addrs[1].addr, buf, sizeof(buf)),
			    "2001:db8::10");
	free(w);
}

static void test_loops_and_caps(void **state)
{
	static struct dns_msg m;
	const char *loop[] = {
		"a.test. 60 IN CNAME b.test.",
		"b.test. 60 IN CNAME a.test.",
		"b.test. 60 IN A 198.18.0.1",
	};
	const char *many[100];
	char text[100][64];
	size_t len;
	uint8_t *w = make_response("a.test.", LDNS_RR_TYPE_A, loop, 3, &len);

	(void)state;
	assert_int_equal(dns_parse(w, len, &m), 0);
	assert_true(m.cname_chain_cut);
	assert_int_equal(m.n_cnames, 1);
	assert_int_equal(m.n_addrs, 1);
	free(w);
	for (int i = 0; i < 100; i++) {
		snprintf(text[i], sizeof(text[i]), "x.test. 30 IN A 198.18.1.%d", i);
		many[i] = text[i];
	}
	w = make_response("x.test.", LDNS_RR_TYPE_A, many, 100, &len);
	assert_int_equal(dns_parse(w, len, &m), 0);
	assert_int_equal(m.n_answers, DNS_MAX_ANSWERS);
	assert_int_equal(m.answers_dropped, 100 - DNS_MAX_ANSWERS);
	assert_int_equal(m.n_addrs, DNS_MAX_ADDRS);
	assert_int_equal(m.addrs_dropped, 100 - DNS_MAX_ADDRS);
	/* Truncation at every length: an error or a shorter message, never a crash. */
	for (size_t i = 0; i < len; i++) {
		int r = dns_parse(w, i, &m);

		assert_true(r == 0 || r == -EBADMSG || (i == 0 && r == -EINVAL));
	}
	free(w);
}

/* A CNAME target longer than the answer data field is cut, and says so. */
static void test_long_cname(void **state)
{
	static struct dns_msg m;
	size_t len;
	uint8_t *w;
	char rr[600], label[121];
	const char *one[1] = { rr };

	(void)state;
	/* 30 spaces per label, each shown as \032: 120 characters a label. */
	for (int i = 0; i < 30; i++)
		memcpy(label + 4 * i, "\\032", 4);
	label[120] = '\0';
	snprintf(rr, sizeof(rr), "long.test. 60 IN CNAME %s.%s.%s.test.", label, label,
		 label);
	w = make_response("long.test.", LDNS_RR_TYPE_A, one, 1, &len);
	assert_int_equal(dns_parse(w, len, &m), 0);
	assert_true(m.answers[0].data_truncated);
	assert_true(strlen(m.answers[0].data) < DNS_RDATA_STR_MAX);
	assert_int_equal(m.n_cnames, 1);
	assert_int_equal(strlen(m.cnames[0]), 3 * 121 + 4);
	free(w);
}

static void test_hostile_wire(void **state)
{
	static struct dns_msg m;
	/* Answer name is a pointer to itself: a compression loop. */
	const uint8_t loop[] = { 0x12, 0x34, 0x81, 0x80, 0, 1, 0, 1, 0, 0, 0, 0,
				 1, 'a', 0, 0, 1, 0, 1,
				 0xc0, 19, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 198, 18, 0, 1 };
	/* 65535 answers announced, none present. */
	const uint8_t counts[] = { 0x12, 0x34, 0x81, 0x80, 0, 1, 0xff, 0xff, 0xff, 0xff,
				   0xff, 0xff, 1, 'a', 0, 0, 1, 0, 1 };
	/* A label byte of 0x40 (reserved label type). */
	const uint8_t label[] = { 0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0,
				  0x40, 'a', 0, 0, 1, 0, 1 };
	/* Odd bytes in a name come back escaped, lowercase. */
	const uint8_t odd[] = { 0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0,
				3, 'A', ' ', '.', 4, 't', 'e', 's', 't', 0, 0, 1, 0, 1 };

	(void)state;
	assert_int_equal(dns_parse(loop, sizeof(loop), &m), -EBADMSG);
	assert_int_equal(dns_parse(counts, sizeof(counts), &m), -EBADMSG);
	assert_int_equal(dns_parse(label, sizeof(label), &m), -EBADMSG);
	assert_int_equal(dns_parse(odd, sizeof(odd), &m), 0);
	assert_string_equal(m.qname, "a\\032\\..test");
	assert_int_equal(dns_parse(odd, 0, &m), -EINVAL);
}

static void test_tcp_reassembly(void **state)
{
	struct dns_tcp *r = dns_tcp_new();
	static struct dns_msg m;
	struct blob b;
	const uint8_t *msg;
	size_t len, need;
	uint8_t stream[8192], zero[2] = { 0, 0 };
	size_t n = 0;

	(void)state;
	assert_non_null(r);
	load("dns_dig_tcp.bin", &b);
	/* Byte by byte: complete only after the last byte. */
	for (size_t i = 0; i < b.n; i++) {
		assert_int_equal(dns_tcp_next(r, &msg, &len, &need), 0);
		assert_int_equal(need, i < 2 ? 2 - i : b.n - i);
		assert_int_equal(dns_tcp_feed(r, b.p + i, 1), 0);
	}
	assert_int_equal(dns_tcp_next(r, &msg, &len, &need), 1);
	assert_int_equal(dns_parse(msg, len, &m), 0);
	assert_string_equal(m.qname, "api.example.test");
	assert_string_equal(m.qtype_str, "AAAA");
	/* Three messages, a zero-length one and half a message in one segment. */
	for (int i = 0; i < 3; i++, n += b.n)
		memcpy(stream + n, b.p, b.n);
	memcpy(stream + n, zero, 2);
	n += 2;
	memcpy(stream + n, b.p, 10);
	n += 10;
	assert_int_equal(dns_tcp_feed(r, stream, n), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(dns_tcp_next(r, &msg, &len, &need), 1);
	assert_int_equal(dns_tcp_next(r, &msg, &len, &need), -EBADMSG);
	assert_int_equal(dns_tcp_next(r, &msg, &len, &need), 0);
	assert_int_equal(need, b.n - 10);
	assert_int_equal(dns_tcp_pending(r), 10);
	/* An abusive stream is cut off. */
	{
		uint8_t *big = calloc(1, DNS_TCP_BUF_MAX);

		assert_non_null(big);
		assert_int_equal(dns_tcp_feed(r, big, DNS_TCP_BUF_MAX), -ENOBUFS);
		free(big);
	}
	dns_tcp_free(r);
	dns_tcp_free(NULL);
}

static void test_synth(void **state)
{
	static struct dns_msg q, a;
	struct blob b, t;
	uint8_t out[512];
	size_t len = 0;

	(void)state;
	load("dns_dig_a.bin", &b);
	assert_int_equal(dns_parse(b.p, b.n, &q), 0);
	assert_int_equal(dns_synth_answer(b.p, b.n, DNS_RCODE_REFUSED, out, sizeof(out), &len), 0);
	assert_int_equal(dns_parse(out, len, &a), 0);
	assert_true(a.qr && a.ra && a.rd);
	assert_int_equal(a.id, q.id);
	assert_int_equal(a.rcode, DNS_RCODE_REFUSED);
	assert_string_equal(a.qname, "www.example.test");
	assert_int_equal(a.qtype, 1);
	assert_int_equal(a.ancount, 0);
	assert_true(a.edns);              /* EDNS echoed */
	assert_int_equal(a.edns_udp_size, 1232);
	assert_int_equal(dns_synth_answer(b.p, b.n, DNS_RCODE_NXDOMAIN, out, sizeof(out), &len), 0);
	assert_int_equal(dns_parse(out, len, &a), 0);
	assert_string_equal(dns_rcode_str(a.rcode), "NXDOMAIN");
	/* TCP form: the prefix is the length of the rest. */
	load("dns_dig_tcp.bin", &t);
	assert_int_equal(dns_synth_answer_tcp(t.p + 2, t.n - 2, DNS_RCODE_REFUSED, out,
					      sizeof(out), &len), 0);
	assert_int_equal((size_t)(out[0] << 8 | out[1]), len - 2);
	assert_int_equal(dns_parse(out + 2, len - 2, &a), 0);
	assert_string_equal(a.qname, "api.example.test");
	/* Not a query, too small, bad rcode, garbage. */
	assert_int_equal(dns_synth_answer(out + 2, len - 2, 5, out + 256, 256, &len), -EBADMSG);
	assert_int_equal(dns_synth_answer(b.p, b.n, 5, out, 10, &len), -ENOSPC);
	assert_int_equal(dns_synth_answer(b.p, b.n, 16, out, sizeof(out), &len), -EINVAL);
	assert_int_equal(dns_synth_answer(b.p, 5, 5, out, sizeof(out), &len), -EBADMSG);
}

static void test_normalize(void **state)
{
	const struct { const char *in; int ret; const char *out; } rows[] = {
		{ "Example.TEST.", 0, "example.test" },
		{ "b\xc3\xbc" "cher.example", 0, "xn--bcher-kva.example" },
		{ "XN--BCHER-KVA.example", 0, "xn--bcher-kva.example" },
		{ "fa\xc3\x9f.de", 0, "xn--fa-hia.de" },     /* non-transitional: ß kept */
		{ "_dmarc.example.test", 0, "_dmarc.example.test" },
		{ "xn--zz.test", -EINVAL, NULL },             /* bad punycode */
		{ "a..b", -EINVAL, NULL },
		{ ".", -EINVAL, NULL },
		{ "", -EINVAL, NULL },
		{ "a b.test", -EINVAL, NULL },
		{ "a\\032b.test", -EINVAL, NULL },
		{ "\xff\xfe.test", -EINVAL, NULL },
		{ "*.example.test", -EINVAL, NULL },
		{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.test", -EINVAL, NULL },
	};
	char out[DNS_NAME_MAX], longname[400];

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int r = dns_name_normalize(rows[i].in, out, sizeof(out));

		assert_int_equal(r, rows[i].ret);
		if (r == 0)
			assert_string_equal(out, rows[i].out);
	}
	for (size_t i = 0; i < sizeof(longname) - 1; i++)
		longname[i] = (i % 50 == 49) ? '.' : 'a';
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(dns_name_normalize(longname, out, sizeof(out)), -ENAMETOOLONG);
	assert_int_equal(dns_pattern_normalize("*.B\xc3\xbc" "cher.Example.", out, sizeof(out)), 0);
	assert_string_equal(out, "*.xn--bcher-kva.example");
	assert_int_equal(dns_pattern_normalize("a.*.test", out, sizeof(out)), -EINVAL);
	assert_int_equal(dns_pattern_normalize("*", out, sizeof(out)), -EINVAL);
}

static void test_match(void **state)
{
	const struct { const char *pat, *name; bool match; } rows[] = {
		{ "example.test", "example.test", true },
		{ "example.test", "EXAMPLE.test.", true },
		{ "example.test", "www.example.test", false },
		{ "example.test", "xexample.test", false },
		{ "*.example.test", "www.example.test", true },
		{ "*.example.test", "a.b.c.example.test", true },
		{ "*.example.test", "example.test", false },        /* not the apex */
		{ "*.example.test", "wwwexample.test", false },
		{ "*.example.test", "www.example.test.evil", false },
		{ "*.EXAMPLE.test", "Www.Example.Test", true },
		{ "*.", "a.test", false },
		{ "", "a.test", false },
		{ "a.test", "", false },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		assert_int_equal(dns_name_match(rows[i].pat, rows[i].name), rows[i].match);
	assert_false(dns_name_match(NULL, "a"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dig_queries),
		cmocka_unit_test(test_cname_chain),
		cmocka_unit_test(test_loops_and_caps),
		cmocka_unit_test(test_long_cname),
		cmocka_unit_test(test_hostile_wire),
		cmocka_unit_test(test_tcp_reassembly),
		cmocka_unit_test(test_synth),
		cmocka_unit_test(test_normalize),
		cmocka_unit_test(test_match),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
