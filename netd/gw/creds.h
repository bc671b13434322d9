/*
 * creds - the secrets of netd.yaml's credentials: (docs/config.md), read
 * and checked: a file (0600/0400, owned by root or netd's user), a systemd
 * credential ($CREDENTIALS_DIRECTORY/NAME, LoadCredential=), or the inline
 * value.  Each credential's format is applied once ("Bearer {secret}" ->
 * "Bearer sk-..."): what the gateway puts into the header.  Every buffer
 * that held a secret is wiped (OPENSSL_cleanse) before it is freed; no
 * message names a secret's bytes.  Reads files; never logs.  Read at start
 * and at every reload (a rotated secret is read again).
 */
#ifndef NETD_GW_CREDS_H
#define NETD_GW_CREDS_H

#include <stdbool.h>
#include <stddef.h>

#include "common/diag.h"
#include "netd/model/config.h"

#define GW_CREDS_FILE_MAX CONFIG_CRED_SECRET_MAX	/* bytes of a secret file, newline included */

/* One credential, loaded. */
struct gw_credential {
	char *name;		/* owned; netd.yaml's name (records carry it, never the value) */
	char *header;		/* owned; the header that carries it, e.g. "Authorization" */
	char *placeholder;	/* owned; what the sandbox holds */
	char **hosts;		/* owned; names ("api.openai.com") or "*.suffix" it may go to */
	size_t n_hosts;
	/* owned; the header's whole value, the format applied to the secret
	 * (value_len bytes and a NUL); wiped before it is freed */
	char *value;
	size_t value_len;
	size_t secret_off, secret_len;	/* the secret's own bytes inside @value */
};

struct gw_creds {
	struct gw_credential *v;	/* owned, in netd.yaml's order */
	size_t n;
};

/*
 * gw_creds_load() - read the secret of every credential of @c (borrowed)
 * and apply its format.
 *   file:    opened with O_NOFOLLOW; a regular file of at most
 *            GW_CREDS_FILE_MAX bytes, no group or other permission bits
 *            (0600, 0400), owned by root or this process's effective uid.
 *   systemd: $CREDENTIALS_DIRECTORY/NAME, a regular file of at most
 *            GW_CREDS_FILE_MAX bytes (systemd sets its owner and mode);
 *            an error if the variable is unset.
 *   value:   the inline value.
 * One trailing "\n" or "\r\n" is stripped; what is left must be non-empty,
 * with no CR, LF, NUL or other control byte, no space at either end.
 * @out: on success a new set; caller frees with gw_creds_free().
 * @err: the first failure at FILE:LINE:COL of the credential's
 *       file:/systemd:/value: in netd.yaml, naming the credential and the
 *       secret's path, never its bytes.
 * Return: 0; -EINVAL (a bad secret: empty, control bytes, mode, owner,
 * not a regular file, too large, or $CREDENTIALS_DIRECTORY unset); the
 * -errno of open()/read(); -ENOMEM.
 */
int gw_creds_load(const struct config *c, struct gw_creds **out, struct diag *err);

/* gw_creds_find() - credential @name of @cs, or NULL; borrowed from @cs. */
const struct gw_credential *gw_creds_find(const struct gw_creds *cs, const char *name);

/*
 * gw_creds_host_ok() - may @cred go to host @name?  An exact host equals
 * it; "*.example.com" matches any name at any depth below example.com, not
 * example.com itself (as a policy's wildcards).  @name: a host name, ASCII
 * case-insensitive, no port, one trailing dot ignored.  NULL: false.
 */
bool gw_creds_host_ok(const struct gw_credential *cred, const char *name);

/* gw_creds_free() - wipe every value of @cs and free it all; NULL-safe. */
void gw_creds_free(struct gw_creds *cs);

#endif
