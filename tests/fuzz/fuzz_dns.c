/*
 * libFuzzer target for the DNS part: the input is parsed as one message, fed to
 * the TCP reassembler in two pieces, and used as a query for a synthesised
 * refusal; the first byte also drives name normalisation and matching.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dns/dns.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_tcp(const uint8_t *data, size_t size)
{
	struct dns_tcp *r = dns_tcp_new();
	static struct dns_msg m;
	const uint8_t *msg;
	size_t len, need, cut = size / 2;
	int ret;

	if (!r)
		return;
	if (dns_tcp_feed(r, data, cut) == 0 && dns_tcp_feed(r, data + cut, size - cut) == 0)
		while ((ret = dns_tcp_next(r, &msg, &len, &need)) != 0)
			if (ret == 1)
				(void)dns_parse(msg, len, &m);
	dns_tcp_free(r);
}

static void fuzz_names(const uint8_t *data, size_t size)
{
	char in[512], out[DNS_NAME_MAX], pat[DNS_NAME_MAX];
	size_t n = size < sizeof(in) - 1 ? size : sizeof(in) - 1;

	memcpy(in, data, n);
	in[n] = '\0';
	if (dns_name_normalize(in, out, sizeof(out)) == 0 &&
	    dns_pattern_normalize(in, pat, sizeof(pat)) == 0)
		(void)dns_name_match(pat, out);
	(void)dns_name_match(in, in);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct dns_msg m;
	uint8_t out[4096];
	size_t len;

	(void)dns_parse(data, size, &m);
	(void)dns_synth_answer(data, size, DNS_RCODE_REFUSED, out, sizeof(out), &len);
	fuzz_tcp(data, size);
	fuzz_names(data, size);
	return 0;
}
