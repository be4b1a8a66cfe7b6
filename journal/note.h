/*
 * Ed25519 signing keys and C2SP signed notes carrying tlog checkpoints
 * (docs/journal-format.md). Parsing accepts untrusted bytes: a journal or checkpoint
 * file handed to `sandgate verify` may be hostile.
 */
#ifndef SANDGATE_JOURNAL_NOTE_H
#define SANDGATE_JOURNAL_NOTE_H

#include <stddef.h>
#include <stdint.h>

#include "journal/merkle.h"

#define NOTE_KEY_NAME_MAX 128
#define NOTE_MAX_LEN 4096

struct note_signer;    /* private key + name */
struct note_verifier;  /* public key + name + key id */

/*
 * Loads the private key at path (PEM PKCS#8 Ed25519), named name. Returns 0, -ENOENT
 * when the file is missing, -EACCES when unreadable, -EINVAL when not an Ed25519 key.
 */
int note_signer_load(struct note_signer **out, const char *path, const char *name);

/*
 * Writes s's verifier key line to pub_path (created 0444, O_EXCL: never overwrites).
 * Returns 0 or -errno (-EEXIST when the file is there).
 */
int note_signer_write_vkey(const struct note_signer *s, const char *pub_path);

/*
 * Generates a key pair: the private key to priv_path (created 0400, O_EXCL: never
 * overwrites) and the verifier key line to pub_path (0444). Returns 0 or -errno.
 */
int note_signer_generate(struct note_signer **out, const char *priv_path,
			 const char *pub_path, const char *name);
void note_signer_free(struct note_signer *s);

/* Writes the verifier key line "<name>+<hex id>+<base64(0x01 ‖ pub)>" (no newline). */
int note_signer_vkey(const struct note_signer *s, char *buf, size_t len);

/* Parses a verifier key line (trailing whitespace allowed). Returns 0 or -EINVAL. */
int note_verifier_parse(struct note_verifier **out, const char *vkey);
/* Reads the first line of a file and parses it. Returns 0, -errno or -EINVAL. */
int note_verifier_load(struct note_verifier **out, const char *path);
void note_verifier_free(struct note_verifier *v);
uint32_t note_verifier_key_id(const struct note_verifier *v);

struct checkpoint {
	char origin[NOTE_KEY_NAME_MAX];
	uint64_t size;
	uint8_t root[MERKLE_HASH_LEN];
};

/*
 * Formats and signs a checkpoint as a complete signed note into buf (NUL-terminated).
 * Returns the note length, or -ENOSPC / -EIO.
 */
int note_sign_checkpoint(const struct note_signer *s, const struct checkpoint *cp,
			 char *buf, size_t len);

enum note_status {
	NOTE_OK = 0,
	NOTE_MALFORMED,      /* not a signed note carrying a tlog checkpoint */
	NOTE_UNKNOWN_KEY,    /* no signature line by the verifier's name and key id */
	NOTE_BAD_SIGNATURE,  /* signature by the verifier's key does not verify */
};

/*
 * Parses the note in text[0..len) into cp and checks its signature by v. Extra
 * signatures by other keys are ignored; cp is filled whenever the body parses, even
 * when the status is not NOTE_OK.
 */
enum note_status note_open_checkpoint(const struct note_verifier *v, const char *text,
				      size_t len, struct checkpoint *cp);
const char *note_status_str(enum note_status st);

/*
 * Additions for the verifier, tests and tools (the writer needs none of them).
 */

/* A signer from a raw 32-byte Ed25519 seed (tests, fixtures). Returns 0, -EINVAL, -ENOMEM. */
int note_signer_from_seed(struct note_signer **out, const uint8_t seed[32], const char *name);

/*
 * Signs an arbitrary note text (non-empty, ending in '\n', no blank line, no control
 * bytes but '\n') into buf as a signed note with one signature (NUL-terminated).
 * Returns the note length, -EINVAL for a bad text, -ENOSPC or -EIO.
 */
int note_sign_text(const struct note_signer *s, const char *text, size_t tlen, char *buf,
		   size_t len);

/*
 * Checks the signed note msg[0..len) (any text) against v, which may be NULL (then the
 * result is at best NOTE_UNKNOWN_KEY). Sets *text_len to the length of the signed text
 * (with its final newline) whenever the note is well-formed.
 */
enum note_status note_open(const struct note_verifier *v, const char *msg, size_t len,
			   size_t *text_len);

/*
 * Parses a tlog-checkpoint body (origin, size, base64 root, optional extension lines).
 * Returns 0 or -EINVAL.
 */
int note_parse_checkpoint(const char *text, size_t len, struct checkpoint *cp);

/* Standard base64 with padding; writes a NUL. Returns the length or -ENOSPC. */
int note_b64_encode(const uint8_t *in, size_t n, char *out, size_t cap);
/* Strict standard base64 (padding required, no whitespace). Returns bytes or -EINVAL. */
int note_b64_decode(const char *in, size_t n, uint8_t *out, size_t cap);

const char *note_verifier_name(const struct note_verifier *v);

#endif
