/* Sessions' pure code: kernel file parsers, ids, the registry's marks and its files. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attribution/attribution.h"

#define S(x) x, strlen(x)

static void test_kv(void **state)
{
	uint64_t v = 0;

	(void)state;
	assert_int_equal(cg_parse_kv(S("populated 1\nfrozen 0\n"), "populated", &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(cg_parse_kv(S("populated 1\nfrozen 0\n"), "frozen", &v), 0);
	assert_int_equal(v, 0);
	/* memory.oom_control (v1) and memory.events (v2) */
	assert_int_equal(cg_parse_kv(S("oom_kill_disable 0\nunder_oom 0\noom_kill 3\n"),
				     "oom_kill", &v), 0);
	assert_int_equal(v, 3);
	assert_int_equal(cg_parse_kv(S("low 0\nhigh 0\nmax 2\noom 1\noom_kill 1"), "oom", &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(cg_parse_kv(S("populated 1\n"), "frozen", &v), -ENOENT);
	assert_int_equal(cg_parse_kv(S("populated x\n"), "populated", &v), -EINVAL);
	assert_int_equal(cg_parse_kv(S("populated 99999999999999999999999\n"), "populated", &v),
			 -EINVAL);
	assert_int_equal(cg_parse_kv(S("populated\n"), "populated", &v), -ENOENT);
	assert_int_equal(cg_parse_kv("", 0, "populated", &v), -ENOENT);
}

static void test_stat(void **state)
{
	const char *line = "1234 (a) b) c) S 1 1234 1234 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 "
			   "987654 1000 100 18446744073709551615\n";
	uint64_t st = 0;

	(void)state;
	assert_int_equal(proc_stat_starttime(S(line), &st), 0);
	assert_int_equal(st, 987654);
	assert_int_equal(proc_stat_starttime(S("12 (x) S 1 2 3"), &st), -EINVAL);
	assert_int_equal(proc_stat_starttime(S("no paren"), &st), -EINVAL);
	assert_int_equal(proc_stat_starttime(S("1 (x)"), &st), -EINVAL);
}

static void test_cgpaths(void **state)
{
	char id[SESSION_ID_MAX + 1], out[64];

	(void)state;
	assert_int_equal(session_id_from_cgpath(S("/sandgate/s1"), "/sandgate", id, sizeof(id)), 0);
	assert_string_equal(id, "s1");
	assert_int_equal(session_id_from_cgpath(S("/sandgate/s-2/sub/x"), "/sandgate", id,
						sizeof(id)), 0);
	assert_string_equal(id, "s-2");
	assert_int_equal(session_id_from_cgpath(S("/sandgate-other/s1"), "/sandgate", id,
						sizeof(id)), -ENOENT);
	assert_int_equal(session_id_from_cgpath(S("/sandgate"), "/sandgate", id, sizeof(id)),
			 -ENOENT);
	assert_int_equal(session_id_from_cgpath(S("/sandgate/.."), "/sandgate", id, sizeof(id)),
			 -ENOENT);
	assert_int_equal(proc_cgroup_v2(S("4:memory:/x\n0::/sandgate/s1\n"), out, sizeof(out)), 0);
	assert_string_equal(out, "/sandgate/s1");
	assert_int_equal(proc_cgroup_v2(S("4:memory:/x\n"), out, sizeof(out)), -ENOENT);
	assert_int_equal(proc_cgroup_v2(S("0::/a/very/long/path"), out, 5), -ENAMETOOLONG);
}

static void test_ids(void **state)
{
	char longid[80];

	(void)state;
	assert_true(session_id_valid("s1"));
	assert_true(session_id_valid("A.b_c-9"));
	assert_false(session_id_valid(""));
	assert_false(session_id_valid(".x"));
	assert_false(session_id_valid("a/b"));
	assert_false(session_id_valid("a b"));
	memset(longid, 'a', 65);
	longid[65] = '\0';
	assert_false(session_id_valid(longid));
	longid[64] = '\0';
	assert_true(session_id_valid(longid));
}

static struct session *mk(struct session_reg *r, const char *id)
{
	struct session *s = NULL;

	assert_int_equal(sessions_prepare(r, id, &s), 0);
	snprintf(s->cgroup, sizeof(s->cgroup), "/sandgate/%s", id);
	assert_int_equal(sessions_add(r, s), 0);
	return s;
}

static void test_marks_and_files(void **state)
{
	char dir[] = "/tmp/sgunit.XXXXXX", sub[64];
	struct session_reg *r = NULL, *r2 = NULL;
	struct session *s1, *s2, *s3, *dup = NULL;
	size_t bad = 0;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/sessions", dir);
	assert_int_equal(sessions_new(&r, sub), 0);
	s1 = mk(r, "s1");
	s2 = mk(r, "s2");
	assert_int_equal(s1->mark, 1);
	assert_int_equal(s2->mark, 2);
	assert_int_equal(sessions_prepare(r, "s1", &dup), -EEXIST);
	assert_int_equal(sessions_prepare(r, "../x", &dup), -EINVAL);
	s2->tenant = strdup("acme");
	s2->lim.memory = 1 << 20;
	s2->lim.millicpus = 1500;
	s2->state = SESSION_PAUSED;
	assert_int_equal(sessions_save(r, s1), 0);
	assert_int_equal(sessions_save(r, s2), 0);
	sessions_remove(r, s1);                 /* mark 1 is free again */
	s3 = mk(r, "s3");
	assert_int_equal(s3->mark, 1);
	/* A fresh registry reads back what was saved: same marks, same fields. */
	assert_int_equal(sessions_new(&r2, sub), 0);
	assert_int_equal(sessions_load(r2, &bad), 0);
	assert_int_equal(bad, 0);
	assert_int_equal(sessions_count(r2), 1);
	s2 = sessions_find(r2, "s2");
	assert_non_null(s2);
	assert_int_equal(s2->mark, 2);
	assert_string_equal(s2->tenant, "acme");
	assert_int_equal(s2->lim.memory, 1 << 20);
	assert_int_equal(s2->lim.millicpus, 1500);
	assert_int_equal(s2->state, SESSION_PAUSED);
	sessions_remove(r2, s2);
	sessions_free(r);
	sessions_free(r2);
	rmdir(sub);
	rmdir(dir);
}

static void test_bad_files(void **state)
{
	char dir[] = "/tmp/sgunit.XXXXXX", path[128];
	struct session_reg *r = NULL;
	size_t bad = 0;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/x.json", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"id\":\"x\",\"cgroup\":\"/s/../x\",\"state\":\"running\",\"mark\":1}", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/y.json", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("not json", f);
	fclose(f);
	assert_int_equal(sessions_new(&r, dir), 0);
	assert_int_equal(sessions_load(r, &bad), 0);
	assert_int_equal(bad, 2);
	assert_int_equal(sessions_count(r), 0);
	sessions_free(r);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	assert_int_equal(system(path), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kv),
		cmocka_unit_test(test_stat),
		cmocka_unit_test(test_cgpaths),
		cmocka_unit_test(test_ids),
		cmocka_unit_test(test_marks_and_files),
		cmocka_unit_test(test_bad_files),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
