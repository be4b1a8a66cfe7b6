/*
 * No new user namespace in a contained session (docs/threat-model.md "User namespaces").
 * Root in a session without CAP_SYS_ADMIN or CAP_NET_ADMIN gets both back, over the
 * namespaces it then creates, from an unprivileged `unshare -U`: mounts (in a private
 * mount namespace), nf_tables and the rest of the netlink configuration surface (in a
 * network namespace of its own: the kernel code a long line of privilege escalations went
 * through), and cgroup v1 mounts of the hierarchies the session is not rooted in, at the
 * host's root. A seccomp filter refuses the calls that make or join one: unshare and clone
 * with CLONE_NEWUSER (EPERM), setns to a user namespace or to any type (EPERM), and clone3,
 * whose flags sit in memory a filter cannot read (ENOSYS: the C library then uses clone).
 * Every other call is allowed; the filter is inherited by every child and cannot be lifted.
 */
#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "contain/contain.h"

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#define NR_MASK 0xbfffffffu          /* x32 calls carry bit 30: the same numbers */
#define COMPAT_ARCH AUDIT_ARCH_I386
#define COMPAT_UNSHARE 310
#define COMPAT_CLONE 120
#define COMPAT_SETNS 346
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#define NR_MASK 0xffffffffu
#define COMPAT_ARCH AUDIT_ARCH_ARM
#define COMPAT_UNSHARE 337
#define COMPAT_CLONE 120
#define COMPAT_SETNS 375
#endif
#define NR_CLONE3 435                /* the same on every architecture */

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ARG_LO(n) (offsetof(struct seccomp_data, args) + 8 * (n))
#else
#define ARG_LO(n) (offsetof(struct seccomp_data, args) + 8 * (n) + 4)
#endif

#ifdef NATIVE_ARCH
/* Labels of the program below (absolute instruction numbers). */
enum { L_COMPAT = 9, L_FLAGS0 = 16, L_SETNS = 18, L_ALLOW = 21, L_EPERM = 22, L_ENOSYS = 23,
       L_LEN = 24 };

/* A conditional jump from instruction at to absolute targets t and f. */
#define JMP(at, op, k, t, f) \
	BPF_JUMP(BPF_JMP | (op) | BPF_K, (k), (uint8_t)((t) - (at) - 1), (uint8_t)((f) - (at) - 1))

static const struct sock_filter prog[L_LEN] = {
	/* 0 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	/* 1 */ JMP(1, BPF_JEQ, NATIVE_ARCH, 2, L_COMPAT),
	/* 2 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	/* 3 */ BPF_STMT(BPF_ALU | BPF_AND | BPF_K, NR_MASK),
	/* 4 */ JMP(4, BPF_JEQ, NR_CLONE3, L_ENOSYS, 5),
	/* 5 */ JMP(5, BPF_JEQ, SYS_unshare, L_FLAGS0, 6),
	/* 6 */ JMP(6, BPF_JEQ, SYS_clone, L_FLAGS0, 7),
	/* 7 */ JMP(7, BPF_JEQ, SYS_setns, L_SETNS, 8),
	/* 8 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	/* 9: L_COMPAT, A is the arch */
	JMP(9, BPF_JEQ, COMPAT_ARCH, 10, L_ENOSYS),
	/* 10 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	/* 11 */ JMP(11, BPF_JEQ, NR_CLONE3, L_ENOSYS, 12),
	/* 12 */ JMP(12, BPF_JEQ, COMPAT_UNSHARE, L_FLAGS0, 13),
	/* 13 */ JMP(13, BPF_JEQ, COMPAT_CLONE, L_FLAGS0, 14),
	/* 14 */ JMP(14, BPF_JEQ, COMPAT_SETNS, L_SETNS, 15),
	/* 15 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	/* 16: L_FLAGS0, unshare(flags) and clone(flags, ...) */
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(0)),
	/* 17 */ JMP(17, BPF_JSET, CLONE_NEWUSER, L_EPERM, L_ALLOW),
	/* 18: L_SETNS, setns(fd, nstype): 0 joins whatever fd is */
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(1)),
	/* 19 */ JMP(19, BPF_JEQ, 0, L_EPERM, 20),
	/* 20 */ JMP(20, BPF_JSET, CLONE_NEWUSER, L_EPERM, L_ALLOW),
	/* 21: L_ALLOW */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	/* 22: L_EPERM */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
	/* 23: L_ENOSYS */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
};

int contain_userns_block(void)
{
	struct sock_fprog fp = { .len = L_LEN, .filter = (struct sock_filter *)prog };

	/* no_new_privs (set before) lets an unprivileged process install it. */
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp, 0, 0) < 0)
		return -errno;
	return 0;
}
#else
int contain_userns_block(void)
{
	return -EOPNOTSUPP;   /* the filter knows x86_64 and aarch64 call numbers only */
}
#endif
