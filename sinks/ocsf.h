/*
 * OCSF 1.8 rendering of journal lines, for sinks with `format: ocsf` (the mapping is in
 * docs/ocsf.md). Each line becomes one OCSF event of the class its type maps to; the
 * contract fields without an OCSF home go under `unmapped`, and the native line itself
 * rides in `raw_data`, so a SIEM can still check the hash chain.
 */
#ifndef SANDGATE_SINKS_OCSF_H
#define SANDGATE_SINKS_OCSF_H

#include <stddef.h>

#include "common/buf.h"

/*
 * Appends the OCSF JSON object (one line, no '\n') for one journal line to out. Pure.
 * Returns 0, -EINVAL when the line is not a journal line (no envelope, not an object),
 * -ENOMEM.
 */
int ocsf_render(struct buf *out, const char *line, size_t len);

/* The OCSF class_uid a journal event type maps to (0: Base Event). */
int ocsf_class_of(const char *event);

#endif
