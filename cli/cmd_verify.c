/*
 * `sandgate verify [--checkpoint FILE] [--key PUBKEY] DIR`: checks a journal offline
 * (docs/journal-format.md, "Verification"). Exit 0 only when everything verifies,
 * 1 on damage or when the journal cannot be read, 2 on a usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/verify_cold.h"
#include "journal/journal.h"
#include "journal/note.h"
#include "verify/verify.h"

#define PROG "sandgate verify"

static const char usage_text[] =
	"usage: sandgate verify [--checkpoint FILE] [--witness DIR] [--key PUBKEY] DIR\n"
	"\n"
	"Checks a journal: every line's envelope, the seq sequence, the prev chain, the\n"
	"Merkle tree and every checkpoint (in the journal, in journal/checkpoints and the\n"
	"one given) against the key. Exits 0 only if nothing was modified, deleted,\n"
	"reordered, truncated or re-signed; otherwise names the first bad seq and the kind.\n"
	"\n"
	"  DIR                the state directory (holding journal/) or the journal itself\n"
	"  --key PUBKEY       verifier key file (one line, signed-note vkey form); default\n"
	"                     STATE/keys/journal.pub, which lies beside the journal and so\n"
	"                     only proves consistency: pin a key held elsewhere\n"
	"  --checkpoint FILE  a checkpoint note obtained earlier (e.g. from a sink); proves\n"
	"                     the journal was not cut off before it\n"
	"  --witness WDIR     the journal.witness_dir the daemon appends every checkpoint\n"
	"                     to (its file for this key's origin): a journal cut back\n"
	"                     below a witnessed checkpoint fails (rolled_back or\n"
	"                     truncated), naming the witnessed seqs that are missing\n"
	"  -h, --help         this text\n";

struct verify_args {
	const char *key;
	const char *checkpoint;
	const char *witness;
	const char *dir;
};

static int is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* 0 to go on, else the exit status (help: 0 via *done). */
static int parse_args(int argc, char **argv, struct verify_args *a, int *done)
{
	static const struct option opts[] = {
		{ "key", required_argument, NULL, 'k' },
		{ "checkpoint", required_argument, NULL, 'c' },
		{ "witness", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+hk:c:w:", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage_text, stdout);
			*done = 1;
			return 0;
		}
		if (c == 'k')
			a->key = optarg;
		else if (c == 'c')
			a->checkpoint = optarg;
		else if (c == 'w')
			a->witness = optarg;
		else {
			fprintf(stderr, PROG ": bad option %s (see --help)\n",
				argv[optind - 1] ? argv[optind - 1] : "");
			return 2;
		}
	}
	if (argc - optind != 1) {
		fprintf(stderr, PROG ": expected one DIR (see --help)\n");
		return 2;
	}
	a->dir = argv[optind];
	return 0;
}

/* Finds the journal and the default key path from DIR. 0 or the exit status. */
static int resolve_dirs(const struct verify_args *a, char *journal, char *keypath)
{
	char sub[PATH_MAX], state[PATH_MAX];
	char *slash;

	if (snprintf(sub, sizeof(sub), "%s/journal", a->dir) >= (int)sizeof(sub))
		goto toolong;
	if (!is_dir(a->dir)) {
		fprintf(stderr, PROG ": %s: not a directory\n", a->dir);
		return 2;
	}
	if (a->checkpoint && access(a->checkpoint, R_OK) < 0) {
		fprintf(stderr, PROG ": %s: %s\n", a->checkpoint, strerror(errno));
		return 2;
	}
	if (is_dir(sub)) {
		snprintf(journal, PATH_MAX, "%s", sub);
		snprintf(state, sizeof(state), "%s", a->dir);
	} else {
		snprintf(journal, PATH_MAX, "%s", a->dir);
		snprintf(state, sizeof(state), "%s", a->dir);
		while (strlen(state) > 1 && state[strlen(state) - 1] == '/')
			state[strlen(state) - 1] = '\0';
		slash = strrchr(state, '/');
		if (slash)
			*(slash == state ? slash + 1 : slash) = '\0';
		else
			snprintf(state, sizeof(state), ".");
	}
	if (snprintf(keypath, PATH_MAX, "%s/keys/journal.pub", state) >= PATH_MAX)
		goto toolong;
	return 0;
toolong:
	fprintf(stderr, PROG ": %s: path too long\n", a->dir);
	return 2;
}

