/*
 * The gateway's tamper watch (docs/nft-ruleset.md, "Tamper watch"): the daemon listens
 * to the nftables notifications of the gateway's namespace (nft/nft_watch.c) in its main
 * loop. A commit to table inet sandgate that the daemon did not make (a rule, chain,
 * set, element or the table itself added, deleted or flushed) is undone at once: the
 * whole ruleset is installed again in one batch with every session's map elements and
 * rate objects, then the gateway's bound-address elements that have not expired; session
 * flows that began unqueued meanwhile are denied and listed (gateway/tamper_window.c).
 * Each such commit is journaled as `gateway.tamper` (what changed, the committing process
 * as the kernel names it, how long the table was not ours); the built-in rule
 * `gateway-tamper` (rules/tamper-gateway.yaml) raises the critical alert.
 *
 * Repeats stay bounded: after TAMPER_BURST events in TAMPER_WINDOW_MS the rest are
 * still restored but only counted, and one summary event carries the count.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "common/log.h"
#include "common/timeutil.h"
#include "daemon/daemon.h"
#include "gateway/gateway.h"
#include "journal/event.h"
#include "nft/nft.h"
#include "sessions/sessions.h"

#define TAMPER_BURST 10
#define TAMPER_WINDOW_MS 10000

struct tamper {
	struct nft_watch *w;
	int timer_fd;
	int64_t window_start_ms;
	unsigned in_window;
	uint64_t suppressed;       /* restored but not journaled one by one */
	uint64_t restores, failures;
};

/* The first line of /proc/PID/cgroup's v2 entry ("0::/path"), or "" when unreadable. */
static void proc_cgroup(int32_t pid, char *out, size_t len)
{
	char path[64], line[512];
	FILE *f;

	out[0] = '\0';
	if (pid <= 0)
		return;
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "0::", 3) == 0) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(out, len, "%s", line + 3);
			break;
		}
	fclose(f);
}

/* The ruleset and everything the daemon keeps in it, as at start. */
static int restore(struct daemon *d, size_t *bound)
{
	struct nft_session *sessions = NULL;
	size_t n = 0;
	int ret;

	*bound = 0;
	ret = sessions_nft_list(d->sessions, &sessions, &n);
	if (ret == 0)
		ret = nft_install(d->nft, sessions, n);
	free(sessions);
	if (ret == 0)
		ret = gateway_kbind_restore(d->gateway, bound);
	return ret;
}

static void changes_array(struct event *e, const struct nft_tamper *t)
{
	event_array_begin(e, "changes");
	for (size_t i = 0; i < t->n_changes; i++) {
		const struct nft_change *c = &t->changes[i];

		event_object_begin(e, NULL);
		event_str(e, "op", c->op);
		event_str(e, "object", c->object);
		event_str(e, "name", c->name[0] ? c->name : NULL);
		event_uint(e, "count", c->count);
		event_object_end(e);
	}
	event_array_end(e);
}

/* Flows that began unqueued while the table was not ours: denied, listed in e. */
static void window(struct daemon *d, struct event *e)
{
	int ret = gateway_tamper_window(d->gateway, 0, (uint64_t)time_wall_us() * 1000u, e);

	if (ret)
		log_errno(ret, "gateway: flows of the tamper window");
}

static void emit_tamper(struct daemon *d, const struct nft_tamper *t, int ret, size_t bound,
			int64_t restore_ms)
{
	struct event *e = event_new("gateway.tamper", NULL, EVENT_SRC_SANDGATE);
	char cg[512];

	if (!e)
		return;
	proc_cgroup(t->pid, cg, sizeof(cg));
	event_str(e, "table", "inet sandgate");
	event_str(e, "netns", d->cfg->gateway.netns);
	event_str(e, "why", t->lost ? "notifications lost: the change cannot be named"
				    : "a commit the daemon did not make");
	if (t->lost)
		event_null(e, "changes");
	else
		changes_array(e, t);
	event_uint(e, "changes_total", t->total);
	event_uint(e, "changes_unlisted", t->more);
	if (t->pid > 0)
		event_int(e, "pid", t->pid);
	else
		event_null(e, "pid");
	event_str(e, "comm", t->comm[0] ? t->comm : NULL);
	event_str(e, "cgroup", cg[0] ? cg : NULL);
	event_uint(e, "portid", t->portid);
	event_uint(e, "generation", t->gen_id);
	event_bool(e, "restored", ret == 0);
	event_str(e, "error", ret ? strerror(-ret) : NULL);
	event_int(e, "restore_ms", restore_ms);
	event_uint(e, "bound_restored", bound);
	event_uint(e, "suppressed", d->tamper->suppressed);
	d->tamper->suppressed = 0;
	window(d, e);
	if (event_emit(e) != 0)
		log_warnx("gateway: gateway.tamper not recorded");
}

