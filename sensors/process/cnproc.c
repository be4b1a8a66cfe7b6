/*
 * Proc connector datagrams: netlink headers, then a cn_msg, then a struct proc_event.
 * Every length is checked before a field is read, and fields are copied out with
 * memcpy (datagram bytes carry no alignment promise once a length is forged).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>

#include "sensors/process/cnproc.h"

#define PE_HDR offsetof(struct proc_event, event_data)

static int32_t rd_i32(const uint8_t *p, size_t off)
{
	int32_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

static uint32_t rd_u32(const uint8_t *p, size_t off)
{
	uint32_t v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

/* Bytes of event_data each kind needs; 0 for kinds we only count. */
static size_t need_of(uint32_t what, enum cn_kind *kind)
{
	switch (what) {
	case PROC_EVENT_FORK:
		*kind = CN_FORK;
		return sizeof(struct fork_proc_event);
	case PROC_EVENT_EXEC:
		*kind = CN_EXEC;
		return sizeof(struct exec_proc_event);
	case PROC_EVENT_UID:
		*kind = CN_UID;
		return sizeof(struct id_proc_event);
	case PROC_EVENT_EXIT:
		*kind = CN_EXIT;
		/* Kernels before 4.18 send no parent fields: those stay 0. */
		return offsetof(struct exit_proc_event, parent_pid);
	case PROC_EVENT_NONE:
		*kind = CN_ACK;
		return sizeof(uint32_t);   /* ack.err */
	default:
		*kind = CN_OTHER;
		return 0;
	}
}

static void fill(struct cn_event *ev, const uint8_t *d, size_t dlen)
{
	switch (ev->kind) {
	case CN_FORK:
		ev->ppid = rd_i32(d, 0);
		ev->ptgid = rd_i32(d, 4);
		ev->pid = rd_i32(d, 8);
		ev->tgid = rd_i32(d, 12);
		break;
	case CN_UID:
		ev->ruid = rd_u32(d, 8);
		ev->euid = rd_u32(d, 12);
		/* pid and tgid lead, as in an exec event */
		__attribute__((fallthrough));
	case CN_EXEC:
		ev->pid = rd_i32(d, 0);
		ev->tgid = rd_i32(d, 4);
		break;
	case CN_EXIT:
		ev->pid = rd_i32(d, 0);
		ev->tgid = rd_i32(d, 4);
		ev->exit_code = rd_u32(d, 8);
		ev->exit_signal = rd_u32(d, 12);
		if (dlen >= sizeof(struct exit_proc_event)) {
			ev->ppid = rd_i32(d, 16);
			ev->ptgid = rd_i32(d, 20);
		}
		break;
	case CN_ACK:
		ev->exit_code = rd_u32(d, 0);   /* the errno of our listen request */
		break;
	case CN_OTHER:
		break;
	}
}

/* One cn_msg payload (len bytes at p) into ev. 0, or -EINVAL when not a proc event. */
static int decode_cn(const uint8_t *p, size_t len, struct cn_event *ev)
{
	struct cn_msg cn;
	uint32_t what;
	size_t need;

	if (len < sizeof(cn))
		return -EINVAL;
	memcpy(&cn, p, sizeof(cn));
	if (cn.id.idx != CN_IDX_PROC || cn.id.val != CN_VAL_PROC ||
	    cn.len > len - sizeof(cn) || cn.len < PE_HDR)
		return -EINVAL;
	p += sizeof(cn);
	memset(ev, 0, sizeof(*ev));
	what = rd_u32(p, offsetof(struct proc_event, what));
	ev->cpu = rd_u32(p, offsetof(struct proc_event, cpu));
	memcpy(&ev->ts_ns, p + offsetof(struct proc_event, timestamp_ns), sizeof(ev->ts_ns));
	ev->seq = cn.seq;
	need = need_of(what, &ev->kind);
	if (cn.len - PE_HDR < need)
		return -EINVAL;
	fill(ev, p + PE_HDR, cn.len - PE_HDR);
	return 0;
}

int cn_decode(const void *buf, size_t len, struct cn_event *out, size_t max, size_t *n,
	      size_t *bad)
{
	const uint8_t *p = buf;
	struct nlmsghdr nh;

	*n = 0;
	while (len >= sizeof(nh) && *n < max) {
		memcpy(&nh, p, sizeof(nh));
		if (nh.nlmsg_len < sizeof(nh) || nh.nlmsg_len > len)
			return -EINVAL;
		if (nh.nlmsg_type == NLMSG_DONE &&
		    decode_cn(p + NLMSG_HDRLEN, nh.nlmsg_len - NLMSG_HDRLEN, &out[*n]) == 0)
			(*n)++;
		else if (nh.nlmsg_type != NLMSG_NOOP)
			(*bad)++;
		if (NLMSG_ALIGN(nh.nlmsg_len) >= len)
			break;
		p += NLMSG_ALIGN(nh.nlmsg_len);
		len -= NLMSG_ALIGN(nh.nlmsg_len);
	}
	return 0;
}

struct cn_seq {
	uint32_t ncpu;
	uint32_t *last;
	uint8_t *seen;
};

int cn_seq_new(struct cn_seq **out, uint32_t ncpu)
{
	struct cn_seq *s = calloc(1, sizeof(*s));

	if (s) {
		s->ncpu = ncpu ? ncpu : 1;
		s->last = calloc(s->ncpu, sizeof(*s->last));
		s->seen = calloc(s->ncpu, 1);
	}
	if (!s || !s->last || !s->seen) {
		cn_seq_free(s);
		return -ENOMEM;
	}
	*out = s;
	return 0;
}

void cn_seq_free(struct cn_seq *s)
{
	if (!s)
		return;
	free(s->last);
	free(s->seen);
	free(s);
}

uint64_t cn_seq_feed(struct cn_seq *s, uint32_t cpu, uint32_t seq)
{
	uint32_t gap;

	/* A CPU beyond what was configured at start (hotplug): not tracked. */
	if (cpu >= s->ncpu)
		return 0;
	gap = seq - s->last[cpu] - 1;   /* u32 arithmetic: the counter wraps */
	s->last[cpu] = seq;
	if (!s->seen[cpu]) {
		s->seen[cpu] = 1;
		return 0;
	}
	/* A "gap" of more than half the space is a message arriving late, not loss. */
	return gap > UINT32_MAX / 2 ? 0 : gap;
}

void cn_exit_decode(uint32_t status, int *code, int *sig)
{
	/* The kernel's exit_code is the wait status: low 7 bits signal, next 8 the code. */
	if ((status & 0x7f) == 0) {
		*code = (int)((status >> 8) & 0xff);
		*sig = 0;
	} else {
		*code = -1;
		*sig = (int)(status & 0x7f);
	}
}
