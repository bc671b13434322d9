/*
 * gw/ca - netd's own certificate authority, for the API gateway (issue 33,
 * docs/gateway.md): made once, kept in a directory of the state dir, and
 * used to mint short-lived leaf certificates, one per DNS name, which the
 * gateway will present to sandboxes that trust the CA.  Not here: the
 * gateway itself (interception, credentials, rate limits), which is not
 * built yet.
 *
 * The CA: an ECDSA P-256 key (DIR/ca.key, PEM PKCS#8, mode 0600, owned by
 * the running user) and its self-signed certificate (DIR/ca.pem, 0644).
 * Leaves: ECDSA P-256, SAN = exactly one dNSName, valid from an hour
 * before they are minted (clients' clock skew) to GW_LEAF_LIFETIME_S
 * after, cached per name and minted again once less than half of that is
 * left.  OpenSSL 3 (libcrypto).  Not thread-safe: one event loop.
 */
#ifndef NETD_GW_CA_H
#define NETD_GW_CA_H

#include <stddef.h>
#include <time.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

#define GW_CA_KEY_FILE     "ca.key"
#define GW_CA_CERT_FILE    "ca.pem"
#define GW_CA_DIR          "gateway-ca"	/* under state_dir */
#define GW_CA_VALID_S      (3650L * 86400)	/* the CA: ten years */
#define GW_LEAF_LIFETIME_S (24L * 3600)	/* a leaf: a day after it is minted */
#define GW_LEAF_SKEW_S     3600L	/* notBefore this long before it is minted */
#define GW_LEAF_CACHE_MAX  4096		/* leaves kept, least recently used out first */
#define GW_CA_FILE_MAX     16384	/* bytes: a larger ca.key or ca.pem is refused */

struct gw_ca;

/* A leaf and its key: the caller's own references (gw_leaf_free()). */
struct gw_leaf {
	X509 *cert;		/* issued by the CA; up-ref'd, shared with the cache */
	EVP_PKEY *key;		/* its private key; up-ref'd, shared with the cache */
	time_t not_before, not_after;	/* seconds since the epoch (UTC) */
};

/*
 * gw_ca_open() - load netd's CA from directory @dir, or make it if neither
 * file is there.  @now: the time in seconds since the epoch (the new
 * certificate's validity starts GW_LEAF_SKEW_S before it).
 * Made: @dir is created (0700) if missing; key ECDSA P-256; subject
 * O=netd, CN=netd gateway CA (HOST); serial 128 random bits (RFC 5280
 * 4.1.2.2); validity GW_CA_VALID_S; basicConstraints critical CA:TRUE,
 * pathlen:0 (4.2.1.9); keyUsage critical keyCertSign, cRLSign (4.2.1.3);
 * subjectKeyIdentifier, SHA-1 of the public key (4.2.1.2 method 1);
 * self-signed, ECDSA with SHA-256.  The key is written first, then the
 * certificate, each with fs_write_atomic() (whole or not at all).
 * Loaded: refused if @dir or the key is not owned by the running user, if
 * @dir is writable or the key readable by group or others, if a file is
 * not a regular one (a symlink included) or over GW_CA_FILE_MAX bytes,
 * if only one of the two files is there ("half a CA": a crash while
 * making it, or a lost key: remove what is left and netd makes a new
 * CA, which clients must trust anew), if the key does not match the
 * certificate, if the certificate is no CA or is expired.  No key
 * material is ever put into @err; the buffer read from ca.key is wiped.
 * @ret: on success, caller frees with gw_ca_free().  @err, @errsz: why
 * not, with the path, for the caller to log once.
 * Return: 1 made, 0 loaded; -EPERM (ownership, permissions, a symlink:
 * -ELOOP), -ENOENT (half a CA), -EKEYREJECTED (key and certificate do not
 * match), -EBADMSG (not PEM, an encrypted key, no CA), -EKEYEXPIRED,
 * -EFBIG, -ENOMEM, -EIO (OpenSSL failed), -errno of the file system.
 */
int gw_ca_open(const char *dir, time_t now, struct gw_ca **ret, char *err, size_t errsz);

/*
 * gw_ca_leaf() - a leaf certificate for one DNS name, as a TLS client
 * sent it in server_name (RFC 6066 3: a host name, never an address).
 * @name, @len: the name's bytes (not NUL-terminated; any byte may be
 * there), checked by gw_name_check() (netd/gw/name.h) and lower-cased
 * first.  @now: seconds since the epoch.
 * The leaf: a new ECDSA P-256 key; subject empty, so subjectAltName is
 * critical and holds exactly one dNSName, the name, built as a
 * GENERAL_NAME (never from a config string, so no byte of a name can add
 * an entry) (RFC 5280 4.2.1.6, 4.1.2.6); basicConstraints critical
 * CA:FALSE (4.2.1.9); keyUsage critical digitalSignature (4.2.1.3);
 * extKeyUsage serverAuth (4.2.1.12); authorityKeyIdentifier = the CA's
 * subjectKeyIdentifier (4.2.1.1); serial 128 random bits; notBefore
 * @now - GW_LEAF_SKEW_S, notAfter @now + GW_LEAF_LIFETIME_S; ECDSA with
 * SHA-256.  Cached per name: the same leaf is handed out while @now is
 * within its validity with more than GW_LEAF_LIFETIME_S / 2 left, then a
 * new one is minted; at GW_LEAF_CACHE_MAX names the least recently used
 * goes.
 * @ret: caller frees with gw_leaf_free() (the cache keeps its own
 * references; a leaf outlives its eviction and gw_ca_free()).
 * Return: 0; -EINVAL (not a name gw_name_check() takes); -ENOMEM; -EIO.
 */
int gw_ca_leaf(struct gw_ca *ca, const char *name, size_t len, time_t now,
	       struct gw_leaf **ret);

/* gw_leaf_free() - drop the caller's references (OpenSSL wipes an EC key's memory); NULL-safe. */
void gw_leaf_free(struct gw_leaf *leaf);

/*
 * gw_ca_cert_pem() - the CA certificate, PEM ("-----BEGIN CERTIFICATE-----"),
 * what clients are told to trust.  @ret_pem: NUL-terminated, caller frees
 * with free(); @ret_len: its length in bytes without the NUL (may be NULL).
 * Return: 0; -ENOMEM; -EIO.
 */
int gw_ca_cert_pem(const struct gw_ca *ca, char **ret_pem, size_t *ret_len);

/* gw_ca_free() - the CA and every cached leaf (leaves handed out stay valid); NULL-safe. */
void gw_ca_free(struct gw_ca *ca);

#endif
