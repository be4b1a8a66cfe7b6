/*
 * Lowercase hex, the one encoding of hashes in the journal, its state file, the
 * retention manifests and the detail store. Pure, no allocation.
 */
#ifndef SANDGATE_COMMON_HEX_H
#define SANDGATE_COMMON_HEX_H

#include <stddef.h>
#include <stdint.h>

/* "0123456789abcdef" */
extern const char hex_digits[17];

/* The value of one lowercase hex digit, or -1 (uppercase included: not canonical). */
int hex_digit(char c);

/* The value of one hex digit of either case, or -1: for what others wrote (the audit
 * subsystem's hex fields, an HTTP chunk size), never for our own hashes. */
int hex_digit_any(char c);

/* Writes the 2n lowercase digits of in[0..n) and a NUL to out (2n + 1 bytes). */
void hex_encode(const uint8_t *in, size_t n, char *out);

/*
 * Decodes s[0..slen), which must be exactly 2n lowercase hex digits, into out[0..n).
 * Returns 0 or -EINVAL (wrong length or a non-digit; out may then be partly written).
 */
int hex_decode(const char *s, size_t slen, uint8_t *out, size_t n);

#endif
