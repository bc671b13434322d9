/*
 * test_gw_ca - netd/gw/ca.c and netd/gw/name.c, in a temp directory of
 * their own: a CA made (files, modes, extensions) and loaded again (the
 * same certificate); refused: a key readable by others or not ours, a
 * symlink, half a CA, a key of another CA, garbage; leaves: chain to the
 * CA with X509_verify_cert() for purpose sslserver and the name (not
 * another), exactly one SAN, the extensions, the validity window, the
 * cache (the same object, a new one past half the lifetime or after the
 * clock went back, the least recently used out at GW_LEAF_CACHE_MAX); the
 * names refused and taken.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "netd/gw/ca.h"
#include "netd/gw/name.h"

static char top[] = "/tmp/netd-test-gwca-XXXXXX";
static char err[512];

static const char *sub(const char *name)
{
	static char path[4][512];
	static unsigned int i;
	char *p = path[i++ % 4];

	snprintf(p, sizeof(path[0]), "%s/%s", top, name);
	return p;
}

static const char *file_in(const char *dir, const char *file)
{
	static char path[4][600];
	static unsigned int i;
	char *p = path[i++ % 4];

	snprintf(p, sizeof(path[0]), "%s/%s", dir, file);
	return p;
}

static X509 *pem_cert(const char *pem)
{
	BIO *b = BIO_new_mem_buf(pem, -1);
	X509 *x = b ? PEM_read_bio_X509(b, NULL, NULL, NULL) : NULL;

	BIO_free(b);
	assert_non_null(x);
	return x;
}

static X509 *ca_cert(const struct gw_ca *ca)
{
	char *pem = NULL;
	size_t len = 0;
	X509 *x;

	assert_int_equal(gw_ca_cert_pem(ca, &pem, &len), 0);
	assert_int_equal(strlen(pem), len);
	assert_non_null(strstr(pem, "-----BEGIN CERTIFICATE-----"));
	x = pem_cert(pem);
	free(pem);
	return x;
}

static bool ext_critical(X509 *x, int nid)
{
	int i = X509_get_ext_by_NID(x, nid, -1);

	assert_true(i >= 0);
	return X509_EXTENSION_get_critical(X509_get_ext(x, i)) == 1;
}

/* Seconds from @now to @t. */
static long long secs_to(const ASN1_TIME *t, time_t now)
{
	int days = 0, secs = 0;
	ASN1_TIME *n = ASN1_TIME_set(NULL, now);

	assert_int_equal(ASN1_TIME_diff(&days, &secs, n, t), 1);
	ASN1_TIME_free(n);
	return (long long)days * 86400 + secs;
}

static void copy_file(const char *from, const char *to, mode_t mode)
{
	char buf[GW_CA_FILE_MAX];
	FILE *f = fopen(from, "r");
	size_t n;
	int fd;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	unlink(to);
	fd = open(to, O_WRONLY | O_CREAT | O_EXCL, mode);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, n), (ssize_t)n);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(top) ? 0 : -1;
}

