/*
 * audit/auditjoin: the records of one exec joined by serial, on the records captured in
 * tests/data/audit/execve.log (two execve events, as auditd logged them: no EOE lines,
 * so the test adds them), interleaved, and with the slots exhausted.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sensors/kaudit/auditjoin.h"

#include "audit_records.h"

/* The record type of an auditd log line ("type=NAME msg=..."); 0 for the others. */
static uint16_t type_of(const char *l)
{
	static const struct { const char *n; uint16_t t; } map[] = {
		{ "type=SYSCALL ", AUDITREC_SYSCALL }, { "type=EXECVE ", AUDITREC_EXECVE },
		{ "type=CWD ", AUDITREC_CWD }, { "type=PATH ", 1302 },
		{ "type=PROCTITLE ", 1327 },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strncmp(l, map[i].n, strlen(map[i].n)) == 0)
			return map[i].t;
	return 0;
}

static struct auditjoin_ev *eoe(struct auditjoin *j, const char *stamp)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "audit(%s): ", stamp);
	return auditjoin_feed(j, AUDITREC_EOE, buf, strlen(buf));
}

/* Feeds the lines of the event with stamp (every other line is skipped). */
static void feed(struct auditjoin *j, const char *stamp)
{
	for (size_t i = 0; i < nlines; i++)
		if (strstr(lines[i], stamp) && type_of(lines[i]))
			assert_null(auditjoin_feed(j, type_of(lines[i]), lines[i],
						   strlen(lines[i])));
}

static void test_one_event(void **state)
{
	struct auditjoin *j = malloc(sizeof(*j));
	struct auditjoin_ev *e;

	(void)state;
	assert_non_null(j);
	auditjoin_init(j);
	feed(j, "1795955022.596:186035");
	e = eoe(j, "1795955022.596:186035");
	assert_non_null(e);
	assert_true(e->syscall && e->execve && e->success && !e->bad);
	assert_int_equal(e->pid, 4920);
	assert_int_equal(e->ppid, 4849);
	assert_true(e->has_ids);
	assert_int_equal(e->uid, 0);
	assert_string_equal(e->comm, "echo");
	assert_true(e->has_exe);
	assert_string_equal(e->exe, "/usr/bin/echo");
	assert_true(e->has_cwd);
	assert_string_equal(e->cwd, "/work/main");
	assert_int_equal(e->ms, 1795955022596ull);
	assert_true(auditrec_execve_complete(&e->args));
	assert_int_equal(e->args.argc, 6);
	assert_memory_equal(e->args.a[2].b, "with space", 10);
	assert_memory_equal(e->args.a[4].b, "nl\nline", 7);
	auditjoin_done(e);
	assert_null(eoe(j, "1795955022.596:186035"));   /* closed: an unknown serial */
	auditjoin_free(j);
	free(j);
}

/* Two events' records interleaved (two CPUs): each joined with its own. */
static void test_interleaved(void **state)
{
	struct auditjoin *j = malloc(sizeof(*j));
	struct auditjoin_ev *e;
	size_t a = 0, b = 0;

	(void)state;
	assert_non_null(j);
	auditjoin_init(j);
	while (a < nlines || b < nlines) {
		while (a < nlines && !(strstr(lines[a], ":186035)") && type_of(lines[a])))
			a++;
		if (a < nlines)
			assert_null(auditjoin_feed(j, type_of(lines[a]), lines[a],
						   strlen(lines[a]))), a++;
		while (b < nlines && !(strstr(lines[b], ":186038)") && type_of(lines[b])))
			b++;
		if (b < nlines)
			assert_null(auditjoin_feed(j, type_of(lines[b]), lines[b],
						   strlen(lines[b]))), b++;
	}
	e = eoe(j, "1795955022.608:186038");
	assert_non_null(e);
	assert_int_equal(e->pid, 4924);
	assert_true(auditrec_execve_complete(&e->args));
	assert_int_equal(e->args.a[2].len, 9000);
	auditjoin_done(e);
	e = eoe(j, "1795955022.596:186035");
	assert_non_null(e);
	assert_int_equal(e->pid, 4920);
	assert_int_equal(e->args.argc, 6);
	auditjoin_done(e);
	auditjoin_free(j);
	free(j);
}

/* Records without a SYSCALL first are ignored; events never closed are evicted. */
static void test_orphans_and_eviction(void **state)
{
	struct auditjoin *j = malloc(sizeof(*j));
	char buf[128];

	(void)state;
	assert_non_null(j);
	auditjoin_init(j);
	snprintf(buf, sizeof(buf), "audit(1.000:7): cwd=\"/x\"");
	assert_null(auditjoin_feed(j, AUDITREC_CWD, buf, strlen(buf)));
	assert_null(eoe(j, "1.000:7"));
	assert_null(auditjoin_feed(j, AUDITREC_SYSCALL, "garbage", 7));
	assert_int_equal(j->bad, 1);
	for (int i = 0; i < AUDITJOIN_PEND + 3; i++) {
		snprintf(buf, sizeof(buf), "audit(1.000:%d): syscall=59 success=yes pid=%d",
			 100 + i, 1000 + i);
		assert_null(auditjoin_feed(j, AUDITREC_SYSCALL, buf, strlen(buf)));
	}
	assert_int_equal(j->evicted, 3);
	assert_null(eoe(j, "1.000:100"));                /* the oldest went first */
	assert_non_null(eoe(j, "1.000:134"));
	auditjoin_free(j);
	free(j);
}

/* AUDIT_CONFIG_CHANGE records as the kernel wrote them (t_audit_tamper's dmesg). */
static void test_config_change(void **state)
{
	static const char rm[] = "audit(1796171944.039:3): auid=4294967295 ses=4294967295 "
				 "op=remove_rule key=\"sandgate-26301\" list=4 res=1";
	static const char set[] = "audit(1796171953.267:7): op=set audit_enabled=0 old=1 "
				  "auid=0 ses=4 res=1";
	struct auditjoin_cc cc;

	(void)state;
	assert_int_equal(auditjoin_config(rm, strlen(rm), &cc), 0);
	assert_int_equal(cc.serial, 3);
	assert_string_equal(cc.op, "remove_rule");
	assert_string_equal(cc.key, "sandgate-26301");
	assert_int_equal(cc.auid, 4294967295);
	assert_int_equal(cc.pid, -1);
	assert_int_equal(auditjoin_config(set, strlen(set), &cc), 0);
	assert_string_equal(cc.op, "set");
	assert_string_equal(cc.field, "audit_enabled");
	assert_int_equal(cc.value, 0);
	assert_int_equal(cc.old, 1);
	assert_int_equal(cc.ses, 4);
	assert_int_equal(auditjoin_config("audit(1.0:1): res=1", 19, &cc), -EINVAL);
	assert_int_equal(auditjoin_config("op=set", 6, &cc), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_event),
		cmocka_unit_test(test_interleaved),
		cmocka_unit_test(test_orphans_and_eviction),
		cmocka_unit_test(test_config_change),
	};

	return cmocka_run_group_tests(tests, load, unload);
}
