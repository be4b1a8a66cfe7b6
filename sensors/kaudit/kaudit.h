/*
 * The kernel audit exec source as the module (audit/audit.c) uses it: process.exec from
 * the audit subsystem's records, the connector's shadow (sensors/process/execpend.h)
 * catching what the records miss.
 */
#ifndef SANDGATE_SENSORS_KAUDIT_KAUDIT_H
#define SANDGATE_SENSORS_KAUDIT_KAUDIT_H

#include <stdbool.h>
#include <stddef.h>

struct audit;
struct auditsrc;

/*
 * Subscribes to the read-only multicast group, adds the execve rules (and enables
 * auditing, raises the backlog limit) remembering what to put back, starts its thread
 * (sensors/kaudit/auditsrc.c). 0 or -errno (nothing changed in the kernel then).
 * auditsrc_stop: joins, deletes exactly our rules, restores the enabled flag and backlog
 * limit. Accepts NULL.
 */
int auditsrc_start(struct auditsrc **out, struct audit *a);
void auditsrc_stop(struct auditsrc *s);

/* Whether the source can run here (sensors/kaudit/auditwatch.c; audit_exec_probe in
 * audit/audit.h says what is asked): "audit" or "proc_connector", why in why[len]. */
const char *auditsrc_probe(bool want_audit, char *why, size_t len);

/* Journals audit.exec_source {exec_source, why}: where process.exec comes from now
 * (sensors/kaudit/auditwatch.c). */
void audit_emit_exec_source(const char *src, const char *why);

#endif
