/* Checking the args of session verbs: every key known, every value of the right type. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sessions/session_int.h"

int args_only(const json_t *args, const char *const *allowed, char *err, size_t errlen)
{
	const char *key;
	json_t *v;
	size_t i;

	json_object_foreach((json_t *)args, key, v) {
		for (i = 0; allowed[i]; i++)
			if (strcmp(allowed[i], key) == 0)
				break;
		if (!allowed[i]) {
			snprintf(err, errlen, "unknown argument \"%.64s\"", key);
			return -EINVAL;
		}
	}
	return 0;
}

int arg_str(const json_t *args, const char *key, size_t max, const char **out, char *err,
	    size_t errlen)
{
	const json_t *v = json_object_get(args, key);

	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v) || json_string_length(v) > max) {
		snprintf(err, errlen, "\"%s\" must be a string of at most %zu bytes", key, max);
		return -EINVAL;
	}
	if (strlen(json_string_value(v)) != json_string_length(v)) {
		snprintf(err, errlen, "\"%s\" must not contain NUL", key);
		return -EINVAL;
	}
	*out = json_string_value(v);
	return 0;
}

int arg_int(const json_t *args, const char *key, int64_t *out, char *err, size_t errlen)
{
	const json_t *v = json_object_get(args, key);

	*out = -1;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0) {
		snprintf(err, errlen, "\"%s\" must be a non-negative integer", key);
		return -EINVAL;
	}
	*out = (int64_t)json_integer_value(v);
	return 0;
}

int arg_session(struct sessions *ss, const json_t *args, struct session **out, char *err,
		size_t errlen)
{
	const char *id = NULL;
	int ret = arg_str(args, "id", SESSION_ID_MAX, &id, err, errlen);

	if (ret == 0 && !id)
		ret = arg_str(args, "session_id", SESSION_ID_MAX, &id, err, errlen);
	if (ret)
		return ret;
	if (!id) {
		snprintf(err, errlen, "\"id\" (the session) is required");
		return -EINVAL;
	}
	*out = sessions_find(ss->reg, id);
	if (!*out) {
		snprintf(err, errlen, "unknown session \"%s\"", id);
		return -ENOENT;
	}
	return 0;
}
