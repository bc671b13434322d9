/*
 * test_daemon - the daemon in a box, as Unbound's testbound runs its real
 * worker: `netd run`'s own code (netd/daemon.c and netd/daemon/: startup,
 * the event loop, the control socket, the state dir, reload, restart) in a
 * child process as an ordinary user (as root the child drops to nobody),
 * with its kernel edges stood in (tests/unit/box_daemon.h: nf_tables,
 * links, DNS).
 *
 * The test is the control API's client (common/httpc.c, what the CLI and
 * netd-cni use) on ROOT/ctl.sock, and reads what the daemon left: the
 * model, the links, the state files, the audit log.  The scenario runs in
 * order: create, show, list, DNS, bad requests, reload (good and bad), a
 * vanished interface (netd's own netns, then one attached by path, which
 * status reports), a peer (a Docker endpoint), restart, delete, and a
 * startup that must fail.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "common/addr.h"
#include "tests/unit/box_daemon.h"

/* The box (tests/unit/box_daemon.c), with the daemon started. */
static int group_setup(void **state)
{
	return box_setup("dns: { min_ttl: 30 }\n");	/* policies show it as their default */
}

static int group_teardown(void **state)
{
	return box_teardown();
}

/* ---- the scenario ---------------------------------------------------------------- */

static char sb1_if[16], sb1_v4[ADDR_STRLEN];

/* Create: rules in the model, the veth and netns asked for, the state file, resolv.conf. */
static void test_create(void **state)
{
	char key[256], *text;
	json_t *o;

	assert_int_equal(box_api("POST", "/v1/sandboxes", "{\"name\": \"sb1\", \"policy\": \"python-dev\"}",
			     &o), 201);
	assert_string_equal(box_jstr(o, "name"), "sb1");
	assert_string_equal(box_jstr(o, "policy"), "python-dev");
	assert_string_equal(box_jstr(o, "netns"), "/run/netns/sb1");
	assert_string_equal(box_jstr(o, "mode"), "enforce");
	snprintf(sb1_if, sizeof(sb1_if), "%s", box_jstr(o, "host_ifname"));
	snprintf(sb1_v4, sizeof(sb1_v4), "%s", box_jstr(o, "ipv4"));
	assert_string_equal(box_jstr(o, "gateway4"), "10.87.0.1");
	assert_string_equal(sb1_v4, "10.87.0.2");
	json_decref(o);

	/* nf_tables: its interface, its source, its policy's chain and CIDR set. */
	box_ifname_key(sb1_if, key, sizeof(key));
	assert_true(box_model_has("sandbox_ifs", key));
	box_ifname_addr_key(sb1_if, sb1_v4, key, sizeof(key));
	assert_true(box_model_has("sandbox_src4", key));
	assert_int_equal(box_count_in("nft.txt", "chain inet netd pe-python-dev "), 1);
	assert_true(box_model_has("pc-python-dev-cidr4", "076433c6 00000006 0000901f"));

	/* Links: the netns, then the veth with the pool's /30 (after the rules). */
	assert_int_equal(box_count_in("link.log", "netns_create sb1\n"), 1);
	snprintf(key, sizeof(key), "veth_setup %s eth0 10.87.0.1/30 10.87.0.2/30", sb1_if);
	assert_int_equal(box_count_in("link.log", key), 1);
	snprintf(key, sizeof(key), "links/%s", sb1_if);
	assert_true(box_file_exists(key));
	assert_true(box_file_exists("netns/sb1"));

	/* Files: its state, its resolv.conf, the audit record. */
	text = box_slurp("state/sandboxes/sb1.json");
	assert_non_null(text);
	o = json_loads(text, 0, NULL);
	free(text);
	assert_non_null(o);
	assert_string_equal(box_jstr(o, "policy"), "python-dev");
	json_decref(o);
	assert_int_equal(box_count_in("etc-netns/sb1/resolv.conf", "nameserver 10.87.0.1\n"), 1);
	assert_int_equal(box_count_when("audit.jsonl", "\"action\":\"create\"", 1), 1);
}

