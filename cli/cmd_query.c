/*
 * `sandgate query`: answers investigation questions from the index
 * (STATE_DIR/index/index.db) and prints the journal's own lines, byte for byte, or a
 * timeline. Reads the state dir directly: no daemon needed. Before answering it brings
 * the index up to date with the journal (the daemon's indexer and this one take turns).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/commands.h"
#include "cli/query_table.h"
#include "common/timeutil.h"
#include "index/index_query.h"

#define PROG "sandgate query"

static const char usage_text[] =
	"usage: sandgate query [--session ID] [--since T] [--until T] [--event TYPE[,TYPE]]\n"
	"                      [--path P] [--domain D] [--package NAME[@VERSION]]\n"
	"                      [--reason R] [--uid N] [--format jsonl|table]\n"
	"                      [--include-cold] [--state-dir DIR] [--no-update]\n"
	"\n"
	"Prints the journal lines matching every filter given, in seq order.\n"
	"  T            RFC 3339 (2026-06-29T10:04:00Z) or relative to now (-15m, -2h, -7d)\n"
	"  --path P     a path an event touched (path, new_path, exe, target); P* = prefix\n"
	"  --domain D   a name in qname, domain, sni or http_host (case-insensitive); D* = prefix\n"
	"  --uid N      uid or euid\n"
	"  --format     jsonl (default): the journal's own lines; table: a timeline\n"
	"  --include-cold  also lines of segments moved to the cold tier (slower)\n"
	"  --state-dir  default /var/lib/sandgate\n"
	"  --no-update  answer from the index as it is, without catching up first\n";

struct query_args {
	struct index_query q;
	const char *state_dir;
	bool table;
	bool no_update;
};

static int parse_time(const char *s, bool *has, int64_t *us)
{
	struct timespec now, t;

	clock_gettime(CLOCK_REALTIME, &now);
	if (time_parse(s, &now, &t) != 0) {
		fprintf(stderr, PROG ": bad time '%s' (RFC 3339 or -15m)\n", s);
		return 2;
	}
	*has = true;
	*us = (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
	return 0;
}

static int parse_uid(const char *s, struct index_query *q)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < 0) {
		fprintf(stderr, PROG ": bad --uid '%s'\n", s);
		return 2;
	}
	q->has_uid = true;
	q->uid = v;
	return 0;
}

static int parse_format(const char *s, struct query_args *a)
{
	if (strcmp(s, "table") == 0)
		a->table = true;
	else if (strcmp(s, "jsonl") != 0) {
		fprintf(stderr, PROG ": bad --format '%s' (jsonl or table)\n", s);
		return 2;
	}
	return 0;
}

static int one_opt(int c, char *arg, struct query_args *a)
{
	struct index_query *q = &a->q;

	switch (c) {
	case 's': q->session = arg; return 0;
	case 'S': return parse_time(arg, &q->has_since, &q->since_us);
	case 'U': return parse_time(arg, &q->has_until, &q->until_us);
	case 'p': q->path = arg; return 0;
	case 'd': q->domain = arg; return 0;
	case 'r': q->reason = arg; return 0;
	case 'u': return parse_uid(arg, q);
	case 'f': return parse_format(arg, a);
	case 'D': a->state_dir = arg; return 0;
	case 'n': a->no_update = true; return 0;
	case 'c': q->include_cold = true; return 0;
	case 'e':
		if (index_query_set_events(q, arg) == 0)
			return 0;
		fprintf(stderr, PROG ": bad --event list '%s'\n", arg);
		return 2;
	case 'k':
		if (index_query_set_package(q, arg) == 0)
			return 0;
		fprintf(stderr, PROG ": bad --package '%s' (NAME[@VERSION])\n", arg);
		return 2;
	default:
		fprintf(stderr, PROG ": bad option (see --help)\n");
		return 2;
	}
}

/* 0 to go on, else the exit status (help: 0 via *done). */
static int parse_args(int argc, char **argv, struct query_args *a, int *done)
{
	static const struct option opts[] = {
		{ "session", required_argument, NULL, 's' }, { "since", required_argument, NULL, 'S' },
		{ "until", required_argument, NULL, 'U' }, { "event", required_argument, NULL, 'e' },
		{ "path", required_argument, NULL, 'p' }, { "domain", required_argument, NULL, 'd' },
		{ "package", required_argument, NULL, 'k' }, { "reason", required_argument, NULL, 'r' },
		{ "uid", required_argument, NULL, 'u' }, { "format", required_argument, NULL, 'f' },
		{ "state-dir", required_argument, NULL, 'D' }, { "no-update", no_argument, NULL, 'n' },
		{ "include-cold", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	int c, rc;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage_text, stdout);
			*done = 1;
			return 0;
		}
		rc = one_opt(c, optarg, a);
		if (rc)
			return rc;
	}
	if (optind != argc) {
		fprintf(stderr, PROG ": unexpected argument '%s' (see --help)\n", argv[optind]);
		return 2;
	}
	return 0;
}

