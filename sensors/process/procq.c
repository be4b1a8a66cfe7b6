/*
 * The emitter behind the proc connector thread. That thread runs real-time so it reads
 * an exec's /proc before the process is gone; building the event and event_emit (the
 * journal queue's mutex, which a normal-priority thread may hold while the CPUs are
 * contended) would make it wait. It hands what it read to this queue instead, and one
 * normal-priority thread builds and emits the events in the order they were queued.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sensors/process/proc_int.h"
#include "common/log.h"

/* Records waiting at most. An exec record is ~8.5 KiB (exe and cwd are PATH_MAX
 * arrays): 70 MiB if all were execs, the emitter having fallen 8k behind. */
#define PQ_MAX 8192

enum pq_kind { PQ_EXEC, PQ_EXIT, PQ_UID };

struct pq_job {
	struct pq_job *next;
	enum pq_kind kind;
	struct cn_event ev;
	struct ptab_ent pe;
	struct exec_info *x;         /* PQ_EXEC only */
};

struct procq {
	pthread_mutex_t mu;          /* priority inheritance: the connector thread takes it */
	pthread_cond_t cv;
	struct pq_job *head, **tail;
	size_t len;
	uint64_t dropped;            /* records refused because the queue was full */
	bool stop;
	pthread_t th;
};

static void pq_emit(struct pq_job *j)
{
	int ret = 0;

	switch (j->kind) {
	case PQ_EXEC:
		ret = procemit_exec(&j->ev, &j->pe, j->x);
		exec_info_clear(j->x);
		free(j->x);
		break;
	case PQ_EXIT:
		ret = procemit_exit(&j->ev, &j->pe);
		break;
	case PQ_UID:
		ret = procemit_uid(&j->ev, &j->pe);
		break;
	}
	if (ret)
		log_errno(ret, "audit: process event of pid %d", (int)j->ev.pid);
	free(j);
}

/* Takes the whole list (or NULL once stopped and empty) and the drop count. */
static struct pq_job *pq_take(struct procq *q, uint64_t *dropped)
{
	struct pq_job *l;

	pthread_mutex_lock(&q->mu);
	while (!q->head && !q->stop)
		pthread_cond_wait(&q->cv, &q->mu);
	l = q->head;
	q->head = NULL;
	q->tail = &q->head;
	q->len = 0;
	*dropped = q->dropped;
	q->dropped = 0;
	pthread_mutex_unlock(&q->mu);
	return l;
}

static void *pq_main(void *arg)
{
	struct procq *q = arg;
	struct pq_job *l, *next;
	uint64_t dropped;

	(void)pthread_setname_np(pthread_self(), "sg-procq");
	for (;;) {
		l = pq_take(q, &dropped);
		if (dropped)
			(void)audit_emit_loss("audit_emit_queue", (int64_t)dropped,
					      "process events queued faster than journaled");
		if (!l)
			return NULL;   /* stopped, and everything queued is emitted */
		for (; l; l = next) {
			next = l->next;
			pq_emit(l);
		}
	}
}

int procq_start(struct procq **out)
{
	struct procq *q = calloc(1, sizeof(*q));
	pthread_mutexattr_t ma;
	int ret;

	if (!q)
		return -ENOMEM;
	q->tail = &q->head;
	ret = pthread_mutexattr_init(&ma);
	if (ret == 0) {
		(void)pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_INHERIT);
		ret = pthread_mutex_init(&q->mu, &ma);
		pthread_mutexattr_destroy(&ma);
	}
	if (ret) {
		free(q);
		return -ret;
	}
	ret = pthread_cond_init(&q->cv, NULL);
	if (ret == 0) {
		ret = pthread_create(&q->th, NULL, pq_main, q);
		if (ret)
			pthread_cond_destroy(&q->cv);
	}
	if (ret) {
		pthread_mutex_destroy(&q->mu);
		free(q);
		return -ret;
	}
	*out = q;
	return 0;
}

void procq_stop(struct procq *q)
{
	if (!q)
		return;
	pthread_mutex_lock(&q->mu);
	q->stop = true;
	pthread_cond_signal(&q->cv);
	pthread_mutex_unlock(&q->mu);
	pthread_join(q->th, NULL);
	pthread_cond_destroy(&q->cv);
	pthread_mutex_destroy(&q->mu);
	free(q);
}

/* Appends j, or drops it (counted) when the queue is full. */
static void pq_push(struct procq *q, struct pq_job *j)
{
	pthread_mutex_lock(&q->mu);
	if (q->len >= PQ_MAX) {
		q->dropped++;
		pthread_mutex_unlock(&q->mu);
		if (j->x) {
			exec_info_clear(j->x);
			free(j->x);
		}
		free(j);
		return;
	}
	j->next = NULL;
	*q->tail = j;
	q->tail = &j->next;
	q->len++;
	pthread_mutex_unlock(&q->mu);
}

static struct pq_job *pq_job(enum pq_kind kind, const struct cn_event *ev,
			     const struct ptab_ent *pe)
{
	struct pq_job *j = malloc(sizeof(*j));

	if (!j)
		return NULL;
	j->kind = kind;
	j->ev = *ev;
	j->pe = *pe;
	j->x = NULL;
	return j;
}

int procq_exec(struct procq *q, const struct cn_event *ev, const struct ptab_ent *pe,
	       struct exec_info *x)
{
	struct pq_job *j = pq_job(PQ_EXEC, ev, pe);

	if (j)
		j->x = malloc(sizeof(*j->x));
	if (!j || !j->x) {
		free(j);
		exec_info_clear(x);
		return -ENOMEM;
	}
	*j->x = *x;          /* takes the cmdline buffer and the pinned exe */
	exec_info_moved(x);
	pq_push(q, j);
	return 0;
}

int procq_exit(struct procq *q, const struct cn_event *ev, const struct ptab_ent *pe)
{
	struct pq_job *j = pq_job(PQ_EXIT, ev, pe);

	if (!j)
		return -ENOMEM;
	pq_push(q, j);
	return 0;
}

int procq_uid(struct procq *q, const struct cn_event *ev, const struct ptab_ent *pe)
{
	struct pq_job *j = pq_job(PQ_UID, ev, pe);

	if (!j)
		return -ENOMEM;
	pq_push(q, j);
	return 0;
}

void procq_kick(struct procq *q)
{
	pthread_mutex_lock(&q->mu);
	if (q->head)
		pthread_cond_signal(&q->cv);
	pthread_mutex_unlock(&q->mu);
}
