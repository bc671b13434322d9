/*
 * addr - address and prefix helpers shared by the policy parser, the DNS
 * answer walker and the nf_tables module.
 */
#include "common/addr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t addr_len(int family)
{
	return family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0;
}

int addr_parse(const char *s, struct addr *ret)
{
	memset(ret, 0, sizeof(*ret));
	if (inet_pton(AF_INET, s, ret->a) == 1) {
		ret->family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, s, ret->a) == 1) {
		ret->family = AF_INET6;
		return 0;
	}
	return -EINVAL;
}

char *addr_format(const struct addr *a, char *buf, size_t sz)
{
	if (a->family == AF_INET && sz >= INET_ADDRSTRLEN) {
		/* Dotted quad without printf: the audit formats one per answer. */
		char *o = buf;

		for (int i = 0; i < 4; i++) {
			unsigned int v = a->a[i];

			if (v >= 100)
				*o++ = (char)('0' + v / 100);
			if (v >= 10)
				*o++ = (char)('0' + v / 10 % 10);
			*o++ = (char)('0' + v % 10);
			*o++ = i < 3 ? '.' : '\0';
		}
		return buf;
	}
	if (!inet_ntop(a->family, a->a, buf, (socklen_t)sz))
		snprintf(buf, sz, "?");
	return buf;
}

int prefix_parse(const char *s, struct prefix *ret)
{
	char tmp[PREFIX_STRLEN + 8];
	const char *slash = strchr(s, '/');
	size_t alen = slash ? (size_t)(slash - s) : strlen(s);
	unsigned long plen;
	char *end;

	memset(ret, 0, sizeof(*ret));
	if (alen == 0 || alen >= sizeof(tmp))
		return -EINVAL;
	memcpy(tmp, s, alen);
	tmp[alen] = '\0';
	if (addr_parse(tmp, &ret->addr) < 0)
		return -EINVAL;
	if (!slash) {
		ret->plen = (uint8_t)(addr_len(ret->addr.family) * 8);
		return 0;
	}
	if (slash[1] < '0' || slash[1] > '9')
		return -EINVAL;
	errno = 0;
	plen = strtoul(slash + 1, &end, 10);
	if (errno || *end || plen > addr_len(ret->addr.family) * 8 || end - (slash + 1) > 3)
		return -EINVAL;
	ret->plen = (uint8_t)plen;
	for (size_t bit = plen; bit < addr_len(ret->addr.family) * 8; bit++)
		if (ret->addr.a[bit / 8] & (0x80 >> (bit % 8)))
			return -EDOM;
	return 0;
}

char *prefix_format(const struct prefix *p, char *buf, size_t sz)
{
	char a[ADDR_STRLEN];

	snprintf(buf, sz, "%s/%u", addr_format(&p->addr, a, sizeof(a)), p->plen);
	return buf;
}

bool prefix_contains(const struct prefix *p, const struct addr *a)
{
	unsigned int full = p->plen / 8, rest = p->plen % 8;

	if (p->addr.family != a->family)
		return false;
	if (memcmp(p->addr.a, a->a, full) != 0)
		return false;
	if (rest) {
		uint8_t mask = (uint8_t)(0xff << (8 - rest));

		if ((p->addr.a[full] & mask) != (a->a[full] & mask))
			return false;
	}
	return true;
}

bool addr_equal(const struct addr *x, const struct addr *y)
{
	return x->family == y->family && memcmp(x->a, y->a, addr_len(x->family)) == 0;
}

int addr_from_sockaddr(const struct sockaddr *sa, struct addr *ret)
{
	memset(ret, 0, sizeof(*ret));
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)sa;

		ret->family = AF_INET;
		memcpy(ret->a, &sin->sin_addr, 4);
		return 0;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)sa;

		if (IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) {
			ret->family = AF_INET;
			memcpy(ret->a, &sin6->sin6_addr.s6_addr[12], 4);
		} else {
			ret->family = AF_INET6;
			memcpy(ret->a, &sin6->sin6_addr, 16);
		}
		return 0;
	}
	return -EAFNOSUPPORT;
}

void prefix_last(const struct prefix *p, struct addr *ret)
{
	*ret = p->addr;
	for (size_t bit = p->plen; bit < addr_len(p->addr.family) * 8; bit++)
		ret->a[bit / 8] |= (uint8_t)(0x80 >> (bit % 8));
}
