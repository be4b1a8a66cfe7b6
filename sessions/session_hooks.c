/*
 * The part's ways back to the daemon, in one file the verbs and transitions call: the
 * config in force (sessions_configure) and the hooks the daemon filled in
 * (sessions/sessions.h); session_nft.c calls the bind/unbind hooks itself. Kept apart
 * from sessions.c, which calls the verbs' files, so no call cycle runs through it.
 */
#include "sessions/session_int.h"

const struct sg_policy *sess_policy(const struct sessions *ss, const char *name)
{
	return cfg_policy_find(ss->conf.policies, ss->conf.n_policies, name);
}

int sess_add_verb(struct sessions *ss, const char *verb, control_verb_fn fn)
{
	return ss->hooks.add_verb ? ss->hooks.add_verb(ss->hooks.ctx, verb, fn, ss) : 0;
}

void sess_attached(struct sessions *ss, pid_t pid, const struct session *s)
{
	if (ss->hooks.attached)
		ss->hooks.attached(ss->hooks.ctx, pid, s->id);
}
