/* Control requests: what parses, what is refused, and the session-cgroup check. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/control.h"

static int parse(const char *s, struct control_request *req)
{
	char err[256];

	return control_parse_request(s, strlen(s), req, err, sizeof(err));
}

static void test_good(void **state)
{
	struct control_request req;

	(void)state;
	assert_int_equal(parse("{\"verb\":\"session.create\",\"args\":{\"id\":\"a\"},"
			       "\"actor\":\"bot\"}", &req), 0);
	assert_string_equal(req.verb, "session.create");
	assert_string_equal(req.actor, "bot");
	assert_true(json_is_object(req.args));
	control_request_free(&req);
	assert_int_equal(parse("{\"verb\":\"ping\"}", &req), 0);
	assert_null(req.actor);
	assert_true(json_is_object(req.args));
	control_request_free(&req);
}

static void test_bad(void **state)
{
	static const char *const bad[] = {
		"", "{", "[]", "\"verb\"", "{\"verb\":1}", "{\"verb\":\"\"}",
		"{\"verb\":\"Ping\"}", "{\"verb\":\"a b\"}", "{\"verb\":\"ping\",\"args\":[]}",
		"{\"verb\":\"ping\",\"actor\":5}", "{\"verb\":\"ping\",\"verb\":\"status\"}",
		"{\"verb\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}",
	};
	struct control_request req;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(parse(bad[i], &req), -EINVAL);
		assert_null(req.root);
	}
}

static void test_session_cgroup(void **state)
{
	static const char hybrid[] =
		"12:pids:/user.slice\n1:name=systemd:/user.slice\n0::/sandgate/s1\n";
	static const char outside[] = "0::/user.slice/session-3.scope\n";
	static const char lookalike[] = "0::/sandgate-other/x\n";
	static const char exact[] = "0::/sandgate\n";
	static const char v1only[] = "4:memory:/sandgate/s1\n";

	(void)state;
	assert_int_equal(control_peer_in_session(hybrid, strlen(hybrid), "/sandgate"), -EACCES);
	assert_int_equal(control_peer_in_session(outside, strlen(outside), "/sandgate"), 0);
	assert_int_equal(control_peer_in_session(lookalike, strlen(lookalike), "/sandgate"), 0);
	assert_int_equal(control_peer_in_session(exact, strlen(exact), "/sandgate"), -EACCES);
	assert_int_equal(control_peer_in_session(v1only, strlen(v1only), "/sandgate"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_session_cgroup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
