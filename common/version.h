/* sandgate's version: CMake's project(VERSION), compiled into common/version.c alone. */
#ifndef SANDGATE_COMMON_VERSION_H
#define SANDGATE_COMMON_VERSION_H

/* Returns the version string ("0.1.0"), static storage. */
const char *sandgate_version(void);

#endif
