/*
 * The gateway's nftables ruleset: `table inet sandgate`, built with libnftnl and
 * installed in one atomic netlink batch; session map elements added and removed in
 * their own small batches; the same ruleset rendered as nft text.
 *
 * Layout and reasoning: docs/nft-ruleset.md. Every function returns 0 or -errno and
 * never logs. The handle's names carry the `nft_` module prefix but avoid
 * `nft_ctx_new`/`nft_ctx_free`, which libnftables already exports.
 */
#ifndef SANDGATE_NFT_NFT_H
#define SANDGATE_NFT_NFT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Mark layout (packet mark and ct mark alike, 32 bits):
 *
 *   31      24 23  22 21  20 19                 0
 *   +---------+------+------+--------------------+
 *   | tag 0x53| rsv 0| vrd  | session id         |
 *   +---------+------+------+--------------------+
 *
 * The tag says "sandgate wrote this mark", so a flow marked by another ruleset
 * (kube-proxy's 0x4000, Docker, ...) is never mistaken for a session flow. The
 * verdict field starts undecided; the NFQUEUE worker sets allow or deny in the packet
 * mark of its verdict and the ruleset copies it to the ct mark.
 */
#define NFT_MARK_ID_MASK      0x000FFFFFu
#define NFT_MARK_VERDICT_MASK 0x00300000u
#define NFT_MARK_RSV_MASK     0x00C00000u
#define NFT_MARK_TAG_MASK     0xFF000000u
#define NFT_MARK_TAG          0x53000000u
#define NFT_MARK_UNDECIDED    0x00000000u
#define NFT_MARK_ALLOW        0x00100000u
#define NFT_MARK_DENY         0x00200000u
#define NFT_SESSION_ID_MAX    NFT_MARK_ID_MASK

/* The undecided session mark for session id (1..NFT_SESSION_ID_MAX), or 0 if invalid. */
static inline uint32_t nft_mark_make(uint32_t id)
{
	if (id == 0 || id > NFT_SESSION_ID_MAX)
		return 0;
	return NFT_MARK_TAG | id;
}

/* True when mark was written by sandgate and names a session. */
static inline bool nft_mark_is_session(uint32_t mark)
{
	return (mark & NFT_MARK_TAG_MASK) == NFT_MARK_TAG && (mark & NFT_MARK_ID_MASK) != 0;
}

/* The session id in mark (0 when mark is not a session mark). */
static inline uint32_t nft_mark_id(uint32_t mark)
{
	return nft_mark_is_session(mark) ? mark & NFT_MARK_ID_MASK : 0;
}

/* The verdict field of mark: NFT_MARK_UNDECIDED, NFT_MARK_ALLOW or NFT_MARK_DENY. */
static inline uint32_t nft_mark_verdict(uint32_t mark)
{
	return mark & NFT_MARK_VERDICT_MASK;
}

/* mark with its verdict field replaced by verdict (one of NFT_MARK_ALLOW/DENY/UNDECIDED). */
static inline uint32_t nft_mark_with_verdict(uint32_t mark, uint32_t verdict)
{
	return (mark & ~NFT_MARK_VERDICT_MASK) | (verdict & NFT_MARK_VERDICT_MASK);
}

/* 0 when mark is a valid undecided session mark (what maps hold), else -EINVAL. */
int nft_mark_check(uint32_t mark);

/* How packets reach NFQUEUE. */
enum nft_qimpl {
	NFT_QIMPL_AUTO = 0,   /* probe at install: native if the kernel has it, else compat */
	NFT_QIMPL_NATIVE,     /* nft `queue` expression (CONFIG_NFT_QUEUE) */
	NFT_QIMPL_COMPAT,     /* xtables NFQUEUE target rev 3 through nft_compat */
};

/* Name of impl ("auto", "native", "compat"). */
const char *nft_qimpl_name(enum nft_qimpl impl);
/* Parses "auto"/"native"/"compat" into *impl; 0 or -EINVAL. */
int nft_qimpl_parse(const char *s, enum nft_qimpl *impl);

/*
 * What to install. Initialise with nft_options_init(), then override; the daemon
 * fills netns, queue_base, queue_count and fail_open from gateway.* in its config.
 * gateway.mode gives cgroup_mode/iface_mode, config_cgroup_level() the cgroup level.
 * TODO(config): keys still missing in daemon/config.h: gateway.fanout, gateway.queue_impl.
 */
struct nft_options {
	const char *netns;        /* name under /run/netns, an absolute path, or NULL */
	uint16_t queue_base;      /* first NFQUEUE number */
	uint16_t queue_count;     /* queues base..base+count-1, spread by flow hash */
	bool fail_open;           /* bypass: accept when no program is bound (NOT default) */
	bool fanout;              /* spread by CPU instead of flow hash */
	bool cgroup_mode;         /* classify local sockets by cgroup (output hook) */
	bool iface_mode;          /* classify arriving packets by interface (prerouting) */
	uint32_t cgroup_level;    /* depth of session cgroups below the cgroup v2 root */
	enum nft_qimpl qimpl;     /* AUTO probes */
};

/* Defaults: own netns, queues 100..101, fail closed, both modes, cgroup level 2, auto. */
void nft_options_init(struct nft_options *o);
/* 0 when o is consistent, -EINVAL otherwise (queue range, level 1..255, a mode, netns name). */
int nft_options_check(const struct nft_options *o);

/* One session's attribution, as held in the maps. */
struct nft_session {
	uint32_t mark;                 /* nft_mark_make(id) */
	uint64_t cgroup_id;            /* cgroup v2 inode id; 0 = no cgroup element */
	const char *const *ifnames;    /* interfaces arriving from the sandbox */
	size_t n_ifnames;
	uint64_t rate_bytes;           /* --net-rate, bytes/second; 0 = no limit */
};

/* The highest --net-rate (bytes/second): 1 Tbit/s. */
#define NFT_RATE_MAX 125000000000ull

struct nft_handle;

/*
 * Opens a netfilter netlink socket (inside /run/netns/<o->netns>, or the path when
 * it is absolute: a
 * short-lived thread enters the namespace, so the caller's threads never move) and
 * copies o. Returns 0 and *out, or -errno (-EINVAL for bad options, -ENOENT for a
 * missing namespace, -EPERM without CAP_NET_ADMIN).
 */
int nft_open(const struct nft_options *o, struct nft_handle **out);
/* Closes the socket and frees h. Accepts NULL. Leaves the installed table in place. */
void nft_close(struct nft_handle *h);

/*
 * Probes whether the kernel has the native nft `queue` expression by committing a
 * throwaway table that is deleted in the same batch. *found = NFT_QIMPL_NATIVE or
 * NFT_QIMPL_COMPAT. Returns 0 or -errno (the probe itself failed).
 */
int nft_probe_queue(struct nft_handle *h, enum nft_qimpl *found);

/*
 * Installs table inet sandgate, replacing any previous one, with the n sessions in
 * its maps, all in one batch: the old table stays untouched if anything fails.
 * Probes the queue implementation on the first call when options say AUTO.
 * Returns 0 or -errno: the first error the kernel reported; -ENOBUFS when ACKs were
 * lost (the batch applied entirely or not at all: re-install, it is idempotent);
 * -ETIMEDOUT when the kernel did not answer.
 */
int nft_install(struct nft_handle *h, const struct nft_session *s, size_t n);
/* Deletes table inet sandgate; 0 also when it was not there, else -errno. */
int nft_uninstall(struct nft_handle *h);
/* The queue implementation the last install used (AUTO before any install). */
enum nft_qimpl nft_installed_qimpl(const struct nft_handle *h);

/*
 * Adds s to the session maps (cgroup id when non-zero, each interface) in one batch;
 * nothing else in the table changes. Returns 0, -EINVAL for a bad mark or interface
 * name, -EEXIST when a key is already mapped to another session, or -errno.
 */
int nft_session_add(struct nft_handle *h, const struct nft_session *s);
/*
 * Removes s's elements in one batch. Returns 0, -ENOENT when one of them is absent
 * (then none is removed), or -errno.
 */
int nft_session_del(struct nft_handle *h, const struct nft_session *s);

/*
 * The drops of s's rate limit so far (its counter object drops_ID), read from the
 * kernel. Returns 0, -ENOENT when the session has no rate limit installed, or -errno.
 */
int nft_rate_drops(struct nft_handle *h, uint32_t mark, uint64_t *pkts, uint64_t *bytes);
/* One session's drops, as nft_rate_drops_all() lists them. */
struct nft_rate_drops {
	uint32_t mark;                 /* nft_mark_make(id) */
	uint64_t pkts, bytes;
};
/*
 * Every session's drops in one netlink dump (what the limits watcher reads each tick,
 * instead of one request per session). *out is malloc'ed (free it; NULL when *n is 0).
 * Returns 0 or -errno.
 */
int nft_rate_drops_all(struct nft_handle *h, struct nft_rate_drops **out, size_t *n);
/*
 * The flood limit of one session (nft_flood.c, docs/nft-ruleset.md "Flood limit"):
 * its DNS queries and the packets of its undecided flows pass to the queue only within
 * pkts_per_s (a bucket one second deep); the rest is rejected in the kernel and counted
 * in counter floodc_ID. nft_flood_add: 0, -EEXIST (already limited), -EINVAL or -errno.
 * nft_flood_del: 0, -ENOENT (not limited) or -errno.
 */
int nft_flood_add(struct nft_handle *h, uint32_t mark, uint32_t pkts_per_s);
int nft_flood_del(struct nft_handle *h, uint32_t mark);
/* Every limited session's counter (pkts: packets rejected so far), in one dump, as
 * nft_rate_drops_all. 0 or -errno. */
int nft_flood_drops_all(struct nft_handle *h, struct nft_rate_drops **out, size_t *n);
/*
 * Parses a rate: a positive number and a unit, optionally followed by "/s": bit, kbit,
 * mbit, gbit (powers of 1000 bits) or bytes, kbytes, mbytes, gbytes (powers of 1024
 * bytes, as nft writes them): "1mbit" = 125000, "100kbytes" = 102400 bytes/second.
 * Returns 0, -EINVAL (no unit or not a number) or -ERANGE (below 1 byte/s or above
 * NFT_RATE_MAX).
 */
int nft_rate_parse(const char *s, uint64_t *bytes_per_s);

/*
 * Writes the ruleset nft_install() builds for o as nft text. impl says which queue
 * statement is installed (NATIVE or COMPAT; AUTO renders native with a note that the
 * kernel was not probed). Returns 0, -EINVAL for bad options, or -EIO on write error.
 */
int nft_render(const struct nft_options *o, enum nft_qimpl impl, FILE *out);

/*
 * Watching table inet sandgate for changes made by others (nft_watch.c,
 * docs/nft-ruleset.md "Tamper watch"). One change kind, merged with its repeats.
 */
struct nft_change {
	const char *op;           /* "add", "delete" (static strings) */
	const char *object;       /* "table", "chain", "rule", "set", "element", "object", "flowtable" */
	char name[64];            /* the chain of a rule, the set of elements, else its own name */
	uint32_t count;
};
#define NFT_WATCH_CHANGES_MAX 32

/* One commit to our table that the daemon did not make. */
struct nft_tamper {
	uint32_t gen_id;          /* the ruleset generation it created */
	int32_t pid;              /* committing thread as the kernel names it (NFTA_GEN_PROC_PID); -1 unknown */
	char comm[17];            /* its comm (NFTA_GEN_PROC_NAME); "" unknown */
	uint32_t portid;          /* netlink port id of the committing socket */
	struct nft_change changes[NFT_WATCH_CHANGES_MAX];
	size_t n_changes;
	uint64_t more;            /* changes of kinds beyond NFT_WATCH_CHANGES_MAX */
	uint64_t total;           /* object notifications in the commit */
	bool lost;                /* notifications were lost: what changed is unknown */
};
typedef void (*nft_tamper_fn)(void *ctx, const struct nft_tamper *t);

struct nft_watch;

/*
 * A socket in the namespace netns (as nft_open) subscribed to nftables notifications.
 * 0 or -errno. nft_watch_new: the same without a socket (for nft_watch_feed alone).
 */
int nft_watch_open(const char *netns, struct nft_watch **out);
int nft_watch_new(struct nft_watch **out);
void nft_watch_free(struct nft_watch *w);
/* The socket to poll for input; -1 without one. */
int nft_watch_fd(const struct nft_watch *w);
/* Commits from this port id are the daemon's own (besides any of its threads). 0 or -ENOSPC. */
int nft_watch_own_portid(struct nft_watch *w, uint32_t portid);
/* The port id of h's socket, for nft_watch_own_portid. */
uint32_t nft_handle_portid(const struct nft_handle *h);
/*
 * Reads every pending notification and calls fn once per foreign commit to our table,
 * and once (t->lost) when the kernel dropped notifications. 0 or -errno.
 */
int nft_watch_read(struct nft_watch *w, nft_tamper_fn fn, void *ctx);
/* Parses len bytes of notifications as nft_watch_read does (no I/O of its own). 0. */
int nft_watch_feed(struct nft_watch *w, const void *buf, size_t len, nft_tamper_fn fn,
		   void *ctx);

#endif
