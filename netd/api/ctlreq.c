/*
 * ctlreq - control API request bodies (JSON, jansson) to structs.  No
 * logging, no daemon state.
 */
#include "netd/api/ctlreq.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/diag.h"
#include "common/hex.h"
#include "common/log.h"
#include "netd/link/tap.h"
#include "netd/model/policy.h"

/* Keys of @obj must all be in @allowed (NULL-terminated); @what names @obj. */
static int keys_known(json_t *obj, const char *const *allowed, const char *what,
		      const char *list, char *err, size_t errsz)
{
	const char *key;
	json_t *v;

	json_object_foreach(obj, key, v) {
		size_t i;
		char q[128];

		for (i = 0; allowed[i] && strcmp(allowed[i], key) != 0; i++)
			;
		if (!allowed[i])
			return diag_err(err, errsz, "unknown key \"%s%s\" (allowed: %s)", what,
					log_quote(key, strlen(key), q, sizeof(q)), list);
	}
	return 0;
}

/* Optional string member: 0 (set or left NULL); -EINVAL if another type. */
static int member_string(json_t *obj, const char *key, const char *what, const char **out,
			 char *err, size_t errsz)
{
	json_t *v = json_object_get(obj, key);

	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return diag_err(err, errsz, "\"%s%s\" must be a string", what, key);
	/* A NUL inside would cut the value short without anyone noticing. */
	if (strlen(json_string_value(v)) != json_string_length(v))
		return diag_err(err, errsz, "\"%s%s\" must not contain NUL", what, key);
	*out = json_string_value(v);
	return 0;
}

/* Optional integer member in [@min, @max]: 0 (set, *@set = true, or absent). */
static int member_uint(json_t *obj, const char *key, const char *what, json_int_t min,
		       json_int_t max, uint32_t *out, bool *set, char *err, size_t errsz)
{
	json_t *v = json_object_get(obj, key);

	*set = false;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max)
		return diag_err(err, errsz, "\"%s%s\" must be an integer from %lld to %lld", what, key,
				(long long)min, (long long)max);
	*out = (uint32_t)json_integer_value(v);
	*set = true;
	return 0;
}

/*
 * "kind": "tap" and its "tap" object (daemon.h), or "peer" (its "mac").
 * "kind" may also be "interface" (the default); "chained" is what "attach"
 * makes, so it is not asked for by name.
 */
static int tap_request(json_t *obj, struct sandbox_request *sr, char *err, size_t errsz)
{
	static const char *const keys[] = { "name", "owner", "group", "queues", "mtu", NULL };
	const char *kind = NULL;
	json_t *t = json_object_get(obj, "tap");
	uint32_t queues = 0, mtu = 0;
	bool owner_set, set;
	int r;

	r = member_string(obj, "kind", "", &kind, err, errsz);
	if (r < 0)
		return r;
	if (kind && strcmp(kind, "tap") != 0 && strcmp(kind, "interface") != 0 &&
	    strcmp(kind, "peer") != 0)
		return diag_err(err, errsz, "\"kind\" must be \"interface\", \"tap\" or \"peer\"");
	sr->tap = kind && strcmp(kind, "tap") == 0;
	sr->peer = kind && strcmp(kind, "peer") == 0;
	if (sr->mac && !sr->peer)
		return diag_err(err, errsz, "\"mac\" needs \"kind\": \"peer\"");
	if (sr->peer && (sr->attach_host_ifname || (!sr->addr_ipv4 && !sr->addr_ipv6)))
		return diag_err(err, errsz, "\"kind\": \"peer\" needs \"addresses\" (the caller "
				"puts them on the peer it moves) and takes no \"attach\"");
	if (!sr->tap) {
		if (t && !json_is_null(t))
			return diag_err(err, errsz, "\"tap\" needs \"kind\": \"tap\"");
		return 0;
	}
	if (sr->netns || sr->ifname || sr->attach_host_ifname || sr->addr_ipv4 || sr->addr_ipv6)
		return diag_err(err, errsz, "a tap sandbox takes no \"netns\", \"ifname\", \"attach\" "
				"or \"addresses\"");
	if (!t || !json_is_object(t))
		return diag_err(err, errsz, "\"kind\": \"tap\" needs a \"tap\" object with \"owner\" "
				"(the UID whose VMM opens it; a tap is never ownerless)");
	r = keys_known(t, keys, "tap.", "name, owner, group, queues, mtu", err, errsz);
	if (r < 0)
		return r;
	/* (uid_t)-1 means "no owner" to the kernel: refused like a missing one. */
	if ((r = member_string(t, "name", "tap.", &sr->tap_name, err, errsz)) < 0 ||
	    (r = member_uint(t, "owner", "tap.", 0, 4294967294LL, &sr->tap_owner, &owner_set, err,
			     errsz)) < 0 ||
	    (r = member_uint(t, "group", "tap.", 0, 4294967294LL, &sr->tap_group,
			     &sr->tap_group_set, err, errsz)) < 0 ||
	    (r = member_uint(t, "queues", "tap.", 1, TAP_QUEUES_MAX, &queues, &set, err, errsz)) < 0 ||
	    (r = member_uint(t, "mtu", "tap.", TAP_MTU_MIN, TAP_MTU_MAX, &mtu, &set, err, errsz)) < 0)
		return r;
	if (!owner_set)
		return diag_err(err, errsz, "\"tap.owner\" is required: the UID whose VMM opens the tap "
				"(a tap is never ownerless)");
	sr->tap_queues = queues;
	sr->tap_mtu = mtu;
	return 0;
}

