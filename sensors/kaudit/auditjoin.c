/* Joining the records of one audit event by serial (sensors/kaudit/auditjoin.h). */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "sensors/kaudit/auditjoin.h"

void auditjoin_done(struct auditjoin_ev *p)
{
	auditrec_execve_free(&p->args);
	p->used = false;
}

/* The event of serial; with create, a new slot (the oldest one evicted when full). */
static struct auditjoin_ev *pend_get(struct auditjoin *s, uint64_t serial, bool create)
{
	struct auditjoin_ev *old = NULL, *p;

	for (size_t i = 0; i < AUDITJOIN_PEND; i++)
		if (s->pend[i].used && s->pend[i].serial == serial)
			return &s->pend[i];
	if (!create)
		return NULL;
	for (size_t i = 0; i < AUDITJOIN_PEND; i++) {
		p = &s->pend[i];
		if (!p->used)
			goto fresh;
		if (!old || p->born < old->born)
			old = p;
	}
	s->evicted++;   /* an event whose EOE never came: count it as lost */
	p = old;
	auditjoin_done(p);
fresh:
	memset(p, 0, offsetof(struct auditjoin_ev, comm));
	p->comm[0] = p->exe[0] = p->cwd[0] = '\0';
	auditrec_execve_init(&p->args, AUDIT_ARGV_MAX);
	p->used = true;
	p->serial = serial;
	p->born = ++s->born;
	return p;
}

static bool key_is(const struct auditrec_kv *kv, const char *k)
{
	return kv->klen == strlen(k) && memcmp(kv->key, k, kv->klen) == 0;
}

/* A decimal value; false when it is not one. */
static bool kv_num(const struct auditrec_kv *kv, uint64_t *v)
{
	*v = 0;
	if (kv->vlen == 0 || kv->vlen > 19)
		return false;
	for (size_t i = 0; i < kv->vlen; i++) {
		if (kv->val[i] < '0' || kv->val[i] > '9')
			return false;
		*v = *v * 10 + (uint64_t)(kv->val[i] - '0');
	}
	return true;
}

/* A text value (quoted, or hex-encoded when unquoted) into out as a C string. */
static bool kv_text(const struct auditrec_kv *kv, char *out, size_t cap)
{
	char tmp[PATH_MAX * 2];
	size_t n;

	if (kv->vlen >= sizeof(tmp) || (!kv->quoted && kv->vlen == 6 &&
					 memcmp(kv->val, "(null)", 6) == 0))
		return false;
	if (auditrec_decode(kv, true, tmp, &n) != 0 || n >= cap || memchr(tmp, '\0', n))
		return false;
	memcpy(out, tmp, n);
	out[n] = '\0';
	return true;
}

static void on_syscall(struct auditjoin_ev *p, const char *s, size_t len, size_t off)
{
	struct auditrec_kv kv;
	uint64_t v;
	int r;
	bool uid = false, euid = false;

	p->syscall = true;
	while ((r = auditrec_next(s, len, &off, &kv)) == 1) {
		if (key_is(&kv, "success"))
			p->success = kv.vlen == 3 && memcmp(kv.val, "yes", 3) == 0;
		else if (key_is(&kv, "pid") && kv_num(&kv, &v))
			p->pid = (int32_t)v;
		else if (key_is(&kv, "ppid") && kv_num(&kv, &v))
			p->ppid = (int32_t)v;
		else if (key_is(&kv, "uid") && kv_num(&kv, &v))
			uid = true, p->uid = (uint32_t)v;
		else if (key_is(&kv, "euid") && kv_num(&kv, &v))
			euid = true, p->euid = (uint32_t)v;
		else if (key_is(&kv, "comm"))
			(void)kv_text(&kv, p->comm, sizeof(p->comm));
		else if (key_is(&kv, "exe"))
			p->has_exe = kv_text(&kv, p->exe, sizeof(p->exe));
	}
	p->has_ids = uid && euid;
	if (r < 0 || p->pid <= 0)
		p->bad = true;
}

static void on_cwd(struct auditjoin_ev *p, const char *s, size_t len, size_t off)
{
	struct auditrec_kv kv;

	while (auditrec_next(s, len, &off, &kv) == 1)
		if (key_is(&kv, "cwd"))
			p->has_cwd = kv_text(&kv, p->cwd, sizeof(p->cwd));
}

