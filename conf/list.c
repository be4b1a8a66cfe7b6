/*
 * The one reader of a YAML list of strings (paths, URLs, event types, session ids):
 * each part says what an item must be, this does the list, the bound, the copies and
 * the errors at each refused item.
 */
#include "conf/conf.h"

#include <errno.h>
#include <stdlib.h>

void cfg_str_list_free(char **list, size_t n)
{
	if (!list)
		return;
	for (size_t i = 0; i < n; i++)
		free(list[i]);
	free(list);
}

int cfg_str_list(struct cfg_ctx *ctx, const struct cy_node *v,
		 const struct cfg_list_spec *spec, char ***list, size_t *n)
{
	char **items;
	size_t got = 0;
	int ret = 0;

	if (cy_need(ctx, v, CY_SEQ, spec->what))
		return -EINVAL;
	if (spec->max && v->n > spec->max) {
		cfg_err(ctx, v, "at most %zu entries", spec->max);
		return -EINVAL;
	}
	/* NULL-terminated: some users walk the list without its count. */
	items = calloc(v->n + 1, sizeof(*items));
	if (!items) {
		ctx->oom = true;
		return -ENOMEM;
	}
	for (size_t i = 0; i < v->n && !ctx->oom; i++) {
		const char *s;

		if (cy_str(ctx, v->items[i], &s)) {
			ret = -EINVAL;
		} else if (spec->ok && !spec->ok(s, spec->arg)) {
			cfg_err(ctx, v->items[i], "%s", spec->bad);
			ret = -EINVAL;
		} else if (cfg_set_str(ctx, &items[got], s) == 0) {
			got++;
		}
	}
	cfg_str_list_free(*list, *n);
	*list = items;
	*n = got;
	return ctx->oom ? -ENOMEM : ret;
}
