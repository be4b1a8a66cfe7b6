/*
 * Writes the file sensor may not see the usual way, for t_audit_attack.sh: the kernel's
 * asynchronous I/O interfaces (raw syscalls, no liburing needed); and a fork flood.
 *   sg_attack aiowrite FILE TEXT     open FILE for writing, io_submit one PWRITE, close
 *   sg_attack uringwrite FILE TEXT   open FILE for writing, IORING_OP_WRITE, close
 *   sg_attack uringdirect FILE TEXT  IORING_OP_OPENAT into a fixed-file slot (never in the
 *                                    fd table), IORING_OP_WRITE through the slot, exit
 *                                    with the ring open (its teardown closes the file)
 *   sg_attack uringrename OLD NEW    IORING_OP_RENAMEAT
 *   sg_attack aiokclose FILE TEXT    io_submit one PWRITE (no FAN_MODIFY), then register
 *                                    the fd in an io_uring fixed-file table, close it and
 *                                    exit: the last close is the ring teardown's (a
 *                                    kernel worker)
 *   sg_attack forkflood SECS FILE    fork and reap children that exit at once for SECS
 *                                    seconds; halfway, fork one that waits 2*SECS+1 s (the
 *                                    flood over), then writes FILE with write() and exits;
 *                                    prints the number of forks
 * Exit 0 on success; a message on stderr and 1 otherwise (2: interface refused).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <linux/io_uring.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int die(const char *what)
{
	fprintf(stderr, "sg_attack: %s: %s\n", what, strerror(errno));
	return 1;
}

static int ring_handoff(int fd);

static int aiowrite(const char *path, const char *text, bool kclose)
{
	aio_context_t ctx = 0;
	struct iocb cb = { 0 }, *cbs[1] = { &cb };
	struct io_event evs[1];
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

	if (fd < 0)
		return die("open");
	if (syscall(SYS_io_setup, 1, &ctx) < 0)
		return die("io_setup");
	cb.aio_fildes = (uint32_t)fd;
	cb.aio_lio_opcode = IOCB_CMD_PWRITE;
	cb.aio_buf = (uint64_t)(uintptr_t)text;
	cb.aio_nbytes = strlen(text);
	if (syscall(SYS_io_submit, ctx, 1, cbs) != 1)
		return die("io_submit");
	if (syscall(SYS_io_getevents, ctx, 1, 1, evs, NULL) != 1)
		return die("io_getevents");
	if ((long long)evs[0].res != (long long)strlen(text)) {
		errno = evs[0].res < 0 ? (int)-evs[0].res : EIO;
		return die("aio write");
	}
	syscall(SYS_io_destroy, ctx);
	if (kclose)
		return ring_handoff(fd);
	return close(fd) ? die("close") : 0;
}

struct ring {
	int fd;
	unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
};

static int ring_init(struct ring *r)
{
	struct io_uring_params p = { 0 };
	uint8_t *sq, *cq;

	r->fd = (int)syscall(SYS_io_uring_setup, 4, &p);
	if (r->fd < 0)
		return -errno;
	sq = mmap(NULL, p.sq_off.array + p.sq_entries * sizeof(unsigned), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQ_RING);
	cq = mmap(NULL, p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe),
		  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_CQ_RING);
	r->sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || r->sqes == MAP_FAILED)
		return -errno;
	r->sq_tail = (unsigned *)(sq + p.sq_off.tail);
	r->sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
	r->sq_array = (unsigned *)(sq + p.sq_off.array);
	r->cq_head = (unsigned *)(cq + p.cq_off.head);
	r->cq_tail = (unsigned *)(cq + p.cq_off.tail);
	r->cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	return 0;
}

/* Submits *sqe alone and waits for its completion: its res. */
static int ring_one(struct ring *r, const struct io_uring_sqe *sqe)
{
	unsigned tail = *r->sq_tail, idx = tail & *r->sq_mask, head;
	int res;

	r->sqes[idx] = *sqe;
	r->sq_array[idx] = idx;
	__atomic_store_n(r->sq_tail, tail + 1, __ATOMIC_RELEASE);
	if (syscall(SYS_io_uring_enter, r->fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
		return -errno;
	head = *r->cq_head;
	if (head == __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE))
		return -EAGAIN;
	res = r->cqes[head & *r->cq_mask].res;
	__atomic_store_n(r->cq_head, head + 1, __ATOMIC_RELEASE);
	return res;
}

static int uring(const char *mode, const char *path, const char *arg)
{
	struct io_uring_sqe sqe = { 0 };
	struct ring r;
	int ret = ring_init(&r), fd = -1, slot = -1;

	if (ret) {
		errno = -ret;
		die("io_uring_setup");
		return 2;
	}
	if (strcmp(mode, "uringrename") == 0) {
		sqe.opcode = IORING_OP_RENAMEAT;
		sqe.fd = AT_FDCWD;
		sqe.addr = (uint64_t)(uintptr_t)path;
		sqe.len = (uint32_t)AT_FDCWD;
		sqe.addr2 = (uint64_t)(uintptr_t)arg;
		ret = ring_one(&r, &sqe);
		errno = ret < 0 ? -ret : 0;
		return ret < 0 ? die("renameat") : 0;
	}
	if (strcmp(mode, "uringdirect") == 0) {
		int files[1] = { -1 };

		if (syscall(SYS_io_uring_register, r.fd, IORING_REGISTER_FILES, files, 1) < 0)
			return die("register files");
		sqe.opcode = IORING_OP_OPENAT;
		sqe.fd = AT_FDCWD;
		sqe.addr = (uint64_t)(uintptr_t)path;
		sqe.open_flags = O_WRONLY | O_CREAT;
		sqe.len = 0644;
		sqe.file_index = 1;   /* slot 0, one-based */
		ret = ring_one(&r, &sqe);
		if (ret < 0) {
			errno = -ret;
			return die("openat direct");
		}
		slot = 0;
	} else {
		fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0)
			return die("open");
	}
	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = IORING_OP_WRITE;
	sqe.fd = slot >= 0 ? slot : fd;
	sqe.flags = slot >= 0 ? IOSQE_FIXED_FILE : 0;
	sqe.addr = (uint64_t)(uintptr_t)arg;
	sqe.len = (uint32_t)strlen(arg);
	ret = ring_one(&r, &sqe);
	if (ret != (int)strlen(arg)) {
		errno = ret < 0 ? -ret : EIO;
		return die("write");
	}
	if (fd >= 0 && close(fd))
		return die("close");
	return 0;   /* uringdirect: the ring (and the file in its slot) left to exit */
}

