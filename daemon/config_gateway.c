/* Values the gateway derives from the config (daemon/config.h). */
#include "daemon/config.h"

unsigned config_cgroup_level(const struct sg_config *c)
{
	unsigned level = 2;

	/* ROOT/PARENT/ID, PARENT relative without empty parts (checked at load). */
	for (const char *p = c->cgroup.parent; p && *p; p++)
		level += *p == '/';
	return level;
}
