/* One journal line: the envelope in its fixed order (docs/journal-format.md), and the chain. */
#include <errno.h>
#include <string.h>

#include "common/hex.h"
#include "common/timeutil.h"
#include "journal/envelope.h"
#include "journal/journal_impl.h"

/* {"ts":"TS","seq":SEQ,"prev":"HEX  (the prev's closing quote begins the end) */
static void put_start(struct buf *b, const char *ts, uint64_t seq,
		      const uint8_t prev[MERKLE_HASH_LEN])
{
	buf_put(b, "{\"ts\":\"", 7);
	buf_put(b, ts, RFC3339_LEN);
	buf_put(b, "\",\"seq\":", 8);
	buf_put_u64(b, seq);
	buf_put(b, ",\"prev\":\"", 9);
	buf_put_hex(b, prev, MERKLE_HASH_LEN);
}

/* ","event":TYPE,"host":HOST,"session_id":SID,"source":"SRC"BODY}\n */
static void put_end(struct buf *b, const struct journal *j, const struct event *e)
{
	buf_put(b, "\",\"event\":", 10);
	buf_put_json_str(b, e->type, strlen(e->type));
	if (j->host_json) {
		buf_puts(b, j->host_json);
	} else {                          /* a journal not opened (tests, bench_journal plain) */
		buf_put(b, ",\"host\":", 8);
		buf_put_json_str(b, j->host, strlen(j->host));
	}
	buf_put(b, ",\"session_id\":", 14);
	if (e->session_id)
		buf_put_json_str(b, e->session_id, strlen(e->session_id));
	else
		buf_put(b, "null", 4);
	buf_put(b, ",\"source\":\"", 11);
	buf_puts(b, event_source_str(e->source));
	buf_putc(b, '"');
	buf_put(b, e->body.data, e->body.len);
	buf_put(b, "}\n", 2);
}

void line_encode(struct buf *b, const struct journal *j, const struct event *e, uint64_t seq,
		 const uint8_t prev[MERKLE_HASH_LEN])
{
	char ts[RFC3339_LEN + 1];

	time_format_rfc3339(&e->ts, ts);
	put_start(b, ts, seq, prev);
	put_end(b, j, e);
}

void line_frame(struct buf *b, const struct journal *j, const struct event *e)
{
	char ts[RFC3339_LEN + 1];

	time_format_rfc3339(&e->ts, ts);
	buf_put(b, ts, RFC3339_LEN);
	put_end(b, j, e);
}

void line_encode_framed(struct buf *b, const char *frame, size_t len, uint64_t seq,
			const uint8_t prev[MERKLE_HASH_LEN])
{
	put_start(b, frame, seq, prev);
	buf_put(b, frame + RFC3339_LEN, len - RFC3339_LEN);
}

int chain_append(struct chain_pos *pos, const char *line, size_t len)
{
	merkle_leaf_hash(line, len, pos->leaf);
	pos->size++;
	return merkle_range_append(&pos->range, pos->leaf);
}

/* The line's envelope reads (journal/envelope.h), with this seq and prev, and it ends. */
bool line_chains(const struct chain_pos *pos, const char *line, size_t len)
{
	struct line_envelope env;
	uint8_t prev[MERKLE_HASH_LEN];

	return line_envelope_parse(line, len, &env) == 0 && env.seq == pos->size &&
	       hex_decode(env.prev, 2 * MERKLE_HASH_LEN, prev, sizeof(prev)) == 0 &&
	       memcmp(prev, pos->leaf, MERKLE_HASH_LEN) == 0 && line[len - 1] == '}';
}
