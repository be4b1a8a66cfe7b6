/*
 * A tiny journal writer for tests and tools, built from merkle.h and note.h only, that
 * writes the bytes docs/journal-format.md fixes (envelope, chain, checkpoint lines,
 * `checkpoints` file, segments named by their first seq). Header-only so that a unit
 * test and a tool can share it without a CMake change. Not the product's writer.
 */
#ifndef SANDGATE_TESTS_FIXTURE_WRITER_H
#define SANDGATE_TESTS_FIXTURE_WRITER_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/buf.h"
#include "journal/merkle.h"
#include "journal/note.h"

struct fx {
	char dir[512];
	FILE *seg, *cps;
	const struct note_signer *signer;
	struct merkle_range range;
	uint8_t leaf[MERKLE_HASH_LEN];
	uint64_t seg_lines, seg_max, cp_every, since_cp;
	char last_note[NOTE_MAX_LEN];
	struct buf line;
};

/* Appends one line with the fixed envelope; body is ",\"k\":v..." or "". */
static inline int fx_line(struct fx *f, const char *event, const char *body)
{
	static const char zero[] = "0000000000000000000000000000000000000000000000000000000000000000";
	uint64_t seq = f->range.size;

	buf_reset(&f->line);
	buf_printf(&f->line, "{\"ts\":\"2026-06-29T10:%02u:%02u.%06uZ\",\"seq\":%llu,\"prev\":\"",
		   (unsigned)(seq / 60 % 60), (unsigned)(seq % 60), (unsigned)(seq % 1000000),
		   (unsigned long long)seq);
	if (seq == 0)
		buf_puts(&f->line, zero);
	else
		buf_put_hex(&f->line, f->leaf, MERKLE_HASH_LEN);
	buf_printf(&f->line, "\",\"event\":\"%s\",\"host\":\"h1\",\"session_id\":null,"
		   "\"source\":\"sandgate\"%s}", event, body);
	if (f->line.oom)
		return -ENOMEM;
	merkle_leaf_hash(f->line.data, f->line.len, f->leaf);
	if (merkle_range_append(&f->range, f->leaf) < 0 ||
	    fwrite(f->line.data, 1, f->line.len, f->seg) != f->line.len || fputc('\n', f->seg) < 0)
		return -EIO;
	f->seg_lines++;
	f->since_cp++;
	return 0;
}

/* Signs the tree as it is and writes the checkpoint line and the `checkpoints` note. */
static inline int fx_checkpoint(struct fx *f)
{
	struct checkpoint cp = { .size = f->range.size };
	char root[64];
	struct buf body;
	int n, ret;

	snprintf(cp.origin, sizeof(cp.origin), "sandgate/h1");
	merkle_range_root(&f->range, cp.root);
	n = note_sign_checkpoint(f->signer, &cp, f->last_note, sizeof(f->last_note));
	if (n < 0 || note_b64_encode(cp.root, MERKLE_HASH_LEN, root, sizeof(root)) < 0)
		return n < 0 ? n : -EIO;
	buf_init(&body);
	buf_printf(&body, ",\"size\":%llu,\"root\":\"%s\",\"note\":",
		   (unsigned long long)cp.size, root);
	buf_put_json_str(&body, f->last_note, (size_t)n);
	buf_putc(&body, '\0');   /* struct buf does not terminate */
	ret = body.oom ? -ENOMEM : fx_line(f, "journal.checkpoint", body.data);
	buf_free(&body);
	if (ret == 0 && fprintf(f->cps, "%s\n", f->last_note) < 0)
		ret = -EIO;
	f->since_cp = 0;
	return ret;
}

/* Starts the segment whose first line is the next seq, with its opening line. */
static inline int fx_new_segment(struct fx *f, const char *event)
{
	char path[600];
	struct buf body;
	int ret;

	snprintf(path, sizeof(path), "%s/%020llu.jsonl", f->dir,
		 (unsigned long long)f->range.size);
	if (f->seg && fclose(f->seg) != 0)
		return -EIO;
	f->seg = fopen(path, "we");
	if (!f->seg)
		return -errno;
	f->seg_lines = 0;
	buf_init(&body);
	buf_puts(&body, ",\"previous_checkpoint\":");
	if (f->last_note[0])
		buf_put_json_str(&body, f->last_note, strlen(f->last_note));
	else
		buf_puts(&body, "null");
	buf_putc(&body, '\0');
	ret = body.oom ? -ENOMEM : fx_line(f, event, body.data);
	buf_free(&body);
	return ret;
}

/* Opens a new journal in dir (which exists); rotates every seg_max lines. */
static inline int fx_open(struct fx *f, const char *dir, const struct note_signer *s,
			  uint64_t seg_max, uint64_t cp_every)
{
	char path[600];

	memset(f, 0, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "%s", dir);
	f->signer = s;
	f->seg_max = seg_max;
	f->cp_every = cp_every;
	merkle_range_init(&f->range);
	buf_init(&f->line);
	snprintf(path, sizeof(path), "%s/checkpoints", dir);
	f->cps = fopen(path, "we");
	if (!f->cps)
		return -errno;
	return fx_new_segment(f, "journal.open");
}

/* An event line, then a checkpoint or a rotation when they are due. */
static inline int fx_event(struct fx *f, const char *event, const char *body)
{
	int ret = fx_line(f, event, body);

	if (ret == 0 && f->since_cp >= f->cp_every)
		ret = fx_checkpoint(f);
	if (ret == 0 && f->seg_lines >= f->seg_max) {
		if (f->since_cp)
			ret = fx_checkpoint(f);
		if (ret == 0)
			ret = fx_new_segment(f, "journal.segment");
	}
	return ret;
}

/* Final checkpoint, then closes the files. */
static inline int fx_close(struct fx *f)
{
	int ret = f->since_cp ? fx_checkpoint(f) : 0;

	if (f->seg && fclose(f->seg) != 0 && ret == 0)
		ret = -EIO;
	if (f->cps && fclose(f->cps) != 0 && ret == 0)
		ret = -EIO;
	buf_free(&f->line);
	return ret;
}

#endif
