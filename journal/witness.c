/*
 * The witness: every durable checkpoint note is also appended to a file in a directory
 * the sessions cannot reach (journal.witness_dir: another filesystem, a mount the
 * sandbox does not see, a network share). A journal rolled back with its state file
 * (segments and `checkpoints` cut, `state` restored) still chains and verifies by
 * itself; the witness keeps the signed checkpoints of what was cut. At open the journal
 * compares its own length with the witness's last checkpoint (signed with this key): a
 * witnessed size beyond the journal's end is a rollback, recorded as `journal.rollback`
 * by this run's first lines. `sandgate verify --witness DIR` (or --checkpoint FILE)
 * finds it offline at any later time, naming the missing range.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "journal/journal_impl.h"

void journal_witness_name(const char *origin, char *out, size_t len)
{
	size_t i, n = 0;

	/* The origin is "sandgate/<host>": one file name, whatever bytes it holds. */
	for (i = 0; origin[i] && n + 13 < len; i++) {
		char c = origin[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';

		out[n] = ok && !(n == 0 && c == '.') ? c : '_';
		n++;
	}
	snprintf(out + n, len - n, ".checkpoints");
}

/* Own key's verifier, to trust only notes this journal's key signed. */
static int own_verifier(const struct journal *j, struct note_verifier **v)
{
	char vkey[512];
	int ret = note_signer_vkey(j->signer, vkey, sizeof(vkey));

	return ret < 0 ? ret : note_verifier_parse(v, vkey);
}

/* The witness's last checkpoint against the journal as recovered. */
static int witness_check(struct journal *j)
{
	struct note_verifier *v = NULL;
	struct checkpoint cp;
	uint8_t root[MERKLE_HASH_LEN];
	char *note = NULL;
	int ret;

	ret = notes_read_last(j->witness_path, &note);
	if (ret || !note)
		return ret;
	ret = own_verifier(j, &v);
	memset(&cp, 0, sizeof(cp));
	if (ret == 0 && note_open_checkpoint(v, note, strlen(note), &cp) == NOTE_OK) {
		j->witness_size = cp.size;
		j->witness_journal_size = j->pos.size;
		if (cp.size > j->pos.size) {
			j->witness_rollback = true;
		} else if (cp.size == j->pos.size) {
			merkle_range_root(&j->pos.range, root);
			j->witness_rollback = memcmp(root, cp.root, MERKLE_HASH_LEN) != 0;
		}
	}
	note_verifier_free(v);
	free(note);
	return ret;
}

int witness_open(struct journal *j, char *err, size_t errlen)
{
	char name[256];
	struct stat wd, sd;
	int ret;

	if (!j->witness_dir)
		return 0;
	if (stat(j->witness_dir, &wd) < 0) {
		ret = -errno;
		snprintf(err, errlen, "journal.witness_dir %s: %s", j->witness_dir,
			 strerror(errno));
		return ret;
	}
	if (!S_ISDIR(wd.st_mode)) {
		snprintf(err, errlen, "journal.witness_dir %s: not a directory", j->witness_dir);
		return -ENOTDIR;
	}
	j->witness_same_fs = stat(j->state_dir, &sd) == 0 && sd.st_dev == wd.st_dev;
	journal_witness_name(j->origin, name, sizeof(name));
	snprintf(j->witness_path, sizeof(j->witness_path), "%s/%s", j->witness_dir, name);
	j->witness_fd = open(j->witness_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (j->witness_fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: cannot open: %s", j->witness_path, strerror(errno));
		return ret;
	}
	ret = witness_check(j);
	if (ret)
		snprintf(err, errlen, "%s: cannot read: %s", j->witness_path, strerror(-ret));
	return ret;
}

int witness_append(struct journal *j, const struct pending_cp *items, size_t n)
{
	struct buf b;
	int ret = 0;

	if (j->witness_fd < 0)
		return 0;
	buf_init(&b);
	for (size_t i = 0; i < n; i++) {
		buf_put(&b, items[i].note, items[i].note_len);
		buf_putc(&b, '\n');
	}
	if (b.oom)
		ret = -ENOMEM;
	else if (write(j->witness_fd, b.data, b.len) != (ssize_t)b.len)
		ret = errno ? -errno : -ENOSPC;
	if (ret == 0 && j->cfg.fsync != JOURNAL_FSYNC_NEVER && fdatasync(j->witness_fd) < 0)
		ret = -errno;
	buf_free(&b);
	return ret;
}

/* journal.rollback, among this run's first lines, when the witness saw more. */
int witness_report(struct journal *j)
{
	struct event *e;

	if (!j->witness_rollback)
		return 0;
	e = event_new("journal.rollback", NULL, EVENT_SRC_SANDGATE);
	if (e) {
		event_str(e, "why", j->witness_size > j->witness_journal_size
			  ? "the witness holds a signed checkpoint beyond the journal's end"
			  : "the witness's last signed checkpoint does not match the journal");
		event_str(e, "witness", j->witness_path);
		event_uint(e, "witnessed_size", j->witness_size);
		event_uint(e, "journal_size", j->witness_journal_size);
		if (j->witness_size > j->witness_journal_size) {
			event_uint(e, "missing_first", j->witness_journal_size);
			event_uint(e, "missing_last", j->witness_size - 1);
		} else {
			event_null(e, "missing_first");
			event_null(e, "missing_last");
		}
	}
	return writer_emit_sandgate(j, e);
}
