/*
 * sg_genjournal STATE_DIR N [--forever] [--checkpoint-events K] [--segment-bytes B]
 *               [--stall-buffer B]
 *
 * Writes N events through the real journal (keystore, writer, syncer, checkpoints) into
 * STATE_DIR, the way the daemon does, with field values that stress the encoder
 * (control bytes, invalid UTF-8, quotes). --forever keeps writing until killed: the
 * crash test kills it with SIGKILL mid-stream; SIGTERM closes it cleanly.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>

#include "journal/journal.h"
#include "journal/keystore.h"

static const char *const nasty[] = {
	"plain", "quote\" and \\ backslash", "ctl\x01\x02\x1f\x7f", "bad utf8 \xff\xfe\xc0\xaf",
	"ok utf8 \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", "new\nline\r\ttab", "",
};

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static int emit_one(uint64_t i)
{
	static const char *const types[] = { "process.exec", "file.write", "net.dns", "net.flow" };
	struct event *e = event_new(types[i % 4], i % 5 ? "sess-gen" : NULL,
				    i % 3 ? EVENT_SRC_KERNEL : EVENT_SRC_GATEWAY);

	if (!e)
		return -ENOMEM;
	event_uint(e, "pid", 1000 + i % 30000);
	event_str(e, "path", nasty[i % (sizeof(nasty) / sizeof(nasty[0]))]);
	event_array_begin(e, "args");
	event_str(e, NULL, "-c");
	event_uint(e, NULL, i);
	event_array_end(e);
	event_object_begin(e, "dst");
	event_str(e, "ip", "198.18.0.1");
	event_int(e, "port", 443);
	event_object_end(e);
	event_null(e, "signal");
	return event_emit(e);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "forever", no_argument, NULL, 'f' },
		{ "checkpoint-events", required_argument, NULL, 'k' },
		{ "segment-bytes", required_argument, NULL, 'b' },
		{ "stall-buffer", required_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 },
	};
	struct journal_settings js;
	struct note_signer *signer = NULL;
	struct journal *j = NULL;
	uint64_t n, i, cp = 1000, seg = 64ull << 20, stall = 64ull << 20;
	char err[1024];
	int c, forever = 0, ret;

	while ((c = getopt_long(argc, argv, "fk:b:S:", longopts, NULL)) != -1) {
		switch (c) {
		case 'f': forever = 1; break;
		case 'k': cp = strtoull(optarg, NULL, 10); break;
		case 'b': seg = strtoull(optarg, NULL, 10); break;
		case 'S': stall = strtoull(optarg, NULL, 10); break;
		default: return 2;
		}
	}
	if (argc - optind != 2) {
		fprintf(stderr, "usage: sg_genjournal STATE_DIR N [--forever] "
				"[--checkpoint-events K] [--segment-bytes B] [--stall-buffer B]\n");
		return 2;
	}
	n = strtoull(argv[optind + 1], NULL, 10);
	journal_settings_default(&js, argv[optind], "genhost");
	js.checkpoint_events = cp;
	js.segment_max_bytes = seg;
	js.stall_buffer_max = stall;
	ret = keystore_open(js.state_dir, "sandgate/genhost", &signer, err, sizeof(err));
	if (ret == 0)
		ret = journal_open(&j, &js, signer, err, sizeof(err));
	if (ret == 0 && (ret = journal_start(j)) != 0)
		snprintf(err, sizeof(err), "journal_start: %s", strerror(-ret));
	if (ret) {
		fprintf(stderr, "sg_genjournal: %s\n", err);
		return 1;
	}
	event_set_sink(journal_submit, j);
	signal(SIGTERM, on_term);
	for (i = 0; (forever || i < n) && ret == 0 && !stop; i++)
		ret = emit_one(i);
	event_set_sink(NULL, NULL);
	if (ret)
		fprintf(stderr, "sg_genjournal: emit: %s\n", strerror(-ret));
	ret = journal_close(j) || ret;
	return ret ? 1 : 0;
}
