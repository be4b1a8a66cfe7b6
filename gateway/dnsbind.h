/*
 * Per-session name bindings: an address a session learnt from a DNS answer, bound to the
 * name it asked for, until the answer's TTL (clamped by the caller) runs out. It feeds
 * net.connect.domain now and the policy's "IPs learnt from an allowed answer" later.
 * Pure and single-threaded: the gateway holds its lock around every call. Time is given
 * by the caller (monotonic ms), so tests control it.
 */
#ifndef SANDGATE_GATEWAY_DNSBIND_H
#define SANDGATE_GATEWAY_DNSBIND_H

#include <stddef.h>
#include <stdint.h>

#define DNSBIND_NAME_MAX 254   /* a normalised name is at most 253 characters */
#define DNSBIND_NAMES_PER_ADDR 8   /* names one address keeps (more: the first to expire goes) */

struct dnsbind;

/* An empty table holding at most cap bindings. 0 or -ENOMEM (-EINVAL for cap 0). */
int dnsbind_new(size_t cap, struct dnsbind **out);
/* Frees b; accepts NULL. */
void dnsbind_free(struct dnsbind *b);
/*
 * Binds (session mark id, family, addr) to name until expire_ms. One address keeps
 * several names (two allowed names served by one address), each with its own expiry; the
 * same name again refreshes its expiry; past DNSBIND_NAMES_PER_ADDR names the one
 * expiring first is replaced. cap counts addresses. The owner drops expired entries with
 * dnsbind_expire (periodically). 0, -EINVAL (bad family, name empty or too long), -ENOSPC (full), -ENOMEM.
 */
int dnsbind_add(struct dnsbind *b, uint32_t id, int family, const uint8_t *addr,
		const char *name, int64_t expire_ms);
/*
 * The latest name bound to (id, family, addr) at now_ms, copied to out (cap bytes).
 * 0, -ENOENT (none, or expired: then dropped), -ENOSPC (cap too small).
 */
int dnsbind_lookup(struct dnsbind *b, uint32_t id, int family, const uint8_t *addr,
		   int64_t now_ms, char *out, size_t cap);
/*
 * Every name bound to (id, family, addr) at now_ms, at most max, copied into out.
 * Returns how many (0: none).
 */
size_t dnsbind_names(struct dnsbind *b, uint32_t id, int family, const uint8_t *addr,
		     int64_t now_ms, char out[][DNSBIND_NAME_MAX], size_t max);
/* Drops every binding of session mark id (the session is gone; its mark may be reused). */
void dnsbind_forget(struct dnsbind *b, uint32_t id);
/* Drops bindings expired at now_ms; returns how many. */
size_t dnsbind_expire(struct dnsbind *b, int64_t now_ms);
/* Bindings held. */
size_t dnsbind_count(const struct dnsbind *b);

#endif