/* Show and list: the same sandbox as the create answered. */
static void test_show_list(void **state)
{
	json_t *o, *arr;

	assert_int_equal(box_api("GET", "/v1/sandboxes/sb1", NULL, &o), 200);
	assert_string_equal(box_jstr(o, "host_ifname"), sb1_if);
	assert_string_equal(box_jstr(o, "ipv4"), sb1_v4);
	assert_string_equal(box_jstr(o, "kind"), "interface");
	json_decref(o);
	assert_int_equal(box_api("GET", "/v1/sandboxes", NULL, &o), 200);
	arr = json_object_get(o, "sandboxes");
	assert_int_equal(json_array_size(arr), 1);
	assert_string_equal(box_jstr(json_array_get(arr, 0), "name"), "sb1");
	json_decref(o);
	assert_int_equal(box_api("GET", "/v1/policies/python-dev", NULL, &o), 200);
	assert_string_equal(box_jstr(o, "name"), "python-dev");
	/* what applies where the policy says nothing (issue 32): netd.yaml's and built in */
	assert_int_equal(json_integer_value(json_object_get(json_object_get(o, "defaults"),
							    "min_ttl")), 30);
	assert_string_equal(box_jstr(json_object_get(o, "defaults"), "on_deny"), "drop");
	assert_string_equal(box_jstr(json_object_get(json_object_get(o, "defaults"), "tls"), "sni"),
			    "off");
	json_decref(o);
	assert_int_equal(box_api("GET", "/v1/status", NULL, &o), 200);
	assert_int_equal(json_integer_value(json_object_get(o, "sandboxes")), 1);
	json_decref(o);
}

/*
 * GET /metrics on the control socket: the Prometheus text (format 0.0.4)
 * with the daemon's gauges as the API shows them, the DNS counters, the
 * pin histogram and the control socket's own health.
 */
static void test_metrics(void **state)
{
	char *m = box_http_raw("GET /metrics HTTP/1.1\r\nHost: netd\r\nConnection: close\r\n\r\n");

	assert_non_null(strstr(m, "HTTP/1.1 200"));
	assert_non_null(strstr(m, "Content-Type: text/plain; version=0.0.4"));
	assert_non_null(strstr(m, "# TYPE netd_sandboxes gauge\nnetd_sandboxes 1\n"));
	assert_non_null(strstr(m, "\nnetd_policies 2\n"));
	assert_non_null(strstr(m, "\nnetd_build_info{version=\""));
	assert_non_null(strstr(m, "# TYPE netd_dns_pin_duration_seconds histogram\n"));
	assert_non_null(strstr(m, "netd_dns_pin_duration_seconds_bucket{le=\"+Inf\"}"));
	assert_non_null(strstr(m, "\nnetd_control_connections 1\n"));	/* this one */
	assert_non_null(strstr(m, "\nprocess_resident_memory_bytes "));
	free(m);
	m = box_http_raw("POST /metrics HTTP/1.1\r\nHost: netd\r\nContent-Length: 0\r\n"
			 "Connection: close\r\n\r\n");
	assert_non_null(strstr(m, "HTTP/1.1 405"));
	free(m);
}

/* DNS through the daemon's proxy ops: an allowed name is pinned before the answer; a denied one is not. */
static void test_dns(void **state)
{
	char a[ADDR_STRLEN], key[256];
	json_t *o;

	box_pin_key(sb1_v4, BOX_ANSWER_A, 6, 443, key, sizeof(key));
	assert_false(box_model_has("pin4", key));
	assert_int_equal(box_dns_ask(sb1_v4, "pypi.org", a, sizeof(a)), 0);
	assert_string_equal(a, BOX_ANSWER_A);
	assert_true(box_model_has("pin4", key));
	assert_int_equal(box_dns_ask(sb1_v4, "example.com", a, sizeof(a)), 3);	/* NXDOMAIN */
	assert_string_equal(a, "");
	assert_int_equal(box_count_when("audit.jsonl", "\"qname\":\"example.com\"", 1), 1);
	assert_int_equal(box_api("GET", "/v1/sandboxes/sb1", NULL, &o), 200);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(o, "dns_queries"),
							    "allowed")), 1);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(o, "dns_queries"),
							    "denied")), 1);
	json_decref(o);
}

