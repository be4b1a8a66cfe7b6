/* Ed25519 keys and signed notes (journal/note.h), with interop vectors. */
#include <errno.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "journal/note.h"

/*
 * The published example of golang.org/x/mod/sumdb/note (note.go package doc and
 * note_test.go): PeterNeumann's keys, the signed note, and EnochRoot's co-signature.
 */
static const char peter_vkey[] = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW";
static const char peter_skey_b64[] = "AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz";
static const char enoch_vkey[] = "EnochRoot+af0cfe78+ATtqJ7zOtqQtYqOo0CpvDXNlMhV3HeJDpjrASKGLWdop";
static const char go_text[] = "If you think cryptography is the answer to your problem,\n"
			      "then you don't know what your problem is.\n";
static const char peter_sig[] = "\xe2\x80\x94 PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n";
static const char enoch_sig[] = "\xe2\x80\x94 EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWLox33WWd1RvMc+QQ=\n";

static char *go_msg(bool both)
{
	static char buf[1024];

	snprintf(buf, sizeof(buf), "%s\n%s%s", go_text, peter_sig, both ? enoch_sig : "");
	return buf;
}

static struct note_signer *peter_signer(void)
{
	uint8_t key[33];
	struct note_signer *s = NULL;

	assert_int_equal(note_b64_decode(peter_skey_b64, strlen(peter_skey_b64), key, 33), 33);
	assert_int_equal(key[0], 1);
	assert_int_equal(note_signer_from_seed(&s, key + 1, "PeterNeumann"), 0);
	return s;
}

static void test_go_vectors(void **st)
{
	struct note_verifier *pv = NULL, *ev = NULL;
	struct note_signer *s = peter_signer();
	char vkey[200], out[1024];
	size_t tlen = 0;
	const char *msg = go_msg(false);

	(void)st;
	assert_int_equal(note_verifier_parse(&pv, peter_vkey), 0);
	assert_int_equal(note_verifier_key_id(pv), 0xc74f20a3);
	assert_string_equal(note_verifier_name(pv), "PeterNeumann");
	assert_int_equal(note_verifier_parse(&ev, enoch_vkey), 0);
	/* Same key, same vkey, and Ed25519 is deterministic: the very same bytes. */
	assert_int_equal(note_signer_vkey(s, vkey, sizeof(vkey)), 0);
	assert_string_equal(vkey, peter_vkey);
	assert_int_equal(note_sign_text(s, go_text, strlen(go_text), out, sizeof(out)),
			 (int)strlen(msg));
	assert_string_equal(out, msg);
	assert_int_equal(note_open(pv, msg, strlen(msg), &tlen), NOTE_OK);
	assert_int_equal(tlen, strlen(go_text));
	assert_int_equal(note_open(ev, msg, strlen(msg), &tlen), NOTE_UNKNOWN_KEY);
	msg = go_msg(true);
	assert_int_equal(note_open(pv, msg, strlen(msg), &tlen), NOTE_OK);
	assert_int_equal(note_open(ev, msg, strlen(msg), &tlen), NOTE_OK);
	assert_int_equal(note_open(NULL, msg, strlen(msg), &tlen), NOTE_UNKNOWN_KEY);
	note_signer_free(s);
	note_verifier_free(pv);
	note_verifier_free(ev);
}

static void test_bad_vkeys(void **st)
{
	static const char *const bad[] = {
		"", "PeterNeumann", "PeterNeumann+c74f20a3",
		"PeterNeumann+c74f20a4+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
		"PeterNeumann+c74f20a+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
		"PeterNeumanN+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
		"PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10T",
		"PeterNeumann+c74f20a3+Apc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW=",
		"Peter Neumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
		"+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
	};
	struct note_verifier *v = NULL;
	size_t i;

	(void)st;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(note_verifier_parse(&v, bad[i]), -EINVAL);
	assert_int_equal(note_verifier_parse(&v, "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW \n"), 0);
	note_verifier_free(v);
}

static void test_malformed_notes(void **st)
{
	struct note_verifier *v = NULL;
	char buf[2048], *p;
	size_t tlen;
	struct checkpoint cp;

	(void)st;
	assert_int_equal(note_verifier_parse(&v, peter_vkey), 0);
	assert_int_equal(note_open(v, "", 0, &tlen), NOTE_MALFORMED);
	assert_int_equal(note_open(v, go_text, strlen(go_text), &tlen), NOTE_MALFORMED);
	snprintf(buf, sizeof(buf), "%s\n%s", go_text, peter_sig);
	buf[strlen(buf) - 1] = '\0';   /* no final newline */
	assert_int_equal(note_open(v, buf, strlen(buf), &tlen), NOTE_MALFORMED);
	snprintf(buf, sizeof(buf), "%s\n- PeterNeumann x08go/ZJ=\n", go_text);
	assert_int_equal(note_open(v, buf, strlen(buf), &tlen), NOTE_MALFORMED);
	snprintf(buf, sizeof(buf), "If\tyou\n\n%s", peter_sig);   /* control byte */
	assert_int_equal(note_open(v, buf, strlen(buf), &tlen), NOTE_MALFORMED);
	/* One changed signature character: the signature no longer verifies. */
	snprintf(buf, sizeof(buf), "%s\n%s", go_text, peter_sig);
	p = strstr(buf, "x08go/") + 20;
	*p = *p == 'A' ? 'B' : 'A';
	assert_int_equal(note_open(v, buf, strlen(buf), &tlen), NOTE_BAD_SIGNATURE);
	/* A changed text. */
	snprintf(buf, sizeof(buf), "%s\n%s", go_text, peter_sig);
	buf[0] = 'i';
	assert_int_equal(note_open(v, buf, strlen(buf), &tlen), NOTE_BAD_SIGNATURE);
	/* Not a checkpoint body. */
	snprintf(buf, sizeof(buf), "%s\n%s", go_text, peter_sig);
	assert_int_equal(note_open_checkpoint(v, buf, strlen(buf), &cp), NOTE_MALFORMED);
	memset(buf, 'a', sizeof(buf));
	assert_int_equal(note_open(v, buf, NOTE_MAX_LEN + 1, &tlen), NOTE_MALFORMED);
	note_verifier_free(v);
}

