/*
 * A parallel file writer for the fanotify sensor's rate: NPROC processes each create,
 * write, close and delete NFILES files in their own directory under DIR, as fast as
 * they can (3 file events per file: create, write, delete).
 *
 *   bench_fwrite DIR NPROC NFILES
 *
 * Prints the files written and the wall time in seconds.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One writer: its files in DIR/wI. 0 or 1 (reported). */
static int writer(const char *dir, int i, long nfiles)
{
	char d[4096], f[4200];
	int fd;

	snprintf(d, sizeof(d), "%s/w%d", dir, i);
	if (mkdir(d, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "bench_fwrite: mkdir %s: %s\n", d, strerror(errno));
		return 1;
	}
	for (long k = 0; k < nfiles; k++) {
		snprintf(f, sizeof(f), "%s/f%ld", d, k);
		fd = open(f, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0 || write(fd, "data", 4) != 4 || close(fd) != 0 || unlink(f) != 0) {
			fprintf(stderr, "bench_fwrite: %s: %s\n", f, strerror(errno));
			return 1;
		}
	}
	return 0;   /* the directory stays: deletes in it still resolve to paths */
}

int main(int argc, char **argv)
{
	long nproc, nfiles;
	int status, bad = 0;
	double t0;

	if (argc != 4 || (nproc = strtol(argv[2], NULL, 10)) <= 0 ||
	    (nfiles = strtol(argv[3], NULL, 10)) <= 0) {
		fprintf(stderr, "usage: bench_fwrite DIR NPROC NFILES\n");
		return 2;
	}
	t0 = now_s();
	for (long i = 0; i < nproc; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("bench_fwrite: fork");
			return 1;
		}
		if (pid == 0)
			_exit(writer(argv[1], (int)i, nfiles));
	}
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			bad = 1;
	printf("%ld %.3f\n", nproc * nfiles, now_s() - t0);
	return bad;
}
