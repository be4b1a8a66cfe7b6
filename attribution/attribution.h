/*
 * Sessions: the registry that ties every event to a session id, the session cgroups
 * (v2 tree, plus the v1 controller hierarchies on hybrid hosts), the small stable mark
 * each session carries in nftables, the pid -> session cache, the pause snapshot behind
 * changed_while_paused, and the redaction and detail store of tool invocations.
 *
 * Everything here returns 0 or -errno and never logs; the daemon (sessions/session_*.c)
 * logs and emits events. Parsers of kernel files take bytes and do no I/O (fuzzed in
 * tests/fuzz/). Layout and lifecycle: docs/sessions.md.
 */
#ifndef SANDGATE_ATTRIBUTION_ATTRIBUTION_H
#define SANDGATE_ATTRIBUTION_ATTRIBUTION_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/proc.h"       /* proc_starttime, proc_stat_starttime */
#include "contain/contain.h"

#define SESSION_ID_MAX 64          /* bytes of [A-Za-z0-9._-], not starting with '.' */
#define SESSION_MARK_MAX 0xFFFFFu  /* marks 1..SESSION_MARK_MAX (nft/nft.h id field) */
#define SESSION_IFACES_MAX 16
#define SESSION_CPUS_MAX 4096
#define SESSION_TIMEOUT_MAX (10 * 366 * 86400LL)   /* seconds; keeps the us maths in range */

/* ---- kernel file parsers (pure, fuzzed) ------------------------------------------ */

/*
 * Finds "key VALUE" on its own line of a flat-keyed cgroup file (cgroup.events,
 * memory.events, memory.oom_control). Returns 0 with *val, -ENOENT when key is absent,
 * -EINVAL when its value is not a decimal u64.
 */
int cg_parse_kv(const char *buf, size_t len, const char *key, uint64_t *val);

/*
 * The session id a cgroup v2 path ("/sandgate/s1/sub") belongs to, given the session
 * prefix ("/sandgate"): copies "s1" into id. Returns 0, or -ENOENT when the path is not
 * below prefix or the id is not a valid session id.
 */
/*
 * The session of a process whose v2 cgroup is path: once the daemon registered its
 * sessions' cgroups (attribution/cgmap.h), the one whose cgroup is path or its deepest
 * registered ancestor, by cgroup id, whatever the names; before (tools), the leaf below
 * prefix. 0 with id set, or -ENOENT (id "").
 */
int session_of_cgpath(const char *path, const char *prefix, char *id, size_t idlen);
int session_id_from_cgpath(const char *path, size_t len, const char *prefix, char *id,
			   size_t idlen);

/*
 * The v2 path ("0::PATH" line) in /proc/PID/cgroup bytes, copied to out. 0, -ENOENT
 * when there is no such line, -ENAMETOOLONG when out is too small.
 */
int proc_cgroup_v2(const char *buf, size_t len, char *out, size_t outlen);

/* True when id is a valid session id (see SESSION_ID_MAX). */
bool session_id_valid(const char *id);

/* ---- cgroups --------------------------------------------------------------------- */

enum { CG_MEMORY = 1u << 0, CG_CPU = 1u << 1, CG_PIDS = 1u << 2 };

/* Where cgroups live on this host, detected once. */
struct cg_host {
	char v2root[256];      /* the v2 mount: /sys/fs/cgroup/unified or /sys/fs/cgroup */
	char v1root[256];      /* the directory holding v1 mounts: /sys/fs/cgroup */
	unsigned v1_mask;      /* controllers mounted as v1 hierarchies (hybrid host) */
	unsigned v2_mask;      /* controllers the v2 root offers */
};

/* Limits as requested; a negative or zero value means "none". */
struct session_limits {
	int64_t memory;        /* bytes */
	int64_t millicpus;     /* 1000 = one CPU */
	int64_t pids;
	int64_t disk;          /* bytes; measured by the limits watcher (warn or kill) */
	int64_t timeout_s;     /* seconds after start */
	int64_t net_rate;      /* bytes/second, both directions; the gateway's nft limit */
};

/* Detects the v1 controllers next to v2root and the v2 controllers. 0 or -errno. */
int cg_host_detect(struct cg_host *h, const char *v2root);

/*
 * Creates cgroup rel ("/sandgate/s1") in v2 and in every v1 controller that lim needs
 * (all v1 controllers the host has, so the pid cache and kills see the same set),
 * applies lim, and sets *v1_created. On failure everything made is removed and err
 * says which file refused. Returns 0, -EEXIST, or -errno.
 */
int cg_create(const struct cg_host *h, const char *rel, const struct session_limits *lim,
	      unsigned *v1_created, char *err, size_t errlen);
