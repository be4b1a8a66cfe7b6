/* Control socket requests: bytes from a local client. */
#include <stdint.h>
#include <stdlib.h>

#include "daemon/control.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct control_request req;
	char err[256];

	if (control_parse_request((const char *)data, size, &req, err, sizeof(err)) == 0)
		control_request_free(&req);
	control_peer_in_session((const char *)data, size, "/sandgate");
	return 0;
}
