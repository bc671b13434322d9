/*
 * config_gw - netd.yaml's gateway: and credentials: sections (the API
 * gateway, docs/gateway.md; docs/config.md): schema, defaults, located
 * errors, the cross-checks between credentials (placeholders unique, none
 * inside another).  Pure but for config_gateway_check(), which looks at
 * the host (the CA file, the user).  Not here: reading the secrets of
 * file:/systemd: (netd/gw/creds.c).  An inline value: is kept in one
 * buffer, wiped when freed; no message ever quotes a secret.
 */

#include "netd/model/config.h"

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/yamlx.h"
#include "netd/model/policy.h"	/* policy_pattern_norm(), policy_cred_name_valid() */

#define FAIL(n, ...) diag_set(err, file, (n)->line, (n)->col, __VA_ARGS__)

int config_gw_init(struct config *c)
{
	c->gw_port = CONFIG_GW_PORT_DEFAULT;
	c->gw_connect_timeout_s = CONFIG_GW_CONNECT_TIMEOUT_DEFAULT;
	c->gw_idle_timeout_s = CONFIG_GW_IDLE_TIMEOUT_DEFAULT;
	c->gw_user = strdup(CONFIG_GW_USER_DEFAULT);
	return c->gw_user ? 0 : -ENOMEM;
}

static char *dup_or_null(const char *s, bool *oom)
{
	char *d = s ? strdup(s) : NULL;

	if (s && !d)
		*oom = true;
	return d;
}

int config_gw_dup(struct config *to, const struct config *from)
{
	bool oom = false;

	to->gw_user = dup_or_null(from->gw_user, &oom);
	to->gw_upstream_ca_file = dup_or_null(from->gw_upstream_ca_file, &oom);
	to->src_file = dup_or_null(from->src_file, &oom);
	to->creds = NULL;
	to->n_creds = 0;
	if (oom) {
		config_gw_done(to);
		return -ENOMEM;
	}
	return 0;
}

void config_creds_free(struct config_credential *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++) {
		struct config_credential *cr = &v[i];

		free(cr->name);
		free(cr->header);
		free(cr->format);
		free(cr->placeholder);
		for (size_t h = 0; h < cr->n_hosts; h++)
			free(cr->hosts[h]);
		free(cr->hosts);
		free(cr->src_arg);
		if (cr->value)
			explicit_bzero(cr->value, cr->value_len);
		free(cr->value);
	}
	free(v);
}

void config_gw_done(struct config *c)
{
	free(c->gw_user);
	free(c->gw_upstream_ca_file);
	free(c->src_file);
	config_creds_free(c->creds, c->n_creds);
	c->gw_user = c->gw_upstream_ca_file = c->src_file = NULL;
	c->creds = NULL;
	c->n_creds = 0;
}

const struct config_credential *config_find_credential(const struct config *c,
						       const char *name)
{
	for (size_t i = 0; c && name && i < c->n_creds; i++)
		if (strcmp(c->creds[i].name, name) == 0)
			return &c->creds[i];
	return NULL;
}

/* A plain decimal in [@lo, @hi]. */
static int gw_uint(const struct yamlx_node *n, const char *file, struct diag *err,
		   const char *where, unsigned long lo, unsigned long hi, unsigned long *ret)
{
	char q[300];

	if (!yamlx_is_str(n))
		return FAIL(n, "%s: expected a number, got %s", where, yamlx_kind(n));
	if (yamlx_decimal(n, lo, hi, ret) == 0)
		return 0;
	return FAIL(n, "%s: bad value '%s' (expected %lu-%lu)", where,
		    yamlx_quote(n->str, n->len, q, sizeof(q)), lo, hi);
}

/* A user name as useradd(8) takes it: [a-z_][a-z0-9_-]*[$]?, at most 32 bytes. */
static bool user_name_ok(const char *s, size_t len)
{
	if (len == 0 || len > CONFIG_GW_USER_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		char ch = s[i];

		if ((ch >= 'a' && ch <= 'z') || ch == '_' ||
		    (i > 0 && ((ch >= '0' && ch <= '9') || ch == '-')) ||
		    (i > 0 && i + 1 == len && ch == '$'))
			continue;
		return false;
	}
	return true;
}

