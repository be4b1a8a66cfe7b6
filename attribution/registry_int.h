/* Internals shared by attribution/registry.c and attribution/persist.c. */
#ifndef SANDGATE_ATTRIBUTION_REGISTRY_INT_H
#define SANDGATE_ATTRIBUTION_REGISTRY_INT_H

#include "attribution/attribution.h"

struct session_reg {
	char *dir;                 /* STATE_DIR/sessions */
	struct session **v;
	size_t n, cap;
};

/* A zeroed session with the runtime fields at their "none" values, or NULL. */
struct session *session_alloc(void);

#endif
