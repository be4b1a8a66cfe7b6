#include "cli/cli_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/client.h"

int cli_parse_uint(const char *s, int64_t *out)
{
	char *end;
	long long v;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || v < 0)
		return -EINVAL;
	*out = v;
	return 0;
}

int cli_parse_size(const char *s, int64_t *out)
{
	static const char units[] = "KMGT";
	const char *u;
	char *end;
	long long v;
	int shift = 0;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || v < 0)
		return -EINVAL;
	if (*end && (u = strchr(units, end[0] & ~0x20)) != NULL) {
		shift = 10 * (int)(u - units + 1);
		end++;
		if (strcasecmp(end, "ib") == 0 || strcasecmp(end, "b") == 0 || *end == 'i')
			end += strlen(end);
	} else if (strcasecmp(end, "b") == 0) {
		end++;
	}
	if (*end || (shift && v > (INT64_MAX >> shift)))
		return -EINVAL;
	*out = (int64_t)v << shift;
	return 0;
}

int cli_call_print(const char *what, const char *control, const char *verb, json_t *args,
		   const char *actor)
{
	json_t *result = NULL;
	char err[1024];
	int ret;

	ret = client_call(client_socket_path(control), verb, args, actor, &result, err,
			  sizeof(err));
	if (ret) {
		fprintf(stderr, "sandgate %s: %s\n", what, err);
		return 1;
	}
	if (json_dumpf(result, stdout, JSON_COMPACT) == 0)
		putchar('\n');
	json_decref(result);
	return fflush(stdout) == 0 ? 0 : 1;
}