/* gateway: { port, user, upstream_ca_file, connect_timeout, idle_timeout } */
static int parse_gateway(struct config *c, const struct yamlx_node *n, const char *file,
			 struct diag *err)
{
	static const char *const names[] = { "port", "user", "upstream_ca_file",
					     "connect_timeout", "idle_timeout" };
	const struct yamlx_node *v[5];
	unsigned long x;
	char q[300], *s;
	int r;

	if (yamlx_is_null(n))
		return 0;
	if (n->type != YAMLX_MAP)
		return FAIL(n, "gateway: expected a mapping, got %s (e.g. gateway: { port: 15443 })",
			    yamlx_kind(n));
	r = yamlx_fields(n, file, err, "gateway", names, 5, NULL, v);
	if (r < 0)
		return r;
	if (v[0]) {
		if ((r = gw_uint(v[0], file, err, "gateway.port", 0, 65535, &x)) < 0)
			return r;
		c->gw_port = (uint16_t)x;
	}
	if (v[1]) {
		if (!yamlx_is_str(v[1]) || !user_name_ok(v[1]->str, v[1]->len))
			return FAIL(v[1], "gateway.user: bad user name '%s' (a system user such as "
				    "nobody: [a-z_][a-z0-9_-]*, at most %u bytes)",
				    yamlx_is_str(v[1]) ? yamlx_quote(v[1]->str, v[1]->len, q, sizeof(q))
						       : yamlx_kind(v[1]), CONFIG_GW_USER_MAX);
		if (!(s = strdup(v[1]->str)))
			return -ENOMEM;
		free(c->gw_user);
		c->gw_user = s;
		c->gw_user_line = v[1]->line;
		c->gw_user_col = v[1]->col;
	}
	if (v[2] && !yamlx_is_null(v[2])) {
		if (!yamlx_is_str(v[2]) || v[2]->str[0] != '/' || v[2]->len >= PATH_MAX)
			return FAIL(v[2], "gateway.upstream_ca_file: expected an absolute path to a "
				    "PEM file of CA certificates, got %s",
				    yamlx_is_str(v[2]) ? "a relative path" : yamlx_kind(v[2]));
		if (!(s = strdup(v[2]->str)))
			return -ENOMEM;
		free(c->gw_upstream_ca_file);
		c->gw_upstream_ca_file = s;
		c->gw_ca_line = v[2]->line;
		c->gw_ca_col = v[2]->col;
	}
	if (v[3]) {
		if ((r = gw_uint(v[3], file, err, "gateway.connect_timeout", 1,
				 CONFIG_GW_CONNECT_TIMEOUT_MAX, &x)) < 0)
			return r;
		c->gw_connect_timeout_s = (uint32_t)x;
	}
	if (v[4]) {
		if ((r = gw_uint(v[4], file, err, "gateway.idle_timeout", 1,
				 CONFIG_GW_IDLE_TIMEOUT_MAX, &x)) < 0)
			return r;
		c->gw_idle_timeout_s = (uint32_t)x;
	}
	return 0;
}

/* RFC 9110 5.6.2: tchar. */
static bool tchar(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

static bool all_tchar(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!tchar(s[i]))
			return false;
	return len > 0;
}

/*
 * Headers the gateway never sets from a secret: the ones that frame the
 * message or the connection (RFC 9110 7.2, 7.6.1, 6.4.1; RFC 9112 6.1).
 */
static bool header_reserved(const char *h)
{
	static const char *const no[] = { "host", "content-length", "transfer-encoding",
					  "connection", "upgrade", "te", "trailer", "keep-alive",
					  "proxy-connection", "expect" };

	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (strcasecmp(h, no[i]) == 0)
			return true;
	return false;
}

/* Strings of a credential that must be given as a string: copy, or say what is wrong. */
static int cred_str(const struct yamlx_node *n, const char *file, struct diag *err,
		    const char *w, const char *key, char **ret)
{
	if (!yamlx_is_str(n))
		return FAIL(n, "%s.%s: expected a string, got %s", w, key, yamlx_kind(n));
	*ret = strdup(n->str);
	return *ret ? 0 : -ENOMEM;
}