/* Removes rel from v2 and the v1 controllers in mask. 0, -EBUSY (still populated), -errno. */
int cg_remove(const struct cg_host *h, const char *rel, unsigned v1_mask, bool keep_v2);
/* Moves pid into rel in v2 and each v1 controller in mask. 0 or -errno. */
int cg_attach(const struct cg_host *h, const char *rel, unsigned v1_mask, pid_t pid);
/*
 * Freezes (on) or thaws rel through cgroup.freeze and waits until cgroup.events shows
 * the matching "frozen" value, at most timeout_ms. 0, -ETIMEDOUT (the request stays
 * written: the caller undoes it), or -errno.
 */
int cg_freeze(const struct cg_host *h, const char *rel, bool on, int timeout_ms);
/* Kills every process of rel (cgroup.kill; SIGKILL per pid where it is missing). */
int cg_kill(const struct cg_host *h, const char *rel);
/* Reads "populated" and "frozen" from rel's cgroup.events. 0 or -errno. */
int cg_events(const struct cg_host *h, const char *rel, bool *populated, bool *frozen);
/* The cgroup id (v2 inode number) nftables' `socket cgroupv2` matches. 0 or -errno. */
int cg_id(const struct cg_host *h, const char *rel, uint64_t *id);
/* OOM kills counted so far (v2 memory.events, v1 memory.oom_control). 0 or -errno. */
int cg_oom_kills(const struct cg_host *h, const char *rel, unsigned v1_mask, uint64_t *n);
/* The pids in rel (v2 cgroup.procs), malloc'd into *pids. 0 or -errno. */
int cg_pids(const struct cg_host *h, const char *rel, pid_t **pids, size_t *n);
/* Full path of file in rel's v2 directory ("" file: the directory). */
void cg_path(const struct cg_host *h, const char *rel, const char *file, char *out,
	     size_t len);

/* ---- resource limits: the counters behind resource.limit (limits_*.c) -------------- */

/* Memory: v2 memory.events + memory.peak; v1 memory.oom_control, memory.failcnt,
 * memory.max_usage_in_bytes. */
struct cg_mem_counters {
	uint64_t oom_kill;     /* processes the OOM killer took */
	uint64_t max_hits;     /* v2 "max" events; v1 failcnt (charges refused at the limit) */
	uint64_t peak;         /* bytes; 0: unknown */
};

/* cpu.stat: v2 throttled_usec, v1 throttled_time (ns, converted). */
struct cg_cpu_counters {
	uint64_t nr_periods, nr_throttled, throttled_us;
};

/* pids.events "max" (forks refused at pids.max, v1 and v2) and pids.peak/current. */
struct cg_pids_counters {
	uint64_t max_hits;
	uint64_t peak;         /* pids.peak, else pids.current; 0: unknown */
};

/* One OOM kill as the kernel log tells it. */
struct kmsg_oom {
	pid_t pid;
	char memcg[256];       /* task_memcg= of an "oom-kill:" line; "" for "Killed process" */
	char comm[17];         /* the victim's name as logged (escaped by the kernel) */
};

/* v2 memory.events: "max" and "oom_kill" (both needed). 0, -ENOENT, -EINVAL. */
int cg_parse_memory_events(const char *buf, size_t len, struct cg_mem_counters *c);
/* cpu.stat of either version: nr_throttled and the throttled time. 0, -ENOENT (no
 * bandwidth control: the cpu controller is off), -EINVAL. */
int cg_parse_cpu_stat(const char *buf, size_t len, struct cg_cpu_counters *c);
/* pids.events "max". 0, -ENOENT, -EINVAL. */
int cg_parse_pids_events(const char *buf, size_t len, uint64_t *max_hits);
/*
 * One /dev/kmsg record ("PRI,SEQ,TS,FLAGS;text\n KEY=VAL...") about an OOM kill: the
 * "oom-kill:...,task_memcg=PATH,task=COMM,pid=N,uid=N" summary (read from the right: a
 * task name may hold ",pid=") or "...: Killed process N (COMM) ...". 0, -ENOENT (another
 * message), -EINVAL (malformed).
 */
int kmsg_parse_oom(const char *buf, size_t len, struct kmsg_oom *out);

/*
 * The directory holding controller ctrl (CG_MEMORY...) for session cgroup rel: the v1
 * hierarchy when v1_mask has it, else the v2 directory when the v2 root offers it.
 * Returns 1 (v1), 0 (v2) or -ENOENT (no such controller for this session).
 */
int cg_ctrl_dir(const struct cg_host *h, const char *rel, unsigned v1_mask, unsigned ctrl,
		char *out, size_t len);
