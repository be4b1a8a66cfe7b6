/* The event builder: the body it produces, nulls, nesting, and misuse. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "journal/event.h"

static struct event *captured;

static int capture(void *ctx, struct event *e)
{
	(void)ctx;
	event_free(captured);
	captured = e;
	return 0;
}

static char *body_of(const struct event *e)
{
	char *s = malloc(e->body.len + 3);

	assert_non_null(s);
	/* The body is ",k:v,..."; wrapping it as an object makes it checkable JSON. */
	s[0] = '{';
	memcpy(s + 1, e->body.data + 1, e->body.len - 1);
	s[e->body.len] = '}';
	s[e->body.len + 1] = '\0';
	return s;
}

static void test_fields(void **state)
{
	struct event *e = event_new("process.exec", "s1", EVENT_SRC_KERNEL);
	char *s;

	(void)state;
	event_set_sink(capture, NULL);
	event_int(e, "pid", 42);
	event_str(e, "cwd", NULL);
	event_str(e, "exe", "/bin/sh");
	event_array_begin(e, "args");
	event_str(e, NULL, "-c");
	event_str(e, NULL, "echo \"hi\"");
	event_array_end(e);
	event_bool(e, "argv_complete", true);
	event_object_begin(e, "dst");
	event_str(e, "ip", "198.18.0.1");
	event_uint(e, "port", 443);
	event_object_end(e);
	event_double(e, "ratio", 0.5);
	assert_int_equal(event_emit(e), 0);
	assert_ptr_equal(captured, e);
	assert_string_equal(captured->type, "process.exec");
	assert_string_equal(captured->session_id, "s1");
	s = body_of(captured);
	assert_string_equal(s, "{\"pid\":42,\"cwd\":null,\"exe\":\"/bin/sh\",\"args\":[\"-c\","
			       "\"echo \\\"hi\\\"\"],\"argv_complete\":true,\"dst\":{\"ip\":"
			       "\"198.18.0.1\",\"port\":443},\"ratio\":0.5}");
	free(s);
}

static void test_host_event_has_null_session(void **state)
{
	struct event *e = event_new("daemon.start", NULL, EVENT_SRC_SANDGATE);

	(void)state;
	assert_null(e->session_id);
	assert_string_equal(event_source_str(e->source), "sandgate");
	event_free(e);
}

static void test_empty_containers(void **state)
{
	struct event *e = event_new("x", NULL, EVENT_SRC_GATEWAY);
	char *s;

	(void)state;
	event_array_begin(e, "answers");
	event_array_end(e);
	event_object_begin(e, "geo");
	event_object_end(e);
	s = body_of(e);
	assert_string_equal(s, "{\"answers\":[],\"geo\":{}}");
	free(s);
	event_free(e);
}

static void test_misuse_is_refused(void **state)
{
	struct event *e;

	(void)state;
	event_set_sink(capture, NULL);
	e = event_new("x", NULL, EVENT_SRC_KERNEL);
	event_array_begin(e, "a");
	assert_int_equal(event_emit(e), -EINVAL);    /* unclosed */
	e = event_new("x", NULL, EVENT_SRC_KERNEL);
	event_object_end(e);
	assert_int_equal(event_emit(e), -EINVAL);    /* close without open */
	e = event_new("x", NULL, EVENT_SRC_KERNEL);
	event_str(e, NULL, "keyless at top level");
	assert_int_equal(event_emit(e), -EINVAL);
}

static void test_no_sink(void **state)
{
	(void)state;
	event_set_sink(NULL, NULL);
	assert_int_equal(event_emit(event_new("x", NULL, EVENT_SRC_KERNEL)), -ENOTCONN);
}

static void test_time_override(void **state)
{
	struct event *e = event_new("x", NULL, EVENT_SRC_KERNEL);
	struct timespec t = { .tv_sec = 5, .tv_nsec = 6 };

	(void)state;
	event_set_time(e, &t);
	assert_int_equal(e->ts.tv_sec, 5);
	assert_int_equal(e->ts.tv_nsec, 6);
	event_free(e);
}

static int teardown(void **state)
{
	(void)state;
	event_free(captured);
	captured = NULL;
	return 0;
}

/*
 * Freed events are recycled (event.c's pool): a reused one starts empty, with its own
 * type, session and depth, whatever the previous one held; an over-long type is cut as
 * before, and a session id longer than the inline room is kept whole.
 */
