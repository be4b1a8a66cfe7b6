/* Options, mark validation and the small enums of nft/: pure code, unit-tested. */
#include <errno.h>
#include <linux/netfilter/xt_NFQUEUE.h>
#include <string.h>

#include "nft/nft_int.h"

int nft_mark_check(uint32_t mark)
{
	/* Maps hold undecided marks only: a verdict is per flow, never per session. */
	if (!nft_mark_is_session(mark) || (mark & NFT_MARK_RSV_MASK) != 0 ||
	    nft_mark_verdict(mark) != NFT_MARK_UNDECIDED)
		return -EINVAL;
	return 0;
}

void nft_options_init(struct nft_options *o)
{
	memset(o, 0, sizeof(*o));
	o->queue_base = 100;   /* as the daemon config's gateway.queue_base */
	o->queue_count = 2;
	o->cgroup_mode = true;
	o->iface_mode = true;
	o->cgroup_level = 2;
	o->qimpl = NFT_QIMPL_AUTO;
}

/* An absolute path, or a name usable as /run/netns/<name>: no path tricks. */
static int netns_name_check(const char *name)
{
	size_t n = strlen(name);

	if (name[0] == '/')
		return n < PATH_MAX ? 0 : -EINVAL;
	if (n == 0 || n > NAME_MAX || strchr(name, '/') != NULL ||
	    strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return -EINVAL;
	return 0;
}

int nft_options_check(const struct nft_options *o)
{
	if (o->queue_count == 0 || (uint32_t)o->queue_base + o->queue_count - 1 > UINT16_MAX)
		return -EINVAL;
	if (!o->cgroup_mode && !o->iface_mode)
		return -EINVAL;
	/* nft_socket accepts levels up to 255; level 0 is the root, never a session. */
	if (o->cgroup_mode && (o->cgroup_level == 0 || o->cgroup_level > 255))
		return -EINVAL;
	if (o->qimpl != NFT_QIMPL_AUTO && o->qimpl != NFT_QIMPL_NATIVE &&
	    o->qimpl != NFT_QIMPL_COMPAT)
		return -EINVAL;
	if (o->netns != NULL && netns_name_check(o->netns) != 0)
		return -EINVAL;
	return 0;
}

uint16_t nft_queue_flags(const struct nft_options *o)
{
	uint16_t f = 0;

	/* NFQ_FLAG_* (xt v3) and NFT_QUEUE_FLAG_* (native) share these values. */
	if (o->fail_open)
		f |= NFQ_FLAG_BYPASS;
	if (o->fanout)
		f |= NFQ_FLAG_CPU_FANOUT;
	return f;
}

static const char *const qimpl_names[] = {
	[NFT_QIMPL_AUTO] = "auto",
	[NFT_QIMPL_NATIVE] = "native",
	[NFT_QIMPL_COMPAT] = "compat",
};

const char *nft_qimpl_name(enum nft_qimpl impl)
{
	if ((unsigned)impl >= sizeof(qimpl_names) / sizeof(qimpl_names[0]))
		return "invalid";
	return qimpl_names[impl];
}

int nft_qimpl_parse(const char *s, enum nft_qimpl *impl)
{
	for (size_t i = 0; i < sizeof(qimpl_names) / sizeof(qimpl_names[0]); i++) {
		if (strcmp(s, qimpl_names[i]) == 0) {
			*impl = (enum nft_qimpl)i;
			return 0;
		}
	}
	return -EINVAL;
}
