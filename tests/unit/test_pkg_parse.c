/* packages/pkg_parse.c, pkg_lock.c: installed metadata, lockfiles, status files,
 * configs. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "packages/pkg.h"
#include "packages/pkg_int.h"

static char *load(const char *name, size_t *len)
{
	const char *dir = getenv("SANDGATE_TESTDATA");
	char path[512], *b = malloc(1 << 20);
	FILE *f;

	snprintf(path, sizeof(path), "%s/pkg/%s", dir ? dir : "tests/data", name);
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_non_null(b);
	*len = fread(b, 1, (1 << 20) - 1, f);
	b[*len] = '\0';
	fclose(f);
	return b;
}

static void test_metadata_record(void **state)
{
	char name[PKG_NAME_MAX], ver[PKG_VER_MAX];
	size_t len, files;
	char *b = load("METADATA", &len);

	(void)state;
	assert_int_equal(pkg_metadata_parse(b, len, name, sizeof(name), ver, sizeof(ver)), 0);
	assert_string_equal(name, "annotated-types");
	assert_string_equal(ver, "0.7.0");
	free(b);
	/* CRLF, case of the keys, and headers after the blank line are the body */
	assert_int_equal(pkg_metadata_parse("name: a\r\nVERSION: 1\r\n\r\n", 21, name, 8, ver, 8), 0);
	assert_string_equal(name, "a");
	assert_string_equal(ver, "1");
	assert_int_equal(pkg_metadata_parse("Name: a\n\nVersion: 1\n", 20, name, 8, ver, 8), -EINVAL);
	/* a value longer than the buffer is cut, not overflowed */
	assert_int_equal(pkg_metadata_parse("Name: abcdefghij\nVersion: 1\n", 28, name, 4, ver, 8), 0);
	assert_string_equal(name, "abc");
	b = load("RECORD", &len);
	assert_int_equal(pkg_record_parse(b, len, &files), 0);
	assert_int_equal(files, 10);
	free(b);
	assert_int_equal(pkg_record_parse("\"a,b.py\",sha256=x,1\n", 20, &files), 0);
	assert_int_equal(files, 1);
	assert_int_equal(pkg_record_parse("nocommas\n", 9, &files), -EINVAL);
}

static void test_direct_url(void **state)
{
	struct pkg_direct_url d;
	size_t len;
	char *b = load("direct_url.archive.json", &len);

	(void)state;
	assert_int_equal(pkg_direct_url_parse(b, len, &d), 0);
	assert_string_equal(d.url, "https://files.example.test/sgother-2.5-py3-none-any.whl");
	assert_string_equal(d.algo, "sha256");
	assert_string_equal(d.value, "0b8a8a4e0c1c3bb0a7bb4f7a3b1e2c0d6b7d0f8f4c7a1b7d1b0e5c1b2a3d4e5f");
	free(b);
	b = load("direct_url.dir.json", &len);
	assert_int_equal(pkg_direct_url_parse(b, len, &d), 0);
	assert_true(d.is_dir);
	assert_string_equal(d.algo, "");
	free(b);
	/* the older "hash": "algo=HEX" form; a non-hex value is ignored */
	static const char old[] = "{\"url\":\"u\",\"archive_info\":{\"hash\":\"sha256=ABcd\"}}";
	assert_int_equal(pkg_direct_url_parse(old, strlen(old), &d), 0);
	assert_string_equal(d.value, "abcd");
	static const char bad[] = "{\"url\":\"u\",\"archive_info\":{\"hash\":\"sha256=zz\"}}";
	assert_int_equal(pkg_direct_url_parse(bad, strlen(bad), &d), 0);
	assert_string_equal(d.algo, "");
	assert_int_equal(pkg_direct_url_parse("[1]", 3, &d), -EINVAL);
	assert_int_equal(pkg_direct_url_parse("{", 1, &d), -EINVAL);
}

struct lock_seen {
	struct pkg_lock_ent e[8];
	size_t n;
};

static int on_lock(void *ctx, const struct pkg_lock_ent *e)
{
	struct lock_seen *s = ctx;

	if (s->n < 8)
		s->e[s->n++] = *e;
	return 0;
}

static const struct pkg_lock_ent *find(const struct lock_seen *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->e[i].name, name) == 0)
			return &s->e[i];
	return NULL;
}