static void test_make_and_load(void **state)
{
	const char *dir = sub("ca");
	struct gw_ca *ca = NULL, *again = NULL;
	time_t now = time(NULL);
	X509 *x, *y;
	char head[64] = "";
	struct stat st;
	FILE *f;

	(void)state;
	assert_int_equal(gw_ca_open(dir, now, &ca, err, sizeof(err)), 1);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_int_equal(stat(file_in(dir, GW_CA_KEY_FILE), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(stat(file_in(dir, GW_CA_CERT_FILE), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	f = fopen(file_in(dir, GW_CA_KEY_FILE), "r");
	assert_non_null(f);
	assert_non_null(fgets(head, sizeof(head), f));
	fclose(f);
	assert_string_equal(head, "-----BEGIN PRIVATE KEY-----\n");	/* PKCS#8 */

	x = ca_cert(ca);
	assert_int_equal(X509_get_version(x), X509_VERSION_3);
	assert_int_equal(X509_check_ca(x), 1);
	assert_int_equal(X509_get_pathlen(x), 0);
	assert_true(ext_critical(x, NID_basic_constraints));
	assert_true(ext_critical(x, NID_key_usage));
	assert_int_equal(X509_get_key_usage(x), KU_KEY_CERT_SIGN | KU_CRL_SIGN);
	assert_non_null(X509_get0_subject_key_id(x));
	assert_int_equal(X509_NAME_cmp(X509_get_subject_name(x), X509_get_issuer_name(x)), 0);
	assert_int_equal(X509_verify(x, X509_get0_pubkey(x)), 1);	/* self-signed */
	assert_int_equal(X509_get_signature_nid(x), NID_ecdsa_with_SHA256);
	assert_int_equal(EVP_PKEY_get_bits(X509_get0_pubkey(x)), 256);
	{
		char oneline[256];

		X509_NAME_oneline(X509_get_subject_name(x), oneline, sizeof(oneline));
		assert_non_null(strstr(oneline, "O=netd"));
		assert_non_null(strstr(oneline, "CN=netd gateway CA ("));
	}
	{
		const ASN1_INTEGER *sn = X509_get0_serialNumber(x);

		assert_true(ASN1_STRING_length(sn) >= 15 && ASN1_STRING_length(sn) <= 17);
	}
	assert_int_equal(secs_to(X509_get0_notBefore(x), now), -GW_LEAF_SKEW_S);
	assert_int_equal(secs_to(X509_get0_notAfter(x), now), GW_CA_VALID_S);

	/* Loaded again: the same certificate, nothing rewritten. */
	assert_int_equal(gw_ca_open(dir, now + 60, &again, err, sizeof(err)), 0);
	y = ca_cert(again);
	assert_int_equal(X509_cmp(x, y), 0);
	X509_free(y);
	X509_free(x);
	gw_ca_free(again);
	gw_ca_free(ca);
	gw_ca_free(NULL);
}

static void test_refused(void **state)
{
	const char *a = sub("a"), *b = sub("b"), *half = sub("half"), *half2 = sub("half2");
	struct gw_ca *ca = NULL;
	time_t now = time(NULL);

	(void)state;
	assert_true(gw_ca_open(a, now, &ca, err, sizeof(err)) == 1);
	gw_ca_free(ca);
	assert_true(gw_ca_open(b, now, &ca, err, sizeof(err)) == 1);
	gw_ca_free(ca);

	/* a key readable by others, or by the group */
	assert_int_equal(chmod(file_in(a, GW_CA_KEY_FILE), 0644), 0);
	assert_int_equal(gw_ca_open(a, now, &ca, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "0644"));
	assert_int_equal(chmod(file_in(a, GW_CA_KEY_FILE), 0640), 0);
	assert_int_equal(gw_ca_open(a, now, &ca, err, sizeof(err)), -EPERM);
	assert_int_equal(chmod(file_in(a, GW_CA_KEY_FILE), 0600), 0);
	assert_int_equal(gw_ca_open(a, now, &ca, err, sizeof(err)), 0);
	gw_ca_free(ca);
	/* a directory others may write to */
	assert_int_equal(chmod(a, 0777), 0);
	assert_int_equal(gw_ca_open(a, now, &ca, err, sizeof(err)), -EPERM);
	assert_int_equal(chmod(a, 0700), 0);
	/* a key owned by someone else (root can hand it over) */
	if (geteuid() == 0) {
		assert_int_equal(chown(file_in(a, GW_CA_KEY_FILE), 65534, 65534), 0);
		assert_int_equal(gw_ca_open(a, now, &ca, err, sizeof(err)), -EPERM);
		assert_non_null(strstr(err, "owned by uid 65534"));
		assert_int_equal(chown(file_in(a, GW_CA_KEY_FILE), 0, 0), 0);
	}

	/* half a CA: each file alone */
	assert_int_equal(mkdir(half, 0700), 0);
	copy_file(file_in(a, GW_CA_KEY_FILE), file_in(half, GW_CA_KEY_FILE), 0600);
	assert_int_equal(gw_ca_open(half, now, &ca, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "half a CA"));
	assert_int_equal(mkdir(half2, 0700), 0);
	copy_file(file_in(a, GW_CA_CERT_FILE), file_in(half2, GW_CA_CERT_FILE), 0644);
	assert_int_equal(gw_ca_open(half2, now, &ca, err, sizeof(err)), -ENOENT);
	assert_null(strstr(err, "PRIVATE"));

	/* the key of another CA */
	copy_file(file_in(b, GW_CA_KEY_FILE), file_in(half2, GW_CA_KEY_FILE), 0600);
	assert_int_equal(gw_ca_open(half2, now, &ca, err, sizeof(err)), -EKEYREJECTED);
	assert_null(strstr(err, "PRIVATE"));

	/* a symlink for the key */
	unlink(file_in(half2, GW_CA_KEY_FILE));
	assert_int_equal(symlink(file_in(b, GW_CA_KEY_FILE), file_in(half2, GW_CA_KEY_FILE)), 0);
	assert_int_equal(gw_ca_open(half2, now, &ca, err, sizeof(err)), -ELOOP);

	/* garbage */
	unlink(file_in(half2, GW_CA_KEY_FILE));
	{
		int fd = open(file_in(half2, GW_CA_KEY_FILE), O_WRONLY | O_CREAT | O_EXCL, 0600);

		assert_true(fd >= 0);
		assert_int_equal(write(fd, "not a key\n", 10), 10);
		close(fd);
	}
	assert_int_equal(gw_ca_open(half2, now, &ca, err, sizeof(err)), -EBADMSG);

	/* a leaf's key and certificate as the CA: not a CA */
	{
		struct gw_leaf *l = NULL;
		FILE *f;

		assert_int_equal(gw_ca_open(b, now, &ca, err, sizeof(err)), 0);
		assert_int_equal(gw_ca_leaf(ca, "leaf.example", 12, now, &l), 0);
		gw_ca_free(ca);
		unlink(file_in(half2, GW_CA_KEY_FILE));
		f = fopen(file_in(half2, GW_CA_KEY_FILE), "w");
		assert_non_null(f);
		assert_int_equal(PEM_write_PKCS8PrivateKey(f, l->key, NULL, NULL, 0, NULL, NULL), 1);
		fclose(f);
		f = fopen(file_in(half2, GW_CA_CERT_FILE), "w");
		assert_non_null(f);
		assert_int_equal(PEM_write_X509(f, l->cert), 1);
		fclose(f);
		gw_leaf_free(l);
		assert_int_equal(chmod(file_in(half2, GW_CA_KEY_FILE), 0600), 0);
		assert_int_equal(gw_ca_open(half2, now, &ca, err, sizeof(err)), -EBADMSG);
		assert_non_null(strstr(err, "not a CA"));
	}

	/* expired: loaded eleven years on */
	assert_int_equal(gw_ca_open(a, now + GW_CA_VALID_S + 86400, &ca, err, sizeof(err)),
			 -EKEYEXPIRED);
}

/* Does @leaf chain to @ca's certificate as a TLS server for @host at @when? */
static int verify(X509 *ca, X509 *leaf, const char *host, time_t when)
{
	X509_STORE *st = X509_STORE_new();
	X509_STORE_CTX *ctx = X509_STORE_CTX_new();
	int ok;

	assert_non_null(st);
	assert_non_null(ctx);
	assert_int_equal(X509_STORE_add_cert(st, ca), 1);
	assert_int_equal(X509_STORE_CTX_init(ctx, st, leaf, NULL), 1);
	assert_int_equal(X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_SSL_SERVER), 1);
	X509_VERIFY_PARAM_set_time(X509_STORE_CTX_get0_param(ctx), when);
	assert_int_equal(X509_VERIFY_PARAM_set1_host(X509_STORE_CTX_get0_param(ctx), host, 0), 1);
	ok = X509_verify_cert(ctx);
	X509_STORE_CTX_free(ctx);
	X509_STORE_free(st);
	return ok;
}

static void test_leaf(void **state)
{
	struct gw_ca *ca = NULL, *again = NULL;
	struct gw_leaf *l = NULL, *l2 = NULL;
	time_t now = time(NULL);
	GENERAL_NAMES *san;
	const GENERAL_NAME *g;
	X509 *cax;

	(void)state;
	assert_true(gw_ca_open(sub("leafca"), now, &ca, err, sizeof(err)) == 1);
	cax = ca_cert(ca);
	assert_int_equal(gw_ca_leaf(ca, "API.OpenAI.com", 14, now, &l), 0);
	assert_int_equal(verify(cax, l->cert, "api.openai.com", now), 1);
	assert_int_equal(verify(cax, l->cert, "other.openai.com", now), 0);
	assert_int_equal(verify(cax, l->cert, "api.openai.com", now + GW_LEAF_LIFETIME_S + 1), 0);
	assert_int_equal(X509_check_host(l->cert, "api.openai.com", 0, 0, NULL), 1);
	assert_int_equal(X509_check_host(l->cert, "openai.com", 0, 0, NULL), 0);
	assert_int_equal(X509_check_host(l->cert, "evil.com", 0, 0, NULL), 0);
	assert_int_equal(X509_check_private_key(l->cert, l->key), 1);
	assert_int_equal(EVP_PKEY_get_bits(l->key), 256);
	assert_true(EVP_PKEY_is_a(l->key, "EC"));

	/* exactly one SAN entry, the lower-cased name, critical (empty subject) */
	san = X509_get_ext_d2i(l->cert, NID_subject_alt_name, NULL, NULL);
	assert_non_null(san);
	assert_int_equal(sk_GENERAL_NAME_num(san), 1);
	g = sk_GENERAL_NAME_value(san, 0);
	assert_int_equal(g->type, GEN_DNS);
	assert_int_equal(ASN1_STRING_length(g->d.dNSName), 14);
	assert_memory_equal(ASN1_STRING_get0_data(g->d.dNSName), "api.openai.com", 14);
	GENERAL_NAMES_free(san);
	assert_true(ext_critical(l->cert, NID_subject_alt_name));
	assert_int_equal(X509_NAME_entry_count(X509_get_subject_name(l->cert)), 0);

	/* the other extensions */
	assert_int_equal(X509_check_ca(l->cert), 0);
	assert_true(ext_critical(l->cert, NID_basic_constraints));
	assert_true(ext_critical(l->cert, NID_key_usage));
	assert_int_equal(X509_get_key_usage(l->cert), KU_DIGITAL_SIGNATURE);
	assert_int_equal(X509_get_extended_key_usage(l->cert), XKU_SSL_SERVER);
	assert_int_equal(ASN1_OCTET_STRING_cmp(X509_get0_authority_key_id(l->cert),
					       X509_get0_subject_key_id(cax)), 0);
	assert_int_equal(X509_get_signature_nid(l->cert), NID_ecdsa_with_SHA256);
	assert_int_equal(X509_NAME_cmp(X509_get_issuer_name(l->cert),
				       X509_get_subject_name(cax)), 0);

	/* validity: an hour back for skew, a day on */
	assert_int_equal(secs_to(X509_get0_notBefore(l->cert), now), -GW_LEAF_SKEW_S);
	assert_int_equal(secs_to(X509_get0_notAfter(l->cert), now), GW_LEAF_LIFETIME_S);
	assert_int_equal(l->not_before, now - GW_LEAF_SKEW_S);
	assert_int_equal(l->not_after, now + GW_LEAF_LIFETIME_S);

	/* cached: the same objects while more than half the lifetime is left */
	assert_int_equal(gw_ca_leaf(ca, "api.openai.com", 14, now + 60, &l2), 0);
	assert_ptr_equal(l2->cert, l->cert);
	assert_ptr_equal(l2->key, l->key);
	gw_leaf_free(l2);
	assert_int_equal(gw_ca_leaf(ca, "api.openai.com", 14,
				    now + GW_LEAF_LIFETIME_S / 2 - 1, &l2), 0);
	assert_ptr_equal(l2->cert, l->cert);
	gw_leaf_free(l2);
	/* half of it gone: a new leaf, valid from then; the old one stays usable */
	assert_int_equal(gw_ca_leaf(ca, "api.openai.com", 14, now + GW_LEAF_LIFETIME_S / 2, &l2), 0);
	assert_ptr_not_equal(l2->cert, l->cert);
	assert_int_equal(l2->not_after, now + GW_LEAF_LIFETIME_S / 2 + GW_LEAF_LIFETIME_S);
	assert_int_equal(X509_cmp(l2->cert, l->cert) != 0, 1);
	assert_int_equal(verify(cax, l->cert, "api.openai.com", now), 1);
	gw_leaf_free(l);
	/* the clock set back before the cached leaf's notBefore: a new one */
	assert_int_equal(gw_ca_leaf(ca, "api.openai.com", 14, now - 2 * GW_LEAF_SKEW_S, &l), 0);
	assert_ptr_not_equal(l2->cert, l->cert);
	gw_leaf_free(l);
	gw_leaf_free(l2);

	/* a leaf outlives the CA object; the CA loaded again issues leaves that chain */
	assert_int_equal(gw_ca_leaf(ca, "files.pythonhosted.org", 22, now, &l), 0);
	gw_ca_free(ca);
	assert_int_equal(verify(cax, l->cert, "files.pythonhosted.org", now), 1);
	gw_leaf_free(l);
	assert_int_equal(gw_ca_open(sub("leafca"), now, &again, err, sizeof(err)), 0);
	assert_int_equal(gw_ca_leaf(again, "pypi.org", 8, now, &l), 0);
	assert_int_equal(verify(cax, l->cert, "pypi.org", now), 1);
	gw_leaf_free(l);
	gw_ca_free(again);
	X509_free(cax);
	gw_leaf_free(NULL);
}

static void test_cache_bound(void **state)
{
	struct gw_ca *ca = NULL;
	struct gw_leaf *first = NULL, *l = NULL;
	time_t now = time(NULL);
	char name[32];

	(void)state;
	assert_true(gw_ca_open(sub("boundca"), now, &ca, err, sizeof(err)) == 1);
	assert_int_equal(gw_ca_leaf(ca, "n0.example", 10, now, &first), 0);
	for (int i = 1; i < GW_LEAF_CACHE_MAX; i++) {
		int n = snprintf(name, sizeof(name), "n%d.example", i);

		assert_int_equal(gw_ca_leaf(ca, name, (size_t)n, now, &l), 0);
		gw_leaf_free(l);
		if (i == GW_LEAF_CACHE_MAX / 2) {
			/* used again: the most recently used, so not the one to go */
			assert_int_equal(gw_ca_leaf(ca, "n0.example", 10, now, &l), 0);
			assert_ptr_equal(l->cert, first->cert);
			gw_leaf_free(l);
		}
	}
	/* full: one more name pushes out the least recently used (n1), not n0 */
	assert_int_equal(gw_ca_leaf(ca, "one-more.example", 16, now, &l), 0);
	gw_leaf_free(l);
	assert_int_equal(gw_ca_leaf(ca, "n0.example", 10, now, &l), 0);
	assert_ptr_equal(l->cert, first->cert);
	gw_leaf_free(l);
	gw_leaf_free(first);
	gw_ca_free(ca);
}

static void test_names(void **state)
{
	static const struct {
		const char *in;
		size_t len;	/* 0: strlen */
	} bad[] = {
		{ "a..b", 0 }, { "-a.com", 0 }, { "a-.com", 0 }, { "a.-b.com", 0 },
		{ "*.x.com", 0 }, { "x.*.com", 0 }, { "1.2.3.4", 0 }, { "10.0x7f", 0 },
		{ "a.0x", 0 }, { "127.1", 0 }, { "2130706433", 0 }, { "::1", 0 }, { "[::1]", 0 },
		{ "a.com,DNS:evil.com", 0 }, { "DNS:x.com", 0 }, { "a.com, DNS:b.com", 0 },
		{ "a.com\0.evil.com", 15 }, { "a.com\0", 6 }, { "", 0 }, { ".", 0 },
		{ ".a.com", 0 }, { "a.com.", 0 }, { "a b.com", 0 }, { "a/b.com", 0 },
		{ "b\xc3\xbc" "cher.example", 0 }, { "a.com:443", 0 }, { "a@b.com", 0 },
		{ "a\nb.com", 0 }, { "IP:1.2.3.4", 0 },
	};
	static const struct {
		const char *in, *want;
	} good[] = {
		{ "api.openai.com", "api.openai.com" }, { "API.OpenAI.COM", "api.openai.com" },
		{ "a_b.com", "a_b.com" }, { "_dmarc.example.com", "_dmarc.example.com" },
		{ "xn--bcher-kva.example", "xn--bcher-kva.example" }, { "localhost", "localhost" },
		{ "1.2.3.a4", "1.2.3.a4" }, { "a-b.c-d", "a-b.c-d" }, { "9gag.com", "9gag.com" },
		{ "x.0xg", "x.0xg" },
	};
	char out[GW_NAME_MAX + 1], big[300];
	struct gw_ca *ca = NULL;
	struct gw_leaf *l = NULL;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		size_t len = bad[i].len ? bad[i].len : strlen(bad[i].in);

		if (gw_name_check(bad[i].in, len, out) != -EINVAL)
			fail_msg("taken: \"%s\" (%zu bytes)", bad[i].in, len);
	}
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_int_equal(gw_name_check(good[i].in, strlen(good[i].in), out), 0);
		assert_string_equal(out, good[i].want);
	}

	/* lengths: a 63-byte label and a 253-byte name are the most */
	memset(big, 'a', 63);
	memcpy(big + 63, ".com", 5);
	assert_int_equal(gw_name_check(big, 67, out), 0);
	memset(big, 'a', 64);
	memcpy(big + 64, ".com", 5);
	assert_int_equal(gw_name_check(big, 68, out), -EINVAL);
	for (i = 0; i < 253; i++)	/* "aaaa...a.a" in labels of 50 */
		big[i] = (i % 51 == 50) ? '.' : 'a';
	big[253] = 'b';
	assert_int_equal(gw_name_check(big, 253, out), 0);
	assert_int_equal(strlen(out), 253);
	assert_int_equal(gw_name_check(big, 254, out), -EINVAL);

	/* the CA refuses them too, and mints for the underscore one */
	assert_true(gw_ca_open(sub("nameca"), time(NULL), &ca, err, sizeof(err)) == 1);
	assert_int_equal(gw_ca_leaf(ca, "a.com,DNS:evil.com", 18, time(NULL), &l), -EINVAL);
	assert_int_equal(gw_ca_leaf(ca, "1.2.3.4", 7, time(NULL), &l), -EINVAL);
	assert_int_equal(gw_ca_leaf(ca, "*.x.com", 7, time(NULL), &l), -EINVAL);
	assert_null(l);
	assert_int_equal(gw_ca_leaf(ca, "a_b.com", 7, time(NULL), &l), 0);
	assert_int_equal(X509_check_host(l->cert, "a_b.com", 0, 0, NULL), 1);
	gw_leaf_free(l);
	gw_ca_free(ca);
}

static int teardown(void **state)
{
	char cmd[600];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_make_and_load),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_leaf),
		cmocka_unit_test(test_cache_bound),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