/* Bad requests: clear errors, and nothing changed. */
static void test_bad_requests(void **state)
{
	char *model = box_slurp("nft.txt"), *links = box_slurp("link.log"), *after;
	json_t *o;

	assert_int_equal(box_api("POST", "/v1/sandboxes", "{\"name\": \"sb1\", \"policy\": \"deny-all\"}",
			     &o), 409);
	assert_non_null(strstr(box_jerr(o), "exists"));
	json_decref(o);
	assert_int_equal(box_api("POST", "/v1/sandboxes", "{\"name\": \"sb9\", \"policy\": \"nope\"}", &o),
			 404);
	assert_non_null(strstr(box_jerr(o), "unknown policy \"nope\""));
	json_decref(o);
	assert_int_equal(box_api("POST", "/v1/sandboxes", "{\"name\": \"-x\", \"policy\": \"deny-all\"}",
			     &o), 400);
	assert_non_null(strstr(box_jerr(o), "name"));
	json_decref(o);
	assert_int_equal(box_api("POST", "/v1/sandboxes", "{\"name\": \"sb9\"}", &o), 400);
	json_decref(o);
	assert_int_equal(box_api("POST", "/v1/sandboxes", "[1, 2]", &o), 400);
	json_decref(o);
	assert_int_equal(box_api("GET", "/v1/sandboxes/nope", NULL, &o), 404);
	json_decref(o);
	assert_int_equal(box_api("DELETE", "/v1/sandboxes/nope", NULL, &o), 404);
	json_decref(o);
	assert_int_equal(box_api("GET", "/v1/nope", NULL, &o), 404);
	json_decref(o);
	assert_int_equal(box_api("DELETE", "/v1/sandboxes", NULL, &o), 405);
	json_decref(o);

	after = box_slurp("nft.txt");
	assert_string_equal(after, model);
	free(after);
	after = box_slurp("link.log");
	assert_string_equal(after, links);
	free(after);
	free(model);
	free(links);
	assert_false(box_file_exists("state/sandboxes/sb9.json"));
}

/* A good reload: the CIDR rule moves in the model, the answer names the sandbox. */
static void test_reload(void **state)
{
	json_t *o, *changed;

	box_put("policies/python-dev.yaml",
	    "name: python-dev\n"
	    "egress:\n"
	    "  - domains: [pypi.org, files.pythonhosted.org]\n"
	    "    ports: [443]\n"
	    "  - cidrs: [198.51.100.8/32]\n"
	    "    ports: [8080]\n");
	box_put("policies/openai-only.yaml",
	    "name: openai-only\negress:\n  - domains: [\"*.openai.com\"]\n    ports: [443]\n");
	assert_int_equal(box_api("POST", "/v1/policies/reload", NULL, &o), 200);
	changed = json_object_get(o, "changed");
	assert_true(json_is_array(changed));
	assert_int_equal(json_array_size(changed), 1);
	assert_string_equal(box_jstr(json_array_get(changed, 0), "sandbox"), "sb1");
	json_decref(o);
	assert_true(box_model_has("pc-python-dev-cidr4", "086433c6 00000006 0000901f"));
	assert_false(box_model_has("pc-python-dev-cidr4", "076433c6 00000006 0000901f"));
	assert_int_equal(box_api("GET", "/v1/policies/openai-only", NULL, &o), 200);
	json_decref(o);
	assert_int_equal(box_count_when("audit.jsonl", "\"policy_reload\"", 1), 1);
}

/* A bad reload: 400 with FILE:LINE:COL, and the last good state kept whole. */
static void test_reload_bad(void **state)
{
	char *model = box_slurp("nft.txt"), *after, want[PATH_MAX + 32];
	json_t *o;

	box_put("policies/broken.yaml", "name: broken\negress:\n  - domains: [pypi.org]\n    prots: [443]\n");
	assert_int_equal(box_api("POST", "/v1/policies/reload", NULL, &o), 400);
	snprintf(want, sizeof(want), "%s/policies/broken.yaml:4:5", box_root);
	assert_non_null(strstr(box_jerr(o), want));
	json_decref(o);
	after = box_slurp("nft.txt");
	assert_string_equal(after, model);
	free(after);
	free(model);
	assert_int_equal(box_api("GET", "/v1/policies/broken", NULL, &o), 404);
	json_decref(o);
	assert_int_equal(box_api("GET", "/v1/policies/openai-only", NULL, &o), 200);
	json_decref(o);
	box_path(want, sizeof(want), "policies/broken.yaml");
	assert_int_equal(unlink(want), 0);
}

