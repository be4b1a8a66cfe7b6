/* packages/pkg_detect.c: which execs are installs, and what their arguments ask for. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <errno.h>

#include "packages/pkg.h"

/* argv as /proc/PID/cmdline holds it: each argument NUL-terminated. */
static int detect(struct pkg_cmd *c, const char *const *argv)
{
	char buf[4096];
	size_t n = 0;

	for (; *argv; argv++) {
		size_t l = strlen(*argv) + 1;

		assert_true(n + l <= sizeof(buf));
		memcpy(buf + n, *argv, l);
		n += l;
	}
	return pkg_detect(buf, n, c);
}

#define ARGV(...) ((const char *const[]){ __VA_ARGS__, NULL })

static struct pkg_cmd *cmd(void)
{
	struct pkg_cmd *c = malloc(sizeof(*c));

	assert_non_null(c);
	return c;
}

static void test_pip_forms(void **state)
{
	struct pkg_cmd *c = cmd();

	(void)state;
	/* a pip script exec'd through its shebang: the interpreter, then the script */
	assert_int_equal(detect(c, ARGV("/v/bin/python3", "/v/bin/pip", "install", "-q",
					"--index-url", "http://198.18.1.2/simple", "sgapp==1.0",
					"requests[socks]>=2,<3 ; python_version>'3'")), 1);
	assert_int_equal(c->mgr, PKG_PIP);
	assert_string_equal(c->tool, "pip");
	assert_string_equal(c->python, "/v/bin/python3");
	assert_string_equal(c->index, "http://198.18.1.2/simple");
	assert_int_equal(c->n_specs, 2);
	assert_string_equal(c->specs[0].name, "sgapp");
	assert_string_equal(c->specs[0].version, "==1.0");
	assert_string_equal(c->specs[1].name, "requests");
	assert_string_equal(c->specs[1].version, ">=2,<3");
	/* python -m pip, options glued, a direct URL, -r, --target, --no-index, -f */
	assert_int_equal(detect(c, ARGV("python3.11", "-I", "-m", "pip", "install", "-ihttps://x.test/s",
					"--no-index", "-f", "/wheels", "-r", "req.txt",
					"--target=/t", "https://h.test/a-1.0-py3-none-any.whl")), 1);
	assert_string_equal(c->python, "python3.11");
	assert_string_equal(c->index, "https://x.test/s");
	assert_true(c->no_index);
	assert_int_equal(c->n_extra, 1);
	assert_string_equal(c->extra[0], "/wheels");
	assert_int_equal(c->n_reqfiles, 1);
	assert_string_equal(c->reqfiles[0], "req.txt");
	assert_string_equal(c->target, "/t");
	assert_int_equal(c->n_specs, 1);
	assert_true(c->specs[0].is_url);
	assert_int_equal(detect(c, ARGV("python3", "-W", "ignore", "-X", "utf8", "-m", "pip",
					"install", "y")), 1);
	assert_string_equal(c->specs[0].name, "y");
	/* uv pip install; pip3 --user */
	assert_int_equal(detect(c, ARGV("uv", "pip", "install", "x")), 1);
	assert_string_equal(c->tool, "uv");
	assert_int_equal(c->mgr, PKG_PIP);
	assert_int_equal(detect(c, ARGV("/usr/bin/pip3", "--user", "install", "name @ https://h.test/n.whl")), 1);
	assert_true(c->user);
	assert_string_equal(c->specs[0].name, "name");
	assert_true(c->specs[0].is_url);
	assert_int_equal(detect(c, ARGV("pip", "install", "-e", "./proj", "-U", "x")), 1);
	assert_int_equal(c->n_specs, 2);
	assert_string_equal(c->specs[0].raw, "./proj");
	assert_true(c->specs[0].is_url);
	assert_string_equal(c->specs[1].name, "x");
	free(c);
}

static void test_not_installs(void **state)
{
	struct pkg_cmd *c = cmd();

	(void)state;
	assert_int_equal(detect(c, ARGV("pip", "list")), 0);
	assert_int_equal(detect(c, ARGV("pip", "download", "x")), 0);
	assert_int_equal(detect(c, ARGV("python3", "script.py", "install")), 0);
	assert_int_equal(detect(c, ARGV("python3", "-m", "venv", "v")), 0);
	assert_int_equal(detect(c, ARGV("python3", "-c", "import pip")), 0);
	assert_int_equal(detect(c, ARGV("npm", "run", "build")), 0);
	assert_int_equal(detect(c, ARGV("apt-get", "update")), 0);
	assert_int_equal(detect(c, ARGV("dpkg", "-l")), 0);
	assert_int_equal(detect(c, ARGV("cargo", "build")), 0);
	assert_int_equal(detect(c, ARGV("ls", "install")), 0);
	assert_int_equal(detect(c, ARGV("uv", "run", "x")), 0);
	assert_int_equal(pkg_detect("", 0, c), -EINVAL);
	assert_false(pkg_detect_maybe("ls\0-l\0", 6));
	assert_true(pkg_detect_maybe("/usr/bin/env\0node\0", 18));
	free(c);
}