static void test_lock(void **state)
{
	/* SHA-512 of the empty string (FIPS 180-4 example), in SRI base64 */
	static const char empty512[] = "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e";
	struct lock_seen *s = calloc(1, sizeof(*s));
	const struct pkg_lock_ent *e;
	size_t len;
	char *b = load("package-lock.json", &len);

	(void)state;
	assert_non_null(s);
	assert_int_equal(pkg_lock_parse(b, len, on_lock, s), 0);
	assert_int_equal(s->n, 4);
	e = find(s, "sgtiny");
	assert_non_null(e);
	assert_string_equal(e->version, "1.2.3");
	assert_string_equal(e->resolved, "file:../sgtiny-1.2.3.tgz");
	assert_string_equal(e->algo, "sha512");
	assert_string_equal(e->value, empty512);
	e = find(s, "@scope/dep");   /* the strongest of two hashes */
	assert_non_null(e);
	assert_string_equal(e->algo, "sha512");
	e = find(s, "inner");
	assert_non_null(e);
	assert_string_equal(e->path, "node_modules/sgtiny/node_modules/inner");
	assert_string_equal(e->algo, "");
	e = find(s, "linked");
	assert_non_null(e);
	assert_true(e->link);
	free(b);
	free(s);
	assert_int_equal(pkg_lock_parse("{}", 2, on_lock, NULL), -EINVAL);
	assert_int_equal(pkg_lock_parse("nope", 4, on_lock, NULL), -EINVAL);
}

static void test_sri(void **state)
{
	char algo[16], hex[160];

	(void)state;
	/* SHA-1 of "" = da39a3ee...; SRI base64 2jmj7l5rSw0yVb/vlWAYkK/YBwk= */
	assert_int_equal(pkg_sri_decode("sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwk=", algo, sizeof(algo),
					hex, sizeof(hex)), 0);
	assert_string_equal(algo, "sha1");
	assert_string_equal(hex, "da39a3ee5e6b4b0d3255bfef95601890afd80709");
	assert_int_equal(pkg_sri_decode("md5-xx", algo, sizeof(algo), hex, sizeof(hex)), -EINVAL);
	assert_int_equal(pkg_sri_decode("sha256-@@@", algo, sizeof(algo), hex, sizeof(hex)), -EINVAL);
	assert_int_equal(pkg_sri_decode("sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwk=", algo, sizeof(algo),
					hex, 8), -EINVAL);
}

static int on_deb(void *ctx, const struct pkg_dpkg_ent *e)
{
	struct pkg_dpkg_ent *v = ctx;

	for (int i = 0; i < 4; i++)
		if (!v[i].name[0]) {
			v[i] = *e;
			break;
		}
	return 0;
}

static void test_dpkg_status(void **state)
{
	struct pkg_dpkg_ent v[4];
	size_t len;
	char *b = load("status", &len);

	(void)state;
	memset(v, 0, sizeof(v));
	assert_int_equal(pkg_dpkg_status_parse(b, len, on_deb, v), 0);
	assert_string_equal(v[0].name, "libfoo1");
	assert_string_equal(v[0].version, "1:2.3-4");
	assert_string_equal(v[0].arch, "amd64");
	assert_string_equal(v[0].status, "install ok installed");
	assert_string_equal(v[1].name, "removed-pkg");   /* a continuation line is no field */
	assert_string_equal(v[1].status, "deinstall ok config-files");
	assert_string_equal(v[2].name, "sandgate-test-pkg");
	assert_string_equal(v[2].version, "1.0-1");
	assert_string_equal(v[3].name, "");
	free(b);
}

static void test_conf_and_specs(void **state)
{
	static const char *const pip[] = { "global", "install", NULL };
	char out[256];
	struct pkg_spec sp;
	size_t len;
	char *b = load("pip.conf", &len);

	(void)state;
	assert_int_equal(pkg_conf_get(b, len, pip, "index-url", out, sizeof(out)), 0);
	assert_string_equal(out, "https://install.example.test/simple");
	assert_int_equal(pkg_conf_get(b, len, pip, "extra-index-url", out, sizeof(out)), -ENOENT);
	free(b);
	b = load("npmrc", &len);
	assert_int_equal(pkg_conf_get(b, len, NULL, "registry", out, sizeof(out)), 0);
	assert_string_equal(out, "https://npm.example.test/");
	free(b);
	memset(&sp, 0, sizeof(sp));
	assert_int_equal(pkg_pip_spec("Foo.Bar[x,y] ~= 1.4 ; os_name=='posix'", 38, &sp), 0);
	assert_string_equal(sp.name, "Foo.Bar");
	assert_string_equal(sp.version, "~= 1.4");
	assert_int_equal(pkg_pip_spec(">=1", 3, &sp), -EINVAL);
	pkg_pep503("Foo.Bar__baz-", out, sizeof(out));
	assert_string_equal(out, "foo-bar-baz");
}

