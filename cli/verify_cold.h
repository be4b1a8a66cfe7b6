/*
 * `sandgate verify` over a state dir whose older segments retention moved to the cold
 * tier: each cold file must decompress to the bytes its manifest's SHA-256 names, and
 * the hot and cold segments are put back side by side (a temporary directory of the
 * decompressed cold segments and links to the hot ones) so the whole chain, Merkle tree
 * and checkpoints verify as one journal. The tombstones of purged segments
 * (NAME.purged.json) become verify_purged records, so what remains verifies from them.
 */
#ifndef SANDGATE_CLI_VERIFY_COLD_H
#define SANDGATE_CLI_VERIFY_COLD_H

#include <stddef.h>

#include "verify/verify.h"

/*
 * When the journal directory (STATE/journal) has a cold tier beside it (STATE/cold),
 * checks the cold segments against their manifests and assembles the temporary
 * journal: journal (PATH_MAX bytes) then names it, and tmp gets the directory to remove
 * with verify_cold_cleanup. Without cold segments nothing changes (tmp[0] is 0).
 * *purged gets the tombstones sorted by first seq (free() it; NULL when none).
 * Returns 0, or 1 after printing the damage or the error on stderr.
 */
int verify_cold_prepare(char *journal, char *tmp, size_t len, struct verify_purged **purged,
			size_t *n_purged);

/* Removes the temporary directory (no-op when tmp is empty). */
void verify_cold_cleanup(const char *tmp);

#endif