void auditjoin_init(struct auditjoin *j)
{
	memset(j, 0, sizeof(*j));
}

void auditjoin_free(struct auditjoin *j)
{
	for (size_t i = 0; i < AUDITJOIN_PEND; i++)
		if (j->pend[i].used)
			auditjoin_done(&j->pend[i]);
}

struct auditjoin_ev *auditjoin_feed(struct auditjoin *s, uint16_t type, const char *t,
				    size_t len)
{
	uint64_t serial, ms;
	size_t body;
	struct auditjoin_ev *p;

	if (type != AUDITREC_SYSCALL && type != AUDITREC_EXECVE && type != AUDITREC_CWD &&
	    type != AUDITREC_EOE)
		return NULL;
	if (auditrec_head(t, len, &serial, &ms, &body) != 0) {
		s->bad++;
		return NULL;
	}
	p = pend_get(s, serial, type == AUDITREC_SYSCALL);
	if (!p)
		return NULL;   /* not an event that began with SYSCALL (or it was evicted) */
	p->ms = ms;
	switch (type) {
	case AUDITREC_SYSCALL:
		on_syscall(p, t, len, body);
		break;
	case AUDITREC_EXECVE:
		p->execve = true;
		if (auditrec_execve_feed(&p->args, t + body, len - body) != 0)
			p->bad = true;
		break;
	case AUDITREC_CWD:
		on_cwd(p, t, len, body);
		break;
	default:   /* EOE */
		return p;
	}
	return NULL;
}

/* A decimal, or -1 ("4294967295" stays itself: an unset auid is reported as such). */
static int64_t kv_int(const struct auditrec_kv *kv)
{
	uint64_t v;

	return kv_num(kv, &v) && v <= INT64_MAX ? (int64_t)v : -1;
}

/* A value as written (op=remove_rule is bare, key="K" quoted: never hex here). */
static void kv_copy(const struct auditrec_kv *kv, char *out, size_t cap)
{
	if (kv->vlen >= cap || memchr(kv->val, '\0', kv->vlen)) {
		out[0] = '\0';
		return;
	}
	memcpy(out, kv->val, kv->vlen);
	out[kv->vlen] = '\0';
}

/* The key=value of op=set: the one whose key is not a known field of the record. */
static bool cc_known(const struct auditrec_kv *kv)
{
	static const char *const k[] = { "op", "key", "old", "pid", "uid", "auid", "ses",
					 "res", "subj", "list", NULL };

	for (size_t i = 0; k[i]; i++)
		if (key_is(kv, k[i]))
			return true;
	return false;
}

int auditjoin_config(const char *t, size_t len, struct auditjoin_cc *cc)
{
	struct auditrec_kv kv;
	uint64_t ms;
	size_t off;

	memset(cc, 0, sizeof(*cc));
	cc->value = cc->old = cc->pid = cc->auid = cc->ses = cc->res = -1;
	if (auditrec_head(t, len, &cc->serial, &ms, &off) != 0)
		return -EINVAL;
	while (auditrec_next(t, len, &off, &kv) == 1) {
		if (key_is(&kv, "op"))
			kv_copy(&kv, cc->op, sizeof(cc->op));
		else if (key_is(&kv, "key"))
			kv_copy(&kv, cc->key, sizeof(cc->key));
		else if (key_is(&kv, "old"))
			cc->old = kv_int(&kv);
		else if (key_is(&kv, "pid"))
			cc->pid = kv_int(&kv);
		else if (key_is(&kv, "auid"))
			cc->auid = kv_int(&kv);
		else if (key_is(&kv, "ses"))
			cc->ses = kv_int(&kv);
		else if (key_is(&kv, "res"))
			cc->res = kv_int(&kv);
		else if (!cc_known(&kv) && !cc->field[0] && kv.klen < sizeof(cc->field)) {
			memcpy(cc->field, kv.key, kv.klen);
			cc->field[kv.klen] = '\0';
			cc->value = kv_int(&kv);
		}
	}
	return cc->op[0] ? 0 : -EINVAL;
}
