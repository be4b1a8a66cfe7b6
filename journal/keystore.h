/*
 * The journal's signing key in STATE_DIR/keys: generated at first start, loaded after.
 * A journal that exists without its key is never re-sealed with a new one (journald's
 * lesson): that would let anyone who deleted the key rewrite history and sign it.
 */
#ifndef SANDGATE_JOURNAL_KEYSTORE_H
#define SANDGATE_JOURNAL_KEYSTORE_H

#include <stdbool.h>
#include <stddef.h>

#include "journal/note.h"

/* True when STATE_DIR/journal holds at least one segment. */
bool journal_exists(const char *state_dir);

/*
 * Loads STATE_DIR/keys/journal.key, or generates it (0400) with journal.pub (0444)
 * when there is no journal yet. On failure writes a reason naming the path into err
 * and returns -errno (-ENOENT: key missing for an existing journal; -EACCES: unreadable;
 * -EINVAL: not an Ed25519 key).
 */
int keystore_open(const char *state_dir, const char *key_name, struct note_signer **out,
		  char *err, size_t errlen);

#endif
