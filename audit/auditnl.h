/*
 * The audit subsystem's control requests (NETLINK_AUDIT unicast) behind the audit exec
 * source (audit/auditsrc.c). Not for use outside audit/.
 */
#ifndef SANDGATE_AUDIT_AUDITNL_H
#define SANDGATE_AUDIT_AUDITNL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/audit.h>

#define AUDITNL_KEY "sandgate"    /* the rules' key: `auditctl -l` shows it */
#define AUDITNL_RULES 2           /* native arch, and i386 on x86_64 */

/* A bound NETLINK_AUDIT unicast socket (2 s receive timeout), or -errno. */
int auditnl_open(void);
/* AUDIT_GET into *st. 0 or -errno. */
int auditnl_status(int fd, struct audit_status *st);
/* AUDIT_SET of the fields in mask (AUDIT_STATUS_ENABLED, _BACKLOG_LIMIT). 0 or -errno. */
int auditnl_set(int fd, uint32_t mask, uint32_t enabled, uint32_t backlog_limit);
/*
 * Adds the execve/execveat rules (exit,always, per arch, key AUDITNL_KEY); added[i] says
 * which were added by us (an identical rule already there is used, not owned). 0 or
 * -errno (rules added before the failure stay flagged in added[] for rules_del).
 */
int auditnl_rules_add(int fd, bool *added, size_t n);
/* Deletes, by exact match, the rules flagged in added[]. 0 or the first -errno. */
int auditnl_rules_del(int fd, const bool *added, size_t n);

#endif
