/*
 * The kernel's share of the fanotify sensor's cost: a reader with sandgate's fanotify
 * flags and mask that reads and discards, so a workload timed under it pays only for the
 * events the kernel makes (allocation, file handles, merging, queueing) and for the way
 * they are read. Not sandgate: a floor to compare sandgate with.
 *
 *   bench_fanfloor MODE MODIFY MOUNT...
 *
 * MODE: "poll" (woken for every event, as a reader sleeping in poll/epoll is) or "napN"
 * (after an empty read, sleep N ms: what sensors/file/fanmon.c does once events flow).
 * MODIFY: "modify" adds FAN_MODIFY to the mask, "nomodify" leaves it out. Runs until
 * SIGINT or SIGTERM, then prints the events and reads seen on stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <time.h>
#include <unistd.h>

#ifndef FAN_RENAME
#define FAN_RENAME 0x10000000
#endif

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

static int usage(void)
{
	fprintf(stderr, "usage: bench_fanfloor poll|napN modify|nomodify MOUNT...\n");
	return 2;
}

/* Events in one read's buffer. */
static long count_events(const char *buf, size_t len)
{
	size_t off = 0;
	long n = 0;

	while (off + sizeof(struct fanotify_event_metadata) <= len) {
		const struct fanotify_event_metadata *m = (const void *)(buf + off);

		if (m->event_len < sizeof(*m))
			break;
		off += m->event_len;
		n++;
	}
	return n;
}

static void wait_more(int fd, int nap_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct timespec ts = { 0, (long)nap_ms * 1000000L };

	if (nap_ms >= 0)
		(void)nanosleep(&ts, NULL);
	else
		(void)poll(&p, 1, 200);
}

int main(int argc, char **argv)
{
	static char buf[1 << 16];
	uint64_t mask = FAN_CREATE | FAN_DELETE | FAN_RENAME | FAN_CLOSE_WRITE;
	long events = 0, reads = 0;
	int fd, nap_ms = -1;

	if (argc < 4)
		return usage();
	if (strncmp(argv[1], "nap", 3) == 0)
		nap_ms = atoi(argv[1] + 3);
	else if (strcmp(argv[1], "poll") != 0)
		return usage();
	if (strcmp(argv[2], "modify") == 0)
		mask |= FAN_MODIFY;
	else if (strcmp(argv[2], "nomodify") != 0)
		return usage();
	fd = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK |
			   FAN_REPORT_DFID_NAME_TARGET, O_RDONLY | O_LARGEFILE | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "bench_fanfloor: fanotify_init: %s\n", strerror(errno));
		return 1;
	}
	for (int i = 3; i < argc; i++)
		if (fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, mask, AT_FDCWD,
				  argv[i]) != 0) {
			fprintf(stderr, "bench_fanfloor: mark %s: %s\n", argv[i], strerror(errno));
			return 1;
		}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	while (!stopping) {
		ssize_t got = read(fd, buf, sizeof(buf));

		if (got > 0) {
			reads++;
			events += count_events(buf, (size_t)got);
		} else if (got < 0 && errno != EAGAIN && errno != EINTR) {
			fprintf(stderr, "bench_fanfloor: read: %s\n", strerror(errno));
			return 1;
		} else {
			wait_more(fd, nap_ms);
		}
	}
	fprintf(stderr, "events %ld reads %ld\n", events, reads);
	return 0;
}
