/*
 * FNV-1a (32 bit) for the daemon's small hash tables: cheap, good enough for bucket
 * choice, and one definition instead of the constants written out at each table.
 * Feed fields one by one, never a struct with padding (its bytes are not initialised).
 */
#ifndef SANDGATE_COMMON_HASH_H
#define SANDGATE_COMMON_HASH_H

#include <stddef.h>
#include <stdint.h>

#define FNV1A_INIT 2166136261u

/* h continued over the n bytes at p. */
static inline uint32_t fnv1a(uint32_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 16777619u;
	return h;
}

/* h continued over one value (a field, mixed in as a whole as the tables always did). */
static inline uint32_t fnv1a_u32(uint32_t h, uint32_t v)
{
	return (h ^ v) * 16777619u;
}

#endif
