/*
 * gw/leafcache - the worker's parsed leaves, one per name
 * (netd/gw/leafcache.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/pem.h>
#include <openssl/x509.h>

#include "netd/gw/leafcache.h"

struct leaf_entry {
	char *sni;		/* owned; NULL: a free slot */
	char *cert_pem;		/* owned: what netd sent, to see a new leaf */
	X509 *cert;
	EVP_PKEY *key;
	uint64_t used;		/* the cache's clock when last handed out */
};

struct sess_entry {
	char *sni;		/* owned; NULL: a free slot */
	SSL_SESSION *sess;
	uint64_t used;
};

struct gw_leafcache {
	struct leaf_entry e[GW_LEAFCACHE_MAX];
	struct sess_entry s[GW_LEAFCACHE_MAX];
	uint64_t clock;
};

struct gw_leafcache *gw_leafcache_new(void)
{
	return calloc(1, sizeof(struct gw_leafcache));
}

static void entry_clear(struct leaf_entry *e)
{
	free(e->sni);
	free(e->cert_pem);
	X509_free(e->cert);
	EVP_PKEY_free(e->key);	/* OpenSSL wipes the private key */
	memset(e, 0, sizeof(*e));
}

/* Parse @cert_pem and @key_pem; the key must be the certificate's. */
static int parse(const char *cert_pem, const char *key_pem, X509 **cert, EVP_PKEY **key)
{
	BIO *cb = BIO_new_mem_buf(cert_pem, -1), *kb = BIO_new_mem_buf(key_pem, -1);
	int r = -EBADMSG;

	*cert = cb ? PEM_read_bio_X509(cb, NULL, NULL, NULL) : NULL;
	*key = kb ? PEM_read_bio_PrivateKey(kb, NULL, NULL, NULL) : NULL;
	if (!cb || !kb)
		r = -ENOMEM;
	else if (*cert && *key && X509_check_private_key(*cert, *key) == 1)
		r = 0;
	BIO_free(cb);
	BIO_free(kb);
	if (r < 0) {
		X509_free(*cert);
		EVP_PKEY_free(*key);
		*cert = NULL;
		*key = NULL;
	}
	return r;
}

int gw_leafcache_get(struct gw_leafcache *lc, const char *sni, const char *cert_pem,
		     const char *key_pem, X509 **cert, EVP_PKEY **key)
{
	struct leaf_entry *slot = &lc->e[0];
	int r;

	for (size_t i = 0; i < GW_LEAFCACHE_MAX; i++) {
		struct leaf_entry *e = &lc->e[i];

		if (e->sni && !strcmp(e->sni, sni)) {
			if (!strcmp(e->cert_pem, cert_pem)) {
				e->used = ++lc->clock;
				X509_up_ref(e->cert);
				EVP_PKEY_up_ref(e->key);
				*cert = e->cert;
				*key = e->key;
				return 0;
			}
			slot = e;	/* netd minted a new leaf for the name */
			break;
		}
		if (!e->sni || (slot->sni && e->used < slot->used))
			slot = e;	/* a free slot, or the least recently used */
	}
	r = parse(cert_pem, key_pem, cert, key);
	if (r < 0)
		return r;
	entry_clear(slot);
	slot->sni = strdup(sni);
	slot->cert_pem = strdup(cert_pem);
	if (!slot->sni || !slot->cert_pem) {
		entry_clear(slot);
		return 0;	/* served, just not kept */
	}
	X509_up_ref(*cert);
	EVP_PKEY_up_ref(*key);
	slot->cert = *cert;
	slot->key = *key;
	slot->used = ++lc->clock;
	return 0;
}

static struct sess_entry *sess_slot(struct gw_leafcache *lc, const char *sni, bool *found)
{
	struct sess_entry *slot = &lc->s[0];

	*found = false;
	for (size_t i = 0; i < GW_LEAFCACHE_MAX; i++) {
		struct sess_entry *e = &lc->s[i];

		if (e->sni && !strcmp(e->sni, sni)) {
			*found = true;
			return e;
		}
		if (!e->sni || (slot->sni && e->used < slot->used))
			slot = e;
	}
	return slot;
}

void gw_leafcache_session_put(struct gw_leafcache *lc, const char *sni, SSL_SESSION *sess)
{
	bool found;
	struct sess_entry *e = sess_slot(lc, sni, &found);

	if (!found) {
		free(e->sni);
		e->sni = strdup(sni);
	}
	SSL_SESSION_free(e->sess);
	e->sess = e->sni ? sess : NULL;
	if (!e->sni)
		SSL_SESSION_free(sess);
	e->used = ++lc->clock;
}

SSL_SESSION *gw_leafcache_session_get(struct gw_leafcache *lc, const char *sni)
{
	bool found;
	struct sess_entry *e = sess_slot(lc, sni, &found);

	if (!found || !e->sess || !SSL_SESSION_is_resumable(e->sess))
		return NULL;
	e->used = ++lc->clock;
	SSL_SESSION_up_ref(e->sess);
	return e->sess;
}

void gw_leafcache_free(struct gw_leafcache *lc)
{
	if (!lc)
		return;
	for (size_t i = 0; i < GW_LEAFCACHE_MAX; i++) {
		entry_clear(&lc->e[i]);
		free(lc->s[i].sni);
		SSL_SESSION_free(lc->s[i].sess);
	}
	free(lc);
}
