/*
 * The FILE:LINE:COL error list every loader of a YAML or line-based file fills (the
 * config, detection rules, the DoH list). Loading is all or nothing: every error of a
 * file is collected here, in file order, and the caller reports them; nothing here logs.
 */
#ifndef SANDGATE_CONF_ERRORS_H
#define SANDGATE_CONF_ERRORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define CONFIG_MAX_FILE_BYTES (4u << 20)   /* larger files are refused (-EFBIG) */
#define CONFIG_MAX_ERRORS 200              /* errors kept; later ones only counted */

struct config_error {
	char *file;       /* the name given to the loader (path or buffer name) */
	unsigned line;    /* 1-based; 0 when the error is about the whole file */
	unsigned col;     /* 1-based; 0 when unknown */
	char *msg;        /* the message, without the location */
};

/*
 * Caller-owned list; start it zeroed (CONFIG_ERRORS_INIT) and pass it to any number of
 * loads; config_errors_free() empties it. Errors are kept in file order.
 */
struct config_errors {
	struct config_error *v;
	size_t n;
	size_t cap;
	size_t dropped;   /* errors beyond CONFIG_MAX_ERRORS: counted, not kept */
	bool oom;         /* an error could not be recorded for lack of memory */
};
#define CONFIG_ERRORS_INIT { NULL, 0, 0, 0, false }

/* Appends one error to e. Returns 0 or -ENOMEM (e->oom set). */
int config_errors_add(struct config_errors *e, const char *file, unsigned line,
		      unsigned col, const char *msg);

/* Number of errors kept in e (dropped ones not included). */
size_t config_errors_count(const struct config_errors *e);

/* The i-th error (0-based, file order), or NULL when i is out of range. */
const struct config_error *config_errors_at(const struct config_errors *e, size_t i);

/*
 * Formats one error as "FILE:LINE:COL: message" (":LINE:COL" left out when unknown) into
 * buf, always NUL-terminated. Returns the length snprintf would have produced.
 */
int config_error_format(const struct config_error *err, char *buf, size_t len);

/*
 * Writes every error, one "FILE:LINE:COL: message" per line, then a line counting the
 * dropped ones, if any. For `sandgated --check-config`. Returns 0 or -EIO.
 */
int config_errors_print(const struct config_errors *e, FILE *f);

/*
 * Puts the errors from index from on in line order (stable): parser errors (syntax,
 * duplicates) are found before schema errors of earlier lines.
 */
void config_errors_sort_from(struct config_errors *e, size_t from);

/* Frees every error and leaves e empty and reusable. Accepts NULL. */
void config_errors_free(struct config_errors *e);

#endif
