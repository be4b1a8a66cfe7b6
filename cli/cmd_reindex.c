/*
 * `sandgate reindex [--state-dir DIR]`: empties the query index and rebuilds it from the
 * journal's segments. Safe while the daemon runs: the index's cursor lives in the same
 * transactions as its rows, so the daemon's indexer simply continues from wherever the
 * rebuild has got to.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "index/index.h"

#define PROG "sandgate reindex"

static const char usage_text[] =
	"usage: sandgate reindex [--state-dir DIR]\n"
	"\n"
	"Rebuilds STATE_DIR/index/index.db from STATE_DIR/journal (default state dir\n"
	"/var/lib/sandgate), cold tier (STATE_DIR/cold) included. A corrupt index file is\n"
	"moved aside to index.db.corrupt.\n";

static int parse_args(int argc, char **argv, const char **state_dir, int *done)
{
	static const struct option opts[] = {
		{ "state-dir", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage_text, stdout);
			*done = 1;
			return 0;
		}
		if (c != 'D') {
			fprintf(stderr, PROG ": bad option (see --help)\n");
			return 2;
		}
		*state_dir = optarg;
	}
	if (optind != argc) {
		fprintf(stderr, PROG ": unexpected argument '%s' (see --help)\n", argv[optind]);
		return 2;
	}
	return 0;
}

/* Entry point for `sandgate reindex`; see cli/commands.h. */
int cmd_reindex(int argc, char **argv)
{
	const char *state_dir = "/var/lib/sandgate";
	struct index_db *db = NULL;
	bool moved = false;
	uint64_t n = 0, cold = 0;
	int done = 0, ret, rc = parse_args(argc, argv, &state_dir, &done);

	if (rc != 0 || done)
		return rc;
	ret = index_db_open(&db, state_dir, INDEX_WRITE_CHECK, &moved);
	if (ret == 0)
		ret = index_db_reset(db);
	if (ret == 0)
		ret = index_db_index_cold(db, &cold);
	if (ret == 0)
		ret = index_db_catch_up(db, &n);
	index_db_close(db);
	if (ret) {
		fprintf(stderr, PROG ": %s: %s\n", state_dir, strerror(-ret));
		return 1;
	}
	printf("indexed %llu lines (%llu of them cold)%s\n", (unsigned long long)(n + cold),
	       (unsigned long long)cold,
	       moved ? " (a corrupt index was moved to index/index.db.corrupt)" : "");
	return 0;
}
