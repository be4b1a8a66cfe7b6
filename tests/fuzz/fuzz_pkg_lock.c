/* Sandbox-written JSON: npm's node_modules/.package-lock.json with its SRI hashes, and
 * cargo's .crates2.json. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "packages/pkg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int on_lock(void *ctx, const struct pkg_lock_ent *e)
{
	char algo[16], hex[160];

	(void)ctx;
	(void)pkg_sri_decode(e->resolved, algo, sizeof(algo), hex, sizeof(hex));
	return 0;
}

static int on_crate(void *ctx, const struct pkg_crate_ent *e)
{
	(void)ctx;
	return e->n_bins > PKG_CARGO_BINS;   /* always 0 */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char algo[16], hex[160], *s = malloc(size + 1);

	(void)pkg_lock_parse((const char *)data, size, on_lock, NULL);
	(void)pkg_crates2_parse((const char *)data, size, on_crate, NULL);
	if (s) {
		memcpy(s, data, size);
		s[size] = '\0';
		(void)pkg_sri_decode(s, algo, sizeof(algo), hex, sizeof(hex));
		free(s);
	}
	return 0;
}