/* Reads the event counters of rel (not the peaks: cg_read_peak, only when something
 * rose). 0, -ENOENT (no controller), -errno. */
int cg_read_memory(const struct cg_host *h, const char *rel, unsigned v1_mask,
		   struct cg_mem_counters *c);
int cg_read_cpu(const struct cg_host *h, const char *rel, unsigned v1_mask,
		struct cg_cpu_counters *c);
int cg_read_pids(const struct cg_host *h, const char *rel, unsigned v1_mask,
		 struct cg_pids_counters *c);
/* The peak of ctrl (CG_MEMORY: bytes, v1 memory.max_usage_in_bytes, v2 memory.peak or
 * memory.current; CG_PIDS: pids.peak or pids.current). 0, -ENOENT, -errno. */
int cg_read_peak(const struct cg_host *h, const char *rel, unsigned v1_mask, unsigned ctrl,
		 uint64_t *peak);
/* The same files kept open: file of controller ctrl for rel (O_RDONLY). fd or -errno. */
int cg_open_ctrl(const struct cg_host *h, const char *rel, unsigned v1_mask, unsigned ctrl,
		 const char *file);
/* Reads small file fd afresh from offset 0 (NUL-terminated). 0 or -errno. */
int cg_pread(int fd, char *buf, size_t len, size_t *got);
/* A one-value file ("1234\n": memory.failcnt, pids.current). 0 or -EINVAL. */
int cg_parse_value(const char *buf, size_t len, uint64_t *v);
/*
 * Bytes allocated below dir (st_blocks, like du; symlinks not followed, other mounts
 * not entered), at most max_entries entries (*truncated then). 0 or -errno.
 */
int dir_usage(const char *dir, size_t max_entries, uint64_t *bytes, bool *truncated);

/* ---- sessions and the registry ----------------------------------------------------- */

enum session_state {
	SESSION_CREATED,
	SESSION_RUNNING,
	SESSION_PAUSED,
	SESSION_TERMINATED,
};

struct snapshot;

struct session {
	char id[SESSION_ID_MAX + 1];
	char *tenant, *user, *template_name, *policy, *workdir;   /* NULL: not given */
	char *ifaces[SESSION_IFACES_MAX];
	size_t n_ifaces;
	struct session_limits lim;
	enum session_state state;
	uint32_t mark;             /* 1..SESSION_MARK_MAX, stable for the session's life */
	char cgroup[256];          /* v2 path relative to the mount, "/sandgate/s1" */
	uint64_t cgroup_id;
	bool adopted;              /* --cgroup: not ours to remove at cleanup */
	unsigned v1_mask;          /* v1 controllers we created it in */
	int64_t created_us, started_us, ended_us;   /* wall clock; 0: not yet */
	char *end_reason;          /* terminate reason once terminated */
	int64_t exit_status;       /* -1: unknown */
	bool attached;             /* a process was moved in: "populated 0" now ends it */
	bool end_when_empty;       /* "populated 0" after a process ends it (else only
				    * terminate, timeout or a limit do) */
	bool privileged;           /* --privileged: its commands run without containment */
	uint64_t cap_add;          /* capabilities kept beyond contain_keep_default() */
	/* Runtime only, not persisted. */
	int wd;                    /* inotify watch on cgroup.events, -1 */
	bool populated;
	int64_t end_due_ms;        /* monotonic: finalise a populated-0 end then; 0 none */
	int64_t last_exit;         /* from session.report_exit; -1 none */
	int last_signal;
	uint64_t oom_base;         /* OOM kills counted at create/adopt */
	struct snapshot *snap;     /* taken at pause */
	bool nft_wanted;           /* its map elements belong in the ruleset */
	struct contain_holder holder;   /* pid 1 of its namespaces; pid 0: none yet */
};

struct session_reg;

/* An empty registry persisting to dir (STATE_DIR/sessions, created 0700). 0 or -errno. */
int sessions_new(struct session_reg **out, const char *dir);
/* Frees the registry and every session (nothing on disk changes). Accepts NULL. */
void sessions_free(struct session_reg *r);

const char *session_state_name(enum session_state s);

/* The session with id, or NULL. */
struct session *sessions_find(struct session_reg *r, const char *id);
/* The session whose inotify watch is wd, or NULL. */
struct session *sessions_find_wd(struct session_reg *r, int wd);
size_t sessions_count(const struct session_reg *r);
struct session *sessions_at(struct session_reg *r, size_t i);

/*
 * A new session with id (valid, unused) and the lowest free mark, not yet in the
 * registry. Free with session_free unless sessions_add took it. 0, -EINVAL, -EEXIST,
 * -ENOSPC (no free mark), -ENOMEM.
 */