static void test_npm_forms(void **state)
{
	struct pkg_cmd *c = cmd();

	(void)state;
	/* Debian's npm: #!/usr/bin/env node */
	assert_int_equal(detect(c, ARGV("/usr/bin/env", "node", "/usr/bin/npm", "install",
					"--registry", "https://r.test/", "--save-dev",
					"left-pad@^1.3", "@scope/pkg@2.0.0", "../x-1.0.0.tgz")), 1);
	assert_int_equal(c->mgr, PKG_NPM);
	assert_string_equal(c->tool, "npm");
	assert_string_equal(c->index, "https://r.test/");
	assert_int_equal(c->n_specs, 3);
	assert_string_equal(c->specs[0].name, "left-pad");
	assert_string_equal(c->specs[0].version, "^1.3");
	assert_string_equal(c->specs[1].name, "@scope/pkg");
	assert_string_equal(c->specs[1].version, "2.0.0");
	assert_true(c->specs[2].is_url);
	assert_int_equal(detect(c, ARGV("env", "-u", "X", "A=b", "npm", "i", "-g", "x")), 1);
	assert_true(c->global);
	assert_int_equal(detect(c, ARGV("yarn")), 1);
	assert_string_equal(c->tool, "yarn");
	assert_int_equal(detect(c, ARGV("node", "/opt/pnpm/bin/pnpm.cjs", "add", "x")), 1);
	assert_string_equal(c->tool, "pnpm");
	assert_int_equal(detect(c, ARGV("npm", "ci")), 1);
	assert_int_equal(c->n_specs, 0);
	free(c);
}

static void test_apt_dpkg_cargo(void **state)
{
	struct pkg_cmd *c = cmd();

	(void)state;
	assert_int_equal(detect(c, ARGV("apt-get", "-o", "Debug::x=1", "install", "-y",
					"curl=7.88.1-10", "jq/bookworm", "./local.deb")), 1);
	assert_int_equal(c->mgr, PKG_APT);
	assert_int_equal(c->n_specs, 3);
	assert_string_equal(c->specs[0].name, "curl");
	assert_string_equal(c->specs[0].version, "7.88.1-10");
	assert_string_equal(c->specs[1].name, "jq");
	assert_string_equal(c->specs[1].version, "");
	assert_true(c->specs[2].is_url);
	assert_int_equal(detect(c, ARGV("dpkg", "--admindir=/a", "-i", "x_1_all.deb", "y.deb")), 1);
	assert_int_equal(c->mgr, PKG_DPKG);
	assert_string_equal(c->admindir, "/a");
	assert_int_equal(c->n_specs, 2);
	assert_int_equal(detect(c, ARGV("dpkg", "-iE", "z.deb")), 1);
	assert_int_equal(detect(c, ARGV("cargo", "install", "ripgrep@14.1.0", "--index",
					"sparse+https://i.test/")), 1);
	assert_int_equal(c->mgr, PKG_CARGO);
	assert_string_equal(c->specs[0].name, "ripgrep");
	assert_string_equal(c->specs[0].version, "14.1.0");
	assert_string_equal(c->index, "sparse+https://i.test/");
	free(c);
}

static void test_many_specs(void **state)
{
	const char *argv[PKG_MAX_SPECS + 10];
	struct pkg_cmd *c = cmd();
	size_t n = 0;

	(void)state;
	argv[n++] = "pip";
	argv[n++] = "install";
	while (n < PKG_MAX_SPECS + 9)
		argv[n++] = "pkg";
	argv[n] = NULL;
	assert_int_equal(detect(c, argv), 1);
	assert_int_equal(c->n_specs, PKG_MAX_SPECS);
	assert_true(c->specs_truncated);
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pip_forms),
		cmocka_unit_test(test_not_installs),
		cmocka_unit_test(test_npm_forms),
		cmocka_unit_test(test_apt_dpkg_cargo),
		cmocka_unit_test(test_many_specs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
