/*
 * gwdecide - what netd answers its gateway worker (netd/daemon/gwglue.c runs
 * the worker): for each steered connection, which sandbox (by its
 * address), which gateway rule (by the TLS name), whether that name's own
 * DNS answer pinned the address, the leaf of netd's CA for the name, and the
 * credentials whose secrets may go there; the secrets read again at a
 * reload and the changed ones handed to the worker; each request's "http"
 * record and the gateway's counters.  docs/gateway.md.
 */
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/pem.h>

#include "common/clock.h"
#include "common/hash.h"
#include "common/log.h"
#include "common/reason.h"
#include "netd/daemon/internal.h"
#include "netd/gw/ca.h"
#include "netd/gw/creds.h"
#include "netd/gw/ipc.h"
#include "netd/model/pinreg.h"
#include "netd/trail/audit.h"

int daemon_gw_ca(struct daemon *d, char *err, size_t errsz)
{
	char dir[PATH_MAX];
	int r;

	if (d->gw_ca)
		return 0;
	if (snprintf(dir, sizeof(dir), "%s/%s", d->cfg.state_dir, GW_CA_DIR) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	r = gw_ca_open(dir, time(NULL), &d->gw_ca, err, errsz);
	if (r < 0) {
		log_err("gateway CA: %s", err);
		return r;
	}
	log_info("gateway CA: %s %s/%s", r == 1 ? "made" : "loaded", dir, GW_CA_CERT_FILE);
	return 0;
}

/* Is @c's secret not what @old had under its name (a new credential counts)? */
static bool cred_changed(const struct gw_creds *old, const struct gw_credential *c)
{
	const struct gw_credential *o = old ? gw_creds_find(old, c->name) : NULL;

	return !o || o->value_len != c->value_len || memcmp(o->value, c->value, c->value_len);
}

/* Tell the worker the new values of the credentials that changed. */
static void gw_rotate(struct daemon *d, const struct gw_creds *old, const struct gw_creds *now)
{
	struct gw_cred list[GW_REQ_MAX_CREDS];
	struct gw_ipc_rotate r = { .creds = list };
	char *msg;
	size_t len;

	for (size_t i = 0; i < now->n && r.n_creds < GW_REQ_MAX_CREDS; i++)
		if (old && gw_creds_find(old, now->v[i].name) && cred_changed(old, &now->v[i]))
			list[r.n_creds++] = (struct gw_cred){
				.name = now->v[i].name, .value = (const uint8_t *)now->v[i].value,
				.value_len = now->v[i].value_len, .secret_off = now->v[i].secret_off,
				.secret_len = now->v[i].secret_len,
			};
	if (r.n_creds && d->gw.ev && gw_ipc_encode_rotate(&r, &msg, &len) == 0)
		daemon_gw_send(d, msg, len);	/* wiped there */
}

int daemon_gw_creds_reload(struct daemon *d, char *err, size_t errsz)
{
	struct gw_creds *c = NULL;
	struct diag e = { 0 };
	char msg[1024];
	int r = gw_creds_load(&d->cfg, &c, &e);

	if (r < 0) {
		diag_format(&e, msg, sizeof(msg));
		log_err("gateway credentials: %s", msg);
		if (err)
			snprintf(err, errsz, "%s", msg);
		return r;
	}
	d->gw_creds_read = c->n;
	d->gw_creds_changed = 0;
	for (size_t i = 0; d->gw_creds && i < c->n; i++)
		d->gw_creds_changed += cred_changed(d->gw_creds, &c->v[i]);
	gw_rotate(d, d->gw_creds, c);
	gw_creds_free(d->gw_creds);
	d->gw_creds = c;
	return 0;
}

/* ---- the decision for one connection -------------------------------------- */

/* The first gateway rule of @pol that matches @sni with TCP port @port; -1 if none. */
static int gw_rule(const struct policy *pol, const char *sni, uint16_t port)
{
	uint16_t idx[POLICY_MAX_RULES];
	size_t n = policy_match(pol, sni, idx, POLICY_MAX_RULES);

	for (size_t i = 0; i < n && i < POLICY_MAX_RULES; i++) {
		const struct policy_rule *r = &pol->rules[idx[i]];

		if (r->gateway && policy_rule_port(r, IPPROTO_TCP, port))
			return idx[i];
	}
	return -1;
}

/* Did @sni's own DNS answer pin @dst:@port for @sb (a gateway pin or a plain one)? */
static bool pinned_for(struct daemon *d, const struct sandbox *sb, const struct addr *dst,
		       uint16_t port, bool gateway, const char *sni)
{
	const char *names[PINREG_NAMES_MAX];
	size_t n = pinreg_names_gw(d->pins, sb->name, dst, IPPROTO_TCP, port, gateway,
				   clock_mono_ms(), names);

	for (size_t i = 0; i < n && i < PINREG_NAMES_MAX; i++)
		if (names[i] && !strcmp(names[i], sni))
			return true;
	return false;
}

/* PEM of the leaf for @sni into @v; the key's buffer is wiped by gw_ipc_verdict_clear(). */
static int leaf_pem(struct daemon *d, const char *sni, struct gw_ipc_verdict *v)
{
	char err[256];
	struct gw_leaf *leaf = NULL;
	BIO *cb = NULL, *kb = NULL;
	BUF_MEM *m;
	int r = daemon_gw_ca(d, err, sizeof(err));

	if (r < 0 || (r = gw_ca_leaf(d->gw_ca, sni, strlen(sni), time(NULL), &leaf)) < 0)
		return r;
	r = -ENOMEM;
	cb = BIO_new(BIO_s_mem());
	kb = BIO_new(BIO_s_secmem());
	if (cb && kb && PEM_write_bio_X509(cb, leaf->cert) == 1 &&
	    PEM_write_bio_PrivateKey(kb, leaf->key, NULL, NULL, 0, NULL, NULL) == 1) {
		BIO_get_mem_ptr(cb, &m);
		v->cert_pem = strndup(m->data, m->length);
		BIO_get_mem_ptr(kb, &m);
		v->key_pem = strndup(m->data, m->length);
		if (v->cert_pem && v->key_pem)
			r = 0;
	}
	BIO_free(cb);
	BIO_free(kb);	/* a secure-heap BIO: wiped */
	gw_leaf_free(leaf);
	return r;
}

/*
 * One credential for the worker: its names and hosts, the value only where
 * it may go (@mine: the rule names it).  @c's strings are owned by the
 * verdict (gw_ipc_verdict_clear()), also when this fails half-way.
 */
static int cred_view(const struct gw_credential *src, bool mine, const char *sni,
		     struct gw_cred *c)
{
	char **hosts = src->n_hosts ? calloc(src->n_hosts, sizeof(char *)) : NULL;

	c->name = strdup(src->name);
	c->header = strdup(src->header);
	c->placeholder = strdup(src->placeholder);
	c->hosts = (const char *const *)hosts;	/* gw_ipc_verdict_clear() frees them */
	if (!c->name || !c->header || !c->placeholder || (src->n_hosts && !hosts))
		return -ENOMEM;
	for (; c->n_hosts < src->n_hosts; c->n_hosts++)
		if (!(hosts[c->n_hosts] = strdup(src->hosts[c->n_hosts])))
			return -ENOMEM;
	if (!mine || !gw_creds_host_ok(src, sni))
		return 0;
	if (!(c->value = malloc(src->value_len + 1)))
		return -ENOMEM;
	memcpy((uint8_t *)c->value, src->value, src->value_len + 1);
	c->value_len = src->value_len;
	c->secret_off = src->secret_off;
	c->secret_len = src->secret_len;
	return 0;
}

/* The rule's checks and every credential (values only where they may go) into @v. */
static int gw_rule_view(struct daemon *d, const struct policy_rule *r, const char *sni,
			struct gw_ipc_verdict *v)
{
	const struct policy_gateway *g = r->gateway;
	size_t n = d->gw_creds ? d->gw_creds->n : 0;

	v->methods = g->n_methods ? calloc(g->n_methods, sizeof(char *)) : NULL;
	v->paths = g->n_paths ? calloc(g->n_paths, sizeof(char *)) : NULL;
	v->creds = n ? calloc(n, sizeof(*v->creds)) : NULL;
	if ((g->n_methods && !v->methods) || (g->n_paths && !v->paths) || (n && !v->creds))
		return -ENOMEM;
	for (; v->n_methods < g->n_methods; v->n_methods++)
		if (!(v->methods[v->n_methods] = strdup(g->methods[v->n_methods])))
			return -ENOMEM;
	for (; v->n_paths < g->n_paths; v->n_paths++)
		if (!(v->paths[v->n_paths] = strdup(g->paths[v->n_paths])))
			return -ENOMEM;
	v->rate_milli = g->rate_milli;
	v->burst = g->burst;
	for (size_t i = 0; i < n; i++) {
		const struct gw_credential *src = &d->gw_creds->v[i];
		bool mine = false;

		for (size_t k = 0; k < g->n_credentials; k++)
			mine |= !strcmp(g->credentials[k], src->name);
		if (cred_view(src, mine, sni, &v->creds[v->n_creds++]) < 0)
			return -ENOMEM;
	}
	return 0;
}

static void refuse(struct gw_ipc_verdict *v, enum reason_gw reason)
{
	v->verdict = GW_IPC_REFUSE;
	free(v->reason);
	v->reason = strdup(reason_gw_name(reason));
}

/* netd's answer to "conn": who, which rule, pinned by this name's own answer? */
void daemon_gw_decide(struct daemon *d, const struct gw_ipc_ask *a, struct gw_ipc_verdict *v)
{
	const struct sandbox *sb = sandbox_by_addr(d->sandboxes, &a->src);
	const struct policy *pol = sb ? daemon_policy_find(d, sb->policy) : NULL;
	int rule;

	v->id = a->id;
	v->rule = -1;
	if (!sb || !pol) {
		refuse(v, REASON_GW_NOT_A_SANDBOX);
		return;
	}
	v->sandbox = strdup(sb->name);
	v->policy = strdup(pol->name);
	if (!a->sni[0]) {
		refuse(v, REASON_GW_NO_SNI);
		return;
	}
	rule = gw_rule(pol, a->sni, a->dport);
	if (rule < 0) {
		/* Not a gateway name: untouched, if this name's answer pinned the address. */
		if (pinned_for(d, sb, &a->dst, a->dport, false, a->sni))
			v->verdict = GW_IPC_PASS;
		else
			refuse(v, REASON_GW_SNI_NOT_PINNED);
		return;
	}
	v->rule = rule;
	if (!pinned_for(d, sb, &a->dst, a->dport, true, a->sni)) {
		refuse(v, REASON_GW_SNI_NOT_PINNED);
		return;
	}
	if (leaf_pem(d, a->sni, v) < 0 || gw_rule_view(d, &pol->rules[rule], a->sni, v) < 0) {
		refuse(v, REASON_GW_GATEWAY_ERROR);
		return;
	}
	v->verdict = GW_IPC_GATEWAY;
}

/* ---- records and counters ---------------------------------------------------- */

/* The index slot of (sandbox, TLS name, status): its series, or the free slot it would take. */
static size_t series_slot(const struct gw_stats *s, const struct gw_ipc_http *h)
{
	uint32_t k = fnv32_str(fnv32_str(FNV32_INIT, h->sandbox), h->sni);
	size_t at = fnv32_add(k, &h->status, sizeof(h->status)) % GW_SERIES_SLOTS;

	for (;; at = (at + 1) % GW_SERIES_SLOTS) {	/* half full at most: ends */
		uint16_t v = s->series_index[at];

		if (!v || (s->series[v - 1].status == h->status &&
			   !strcmp(s->series[v - 1].sandbox, h->sandbox) &&
			   !strcmp(s->series[v - 1].host, h->sni)))
			return at;
	}
}

static void gw_count(struct daemon *d, const struct gw_ipc_http *h)
{
	struct gw_stats *s = &d->gw_stats;
	double secs = (double)h->duration_us / 1e6;
	size_t i, at;

	s->requests++;
	for (i = 0; i < GW_HIST_N && secs > gw_hist_le[i]; i++)
		;
	s->hist[i]++;
	s->hist_sum_us += h->duration_us;
	/*
	 * The host label is the connection's name (its TLS server_name, which
	 * a policy named), never the Host header: a sandbox writes that, and
	 * could fill the table with names of its own.
	 */
	at = series_slot(s, h);
	i = s->series_index[at] ? s->series_index[at] - 1u : s->n_series;
	if (i == s->n_series) {
		if (s->n_series == GW_SERIES_MAX) {
			s->dropped_series++;
			return;
		}
		memcpy(s->series[i].sandbox, h->sandbox, sizeof(h->sandbox));
		memcpy(s->series[i].host, h->sni, sizeof(h->sni));
		s->series[i].status = h->status;
		s->n_series++;
		s->series_index[at] = (uint16_t)(i + 1);
	}
	s->series[i].n++;
}

void daemon_gw_record(struct daemon *d, const struct gw_ipc_http *h)
{
	json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:i, s:I, s:I, s:f, s:f, s:s, s:s}",
			      "sandbox", h->sandbox, "policy", h->policy, "method", h->method,
			      "host", h->host, "path", h->path, "status", (int)h->status,
			      /* as in conn records: out = from the sandbox, in = to it */
			      "bytes_out", (json_int_t)h->bytes_in,
			      "bytes_in", (json_int_t)h->bytes_out,
			      "duration_ms", (double)h->duration_us / 1000.0,
			      "ttfb_ms", (double)h->ttfb_us / 1000.0,
			      "upstream", h->upstream, "proto", h->proto);

	if (!o)
		return;
	if (h->rule >= 0)
		json_object_set_new(o, "rule", json_integer(h->rule));
	if (h->cred[0])
		json_object_set_new(o, "credential", json_string(h->cred));
	if (h->reason[0])
		json_object_set_new(o, "reason", json_string(h->reason));
	if (d->audit)
		audit_write(d->audit, "http", o);	/* takes @o */
	else
		json_decref(o);
	gw_count(d, h);
}

