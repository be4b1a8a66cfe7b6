/*
 * Bytes a sandbox writes and the package tracker reads: METADATA, RECORD,
 * direct_url.json, dpkg status paragraphs, pip.conf/.npmrc, requirement lines, and the
 * argv of an installer's exec. Every parser gets the same input.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "packages/pkg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int on_deb(void *ctx, const struct pkg_dpkg_ent *e)
{
	(void)ctx;
	return strlen(e->name) >= PKG_NAME_MAX;   /* always 0: touches the copy */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const sect[] = { "global", "install", NULL };
	const char *s = (const char *)data;
	char name[PKG_NAME_MAX], ver[PKG_VER_MAX], out[PKG_URL_MAX];
	struct pkg_direct_url d;
	struct pkg_spec sp;
	struct pkg_cmd *c = malloc(sizeof(*c));
	size_t files;

	(void)pkg_metadata_parse(s, size, name, sizeof(name), ver, sizeof(ver));
	(void)pkg_record_parse(s, size, &files);
	(void)pkg_direct_url_parse(s, size, &d);
	(void)pkg_dpkg_status_parse(s, size, on_deb, NULL);
	(void)pkg_conf_get(s, size, sect, "index-url", out, sizeof(out));
	(void)pkg_conf_get(s, size, NULL, "registry", out, sizeof(out));
	memset(&sp, 0, sizeof(sp));
	(void)pkg_pip_spec(s, size, &sp);
	if (c) {
		(void)pkg_detect_maybe(s, size);
		(void)pkg_detect(s, size, c);
		free(c);
	}
	return 0;
}
