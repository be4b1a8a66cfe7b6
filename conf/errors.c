/*
 * The FILE:LINE:COL error list (conf/errors.h).
 */
#include "conf/errors.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int config_errors_add(struct config_errors *e, const char *file, unsigned line,
		      unsigned col, const char *msg)
{
	struct config_error *err;

	if (e->n >= CONFIG_MAX_ERRORS) {
		e->dropped++;
		return 0;
	}
	if (e->n == e->cap) {
		size_t cap = e->cap ? e->cap * 2 : 16;
		struct config_error *v = realloc(e->v, cap * sizeof(*v));

		if (!v)
			goto oom;
		e->v = v;
		e->cap = cap;
	}
	err = &e->v[e->n];
	err->file = strdup(file ? file : "(config)");
	err->msg = strdup(msg);
	err->line = line;
	err->col = col;
	if (!err->file || !err->msg) {
		free(err->file);
		free(err->msg);
		goto oom;
	}
	e->n++;
	return 0;
oom:
	e->oom = true;
	return -ENOMEM;
}

size_t config_errors_count(const struct config_errors *e)
{
	return e ? e->n : 0;
}

const struct config_error *config_errors_at(const struct config_errors *e, size_t i)
{
	return e && i < e->n ? &e->v[i] : NULL;
}

int config_error_format(const struct config_error *err, char *buf, size_t len)
{
	if (err->line && err->col)
		return snprintf(buf, len, "%s:%u:%u: %s", err->file, err->line, err->col, err->msg);
	if (err->line)
		return snprintf(buf, len, "%s:%u: %s", err->file, err->line, err->msg);
	return snprintf(buf, len, "%s: %s", err->file, err->msg);
}

int config_errors_print(const struct config_errors *e, FILE *f)
{
	char line[1024];

	for (size_t i = 0; i < config_errors_count(e); i++) {
		config_error_format(&e->v[i], line, sizeof(line));
		fprintf(f, "%s\n", line);
	}
	if (e && e->dropped)
		fprintf(f, "... and %zu more errors\n", e->dropped);
	if (e && e->oom)
		fprintf(f, "(some errors were lost: out of memory)\n");
	return ferror(f) ? -EIO : 0;
}

void config_errors_free(struct config_errors *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->n; i++) {
		free(e->v[i].file);
		free(e->v[i].msg);
	}
	free(e->v);
	*e = (struct config_errors)CONFIG_ERRORS_INIT;
}

/* Parser errors (syntax, duplicates) come before schema errors: put them in line order. */
void config_errors_sort_from(struct config_errors *e, size_t from)
{
	for (size_t i = from + 1; i < e->n; i++) {
		struct config_error x = e->v[i];
		size_t j = i;

		/* Insertion sort: stable, and n <= CONFIG_MAX_ERRORS. */
		while (j > from && (e->v[j - 1].line > x.line ||
				    (e->v[j - 1].line == x.line && e->v[j - 1].col > x.col))) {
			e->v[j] = e->v[j - 1];
			j--;
		}
		e->v[j] = x;
	}
}
