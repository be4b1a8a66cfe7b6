/*
 * GeoIP enrichment: country, ASN and organisation of an address from a MaxMind-format
 * database (GeoLite2-Country, -ASN, -City, or one merged file) through libmaxminddb.
 * The database is memory-mapped once; lookups only read it, so concurrent lookups from
 * several workers need no lock (libmaxminddb's documented guarantee for MMDB_MODE_MMAP).
 */
#include "policy/policy.h"

#include <errno.h>
#include <maxminddb.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

struct geo_db {
	MMDB_s mmdb;
};

int geo_open(const char *path, struct geo_db **out)
{
	struct geo_db *g = calloc(1, sizeof(*g));
	int rc;

	*out = NULL;
	if (!g)
		return -ENOMEM;
	errno = 0;
	rc = MMDB_open(path, MMDB_MODE_MMAP, &g->mmdb);
	if (rc != MMDB_SUCCESS) {
		int err = errno;

		free(g);
		if (rc == MMDB_OUT_OF_MEMORY_ERROR)
			return -ENOMEM;
		if ((rc == MMDB_FILE_OPEN_ERROR || rc == MMDB_IO_ERROR) && err)
			return -err;
		return -EINVAL;   /* not a MaxMind DB, or a corrupt one */
	}
	*out = g;
	return 0;
}

void geo_close(struct geo_db *g)
{
	if (!g)
		return;
	MMDB_close(&g->mmdb);
	free(g);
}

/*
 * Copies a UTF-8 string at path into buf, cut to fit on a character boundary; leaves
 * buf alone when absent. NUL bytes end it (the event encoder wants a C string).
 */
static void get_string(MMDB_entry_s *e, char *buf, size_t size, const char *const *path)
{
	MMDB_entry_data_s v;
	size_t n;

	if (MMDB_aget_value(e, &v, path) != MMDB_SUCCESS || !v.has_data ||
	    v.type != MMDB_DATA_TYPE_UTF8_STRING)
		return;
	n = v.data_size < size ? v.data_size : size - 1;
	if (n < v.data_size)
		while (n > 0 && ((unsigned char)v.utf8_string[n] & 0xc0) == 0x80)
			n--;   /* do not split a multi-byte character */
	memcpy(buf, v.utf8_string, n);
	buf[n] = '\0';
}

static void get_asn(MMDB_entry_s *e, int64_t *asn)
{
	static const char *const path[] = { "autonomous_system_number", NULL };
	MMDB_entry_data_s v;

	if (MMDB_aget_value(e, &v, path) != MMDB_SUCCESS || !v.has_data)
		return;
	if (v.type == MMDB_DATA_TYPE_UINT32)
		*asn = v.uint32;
	else if (v.type == MMDB_DATA_TYPE_UINT16)
		*asn = v.uint16;
	else if (v.type == MMDB_DATA_TYPE_UINT64 && v.uint64 <= INT64_MAX)
		*asn = (int64_t)v.uint64;
	else if (v.type == MMDB_DATA_TYPE_INT32 && v.int32 >= 0)
		*asn = v.int32;
}

int geo_lookup(const struct geo_db *g, int family, const uint8_t *addr, struct geo_info *out)
{
	static const char *const country[] = { "country", "iso_code", NULL };
	static const char *const registered[] = { "registered_country", "iso_code", NULL };
	static const char *const org[] = { "autonomous_system_organization", NULL };
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6 };
	struct sockaddr_in s4 = { .sin_family = AF_INET };
	const struct sockaddr *sa;
	MMDB_lookup_result_s r;
	int mmerr;

	*out = (struct geo_info){ .asn = -1 };
	if (family == AF_INET) {
		memcpy(&s4.sin_addr, addr, 4);
		sa = (const struct sockaddr *)&s4;
	} else if (family == AF_INET6) {
		memcpy(&s6.sin6_addr, addr, 16);
		sa = (const struct sockaddr *)&s6;
	} else {
		return -EAFNOSUPPORT;
	}
	r = MMDB_lookup_sockaddr(&g->mmdb, sa, &mmerr);
	if (mmerr != MMDB_SUCCESS || !r.found_entry)
		return -ENOENT;   /* also: an IPv6 address in an IPv4-only database */
	get_string(&r.entry, out->country, sizeof(out->country), country);
	if (!out->country[0])
		get_string(&r.entry, out->country, sizeof(out->country), registered);
	get_asn(&r.entry, &out->asn);
	get_string(&r.entry, out->org, sizeof(out->org), org);
	return 0;
}