/* fd into a new ring's fixed-file table, then closed here: the ring holds the last reference. */
static int ring_handoff(int fd)
{
	struct ring r;
	int ret = ring_init(&r);

	if (ret) {
		errno = -ret;
		die("io_uring_setup");
		return 2;
	}
	if (syscall(SYS_io_uring_register, r.fd, IORING_REGISTER_FILES, &fd, 1) < 0)
		return die("register files");
	return close(fd) ? die("close") : 0;   /* the ring closes it at exit */
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int forkflood(double secs, const char *path)
{
	double t0 = now_s(), t;
	long n = 0;
	bool forked = false;
	pid_t c;

	while ((t = now_s()) - t0 < secs) {
		if (!forked && t - t0 >= secs / 2) {
			forked = true;
			c = fork();
			if (c < 0)
				return die("fork");
			if (c == 0) {
				int fd;

				sleep((unsigned)(2 * secs + 1));
				fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
				if (fd < 0 || write(fd, "untracked\n", 10) != 10 || close(fd))
					_exit(1);
				_exit(0);
			}
		}
		c = fork();
		if (c < 0)
			continue;   /* EAGAIN under a pids limit: keep going */
		if (c == 0)
			_exit(0);
		n++;
		(void)waitpid(c, NULL, 0);
	}
	printf("%ld\n", n);
	while (wait(NULL) > 0)
		;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "forkflood") == 0)
		return forkflood(atof(argv[2]), argv[3]);
	if (argc == 4 && strcmp(argv[1], "aiowrite") == 0)
		return aiowrite(argv[2], argv[3], false);
	if (argc == 4 && strcmp(argv[1], "aiokclose") == 0)
		return aiowrite(argv[2], argv[3], true);
	if (argc == 4 && (strcmp(argv[1], "uringwrite") == 0 ||
			  strcmp(argv[1], "uringdirect") == 0 ||
			  strcmp(argv[1], "uringrename") == 0))
		return uring(argv[1], argv[2], argv[3]);
	fprintf(stderr, "usage: sg_attack aiowrite|aiokclose|uringwrite|uringdirect FILE TEXT |\n"
			"       sg_attack uringrename OLD NEW | forkflood SECS FILE\n");
	return 1;
}