/* format: one "{secret}", the rest field-value bytes (RFC 9110 5.5), no outer space. */
static int cred_format(const struct yamlx_node *n, const char *file, struct diag *err,
		       const char *w, struct config_credential *cr)
{
	const char *at, *next;
	char q[300];

	if (!yamlx_is_str(n))
		return FAIL(n, "%s.format: expected a string such as \"Bearer {secret}\", got %s",
			    w, yamlx_kind(n));
	yamlx_quote(n->str, n->len, q, sizeof(q));
	at = strstr(n->str, "{secret}");
	if (!at)
		return FAIL(n, "%s.format: '%s' has no {secret} (e.g. \"Bearer {secret}\")", w, q);
	next = strstr(at + 1, "{secret}");
	if (next)
		return FAIL(n, "%s.format: '%s' has {secret} more than once", w, q);
	if (n->len > CONFIG_CRED_FORMAT_MAX)
		return FAIL(n, "%s.format: %zu bytes; the limit is %u", w, n->len,
			    CONFIG_CRED_FORMAT_MAX);
	for (size_t i = 0; i < n->len; i++) {
		unsigned char ch = (unsigned char)n->str[i];

		if (ch < 0x20 || ch == 0x7f)
			return FAIL(n, "%s.format: a control byte at byte %zu: a header value "
				    "holds none (RFC 9110 5.5)", w, i);
	}
	if (n->str[0] == ' ' || n->str[n->len - 1] == ' ')
		return FAIL(n, "%s.format: '%s' starts or ends with a space, which the server "
			    "would trim (RFC 9110 5.5)", w, q);
	return cred_str(n, file, err, w, "format", &cr->format);
}

/* hosts: [name or "*.suffix", ...] as a policy's domains. */
static int cred_hosts(const struct yamlx_node *n, const char *file, struct diag *err,
		      const char *w, struct config_credential *cr)
{
	char q[300], why[400], buf[POLICY_PATTERN_MAX + 2];

	if (n->type != YAMLX_SEQ)
		return FAIL(n, "%s.hosts: expected a list, got %s (e.g. hosts: [api.openai.com])",
			    w, yamlx_kind(n));
	if (n->n_kids == 0)
		return FAIL(n, "%s.hosts: empty list: a credential goes to at least one name "
			    "(e.g. hosts: [api.openai.com])", w);
	if (n->n_kids > CONFIG_CRED_HOSTS_MAX)
		return FAIL(n->kids[CONFIG_CRED_HOSTS_MAX], "%s.hosts: too many entries (the limit "
			    "is %u)", w, CONFIG_CRED_HOSTS_MAX);
	cr->hosts = calloc(n->n_kids, sizeof(*cr->hosts));
	if (!cr->hosts)
		return -ENOMEM;
	for (size_t i = 0; i < n->n_kids; i++) {
		const struct yamlx_node *h = n->kids[i];

		if (!yamlx_is_str(h))
			return FAIL(h, "%s.hosts[%zu]: expected a host name, got %s", w, i,
				    yamlx_kind(h));
		if (policy_pattern_norm(h->str, h->len, buf, why, sizeof(why), false) < 0)
			return FAIL(h, "%s.hosts[%zu]: bad host '%s': %s", w, i,
				    yamlx_quote(h->str, h->len, q, sizeof(q)), why);
		for (size_t k = 0; k < cr->n_hosts; k++)
			if (strcmp(cr->hosts[k], buf) == 0)
				return FAIL(h, "%s.hosts[%zu]: '%s' is listed twice (first at line %u, "
					    "column %u)", w, i, buf, n->kids[k]->line, n->kids[k]->col);
		if (!(cr->hosts[i] = strdup(buf)))
			return -ENOMEM;
		cr->n_hosts++;
	}
	return 0;
}

/*
 * The bytes of a secret that go into a header: no CR, LF, NUL or other
 * control byte (RFC 9110 5.5; a CR or LF would be request smuggling), not
 * empty, no space at either end.  @why gets an offset, never the bytes.
 */
static bool secret_ok(const char *s, size_t len, char *why, size_t whysz)
{
	if (len == 0) {
		snprintf(why, whysz, "empty");
		return false;
	}
	if (len > CONFIG_CRED_SECRET_MAX) {
		snprintf(why, whysz, "%zu bytes; the limit is %u", len, CONFIG_CRED_SECRET_MAX);
		return false;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch < 0x20 || ch == 0x7f) {
			snprintf(why, whysz, "a CR, LF, NUL or other control byte at byte %zu (it "
				 "goes into a header: RFC 9110 5.5)", i);
			return false;
		}
	}
	if (s[0] == ' ' || s[len - 1] == ' ') {
		snprintf(why, whysz, "a space at its start or end (a header value's outer "
			 "spaces are trimmed)");
		return false;
	}
	return true;
}

