/* The event builder: the body it produces, nulls, nesting, and misuse. */
#include <errno.h>
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_host_event_has_null_session),
		cmocka_unit_test(test_empty_containers),
		cmocka_unit_test(test_misuse_is_refused),
		cmocka_unit_test(test_no_sink),
		cmocka_unit_test(test_time_override),
	};
	return cmocka_run_group_tests(tests, NULL, teardown);
}
