/*
 * conf/'s one reader of a list of strings (cfg_str_list): the items a part's check
 * accepts are kept, each other item is an error at its own line, the bound and the
 * non-list are refused, and the list read replaces the one before. Links only conf/
 * (and common/ below it): the proof that a low part's tests need nothing above it.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "conf/conf.h"

static bool starts_slash(const char *s, const void *arg)
{
	(void)arg;
	return s[0] == '/';
}

static const struct cfg_list_spec paths = {
	"a list of /paths", 3, starts_slash, NULL, "expected an absolute path",
};

/* Reads the value of key "k" of text with spec into (*list, *n); returns the reader's
 * result, with the errors in e. */
static int read_list(const char *text, const struct cfg_list_spec *spec, char ***list,
		     size_t *n, struct config_errors *e)
{
	struct cfg_ctx ctx = { .file = "t.yaml", .errs = e };
	struct cy_node *root = NULL;
	int ret;

	assert_int_equal(cy_parse(&ctx, text, strlen(text), &root), 0);
	assert_non_null(root);
	assert_int_equal(root->type, CY_MAP);
	snprintf(ctx.path, sizeof(ctx.path), "k");
	ret = cfg_str_list(&ctx, root->items[1], spec, list, n);
	cy_free(root);
	return ret;
}

static void assert_error(const struct config_errors *e, size_t i, unsigned line,
			 const char *part)
{
	const struct config_error *err = config_errors_at(e, i);

	assert_non_null(err);
	assert_int_equal(err->line, line);
	assert_non_null(strstr(err->msg, part));
}

static void test_accepts_and_replaces(void **state)
{
	struct config_errors e = CONFIG_ERRORS_INIT;
	char **list = NULL;
	size_t n = 0;

	(void)state;
	assert_int_equal(read_list("k: [/a]\n", &paths, &list, &n, &e), 0);
	assert_int_equal(n, 1);
	assert_int_equal(read_list("k:\n  - /b\n  - /c\n", &paths, &list, &n, &e), 0);
	assert_int_equal(n, 2);
	assert_string_equal(list[0], "/b");
	assert_string_equal(list[1], "/c");
	assert_null(list[2]);              /* NULL-terminated */
	assert_int_equal(read_list("k: []\n", &paths, &list, &n, &e), 0);
	assert_int_equal(n, 0);
	assert_non_null(list);
	assert_int_equal(config_errors_count(&e), 0);
	cfg_str_list_free(list, n);
	cfg_str_list_free(NULL, 0);
}

static void test_refusals(void **state)
{
	struct config_errors e = CONFIG_ERRORS_INIT;
	char **list = NULL;
	size_t n = 0;

	(void)state;
	/* Each bad item an error at its line; the good ones kept. */
	assert_int_equal(read_list("k:\n  - /a\n  - rel\n  - [x]\n", &paths, &list, &n, &e),
			 -EINVAL);
	assert_int_equal(n, 1);
	assert_string_equal(list[0], "/a");
	assert_int_equal(config_errors_count(&e), 2);
	assert_error(&e, 0, 3, "expected an absolute path");
	assert_error(&e, 1, 4, "");
	config_errors_free(&e);
	/* Not a list, or too long: an error at the value, the list before kept. */
	assert_int_equal(read_list("k: /a\n", &paths, &list, &n, &e), -EINVAL);
	assert_error(&e, 0, 1, "a list of /paths");
	assert_int_equal(read_list("k: [/a, /b, /c, /d]\n", &paths, &list, &n, &e), -EINVAL);
	assert_error(&e, 1, 1, "at most 3 entries");
	assert_int_equal(n, 1);
	assert_string_equal(list[0], "/a");
	config_errors_free(&e);
	cfg_str_list_free(list, n);
}

static void test_any_string(void **state)
{
	static const struct cfg_list_spec any = { "a list of names", 0, NULL, NULL, NULL };
	struct config_errors e = CONFIG_ERRORS_INIT;
	char **list = NULL;
	size_t n = 0;

	(void)state;
	assert_int_equal(read_list("k: [s1, \"s 2\"]\n", &any, &list, &n, &e), 0);
	assert_int_equal(n, 2);
	assert_string_equal(list[1], "s 2");
	cfg_str_list_free(list, n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepts_and_replaces),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_any_string),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
