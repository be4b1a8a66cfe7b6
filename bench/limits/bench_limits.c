/*
 * bench_limits [N] [ROUNDS] [FILES]: what the resource limits watcher costs the daemon's
 * loop. Creates N session cgroups (memory 64M, 0.5 CPU, 64 pids: on this host v1
 * directories plus the v2 one) and times, per session and sample tick, the reads the
 * watcher adds when nothing rose (cpu.stat; on v1 also memory.oom_control,
 * memory.failcnt, pids.events; the peaks are read only after a rise) against the baseline the sessions
 * part already pays (cgroup.events). Then one disk measure (dir_usage) of a workdir of
 * FILES files. Medians over ROUNDS. bench/limits/run.sh; docs/bench-limits.md.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "attribution/attribution.h"

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_d);
	return v[n / 2];
}

/* The watcher's kept fds (within LIMITS_FD_BUDGET): cpu.stat, memory.oom_control,
 * memory.failcnt, pids.events, read again with pread. */
static double tick_kept(int (*fds)[4], int n)
{
	struct cg_mem_counters m;
	struct cg_cpu_counters c;
	char buf[1024];
	size_t got = 0;
	uint64_t v;
	double t0 = now_us();
	int i, bad = 0;

	for (i = 0; i < n; i++) {
		bad |= cg_pread(fds[i][0], buf, sizeof(buf), &got) || cg_parse_cpu_stat(buf, got, &c);
		bad |= cg_pread(fds[i][1], buf, sizeof(buf), &got) ||
		       cg_parse_kv(buf, got, "oom_kill", &m.oom_kill);
		bad |= cg_pread(fds[i][2], buf, sizeof(buf), &got) || cg_parse_value(buf, got, &v);
		bad |= cg_pread(fds[i][3], buf, sizeof(buf), &got) ||
		       cg_parse_pids_events(buf, got, &v);
	}
	if (bad)
		fprintf(stderr, "some kept reads failed\n");
	return (now_us() - t0) / n;
}

/* One tick over every session: the baseline read, or the watcher's reads. */
static double tick(const struct cg_host *h, char (*rel)[64], const unsigned *mask, int n,
		   bool watcher)
{
	struct cg_mem_counters m;
	struct cg_cpu_counters c;
	struct cg_pids_counters p;
	bool pop, frz;
	double t0 = now_us();
	int i, bad = 0;

	for (i = 0; i < n; i++) {
		if (!watcher) {
			bad |= cg_events(h, rel[i], &pop, &frz);
			continue;
		}
		/* what a tick reads when nothing rose (peaks are read only after a rise) */
		bad |= cg_read_cpu(h, rel[i], mask[i], &c);
		bad |= cg_read_memory(h, rel[i], mask[i], &m);
		bad |= cg_read_pids(h, rel[i], mask[i], &p);
	}
	if (bad)
		fprintf(stderr, "some reads failed\n");
	return (now_us() - t0) / n;
}

static int make_files(const char *dir, int files)
{
	static char block[4096];
	char path[600];
	int i;

	for (i = 0; i < files; i++) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/f%d", dir, i);
		f = fopen(path, "we");
		if (!f || fwrite(block, 1, sizeof(block), f) != sizeof(block)) {
			if (f)
				fclose(f);
			return -1;
		}
		if (fclose(f))
			return -1;
	}
	return 0;
}

static void bench_disk(const char *dir, int files, int rounds)
{
	double *t = calloc((size_t)rounds, sizeof(double));
	uint64_t bytes = 0;
	bool trunc = false;
	int r;

	if (!t || make_files(dir, files) < 0) {
		fprintf(stderr, "%s: cannot make %d files\n", dir, files);
		free(t);
		return;
	}
	for (r = 0; r < rounds; r++) {
		double t0 = now_us();

		if (dir_usage(dir, 1000000, &bytes, &trunc) < 0)
			fprintf(stderr, "dir_usage failed\n");
		t[r] = now_us() - t0;
	}
	printf("disk measure, %d files (%llu bytes): median %.0f us per measure\n", files,
	       (unsigned long long)bytes, median(t, (size_t)rounds));
	free(t);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200, rounds = argc > 2 ? atoi(argv[2]) : 21;
	int files = argc > 3 ? atoi(argv[3]) : 10000, i, r, made = 0;
	struct session_limits lim = { 64 << 20, 500, 64, 0, 0, 0 };
	char (*rel)[64] = calloc((size_t)n, sizeof(*rel)), err[256], tmp[] = "/tmp/sgbl.XXXXXX";
	unsigned *mask = calloc((size_t)n, sizeof(*mask));
	double *base = calloc((size_t)rounds, sizeof(double));
	double *watch = calloc((size_t)rounds, sizeof(double));
	double *kept = calloc((size_t)rounds, sizeof(double));
	int (*fds)[4] = calloc((size_t)n, sizeof(*fds));
	struct cg_host h;
	int ret = 1;

	if (n <= 0 || rounds <= 0 || !rel || !mask || !base || !watch || !kept || !fds)
		goto out;
	if (cg_host_detect(&h, access("/sys/fs/cgroup/unified", F_OK) == 0
				       ? "/sys/fs/cgroup/unified" : "/sys/fs/cgroup") < 0)
		goto out;
	for (i = 0; i < n; i++, made++) {
		snprintf(rel[i], sizeof(rel[i]), "/sgbench-limits-%d/b%d", (int)getpid(), i);
		if (cg_create(&h, rel[i], &lim, &mask[i], err, sizeof(err)) < 0) {
			fprintf(stderr, "%s\n", err);
			goto clean;
		}
	}
	for (i = 0; i < n; i++) {
		fds[i][0] = cg_open_ctrl(&h, rel[i], mask[i], CG_CPU, "cpu.stat");
		fds[i][1] = cg_open_ctrl(&h, rel[i], mask[i], CG_MEMORY, "memory.oom_control");
		fds[i][2] = cg_open_ctrl(&h, rel[i], mask[i], CG_MEMORY, "memory.failcnt");
		fds[i][3] = cg_open_ctrl(&h, rel[i], mask[i], CG_PIDS, "pids.events");
	}
	for (r = 0; r < rounds; r++) {
		base[r] = tick(&h, rel, mask, n, false);
		watch[r] = tick(&h, rel, mask, n, true);
		kept[r] = tick_kept(fds, n);
	}
	for (i = 0; i < n; i++)
		for (r = 0; r < 4; r++)
			if (fds[i][r] >= 0)
				close(fds[i][r]);
	printf("%d sessions (v1 mask %u), %d rounds\n", n, mask[0], rounds);
	printf("baseline cgroup.events read: median %.2f us per session per tick\n",
	       median(base, (size_t)rounds));
	printf("watcher sample by path (cpu+memory+pids): median %.2f us per session per tick\n",
	       median(watch, (size_t)rounds));
	printf("watcher sample, kept fds + pread: median %.2f us per session per tick\n",
	       median(kept, (size_t)rounds));
	if (mkdtemp(tmp))
		bench_disk(tmp, files, 5);
	ret = 0;
clean:
	for (i = 0; i < made; i++)
		cg_remove(&h, rel[i], mask[i], false);
	if (made) {
		char *slash = strrchr(rel[0], '/');

		*slash = '\0';
		cg_remove(&h, rel[0], mask[0], false);
	}
	if (tmp[strlen(tmp) - 1] != 'X') {
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
		if (system(cmd) != 0)
			fprintf(stderr, "%s: not removed\n", tmp);
	}
out:
	free(rel);
	free(mask);
	free(base);
	free(watch);
	free(kept);
	free(fds);
	return ret;
}
