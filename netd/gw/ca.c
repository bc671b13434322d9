/*
 * netd/gw/ - the API gateway (issue 33): where sandboxes' HTTPS to names a
 * policy sends through it will be terminated, checked and given their
 * credentials.  Built so far: its certificate authority (this file) and
 * the check of the names it mints leaves for (name.c).  Not built yet:
 * the interception, the gateway process, credentials, rate limits
 * (docs/gateway.md).
 */
/*
 * gw/ca - netd's CA: load or make it (ca.key, ca.pem), mint and cache
 * leaves, hand out the certificate.  The edge of the gateway's
 * certificates: reads and writes its two files, draws random serials and
 * keys from OpenSSL; logs nothing (the caller logs once, from @err).
 * What is in a certificate and why: netd/gw/ca.h.
 */
#include "netd/gw/ca.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include "common/fsutil.h"
#include "common/hash.h"
#include "netd/gw/name.h"

#define LEAF_BUCKETS 8192	/* a power of two, twice GW_LEAF_CACHE_MAX */
#define SERIAL_LEN   16		/* bytes: 128 random bits (RFC 5280 4.1.2.2: at most 20 octets) */

struct leaf_ent {
	char name[GW_NAME_MAX + 1];
	uint32_t hash;
	X509 *cert;
	EVP_PKEY *key;
	time_t not_before, not_after;
	struct leaf_ent *hnext;		/* its bucket's chain */
	struct leaf_ent *prev, *next;	/* most recently used first */
};

struct gw_ca {
	X509 *cert;
	EVP_PKEY *key;
	uint32_t salt;			/* random: the names' hash is not the sandboxes' to choose */
	struct leaf_ent **bucket;	/* LEAF_BUCKETS chains */
	struct leaf_ent *mru, *lru;
	size_t n_leaves;
};

static int fail(char *err, size_t errsz, int r, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t errsz, int r, const char *fmt, ...)
{
	va_list ap;

	if (err && errsz) {
		va_start(ap, fmt);
		vsnprintf(err, errsz, fmt, ap);
		va_end(ap);
	}
	ERR_clear_error();	/* OpenSSL's queue says nothing the message does not */
	return r;
}

/* ---- building certificates ------------------------------------------ */

/* A positive, non-zero serial of SERIAL_LEN random bytes into @x. */
static int set_serial(X509 *x)
{
	unsigned char b[SERIAL_LEN];
	BIGNUM *bn = NULL;
	int r = -EIO;

	do {
		if (RAND_bytes(b, sizeof(b)) != 1)
			return -EIO;
		BN_free(bn);
		bn = BN_bin2bn(b, sizeof(b), NULL);	/* unsigned: DER adds a 0 byte if needed */
	} while (bn && BN_is_zero(bn));
	if (bn && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)))
		r = 0;
	BN_free(bn);
	return r;
}

/* basicConstraints, critical (RFC 5280 4.2.1.9): CA:TRUE pathlen:0, or CA:FALSE. */
static int add_basic_constraints(X509 *x, bool ca)
{
	BASIC_CONSTRAINTS *bc = BASIC_CONSTRAINTS_new();
	int r = -ENOMEM;

	if (!bc)
		return -ENOMEM;
	bc->ca = ca ? 0xff : 0;
	if (ca && (!(bc->pathlen = ASN1_INTEGER_new()) || !ASN1_INTEGER_set(bc->pathlen, 0)))
		goto out;
	r = X509_add1_ext_i2d(x, NID_basic_constraints, bc, 1, X509V3_ADD_REPLACE) == 1 ? 0 : -EIO;
out:
	BASIC_CONSTRAINTS_free(bc);
	return r;
}

/* keyUsage, critical (RFC 5280 4.2.1.3): the bits of @bits (KU bit numbers). */
static int add_key_usage(X509 *x, const int *bits, size_t n)
{
	ASN1_BIT_STRING *ku = ASN1_BIT_STRING_new();
	int r = -ENOMEM;

	if (!ku)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (!ASN1_BIT_STRING_set_bit(ku, bits[i], 1))
			goto out;
	r = X509_add1_ext_i2d(x, NID_key_usage, ku, 1, X509V3_ADD_REPLACE) == 1 ? 0 : -EIO;
out:
	ASN1_BIT_STRING_free(ku);
	return r;
}

