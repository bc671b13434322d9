/*
 * ruleset - cut policy CIDR rules and prefix lists into the disjoint
 * intervals nf_tables interval sets require (see ruleset.h).  Pure.
 *
 * Addresses are kept in 16-byte big-endian arrays; an IPv4 address uses the
 * first 4 bytes and the rest stay zero, so memcmp() over 16 bytes orders
 * both families correctly.
 */
#include "netd/fw/ruleset.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* a += 1 over @len bytes; true if it wrapped (a was all ones). */
static bool a_inc(uint8_t *a, size_t len)
{
	for (size_t i = len; i-- > 0;)
		if (++a[i] != 0)
			return false;
	return true;
}

/* a -= 1 over @len bytes; @a must not be zero. */
static void a_dec(uint8_t *a, size_t len)
{
	for (size_t i = len; i-- > 0;)
		if (a[i]-- != 0)
			return;
}

static int cmp_range(const void *x, const void *y)
{
	const struct ruleset_range *a = x, *b = y;

	return memcmp(a->lo, b->lo, 16);
}

int ruleset_merge_prefixes(int family, const struct prefix *p, size_t n,
			   struct ruleset_range *out, size_t max)
{
	size_t len = addr_len(family), m = 0, k = 0;
	struct ruleset_range *tmp;

	if (!len)
		return -EAFNOSUPPORT;
	/* Any number in (the host's own addresses grow with its sandboxes); @max bounds the output. */
	tmp = calloc(n ? n : 1, sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct addr last;

		if (p[i].addr.family != family || p[i].plen > len * 8)
			continue;
		prefix_last(&p[i], &last);
		memcpy(tmp[m].lo, p[i].addr.a, len);
		memcpy(tmp[m].hi, last.a, len);
		m++;
	}
	qsort(tmp, m, sizeof(*tmp), cmp_range);
	for (size_t i = 0; i < m; i++) {
		if (k > 0) {
			struct ruleset_range *prev = &out[k - 1];
			uint8_t next[16];

			/* Overlapping or touching: [a,b] and [b+1,c] become [a,c]. */
			memcpy(next, prev->hi, 16);
			if (a_inc(next, len) || memcmp(tmp[i].lo, next, 16) <= 0) {
				if (memcmp(tmp[i].hi, prev->hi, 16) > 0)
					memcpy(prev->hi, tmp[i].hi, 16);
				continue;
			}
		}
		if (k >= max) {
			free(tmp);
			return -E2BIG;
		}
		out[k++] = tmp[i];
	}
	free(tmp);
	return (int)k;
}

struct pr {
	uint16_t lo, hi;
};

static int cmp_pr(const void *x, const void *y)
{
	const struct pr *a = x, *b = y;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return a->hi < b->hi ? -1 : a->hi > b->hi;
}

static int cmp_box_proto(const void *x, const void *y)
{
	const struct ruleset_box *a = x, *b = y;

	return (int)a->proto - (int)b->proto;
}

static int cmp_box(const void *x, const void *y)
{
	const struct ruleset_box *a = x, *b = y;

	if (a->proto != b->proto)
		return (int)a->proto - (int)b->proto;
	if (a->port_lo != b->port_lo)
		return a->port_lo < b->port_lo ? -1 : 1;
	if (a->port_hi != b->port_hi)
		return a->port_hi < b->port_hi ? -1 : 1;
	return memcmp(a->lo, b->lo, 16);
}

static int cmp_a16(const void *x, const void *y)
{
	return memcmp(x, y, 16);
}

/* The raw (possibly overlapping) boxes of @pol for @family. */
static int raw_boxes(const struct policy *pol, int family, size_t len, struct ruleset_box **ret)
{
	struct ruleset_box *raw;
	size_t n = 0, k = 0;

	*ret = NULL;
	for (size_t r = 0; r < pol->n_rules; r++) {
		const struct policy_rule *rule = &pol->rules[r];
		size_t nc = 0;

		for (size_t c = 0; c < rule->n_cidrs; c++)
			nc += rule->cidrs[c].addr.family == family;
		if (nc && rule->n_ports > RULESET_ELEMS_MAX)
			return -E2BIG;
		n += nc * (rule->n_ports ? rule->n_ports : 1);
		if (n > RULESET_ELEMS_MAX)
			return -E2BIG;
	}
	if (n == 0)
		return 0;
	raw = calloc(n, sizeof(*raw));
	if (!raw)
		return -ENOMEM;
	for (size_t r = 0; r < pol->n_rules; r++) {
		const struct policy_rule *rule = &pol->rules[r];

		for (size_t c = 0; c < rule->n_cidrs; c++) {
			const struct prefix *p = &rule->cidrs[c];
			size_t np = rule->n_ports ? rule->n_ports : 1;
			struct addr last;

			if (p->addr.family != family)
				continue;
			if (p->plen > len * 8) {
				free(raw);
				return -EINVAL;
			}
			prefix_last(p, &last);
			for (size_t i = 0; i < np; i++) {
				struct ruleset_box *b = &raw[k++];

				memcpy(b->lo, p->addr.a, len);
				memcpy(b->hi, last.a, len);
				b->proto = rule->proto;
				b->port_lo = rule->n_ports ? rule->ports[i].lo : 0;
				b->port_hi = rule->n_ports ? rule->ports[i].hi : 65535;
				if (b->port_lo > b->port_hi) {
					free(raw);
					return -EINVAL;
				}
			}
		}
	}
	*ret = raw;
	return (int)k;
}

/*
 * The boxes being cut: grown as they come, never past @max.  (All of a
 * reload's or restart's sandboxes hold theirs at once: the array is sized
 * from what it holds, not from the worst case.)
 */
