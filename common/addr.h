/*
 * addr - IPv4/IPv6 addresses and prefixes, in network byte order, with
 * parsing and formatting.  Pure; no I/O.
 */
#ifndef NETD_COMMON_ADDR_H
#define NETD_COMMON_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* One address; @family is AF_INET (first 4 bytes of @a used) or AF_INET6. */
struct addr {
	uint8_t family;
	uint8_t a[16];		/* network byte order */
};

/* A prefix (CIDR): @addr with host bits zero, @plen 0..32 or 0..128. */
struct prefix {
	struct addr addr;
	uint8_t plen;
};

/* A port range (a policy rule's ports), host byte order, @lo <= @hi;
 * @lo == @hi for one port. */
struct port_range {
	uint16_t lo, hi;
};

#define ADDR_STRLEN   46	/* INET6_ADDRSTRLEN */
#define PREFIX_STRLEN 50

/* addr_len() - bytes used by @family: 4 or 16 (0 if neither). */
size_t addr_len(int family);

/*
 * addr_parse() - parse a numeric IPv4 or IPv6 address (no brackets, no
 * port, no zone).  Return: 0; -EINVAL if it is not one.
 */
int addr_parse(const char *s, struct addr *ret);

/* addr_format() - numeric text of @a into @buf (>= ADDR_STRLEN). Return: @buf. */
char *addr_format(const struct addr *a, char *buf, size_t sz);

/*
 * prefix_parse() - parse "ADDR/LEN" (or a bare address, taken as /32 or
 * /128).  Host bits must be zero: "10.0.0.1/8" is an error, so a typo in a
 * policy never silently widens or narrows a rule.
 * Return: 0; -EINVAL (bad text or length); -EDOM (host bits set).
 */
int prefix_parse(const char *s, struct prefix *ret);

/* prefix_format() - "ADDR/LEN" into @buf (>= PREFIX_STRLEN). Return: @buf. */
char *prefix_format(const struct prefix *p, char *buf, size_t sz);

/* prefix_contains() - true if @a (same family) lies inside @p. */
bool prefix_contains(const struct prefix *p, const struct addr *a);

/* addr_equal() - same family and same bytes. */
bool addr_equal(const struct addr *x, const struct addr *y);

/*
 * addr_from_sockaddr() - copy the address of an AF_INET/AF_INET6 sockaddr;
 * an IPv4-mapped IPv6 address (::ffff:a.b.c.d) becomes AF_INET.
 * Return: 0; -EAFNOSUPPORT.
 */
int addr_from_sockaddr(const struct sockaddr *sa, struct addr *ret);

/*
 * prefix_last() - the highest address inside @p (broadcast-style end of the
 * range), for interval set elements.
 */
void prefix_last(const struct prefix *p, struct addr *ret);

#endif
