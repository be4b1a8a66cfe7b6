/*
 * The package tracker: installer runs from exec to exit, and a worker thread that
 * collects what each run installed once it has exited. The proc connector thread (real
 * time) only parses argv and reads the installer's environ at exec; every file walk and
 * hash happens on the worker. The runs in progress are touched by the connector thread
 * alone; the queue and the session policies are under the tracker's mutex.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <stdatomic.h>

#include "packages/pkgtrack.h"
#include "sensors/shared/proctab.h"
#include "sensors/shared/sensor.h"
#include "journal/event.h"
#include "packages/pkg_int.h"
#include "common/log.h"
#include "common/timeutil.h"

#define PKG_POLICIES_MAX 4096

struct pkgtrack {
	struct ptab *tab;
	struct pkg_run *active[PKG_RUNS_MAX];   /* connector thread only */
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct pkg_run *head, *tail;          /* exited runs waiting for the worker */
	bool stop;
	struct pkg_policy *pol;
	size_t n_pol;
	atomic_int n_active;                  /* runs in active[]: the observer's fast exit */
	bool alerts;                          /* our own alert for unapproved sources */
	atomic_bool enforced;                 /* the gateway refuses unapproved hosts */
};

static void run_free(struct pkg_run *r)
{
	if (r) {
		free(r->env);
		free(r);
	}
}

static void policy_clear(struct pkg_policy *p)
{
	for (size_t i = 0; i < p->n_approved; i++)
		free(p->approved[i]);
	free(p->approved);
	p->approved = NULL;
	p->n_approved = 0;
}

/* ---- policies ------------------------------------------------------------------------ */

static struct pkg_policy *policy_find(struct pkgtrack *t, const char *sid)
{
	for (size_t i = 0; i < t->n_pol; i++)
		if (strcmp(t->pol[i].sid, sid) == 0)
			return &t->pol[i];
	return NULL;
}

int pkgtrack_policy(struct pkgtrack *t, const char *sid, const char *const *approved,
		    size_t n, bool block)
{
	char **copy = calloc(n ? n : 1, sizeof(*copy));
	struct pkg_policy *p;
	int ret = 0;

	if (!copy)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (!(copy[i] = strdup(approved[i])))
			ret = -ENOMEM;
	pthread_mutex_lock(&t->mu);
	p = ret ? NULL : policy_find(t, sid);
	if (ret == 0 && !p) {
		struct pkg_policy *np = t->n_pol < PKG_POLICIES_MAX
			? realloc(t->pol, (t->n_pol + 1) * sizeof(*np)) : NULL;

		if (!np)
			ret = -ENOMEM;
		else {
			t->pol = np;
			p = &t->pol[t->n_pol++];
			memset(p, 0, sizeof(*p));
			snprintf(p->sid, sizeof(p->sid), "%s", sid);
		}
	}
	if (ret == 0) {
		policy_clear(p);
		p->approved = copy;
		p->n_approved = n;
		p->block = block;
		copy = NULL;
	}
	pthread_mutex_unlock(&t->mu);
	for (size_t i = 0; copy && i < n; i++)
		free(copy[i]);
	free(copy);
	return ret;
}

/* ---- the worker ---------------------------------------------------------------------- */

struct collect_ctx {
	struct pkgtrack *t;
	const struct pkg_run *r;
	struct pkg_sources src;
	struct pkg_policy pol;       /* a copy taken under the lock; n_approved 0 */
	bool has_pol;
	size_t n;
};

static int on_found(void *arg, const struct pkg_found *f)
{
	struct collect_ctx *c = arg;
	int ret = pkg_emit(c->r, &c->src, f, c->has_pol ? &c->pol : NULL);

	if (ret)
		log_errno(ret, "audit: package.install %s of session %s", f->name, c->r->sid);
	c->n++;
	return 0;
}

/* Copies the session's policy (strings duplicated) so emitting needs no lock. */
static void policy_snapshot(struct pkgtrack *t, const char *sid, struct collect_ctx *c)
{
	struct pkg_policy *p;

	memset(&c->pol, 0, sizeof(c->pol));
	pthread_mutex_lock(&t->mu);
	p = policy_find(t, sid);
	if (p) {
		c->pol.approved = calloc(p->n_approved ? p->n_approved : 1, sizeof(char *));
		for (size_t i = 0; c->pol.approved && i < p->n_approved; i++)
			if ((c->pol.approved[i] = strdup(p->approved[i])))
				c->pol.n_approved++;
		c->pol.block = p->block;
		c->pol.alert = t->alerts;
		c->pol.enforced = atomic_load(&t->enforced);
		c->has_pol = c->pol.approved && c->pol.n_approved == p->n_approved;
	}
	pthread_mutex_unlock(&t->mu);
}