static int on_crate(void *ctx, const struct pkg_crate_ent *e)
{
	struct pkg_crate_ent *v = ctx;

	for (int i = 0; i < 3; i++)
		if (!v[i].name[0]) {
			v[i] = *e;
			break;
		}
	return 0;
}

static void test_crates2(void **state)
{
	struct pkg_crate_ent *v = calloc(3, sizeof(*v));
	size_t len;
	char *b = load("crates2.json", &len);

	(void)state;
	assert_non_null(v);
	assert_int_equal(pkg_crates2_parse(b, len, on_crate, v), 0);
	assert_string_equal(v[0].name, "ripgrep");
	assert_string_equal(v[0].version, "14.1.0");
	assert_string_equal(v[0].source, "registry+https://github.com/rust-lang/crates.io-index");
	assert_int_equal(v[0].n_bins, 1);
	assert_string_equal(v[0].bins[0], "rg");
	assert_string_equal(v[1].name, "sgcrate");
	assert_string_equal(v[1].source, "path+file:///tmp/cargo/sgcrate");
	assert_int_equal(v[1].n_bins, 2);
	assert_string_equal(v[2].name, "");   /* "bad-key" is not NAME VERSION (SOURCE) */
	free(b);
	free(v);
	assert_int_equal(pkg_crates2_parse("{\"x\":1}", 7, on_crate, NULL), -EINVAL);
}

static void test_confirmed(void **state)
{
	struct pkg_run *r = calloc(1, sizeof(*r));

	(void)state;
	assert_non_null(r);
	/* no gateway event for the tree: unknown */
	assert_int_equal(pkg_source_confirmed(r, "https://pypi.org/simple"), -1);
	r->net_seen = true;
	snprintf(r->net[r->n_net++], PKG_NET_NAME, "files.pythonhosted.org.");
	assert_int_equal(pkg_source_confirmed(r, "https://pypi.org/simple"), 0);
	snprintf(r->net[r->n_net++], PKG_NET_NAME, "PyPI.org.");   /* a qname */
	assert_int_equal(pkg_source_confirmed(r, "https://user@pypi.org:443/simple"), 1);
	snprintf(r->net[r->n_net++], PKG_NET_NAME, "2001:db8::1");
	assert_int_equal(pkg_source_confirmed(r, "http://[2001:db8::1]:8080/simple"), 1);
	/* a local file has no host to confirm */
	assert_int_equal(pkg_source_confirmed(r, "file:///tmp/x.whl"), -1);
	assert_int_equal(pkg_source_confirmed(r, NULL), -1);
	free(r);
}

static void test_approved(void **state)
{
	char *ok[] = { "https://pypi.org/simple/", "HTTPS://Registry.NPMJS.org" };

	(void)state;
	assert_true(pkg_source_approved("https://pypi.org/simple", ok, 2));
	assert_true(pkg_source_approved("https://pypi.org/simple/requests/", ok, 2));
	assert_true(pkg_source_approved("https://registry.npmjs.org/x/-/x-1.tgz", ok, 2));
	assert_false(pkg_source_approved("https://pypi.org/simplex", ok, 2));
	assert_false(pkg_source_approved("https://pypi.org.evil.test/simple", ok, 2));
	assert_false(pkg_source_approved("https://pypi.org:8443/simple", ok, 2));
	assert_false(pkg_source_approved("https://pypi.org/SIMPLE", ok, 2));
	assert_false(pkg_source_approved("http://pypi.org/simple", ok, 2));
	assert_false(pkg_source_approved("file:///tmp/x.whl", ok, 2));
	assert_false(pkg_source_approved("", ok, 2));
	assert_false(pkg_source_approved("https://pypi.org/simple", ok, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_metadata_record),
		cmocka_unit_test(test_direct_url),
		cmocka_unit_test(test_lock),
		cmocka_unit_test(test_sri),
		cmocka_unit_test(test_dpkg_status),
		cmocka_unit_test(test_conf_and_specs),
		cmocka_unit_test(test_crates2),
		cmocka_unit_test(test_confirmed),
		cmocka_unit_test(test_approved),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
