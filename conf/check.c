/*
 * Field checkers shared by the sections' key tables (conf/conf.h): run after the value
 * is stored, they report at the value's node.
 */
#include "conf/conf.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

const char *cfg_field_str(const void *base, const struct cfg_key *k)
{
	return *(char *const *)((const char *)base + k->off);
}

bool cfg_has_ctl_or_space(const char *s, bool space_ok)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f || (!space_ok && *s == ' '))
			return true;
	return false;
}

int cfg_check_path(struct cfg_ctx *ctx, const struct cy_node *v, void *base,
		   const struct cfg_key *k)
{
	const char *s = cfg_field_str(base, k);

	if (!s)
		return 0;
	if (s[0] != '/' || strlen(s) >= PATH_MAX || cfg_has_ctl_or_space(s, true)) {
		cfg_err(ctx, v, "expected an absolute path");
		return -EINVAL;
	}
	return 0;
}