/* file:, systemd: or value: (exactly one). */
static int cred_source(const struct yamlx_node *const *k, const struct yamlx_node *const *v,
		       const struct yamlx_node *at, const char *file, struct diag *err,
		       const char *w, struct config_credential *cr)
{
	const struct yamlx_node *n = NULL, *key = NULL;
	char why[200];
	int given = 0;

	for (int i = 0; i < 3; i++)
		if (v[i]) {
			given++;
			if (!key || k[i]->line > key->line ||
			    (k[i]->line == key->line && k[i]->col > key->col)) {
				key = k[i];
				n = v[i];
				cr->src = (enum config_cred_src)i;
			}
		}
	if (given == 0)
		return FAIL(at, "%s: where is the secret? give one of file: (a path), systemd: "
			    "(a LoadCredential= name) or value:", w);
	if (given > 1)
		return FAIL(key, "%s: one of file:, systemd: or value:, not %d", w, given);
	cr->src_line = n->line;
	cr->src_col = n->col;
	if (!yamlx_is_str(n))
		return FAIL(n, "%s.%s: expected a string, got %s", w,
			    cr->src == CONFIG_CRED_FILE ? "file" : cr->src == CONFIG_CRED_SYSTEMD ?
			    "systemd" : "value", yamlx_kind(n));
	switch (cr->src) {
	case CONFIG_CRED_FILE:
		if (n->str[0] != '/' || n->len >= PATH_MAX)
			return FAIL(n, "%s.file: expected an absolute path (e.g. "
				    "/etc/netd/secrets/%s)", w, cr->name);
		break;
	case CONFIG_CRED_SYSTEMD:
		/* A file name in $CREDENTIALS_DIRECTORY (systemd.exec(5) LoadCredential=). */
		if (n->len > NAME_MAX || strchr(n->str, '/') || strcmp(n->str, ".") == 0 ||
		    strcmp(n->str, "..") == 0 || !all_tchar(n->str, n->len))
			return FAIL(n, "%s.systemd: expected a credential name as in "
				    "LoadCredential=NAME:PATH (no '/', not . or ..)", w);
		break;
	case CONFIG_CRED_VALUE:
		if (!secret_ok(n->str, n->len, why, sizeof(why)))
			return FAIL(n, "%s.value: %s", w, why);
		cr->value = malloc(n->len + 1);
		if (!cr->value)
			return -ENOMEM;
		memcpy(cr->value, n->str, n->len + 1);
		cr->value_len = n->len;
		return 0;
	}
	cr->src_arg = strdup(n->str);
	return cr->src_arg ? 0 : -ENOMEM;
}

/* One credential: @kn its name's node, @n its mapping. */
static int parse_cred(const struct yamlx_node *kn, const struct yamlx_node *n, const char *file,
		      struct diag *err, struct config_credential *cr)
{
	static const char *const names[] = { "file", "systemd", "value", "header", "format",
					     "placeholder", "hosts" };
	const struct yamlx_node *k[7], *v[7];
	char w[96], q[300];
	int r;

