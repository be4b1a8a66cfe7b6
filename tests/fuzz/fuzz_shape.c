/*
 * A line's shape (journal/shape.h) says what its JSON says. The input drives the event
 * builder (any field bytes, keys repeated, the envelope's keys again in the body,
 * nesting, numbers at their limits); the line is framed and written as the journal does;
 * then its readers' two ways must agree: shape_to_json against line_json_load (equal,
 * key order included), index_scan_shaped against index_scan, and the handoff gives the
 * shape back for that line and for no other bytes. tests/unit/test_shape.c runs this
 * body over seeded random inputs too.
 */
#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "index/index_scan.h"
#include "journal/envelope.h"
#include "journal/event.h"
#include "journal/handoff.h"
#include "journal/journal_impl.h"
#include "journal/merkle.h"
#include "journal/shape.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const shape_keys[] = {
	"path", "sni", "uid", "pid", "qname", "name", "exe", "x",
	"session_id", "event", "source", "host", "ts", "seq", "prev",
};
#define N_SHAPE_KEYS (sizeof(shape_keys) / sizeof(shape_keys[0]))

struct input {
	const uint8_t *p;
	size_t n;
};

static uint8_t take8(struct input *in)
{
	uint8_t v = 0;

	if (in->n) {
		v = *in->p++;
		in->n--;
	}
	return v;
}

static uint64_t take64(struct input *in)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | take8(in);
	return v;
}

/* Builds an event from the input; *open tracks containers (1 object, 2 array). */
static struct event *build(struct input *in)
{
	static const char *const types[] = { "file.write", "net.dns", "a\"b\\c", "process.exec" };
	char sid[70];
	uint8_t sel = take8(in), open[EVENT_MAX_DEPTH];
	int depth = 0;
	struct event *e;

	if (sel & 4) {
		size_t n = take8(in) % sizeof(sid);

		for (size_t i = 0; i < n; i++)
			sid[i] = (char)(take8(in) | 1);   /* a C string: no NUL inside */
		sid[n] = '\0';
	}
	e = event_new(types[sel % 4], (sel & 4) ? sid : NULL, (enum event_source)(sel >> 4 & 3));
	if (!e)
		abort();
	for (int ops = 0; in->n && ops < 200; ops++) {
		uint8_t op = take8(in);
		const char *key = depth && open[depth - 1] == 2 ? NULL
				  : shape_keys[take8(in) % N_SHAPE_KEYS];
		char val[64];
		size_t n;
		double d;
		uint64_t u;

		switch (op % 12) {
		case 0:
		case 11:
			n = take8(in) % sizeof(val);
			for (size_t i = 0; i < n; i++)
				val[i] = (char)take8(in);
			event_strn(e, key, val, n);
			break;
		case 1:
			event_str(e, key, NULL);
			break;
		case 2:
			event_int(e, key, (int64_t)take64(in));
			break;
		case 3:
			u = take64(in);
			event_uint(e, key, op & 0x80 ? u : u >> 1);
			break;
		case 4:
			event_bool(e, key, op & 0x10);
			break;
		case 5:
			event_null(e, key);
			break;
		case 6:
			u = take64(in);
			memcpy(&d, &u, sizeof(d));
			event_double(e, key, op & 0x10 ? d : (double)(int64_t)u / 1000.0);
			break;
		case 7:
		case 8:
			if (depth >= 6)
				break;
			if (op % 12 == 7)
				event_object_begin(e, key);
			else
				event_array_begin(e, key);
			open[depth++] = op % 12 == 7 ? 1 : 2;
			break;
		case 9:
			if (!depth)
				break;
			if (open[--depth] == 1)
				event_object_end(e);
			else
				event_array_end(e);
			break;
		case 10:
			if (op & 0x80)
				event_raw(e, key, "{\"a\":[1,2]}");
			break;
		}
	}
	while (depth)
		if (open[--depth] == 1)
			event_object_end(e);
		else
			event_array_end(e);
	return e;
}

/* The same values: strings at the same place and decoding the same (the shape may
 * flag an escape the text does not have: a replaced invalid byte, decoded as is). */
static void same_vals(const char *line, const struct scan_val *a, const struct scan_val *b)
{
	for (size_t k = 0; k < N_SHAPE_KEYS; k++) {
		if (a[k].kind != b[k].kind)
			abort();
		if (a[k].kind == SCAN_STRING) {
			char *da = malloc(a[k].end - a[k].at + 1), *db = malloc(b[k].end - b[k].at + 1);
			size_t na, nb;

			if (!da || !db || a[k].at != b[k].at || a[k].end != b[k].end ||
			    (a[k].esc && !b[k].esc))
				abort();
			na = index_scan_decode(line, &a[k], da);
			nb = index_scan_decode(line, &b[k], db);
			if (na != nb || memcmp(da, db, na) != 0)
				abort();
			free(da);
			free(db);
		}
		if (a[k].kind == SCAN_INT && a[k].i != b[k].i)
			abort();
	}
}

