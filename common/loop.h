/*
 * A small epoll loop in the style of Redis's ae.c: file events with a callback and an
 * untyped context, deletion safe from inside a callback, and a before-sleep hook for
 * work batched once per iteration. Signals and timers come in as fds (signalfd,
 * timerfd), so the loop has one kind of event. The daemon's main thread runs one; each
 * sensor thread runs its own through common/thread.h. A loop belongs to one thread.
 */
#ifndef SANDGATE_COMMON_LOOP_H
#define SANDGATE_COMMON_LOOP_H

#include <stdbool.h>
#include <stdint.h>

struct loop;
typedef void (*loop_fd_fn)(struct loop *l, int fd, uint32_t events, void *ctx);
typedef void (*loop_hook_fn)(struct loop *l, void *ctx);

/* Returns 0 or -errno. */
int loop_new(struct loop **out);
void loop_free(struct loop *l);

/* Watches fd for events (EPOLLIN...). One registration per fd. Returns 0 or -errno. */
int loop_add(struct loop *l, int fd, uint32_t events, loop_fd_fn fn, void *ctx);
/* Stops watching fd; safe inside any callback. Does not close fd. */
void loop_del(struct loop *l, int fd);
void loop_set_before_sleep(struct loop *l, loop_hook_fn fn, void *ctx);
/*
 * Work done a slice at a time while no fd is ready: while fn last returned true the
 * loop polls instead of sleeping and calls fn whenever a poll finds nothing. Setting it
 * (again) arms it; fn returning false disarms it. NULL removes it.
 */
void loop_set_idle(struct loop *l, bool (*fn)(void *ctx), void *ctx);

/* Dispatches until loop_stop(). Returns 0, or -errno if epoll_wait fails. */
int loop_run(struct loop *l);
/*
 * One wait of at most timeout_ms (-1: no limit) and the dispatch of what it found, for
 * a thread that waits between steps of its own. Returns the number of events, or -errno.
 */
int loop_once(struct loop *l, int timeout_ms);
/* Makes loop_run() return once the events of the current wait are dispatched. */
void loop_stop(struct loop *l);
bool loop_stopped(const struct loop *l);

/*
 * Reads a non-blocking inotify fd until it is empty, calling fn with the watch
 * descriptor of each event (callers look the watch up; names are not passed).
 */
void loop_inotify_drain(int fd, void (*fn)(int wd, void *ctx), void *ctx);

#endif
