/* The version string (common/version.h); CMakeLists.txt defines SANDGATE_VERSION_STR. */
#include "common/version.h"

#ifndef SANDGATE_VERSION_STR
#error "SANDGATE_VERSION_STR comes from CMakeLists.txt (project VERSION)"
#endif

const char *sandgate_version(void)
{
	return SANDGATE_VERSION_STR;
}