/*
 * The body @text/@len as a JSON object (duplicate keys refused).
 * Return: the object (caller decrefs); NULL with *@r = -EINVAL and @err filled.
 */
static json_t *body_object(const char *text, size_t len, char *err, size_t errsz, int *r)
{
	json_error_t jerr;
	json_t *obj = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);

	if (!obj) {
		*r = diag_err(err, errsz, "request body is not valid JSON: line %d column %d: %s",
			      jerr.line, jerr.column, jerr.text);
		return NULL;
	}
	if (!json_is_object(obj)) {
		*r = diag_err(err, errsz, "request body must be a JSON object");
		json_decref(obj);
		return NULL;
	}
	return obj;
}

/* "container_id", "pod_namespace", "pod_name", "pod_uid": each optional, checked. */
/* "bandwidth": {"egress"?, "ingress"?}: rates as a policy writes them (ctlreq.h). */
static int bandwidth_request(json_t *obj, struct sandbox_request *sr, char *err, size_t errsz)
{
	static const char *const keys[] = { "egress", "ingress", NULL };
	uint64_t *out[2] = { &sr->bw_egress_bps, &sr->bw_ingress_bps };
	json_t *v = json_object_get(obj, "bandwidth");
	int r;

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_object(v))
		return diag_err(err, errsz, "\"bandwidth\" must be an object");
	r = keys_known(v, keys, "bandwidth.", "egress, ingress", err, errsz);
	for (int i = 0; r == 0 && i < 2; i++) {
		char why[256], q[80];
		const char *s;

		r = member_string(v, keys[i], "bandwidth.", &s, err, errsz);
		if (r < 0 || !s)
			continue;
		if (policy_rate_parse(s, strlen(s), out[i], why, sizeof(why)) < 0)
			r = diag_err(err, errsz, "\"bandwidth.%s\": bad rate \"%s\": %s", keys[i],
				     log_quote(s, strlen(s), q, sizeof(q)), why);
	}
	return r;
}

static int workload_request(json_t *obj, struct workload *w, char *err, size_t errsz)
{
	for (int f = 0; f < WORKLOAD_FIELDS; f++) {
		const char *v;
		int r = member_string(obj, workload_key((enum workload_field)f), "", &v, err, errsz);

		if (r < 0)
			return r;
		/* -ENAMETOOLONG is a bad request like any other: 400. */
		if (v && workload_set(w, (enum workload_field)f, v, err, errsz) < 0)
			return -EINVAL;
	}
	return 0;
}

