/*
 * sg_freeze TID MS [READY-FILE]: stops one thread of another process (not its whole
 * thread group, as SIGSTOP would) for MS milliseconds with ptrace's SEIZE + INTERRUPT,
 * then lets it go. Tests use it to make one sensor late while the others run
 * (tests/integration/t_detect_download_late.sh: the audit source's records come after
 * the file events of what the exec did). READY-FILE is created once the thread is
 * stopped. Exit 0, or 1 with a message when the thread could not be stopped.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	pid_t tid;
	long ms;
	struct timespec ts;
	int st, fd;

	if (argc < 3) {
		fprintf(stderr, "usage: sg_freeze TID MS [READY-FILE]\n");
		return 2;
	}
	tid = (pid_t)strtol(argv[1], NULL, 10);
	ms = strtol(argv[2], NULL, 10);
	ts = (struct timespec){ ms / 1000, (ms % 1000) * 1000000 };
	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) != 0 ||
	    ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) != 0) {
		fprintf(stderr, "sg_freeze: ptrace %d: %s\n", (int)tid, strerror(errno));
		return 1;
	}
	if (waitpid(tid, &st, __WALL) != tid) {
		fprintf(stderr, "sg_freeze: waitpid %d: %s\n", (int)tid, strerror(errno));
		return 1;
	}
	if (argc > 3) {
		fd = open(argv[3], O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd >= 0)
			close(fd);
	}
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
	if (ptrace(PTRACE_DETACH, tid, NULL, NULL) != 0) {
		fprintf(stderr, "sg_freeze: detach %d: %s\n", (int)tid, strerror(errno));
		return 1;
	}
	return 0;
}