static void test_recycled_event_starts_clean(void **state)
{
	char long_sid[200], long_type[100];
	struct event *e;
	int i;

	(void)state;
	memset(long_sid, 'x', sizeof(long_sid) - 1);
	long_sid[sizeof(long_sid) - 1] = '\0';
	memset(long_type, 't', sizeof(long_type) - 1);
	long_type[sizeof(long_type) - 1] = '\0';
	for (i = 0; i < 200; i++) {
		e = event_new("a.first", i % 2 ? long_sid : "sess-1", EVENT_SRC_KERNEL);
		assert_non_null(e);
		event_object_begin(e, "open");       /* left open: depth 1, bad on emit */
		event_str(e, "k", "a long value that grows the body buffer a little");
		event_free(e);
	}
	e = event_new(long_type, NULL, EVENT_SRC_GATEWAY);
	assert_non_null(e);
	assert_int_equal(strlen(e->type), EVENT_TYPE_MAX - 1);
	assert_null(e->session_id);
	assert_int_equal(e->body.len, 0);
	assert_int_equal(e->depth, 0);
	assert_false(e->bad);
	event_free(e);
	e = event_new("b.second", long_sid, EVENT_SRC_GATEWAY);
	assert_string_equal(e->session_id, long_sid);
	event_uint(e, "n", 1);
	event_set_sink(capture, NULL);
	assert_int_equal(event_emit(e), 0);
	assert_string_equal(captured->type, "b.second");
	assert_int_equal(captured->body.len, strlen(",\"n\":1"));
	assert_memory_equal(captured->body.data, ",\"n\":1", captured->body.len);
	event_free(captured);
	captured = NULL;
}

#define HANDOFF 1000

static void *free_all(void *arg)
{
	struct event **v = arg;

	for (int i = 0; i < HANDOFF; i++)
		event_free(v[i]);
	return NULL;
}

/* Built on one thread, freed on another that then exits (as a producer and the writer):
 * the events come back through the shared pool, usable and empty. */
static void test_events_freed_on_another_thread(void **state)
{
	static struct event *v[HANDOFF];
	pthread_t t;
	int i;

	(void)state;
	for (i = 0; i < HANDOFF; i++) {
		v[i] = event_new("a.made", "sess-1", EVENT_SRC_KERNEL);
		assert_non_null(v[i]);
		event_uint(v[i], "i", (uint64_t)i);
	}
	assert_int_equal(pthread_create(&t, NULL, free_all, v), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	for (i = 0; i < HANDOFF; i++) {
		v[i] = event_new("b.again", NULL, EVENT_SRC_SANDGATE);
		assert_non_null(v[i]);
		assert_int_equal(v[i]->body.len, 0);
		assert_null(v[i]->session_id);
	}
	for (i = 0; i < HANDOFF; i++)
		event_free(v[i]);
}

static void *make_one(void *arg)
{
	struct event **out = arg;

	*out = event_new("c.taken", NULL, EVENT_SRC_KERNEL);
	return NULL;
}

/* A thread that only builds events (a sensor: the writer frees them) takes a batch from
 * the pool into its cache and exits: what it did not use goes back, not lost with it
 * (under ASan, LeakSanitizer fails the test run otherwise). */
static void test_builder_thread_exits(void **state)
{
	static struct event *v[HANDOFF];
	struct event *one = NULL;
	pthread_t t;
	size_t n;
	int i;

	(void)state;
	for (i = 0; i < HANDOFF; i++)
		assert_non_null(v[i] = event_new("a.made", NULL, EVENT_SRC_KERNEL));
	assert_int_equal(pthread_create(&t, NULL, free_all, v), 0);
	assert_int_equal(pthread_join(t, NULL), 0);   /* the pool holds them now */
	n = event_pool_size();
	assert_true(n > 1);
	assert_int_equal(pthread_create(&t, NULL, make_one, &one), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_non_null(one);
	assert_int_equal(event_pool_size(), n - 1);    /* only the one it built is out */
	event_free(one);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_host_event_has_null_session),
		cmocka_unit_test(test_empty_containers),
		cmocka_unit_test(test_misuse_is_refused),
		cmocka_unit_test(test_no_sink),
		cmocka_unit_test(test_time_override),
		cmocka_unit_test(test_recycled_event_starts_clean),
		cmocka_unit_test(test_events_freed_on_another_thread),
		cmocka_unit_test(test_builder_thread_exits),
	};
	return cmocka_run_group_tests(tests, NULL, teardown);
}
