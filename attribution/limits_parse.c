/*
 * Parsers behind resource.limit: memory.events, cpu.stat and pids.events of both cgroup
 * versions, and the kernel log's OOM lines. A sandbox can shape what these files say
 * (child cgroups, task names), so they take bytes, do no I/O and are fuzzed
 * (tests/fuzz/fuzz_limits_parse.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "attribution/attribution.h"

int cg_parse_memory_events(const char *buf, size_t len, struct cg_mem_counters *c)
{
	uint64_t max = 0, kills = 0;
	int ret = cg_parse_kv(buf, len, "max", &max);

	if (ret == 0)
		ret = cg_parse_kv(buf, len, "oom_kill", &kills);
	if (ret)
		return ret;
	c->max_hits = max;
	c->oom_kill = kills;
	return 0;
}

int cg_parse_cpu_stat(const char *buf, size_t len, struct cg_cpu_counters *c)
{
	uint64_t periods = 0, nr = 0, t = 0;
	int ret = cg_parse_kv(buf, len, "nr_throttled", &nr);

	if (ret)
		return ret;
	/* nr_periods is absent on no kernel we know of; tolerate it anyway. */
	if (cg_parse_kv(buf, len, "nr_periods", &periods) == -EINVAL)
		return -EINVAL;
	ret = cg_parse_kv(buf, len, "throttled_usec", &t);
	if (ret == -ENOENT) {
		ret = cg_parse_kv(buf, len, "throttled_time", &t);   /* v1: nanoseconds */
		t /= 1000;
	}
	if (ret)
		return ret;
	c->nr_periods = periods;
	c->nr_throttled = nr;
	c->throttled_us = t;
	return 0;
}

int cg_parse_pids_events(const char *buf, size_t len, uint64_t *max_hits)
{
	return cg_parse_kv(buf, len, "max", max_hits);
}

/* A decimal pid in p[0..n): 1..INT32_MAX. */
static int parse_pid(const char *p, size_t n, pid_t *pid)
{
	long long v = 0;
	size_t i;

	if (n == 0 || n > 10)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -EINVAL;
		v = v * 10 + (p[i] - '0');
	}
	if (v <= 0 || v > 0x7fffffffLL)
		return -EINVAL;
	*pid = (pid_t)v;
	return 0;
}

/* Last occurrence of needle in h[0..n), or NULL. */
static const char *memrmem(const char *h, size_t n, const char *needle)
{
	size_t k = strlen(needle), i;

	if (k > n)
		return NULL;
	for (i = n - k + 1; i > 0; i--)
		if (memcmp(h + i - 1, needle, k) == 0)
			return h + i - 1;
	return NULL;
}

static const char *memmem_s(const char *h, size_t n, const char *needle)
{
	size_t k = strlen(needle), i;

	for (i = 0; k <= n && i <= n - k; i++)
		if (memcmp(h + i, needle, k) == 0)
			return h + i;
	return NULL;
}

static void copy_field(char *out, size_t outlen, const char *p, size_t n)
{
	if (n >= outlen)
		n = outlen - 1;
	memcpy(out, p, n);
	out[n] = '\0';
}

/* "oom-kill:...,task_memcg=PATH,task=COMM,pid=N,uid=N": pid and uid from the right. */
static int parse_summary(const char *m, size_t n, struct kmsg_oom *out)
{
	const char *uid = memrmem(m, n, ",uid="), *pid, *memcg, *task;

	if (!uid)
		return -EINVAL;
	pid = memrmem(m, (size_t)(uid - m), ",pid=");
	if (!pid || parse_pid(pid + 5, (size_t)(uid - pid - 5), &out->pid))
		return -EINVAL;
	/* The path is ours up to the session id: a ",task=" further in is a child's name. */
	memcg = memmem_s(m, (size_t)(pid - m), ",task_memcg=");
	if (!memcg)
		return -EINVAL;
	memcg += strlen(",task_memcg=");
	task = memmem_s(memcg, (size_t)(pid - memcg), ",task=");
	if (!task)
		return -EINVAL;
	if ((size_t)(task - memcg) >= sizeof(out->memcg))
		return -ENAMETOOLONG;
	copy_field(out->memcg, sizeof(out->memcg), memcg, (size_t)(task - memcg));
	/* The name is the last ",task=" before the pid (a child cgroup may hold one too). */
	task = memrmem(task, (size_t)(pid - task), ",task=");
	copy_field(out->comm, sizeof(out->comm), task + 6, (size_t)(pid - task - 6));
	return 0;
}

/* "Memory cgroup out of memory: Killed process N (COMM) total-vm:..." */
static int parse_killed(const char *m, size_t n, const char *at, struct kmsg_oom *out)
{
	const char *p = at + strlen("Killed process "), *end = m + n, *q = p, *close;

	while (q < end && *q >= '0' && *q <= '9')
		q++;
	if (parse_pid(p, (size_t)(q - p), &out->pid))
		return -EINVAL;
	out->memcg[0] = '\0';
	out->comm[0] = '\0';
	if (q + 1 < end && q[0] == ' ' && q[1] == '(') {
		close = memrmem(q + 2, (size_t)(end - q - 2), ")");
		if (close)
			copy_field(out->comm, sizeof(out->comm), q + 2, (size_t)(close - q - 2));
	}
	return 0;
}

int kmsg_parse_oom(const char *buf, size_t len, struct kmsg_oom *out)
{
	const char *semi = memchr(buf, ';', len), *m, *nl, *k;
	size_t n;

	if (!semi)
		return -EINVAL;
	m = semi + 1;
	n = len - (size_t)(m - buf);
	nl = memchr(m, '\n', n);   /* continuation lines (" SUBSYSTEM=...") follow */
	if (nl)
		n = (size_t)(nl - m);
	memset(out, 0, sizeof(*out));
	if (n >= 9 && memcmp(m, "oom-kill:", 9) == 0)
		return parse_summary(m, n, out);
	k = memmem_s(m, n, "Killed process ");
	if (k && memmem_s(m, (size_t)(k - m), "of memory"))
		return parse_killed(m, n, k, out);
	return -ENOENT;
}
