/*
 * File operations an agent would use to slip past the file sensor, for the audit tests
 * (tests/integration/t_audit_evasion_files.sh):
 *   sg_fileops mmapwrite FILE          write FILE through a shared mmap only (no write())
 *   sg_fileops tmpfile DIR NAME        O_TMPFILE in DIR, write, linkat as DIR/NAME, close
 *   sg_fileops handle PATH             print PATH's file handle (hex) and its mount dir
 *   sg_fileops openhandle MNT HEX      open the handle HEX relative to MNT, read it all
 *   sg_fileops inflight FILE           open FILE for writing, write, send the fd over a
 *                                      unix socket to itself, close every copy but the
 *                                      one in flight, exit (the kernel closes it last)
 *   sg_fileops setxattr FILE NAME VAL  setxattr(2)
 * Exit 0 on success; a message on stderr and 1 otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

static int die(const char *what)
{
	fprintf(stderr, "sg_fileops: %s: %s\n", what, strerror(errno));
	return 1;
}

static int mmapwrite(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT, 0644);
	char *p;

	if (fd < 0)
		return die("open");
	if (ftruncate(fd, 4096) != 0)   /* a size change: its own FAN_MODIFY, before */
		return die("ftruncate");
	close(fd);
	sleep(2);   /* that truncate's write is reported and done with */
	fd = open(path, O_RDWR);
	if (fd < 0)
		return die("open again");
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return die("mmap");
	memcpy(p, "written through mmap\n", 21);
	if (msync(p, 4096, MS_SYNC) != 0 || munmap(p, 4096) != 0)
		return die("msync");
	close(fd);
	return 0;
}

static int tmpfile_link(const char *dir, const char *name)
{
	char target[4096];
	int fd = open(dir, O_TMPFILE | O_WRONLY, 0644);

	if (fd < 0)
		return die("O_TMPFILE");
	if (write(fd, "staged\n", 7) != 7)
		return die("write");
	snprintf(target, sizeof(target), "%s/%s", dir, name);
	if (linkat(fd, "", AT_FDCWD, target, AT_EMPTY_PATH) != 0)
		return die("linkat");
	close(fd);
	return 0;
}

static int handle(const char *path)
{
	union {
		struct file_handle fh;
		unsigned char raw[sizeof(struct file_handle) + MAX_HANDLE_SZ];
	} u;
	int mnt;

	u.fh.handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(AT_FDCWD, path, &u.fh, &mnt, 0) != 0)
		return die("name_to_handle_at");
	printf("%d:", u.fh.handle_type);
	for (unsigned i = 0; i < u.fh.handle_bytes; i++)
		printf("%02x", u.fh.f_handle[i]);
	printf("\n");
	return 0;
}

static int openhandle(const char *mntdir, const char *hex)
{
	union {
		struct file_handle fh;
		unsigned char raw[sizeof(struct file_handle) + MAX_HANDLE_SZ];
	} u;
	char buf[4096];
	unsigned n = 0, b;
	int type, mfd, fd;
	const char *p = strchr(hex, ':');

	if (!p || sscanf(hex, "%d:", &type) != 1)
		return die("handle format");
	for (p++; n < MAX_HANDLE_SZ && sscanf(p, "%2x", &b) == 1; p += 2)
		u.fh.f_handle[n++] = (unsigned char)b;
	u.fh.handle_bytes = n;
	u.fh.handle_type = type;
	mfd = open(mntdir, O_RDONLY | O_DIRECTORY);
	if (mfd < 0)
		return die("open mount");
	fd = open_by_handle_at(mfd, &u.fh, O_RDONLY);
	if (fd < 0)
		return die("open_by_handle_at");
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
	return 0;
}

static int inflight(const char *path)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec io = { .iov_base = "x", .iov_len = 1 };
	struct msghdr mh = { .msg_iov = &io, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	int sv[2], fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		return die("open");
	if (write(fd, "in flight\n", 10) != 10)
		return die("write");
	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) != 0)
		return die("socketpair");
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	/* The file goes to sv[1]'s queue, then sv[1] into its own queue: a cycle only the
	 * unix garbage collector (a kernel worker) breaks, closing the file last. */
	if (sendmsg(sv[0], &mh, 0) != 1)
		return die("sendmsg");
	memcpy(CMSG_DATA(c), &sv[1], sizeof(int));
	if (sendmsg(sv[0], &mh, 0) != 1)
		return die("sendmsg socket");
	close(fd);
	close(sv[1]);
	close(sv[0]);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "mmapwrite") == 0)
		return mmapwrite(argv[2]);
	if (argc == 4 && strcmp(argv[1], "tmpfile") == 0)
		return tmpfile_link(argv[2], argv[3]);
	if (argc == 3 && strcmp(argv[1], "handle") == 0)
		return handle(argv[2]);
	if (argc == 4 && strcmp(argv[1], "openhandle") == 0)
		return openhandle(argv[2], argv[3]);
	if (argc == 3 && strcmp(argv[1], "inflight") == 0)
		return inflight(argv[2]);
	if (argc == 5 && strcmp(argv[1], "setxattr") == 0)
		return setxattr(argv[2], argv[3], argv[4], strlen(argv[4]), 0) == 0 ? 0 :
		       die("setxattr");
	fprintf(stderr, "usage: sg_fileops mmapwrite|tmpfile|handle|openhandle|inflight|"
		"setxattr ...\n");
	return 2;
}