/* subjectKeyIdentifier (RFC 5280 4.2.1.2, method 1: SHA-1 of subjectPublicKey). */
static int add_skid(X509 *x)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0;
	ASN1_OCTET_STRING *id;
	int r = -EIO;

	if (!X509_pubkey_digest(x, EVP_sha1(), md, &len))
		return -EIO;
	id = ASN1_OCTET_STRING_new();
	if (!id)
		return -ENOMEM;
	if (ASN1_OCTET_STRING_set(id, md, (int)len) &&
	    X509_add1_ext_i2d(x, NID_subject_key_identifier, id, 0, X509V3_ADD_REPLACE) == 1)
		r = 0;
	ASN1_OCTET_STRING_free(id);
	return r;
}

/* authorityKeyIdentifier = the CA's subjectKeyIdentifier, not critical (RFC 5280 4.2.1.1). */
static int add_akid(X509 *x, X509 *ca)
{
	const ASN1_OCTET_STRING *skid = X509_get0_subject_key_id(ca);
	AUTHORITY_KEYID *ak;
	int r = -ENOMEM;

	if (!skid)
		return -EIO;
	ak = AUTHORITY_KEYID_new();
	if (!ak)
		return -ENOMEM;
	if ((ak->keyid = ASN1_OCTET_STRING_dup(skid)))
		r = X509_add1_ext_i2d(x, NID_authority_key_identifier, ak, 0,
				      X509V3_ADD_REPLACE) == 1 ? 0 : -EIO;
	AUTHORITY_KEYID_free(ak);
	return r;
}

/* extKeyUsage serverAuth (RFC 5280 4.2.1.12), not critical. */
static int add_eku_server(X509 *x)
{
	EXTENDED_KEY_USAGE *eku = sk_ASN1_OBJECT_new_null();
	int r = -ENOMEM;

	if (!eku)
		return -ENOMEM;
	if (sk_ASN1_OBJECT_push(eku, OBJ_nid2obj(NID_server_auth)) > 0)
		r = X509_add1_ext_i2d(x, NID_ext_key_usage, eku, 0, X509V3_ADD_REPLACE) == 1 ?
			0 : -EIO;
	sk_ASN1_OBJECT_pop_free(eku, ASN1_OBJECT_free);	/* (a built-in object: not freed) */
	return r;
}

/*
 * subjectAltName with exactly one dNSName, @name (checked by the caller),
 * critical because the subject is empty (RFC 5280 4.2.1.6).  Built from a
 * GENERAL_NAME: nothing in @name is parsed, so nothing in it adds an entry.
 */
static int add_san_dns(X509 *x, const char *name)
{
	GENERAL_NAMES *gens = sk_GENERAL_NAME_new_null();
	GENERAL_NAME *g = GENERAL_NAME_new();
	ASN1_IA5STRING *ia5 = ASN1_IA5STRING_new();
	int r = -ENOMEM;

	if (!gens || !g || !ia5 || !ASN1_STRING_set(ia5, name, (int)strlen(name)))
		goto out;
	GENERAL_NAME_set0_value(g, GEN_DNS, ia5);
	ia5 = NULL;
	if (sk_GENERAL_NAME_push(gens, g) <= 0)
		goto out;
	g = NULL;
	r = X509_add1_ext_i2d(x, NID_subject_alt_name, gens, 1, X509V3_ADD_REPLACE) == 1 ? 0 : -EIO;
out:
	ASN1_IA5STRING_free(ia5);
	GENERAL_NAME_free(g);
	GENERAL_NAMES_free(gens);
	return r;
}

/* A v3 certificate for @pub with a random serial, valid [@from, @until]. */
static X509 *cert_new(EVP_PKEY *pub, time_t from, time_t until)
{
	X509 *x = X509_new();

	if (!x || !X509_set_version(x, X509_VERSION_3) || set_serial(x) < 0 ||
	    !X509_set_pubkey(x, pub) || !ASN1_TIME_set(X509_getm_notBefore(x), from) ||
	    !ASN1_TIME_set(X509_getm_notAfter(x), until)) {
		X509_free(x);
		return NULL;
	}
	return x;
}