static void collect(struct pkgtrack *t, struct pkg_run *r)
{
	struct collect_ctx c = { .t = t, .r = r };
	int ret;

	pkg_sources_of(r, &c.src);
	policy_snapshot(t, r->sid, &c);
	switch (r->cmd.mgr) {
	case PKG_PIP:
		ret = pkg_collect_pip(r, on_found, &c);
		break;
	case PKG_NPM:
		ret = pkg_collect_npm(r, on_found, &c);
		break;
	case PKG_APT:
	case PKG_DPKG:
		ret = pkg_collect_dpkg(r, on_found, &c);
		break;
	case PKG_CARGO:
		ret = pkg_collect_cargo(r, on_found, &c);
		break;
	default:
		ret = 0;
		break;
	}
	if (ret)
		log_errno(ret, "audit: packages of %s (pid %d, session %s)", r->cmd.tool,
			  (int)r->pid, r->sid);
	policy_clear(&c.pol);
}

static void *worker(void *arg)
{
	struct pkgtrack *t = arg;
	struct pkg_run *r;

	(void)pthread_setname_np(pthread_self(), "sg-packages");
	for (;;) {
		pthread_mutex_lock(&t->mu);
		while (!t->head && !t->stop)
			pthread_cond_wait(&t->cv, &t->mu);
		r = t->head;
		if (r) {
			t->head = r->next;
			if (!t->head)
				t->tail = NULL;
		}
		pthread_mutex_unlock(&t->mu);
		if (!r)
			break;   /* stopping, and the queue is empty */
		collect(t, r);
		run_free(r);
	}
	return NULL;
}

/* ---- runs (connector thread) ------------------------------------------------------------ */

static int slot_of(struct pkgtrack *t, pid_t pid)
{
	for (int i = 0; i < PKG_RUNS_MAX; i++)
		if (t->active[i] && t->active[i]->pid == pid)
			return i;
	return -1;
}

/* Whether an ancestor of pid (the fork tree) is a run already: apt's dpkg, npm's npm. */
static bool inside_run(struct pkgtrack *t, pid_t ppid)
{
	struct ptab_ent pe;

	for (int depth = 0; ppid > 1 && depth < 64; depth++) {
		if (slot_of(t, ppid) >= 0)
			return true;
		if (!ptab_get(t->tab, ppid, true, &pe))
			return false;
		ppid = pe.ppid;
	}
	return false;
}

static void read_environ(pid_t pid, struct pkg_run *r)
{
	char path[48];
	size_t len;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	if (pkg_read_file(path, PKG_ENV_MAX, &r->env, &len) == 0)
		r->envlen = len;
}

void pkgtrack_exec(struct pkgtrack *t, pid_t pid, pid_t ppid, const char *sid,
		   uint64_t exec_ns, const char *cmdline, size_t cmdlen, const char *cwd,
		   bool uid_known, uint32_t uid)
{
	struct pkg_run *r;
	int slot = slot_of(t, pid);

	if (slot >= 0) {
		/* The same pid exec'ing again (env VAR=x npm -> node): the run stays, and
		 * the environment is the new program's, with what the wrapper set. */
		r = t->active[slot];
		free(r->env);
		r->env = NULL;
		r->envlen = 0;
		read_environ(pid, r);
		return;
	}
	if (!cmdline || cmdlen == 0 || !pkg_detect_maybe(cmdline, cmdlen) || inside_run(t, ppid))
		return;
	r = calloc(1, sizeof(*r));
	if (!r)
		return;
	if (pkg_detect(cmdline, cmdlen, &r->cmd) != 1) {
		free(r);
		return;
	}
	for (slot = 0; slot < PKG_RUNS_MAX && t->active[slot]; slot++)
		;
	if (slot == PKG_RUNS_MAX) {
		free(r);
		/* Rare (64 installers at once): said at once, not batched. */
		if (audit_emit_loss("package_tracker", 1,
				    "more than 64 installer runs at once: one not tracked") != 0)
			log_warnx("audit: an installer run of session %s not tracked", sid);
		return;
	}
	r->pid = pid;
	r->uid = uid;
	r->uid_known = uid_known;
	snprintf(r->sid, sizeof(r->sid), "%s", sid);
	snprintf(r->cwd, sizeof(r->cwd), "%s", cwd ? cwd : "/");
	time_mono_to_real(exec_ns, &r->start);
	read_environ(pid, r);
	pthread_mutex_lock(&t->mu);   /* the observer reads active[] from other threads */
	t->active[slot] = r;
	atomic_fetch_add(&t->n_active, 1);
	pthread_mutex_unlock(&t->mu);
}

void pkgtrack_exit(struct pkgtrack *t, pid_t pid)
{
	int slot = slot_of(t, pid);
	struct pkg_run *r;

	if (slot < 0)
		return;
	pthread_mutex_lock(&t->mu);
	r = t->active[slot];
	t->active[slot] = NULL;
	atomic_fetch_sub(&t->n_active, 1);
	if (t->tail)
		t->tail->next = r;
	else
		t->head = r;
	t->tail = r;
	pthread_cond_signal(&t->cv);
	pthread_mutex_unlock(&t->mu);
}

/* The run (index) whose tree holds pid, under t->mu; -1 when none. */
static int run_of_pid(struct pkgtrack *t, pid_t pid)
{
	struct ptab_ent pe;

	for (int depth = 0; pid > 1 && depth < 64; depth++) {
		for (int i = 0; i < PKG_RUNS_MAX; i++)
			if (t->active[i] && t->active[i]->pid == pid)
				return i;
		if (!ptab_get(t->tab, pid, true, &pe))
			return -1;
		pid = pe.ppid;
	}
	return -1;
}

