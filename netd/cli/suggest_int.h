/*
 * suggest_int - what netd/cli/suggest.c (collecting records) and
 * netd/cli/suggest_render.c (deciding and printing rules) share: the tables
 * struct suggest is made of.  Internal to those two files.
 */
#ifndef NETD_SUGGEST_INT_H
#define NETD_SUGGEST_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/addr.h"
#include "netd/model/policy.h"

#define SG_ADDR_NAMES 16	/* names remembered per answer address */
#define SG_TS_MAX     40	/* an audit time stamp, NUL included (ts_ok()) */
#define SG_SKIPPED_MAX 32	/* seen-but-not-suggested lines kept, per kind */
#define SG_WILD_SHOW 4		/* names listed in a wildcard's comment */

/* A string-keyed index: key -> position in an array. */
struct sg_tab {
	char **key;		/* owned; NULL = free */
	size_t *pos;
	size_t mask, n;		/* slots - 1 (0 = not allocated); keys stored */
};

/* sg_tab_find() - the position stored for @key, or NULL.  Pure. */
size_t *sg_tab_find(const struct sg_tab *t, const char *key);
/* sg_tab_put() - add @key (copied; not present yet) -> @pos.  Return: 0; -ENOMEM. */
int sg_tab_put(struct sg_tab *t, const char *key, size_t pos);
/* sg_tab_done() - free the keys and slots (not @t). */
void sg_tab_done(struct sg_tab *t);
/* sg_clean() - @s as printable ASCII without '"' or '\\' (others '?') in @buf; @buf. */
char *sg_clean(const char *s, char *buf, size_t sz);

struct sg_name {
	char *name;		/* owned; passed policy_pattern_check() */
	uint64_t queries;	/* dns records the policy (or audit mode) answered */
	uint64_t denied;	/* dns records the policy denied */
};

struct sg_dest {
	ssize_t name;		/* index into names, -1: no name (CIDR rule or none) */
	struct addr dst;
	uint8_t proto;		/* IPPROTO_TCP / IPPROTO_UDP */
	uint16_t port;
	uint64_t conns, bytes_out, bytes_in;
	bool counted;		/* bytes from conn/conn_update records (conn_open has none) */
	char first[SG_TS_MAX];	/* the earliest start of its connections; "" unknown */
};

/* A flow seen only in conn_update records so far (still live). */
struct sg_flow {
	struct sg_dest d;	/* conns = 1, the latest counters */
	bool ended;		/* its "conn" record came: counted there */
};

struct sg_addr {
	uint32_t names[SG_ADDR_NAMES];	/* indexes into names */
	char first[SG_ADDR_NAMES][SG_TS_MAX];	/* when each first answered it; "" unknown */
	size_t n;
};

struct sg_note {		/* seen, not suggested: one comment line */
	char text[160];
	uint64_t count;
};

enum sg_note_kind { NOTE_DENIED_CONN, NOTE_BAD_NAME, NOTE_OTHER_PROTO, NOTE_N };

struct suggest {
	char sandbox[POLICY_NAME_MAX + 1], policy[POLICY_NAME_MAX + 1];
	bool by_sandbox, by_policy;
	char since[40];

	struct sg_name *names;
	size_t n_names;
	struct sg_tab name_tab;
	struct sg_dest *dests;
	size_t n_dests;
	struct sg_tab dest_tab;
	struct sg_flow *flows;
	size_t n_flows;
	struct sg_tab flow_tab;
	struct sg_addr *addrs;	/* answer address -> names */
	size_t n_addrs;
	struct sg_tab addr_tab;
	struct sg_note notes[NOTE_N][SG_SKIPPED_MAX];
	size_t n_notes[NOTE_N];
	struct sg_tab note_tab;	/* "kind|text" -> index within the kind */

	uint64_t n_dns, n_conn, n_would_deny, n_over;	/* records used; over a limit */
	char first_ts[40], last_ts[40];
};

#endif
