/*
 * gw/leafcache - the worker's parsed leaves, one per name: netd sends a
 * leaf (PEM) with every verdict; parsing it and keeping a copy per
 * connection costs CPU and memory, so connections to one name share one
 * X509 and EVP_PKEY (up-referenced) for as long as netd sends the same
 * certificate; and the upstream's last TLS session per name, to resume.
 * Bounded (GW_LEAFCACHE_MAX names each, least recently used out).
 */
#ifndef NETD_GW_LEAFCACHE_H
#define NETD_GW_LEAFCACHE_H

#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#define GW_LEAFCACHE_MAX 256	/* names kept */

struct gw_leafcache;

/* gw_leafcache_new() - an empty cache; NULL: out of memory. */
struct gw_leafcache *gw_leafcache_new(void);

/*
 * gw_leafcache_get() - the parsed leaf for @sni whose certificate is
 * @cert_pem (NUL-terminated), with @key_pem its key: from the cache when
 * the same certificate is there, else parsed and kept.  *@cert, *@key:
 * the caller's references (X509_free(), EVP_PKEY_free()).
 * Return: 0; -EBADMSG (not PEM, or the key does not match); -ENOMEM.
 */
int gw_leafcache_get(struct gw_leafcache *lc, const char *sni, const char *cert_pem,
		     const char *key_pem, X509 **cert, EVP_PKEY **key);

/*
 * gw_leafcache_session_put(), gw_leafcache_session_get() - the upstream's
 * last TLS session for @sni (RFC 8446 2.2 resumption), so a new upstream
 * connection resumes instead of a full handshake and shares the session's
 * peer certificate.  put takes @sess's reference; get returns a new one
 * (SSL_SESSION_free()) or NULL.  Kept with the name's leaf slot.
 */
void gw_leafcache_session_put(struct gw_leafcache *lc, const char *sni, SSL_SESSION *sess);
SSL_SESSION *gw_leafcache_session_get(struct gw_leafcache *lc, const char *sni);

/* gw_leafcache_free() - the cache and its references; NULL-safe. */
void gw_leafcache_free(struct gw_leafcache *lc);

#endif
