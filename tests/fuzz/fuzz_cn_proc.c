/* Proc connector datagrams as the kernel (or anyone able to forge one) sends them. */
#include <stddef.h>
#include <stdint.h>

#include "sensors/process/cnproc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cn_event ev[64];
	struct cn_seq *seq;
	size_t n = 0, bad = 0;
	int code, sig;

	(void)cn_decode(data, size, ev, 64, &n, &bad);
	if (cn_seq_new(&seq, 4) != 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		(void)cn_seq_feed(seq, ev[i].cpu, ev[i].seq);
		cn_exit_decode(ev[i].exit_code, &code, &sig);
	}
	cn_seq_free(seq);
	return 0;
}
