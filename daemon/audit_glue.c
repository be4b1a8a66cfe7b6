/* Placeholder until the audit part is wired in. */
#include "daemon/daemon.h"

int daemon_audit_init(struct daemon *d)
{
	(void)d;
	return 0;
}

void daemon_audit_fini(struct daemon *d)
{
	(void)d;
}
