/* Placeholder until the session registry lands (issue: Sessions). */
#include "daemon/daemon.h"

int daemon_sessions_init(struct daemon *d)
{
	(void)d;
	return 0;
}

void daemon_sessions_fini(struct daemon *d)
{
	(void)d;
}