/* Whether this one is journaled, or only counted (a burst). */
static bool tamper_admit(struct tamper *tp, int64_t now)
{
	struct itimerspec its = { .it_value = { .tv_sec = TAMPER_WINDOW_MS / 1000 } };

	if (now - tp->window_start_ms >= TAMPER_WINDOW_MS) {
		tp->window_start_ms = now;
		tp->in_window = 0;
	}
	if (tp->in_window++ < TAMPER_BURST)
		return true;
	if (tp->suppressed++ == 0 && tp->timer_fd >= 0)   /* the summary when the burst ends */
		(void)timerfd_settime(tp->timer_fd, 0, &its, NULL);
	return false;
}

static void on_tamper(void *ctx, const struct nft_tamper *t)
{
	struct daemon *d = ctx;
	int64_t t0 = time_mono_ms();
	size_t bound = 0;
	int ret;

	ret = restore(d, &bound);
	if (ret) {
		d->tamper->failures++;
		log_errno(ret, "gateway: ruleset changed by %s (pid %d): restore failed",
			  t->comm[0] ? t->comm : "?", (int)t->pid);
	} else {
		d->tamper->restores++;
	}
	if (tamper_admit(d->tamper, t0))
		emit_tamper(d, t, ret, bound, time_mono_ms() - t0);
	else
		window(d, NULL);
}

static void on_watch(struct loop *l, int fd, uint32_t events, void *ctx)
{
	struct daemon *d = ctx;
	int ret;

	(void)l;
	(void)fd;
	(void)events;
	ret = nft_watch_read(d->tamper->w, on_tamper, d);
	if (ret)
		log_errno(ret, "gateway: reading nftables notifications");
}

/* The end of a burst: one event says how many commits were restored unrecorded. */
static void on_timer(struct loop *l, int fd, uint32_t events, void *ctx)
{
	struct daemon *d = ctx;
	struct event *e;
	uint64_t x;

	(void)l;
	(void)events;
	if (read(fd, &x, sizeof(x)) != sizeof(x) || d->tamper->suppressed == 0)
		return;
	e = event_new("gateway.tamper", NULL, EVENT_SRC_SANDGATE);
	if (!e)
		return;
	event_str(e, "table", "inet sandgate");
	event_str(e, "netns", d->cfg->gateway.netns);
	event_str(e, "why", "burst summary: further commits restored, counted here");
	event_uint(e, "suppressed", d->tamper->suppressed);
	event_uint(e, "restores_total", d->tamper->restores);
	event_uint(e, "restore_failures_total", d->tamper->failures);
	d->tamper->suppressed = 0;
	(void)event_emit(e);
}

static int tamper_own_ports(struct daemon *d)
{
	uint32_t gw = gateway_kbind_portid(d->gateway);
	int ret = nft_watch_own_portid(d->tamper->w, nft_handle_portid(d->nft));

	if (ret == 0 && gw)
		ret = nft_watch_own_portid(d->tamper->w, gw);
	return ret;
}

int daemon_tamper_init(struct daemon *d)
{
	struct tamper *tp;
	int ret;

	if (!d->nft)
		return 0;
	tp = calloc(1, sizeof(*tp));
	if (!tp)
		return -ENOMEM;
	tp->timer_fd = -1;
	d->tamper = tp;
	ret = nft_watch_open(d->cfg->gateway.netns, &tp->w);
	if (ret == 0)
		ret = tamper_own_ports(d);
	if (ret == 0)
		ret = loop_add(d->loop, nft_watch_fd(tp->w), EPOLLIN, on_watch, d);
	tp->timer_fd = ret ? -1 : timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (ret == 0 && tp->timer_fd < 0)
		ret = -errno;
	if (ret == 0)
		ret = loop_add(d->loop, tp->timer_fd, EPOLLIN, on_timer, d);
	return ret;
}

void daemon_tamper_fini(struct daemon *d)
{
	struct tamper *tp = d->tamper;

	if (!tp)
		return;
	if (d->loop && tp->w)
		loop_del(d->loop, nft_watch_fd(tp->w));
	if (d->loop && tp->timer_fd >= 0)
		loop_del(d->loop, tp->timer_fd);
	if (tp->timer_fd >= 0)
		close(tp->timer_fd);
	nft_watch_free(tp->w);
	free(tp);
	d->tamper = NULL;
}