/* A sandbox whose interface vanishes is retired (netd/daemon/vanish.c, through the link seam). */
static void test_vanish(void **state)
{
	struct sockaddr_un to = { .sun_family = AF_UNIX };
	char msg[64], key[256], ifname[16];
	json_t *o;
	int fd;

	assert_int_equal(box_api("POST", "/v1/sandboxes",
			     "{\"name\": \"gone\", \"policy\": \"openai-only\"}", &o), 201);
	snprintf(ifname, sizeof(ifname), "%s", box_jstr(o, "host_ifname"));
	json_decref(o);
	box_ifname_key(ifname, key, sizeof(key));
	assert_true(box_model_has("sandbox_ifs", key));
	box_path(to.sun_path, sizeof(to.sun_path), "linkwatch.sock");
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	snprintf(msg, sizeof(msg), "deleted %s", ifname);
	assert_int_equal(sendto(fd, msg, strlen(msg), 0, (struct sockaddr *)&to, sizeof(to)),
			 (ssize_t)strlen(msg));
	close(fd);
	/* The event is handled on the daemon's loop: ask until it was. */
	assert_int_equal(box_api_until("/v1/sandboxes/gone", 404), 404);
	assert_false(box_model_has("sandbox_ifs", key));
	assert_false(box_file_exists("state/sandboxes/gone.json"));
	assert_int_equal(box_count_when("audit.jsonl", "\"action\":\"vanished\"", 1), 1);
	assert_int_equal(box_count_in("link.log", "netns_delete gone\n"), 1);
}

/*
 * Attached by netns path, then the netns (and so its interface) vanishes:
 * netd does not follow the container to a next netns, and says so: the
 * audit record, status degraded with the sandbox listed; a create of that
 * name clears it.
 */
static void test_vanish_by_path(void **state)
{
	struct sockaddr_un to = { .sun_family = AF_UNIX };
	char msg[64], ifname[16], body[PATH_MAX + 128], ns[PATH_MAX];
	json_t *o, *v;
	int fd;

	box_put("ns-attached", "netns\n");
	box_path(ns, sizeof(ns), "ns-attached");
	snprintf(body, sizeof(body), "{\"name\": \"byp\", \"policy\": \"openai-only\", \"netns\": \"%s\"}", ns);
	assert_int_equal(box_api("POST", "/v1/sandboxes", body, &o), 201);
	snprintf(ifname, sizeof(ifname), "%s", box_jstr(o, "host_ifname"));
	json_decref(o);
	assert_int_equal(box_api("GET", "/v1/status", NULL, &o), 200);
	assert_string_equal(box_jstr(o, "status"), "ok");
	json_decref(o);
	box_path(to.sun_path, sizeof(to.sun_path), "linkwatch.sock");
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	snprintf(msg, sizeof(msg), "deleted %s", ifname);
	assert_int_equal(sendto(fd, msg, strlen(msg), 0, (struct sockaddr *)&to, sizeof(to)),
			 (ssize_t)strlen(msg));
	close(fd);
	assert_int_equal(box_api_until("/v1/sandboxes/byp", 404), 404);
	assert_int_equal(box_count_when("audit.jsonl", "\"reattached\":false", 1), 1);
	assert_int_equal(box_api("GET", "/v1/status", NULL, &o), 200);
	assert_string_equal(box_jstr(o, "status"), "degraded");
	v = json_array_get(json_object_get(o, "vanished"), 0);
	assert_string_equal(box_jstr(v, "sandbox"), "byp");
	assert_string_equal(box_jstr(v, "netns"), ns);
	assert_non_null(strstr(json_string_value(json_array_get(json_object_get(o, "warnings"), 0)),
			       "not re-attached"));
	json_decref(o);
	/* Attached again: the warning goes. */
	assert_int_equal(box_api("POST", "/v1/sandboxes", body, &o), 201);
	json_decref(o);
	assert_int_equal(box_api("GET", "/v1/status", NULL, &o), 200);
	assert_string_equal(box_jstr(o, "status"), "ok");
	assert_int_equal(json_array_size(json_object_get(o, "vanished")), 0);
	json_decref(o);
	assert_int_equal(box_api("DELETE", "/v1/sandboxes/byp", NULL, &o), 200);
	json_decref(o);
}

