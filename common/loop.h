/*
 * A small epoll loop in the style of Redis's ae.c: file events with a callback and an
 * untyped context, deletion safe from inside a callback, and a before-sleep hook for
 * work batched once per iteration. Signals and timers come in as fds (signalfd,
 * timerfd), so the loop has one kind of event.
 */
#ifndef SANDGATE_COMMON_LOOP_H
#define SANDGATE_COMMON_LOOP_H

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

/* Dispatches until loop_stop(). Returns 0, or -errno if epoll_wait fails. */
int loop_run(struct loop *l);
void loop_stop(struct loop *l);

/*
 * Reads a non-blocking inotify fd until it is empty, calling fn with the watch
 * descriptor of each event (callers look the watch up; names are not passed).
 */
void loop_inotify_drain(int fd, void (*fn)(int wd, void *ctx), void *ctx);

#endif
