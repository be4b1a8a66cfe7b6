/*
 * libFuzzer target for the ClientHello parser: the input as a TCP stream prefix,
 * every 64th prefix of it (the NEED_MORE paths), and as a bare handshake message.
 */
#include <stddef.h>
#include <stdint.h>

#include "gateway/parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tls_hello h;
	size_t need;

	(void)tls_hello_parse(data, size, &h, &need);
	for (size_t i = 0; i < size; i += 64)
		(void)tls_hello_parse(data, i, &h, &need);
	(void)tls_hello_parse_handshake(data, size, &h, &need);
	return 0;
}
