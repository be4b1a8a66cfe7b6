/*
 * The resource limits watcher's state, shared by limits/limits_watch.c (watches,
 * sampling, the kernel log) and limits/limits_report.c (rate-bounded reports, OOM
 * victims, resource.limit events). docs/limits.md.
 */
#ifndef SANDGATE_LIMITS_LIMITS_INT_H
#define SANDGATE_LIMITS_LIMITS_INT_H

#include "attribution/attribution.h"
#include "common/timeutil.h"
#include "journal/event.h"
#include "limits/limits.h"
#include "limits/limits_conf.h"

#define LIMITS_VICTIMS 64          /* OOM kills remembered from the kernel log */
#define LIMITS_VICTIM_TTL_MS 5000  /* a logged kill older than this matches no counter */
#define LIMITS_OOM_WAIT_MS 300     /* how long a counted kill waits for its log line */
#define LIMITS_CPU_TIME_WAIT_MS 1100 /* a counted throttle waits for its time (period <= 1 s) */
/*
 * File descriptors the watcher may hold for all sessions together (v1 OOM eventfds, the
 * counter files kept open for pread, ~7x cheaper than open/read/close here). Bounded
 * because the rest of the daemon must stay below 1024 (libmicrohttpd's select()); past
 * it a session's counters are read by path and its v1 OOM counter on the tick.
 */
#define LIMITS_FD_BUDGET 512

/* Counts seen since the last report of one limit (cpu_throttle, memory_max, pids_max). */
struct lim_acc {
	uint64_t count;            /* periods throttled, limit hits, forks refused */
	uint64_t amount;           /* throttled microseconds (cpu) */
	int64_t since_ms;          /* the sample before the first counted one; 0: empty */
	int64_t last_report_ms;
};

struct limits;

struct lim_entry {
	struct limits *L;          /* the watcher (the eventfd callback's way back) */
	struct session *s;
	int wd_mem, wd_pids;       /* v2 memory.events / pids.events inotify watches, -1 */
	int efd;                   /* v1 memory.oom_control eventfd, -1 */
	int fd_cpu, fd_mem, fd_fail, fd_pids;   /* kept open for pread, -1: read by path */
	bool have_mem, have_cpu, have_pids;
	bool mem_v1, pids_v1;      /* no inotify for these: sampled */
	struct cg_mem_counters mem;
	struct cg_cpu_counters cpu;
	struct cg_pids_counters pids;
	int64_t last_sample_ms;
	struct lim_acc acc_cpu, acc_mem, acc_pids, acc_net;
	/* --net-rate drops so far (nft counter drops_ID). Baseline 0: the counter is made
	 * with the session's elements, and re-made (from 0) when they are re-added. */
	uint64_t net_pkts, net_bytes;
	uint64_t oom_pending;      /* kills counted, not yet reported */
	uint64_t oom_reported;     /* kills reported since the watch began */
	int64_t oom_due_ms;        /* report the pending ones by then, pid or not */
	int oom_recheck;           /* ticks left re-reading the OOM counter after an eventfd */
	int64_t disk_due_ms;
	bool disk_over;            /* above --disk at the last measure */
};

struct lim_victim {
	struct kmsg_oom k;
	int64_t at_ms;             /* monotonic, when read */
	bool claimed;
};

struct limits {
	const struct sg_limits_config *cfg;   /* in force (limits_configure after a reload) */
	struct loop *loop;
	const struct cg_host *cg;      /* the sessions' cgroup host */
	struct nft_handle *nft;        /* the gateway's ruleset, or NULL */
	struct limits_hooks hooks;
	uint64_t armed_ms;         /* the sample timer's period (re-armed after a reload) */
	int ifd;                   /* inotify for the v2 event files */
	int tfd;                   /* sample_interval timer */
	int kfd;                   /* /dev/kmsg, -1 when unreadable or off */
	size_t fds_held;           /* per-session fds held, <= LIMITS_FD_BUDGET */
	struct lim_entry **v;
	size_t n, cap;
	struct lim_victim victims[LIMITS_VICTIMS];
	size_t next_victim;
};

/* The limits: config in force (a SIGHUP replaces it: limits_configure). */
static inline const struct sg_limits_config *lim_cfg(const struct limits *L)
{
	return L->cfg;
}

/* ---- limits_report.c ------------------------------------------------------------ */

/* Reads the memory counters of e and counts what rose (OOM kills, limit hits). */
void lim_sample_memory(struct limits *L, struct lim_entry *e, int64_t now);
void lim_sample_pids(struct limits *L, struct lim_entry *e, int64_t now);
void lim_sample_cpu(struct limits *L, struct lim_entry *e, int64_t now);
/* Reads the drop counter of e's --net-rate limit in the gateway's ruleset. */
void lim_sample_net(struct limits *L, struct lim_entry *e, int64_t now);
/* The same for every session with a rate for which live() holds, in one dump. */
void lim_sample_net_all(struct limits *L, bool (*live)(const struct session *));
/* Reports what is due: accumulated counts past report_interval (all of them when
 * force), OOM kills whose victim is known or whose wait is over (all when force). */
void lim_report_due(struct limits *L, struct lim_entry *e, int64_t now, bool force);
/* Measures e's workdir against --disk when due; may terminate the session (kill). */
void lim_check_disk(struct limits *L, struct lim_entry *e, int64_t now);
/* Remembers one OOM kill read from the kernel log. */
void lim_add_victim(struct limits *L, const struct kmsg_oom *k, int64_t now);

#endif