/* A line through the handoff as the journal passes it: its tokens claimed by the
 * producer that queues it, its slot put by the writer once chained. */
static void handoff_line(struct handoff *h, uint64_t seq, const uint8_t *leaf, size_t len,
			 const void *tok, size_t n)
{
	uint64_t from;

	if (handoff_claim(h, tok, n, &from))
		handoff_put(h, seq, leaf, len, from, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct handoff *h;
	static uint64_t seq;
	struct input in = { data, size };
	struct journal j;
	struct buf frame, line, host;
	struct event *e;
	struct shape s = { 0 };
	struct scan_val scanned[N_SHAPE_KEYS], shaped[N_SHAPE_KEYS];
	uint8_t prev[MERKLE_HASH_LEN], leaf[MERKLE_HASH_LEN];
	size_t shape_len, frame_len;
	json_t *parsed = NULL, *built = NULL;
	char *d1, *d2;
	struct line_envelope env;

	if (!h && !(h = handoff_new(1 << 16)))
		abort();
	memset(&j, 0, sizeof(j));
	memset(prev, take8(&in), sizeof(prev));
	j.host = "h\x01st\"";
	buf_init(&host);
	if (take8(&in) & 1) {                 /* as an opened journal frames it */
		buf_put(&host, ",\"host\":", 8);
		buf_put_json_str(&host, j.host, strlen(j.host));
		buf_putc(&host, '\0');
		j.host_json = host.data;
	}
	e = build(&in);
	buf_init(&frame);
	buf_init(&line);
	shape_len = line_frame(&frame, &j, e, true);
	if (e->bad || e->depth)
		shape_len = 0;                    /* event_emit refuses these */
	event_free(e);
	frame_len = frame.len - shape_len;
	line_encode_framed(&line, frame.data, frame_len, seq, prev);
	if (frame.oom || line.oom)
		abort();
	line.len--;                           /* the '\n' */
	/* A type the envelope reader refuses ('\\' in it): both ways refuse the line. */
	if (shape_len && line_envelope_parse(line.data, line.len, &env) != 0) {
		if (index_scan_shaped(line.data, line.len, &s, shape_keys, N_SHAPE_KEYS,
				      shaped) != -EINVAL)
			abort();
		shape_len = 0;
	}
	if (shape_len) {
		s.n = s.cap = shape_len / sizeof(struct shape_tok);
		s.tok = malloc(shape_len ? shape_len : 1);
		if (!s.tok)
			abort();
		memcpy(s.tok, frame.data + frame_len, shape_len);
		/* What every reader gets by parsing, it gets from the shape. */
		if (line_json_load(line.data, line.len, &parsed) != 0 ||
		    shape_to_json(line.data, line.len, &s, &built) != 0 ||
		    !json_equal(parsed, built))
			abort();
		d1 = json_dumps(parsed, JSON_COMPACT | JSON_ALLOW_NUL);
		d2 = json_dumps(built, JSON_COMPACT | JSON_ALLOW_NUL);
		if (!d1 || !d2 || strcmp(d1, d2) != 0)
			abort();
		free(d1);
		free(d2);
		if (index_scan(line.data, line.len, shape_keys, N_SHAPE_KEYS, scanned) != 0 ||
		    index_scan_shaped(line.data, line.len, &s, shape_keys, N_SHAPE_KEYS,
				      shaped) != 0)
			abort();
		same_vals(line.data, scanned, shaped);
		/* The handoff: the shape for these bytes, none for others. */
		merkle_leaf_hash(line.data, line.len, leaf);
		handoff_line(h, seq, leaf, line.len, frame.data + frame_len, s.n);
		{
			struct shape got = { 0 };

			if (!handoff_get(h, seq, line.data, line.len, &got) || got.n != s.n ||
			    memcmp(got.tok, s.tok, shape_len) != 0)
				abort();
			line.data[line.len / 2] ^= 1;
			if (handoff_get(h, seq, line.data, line.len, &got) ||
			    handoff_get(h, seq + 1, line.data, line.len, &got))
				abort();
			shape_free(&got);
		}
	}
	seq++;
	json_decref(parsed);
	json_decref(built);
	free(s.tok);
	buf_free(&frame);
	buf_free(&line);
	buf_free(&host);
	return 0;
}