	cr->line = kn->line;
	cr->col = kn->col;
	if (!yamlx_is_str(kn) || !policy_cred_name_valid(kn->str, kn->len))
		return FAIL(kn, "credentials: bad name '%s' (1-%u bytes of a-z 0-9 _ . -, starting "
			    "with a letter or digit)", yamlx_is_str(kn) ?
			    yamlx_quote(kn->str, kn->len, q, sizeof(q)) : yamlx_kind(kn),
			    POLICY_CRED_NAME_MAX);
	if (!(cr->name = strdup(kn->str)))
		return -ENOMEM;
	snprintf(w, sizeof(w), "credentials.%s", cr->name);
	if (n->type != YAMLX_MAP)
		return FAIL(n, "%s: expected a mapping with header, placeholder, hosts and one of "
			    "file/systemd/value, got %s", w, yamlx_kind(n));
	r = yamlx_fields(n, file, err, w, names, 7, k, v);
	if (r < 0)
		return r;
	if (!v[3])
		return FAIL(kn, "%s: missing required key 'header' (e.g. header: Authorization)", w);
	if (!v[5])
		return FAIL(kn, "%s: missing required key 'placeholder' (what the sandbox holds "
			    "instead of the secret, >= %u bytes)", w, CONFIG_CRED_PLACEHOLDER_MIN);
	if (!v[6])
		return FAIL(kn, "%s: missing required key 'hosts' (the names it may go to)", w);
	if (!yamlx_is_str(v[3]) || !all_tchar(v[3]->str, v[3]->len) ||
	    v[3]->len > CONFIG_CRED_HEADER_MAX)
		return FAIL(v[3], "%s.header: expected a header name (an RFC 9110 token of at most "
			    "%u bytes, e.g. Authorization), got '%s'", w, CONFIG_CRED_HEADER_MAX,
			    yamlx_is_str(v[3]) ? yamlx_quote(v[3]->str, v[3]->len, q, sizeof(q))
					       : yamlx_kind(v[3]));
	if (header_reserved(v[3]->str))
		return FAIL(v[3], "%s.header: '%s' frames the message or the connection; the "
			    "gateway does not put a secret there", w,
			    yamlx_quote(v[3]->str, v[3]->len, q, sizeof(q)));
	if ((r = cred_str(v[3], file, err, w, "header", &cr->header)) < 0)
		return r;
	if (v[4])
		r = cred_format(v[4], file, err, w, cr);
	else
		r = (cr->format = strdup("{secret}")) ? 0 : -ENOMEM;
	if (r < 0)
		return r;
	if (!yamlx_is_str(v[5]) || !all_tchar(v[5]->str, v[5]->len) ||
	    v[5]->len < CONFIG_CRED_PLACEHOLDER_MIN || v[5]->len > CONFIG_CRED_PLACEHOLDER_MAX)
		return FAIL(v[5], "%s.placeholder: expected %u-%u bytes of letters, digits and "
			    "!#$%%&'*+-.^_`|~ (e.g. netd-placeholder-%s-0001), got %s%s%s", w,
			    CONFIG_CRED_PLACEHOLDER_MIN, CONFIG_CRED_PLACEHOLDER_MAX, cr->name,
			    yamlx_is_str(v[5]) ? "'" : "", yamlx_is_str(v[5]) ?
			    yamlx_quote(v[5]->str, v[5]->len, q, sizeof(q)) : yamlx_kind(v[5]),
			    yamlx_is_str(v[5]) ? "'" : "");
	if ((r = cred_str(v[5], file, err, w, "placeholder", &cr->placeholder)) < 0)
		return r;
	if ((r = cred_hosts(v[6], file, err, w, cr)) < 0)
		return r;
	return cred_source(k, v, kn, file, err, w, cr);
}

/*
 * The gateway finds a credential by its placeholder inside a header value:
 * two equal placeholders, or one inside another, would make one request
 * carry two credentials' placeholders at once.
 */
static int check_placeholders(const struct config *c, const struct yamlx_node *cr,
			      const char *file, struct diag *err)
{
	for (size_t i = 0; i < c->n_creds; i++)
		for (size_t k = 0; k < i; k++) {
			const struct config_credential *a = &c->creds[k], *b = &c->creds[i];
			const struct yamlx_node *at = cr->kids[2 * i + 1];
			const char *how = strcmp(a->placeholder, b->placeholder) == 0 ?
				"is the same as" : strstr(a->placeholder, b->placeholder) ?
				"is inside" : strstr(b->placeholder, a->placeholder) ?
				"holds" : NULL;

			if (!how)
				continue;
			for (size_t j = 0; at->type == YAMLX_MAP && j + 1 < at->n_kids; j += 2)
				if (strcmp(at->kids[j]->str, "placeholder") == 0)
					at = at->kids[j + 1];
			return FAIL(at, "credentials.%s.placeholder: '%s' %s credentials.%s's "
				    "placeholder (line %u): each must be found alone in a request; "
				    "make them distinct", b->name, b->placeholder, how, a->name,
				    a->line);
		}
	return 0;
}

