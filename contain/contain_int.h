/* Shared by contain/holder.c (the daemon) and contain/init.c (the holder it forks). */
#ifndef SANDGATE_CONTAIN_CONTAIN_INT_H
#define SANDGATE_CONTAIN_CONTAIN_INT_H

#include "contain/contain.h"

/* Steps of the holder's setup, as reported on the socket. */
enum holder_step {
	HOLDER_STEP_UNSHARE = 1,
	HOLDER_STEP_FORK,
	HOLDER_STEP_PID,           /* not a failure: pid is the holder's */
	HOLDER_STEP_PROPAGATION,
	HOLDER_STEP_PROC,
	HOLDER_STEP_SYS,
	HOLDER_STEP_DEV,
	HOLDER_STEP_MASKS,
	HOLDER_STEP_DUMPABLE,
	HOLDER_STEP_READY,         /* not a failure: set up */
	HOLDER_STEP_HOSTNS,
};

struct holder_msg {
	int step;
	int err;                   /* errno of the failed step, 0 */
	pid_t pid;
};

/* What the forked child needs, prepared before fork (it may not allocate). */
struct holder_args {
	const struct contain_setup *setup;
	int host_mnt;              /* pid 1's mount namespace when it is not ours, or -1 */
	char cg1_opts[8][128];     /* mount options of each v1 hierarchy */
};

/* The forked child: waits for "go" on sock, unshares, forks pid 1. Never returns. */
void holder_child(const struct holder_args *a, int sock) __attribute__((noreturn));

#endif
