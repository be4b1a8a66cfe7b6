/*
 * The audit subsystem's control requests (NETLINK_AUDIT unicast) behind the audit exec
 * source (auditsrc.c). Not for use outside sensors/kaudit/.
 */
#ifndef SANDGATE_SENSORS_KAUDIT_AUDITNL_H
#define SANDGATE_SENSORS_KAUDIT_AUDITNL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/audit.h>

#define AUDITNL_KEY "sandgate"    /* the rules' key prefix: "sandgate-PID" per daemon */
#define AUDITNL_RULES 2           /* native arch, and i386 on x86_64 */

/* A bound NETLINK_AUDIT unicast socket (2 s receive timeout), or -errno. */
int auditnl_open(void);
/* AUDIT_GET into *st. 0 or -errno. */
int auditnl_status(int fd, struct audit_status *st);
/* AUDIT_SET of the fields in mask (AUDIT_STATUS_ENABLED, _BACKLOG_LIMIT). 0 or -errno. */
int auditnl_set(int fd, uint32_t mask, uint32_t enabled, uint32_t backlog_limit);
/*
 * Adds the execve/execveat rules (exit,always, per arch, key KEY: "sandgate-PID", this
 * daemon's own); added[i] says which are there now (one already there with this key
 * counts: ours). 0 or -errno (rules added before the failure stay flagged in added[]
 * for rules_del).
 */
int auditnl_rules_add(int fd, const char *key, bool *added, size_t n);
/* Deletes, by exact match, the rules flagged in added[]. 0 or the first -errno. */
int auditnl_rules_del(int fd, const char *key, const bool *added, size_t n);

#define AUDITNL_STALE_MAX 16

/* What the kernel's rule list holds (AUDIT_LIST_RULES). */
struct auditnl_scan {
	bool present[AUDITNL_RULES];  /* our rule i (same key, arch, exit,always, execve) */
	unsigned others;              /* rules of another live daemon ("sandgate-PID") */
	unsigned n_stale;             /* keys of daemons that are gone (killed: -9 leaves
				       * its rules), up to AUDITNL_STALE_MAX */
	char stale[AUDITNL_STALE_MAX][24];
};
/* Lists the rules. 0 or -errno. */
int auditnl_rules_scan(int fd, const char *key, struct auditnl_scan *sc);
/*
 * Deletes the exec rules of daemons that are gone: keys "sandgate-PID" whose PID no
 * process has (a daemon killed with -9 cannot delete its own). *reaped counts the keys.
 * 0 or -errno.
 */
int auditnl_rules_reap(int fd, const char *key, unsigned *reaped);
/* How many rules this machine needs (the arches). */
size_t auditnl_rules_count(void);

#endif