/* The CA's subject: O=netd, CN=netd gateway CA (HOST), HOST cut to fit 64 (RFC 5280 A.1). */
static X509_NAME *ca_subject(void)
{
	char host[65] = "", cn[65];
	X509_NAME *n = X509_NAME_new();

	if (gethostname(host, sizeof(host) - 1) < 0)
		host[0] = '\0';
	for (char *p = host; *p; p++)
		if (*p < 0x21 || *p > 0x7e)
			*p = '?';	/* printable ASCII only: it is a PrintableString-ish label */
	snprintf(cn, sizeof(cn), "netd gateway CA (%.40s)", host[0] ? host : "unknown host");
	if (!n || !X509_NAME_add_entry_by_txt(n, "O", MBSTRING_UTF8, (const unsigned char *)"netd",
					      -1, -1, 0) ||
	    !X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_UTF8, (const unsigned char *)cn, -1, -1,
					0)) {
		X509_NAME_free(n);
		return NULL;
	}
	return n;
}

/* A new self-signed CA certificate for @key. */
static int ca_cert_new(EVP_PKEY *key, time_t now, X509 **ret)
{
	static const int bits[] = { 5, 6 };	/* keyCertSign, cRLSign */
	X509_NAME *subj = ca_subject();
	X509 *x = cert_new(key, now - GW_LEAF_SKEW_S, now + GW_CA_VALID_S);
	int r = -ENOMEM;

	if (!subj || !x)
		goto out;
	r = -EIO;
	if (!X509_set_subject_name(x, subj) || !X509_set_issuer_name(x, subj))
		goto out;
	if ((r = add_basic_constraints(x, true)) < 0 || (r = add_key_usage(x, bits, 2)) < 0 ||
	    (r = add_skid(x)) < 0)
		goto out;
	r = X509_sign(x, key, EVP_sha256()) > 0 ? 0 : -EIO;
out:
	X509_NAME_free(subj);
	if (r < 0)
		X509_free(x);
	else
		*ret = x;
	return r;
}

/* ---- the files -------------------------------------------------------- */

/* A password callback that gives none: an encrypted key is refused, never prompted for. */
static int no_password(char *buf, int size, int rwflag, void *u)
{
	(void)buf, (void)size, (void)rwflag, (void)u;
	return -1;
}

/*
 * Read @path whole (at most GW_CA_FILE_MAX bytes) into @buf; @secret: the
 * key, which must be ours and 0600 or stricter.  Return: its length; -errno.
 */
static ssize_t read_file(const char *path, bool secret, char *buf, char *err, size_t errsz)
{
	struct stat st;
	ssize_t n, len = 0;
	int fd = fs_open_stat(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0, &st);

	if (fd == -ELOOP)
		return fail(err, errsz, -ELOOP, "%s is a symbolic link; netd reads only a "
			    "regular file there", path);
	if (fd < 0)
		return fail(err, errsz, fd, "%s: %s", path, strerror(-fd));
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return fail(err, errsz, -EPERM, "%s is not a regular file", path);
	}
	if (secret && st.st_uid != geteuid()) {
		close(fd);
		return fail(err, errsz, -EPERM, "%s is owned by uid %u, not by netd's uid %u: "
			    "refusing the CA key", path, (unsigned)st.st_uid, (unsigned)geteuid());
	}
	if (secret && (st.st_mode & 077)) {
		close(fd);
		return fail(err, errsz, -EPERM, "%s has mode %04o: the CA key must not be "
			    "readable by group or others (chmod 0600 it, and consider it "
			    "disclosed: a new CA is safer)", path, (unsigned)(st.st_mode & 07777));
	}
	if (st.st_size > GW_CA_FILE_MAX) {
		close(fd);
		return fail(err, errsz, -EFBIG, "%s is over %d bytes", path, GW_CA_FILE_MAX);
	}
	while (len < GW_CA_FILE_MAX && (n = read(fd, buf + len, GW_CA_FILE_MAX - len)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;

			close(fd);
			return fail(err, errsz, -e, "%s: %s", path, strerror(e));
		}
		len += n;
	}
	close(fd);
	return len;
}