struct boxbuf {
	struct ruleset_box *v;
	size_t n, cap, max;
};

/* A new box at the end of @o.  Return: it; NULL with *@err = -E2BIG or -ENOMEM. */
static struct ruleset_box *boxbuf_push(struct boxbuf *o, int *err)
{
	if (o->n == o->cap) {
		size_t nc = o->cap ? 2 * o->cap : 16;
		struct ruleset_box *nv;

		if (o->n >= o->max) {
			*err = -E2BIG;
			return NULL;
		}
		if (nc > o->max)
			nc = o->max;
		nv = realloc(o->v, nc * sizeof(*nv));
		if (!nv) {
			*err = -ENOMEM;
			return NULL;
		}
		o->v = nv;
		o->cap = nc;
	}
	return &o->v[o->n++];
}

/*
 * Cut one protocol's boxes along every address boundary (each box's start
 * and end+1): inside one elementary address segment the covering boxes all
 * span it completely, so their port ranges can simply be merged.
 */
static int cut_group(const struct ruleset_box *g, size_t n, size_t len, struct boxbuf *out,
		     uint8_t (*bnd)[16], struct pr *ports)
{
	size_t nb = 0, u = 0;
	int err = 0;

	for (size_t i = 0; i < n; i++) {
		memcpy(bnd[nb++], g[i].lo, 16);
		memcpy(bnd[nb], g[i].hi, 16);
		if (!a_inc(bnd[nb], len))
			nb++;
	}
	qsort(bnd, nb, 16, cmp_a16);
	for (size_t i = 0; i < nb; i++)
		if (u == 0 || memcmp(bnd[u - 1], bnd[i], 16) != 0)
			memmove(bnd[u++], bnd[i], 16);

	for (size_t s = 0; s < u; s++) {
		uint8_t seg_hi[16];
		size_t np = 0, mp = 0;

		if (s + 1 < u) {
			memcpy(seg_hi, bnd[s + 1], 16);
			a_dec(seg_hi, len);
		} else {
			memset(seg_hi, 0, 16);
			memset(seg_hi, 0xff, len);
		}
		for (size_t i = 0; i < n; i++)
			if (memcmp(g[i].lo, bnd[s], 16) <= 0 && memcmp(bnd[s], g[i].hi, 16) <= 0)
				ports[np++] = (struct pr){ g[i].port_lo, g[i].port_hi };
		if (np == 0)
			continue;	/* a gap between boxes */
		qsort(ports, np, sizeof(*ports), cmp_pr);
		for (size_t i = 0; i < np; i++) {
			if (mp > 0 && (uint32_t)ports[i].lo <= (uint32_t)ports[mp - 1].hi + 1) {
				if (ports[i].hi > ports[mp - 1].hi)
					ports[mp - 1].hi = ports[i].hi;
				continue;
			}
			ports[mp++] = ports[i];
		}
		for (size_t i = 0; i < mp; i++) {
			struct ruleset_box *b = boxbuf_push(out, &err);

			if (!b)
				return err;
			memcpy(b->lo, bnd[s], 16);
			memcpy(b->hi, seg_hi, 16);
			b->proto = g[0].proto;
			b->port_lo = ports[i].lo;
			b->port_hi = ports[i].hi;
		}
	}
	return 0;
}

int ruleset_cidr_boxes(const struct policy *pol, int family, struct ruleset_box **ret)
{
	size_t len = addr_len(family), m = 0;
	struct boxbuf ob = { .max = 4 * RULESET_ELEMS_MAX };
	struct ruleset_box *raw = NULL, *out;
	uint8_t (*bnd)[16] = NULL;
	struct pr *ports = NULL;
	int n, r;

	*ret = NULL;
	if (!len)
		return -EAFNOSUPPORT;
	n = raw_boxes(pol, family, len, &raw);
	if (n <= 0)
		return n;
	r = -ENOMEM;
	bnd = calloc(2 * (size_t)n, 16);
	ports = calloc((size_t)n, sizeof(*ports));
	if (!bnd || !ports)
		goto fail;

	qsort(raw, (size_t)n, sizeof(*raw), cmp_box_proto);
	for (size_t gs = 0, ge; gs < (size_t)n; gs = ge) {
		for (ge = gs + 1; ge < (size_t)n && raw[ge].proto == raw[gs].proto; ge++)
			;
		r = cut_group(raw + gs, ge - gs, len, &ob, bnd, ports);
		if (r < 0)
			goto fail;
	}

	/* Re-join neighbouring segments that ended up with the same ports. */
	out = ob.v;
	qsort(out, ob.n, sizeof(*out), cmp_box);
	for (size_t i = 0; i < ob.n; i++) {
		if (m > 0) {
			struct ruleset_box *prev = &out[m - 1];
			uint8_t next[16];

			memcpy(next, prev->hi, 16);
			if (prev->proto == out[i].proto && prev->port_lo == out[i].port_lo &&
			    prev->port_hi == out[i].port_hi && !a_inc(next, len) &&
			    memcmp(next, out[i].lo, 16) == 0) {
				memcpy(prev->hi, out[i].hi, 16);
				continue;
			}
		}
		out[m++] = out[i];
	}
	r = -E2BIG;
	if (m > RULESET_ELEMS_MAX)
		goto fail;
	free(raw);
	free(bnd);
	free(ports);
	/* Merging only shrinks: give back what the cut needed beyond the result. */
	if (m < ob.cap) {
		struct ruleset_box *shrunk = m ? realloc(out, m * sizeof(*out)) : NULL;

		if (shrunk || !m) {
			if (!m)
				free(out);
			out = shrunk;
		}
	}
	*ret = out;
	return (int)m;
fail:
	free(raw);
	free(ob.v);
	free(bnd);
	free(ports);
	return r;
}
