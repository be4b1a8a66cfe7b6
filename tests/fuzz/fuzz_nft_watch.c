/* nftables notifications as the tamper watch reads them (nft/nft_watch.c): the names in
 * them (tables, chains, sets, the committing task's comm) are chosen by whoever changes
 * the ruleset, root in a session included. One watch across inputs, so a commit split
 * over several reads is exercised too. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nft/nft.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct nft_watch *w;
static volatile size_t sink;

static void on_tamper(void *ctx, const struct nft_tamper *t)
{
	(void)ctx;
	sink += t->n_changes + t->total + strlen(t->comm);
	for (size_t i = 0; i < t->n_changes; i++)
		sink += strlen(t->changes[i].name) + t->changes[i].count;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!w && nft_watch_new(&w) != 0)
		return 0;
	(void)nft_watch_feed(w, data, size, on_tamper, NULL);
	return 0;
}
