/*
 * fuzz_docker - netd-docker's parsers on arbitrary bytes: the first byte
 * picks what the rest is (docker-plugin/dkreq.h): a request body of one of
 * the plugin protocol's calls (dk_parse()), or one of the driver's state
 * files (dk_network_parse(), dk_endpoint_parse()).  A refusal must say
 * why and leave nothing set; what is accepted must hold what main.c relies
 * on (IDs of 64 hex digits, a policy netd could name, an absolute
 * SandboxKey, addresses of the right family, each gateway inside its
 * pool), and a record must be a fixed point of format then parse.  What is
 * built from accepted input (the record of an endpoint, netd's create
 * body, the replies) must be made without a crash or a leak.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "docker-plugin/dkreq.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool hex64(const char *s)
{
	return strlen(s) == DK_ID_LEN && strspn(s, "0123456789abcdef") == DK_ID_LEN;
}

static void check_network(const struct dk_network *n)
{
	struct dk_network back;
	char err[256] = "", *text;
	json_t *o = dk_network_json(n);

	for (size_t i = 0; i < n->n_v4; i++)
		if (n->v4[i].pool.addr.family != AF_INET ||
		    (n->v4[i].gateway.family && !prefix_contains(&n->v4[i].pool, &n->v4[i].gateway)))
			abort();
	for (size_t i = 0; i < n->n_v6; i++)
		if (n->v6[i].pool.addr.family != AF_INET6 ||
		    (n->v6[i].gateway.family && !prefix_contains(&n->v6[i].pool, &n->v6[i].gateway)))
			abort();
	text = o ? json_dumps(o, 0) : NULL;
	json_decref(o);
	if (!text)
		return;	/* out of memory */
	if (dk_network_parse(text, strlen(text), &back, err, sizeof(err)) < 0 ||
	    memcmp(&back, n, sizeof(back)) != 0)
		abort();
	free(text);
}

static void check_endpoint(const struct dk_endpoint *e, const struct dk_network *n,
			   const char *eid)
{
	struct dk_endpoint back;
	char err[256] = "", *text;
	json_t *o = dk_endpoint_json(e), *body, *sb;

	if (!hex64(e->network) || (!e->addr4.family && !e->addr6.family) || (e->mac[0] & 1) ||
	    (e->sandbox_key[0] && e->sandbox_key[0] != '/'))
		abort();
	text = o ? json_dumps(o, 0) : NULL;
	json_decref(o);
	if (text && (dk_endpoint_parse(text, strlen(text), &back, err, sizeof(err)) < 0 ||
		     memcmp(&back, e, sizeof(back)) != 0))
		abort();
	free(text);
	/* What Join would ask netd for, and answer Docker with, given netd's echo. */
	body = dk_create_body(eid, e, n, "/var/run/docker/netns/0123456789ab", "deny-all", err,
			      sizeof(err));
	if (body) {
		json_object_set_new(body, "ifname", json_string("ndp00001"));
		json_object_set_new(body, "gateway4", json_string("192.0.2.1"));
		sb = dk_join_reply(body);
		json_decref(sb);
		sb = dk_oper_info("dk-0123456789ab", body, NULL);
		json_decref(sb);
	}
	json_decref(body);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct dk_req r;
	struct dk_endpoint e;
	struct dk_network n;
	char err[512] = "";
	const char *text = (const char *)data + 1;
	size_t len = size ? size - 1 : 0;
	uint8_t sel;
	int rc;

	if (size < 1)
		return 0;
	sel = data[0] % (DK_METHODS + 2);
	if (sel == DK_METHODS) {
		rc = dk_network_parse(text, len, &n, err, sizeof(err));
		if (rc < 0 && (!err[0] || n.policy[0] || n.n_v4 || n.n_v6))
			abort();
		if (rc == 0)
			check_network(&n);
		return 0;
	}
	if (sel == DK_METHODS + 1) {
		rc = dk_endpoint_parse(text, len, &e, err, sizeof(err));
		if (rc < 0 && (!err[0] || e.network[0]))
			abort();
		if (rc == 0) {
			memset(&n, 0, sizeof(n));
			check_endpoint(&e, &n, e.network);
		}
		return 0;
	}
	rc = dk_parse((enum dk_method)sel, text, len, &r, err, sizeof(err));
	if (rc < 0) {
		if (!err[0] || r.network_id[0] || r.endpoint_id[0] || r.sandbox_key[0])
			abort();
		return 0;
	}
	if (sel == DK_UNKNOWN)
		abort();	/* no method: never accepted */
	if ((r.network_id[0] && !hex64(r.network_id)) || (r.endpoint_id[0] && !hex64(r.endpoint_id)))
		abort();
	if (sel == DK_JOIN && r.sandbox_key[0] != '/')
		abort();
	if ((r.addr4.family && r.addr4.family != AF_INET) ||
	    (r.addr6.family && r.addr6.family != AF_INET6))
		abort();
	if (sel == DK_CREATE_NETWORK) {
		/* accepted: no -o key without a dot ("policy" for "netd.policy") */
		json_t *o = json_loadb(text, len, 0, NULL), *g, *v;
		const char *k;

		g = json_object_get(json_object_get(o, "Options"), "com.docker.network.generic");
		json_object_foreach(json_is_object(g) ? g : NULL, k, v)
			if (!strchr(k, '.'))
				abort();
		json_decref(o);
		check_network(&r.net);
	}
	if (sel == DK_CREATE_ENDPOINT && dk_endpoint_from(&r, &e, err, sizeof(err)) == 0) {
		memset(&n, 0, sizeof(n));
		/* a network whose one pool holds the endpoint's IPv4 address, if it has one */
		if (e.addr4.family) {
			n.v4[0].pool = (struct prefix){ e.addr4, 8 };
			memset(n.v4[0].pool.addr.a + 1, 0, 3);
			n.v4[0].gateway = n.v4[0].pool.addr;
			n.v4[0].gateway.a[3] = 1;
			n.n_v4 = 1;
		}
		check_endpoint(&e, &n, r.endpoint_id);
	}
	return 0;
}