static int parse_credentials(struct config *c, const struct yamlx_node *n, const char *file,
			     struct diag *err)
{
	int r;

	if (yamlx_is_null(n))
		return 0;
	if (n->type != YAMLX_MAP)
		return FAIL(n, "credentials: expected a mapping of names (e.g. credentials: { "
			    "openai: { header: Authorization, ... } }), got %s", yamlx_kind(n));
	if (n->n_kids / 2 > CONFIG_MAX_CREDENTIALS)
		return FAIL(n->kids[2 * CONFIG_MAX_CREDENTIALS], "credentials: too many (the limit "
			    "is %u)", CONFIG_MAX_CREDENTIALS);
	if (n->n_kids == 0)
		return 0;
	c->creds = calloc(n->n_kids / 2, sizeof(*c->creds));
	if (!c->creds)
		return -ENOMEM;
	for (size_t i = 0; i + 1 < n->n_kids; i += 2) {
		const struct yamlx_node *kn = n->kids[i];

		for (size_t j = 0; j < i; j += 2)
			if (yamlx_is_str(kn) && yamlx_is_str(n->kids[j]) &&
			    strcmp(kn->str, n->kids[j]->str) == 0)
				return FAIL(kn, "credentials: duplicate name '%s' (first at line %u, "
					    "column %u)", c->creds[j / 2].name, n->kids[j]->line,
					    n->kids[j]->col);
		c->n_creds++;	/* counted first: config_creds_free() frees a half-built one */
		r = parse_cred(kn, n->kids[i + 1], file, err, &c->creds[i / 2]);
		if (r < 0)
			return r;
	}
	return check_placeholders(c, n, file, err);
}

int config_gw_parse(struct config *c, const struct yamlx_node *gw, const struct yamlx_node *cr,
		    const char *file, struct diag *err)
{
	int r;

	if (gw && (r = parse_gateway(c, gw, file, err)) < 0)
		return r;
	if (cr && (r = parse_credentials(c, cr, file, err)) < 0)
		return r;
	return 0;
}

bool config_gw_wipe(struct yamlx_node *root)
{
	struct yamlx_node *cr = NULL;

	for (size_t i = 0; root && root->type == YAMLX_MAP && i + 1 < root->n_kids; i += 2)
		if (yamlx_is_str(root->kids[i]) && strcmp(root->kids[i]->str, "credentials") == 0)
			cr = root->kids[i + 1];
	for (size_t i = 0; cr && cr->type == YAMLX_MAP && i + 1 < cr->n_kids; i += 2) {
		struct yamlx_node *m = cr->kids[i + 1];

		for (size_t j = 0; m->type == YAMLX_MAP && j + 1 < m->n_kids; j += 2)
			if (m->kids[j]->type == YAMLX_SCALAR && m->kids[j]->str &&
			    strcmp(m->kids[j]->str, "value") == 0 &&
			    m->kids[j + 1]->type == YAMLX_SCALAR && m->kids[j + 1]->str)
				explicit_bzero(m->kids[j + 1]->str, m->kids[j + 1]->len);
	}
	return cr != NULL;
}

int config_gateway_check(const struct config *c, struct diag *err)
{
	const char *file = c->src_file ? c->src_file : "netd.yaml";
	struct stat st;

	if (c->gw_upstream_ca_file) {
		int r = stat(c->gw_upstream_ca_file, &st) < 0 ? -errno : 0;

		if (r == 0 && !S_ISREG(st.st_mode))
			return diag_set(err, file, c->gw_ca_line, c->gw_ca_col,
					"gateway.upstream_ca_file: %s is not a regular file",
					c->gw_upstream_ca_file);
		if (r == 0 && access(c->gw_upstream_ca_file, R_OK) < 0)
			r = -errno;
		if (r < 0)
			return diag_set(err, file, c->gw_ca_line, c->gw_ca_col,
					"gateway.upstream_ca_file: %s: %s", c->gw_upstream_ca_file,
					strerror(-r));
	}
	if (c->gw_port && c->gw_user && !getpwnam(c->gw_user))
		return diag_set(err, file, c->gw_user_line, c->gw_user_col, "gateway.user: no "
				"user '%s' on this host (getpwnam)%s", c->gw_user,
				c->gw_user_line ? "" : " (the default; set gateway.user)");
	return 0;
}