/* The directory: ours, not writable by group or others.  Made 0700 if missing. */
static int check_dir(const char *dir, char *err, size_t errsz)
{
	struct stat st;
	int r = fs_mkdir_p(dir, 0700);

	if (r < 0 && r != -EEXIST)
		return fail(err, errsz, r, "cannot create %s: %s", dir, strerror(-r));
	if (lstat(dir, &st) < 0)
		return fail(err, errsz, -errno, "%s: %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return fail(err, errsz, -ENOTDIR, "%s is not a directory", dir);
	if (st.st_uid != geteuid() || (st.st_mode & 022))
		return fail(err, errsz, -EPERM, "%s (uid %u, mode %04o) must be owned by netd's "
			    "uid %u and writable by it alone", dir, (unsigned)st.st_uid,
			    (unsigned)(st.st_mode & 07777), (unsigned)geteuid());
	return 0;
}

/* Load the CA from @kpath and @cpath into @ca. */
static int ca_load(struct gw_ca *ca, const char *kpath, const char *cpath, time_t now,
		   char *err, size_t errsz)
{
	char *buf = malloc(GW_CA_FILE_MAX);
	ssize_t len;
	BIO *bio = NULL;
	int r;

	if (!buf)
		return -ENOMEM;
	len = read_file(kpath, true, buf, err, errsz);
	if (len < 0) {
		free(buf);
		return (int)len;
	}
	bio = BIO_new_mem_buf(buf, (int)len);
	ca->key = bio ? PEM_read_bio_PrivateKey(bio, NULL, no_password, NULL) : NULL;
	BIO_free(bio);
	OPENSSL_cleanse(buf, (size_t)len);	/* the key's PEM: wiped before anything else */
	if (!ca->key) {
		r = fail(err, errsz, -EBADMSG, "%s: no unencrypted PEM private key", kpath);
		goto out;
	}
	if (!EVP_PKEY_is_a(ca->key, "EC") && !EVP_PKEY_is_a(ca->key, "RSA")) {
		r = fail(err, errsz, -EBADMSG, "%s: a %s key; netd signs with EC or RSA keys",
			 kpath, EVP_PKEY_get0_type_name(ca->key));
		goto out;
	}
	len = read_file(cpath, false, buf, err, errsz);
	if (len < 0) {
		r = (int)len;
		goto out;
	}
	bio = BIO_new_mem_buf(buf, (int)len);
	ca->cert = bio ? PEM_read_bio_X509(bio, NULL, no_password, NULL) : NULL;
	BIO_free(bio);
	if (!ca->cert) {
		r = fail(err, errsz, -EBADMSG, "%s: no PEM certificate", cpath);
		goto out;
	}
	if (X509_check_private_key(ca->cert, ca->key) != 1) {
		r = fail(err, errsz, -EKEYREJECTED, "%s does not belong to the certificate in %s "
			 "(a key and certificate of different CAs)", kpath, cpath);
		goto out;
	}
	/* X509_check_ca(): 1 = a v3 CA (basicConstraints CA:TRUE, keyCertSign if keyUsage). */
	if (X509_check_ca(ca->cert) != 1 || !X509_get0_subject_key_id(ca->cert)) {
		r = fail(err, errsz, -EBADMSG, "%s is not a CA certificate netd can issue from "
			 "(basicConstraints CA:TRUE, keyUsage keyCertSign, subjectKeyIdentifier)",
			 cpath);
		goto out;
	}
	if (X509_cmp_time(X509_get0_notAfter(ca->cert), &now) <= 0) {
		r = fail(err, errsz, -EKEYEXPIRED, "%s has expired: remove %s and %s for a new "
			 "CA, which clients must trust anew", cpath, kpath, cpath);
		goto out;
	}
	r = 0;
out:
	free(buf);
	return r;
}

/* PEM of @key (PKCS#8, unencrypted) or, with no key, of @cert, into a new buffer. */
static int pem_of(EVP_PKEY *key, const X509 *cert, char **ret, size_t *ret_len)
{
	BIO *bio = BIO_new(BIO_s_mem());
	BUF_MEM *bm = NULL;
	int ok, r = -EIO;

	if (!bio)
		return -ENOMEM;
	ok = key ? PEM_write_bio_PKCS8PrivateKey(bio, key, NULL, NULL, 0, NULL, NULL)
		 : PEM_write_bio_X509(bio, (X509 *)cert);
	BIO_get_mem_ptr(bio, &bm);
	if (ok && bm && bm->length) {
		r = -ENOMEM;
		if ((*ret = malloc(bm->length + 1))) {
			memcpy(*ret, bm->data, bm->length);
			(*ret)[bm->length] = '\0';
			*ret_len = bm->length;
			r = 0;
		}
	}
	if (bm && bm->data)
		OPENSSL_cleanse(bm->data, bm->max);	/* a key's PEM never lingers */
	BIO_free(bio);
	return r;
}

/* Make a new CA and write it: the key first, then the certificate. */
static int ca_make(struct gw_ca *ca, const char *kpath, const char *cpath, time_t now,
		   char *err, size_t errsz)
{
	char *pem = NULL;
	size_t len = 0;
	int r;

	ca->key = EVP_EC_gen("P-256");
	if (!ca->key)
		return fail(err, errsz, -EIO, "cannot generate an ECDSA P-256 key");
	if ((r = ca_cert_new(ca->key, now, &ca->cert)) < 0)
		return fail(err, errsz, r, "cannot make the CA certificate: %s", strerror(-r));
	if ((r = pem_of(ca->key, NULL, &pem, &len)) < 0)
		return fail(err, errsz, r, "cannot encode the CA key: %s", strerror(-r));
	/*
	 * The key before the certificate: a crash between the two leaves a key
	 * no client can trust yet (gw_ca_open() then refuses half a CA), never
	 * a certificate clients may trust whose key is gone.
	 */
	r = fs_write_atomic(kpath, pem, len, 0600);
	OPENSSL_cleanse(pem, len);
	free(pem);
	if (r < 0)
		return fail(err, errsz, r, "cannot write %s: %s", kpath, strerror(-r));
	if ((r = pem_of(NULL, ca->cert, &pem, &len)) < 0)
		return fail(err, errsz, r, "cannot encode the CA certificate: %s", strerror(-r));
	r = fs_write_atomic(cpath, pem, len, 0644);
	free(pem);
	if (r < 0) {
		unlink(kpath);	/* no client has seen this CA: nothing half is left */
		return fail(err, errsz, r, "cannot write %s: %s", cpath, strerror(-r));
	}
	return 1;
}

int gw_ca_open(const char *dir, time_t now, struct gw_ca **ret, char *err, size_t errsz)
{
	char kpath[PATH_MAX], cpath[PATH_MAX];
	struct gw_ca *ca;
	bool has_key, has_cert;
	struct stat st;
	int r;

	if (err && errsz)
		err[0] = '\0';
	if (snprintf(kpath, sizeof(kpath), "%s/%s", dir, GW_CA_KEY_FILE) >= (int)sizeof(kpath) ||
	    snprintf(cpath, sizeof(cpath), "%s/%s", dir, GW_CA_CERT_FILE) >= (int)sizeof(cpath))
		return fail(err, errsz, -ENAMETOOLONG, "%s: name too long", dir);
	if ((r = check_dir(dir, err, errsz)) < 0)
		return r;
	has_key = lstat(kpath, &st) == 0;
	has_cert = lstat(cpath, &st) == 0;
	if (has_key != has_cert)
		return fail(err, errsz, -ENOENT, "half a CA: %s is there, %s is not; remove %s "
			    "and netd makes a new CA (clients must then trust the new one)",
			    has_key ? kpath : cpath, has_key ? cpath : kpath,
			    has_key ? kpath : cpath);
	ca = calloc(1, sizeof(*ca));
	if (!ca || !(ca->bucket = calloc(LEAF_BUCKETS, sizeof(*ca->bucket))) ||
	    RAND_bytes((unsigned char *)&ca->salt, sizeof(ca->salt)) != 1) {
		gw_ca_free(ca);
		return fail(err, errsz, -ENOMEM, "out of memory");
	}
	r = has_key ? ca_load(ca, kpath, cpath, now, err, errsz)
		    : ca_make(ca, kpath, cpath, now, err, errsz);
	if (r < 0) {
		gw_ca_free(ca);
		return r;
	}
	*ret = ca;
	return r;
}

/* ---- leaves ----------------------------------------------------------- */

/* A new leaf for @name (checked, lower case) into @e. */
static int leaf_mint(struct gw_ca *ca, const char *name, time_t now, struct leaf_ent *e)
{
	static const int bits[] = { 0 };	/* digitalSignature (ECDHE_ECDSA) */
	X509 *x = NULL;
	int r = -EIO;

	e->key = EVP_EC_gen("P-256");
	if (!e->key)
		return -EIO;
	e->not_before = now - GW_LEAF_SKEW_S;
	e->not_after = now + GW_LEAF_LIFETIME_S;
	x = cert_new(e->key, e->not_before, e->not_after);
	if (!x)
		goto out;
	if (!X509_set_issuer_name(x, X509_get_subject_name(ca->cert)))
		goto out;	/* the subject stays empty: the name is in the SAN alone */
	if ((r = add_san_dns(x, name)) < 0 || (r = add_basic_constraints(x, false)) < 0 ||
	    (r = add_key_usage(x, bits, 1)) < 0 || (r = add_eku_server(x)) < 0 ||
	    (r = add_akid(x, ca->cert)) < 0)
		goto out;
	r = X509_sign(x, ca->key, EVP_sha256()) > 0 ? 0 : -EIO;
out:
	if (r < 0) {
		X509_free(x);
		EVP_PKEY_free(e->key);
		e->key = NULL;
		ERR_clear_error();
	} else {
		e->cert = x;
	}
	return r;
}

static void lru_unlink(struct gw_ca *ca, struct leaf_ent *e)
{
	*(e->prev ? &e->prev->next : &ca->mru) = e->next;
	*(e->next ? &e->next->prev : &ca->lru) = e->prev;
	e->prev = e->next = NULL;
}

static void lru_push(struct gw_ca *ca, struct leaf_ent *e)
{
	e->prev = NULL;
	e->next = ca->mru;
	*(ca->mru ? &ca->mru->prev : &ca->lru) = e;
	ca->mru = e;
}

/* Out of the cache, and its references dropped (a caller's stay valid). */
static void ent_drop(struct gw_ca *ca, struct leaf_ent *e)
{
	struct leaf_ent **pp = &ca->bucket[e->hash & (LEAF_BUCKETS - 1)];

	while (*pp != e)
		pp = &(*pp)->hnext;
	*pp = e->hnext;
	lru_unlink(ca, e);
	X509_free(e->cert);
	EVP_PKEY_free(e->key);
	free(e);
	ca->n_leaves--;
}

/* The caller's own references to @e's leaf. */
static int leaf_hand_out(const struct leaf_ent *e, struct gw_leaf **ret)
{
	struct gw_leaf *l = calloc(1, sizeof(*l));

	if (!l)
		return -ENOMEM;
	if (!X509_up_ref(e->cert)) {
		free(l);
		return -EIO;
	}
	if (!EVP_PKEY_up_ref(e->key)) {
		X509_free(e->cert);
		free(l);
		return -EIO;
	}
	l->cert = e->cert;
	l->key = e->key;
	l->not_before = e->not_before;
	l->not_after = e->not_after;
	*ret = l;
	return 0;
}

int gw_ca_leaf(struct gw_ca *ca, const char *name, size_t len, time_t now,
	       struct gw_leaf **ret)
{
	char norm[GW_NAME_MAX + 1];
	struct leaf_ent *e;
	uint32_t h;
	int r;

	if (gw_name_check(name, len, norm) < 0)
		return -EINVAL;
	h = fnv32_str(fnv32_add(FNV32_INIT, &ca->salt, sizeof(ca->salt)), norm);
	for (e = ca->bucket[h & (LEAF_BUCKETS - 1)]; e; e = e->hnext)
		if (e->hash == h && strcmp(e->name, norm) == 0)
			break;
	/* Fresh: valid now (a clock set back is not), more than half its lifetime left. */
	if (e && now >= e->not_before && now < e->not_after - GW_LEAF_LIFETIME_S / 2) {
		lru_unlink(ca, e);
		lru_push(ca, e);
		return leaf_hand_out(e, ret);
	}
	if (e)
		ent_drop(ca, e);
	if (ca->n_leaves >= GW_LEAF_CACHE_MAX)
		ent_drop(ca, ca->lru);
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	memcpy(e->name, norm, strlen(norm) + 1);
	e->hash = h;
	if ((r = leaf_mint(ca, norm, now, e)) < 0) {
		free(e);
		return r;
	}
	e->hnext = ca->bucket[h & (LEAF_BUCKETS - 1)];
	ca->bucket[h & (LEAF_BUCKETS - 1)] = e;
	lru_push(ca, e);
	ca->n_leaves++;
	return leaf_hand_out(e, ret);
}

void gw_leaf_free(struct gw_leaf *leaf)
{
	if (!leaf)
		return;
	X509_free(leaf->cert);
	EVP_PKEY_free(leaf->key);
	free(leaf);
}

int gw_ca_cert_pem(const struct gw_ca *ca, char **ret_pem, size_t *ret_len)
{
	size_t len = 0;
	int r = pem_of(NULL, ca->cert, ret_pem, &len);

	if (r == 0 && ret_len)
		*ret_len = len;
	return r;
}

void gw_ca_free(struct gw_ca *ca)
{
	if (!ca)
		return;
	while (ca->lru)
		ent_drop(ca, ca->lru);
	free(ca->bucket);
	X509_free(ca->cert);
	EVP_PKEY_free(ca->key);
	free(ca);
}