int ctlreq_sandbox(const char *text, size_t len, struct sandbox_request *sr, json_t **ret_obj,
		   char *err, size_t errsz)
{
	static const char *const top[] = { "name", "policy", "netns", "ifname", "attach",
					    "addresses", "kind", "tap", "mode", "mac", "container_id",
					    "pod_namespace", "pod_name", "pod_uid", "bandwidth", NULL };
	static const char *const att[] = { "host_ifname", "ipv4", "ipv6", NULL };
	static const char *const adr[] = { "ipv4", "gateway4", "ipv6", "gateway6", NULL };
	json_t *obj, *v;
	int r = 0;

	memset(sr, 0, sizeof(*sr));
	*ret_obj = NULL;
	obj = body_object(text, len, err, errsz, &r);
	if (!obj)
		return r;
	r = keys_known(obj, top, "", "name, policy, netns, ifname, attach, addresses, kind, tap, "
		       "mode, mac, container_id, pod_namespace, pod_name, pod_uid, bandwidth", err,
		       errsz);
	if (r < 0)
		goto fail;
	if ((r = member_string(obj, "name", "", &sr->name, err, errsz)) < 0 ||
	    (r = member_string(obj, "policy", "", &sr->policy, err, errsz)) < 0 ||
	    (r = member_string(obj, "netns", "", &sr->netns, err, errsz)) < 0 ||
	    (r = member_string(obj, "ifname", "", &sr->ifname, err, errsz)) < 0 ||
	    (r = member_string(obj, "mode", "", &sr->mode, err, errsz)) < 0 ||
	    (r = member_string(obj, "mac", "", &sr->mac, err, errsz)) < 0)
		goto fail;
	if (sr->mode && strcmp(sr->mode, "audit") != 0 && strcmp(sr->mode, "enforce") != 0) {
		r = diag_err(err, errsz, "\"mode\" must be \"audit\" or \"enforce\"");
		goto fail;
	}
	if (!sr->name || !sr->policy) {
		r = diag_err(err, errsz, "\"name\" and \"policy\" are required");
		goto fail;
	}
	/* A chained CNI attachment (ctlreq.h). */
	v = json_object_get(obj, "attach");
	if (v && !json_is_null(v)) {
		if (!json_is_object(v)) {
			r = diag_err(err, errsz, "\"attach\" must be an object");
			goto fail;
		}
		r = keys_known(v, att, "attach.", "host_ifname, ipv4, ipv6", err, errsz);
		if (r < 0)
			goto fail;
		if ((r = member_string(v, "host_ifname", "attach.", &sr->attach_host_ifname, err,
				       errsz)) < 0 ||
		    (r = member_string(v, "ipv4", "attach.", &sr->attach_ipv4, err, errsz)) < 0 ||
		    (r = member_string(v, "ipv6", "attach.", &sr->attach_ipv6, err, errsz)) < 0)
			goto fail;
		if (!sr->attach_host_ifname || (!sr->attach_ipv4 && !sr->attach_ipv6)) {
			r = diag_err(err, errsz, "\"attach\" needs \"host_ifname\" and \"ipv4\" or \"ipv6\"");
			goto fail;
		}
	}
	/* Interface mode with an IPAM plugin's addresses (ctlreq.h). */
	v = json_object_get(obj, "addresses");
	if (v && !json_is_null(v)) {
		if (!json_is_object(v)) {
			r = diag_err(err, errsz, "\"addresses\" must be an object");
			goto fail;
		}
		r = keys_known(v, adr, "addresses.", "ipv4, gateway4, ipv6, gateway6", err, errsz);
		if (r < 0)
			goto fail;
		if ((r = member_string(v, "ipv4", "addresses.", &sr->addr_ipv4, err, errsz)) < 0 ||
		    (r = member_string(v, "gateway4", "addresses.", &sr->addr_gateway4, err,
				       errsz)) < 0 ||
		    (r = member_string(v, "ipv6", "addresses.", &sr->addr_ipv6, err, errsz)) < 0 ||
		    (r = member_string(v, "gateway6", "addresses.", &sr->addr_gateway6, err,
				       errsz)) < 0)
			goto fail;
		if ((!sr->addr_ipv4 && !sr->addr_ipv6) || !sr->addr_ipv4 != !sr->addr_gateway4 ||
		    !sr->addr_ipv6 != !sr->addr_gateway6) {
			r = diag_err(err, errsz, "\"addresses\" needs \"ipv4\" with \"gateway4\" and/or "
				     "\"ipv6\" with \"gateway6\"");
			goto fail;
		}
		if (sr->attach_host_ifname) {
			r = diag_err(err, errsz, "\"addresses\" and \"attach\" exclude each other");
			goto fail;
		}
	}
	r = tap_request(obj, sr, err, errsz);
	if (r < 0)
		goto fail;
	r = workload_request(obj, &sr->workload, err, errsz);
	if (r < 0)
		goto fail;
	r = bandwidth_request(obj, sr, err, errsz);
	if (r < 0)
		goto fail;
	*ret_obj = obj;
	return 0;
fail:
	memset(sr, 0, sizeof(*sr));
	json_decref(obj);
	return r;
}

/* An optional boolean member: absent or null leaves *@out false. */
static int member_bool(json_t *obj, const char *key, bool *out, char *err, size_t errsz)
{
	json_t *v = json_object_get(obj, key);

	*out = false;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_boolean(v))
		return diag_err(err, errsz, "\"%s\" must be true or false", key);
	*out = json_is_true(v);
	return 0;
}