static char dk_if[16];

/*
 * Kind "peer" (a Docker endpoint): the veth made with its peer left here,
 * down, at the MAC asked for; an IPAM's addresses; the netns recorded, not
 * opened (it does not exist yet); the state file says so.
 */
static void test_peer(void **state)
{
	char key[256], *text;
	json_t *o;

	assert_int_equal(box_api("POST", "/v1/sandboxes",
			     "{\"name\": \"dk1\", \"policy\": \"openai-only\", \"kind\": \"peer\", "
			     "\"netns\": \"/var/run/docker/netns/0123456789ab\", \"mac\": \"02:42:ac:12:00:02\", "
			     "\"addresses\": {\"ipv4\": \"172.18.0.2/16\", \"gateway4\": \"172.18.0.1\"}}", &o),
			 201);
	assert_string_equal(box_jstr(o, "kind"), "peer");
	assert_string_equal(box_jstr(o, "mac"), "02:42:ac:12:00:02");
	assert_string_equal(box_jstr(o, "ipv4"), "172.18.0.2");
	assert_string_equal(box_jstr(o, "gateway4"), "172.18.0.1");
	assert_string_equal(box_jstr(o, "netns"), "/var/run/docker/netns/0123456789ab");
	assert_string_equal(box_jstr(o, "ifname"), "ndp00004");	/* slot 4: after sb1, gone, byp x2 */
	snprintf(dk_if, sizeof(dk_if), "%s", box_jstr(o, "host_ifname"));
	json_decref(o);
	snprintf(key, sizeof(key), "veth_setup %s ndp00004 172.18.0.1/32 172.18.0.2/16 - - "
		 "peer-here 02:42:ac:12:00:02", dk_if);
	assert_int_equal(box_count_in("link.log", key), 1);
	box_ifname_addr_key(dk_if, "172.18.0.2", key, sizeof(key));
	assert_true(box_model_has("sandbox_src4", key));
	text = box_slurp("state/sandboxes/dk1.json");
	assert_non_null(text);
	assert_non_null(strstr(text, "\"kind\": \"peer\""));
	assert_non_null(strstr(text, "\"mac\": \"02:42:ac:12:00:02\""));
	free(text);
	/* A peer needs addresses; mac only with kind peer. */
	assert_int_equal(box_api("POST", "/v1/sandboxes",
			     "{\"name\": \"dk2\", \"policy\": \"openai-only\", \"kind\": \"peer\"}", &o),
			 400);
	assert_non_null(strstr(box_jerr(o), "needs \"addresses\""));
	json_decref(o);
	assert_int_equal(box_api("POST", "/v1/sandboxes",
			     "{\"name\": \"dk2\", \"policy\": \"openai-only\", \"mac\": \"02:42:ac:12:00:03\"}",
			     &o), 400);
	json_decref(o);
	assert_false(box_file_exists("state/sandboxes/dk2.json"));
}

