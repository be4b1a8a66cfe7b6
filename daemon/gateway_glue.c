/* Placeholder until the gateway part is wired in. */
#include "daemon/daemon.h"

int daemon_gateway_init(struct daemon *d)
{
	(void)d;
	return 0;
}

void daemon_gateway_fini(struct daemon *d)
{
	(void)d;
}