static void test_checkpoint_round_trip(void **st)
{
	struct note_signer *s = NULL, *other = NULL;
	struct note_verifier *v = NULL, *ov = NULL;
	struct checkpoint cp = { .size = 123456789 }, got;
	char note[NOTE_MAX_LEN], vkey[200];
	uint8_t seed[32] = { 7 };
	int n;

	(void)st;
	snprintf(cp.origin, sizeof(cp.origin), "sandgate/h1");
	memset(cp.root, 0xab, sizeof(cp.root));
	assert_int_equal(note_signer_from_seed(&s, seed, "sandgate/h1"), 0);
	seed[0] = 8;
	assert_int_equal(note_signer_from_seed(&other, seed, "sandgate/h1"), 0);
	assert_int_equal(note_signer_vkey(s, vkey, sizeof(vkey)), 0);
	assert_int_equal(note_verifier_parse(&v, vkey), 0);
	assert_int_equal(note_signer_vkey(other, vkey, sizeof(vkey)), 0);
	assert_int_equal(note_verifier_parse(&ov, vkey), 0);
	n = note_sign_checkpoint(s, &cp, note, sizeof(note));
	assert_true(n > 0);
	assert_non_null(strstr(note, "sandgate/h1\n123456789\nq6ur"));
	memset(&got, 0, sizeof(got));
	assert_int_equal(note_open_checkpoint(v, note, (size_t)n, &got), NOTE_OK);
	assert_string_equal(got.origin, cp.origin);
	assert_int_equal(got.size, cp.size);
	assert_memory_equal(got.root, cp.root, MERKLE_HASH_LEN);
	/* Same name, another key: not the trusted key; cp is still filled. */
	memset(&got, 0, sizeof(got));
	assert_int_equal(note_open_checkpoint(ov, note, (size_t)n, &got), NOTE_UNKNOWN_KEY);
	assert_int_equal(got.size, cp.size);
	assert_int_equal(note_sign_checkpoint(s, &cp, note, 40), -ENOSPC);
	note_signer_free(s);
	note_signer_free(other);
	note_verifier_free(v);
	note_verifier_free(ov);
}

static void test_generate_and_load(void **st)
{
	char dir[] = "/tmp/test_note.XXXXXX", priv[64], pub[64];
	struct note_signer *s = NULL, *l = NULL;
	struct note_verifier *v = NULL;
	struct checkpoint cp = { .size = 1 }, got;
	char note[NOTE_MAX_LEN];
	int n;

	(void)st;
	assert_non_null(mkdtemp(dir));
	snprintf(priv, sizeof(priv), "%s/k", dir);
	snprintf(pub, sizeof(pub), "%s/k.pub", dir);
	snprintf(cp.origin, sizeof(cp.origin), "o");
	assert_int_equal(note_signer_load(&l, priv, "o"), -ENOENT);
	assert_int_equal(note_signer_generate(&s, priv, pub, "o"), 0);
	assert_int_equal(note_signer_generate(&l, priv, pub, "o"), -EEXIST);
	assert_int_equal(note_signer_load(&l, priv, "o"), 0);
	assert_int_equal(note_signer_load(&l, pub, "o") == -EINVAL ||
			 note_signer_load(&l, pub, "o") == -EACCES, 1);
	assert_int_equal(note_verifier_load(&v, pub), 0);
	n = note_sign_checkpoint(l, &cp, note, sizeof(note));
	assert_true(n > 0);
	assert_int_equal(note_open_checkpoint(v, note, (size_t)n, &got), NOTE_OK);
	note_signer_free(s);
	note_signer_free(l);
	note_verifier_free(v);
	unlink(priv);
	unlink(pub);
	rmdir(dir);
}

static void test_base64(void **st)
{
	uint8_t out[8];
	char enc[16];

	(void)st;
	assert_int_equal(note_b64_encode((const uint8_t *)"foob", 4, enc, sizeof(enc)), 8);
	assert_string_equal(enc, "Zm9vYg==");
	assert_int_equal(note_b64_decode("Zm9vYg==", 8, out, sizeof(out)), 4);
	assert_int_equal(note_b64_decode("Zm9vYh==", 8, out, sizeof(out)), -EINVAL);
	assert_int_equal(note_b64_decode("Zm9vYg=", 7, out, sizeof(out)), -EINVAL);
	assert_int_equal(note_b64_decode("Zm9v Yg=", 8, out, sizeof(out)), -EINVAL);
	assert_int_equal(note_b64_decode("Zm9vYmFy", 8, out, 5), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_go_vectors),
		cmocka_unit_test(test_bad_vkeys),
		cmocka_unit_test(test_malformed_notes),
		cmocka_unit_test(test_checkpoint_round_trip),
		cmocka_unit_test(test_generate_and_load),
		cmocka_unit_test(test_base64),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