void pkgtrack_net_seen(struct pkgtrack *t, const char *sid, pid_t pid,
		       const char *const *names, size_t n)
{
	struct pkg_run *r;
	int i;

	if (atomic_load(&t->n_active) == 0 || !sid || pid <= 0)
		return;
	pthread_mutex_lock(&t->mu);
	i = run_of_pid(t, pid);
	r = i >= 0 ? t->active[i] : NULL;
	if (r && strcmp(r->sid, sid) == 0) {
		r->net_seen = true;
		for (size_t k = 0; k < n; k++) {
			bool have = !names[k] || !names[k][0];

			for (size_t j = 0; j < r->n_net && !have; j++)
				have = strcmp(r->net[j], names[k]) == 0;
			if (!have && r->n_net < PKG_NET_MAX)
				snprintf(r->net[r->n_net++], PKG_NET_NAME, "%s", names[k]);
		}
	}
	pthread_mutex_unlock(&t->mu);
}

/* ---- the gateway's guard (`unapproved: block`) ------------------------------------------ */

void pkgtrack_enforced(struct pkgtrack *t, bool on)
{
	atomic_store(&t->enforced, on);
}

bool pkgtrack_blocking(struct pkgtrack *t, const char *sid)
{
	const struct pkg_policy *p;
	bool yes = false;

	if (atomic_load(&t->n_active) == 0)
		return false;   /* the common case: no installer anywhere */
	pthread_mutex_lock(&t->mu);
	p = policy_find(t, sid);
	for (int i = 0; p && p->block && !yes && i < PKG_RUNS_MAX; i++)
		yes = t->active[i] && strcmp(t->active[i]->sid, sid) == 0;
	pthread_mutex_unlock(&t->mu);
	return yes;
}

/* Adds url's host to out (stride bytes each, n so far) unless it is there. */
static void add_host(const char *url, char *out, size_t stride, size_t max, size_t *n)
{
	char h[PKG_NET_NAME];

	pkg_url_host(url, h, sizeof(h));
	if (!h[0] || strlen(h) >= stride || *n == max)
		return;
	for (size_t i = 0; i < *n; i++)
		if (strcmp(out + i * stride, h) == 0)
			return;
	memcpy(out + (*n)++ * stride, h, strlen(h) + 1);
}

int pkgtrack_hosts(struct pkgtrack *t, const char *sid, pid_t pid, char *out, size_t stride,
		   size_t max)
{
	const struct pkg_policy *p;
	size_t n = 0;
	int i, ret = -ENOENT;

	if (atomic_load(&t->n_active) == 0)
		return -ENOENT;
	pthread_mutex_lock(&t->mu);
	p = policy_find(t, sid);
	i = p && p->block ? run_of_pid(t, pid) : -1;
	if (i >= 0 && strcmp(t->active[i]->sid, sid) == 0) {
		for (size_t k = 0; k < p->n_approved; k++)
			add_host(p->approved[k], out, stride, max, &n);
		ret = (int)n;
	}
	pthread_mutex_unlock(&t->mu);
	return ret;
}

void pkgtrack_tick(struct pkgtrack *t)
{
	/* An exit the connector lost (a sequence gap) would hold a slot for ever: a root
	 * that is gone is collected now. A reused pid keeps its run until that exits. */
	for (int i = 0; i < PKG_RUNS_MAX; i++)
		if (t->active[i] && kill(t->active[i]->pid, 0) != 0 && errno == ESRCH)
			pkgtrack_exit(t, t->active[i]->pid);
}

int pkgtrack_new(struct pkgtrack **out, struct ptab *tab, bool alerts)
{
	struct pkgtrack *t = calloc(1, sizeof(*t));
	int ret;

	if (!t)
		return -ENOMEM;
	t->tab = tab;
	t->alerts = alerts;
	pthread_mutex_init(&t->mu, NULL);
	pthread_cond_init(&t->cv, NULL);
	ret = -pthread_create(&t->th, NULL, worker, t);
	if (ret) {
		pthread_mutex_destroy(&t->mu);
		pthread_cond_destroy(&t->cv);
		free(t);
		return ret;
	}
	*out = t;
	return 0;
}

void pkgtrack_free(struct pkgtrack *t)
{
	if (!t)
		return;
	pthread_mutex_lock(&t->mu);
	t->stop = true;
	pthread_cond_signal(&t->cv);
	pthread_mutex_unlock(&t->mu);
	pthread_join(t->th, NULL);
	/* Runs still in progress at stop are not collected (docs/packages.md). */
	for (int i = 0; i < PKG_RUNS_MAX; i++)
		run_free(t->active[i]);
	for (size_t i = 0; i < t->n_pol; i++)
		policy_clear(&t->pol[i]);
	free(t->pol);
	pthread_mutex_destroy(&t->mu);
	pthread_cond_destroy(&t->cv);
	free(t);
}