/* Restart over the same state dir: the sandboxes come back, nothing is made again. */
static void test_restart(void **state)
{
	char key[256], sb2_if[16];
	json_t *o, *arr;

	assert_int_equal(box_api("POST", "/v1/sandboxes",
			     "{\"name\": \"sb2\", \"policy\": \"openai-only\", \"mode\": \"audit\"}",
			     &o), 201);
	snprintf(sb2_if, sizeof(sb2_if), "%s", box_jstr(o, "host_ifname"));
	json_decref(o);
	assert_int_equal(box_daemon_stop(), 0);
	assert_int_equal(box_count_when("audit.jsonl", "\"action\":\"stop\"", 1), 1);
	assert_int_equal(unlink(strcat(strcpy((char[PATH_MAX]){ 0 }, box_root), "/nft.txt")), 0);

	assert_int_equal(box_daemon_start(), 0);
	assert_int_equal(box_api("GET", "/v1/sandboxes", NULL, &o), 200);
	arr = json_object_get(o, "sandboxes");
	assert_int_equal(json_array_size(arr), 3);
	json_decref(o);
	assert_int_equal(box_api("GET", "/v1/sandboxes/dk1", NULL, &o), 200);	/* a peer too */
	assert_string_equal(box_jstr(o, "kind"), "peer");
	assert_string_equal(box_jstr(o, "mac"), "02:42:ac:12:00:02");
	assert_string_equal(box_jstr(o, "host_ifname"), dk_if);
	json_decref(o);
	assert_int_equal(box_api("GET", "/v1/sandboxes/sb2", NULL, &o), 200);
	assert_string_equal(box_jstr(o, "mode"), "audit");
	assert_string_equal(box_jstr(o, "host_ifname"), sb2_if);
	json_decref(o);
	assert_int_equal(box_api("GET", "/v1/sandboxes/sb1", NULL, &o), 200);
	assert_string_equal(box_jstr(o, "ipv4"), sb1_v4);
	json_decref(o);
	/* The new model got both back in the restore's one batch. */
	box_ifname_key(sb1_if, key, sizeof(key));
	assert_true(box_model_has("sandbox_ifs", key));
	box_ifname_key(sb2_if, key, sizeof(key));
	assert_true(box_model_has("sandbox_ifs", key));
	assert_int_equal(box_count_in("nft.txt", "chain inet netd pa-openai-only "), 1);
	/* Interfaces kept: set up once each, before the restart. */
	assert_int_equal(box_count_in("link.log", "veth_setup "), 6);	/* sb1, gone, byp x2, dk1, sb2 */
	assert_int_equal(box_count_when("audit.jsonl", "\"restored\":3", 1), 1);
}

/* Delete: interface, then rules, then state; 404 afterwards. */
static void test_delete(void **state)
{
	char key[256], line[64];
	json_t *o;

	assert_int_equal(box_api("DELETE", "/v1/sandboxes/sb1", NULL, &o), 200);
	assert_string_equal(box_jstr(o, "deleted"), "sb1");
	json_decref(o);
	snprintf(line, sizeof(line), "del %s\n", sb1_if);
	assert_int_equal(box_count_in("link.log", line), 1);
	assert_int_equal(box_count_in("link.log", "netns_delete sb1\n"), 1);
	snprintf(key, sizeof(key), "links/%s", sb1_if);
	assert_false(box_file_exists(key));
	assert_false(box_file_exists("netns/sb1"));
	box_ifname_key(sb1_if, key, sizeof(key));
	assert_false(box_model_has("sandbox_ifs", key));
	box_ifname_addr_key(sb1_if, sb1_v4, key, sizeof(key));
	assert_false(box_model_has("sandbox_src4", key));
	assert_int_equal(box_count_in("nft.txt", "chain inet netd pe-python-dev "), 0);
	assert_false(box_file_exists("state/sandboxes/sb1.json"));
	assert_false(box_file_exists("etc-netns/sb1/resolv.conf"));
	assert_int_equal(box_api("GET", "/v1/sandboxes/sb1", NULL, &o), 404);
	json_decref(o);
	assert_int_equal(box_count_when("audit.jsonl",
					"\"action\":\"delete\",\"netns\":\"/run/netns/sb1\"", 1), 1);
}

/*
 * Bandwidth (issue 27): the create's own rate goes on its interface
 * through the link seam, a reload adds its policy's, a restart re-checks
 * them, delete takes the IFB away; a bad rate changes nothing.  A sandbox
 * without a rate never asks the seam for anything.
 */
