/*
 * config_int - what netd/model/config.c and netd/model/config_gw.c share:
 * the gateway: and credentials: sections of netd.yaml, parsed by
 * config_gw.c into the struct config config.c builds.  Internal to
 * netd/model/config*.c.
 */
#ifndef NETD_MODEL_CONFIG_INT_H
#define NETD_MODEL_CONFIG_INT_H

#include "common/yamlx.h"
#include "netd/model/config.h"

/*
 * config_gw_init() - gateway: defaults into @c (port 15443, user "nobody",
 * timeouts 10 s and 300 s, no CA file, no credentials).  Return: 0; -ENOMEM.
 */
int config_gw_init(struct config *c);

/*
 * config_gw_dup() - deep copies of @from's gateway strings into @to, which
 * holds a shallow copy of @from; the credentials are not copied: @to gets
 * none (config_parse() keeps @from's unless the file has credentials:).
 * Return: 0; -ENOMEM (@to's gateway strings NULL).
 */
int config_gw_dup(struct config *to, const struct config *from);

/* config_gw_done() - free @c's gateway strings and credentials (wiping values); idempotent. */
void config_gw_done(struct config *c);

/* config_creds_free() - free @n credentials @v (inline values wiped); NULL-safe. */
void config_creds_free(struct config_credential *v, size_t n);

/*
 * config_gw_parse() - gateway: (@gw, may be NULL) and credentials: (@cr,
 * may be NULL) of @file into @c; @c->creds must be empty.  Errors at
 * FILE:LINE:COL in @err, never with a secret in them.
 * Return: 0; -EINVAL; -ENOMEM.
 */
int config_gw_parse(struct config *c, const struct yamlx_node *gw, const struct yamlx_node *cr,
		    const char *file, struct diag *err);

/*
 * config_gw_wipe() - explicit_bzero() every credentials.*.value scalar of
 * document @root (the secrets' copies in the YAML tree), before it is freed.
 * (libyaml's own transient buffers are out of reach.)
 * Return: whether @root has a credentials: key (then it replaces the
 * credentials a config parsed on top of had).
 */
bool config_gw_wipe(struct yamlx_node *root);

#endif
