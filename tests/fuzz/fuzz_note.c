/*
 * Fuzzes the signed-note parser (note_open_checkpoint) and the verifier key parser
 * (note_verifier_parse) with arbitrary bytes: both read files a hostile party may
 * hand to `sandgate verify`.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "journal/note.h"

/* A fixed trusted key (golang.org/x/mod/sumdb/note's PeterNeumann example). */
static const char vkey[] = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct note_verifier *trusted;
	struct note_verifier *v = NULL;
	struct checkpoint cp;
	char *s;

	if (!trusted && note_verifier_parse(&trusted, vkey) < 0)
		abort();
	(void)note_open_checkpoint(trusted, (const char *)data, size, &cp);
	(void)note_open_checkpoint(NULL, (const char *)data, size, &cp);
	/* The same bytes as a vkey line (NUL-terminated copy). */
	s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (note_verifier_parse(&v, s) == 0) {
		(void)note_open_checkpoint(v, (const char *)data, size, &cp);
		note_verifier_free(v);
	}
	free(s);
	return 0;
}