int ctlreq_verify(const char *text, size_t len, struct verify_request *vr, json_t **ret_obj,
		  char *err, size_t errsz)
{
	static const char *const top[] = { "sandboxes", "all", "allowed", NULL };
	json_t *obj, *names, *v;
	size_t i;
	int r = 0;

	memset(vr, 0, sizeof(*vr));
	*ret_obj = NULL;
	obj = body_object(text, len, err, errsz, &r);
	if (!obj)
		return r;
	if ((r = keys_known(obj, top, "", "sandboxes, all, allowed", err, errsz)) < 0 ||
	    (r = member_bool(obj, "all", &vr->all, err, errsz)) < 0 ||
	    (r = member_bool(obj, "allowed", &vr->allowed, err, errsz)) < 0)
		goto fail;
	names = json_object_get(obj, "sandboxes");
	if (names && json_is_null(names))
		names = NULL;
	if (names && !json_is_array(names)) {
		r = diag_err(err, errsz, "\"sandboxes\" must be an array of names");
		goto fail;
	}
	if (vr->all == (names && json_array_size(names) > 0)) {
		r = diag_err(err, errsz, "give either \"all\": true or a non-empty \"sandboxes\"");
		goto fail;
	}
	if (names && json_array_size(names) > CTLREQ_VERIFY_NAMES) {
		r = diag_err(err, errsz, "at most %d sandboxes", CTLREQ_VERIFY_NAMES);
		goto fail;
	}
	json_array_foreach(names, i, v) {
		size_t n = json_is_string(v) ? json_string_length(v) : 0;

		if (!n || n > CTLREQ_SEG_MAX || strlen(json_string_value(v)) != n) {
			r = diag_err(err, errsz, "\"sandboxes\"[%zu] must be a name of 1 to %d bytes",
				     i, CTLREQ_SEG_MAX);
			goto fail;
		}
	}
	vr->names = names;
	*ret_obj = obj;
	return 0;
fail:
	memset(vr, 0, sizeof(*vr));
	json_decref(obj);
	return r;
}

/* Decode the segment @s/@len into @out (CTLREQ_SEG_MAX + 1 bytes). */
static int segment_decode(const char *s, size_t len, char *out, char *err, size_t errsz)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '%') {
			int hi, lo;

			if (i + 2 >= len)	/* both digits must be there */
				return diag_err(err, errsz, "bad percent-encoding in the path");
			hi = hex_digit(s[i + 1]);
			lo = hex_digit(s[i + 2]);
			if (hi < 0 || lo < 0)
				return diag_err(err, errsz, "bad percent-encoding in the path");
			c = (unsigned char)(hi << 4 | lo);
			i += 2;
		}
		if (c == '\0')
			return diag_err(err, errsz, "a NUL (%%00) in the path");
		if (c == '/')
			return diag_err(err, errsz, "a '/' (%%2F) inside a path segment");
		if (c < 0x20 || c == 0x7f)
			return diag_err(err, errsz, "a control character in the path");
		if (n == CTLREQ_SEG_MAX) {
			snprintf(err, errsz, "a path segment over %d bytes", CTLREQ_SEG_MAX);
			return -ENAMETOOLONG;
		}
		out[n++] = (char)c;
	}
	out[n] = '\0';
	if (strcmp(out, ".") == 0 || strcmp(out, "..") == 0)
		return diag_err(err, errsz, "\".\" or \"..\" as a path segment");
	return 0;
}

int ctlreq_path(const char *raw, struct ctlreq_path *out, char *err, size_t errsz)
{
	size_t len = raw ? strlen(raw) : 0;
	const char *p;

	memset(out, 0, sizeof(*out));
	if (!raw || raw[0] != '/')
		return diag_err(err, errsz, "the path must start with '/'");
	if (len > CTLREQ_PATH_MAX) {
		snprintf(err, errsz, "path over %d bytes", CTLREQ_PATH_MAX);
		return -ENAMETOOLONG;
	}
	for (p = raw + 1;; ) {
		const char *end = strchr(p, '/');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		int r;

		if (out->n == CTLREQ_SEGS_MAX) {
			memset(out, 0, sizeof(*out));
			return diag_err(err, errsz, "more than %d path segments", CTLREQ_SEGS_MAX);
		}
		r = segment_decode(p, n, out->seg[out->n], err, errsz);
		if (r < 0) {
			memset(out, 0, sizeof(*out));
			return r;
		}
		out->n++;
		if (!end)
			break;
		p = end + 1;
	}
	return 0;
}
