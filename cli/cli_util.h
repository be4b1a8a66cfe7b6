/* Small helpers shared by the session, run, tool and detail subcommands. */
#ifndef SANDGATE_CLI_CLI_UTIL_H
#define SANDGATE_CLI_CLI_UTIL_H

#include <jansson.h>
#include <stdint.h>

/*
 * Parses a byte count with an optional K, M, G or T suffix (powers of 1024; "KiB",
 * "MB" and friends accepted). Returns 0 or -EINVAL.
 */
int cli_parse_size(const char *s, int64_t *out);
/* Parses a non-negative decimal integer. Returns 0 or -EINVAL. */
int cli_parse_uint(const char *s, int64_t *out);

/*
 * Calls verb with args (borrowed) on the socket and prints the result as one line of
 * compact JSON on stdout. Returns the exit status: 0, or 1 with "sandgate WHAT: error"
 * on stderr.
 */
int cli_call_print(const char *what, const char *control, const char *verb, json_t *args,
		   const char *actor);

#endif
