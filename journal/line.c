/* One journal line: the envelope in its fixed order (docs/journal-format.md), and the chain. */
#include <errno.h>
#include <string.h>

#include "common/hex.h"
#include "common/timeutil.h"
#include "journal/envelope.h"
#include "journal/journal_impl.h"
#include "journal/shape.h"

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

/* Where put_end wrote the envelope's values and the body, in b. */
struct end_at {
	size_t event, host, sid, source, body, end;
};

/* ","event":TYPE,"host":HOST,"session_id":SID,"source":"SRC"BODY}\n */
static void put_end(struct buf *b, const struct journal *j, const struct event *e,
		    struct end_at *at)
{
	buf_put(b, "\",\"event\":", 10);
	at->event = b->len;
	buf_put_json_str(b, e->type, strlen(e->type));
	if (j->host_json) {
		at->host = b->len + 8;    /* ,"host": */
		buf_puts(b, j->host_json);
	} else {                          /* a journal not opened (tests, bench_journal plain) */
		buf_put(b, ",\"host\":", 8);
		at->host = b->len;
		buf_put_json_str(b, j->host, strlen(j->host));
	}
	buf_put(b, ",\"session_id\":", 14);
	at->sid = b->len;
	if (e->session_id)
		buf_put_json_str(b, e->session_id, strlen(e->session_id));
	else
		buf_put(b, "null", 4);
	buf_put(b, ",\"source\":", 10);
	at->source = b->len;
	buf_putc(b, '"');
	buf_puts(b, event_source_str(e->source));
	buf_putc(b, '"');
	at->body = b->len;
	buf_put(b, e->body.data, e->body.len);
	at->end = b->len;
	buf_put(b, "}\n", 2);
}

void line_encode(struct buf *b, const struct journal *j, const struct event *e, uint64_t seq,
		 const uint8_t prev[MERKLE_HASH_LEN])
{
	char ts[RFC3339_LEN + 1];

	struct end_at at;

	time_format_rfc3339(&e->ts, ts);
	put_start(b, ts, seq, prev);
	put_end(b, j, e, &at);
}

/* An envelope value's token; raw_len: a string's bytes before encoding (journal/event.c
 * tok_end says why that tells an escape). */
static struct shape_tok env_tok(size_t at, size_t end, uint16_t key_len,
				enum shape_kind kind, size_t raw_len)
{
	struct shape_tok t = { .len = (uint32_t)(end - at), .key_len = key_len,
			       .kind = (uint8_t)kind };

	if (kind == SHAPE_STRING && end - at != raw_len + 2)
		t.kind |= SHAPE_ESC;
	return t;
}

/*
 * The line's shape after the frame: the envelope's four values, then the body's tokens
 * as the builder made them (tokens hold no position: journal/shape.h). Returns its
 * bytes; 0 when the event has none (its readers parse the line).
 */
static size_t put_shape(struct buf *b, const struct journal *j, const struct event *e,
			const struct end_at *at)
{
	struct shape_tok env[4];

	if (e->no_shape || e->depth != 0)
		return 0;
	env[0] = env_tok(at->event, at->host - 8, 5, SHAPE_STRING, strlen(e->type));
	env[1] = env_tok(at->host, at->sid - 14, 4, SHAPE_STRING, strlen(j->host));
	env[2] = env_tok(at->sid, at->source - 10, 10,
			 e->session_id ? SHAPE_STRING : SHAPE_NULL,
			 e->session_id ? strlen(e->session_id) : 0);
	env[3] = env_tok(at->source, at->body, 6, SHAPE_STRING,
			 strlen(event_source_str(e->source)));
	buf_put(b, env, sizeof(env));
	buf_put(b, e->tok, e->n_tok * sizeof(*e->tok));
	return sizeof(env) + e->n_tok * sizeof(*e->tok);
}

size_t line_frame(struct buf *b, const struct journal *j, const struct event *e, bool shape)
{
	char ts[RFC3339_LEN + 1];
	struct end_at at;

	time_format_rfc3339(&e->ts, ts);
	buf_put(b, ts, RFC3339_LEN);
	put_end(b, j, e, &at);
	return shape ? put_shape(b, j, e, &at) : 0;
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