int sessions_prepare(struct session_reg *r, const char *id, struct session **out);
/* Takes s into the registry. 0 or -ENOMEM (s not taken). */
int sessions_add(struct session_reg *r, struct session *s);
/* Removes s from the registry, deletes its file, frees it. */
void sessions_remove(struct session_reg *r, struct session *s);
void session_free(struct session *s);

/* Writes s's file atomically (temp file, fsync, rename). 0 or -errno. */
int sessions_save(struct session_reg *r, const struct session *s);
/*
 * Loads every STATE_DIR/sessions/ID.json into the registry. Files that do not parse are
 * renamed *.bad and counted in *bad. 0 or -errno.
 */
int sessions_load(struct session_reg *r, size_t *bad);

/* s as the JSON object `session show` prints and the registry file holds. */
json_t *session_to_json(const struct session *s);
/* s's "containment" object: {mode, privileged, cap_add: [names]}. */
json_t *session_containment_json(const struct session *s);
/* Parses a registry file's object (untrusted: checked). 0, -EINVAL, -ENOMEM. */
int session_from_json(const json_t *o, struct session **out);

/* ---- pid -> session cache -------------------------------------------------------- */

struct pidcache;

/* A cache of at most cap entries. 0 or -ENOMEM. */
int pidcache_new(struct pidcache **out, size_t cap);
void pidcache_free(struct pidcache *c);
/*
 * The session of pid: a hit needs the same (pid, start time), so a reused pid is never
 * taken for the old process; a miss reads /proc/PID/cgroup and matches prefix. Copies
 * the id into id ("" when pid is in no session). 0, -ESRCH (no such process), -errno.
 */
int pidcache_lookup(struct pidcache *c, const char *prefix, pid_t pid, char *id,
		    size_t idlen);
/* Fork/exec hint from the audit module: child inherits parent's session. 0 or -errno. */
int pidcache_fork(struct pidcache *c, const char *prefix, pid_t parent, pid_t child);
/* Forgets pid (it exited). */
void pidcache_forget(struct pidcache *c, pid_t pid);
/* Drops every entry of session id (cleanup). */
void pidcache_forget_session(struct pidcache *c, const char *id);

/* ---- pause snapshot (changed_while_paused) ------------------------------------------ */

#define SNAPSHOT_MAX_FILES 20000   /* entries walked; more: "truncated" */
#define SNAPSHOT_MAX_LIST 100      /* paths listed per kind in the event */

/* Takes a snapshot of workdir's files (NULL: none) and of rel's processes. 0 or -errno. */
int snapshot_take(const struct cg_host *h, const char *rel, const char *workdir,
		  struct snapshot **out);
void snapshot_free(struct snapshot *s);

struct event;
/*
 * Compares before with a fresh snapshot and writes the changed_while_paused object
 * into e under key: files {modified, created, deleted, truncated}, processes {appeared,
 * vanished}. Counts go to *nfiles / *nprocs. 0 or -errno (e untouched on error).
 */
int snapshot_diff_emit(const struct snapshot *before, const struct cg_host *h,
		       const char *rel, const char *workdir, struct event *e,
		       const char *key, size_t *nfiles, size_t *nprocs);

/* ---- tool invocations: redaction and the detail store --------------------------------- */

#define REDACT_SUMMARY_MAX 1024     /* bytes kept of a summary after redaction */
#define REDACT_INPUT_MAX (64 * 1024)

/*
 * Copies in[0..len) into a new string with secrets replaced by "[REDACTED:kind]":
 * cloud keys (AWS, GCP, Azure), GitHub/GitLab/Slack/Stripe/OpenAI-style tokens, JWTs,
 * bearer/basic authorization, private key blocks, passwords in URLs, and
 * password/secret/token assignments. Then truncates to max bytes (at a UTF-8
 * boundary), setting *truncated. *nredacted counts replacements. Returns the string or
 * NULL when out of memory. Inputs above REDACT_INPUT_MAX are cut first (truncated).
 */
char *redact_summary(const char *in, size_t len, size_t max, bool *truncated,
		     size_t *nredacted);

/*
 * Stores data in dir (created 0700) as a 0600 file named by its SHA-256, and writes the
 * lowercase hex into hex. Storing the same bytes twice is one file. 0 or -errno.
 */
int detail_put(const char *dir, const void *data, size_t len, char hex[65]);
/* Reads the detail named hex (64 lowercase hex digits). 0, -EINVAL, -ENOENT, -errno. */
int detail_get(const char *dir, const char *hex, char **data, size_t *len);

#endif