static int load_key(const struct verify_args *a, const char *def, struct note_verifier **v)
{
	const char *path = a->key ? a->key : def;
	int ret;

	if (!a->key)
		fprintf(stderr, PROG ": no --key given: trusting the key found beside the "
			"journal, %s\n", def);
	ret = note_verifier_load(v, path);
	if (ret < 0) {
		fprintf(stderr, PROG ": %s: %s\n", path,
			ret == -EINVAL ? "not a verifier key" : strerror(-ret));
		return a->key ? 2 : 1;
	}
	return 0;
}

/* After retention purged segments: what was verified, and what was bridged. */
static void report_purged(const struct verify_result *res)
{
	printf("verified: seq %llu..%llu except %llu purged seqs in %zu range(s):",
	       (unsigned long long)res->first_seq, (unsigned long long)res->last_seq,
	       (unsigned long long)res->purged_lines, res->n_gaps);
	for (size_t i = 0; i < res->n_gaps && i < VERIFY_GAPS_MAX; i++)
		printf(" %llu..%llu", (unsigned long long)res->gaps[i].first,
		       (unsigned long long)res->gaps[i].last);
	printf("%s\n", res->n_gaps > VERIFY_GAPS_MAX ? " ..." : "");
	printf("purged ranges are bridged by their tombstones' Merkle state, confirmed by the "
	       "signed checkpoints after them\n");
}

static int report(const char *journal, int ret, const struct verify_result *res)
{
	if (ret < 0) {
		fprintf(stderr, PROG ": %s: %s\n", journal, strerror(-ret));
		return 1;
	}
	if (!res->ok) {
		fprintf(stderr, PROG ": seq %llu: %s: %s\n", (unsigned long long)res->bad_seq,
			verify_kind_str(res->kind), res->message);
		return 1;
	}
	printf("ok: %llu lines, %llu checkpoints, last seq %llu\n",
	       (unsigned long long)res->lines, (unsigned long long)res->checkpoints,
	       (unsigned long long)res->last_seq);
	if (res->witnessed)
		printf("witnessed: %llu checkpoints held elsewhere match (up to size %llu)\n",
		       (unsigned long long)res->witnessed, (unsigned long long)res->witnessed_max);
	if (res->n_gaps)
		report_purged(res);
	return 0;
}

/* --witness WDIR: the witness file of the key's origin in WDIR. 0 or the exit status. */
static int witness_file(const struct verify_args *a, const struct note_verifier *v,
			char *out)
{
	char name[256];

	if (!a->witness)
		return 0;
	journal_witness_name(note_verifier_name(v), name, sizeof(name));
	if (snprintf(out, PATH_MAX, "%s/%s", a->witness, name) >= PATH_MAX) {
		fprintf(stderr, PROG ": %s: path too long\n", a->witness);
		return 2;
	}
	if (access(out, R_OK) < 0) {
		fprintf(stderr, PROG ": %s: %s\n", out, strerror(errno));
		return 2;
	}
	return 0;
}

/* Entry point for `sandgate verify`; see cli/commands.h. */
int cmd_verify(int argc, char **argv)
{
	struct verify_args a = { 0 };
	char journal[PATH_MAX], keypath[PATH_MAX], wfile[PATH_MAX], tmp[64] = "";
	struct note_verifier *v = NULL;
	struct verify_result res;
	struct verify_opts o = { 0 };
	struct verify_purged *purged = NULL;
	size_t n_purged = 0;
	int done = 0, rc, ret;

	rc = parse_args(argc, argv, &a, &done);
	if (rc != 0 || done)
		return rc;
	rc = resolve_dirs(&a, journal, keypath);
	if (rc == 0)
		rc = load_key(&a, keypath, &v);
	if (rc == 0)
		rc = verify_cold_prepare(journal, tmp, sizeof(tmp), &purged, &n_purged);
	if (rc != 0) {
		note_verifier_free(v);
		verify_cold_cleanup(tmp);
		return rc;
	}
	o.purged = purged;
	o.n_purged = n_purged;
	o.journal_dir = journal;
	o.key = v;
	o.checkpoint_file = a.checkpoint;
	rc = witness_file(&a, v, wfile);
	if (rc != 0) {
		free(purged);
		note_verifier_free(v);
		verify_cold_cleanup(tmp);
		return rc;
	}
	o.witness_file = a.witness ? wfile : NULL;
	ret = verify_journal(&o, &res);
	rc = report(journal, ret, &res);
	free(purged);
	note_verifier_free(v);
	verify_cold_cleanup(tmp);
	return rc;
}
