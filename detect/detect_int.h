/* Internals shared by the detect part: compiled conditions, templates, rules, state. */
#ifndef SANDGATE_DETECT_DETECT_INT_H
#define SANDGATE_DETECT_DETECT_INT_H

#include <jansson.h>
#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "detect/detect.h"

/* ---- conditions (detect/cond.c) ------------------------------------------------------ */

enum cop {
	OP_EQ, OP_NE, OP_IN, OP_GLOB, OP_REGEX, OP_GT, OP_GE, OP_LT, OP_LE,
	OP_CONTAINS, OP_PREFIX, OP_EXISTS, OP_EQ_FIELD, OP_NE_FIELD,
};
enum lit_type { LIT_STR, LIT_NUM, LIT_BOOL, LIT_NULL };

struct lit {
	enum lit_type t;
	char *s;                 /* LIT_STR (also the text of a number, for string fields) */
	double num;              /* LIT_NUM */
	bool b;                  /* LIT_BOOL; OP_EXISTS */
};

/* A dotted field path, split once ("dst.port" -> "dst", "port"). "session." paths look
 * at what session.create said about the event's session. */
struct fpath {
	char **parts;
	size_t n;
};

enum cnode_kind { CN_ALL, CN_ANY, CN_NOT, CN_TEST };
/* Globs that are "*x", "x*", "*x*" or "x" (no ? [ \\) are compared as strings. */
enum { GLOB_FN, GLOB_SUFFIX, GLOB_PREFIX, GLOB_INFIX, GLOB_EXACT };

struct cnode {
	enum cnode_kind kind;
	struct cnode **kids;     /* CN_ALL, CN_ANY, CN_NOT (one) */
	size_t n;
	struct fpath f;          /* CN_TEST */
	enum cop op;
	struct lit *lits;        /* one, or the list of OP_IN */
	size_t nlits;
	regex_t re;              /* OP_REGEX */
	bool has_re;
	int glob_kind;           /* OP_GLOB: GLOB_FN (fnmatch) or a plain-string fast path */
	const char *glob_lit;    /* the literal part of lits[0].s (GLOB_SUFFIX...) */
	size_t glob_len;
	struct fpath f2;         /* OP_EQ_FIELD, OP_NE_FIELD */
};

/* What a condition is evaluated on: the event, and its session's facts (or NULL). */
struct eval_ctx {
	json_t *ev;
	json_t *session;
};

bool cond_eval(const struct cnode *c, const struct eval_ctx *x);
void cond_free(struct cnode *c);
/* The value at path f (NULL when missing). */
json_t *field_get(const struct fpath *f, const struct eval_ctx *x);
int fpath_parse(const char *s, struct fpath *f);
void fpath_free(struct fpath *f);

/* ---- templates (detect/template.c) ------------------------------------------------- */

struct tseg {
	char *text;              /* literal text, or NULL */
	struct fpath f;          /* a {field} */
};
struct tmpl {
	struct tseg *segs;
	size_t n;
};

/* Compiles "text {field.path} text"; "{{" and "}}" are literal braces. 0, -EINVAL with
 * *why, -ENOMEM. */
int tmpl_compile(const char *s, struct tmpl *t, const char **why);
/* Renders into a malloc'd string (NULL: out of memory). */
char *tmpl_render(const struct tmpl *t, const struct eval_ctx *x);
void tmpl_free(struct tmpl *t);

/* ---- rules (detect/rules_load.c) --------------------------------------------------- */

enum det_kind {
	DET_NONE, DET_PIPE_SHELL, DET_EXFIL, DET_CLEANUP, DET_BURST, DET_FIRST_DOMAIN,
	DET_DOWNLOADED_EXEC,
};

struct drule {
	char *id;
	char *file;
	unsigned line;
	const char *severity;    /* static */
	char **events;           /* event types this rule looks at; none: every type */
	uint32_t *event_h;       /* their event_hash(), compared before the strings */
	size_t n_events;
	struct cnode *cond;      /* NULL: always true */
	struct tmpl summary;
	char **tags;
	size_t n_tags;
	enum det_kind det;
	uint64_t window_ms;      /* detectors */
	unsigned threshold;      /* detectors */
	char **list_a;           /* pipe_to_shell: downloaders */
	size_t n_a;
	char **list_b;           /* pipe_to_shell: shells */
	size_t n_b;
};

struct detect_rules {
	struct drule *v;
	size_t n;
};

