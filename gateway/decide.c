/*
 * The decision on a flow whose names are known. Observe mode: no policy exists yet, so
 * every flow is allowed and the reason says why; the policy work (issue 4) replaces
 * this function only: the verdict already travels in the packet mark.
 */
#include <string.h>

#include "gateway/gw_int.h"
#include "nft/nft.h"

uint32_t gw_decide(const struct flow *f, const char **reason)
{
	/* A broken or evasive first flight is what a policy would block: say so. */
	if (f->parse && strstr(f->parse, "malformed"))
		*reason = "malformed";
	else
		*reason = "no_policy";
	return NFT_MARK_ALLOW;
}
