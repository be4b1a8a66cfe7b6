/*
 * Which session a cgroup belongs to, by the cgroups the sessions registered (their own
 * or one adopted with --cgroup: a container's scope, a systemd slice), never by a
 * cgroup's name. A process belongs to the session whose cgroup is its own v2 cgroup or
 * an ancestor of it (the deepest one); the match stands only while the cgroup at that
 * path still has the id (inode) the session recorded, so a cgroup removed and made
 * again under the same name is no longer the session's.
 *
 * One map per process, shared by every thread that attributes (the audit sensors, the
 * control socket, the daemon's loop): readers take a read lock. Until cgmap_activate
 * is called (tools, unit tests) nothing is registered and callers fall back to the
 * session parent's naming (session_id_from_cgpath).
 */
#ifndef SANDGATE_ATTRIBUTION_CGMAP_H
#define SANDGATE_ATTRIBUTION_CGMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The v2 mount (/sys/fs/cgroup/unified or /sys/fs/cgroup): from now on the map decides. */
void cgmap_activate(const char *v2root);
bool cgmap_active(void);
/* Registers (or replaces) session sid's cgroup: v2 path from the mount, its id. 0, -EINVAL, -ENOMEM. */
int cgmap_put(const char *sid, const char *path, uint64_t id);
void cgmap_del(const char *sid);
/*
 * The session of a process whose v2 cgroup is path (as /proc/PID/cgroup's "0::" line
 * says). 0 with sid set, -ENOENT when none (sid ""), -ENAMETOOLONG.
 */
int cgmap_resolve(const char *path, char *sid, size_t sidlen);
/* The session whose cgroup is path, or an ancestor or descendant of it ("" none). */
int cgmap_overlap(const char *path, char *sid, size_t sidlen);

/*
 * Whether /proc/PID/cgroup bytes (untrusted) put the process in a session: its v2 path
 * ("0::/path") at or below session_prefix ("/sandgate", not "/sandgate-other"), or in a
 * cgroup a session adopted. -EACCES when it is, else 0.
 */
int cgmap_proc_in_session(const char *proc_cgroup, size_t len, const char *session_prefix);

#endif
