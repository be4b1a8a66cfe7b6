/* Rules from files and directories (*.yaml, *.yml in name order), all or nothing. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf/conf.h"
#include "detect/detect_int.h"

static int read_file(const char *path, char **text, size_t *len)
{
	FILE *f = fopen(path, "re");
	size_t cap = 0, n = 0, r;
	char *b = NULL, *nb;
	int ret = 0;

	if (!f)
		return -errno;
	do {
		if (n == cap) {
			cap = cap ? cap * 2 : 65536;
			if (cap > 2 * (size_t)CONFIG_MAX_FILE_BYTES || !(nb = realloc(b, cap))) {
				ret = cap > 2 * (size_t)CONFIG_MAX_FILE_BYTES ? -EFBIG : -ENOMEM;
				break;
			}
			b = nb;
		}
		r = fread(b + n, 1, cap - n, f);
		n += r;
	} while (r > 0);
	if (ret == 0 && ferror(f))
		ret = -EIO;
	fclose(f);
	if (ret) {
		free(b);
		return ret;
	}
	*text = b;
	*len = n;
	return 0;
}

static int load_one(struct detect_rules **rs, const char *path, const struct detect_vars *v,
		    struct config_errors *errs)
{
	struct cfg_ctx ctx = { .file = path, .errs = errs };
	char *text = NULL;
	size_t len = 0;
	int ret = read_file(path, &text, &len);

	if (ret) {
		cfg_err_at(&ctx, 0, 0, "cannot read rules: %s", strerror(-ret));
		return ret == -ENOMEM ? -ENOMEM : -EINVAL;
	}
	ret = detect_rules_load_buffer(rs, path, text, len, v, errs);
	free(text);
	return ret;
}

static int yaml_name(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return d->d_name[0] != '.' &&
	       ((n > 5 && strcmp(d->d_name + n - 5, ".yaml") == 0) ||
		(n > 4 && strcmp(d->d_name + n - 4, ".yml") == 0));
}

static int load_dir(struct detect_rules **rs, const char *dir, const struct detect_vars *v,
		    struct config_errors *errs)
{
	struct dirent **names = NULL;
	int n = scandir(dir, &names, yaml_name, alphasort), ret = 0;
	char path[4096];

	if (n < 0)
		return -errno;
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		if (ret != -ENOMEM) {
			int r = load_one(rs, path, v, errs);

			if (r && ret == 0)
				ret = r;
			if (r == -ENOMEM)
				ret = r;
		}
		free(names[i]);
	}
	free(names);
	return ret;
}

int detect_rules_load_paths(struct detect_rules **out, char *const *paths, size_t n,
			    const struct detect_vars *v, struct config_errors *errs)
{
	struct detect_rules *rs = calloc(1, sizeof(*rs));
	int ret = rs ? 0 : -ENOMEM;

	for (size_t i = 0; i < n && ret != -ENOMEM; i++) {
		struct cfg_ctx ctx = { .file = paths[i], .errs = errs };
		struct stat st;
		int r;

		if (stat(paths[i], &st) != 0) {
			r = -errno;
			cfg_err_at(&ctx, 0, 0, "rules: %s", strerror(errno));
		} else if (S_ISDIR(st.st_mode)) {
			r = load_dir(&rs, paths[i], v, errs);
			if (r && r != -EINVAL && r != -ENOMEM)
				cfg_err_at(&ctx, 0, 0, "rules directory: %s", strerror(-r));
		} else {
			r = load_one(&rs, paths[i], v, errs);
		}
		if (r && (ret == 0 || r == -ENOMEM))
			ret = r;
	}
	if (ret) {
		detect_rules_free(rs);
		return ret;
	}
	*out = rs;
	return 0;
}
