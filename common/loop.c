#include "common/loop.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <unistd.h>

struct watch {
	int fd;
	loop_fd_fn fn;
	void *ctx;
	bool dead;
	struct watch *next;
};

struct loop {
	int epfd;
	bool stop;
	struct watch *watches;
	loop_hook_fn before_sleep;
	void *before_sleep_ctx;
};

int loop_new(struct loop **out)
{
	struct loop *l = calloc(1, sizeof(*l));

	if (!l)
		return -ENOMEM;
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l->epfd < 0) {
		int ret = -errno;

		free(l);
		return ret;
	}
	*out = l;
	return 0;
}

static void reap(struct loop *l)
{
	struct watch **pp = &l->watches, *w;

	while ((w = *pp)) {
		if (w->dead) {
			*pp = w->next;
			free(w);
		} else {
			pp = &w->next;
		}
	}
}

void loop_free(struct loop *l)
{
	struct watch *w;

	if (!l)
		return;
	for (w = l->watches; w; w = w->next)
		w->dead = true;
	reap(l);
	close(l->epfd);
	free(l);
}

int loop_add(struct loop *l, int fd, uint32_t events, loop_fd_fn fn, void *ctx)
{
	struct epoll_event ev = { .events = events };
	struct watch *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	w->fd = fd;
	w->fn = fn;
	w->ctx = ctx;
	ev.data.ptr = w;
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		int ret = -errno;

		free(w);
		return ret;
	}
	w->next = l->watches;
	l->watches = w;
	return 0;
}

/* Marked, not freed: an event for it may still sit in the array being dispatched. */
void loop_del(struct loop *l, int fd)
{
	struct watch *w;

	for (w = l->watches; w; w = w->next) {
		if (w->fd == fd && !w->dead) {
			epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
			w->dead = true;
			return;
		}
	}
}

void loop_set_before_sleep(struct loop *l, loop_hook_fn fn, void *ctx)
{
	l->before_sleep = fn;
	l->before_sleep_ctx = ctx;
}

int loop_run(struct loop *l)
{
	struct epoll_event evs[64];
	int n, i;

	l->stop = false;
	while (!l->stop) {
		if (l->before_sleep)
			l->before_sleep(l, l->before_sleep_ctx);
		n = epoll_wait(l->epfd, evs, 64, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (i = 0; i < n; i++) {
			struct watch *w = evs[i].data.ptr;

			if (!w->dead)
				w->fn(l, w->fd, evs[i].events, w->ctx);
		}
		reap(l);
	}
	return 0;
}

void loop_stop(struct loop *l)
{
	l->stop = true;
}

void loop_inotify_drain(int fd, void (*fn)(int wd, void *ctx), void *ctx)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event *ev;
	ssize_t n;
	char *p;

	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (p = buf; p < buf + n; p += sizeof(*ev) + ev->len) {
			ev = (const struct inotify_event *)p;
			fn(ev->wd, ctx);
		}
	}
}
