/* `sandgate query --format table`: a readable timeline, the process tree indented. */
#ifndef SANDGATE_CLI_QUERY_TABLE_H
#define SANDGATE_CLI_QUERY_TABLE_H

#include <stddef.h>
#include <stdio.h>

struct query_table;

/* Returns NULL when out of memory. */
struct query_table *query_table_new(FILE *out);

/*
 * Prints one journal line as a timeline row: time, session, event, then the fields an
 * investigator reads first. A line's depth in the process tree comes from the
 * process.exec rows printed before it (pid -> ppid). Returns 0 or -ENOMEM.
 */
int query_table_row(struct query_table *t, const char *line, size_t len);

/*
 * Records a process.exec line's place in the tree without printing it: the rows of a
 * session's exec tree learned before its timeline is printed let filtered rows keep
 * their depth. Returns 0 or -ENOMEM.
 */
int query_table_learn(struct query_table *t, const char *line, size_t len);

/* Frees t. Accepts NULL. */
void query_table_free(struct query_table *t);

#endif
