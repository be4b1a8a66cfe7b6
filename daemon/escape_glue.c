/*
 * Session escape watch (audit/escape.c) in the daemon's loop: a pass right after the
 * audit sensors were seeded (a restart: processes seeded into another session's cgroup
 * go back to their ancestry's session) and then once a second.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "audit/audit.h"
#include "common/log.h"
#include "daemon/daemon.h"

#define ESCAPE_PERIOD_MS 1000

struct escape_watch {
	struct audit_escape *esc;
	int timer_fd;
};

static void on_tick(struct loop *l, int fd, uint32_t events, void *ctx)
{
	struct daemon *d = ctx;
	uint64_t x;
	size_t n;

	(void)l;
	(void)events;
	if (read(fd, &x, sizeof(x)) != sizeof(x) || !d->audit)
		return;
	n = audit_escape_scan(d->audit, d->escape->esc);
	if (n)
		log_warnx("audit: %zu session process(es) outside their session's cgroup "
			  "(session.escape)", n);
}

int daemon_escape_init(struct daemon *d)
{
	struct itimerspec its = {
		.it_interval = { .tv_nsec = ESCAPE_PERIOD_MS * 1000000L },
		.it_value = { .tv_nsec = 1 },   /* the first pass at once */
	};
	struct escape_watch *w;
	int ret;

	if (!d->audit)
		return 0;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->timer_fd = -1;
	d->escape = w;
	ret = audit_escape_new(&w->esc);
	if (ret)
		return ret;
	w->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (w->timer_fd < 0)
		return -errno;
	if (ESCAPE_PERIOD_MS >= 1000) {
		its.it_interval.tv_sec = ESCAPE_PERIOD_MS / 1000;
		its.it_interval.tv_nsec = (ESCAPE_PERIOD_MS % 1000) * 1000000L;
	}
	if (timerfd_settime(w->timer_fd, 0, &its, NULL) < 0)
		return -errno;
	return loop_add(d->loop, w->timer_fd, EPOLLIN, on_tick, d);
}

void daemon_escape_fini(struct daemon *d)
{
	struct escape_watch *w = d->escape;

	if (!w)
		return;
	if (w->timer_fd >= 0) {
		if (d->loop)
			loop_del(d->loop, w->timer_fd);
		close(w->timer_fd);
	}
	audit_escape_free(w->esc);
	free(w);
	d->escape = NULL;
}