/* Brings the index up to date; a busy index (the daemon is at it) is fine as it is. */
static int update_index(const char *state_dir)
{
	struct index_db *db = NULL;
	uint64_t n;
	int ret = index_db_open(&db, state_dir, INDEX_WRITE, NULL);

	if (ret == 0)
		ret = index_db_catch_up(db, &n);
	index_db_close(db);
	if (ret == -EBUSY)
		ret = 0;
	if (ret)
		fprintf(stderr, PROG ": %s: cannot update the index: %s\n", state_dir,
			strerror(-ret));
	return ret ? 1 : 0;
}

struct printer {
	struct query_table *table;
};

static int print_line(void *ctx, uint64_t seq, const char *line, size_t len)
{
	struct printer *p = ctx;

	(void)seq;
	if (p->table)
		return query_table_row(p->table, line, len);
	if (fwrite(line, 1, len, stdout) != len || fputc('\n', stdout) == EOF)
		return -EIO;
	return 0;
}

static int learn_line(void *ctx, uint64_t seq, const char *line, size_t len)
{
	(void)seq;
	return query_table_learn(ctx, line, len);
}

/* For a session's timeline, its whole exec tree first: filtered rows keep their depth. */
static int learn_tree(struct index_db *db, const struct query_args *a, struct query_table *t)
{
	struct index_query q = { .session = a->q.session, .include_cold = a->q.include_cold };

	if (!a->q.session)
		return 0;
	q.events[q.n_events++] = "process.exec";
	return index_query_run(db, &q, learn_line, t);
}

static int run_query(const struct query_args *a)
{
	struct printer p = { NULL };
	struct index_db *db = NULL;
	int ret = index_db_open(&db, a->state_dir, INDEX_READ, NULL);

	if (ret == 0 && a->table && !(p.table = query_table_new(stdout)))
		ret = -ENOMEM;
	if (ret == 0 && p.table)
		ret = learn_tree(db, a, p.table);
	if (ret == 0)
		ret = index_query_run(db, &a->q, print_line, &p);
	query_table_free(p.table);
	index_db_close(db);
	if (fflush(stdout) != 0 && ret == 0)
		ret = -EIO;
	if (ret == -ESTALE || ret == -EPROTO)
		fprintf(stderr, PROG ": %s: the index does not match the journal; run "
			"sandgate reindex\n", a->state_dir);
	else if (ret)
		fprintf(stderr, PROG ": %s: %s\n", a->state_dir, strerror(-ret));
	return ret ? 1 : 0;
}

/* Entry point for `sandgate query`; see cli/commands.h. */
int cmd_query(int argc, char **argv)
{
	struct query_args a = { .state_dir = "/var/lib/sandgate" };
	int done = 0, rc = parse_args(argc, argv, &a, &done);

	if (rc != 0 || done)
		return rc;
	if (!a.no_update && (rc = update_index(a.state_dir)) != 0)
		return rc;
	return run_query(&a);
}
