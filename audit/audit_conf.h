/*
 * The `audit:` section (audit/audit_conf.c; docs/config.md "audit"): which sensors run,
 * which filesystems fanotify marks, and which path prefixes have their reads logged.
 */
#ifndef SANDGATE_AUDIT_AUDIT_CONF_H
#define SANDGATE_AUDIT_AUDIT_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum sg_exec_source { SG_EXEC_PROC_CONNECTOR, SG_EXEC_AUDIT };

/* The audit sensors (audit/audit_conf.c; docs/config.md "audit"). */
struct sg_audit_config {
	bool enabled;                 /* default true */
	bool files;                   /* the fanotify sensor; default true */
	bool file_modify;             /* FAN_MODIFY too (writes to files held open); true */
	bool packages;                /* package.install (docs/packages.md); default true */
	enum sg_exec_source exec_source;  /* default audit (the connector as fallback) */
	uint64_t proc_rcvbuf;         /* proc connector SO_RCVBUF bytes; default 32 MiB */
	char **file_marks;            /* mount points marked (filesystem marks); ["/"] */
	size_t n_file_marks;
	char **sensitive_paths;       /* prefixes whose reads are logged; "~/x": any home */
	size_t n_sensitive_paths;
	bool file_mounts;             /* mark every writable filesystem, and new mounts; true */
	uint64_t read_repeat_ms;      /* repeated reads summed up this often; 60 s */
};

struct cfg_ctx;
struct cy_node;

/* Reads the `audit:` mapping v into a (conf/conf.h readers). 0, -EINVAL, -ENOMEM. */
int cfg_audit(struct cfg_ctx *ctx, const struct cy_node *v, struct sg_audit_config *a);
/* The defaults (every sensor on). 0 or -ENOMEM. */
int cfg_audit_default(struct sg_audit_config *a);
/* Frees the lists (the struct is left empty). */
void cfg_audit_free(struct sg_audit_config *a);

#endif
