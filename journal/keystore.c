#include "journal/keystore.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "journal/journal_impl.h"

bool journal_exists(const char *state_dir)
{
	char dir[JOURNAL_PATH_MAX];
	char (*names)[SEGMENT_NAME_LEN + 1] = NULL;
	size_t n = 0;

	snprintf(dir, sizeof(dir), "%s/journal", state_dir);
	if (segment_list(dir, &names, &n) < 0)
		return false;
	free(names);
	return n > 0;
}

static int keys_dir(const char *state_dir, char *dir, size_t len, char *err, size_t errlen)
{
	snprintf(dir, len, "%s/keys", state_dir);
	if (mkdir(state_dir, 0700) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "%s: cannot create: %s", state_dir, strerror(errno));
		return -errno;
	}
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "%s: cannot create: %s", dir, strerror(errno));
		return -errno;
	}
	return 0;
}

int keystore_open(const char *state_dir, const char *key_name, struct note_signer **out,
		  char *err, size_t errlen)
{
	char dir[JOURNAL_PATH_MAX], priv[JOURNAL_PATH_MAX + 16], pub[JOURNAL_PATH_MAX + 16];
	int ret;

	ret = keys_dir(state_dir, dir, sizeof(dir), err, errlen);
	if (ret)
		return ret;
	snprintf(priv, sizeof(priv), "%s/journal.key", dir);
	snprintf(pub, sizeof(pub), "%s/journal.pub", dir);
	ret = note_signer_load(out, priv, key_name);
	if (ret == 0) {
		/* A crash between the two files of note_signer_generate leaves the private
		 * key alone: its verifier key is derived from it, so it is written again. */
		ret = access(pub, F_OK) == 0 || errno != ENOENT ? 0
							: note_signer_write_vkey(*out, pub);
		if (ret) {
			snprintf(err, errlen, "%s: cannot write the verifier key: %s", pub,
				 strerror(-ret));
			note_signer_free(*out);
			*out = NULL;
		}
		return ret;
	}
	if (ret != -ENOENT) {
		snprintf(err, errlen, "%s: cannot load the journal key: %s", priv,
			 ret == -EINVAL ? "not an Ed25519 private key in PEM" : strerror(-ret));
		return ret;
	}
	if (journal_exists(state_dir)) {
		snprintf(err, errlen, "%s: journal key missing but %s/journal exists; restore the "
			 "key (a new key would re-seal history)", priv, state_dir);
		return -ENOENT;
	}
	ret = note_signer_generate(out, priv, pub, key_name);
	if (ret)
		snprintf(err, errlen, "%s: cannot generate the journal key: %s", priv,
			 strerror(-ret));
	return ret;
}
