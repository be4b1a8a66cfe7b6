/*
 * Where the daemon finds its shipped files. The build-time install paths
 * (sandgate_paths.h, generated from common/paths.h.in), unless the environment names
 * others: SANDGATE_DATA_DIR for the data files, SANDGATE_RULES_DIR for the built-in
 * detection rules. The tests and the demo set both to the source tree; an installed
 * daemon under systemd has neither, so it never reads the source tree.
 */
#ifndef SANDGATE_COMMON_PATHS_H
#define SANDGATE_COMMON_PATHS_H

#include "sandgate_paths.h"

/* The data directory (doh-endpoints.txt): $SANDGATE_DATA_DIR or SANDGATE_DATADIR. */
const char *sg_data_dir(void);

/* The built-in rules directory: $SANDGATE_RULES_DIR or SANDGATE_RULESDIR. */
const char *sg_rules_dir(void);

/*
 * Checks that the data and rules directories exist and are directories. Returns 0, or
 * -errno with the failing path in *which (one of the two strings above).
 */
int sg_paths_check(const char **which);

#endif
