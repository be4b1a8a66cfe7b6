/*
 * The held execs (execpend.h): a ring of slots in the order the connector put them,
 * under one mutex (priority inheritance: the connector thread runs real-time). A slot is
 * a held exec (item set) or a tombstone (item NULL: the connector emitted it, a record of
 * it coming later is a duplicate); pid 0 is a free slot. Nothing here emits or logs: what
 * is to be emitted goes back to the caller as a list, outside the lock. A release waits
 * on a condition (monotonic clock) for the claim of the pid's records.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "sensors/process/execpend.h"

struct ep_slot {
	pid_t pid;                   /* 0: free */
	uint64_t ts;                 /* the exec (connector, monotonic) */
	uint64_t until;              /* held: handed back then; tombstone: freed then */
	struct execpend_item *it;    /* NULL: tombstone */
};

struct execpend {
	pthread_mutex_t mu;
	pthread_cond_t claimed_cv;   /* a held exec was claimed or handed back */
	bool active;
	/* A release waited in vain (no record came: rules removed, records lost): the next
	 * ones do not wait until a claim shows the records come again. */
	bool lagging;
	/* What is left of the waiting budget (EXECPEND_WAIT_BUDGET_NS a second), and when
	 * it was last refilled (monotonic ns; 0: never, full). */
	uint64_t budget_ns, budget_at;
	size_t tail, n;              /* slots [tail, tail + n) in put order, some free */
	size_t held;
	/* Held execs per pid % EXECPEND_FILTER, read without the lock: most file events
	 * are of a pid with nothing held and must not take the connector's mutex. */
	_Atomic uint16_t held_by[EXECPEND_FILTER];
	struct execpend_stats st;
	struct ep_slot s[EXECPEND_SLOTS];
};

static struct ep_slot *slot_at(struct execpend *p, size_t i)
{
	return &p->s[(p->tail + i) % EXECPEND_SLOTS];
}

static _Atomic uint16_t *held_of(struct execpend *p, pid_t pid)
{
	return &p->held_by[(uint32_t)pid % EXECPEND_FILTER];
}

/* Hands a held item back (the connector's account) and leaves a tombstone or frees. */
static void hand_back(struct execpend *p, struct ep_slot *sl, bool tomb, uint64_t now,
		      struct execpend_item **emit)
{
	struct execpend_item *it = sl->it;

	p->st.fallback++;
	if (!it->x.cmdline)
		p->st.noargs++;
	it->next = *emit;
	*emit = it;
	sl->it = NULL;
	p->held--;
	atomic_fetch_sub(held_of(p, sl->pid), 1);
	pthread_cond_broadcast(&p->claimed_cv);
	if (tomb)
		sl->until = now + EXECPEND_TOMB_NS;
	else
		sl->pid = 0;
}

static void drop_slot(struct execpend *p, struct ep_slot *sl)
{
	if (sl->it) {
		exec_info_clear(&sl->it->x);
		free(sl->it);
		sl->it = NULL;
		p->held--;
		atomic_fetch_sub(held_of(p, sl->pid), 1);
	}
	sl->pid = 0;
}

/* Free slots at the tail are given back to the ring. */
static void trim(struct execpend *p)
{
	while (p->n && slot_at(p, 0)->pid == 0) {
		p->tail = (p->tail + 1) % EXECPEND_SLOTS;
		p->n--;
	}
}

/* Room for one more slot and one more held item: the oldest make way. */
static void make_room(struct execpend *p, bool hold, uint64_t now,
		      struct execpend_item **emit)
{
	trim(p);
	for (size_t i = 0; hold && p->held >= EXECPEND_HELD_MAX && i < p->n; i++)
		if (slot_at(p, i)->it)
			hand_back(p, slot_at(p, i), true, now, emit);
	if (p->n == EXECPEND_SLOTS) {
		struct ep_slot *sl = slot_at(p, 0);

		if (sl->it)
			hand_back(p, sl, false, now, emit);
		sl->pid = 0;
		trim(p);
	}
}

