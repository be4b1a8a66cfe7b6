/*
 * Session mark id -> session id, for the packet path. The session registry belongs to
 * the main thread; this small table is what the NFQUEUE and conntrack threads read. The
 * main thread sets an entry before the session's nft elements exist (so its first packet
 * finds it) and removes it after they are gone. Thread-safe (a rwlock inside).
 */
#ifndef SANDGATE_GATEWAY_MARKTAB_H
#define SANDGATE_GATEWAY_MARKTAB_H

#include <stddef.h>
#include <stdint.h>

#define MARKTAB_ID_MAX 64    /* bytes of a session id, as SESSION_ID_MAX */
#define MARKTAB_CG_MAX 512   /* bytes of a session's cgroup directory */
#define MARKTAB_POLICY_MAX 127   /* bytes of a policy name */

struct marktab;

/* An empty table. 0 or -ENOMEM. */
int marktab_new(struct marktab **out);
/* Frees t; accepts NULL. */
void marktab_free(struct marktab *t);
/*
 * Maps mark id (1..0xFFFFF) to session id sid and its cgroup directory cgdir (NULL or ""
 * when unknown), replacing an older mapping of id. 0, -EINVAL (id 0 or too big, sid
 * empty or longer than MARKTAB_ID_MAX, cgdir longer than MARKTAB_CG_MAX), -ENOMEM.
 */
int marktab_set(struct marktab *t, uint32_t id, const char *sid, const char *cgdir);
/* Removes id's mapping; 0, or -ENOENT when there was none. */
int marktab_del(struct marktab *t, uint32_t id);
/*
 * Copies the session id of mark id into out (cap bytes). 0, -ENOENT when id is not
 * mapped, -ENOSPC when cap is too small.
 */
int marktab_get(struct marktab *t, uint32_t id, char *out, size_t cap);
/* Copies the cgroup directory of mark id into out. 0, -ENOENT (unmapped or unknown),
 * -ENOSPC. */
int marktab_get_cgroup(struct marktab *t, uint32_t id, char *out, size_t cap);
/*
 * The policy name of mark id's session (NULL or "": the default policy); a new mapping
 * starts with "". 0, -ENOENT (unmapped), -EINVAL (longer than MARKTAB_POLICY_MAX).
 */
int marktab_set_policy(struct marktab *t, uint32_t id, const char *policy);
/* Copies the policy name of mark id ("" the default) into out. 0, -ENOENT, -ENOSPC. */
int marktab_get_policy(struct marktab *t, uint32_t id, char *out, size_t cap);
/* Number of mappings. */
size_t marktab_count(struct marktab *t);
/*
 * Holders of a mark over time. A mark id is given to another session after cleanup,
 * while conntrack may still hold the earlier session's entries (TIME_WAIT lasts 120 s,
 * an established entry days): an entry belongs to the session that held the mark when
 * it began, never to a later holder. marktab_del keeps the ended mapping (with its end
 * time; the last MARKTAB_RETIRED per id); a new mapping of an id that had one starts at
 * its marktab_set (the first one of this process: at 0, it claims every older entry),
 * or at marktab_set_since's time (the session's creation, say after a restart).
 * Times are CLOCK_REALTIME nanoseconds, conntrack's timestamp clock.
 */
#define MARKTAB_RETIRED 4
/* Sets when the current mapping of id began. 0, -ENOENT (unmapped). */
int marktab_set_since(struct marktab *t, uint32_t id, int64_t since_ns);
/*
 * Copies the session id that held mark id at at_ns (0: now, the current one) into out.
 * 0, -ENOENT (no holder then: a mapping this process never knew), -ENOSPC.
 */
int marktab_get_at(struct marktab *t, uint32_t id, int64_t at_ns, char *out, size_t cap);

#endif
