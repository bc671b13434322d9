/*
 * fuzz_config - config_parse() on arbitrary bytes, on top of the defaults.
 * Checks that a failed parse leaves the config untouched and that a
 * successful one respects the documented ranges (credentials: complete,
 * one source each, no placeholder inside another; ipfix collectors that
 * format back to themselves).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "netd/model/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config c, before;
	struct diag err;
	int r;

	if (config_init(&c) < 0)
		return 0;
	before = c;
	r = config_parse(&c, (const char *)data, size, "fuzz.yaml", &err);
	if (r < 0) {
		if (memcmp(&c, &before, sizeof(c)) != 0)
			abort();
	} else {
		if (c.min_ttl_s < 1 || c.min_ttl_s > c.max_ttl_s || c.max_ttl_s > CONFIG_MAX_TTL_S ||
		    c.dns_port == 0 || c.n_upstream > CONFIG_MAX_UPSTREAM ||
		    c.pool4.addr.family != AF_INET || c.pool4.plen < 8 || c.pool4.plen > 28 ||
		    (c.pool6_enabled && (c.pool6.plen < 8 || c.pool6.plen > 64)) ||
		    !c.socket || !c.socket[0] || strlen(c.socket) > 107 ||
		    (c.deny_rcode != 3 && c.deny_rcode != 5) ||
		    memchr(c.egress_interface, '\0', sizeof(c.egress_interface)) == NULL)
			abort();
		for (unsigned int i = 0; i < c.n_upstream; i++)
			if (c.upstream[i].port == 0)
				abort();
		/* credentials: each complete, one source, placeholders apart (config_gw.c) */
		if (c.n_creds > CONFIG_MAX_CREDENTIALS || !c.gw_user ||
		    c.gw_connect_timeout_s < 1 || c.gw_idle_timeout_s < 1)
			abort();
		for (size_t i = 0; i < c.n_creds; i++) {
			const struct config_credential *cr = &c.creds[i];

			if (!cr->name || !cr->header || !cr->format || !strstr(cr->format, "{secret}") ||
			    !cr->placeholder || strlen(cr->placeholder) < CONFIG_CRED_PLACEHOLDER_MIN ||
			    cr->n_hosts < 1 || cr->n_hosts > CONFIG_CRED_HOSTS_MAX ||
			    (cr->src == CONFIG_CRED_VALUE) != (cr->value != NULL) ||
			    (cr->src == CONFIG_CRED_VALUE) == (cr->src_arg != NULL) ||
			    config_find_credential(&c, cr->name) != cr)
				abort();
			for (size_t k = 0; k < i; k++)
				if (strstr(cr->placeholder, c.creds[k].placeholder) ||
				    strstr(c.creds[k].placeholder, cr->placeholder))
					abort();
		}
		/* ipfix: (config_ipfix.c): within the ranges; each collector formats
		 * back to text that parses to the same collector, listed once. */
		if (c.ipfix.n_collectors > CONFIG_IPFIX_MAX_COLLECTORS || c.ipfix.enterprise == 0 ||
		    c.ipfix.enterprise == 29305 || c.ipfix.message_size < 1024 ||
		    c.ipfix.message_size > 65535 || c.ipfix.buffer_bytes < 65536 ||
		    c.ipfix.template_refresh_s < 1 || c.ipfix.reconnect_s < 1)
			abort();
		for (unsigned int i = 0; i < c.ipfix.n_collectors; i++) {
			const struct config_ipfix_collector *a = &c.ipfix.collectors[i];
			struct config_ipfix_collector b;
			char u[CONFIG_IPFIX_URL_MAX];

			config_ipfix_format(a, u, sizeof(u));
			if (a->port == 0 || config_ipfix_collector_parse(u, strlen(u), &b) != 0 ||
			    b.tcp != a->tcp || b.port != a->port || !addr_equal(&a->addr, &b.addr))
				abort();
			for (unsigned int k = 0; k < i; k++)
				if (c.ipfix.collectors[k].tcp == a->tcp &&
				    c.ipfix.collectors[k].port == a->port &&
				    addr_equal(&c.ipfix.collectors[k].addr, &a->addr))
					abort();
		}
	}
	config_done(&c);
	return 0;
}
