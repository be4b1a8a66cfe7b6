/*
 * Health (issue 18.5): whether the journal advances, checkpoints are signed and each
 * enabled sensor runs; what /healthz and `sandgate status` report. The figures are
 * sampled on the loop thread (a 1 s timer: the session registry lives there) and read
 * by the metrics thread under the lock.
 */
#ifndef SANDGATE_DAEMON_HEALTH_H
#define SANDGATE_DAEMON_HEALTH_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define HEALTH_SENSORS_MAX 16
#define HEALTH_REASONS_MAX 1024

struct health_loss {
	char sensor[32];
	uint64_t reports;             /* sensor.loss lines */
	uint64_t lost;                /* the events they counted (an unknown count adds 0) */
};

/*
 * Lives inside struct daemon, zeroed (a zeroed mutex is PTHREAD_MUTEX_INITIALIZER on
 * glibc), from before the journal opens until the process exits.
 */
struct daemon_health {
	pthread_mutex_t lock;
	struct health_loss loss[HEALTH_SENSORS_MAX];
	size_t n_loss;
	uint64_t seq, seq_ms;         /* the journal's next_seq and when it last moved */
	uint64_t cps, cp_ms;          /* signed checkpoints and when one was last written */
	uint64_t sessions[4];         /* by enum session_state */
	char sensors_off[64];         /* audit sensors the kernel refused ("proc,files") */
	int tfd;                      /* the sampling timer, -1 */
};

struct daemon;
struct event;

/* The journal's submit with the loss accounting (event_set_sink(health_submit, d)). */
int health_submit(void *ctx, struct event *e);

/* Starts the 1 s sampling timer on the loop. 0 or -errno. */
int health_start(struct daemon *d);
void health_stop(struct daemon *d);

/*
 * Evaluates health now: true when healthy; otherwise the reasons, "; "-separated, in
 * why (always NUL-terminated). Thread-safe.
 */
bool health_check(struct daemon *d, char *why, size_t len);

/* The journal, sinks, sensors and sessions series of /metrics. 0 or -EIO. */
int health_metrics(struct daemon *d, FILE *f);

#endif