static void test_bandwidth(void **state)
{
	char line[128], ifname[16], ifb[24];
	json_t *o, *bw;

	assert_int_equal(box_count_in("link.log", "shape "), 0);	/* none so far had a rate */
	assert_int_equal(box_api("POST", "/v1/sandboxes", "{\"name\": \"sbw\", \"policy\": "
				 "\"python-dev\", \"bandwidth\": {\"egress\": \"20mbit\"}}", &o), 201);
	snprintf(ifname, sizeof(ifname), "%s", box_jstr(o, "host_ifname"));
	bw = json_object_get(json_object_get(o, "bandwidth"), "egress");
	assert_string_equal(box_jstr(bw, "limit"), "20mbit");
	assert_string_equal(box_jstr(bw, "from"), "sandbox");
	assert_true(json_is_null(json_object_get(json_object_get(o, "bandwidth"), "ingress")));
	json_decref(o);
	snprintf(ifb, sizeof(ifb), "ndi%s", ifname + 2);	/* the slot's 5 hex digits */
	snprintf(line, sizeof(line), "shape %s ifb %s ingress 0 egress 20000000\n", ifname, ifb);
	assert_int_equal(box_count_in("link.log", line), 1);
	assert_int_equal(box_count_in("state/sandboxes/sbw.json", "\"shaped\""), 1);

	/* A policy's ingress rate, by reload: only the change is sent. */
	box_put("policies/python-dev.yaml",
	    "name: python-dev\negress:\n  - domains: [pypi.org]\n    ports: [443]\n"
	    "limits: { bandwidth: { ingress: 100mbit, egress: 1gbit } }\n");
	assert_int_equal(box_api("POST", "/v1/policies/reload", NULL, &o), 200);
	json_decref(o);
	snprintf(line, sizeof(line), "shape %s ifb %s ingress 100000000 egress 20000000\n", ifname,
		 ifb);
	assert_int_equal(box_count_in("link.log", line), 1);
	assert_int_equal(box_api("GET", "/v1/sandboxes/sbw", NULL, &o), 200);
	bw = json_object_get(o, "bandwidth");
	assert_string_equal(box_jstr(json_object_get(bw, "ingress"), "from"), "policy");
	assert_string_equal(box_jstr(json_object_get(bw, "egress"), "limit"), "20mbit");
	json_decref(o);

	/* A bad rate: 400, nothing made. */
	assert_int_equal(box_api("POST", "/v1/sandboxes", "{\"name\": \"sbx\", \"policy\": "
				 "\"python-dev\", \"bandwidth\": {\"ingress\": \"20 mbps\"}}", &o), 400);
	assert_non_null(strstr(box_jerr(o), "'mbps' is not a unit"));
	json_decref(o);
	assert_false(box_file_exists("state/sandboxes/sbx.json"));

	/* A restart checks what is on its interfaces (the state file says what was put on). */
	assert_int_equal(box_daemon_stop(), 0);
	assert_int_equal(box_daemon_start(), 0);
	assert_int_equal(box_count_in("link.log", line), 2);

	/* Delete: the IFB goes with it. */
	assert_int_equal(box_api("DELETE", "/v1/sandboxes/sbw", NULL, &o), 200);
	json_decref(o);
	snprintf(line, sizeof(line), "del %s\n", ifb);
	assert_int_equal(box_count_in("link.log", line), 1);
}

/* A bad policy at startup: the daemon refuses to start, and says where. */
static void test_startup_bad_policy(void **state)
{
	char want[PATH_MAX + 32];

	assert_int_equal(box_daemon_stop(), 0);
	box_put("policies/broken.yaml", "name: broken\negress:\n  - domains: [pypi.org]\n    prots: [443]\n");
	assert_int_equal(box_daemon_start(), 1);
	snprintf(want, sizeof(want), "%s/policies/broken.yaml:4:5", box_root);
	assert_true(box_count_in("daemon.log", want) >= 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create),
		cmocka_unit_test(test_show_list),
		cmocka_unit_test(test_metrics),
		cmocka_unit_test(test_dns),
		cmocka_unit_test(test_bad_requests),
		cmocka_unit_test(test_reload),
		cmocka_unit_test(test_reload_bad),
		cmocka_unit_test(test_vanish),
		cmocka_unit_test(test_vanish_by_path),
		cmocka_unit_test(test_peer),
		cmocka_unit_test(test_restart),
		cmocka_unit_test(test_delete),
		cmocka_unit_test(test_bandwidth),
		cmocka_unit_test(test_startup_bad_policy),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
