/*
 * Internal to the config loader (daemon/config*.c): the section readers config.c's
 * top-level table calls. Each moves to its part in the following commits.
 */
#ifndef SANDGATE_DAEMON_CONFIG_INT_H
#define SANDGATE_DAEMON_CONFIG_INT_H

#include "conf/conf.h"
#include "daemon/config.h"

#endif