int execpend_new(struct execpend **out)
{
	struct execpend *p = calloc(1, sizeof(*p));
	pthread_mutexattr_t ma;
	pthread_condattr_t ca;
	int ret;

	if (!p)
		return -ENOMEM;
	ret = pthread_mutexattr_init(&ma);
	if (ret == 0) {
		(void)pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_INHERIT);
		ret = pthread_mutex_init(&p->mu, &ma);
		pthread_mutexattr_destroy(&ma);
	}
	if (ret) {
		free(p);
		return -ret;
	}
	ret = pthread_condattr_init(&ca);
	if (ret == 0) {
		ret = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		if (ret == 0)
			ret = pthread_cond_init(&p->claimed_cv, &ca);
		pthread_condattr_destroy(&ca);
	}
	if (ret) {
		pthread_mutex_destroy(&p->mu);
		free(p);
		return -ret;
	}
	*out = p;
	return 0;
}

void execpend_free(struct execpend *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		drop_slot(p, slot_at(p, i));
	pthread_mutex_destroy(&p->mu);
	free(p);
}

void execpend_activate(struct execpend *p, bool on, struct execpend_item **emit)
{
	pthread_mutex_lock(&p->mu);
	p->active = on;
	for (size_t i = 0; !on && i < p->n; i++)
		if (slot_at(p, i)->it)
			hand_back(p, slot_at(p, i), false, 0, emit);
	pthread_mutex_unlock(&p->mu);
}

int execpend_put(struct execpend *p, const struct cn_event *ev, const struct ptab_ent *pe,
		 struct exec_info *x, bool hold, uint64_t now, struct execpend_item **emit)
{
	struct execpend_item *it = malloc(sizeof(*it));
	struct ep_slot *sl;

	if (!it) {
		exec_info_clear(x);
		return -ENOMEM;
	}
	pthread_mutex_lock(&p->mu);
	if (!p->active) {
		/* Checked under the lock that deactivation flushes under: nothing is left
		 * held in a table no one empties. */
		pthread_mutex_unlock(&p->mu);
		free(it);
		return -EAGAIN;
	}
	it->ev = *ev;
	it->pe = *pe;
	it->x = *x;          /* takes the cmdline buffer and the pinned exe */
	exec_info_moved(x);
	make_room(p, hold, now, emit);
	sl = slot_at(p, p->n++);
	*sl = (struct ep_slot){ .pid = ev->pid, .ts = ev->ts_ns, .it = it,
				.until = now + EXECPEND_HOLD_NS };
	p->held++;
	atomic_fetch_add(held_of(p, ev->pid), 1);
	if (hold)
		p->st.held++;
	else
		hand_back(p, sl, true, now, emit);
	pthread_mutex_unlock(&p->mu);
	return 0;
}

enum execpend_claim execpend_claim(struct execpend *p, pid_t pid, uint64_t ts_ns,
				   struct execpend_item **emit, struct execpend_item **claimed)
{
	enum execpend_claim ret = EXECPEND_NONE;

	if (claimed)
		*claimed = NULL;
	pthread_mutex_lock(&p->mu);
	for (size_t i = 0; i < p->n && ret == EXECPEND_NONE; i++) {
		struct ep_slot *sl = slot_at(p, i);

		if (sl->pid != pid || pid == 0)
			continue;
		if (sl->ts + EXECPEND_SLACK_NS < ts_ns) {
			/* An earlier exec of pid: its record would have come before this one. */
			if (sl->it)
				hand_back(p, sl, false, 0, emit);
			sl->pid = 0;
			continue;
		}
		if (sl->it) {
			p->st.claimed++;
			p->lagging = false;
			ret = EXECPEND_CLAIMED;
			if (claimed) {   /* handed over instead of freed by drop_slot */
				*claimed = sl->it;
				sl->it->next = NULL;
				sl->it = NULL;
				p->held--;
				atomic_fetch_sub(held_of(p, sl->pid), 1);
			}
		} else {
			p->st.dup++;
			ret = EXECPEND_DUP;
		}
		drop_slot(p, sl);
	}
	if (ret == EXECPEND_CLAIMED)
		pthread_cond_broadcast(&p->claimed_cv);
	trim(p);
	pthread_mutex_unlock(&p->mu);
	return ret;
}

