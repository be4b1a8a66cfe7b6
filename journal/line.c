/* One journal line: the envelope in its fixed order (docs/journal-format.md), and the chain. */
#include <errno.h>
#include <string.h>

#include "common/hex.h"
#include "common/timeutil.h"
#include "journal/journal_impl.h"

void line_encode(struct buf *b, const struct journal *j, const struct event *e, uint64_t seq,
		 const uint8_t prev[MERKLE_HASH_LEN])
{
	char ts[RFC3339_LEN + 1];

	time_format_rfc3339(&e->ts, ts);
	buf_put(b, "{\"ts\":\"", 7);
	buf_put(b, ts, RFC3339_LEN);
	buf_put(b, "\",\"seq\":", 8);
	buf_put_u64(b, seq);
	buf_put(b, ",\"prev\":\"", 9);
	buf_put_hex(b, prev, MERKLE_HASH_LEN);
	buf_put(b, "\",\"event\":", 10);
	buf_put_json_str(b, e->type, strlen(e->type));
	buf_put(b, ",\"host\":", 8);
	buf_put_json_str(b, j->host, strlen(j->host));
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

int chain_append(struct chain_pos *pos, const char *line, size_t len)
{
	merkle_leaf_hash(line, len, pos->leaf);
	pos->size++;
	return merkle_range_append(&pos->range, pos->leaf);
}

/* The prefix is fixed: {"ts":"<27>","seq":N,"prev":"<64 hex>", ... */
bool line_chains(const struct chain_pos *pos, const char *line, size_t len)
{
	static const char head[] = "{\"ts\":\"";
	size_t i = sizeof(head) - 1 + RFC3339_LEN, k;
	uint64_t seq = 0;

	if (len < i + 80 || memcmp(line, head, sizeof(head) - 1) != 0)
		return false;
	if (memcmp(line + i, "\",\"seq\":", 8) != 0)
		return false;
	i += 8;
	for (k = 0; i < len && line[i] >= '0' && line[i] <= '9' && k < 20; i++, k++)
		seq = seq * 10 + (uint64_t)(line[i] - '0');
	if (k == 0 || seq != pos->size || len < i + 9 + 64 + 1)
		return false;
	if (memcmp(line + i, ",\"prev\":\"", 9) != 0)
		return false;
	i += 9;
	for (k = 0; k < MERKLE_HASH_LEN; k++) {
		int hi = hex_digit(line[i + 2 * k]), lo = hex_digit(line[i + 2 * k + 1]);

		if (hi < 0 || lo < 0 || (uint8_t)(hi << 4 | lo) != pos->leaf[k])
			return false;
	}
	return line[i + 64] == '"' && line[len - 1] == '}';
}
