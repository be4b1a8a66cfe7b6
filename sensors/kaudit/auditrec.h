/*
 * The Linux audit subsystem's record text, as NETLINK_AUDIT delivers it (the payload
 * after the nlmsghdr; auditd's log prefixes "type=T msg="): "audit(SEC.MSEC:SERIAL):
 * key=value ...". Values are "quoted" text, bare tokens, or hex when the kernel chose to
 * encode them (EXECVE arguments holding spaces, quotes, control or non-ASCII bytes).
 * Pure code, used by the audit exec source (sensors/kaudit/auditsrc.c, docs/audit.md).
 * The text comes from the kernel but carries what a sandboxed process chose (its
 * arguments), so nothing here trusts it.
 */
#ifndef SANDGATE_SENSORS_KAUDIT_AUDITREC_H
#define SANDGATE_SENSORS_KAUDIT_AUDITREC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Record types (linux/audit.h). */
#define AUDITREC_SYSCALL 1300
#define AUDITREC_CONFIG_CHANGE 1305
#define AUDITREC_CWD 1307
#define AUDITREC_EXECVE 1309
#define AUDITREC_EOE 1320

/*
 * Parses the "audit(SEC.MSEC:SERIAL): " head of s[0..len); an auditd log line's
 * "type=T msg=" prefix is skipped. 0 with the serial, the time in ms and the offset of
 * the first key, or -EINVAL.
 */
int auditrec_head(const char *s, size_t len, uint64_t *serial, uint64_t *ms, size_t *body);

struct auditrec_kv {
	const char *key, *val;       /* val excludes the quotes of a quoted value */
	size_t klen, vlen;
	bool quoted;
};

/* The next key=value from *off in s[0..len). 1 (kv set, *off advanced), 0 at the end,
 * -EINVAL when malformed (an unterminated quote, a key without '='). */
int auditrec_next(const char *s, size_t len, size_t *off, struct auditrec_kv *kv);

/*
 * Decodes a value into out (room for kv->vlen bytes): quoted and bare values as they are,
 * hex (the unquoted form of an encoded argument) into bytes. *outlen set. 0 or -EINVAL
 * (odd length or a non-hex digit in an encoded value).
 */
int auditrec_decode(const struct auditrec_kv *kv, bool hex, char *out, size_t *outlen);

/*
 * EXECVE records of one event, joined: "argc=N a0=.. a1=.." and, for a long argument,
 * "aI_len=L" followed by "aI[0]=.." "aI[1]=.." pieces (possibly in later records).
 * Arguments are kept up to max bytes in all; beyond, truncated is set.
 */
struct auditrec_arg {
	char *b;                     /* malloc'd bytes (not NUL-terminated); NULL: none yet */
	size_t len;
	size_t enc_want, enc_got;    /* aI_len= and the encoded bytes of pieces so far */
	bool seen, pieces;
};

struct auditrec_execve {
	uint32_t argc;               /* from argc=; 0 until seen */
	struct auditrec_arg *a;      /* argc slots */
	size_t total, max;
	bool truncated;
};

void auditrec_execve_init(struct auditrec_execve *e, size_t max);
void auditrec_execve_free(struct auditrec_execve *e);
/* Feeds the key=value body of one EXECVE record. 0, -EINVAL (malformed) or -ENOMEM. */
int auditrec_execve_feed(struct auditrec_execve *e, const char *body, size_t len);
/* Whether argc was seen and every argument arrived. */
bool auditrec_execve_complete(const struct auditrec_execve *e);

#endif