bool execpend_reroot(const char *held, char *exe)
{
	size_t hl = strlen(held), el = strlen(exe);

	/* exe starts with '/': the prefix is whole path components */
	if (exe[0] != '/' || hl <= el || hl >= PATH_MAX || strcmp(held + hl - el, exe) != 0)
		return false;
	memcpy(exe, held, hl + 1);
	return true;
}

bool execpend_may_hold(struct execpend *p, pid_t pid)
{
	return pid > 0 && atomic_load(held_of(p, pid)) != 0;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The waiting budget left at t, refilled at EXECPEND_WAIT_BUDGET_NS per second. */
static uint64_t budget_left(struct execpend *p, uint64_t t)
{
	uint64_t dt = p->budget_at && t > p->budget_at ? t - p->budget_at : 0;

	if (!p->budget_at || dt >= 1000000000ull)
		p->budget_ns = EXECPEND_WAIT_BUDGET_NS;
	else
		p->budget_ns += dt * EXECPEND_WAIT_BUDGET_NS / 1000000000ull;
	if (p->budget_ns > EXECPEND_WAIT_BUDGET_NS)
		p->budget_ns = EXECPEND_WAIT_BUDGET_NS;
	p->budget_at = t ? t : 1;
	return p->budget_ns;
}

static bool pid_held(struct execpend *p, pid_t pid)
{
	for (size_t i = 0; i < p->n; i++)
		if (slot_at(p, i)->pid == pid && slot_at(p, i)->it)
			return true;
	return false;
}

/* Until pid holds nothing or wait_ns has passed (monotonic); false at the deadline. */
static bool await_claim(struct execpend *p, pid_t pid, uint64_t wait_ns)
{
	struct timespec dl;

	if (clock_gettime(CLOCK_MONOTONIC, &dl) != 0)
		return false;
	dl.tv_sec += (time_t)(wait_ns / 1000000000ull);
	dl.tv_nsec += (long)(wait_ns % 1000000000ull);
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	while (pid_held(p, pid))
		if (pthread_cond_timedwait(&p->claimed_cv, &p->mu, &dl) != 0)
			return !pid_held(p, pid);
	return true;
}

void execpend_release_pid(struct execpend *p, pid_t pid, uint64_t wait_ns, uint64_t now,
			  struct execpend_item **emit)
{
	if (!execpend_may_hold(p, pid))
		return;
	pthread_mutex_lock(&p->mu);
	if (wait_ns && !p->lagging) {
		uint64_t t0 = mono_ns(), left = budget_left(p, t0), spent;
		bool capped = left < wait_ns;

		if (left && !await_claim(p, pid, capped ? left : wait_ns) && !capped)
			p->lagging = true;
		spent = mono_ns() - t0;
		p->budget_ns -= spent < p->budget_ns ? spent : p->budget_ns;
	}
	for (size_t i = 0; i < p->n; i++) {
		struct ep_slot *sl = slot_at(p, i);

		if (sl->pid == pid && sl->it)
			hand_back(p, sl, true, now, emit);
	}
	pthread_mutex_unlock(&p->mu);
}

void execpend_expire(struct execpend *p, uint64_t now, bool all,
		     struct execpend_item **emit)
{
	pthread_mutex_lock(&p->mu);
	for (size_t i = 0; i < p->n; i++) {
		struct ep_slot *sl = slot_at(p, i);

		if (sl->pid == 0)
			continue;
		if (sl->it && (all || now >= sl->until))
			hand_back(p, sl, true, now, emit);
		else if (!sl->it && now >= sl->until)
			sl->pid = 0;
	}
	trim(p);
	pthread_mutex_unlock(&p->mu);
}

void execpend_stats(struct execpend *p, struct execpend_stats *st)
{
	pthread_mutex_lock(&p->mu);
	*st = p->st;
	pthread_mutex_unlock(&p->mu);
}

struct execpend_item *execpend_items_order(struct execpend_item *l)
{
	struct execpend_item *r = NULL, *next;

	for (; l; l = next) {
		next = l->next;
		l->next = r;
		r = l;
	}
	return r;
}

void execpend_items_free(struct execpend_item *l)
{
	struct execpend_item *next;

	for (; l; l = next) {
		next = l->next;
		exec_info_clear(&l->x);
		free(l);
	}
}
