/* The audit: section of the config: defaults, lists, and refusals with line numbers. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/config.h"

static struct sg_config *load(const char *text, int want, struct config_errors *errs)
{
	struct sg_config *c = NULL;

	assert_int_equal(config_load_buffer("t.yaml", text, strlen(text), &c, errs), want);
	return c;
}

static void test_defaults(void **state)
{
	struct sg_config *c = config_default();

	(void)state;
	assert_non_null(c);
	assert_true(c->audit.enabled);
	assert_true(c->audit.files);
	assert_true(c->audit.packages);
	assert_int_equal(c->audit.n_file_marks, 1);
	assert_string_equal(c->audit.file_marks[0], "/");
	assert_true(c->audit.n_sensitive_paths >= 8);
	assert_string_equal(c->audit.sensitive_paths[0], "/etc");
	/* The kernel's copy of the arguments by default; the connector is the fallback. */
	assert_int_equal(c->audit.exec_source, SG_EXEC_AUDIT);
	assert_int_equal(c->audit.proc_rcvbuf, 32u << 20);
	config_free(c);
}

static void test_values(void **state)
{
	struct config_errors e = CONFIG_ERRORS_INIT;
	struct sg_config *c = load("audit:\n  enabled: false\n  files: false\n  packages: false\n"
				   "  exec_source: proc_connector\n"
				   "  file_marks: [/, /srv]\n"
				   "  sensitive_paths: [\"~/.ssh\", /opt/keys]\n", 0, &e);

	(void)state;
	assert_false(c->audit.enabled);
	assert_false(c->audit.files);
	assert_false(c->audit.packages);
	assert_int_equal(c->audit.exec_source, SG_EXEC_PROC_CONNECTOR);
	assert_int_equal(c->audit.n_file_marks, 2);
	assert_string_equal(c->audit.file_marks[1], "/srv");
	assert_int_equal(c->audit.n_sensitive_paths, 2);
	assert_string_equal(c->audit.sensitive_paths[0], "~/.ssh");
	config_free(c);
	c = load("audit:\n  exec_source: audit\n  proc_rcvbuf: 64k\n", 0, &e);
	assert_int_equal(c->audit.exec_source, SG_EXEC_AUDIT);
	assert_int_equal(c->audit.proc_rcvbuf, 65536);
	config_free(c);
	c = load("audit:\n  sensitive_paths: []\n", 0, &e);
	assert_int_equal(c->audit.n_sensitive_paths, 0);
	config_free(c);
	config_errors_free(&e);
}

static void test_refused(void **state)
{
	struct config_errors e = CONFIG_ERRORS_INIT;

	(void)state;
	assert_null(load("audit:\n  file_marks: [relative]\n  sensitive_paths: [\"~/\"]\n"
			 "  exec_source: ebpf\n  bogus: 1\n", -EINVAL, &e));
	assert_int_equal(config_errors_count(&e), 4);
	assert_int_equal(config_errors_at(&e, 0)->line, 2);
	assert_int_equal(config_errors_at(&e, 3)->line, 5);
	config_errors_free(&e);
	assert_null(load("audit:\n  file_marks: /\n", -EINVAL, &e));
	config_errors_free(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
