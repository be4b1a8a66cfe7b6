#include "common/paths.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

/* An empty variable counts as unset: a typo must not turn into "the current directory". */
static const char *env_or(const char *name, const char *dflt)
{
	const char *v = getenv(name);

	return v && v[0] ? v : dflt;
}

const char *sg_data_dir(void)
{
	return env_or("SANDGATE_DATA_DIR", SANDGATE_DATADIR);
}

const char *sg_rules_dir(void)
{
	return env_or("SANDGATE_RULES_DIR", SANDGATE_RULESDIR);
}

static int is_dir(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

int sg_paths_check(const char **which)
{
	int ret;

	*which = sg_data_dir();
	ret = is_dir(*which);
	if (ret == 0) {
		*which = sg_rules_dir();
		ret = is_dir(*which);
	}
	return ret;
}
