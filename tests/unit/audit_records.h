/*
 * The audit records captured on Linux 6.18 (tests/data/audit/execve.log), one line each,
 * for test_auditrec.c and test_auditjoin.c: load() and unload() are their group setup
 * and teardown. Header-only: each test program includes it once.
 */
#ifndef SANDGATE_TESTS_AUDIT_RECORDS_H
#define SANDGATE_TESTS_AUDIT_RECORDS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#define LINES_MAX 32

static char *lines[LINES_MAX];
static size_t nlines;

static int load(void **state)
{
	const char *dir = getenv("SANDGATE_TESTDATA");
	char path[1024], *line = NULL;
	size_t cap = 0;
	ssize_t got;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/audit/execve.log", dir ? dir : "tests/data");
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (nlines < LINES_MAX && (got = getline(&line, &cap, f)) > 0) {
		if (line[got - 1] == '\n')
			line[got - 1] = '\0';
		lines[nlines++] = strdup(line);
	}
	free(line);
	fclose(f);
	return nlines ? 0 : -1;
}

static int unload(void **state)
{
	(void)state;
	for (size_t i = 0; i < nlines; i++)
		free(lines[i]);
	return 0;
}

#endif