uint32_t event_hash(const char *s);
bool rule_wants(const struct drule *r, const char *event, uint32_t h);

/* ---- detectors (detect/detectors.c, detect/pipeshell.c, detect/domains.c) ----------- */

#define SESS_PROCS 512     /* pid -> parent, per session, most recent */
#define SESS_RING 128      /* recent trigger events per detector rule and session */

struct proc_ent {
	int64_t pid, ppid;
	uint64_t seq;
};

struct ring_ent {
	uint64_t seq;
	int64_t ts_us;
	int64_t pid;
	char note[96];         /* a path or a command, for the summary */
	int64_t ppid;
	char in[192], out[192]; /* pipe_to_shell: "pipe:[N]" or "file:PATH" of stdin /
				 * stdout, or ""; downloaded_exec: out is the file's path */
	int role;              /* pipe_to_shell: 1 downloader, 2 shell reading stdin */
};

/* State of one detector rule in one session. */
struct det_state {
	struct ring_ent ring[SESS_RING];
	size_t head, n;
};

struct rate_ent {
	int64_t start_us;
	unsigned count;
	uint64_t suppressed;
};

struct sess {
	char *sid;               /* "" for host-level events */
	json_t *info;            /* {"tenant_id":..,"user_id":..,"template":..} */
	struct proc_ent procs[SESS_PROCS];
	size_t procs_head, n_procs;
	struct det_state **det;  /* per rule index, allocated on first use */
	struct rate_ent *rate;   /* per rule index */
	size_t n_rules;
	struct sess *next;       /* hash chain */
	struct sess *older, *newer;
};

struct domain_set;
int domains_open(struct domain_set **out, const char *state_dir);
/* 1 when tenant had not reached domain before (now recorded), 0 when known. */
int domains_add(struct domain_set *s, const char *tenant, const char *domain);
int domains_flush(struct domain_set *s);
void domains_free(struct domain_set *s);

/* A detector found something: refs, and extra fields for the summary. */
struct det_hit {
	uint64_t refs[DETECT_MAX_REFS];
	size_t n_refs;
	json_t *extra;           /* object merged over the event for the template; owned */
};

struct engine_view {
	struct sess *s;
	size_t rule_idx;
	size_t n_rules;
	const struct drule *r;
	struct domain_set *domains;
	int64_t ts_us;
	uint64_t seq;
	const char *event;
};

/* Returns 1 with *hit filled, 0 nothing, -ENOMEM. */
int det_run(const struct engine_view *v, const struct eval_ctx *x, bool matched,
	    struct det_hit *hit);
/* downloaded_exec (detect/dlexec.c): a file written by a process with network activity,
 * then executed. Same returns. */
int det_dlexec(const struct engine_view *v, const struct eval_ctx *x, struct det_hit *hit);
/* pipe_to_shell: classify an exec and look for a pair. Same returns. */
int det_pipe(const struct engine_view *v, const struct eval_ctx *x, struct det_hit *hit);
/* The rule's ring in the event's session; with create, allocated on first use (NULL:
 * out of memory), else NULL when there is none yet. */
struct det_state *det_state_of(const struct engine_view *v, bool create);
/* Rings (detect/detectors.c): push the current event; the k-th most recent (k >= 1). */
struct ring_ent *ring_push(struct det_state *st, const struct engine_view *v, int64_t pid,
			   const char *note);
struct ring_ent *ring_at(struct det_state *st, size_t k);
/*
 * Entry e is within the rule's window before the current event. Ring entries came before
 * it in the journal, but their times may be a little later than its own: an exec's time
 * is the kernel's, a file or network event's the moment its sensor read it, so a file
 * written and then executed can carry a time after the exec's under load. Up to
 * RING_SKEW_US of that counts as before.
 */
#define RING_SKEW_US 2000000
bool ring_live(const struct engine_view *v, const struct ring_ent *e);
/* Adds trigger to the refs if missing and sorts them. */
void det_finish_refs(struct det_hit *hit, uint64_t trigger);
/* Sizes the per-rule arrays of a session for n rules (detect/session_state.c). 0, -ENOMEM. */
int sess_alloc_rules(struct sess *s, size_t n);
void sess_note_exec(struct sess *s, const struct eval_ctx *x, uint64_t seq);
const struct proc_ent *sess_proc(const struct sess *s, int64_t pid);
void det_state_free(struct det_state **d, size_t n);

#endif
