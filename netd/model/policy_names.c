/*
 * policy_names - which names a policy may hold: policy and sandbox names,
 * and domain patterns (normal form, not an address, no wildcard over a
 * public suffix).  Pure but for one read: the Public Suffix List, through
 * libpsl (Debian's publicsuffix data), loaded once.  The YAML loader is
 * netd/model/policy_parse.c; the model and its queries netd/model/policy.c.
 *
 * Patterns a resolver or the DNS would read differently from the operator
 * are refused (docs/security.md, "Policy patterns"): a wildcard over a
 * public suffix ("*.org", "*.co.uk", "*.github.io"), any name inet_aton()
 * takes for an IPv4 address ("127.1", "0x7f.1", "2130706433", "010.8.8.8")
 * and any name whose last label is numeric.
 */
#include "netd/model/policy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpsl.h>

#define DNS_NAME_MAX  POLICY_PATTERN_MAX
#define DNS_LABEL_MAX 63	/* RFC 1035 2.3.4 */

/* ---- validation of single values ------------------------------------ */

bool policy_name_valid(const char *name)
{
	size_t n;

	if (!name)
		return false;
	n = strlen(name);
	if (n == 0 || n > POLICY_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');

		if (!alnum && (i == 0 || (c != '_' && c != '.' && c != '-')))
			return false;
	}
	return true;
}

/* ---- names a resolver reads as an address; public suffixes ---------- */

/*
 * True if label @s/@n is a number to an IPv4 parser: decimal digits, or
 * 0x/0X and hex digits (inet_aton(3); the WHATWG URL host parser's "ends in
 * a number" test is the same).  No TLD is numeric (RFC 3696 2).
 */
static bool label_numeric(const char *s, size_t n)
{
	size_t i = 0;
	bool hex = n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');

	if (n == 0)
		return false;
	if (hex)
		i = 2;
	for (; i < n; i++) {
		char c = s[i];

		if (!((c >= '0' && c <= '9') ||
		      (hex && ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))))
			return false;
	}
	return true;
}

static const psl_ctx_t *psl;
static pthread_once_t psl_once = PTHREAD_ONCE_INIT;

static void psl_load(void)
{
	/* The newer of libpsl's built-in list and /usr/share/publicsuffix's. */
	psl = psl_latest(NULL);
	if (!psl)
		psl = psl_builtin();
}

/*
 * Is @suffix a public suffix (ICANN or private section, or a single label
 * under the PSL's implicit "*" rule)?  @icann: which section.  Return: 1
 * yes, 0 no, -ENOENT if no list data is available (then every wildcard is
 * refused: fail closed).
 */
static int public_suffix(const char *suffix, bool *icann)
{
	pthread_once(&psl_once, psl_load);
	if (!psl)
		return -ENOENT;
	*icann = psl_is_public_suffix2(psl, suffix, PSL_TYPE_ICANN) != 0;
	return psl_is_public_suffix(psl, suffix) != 0;
}

const char *policy_registrable_domain(const char *name)
{
	pthread_once(&psl_once, psl_load);
	return psl ? psl_registrable_domain(psl, name) : NULL;
}

/* @name (normalized, may start with "*.") for names a resolver takes as an address. */
static int pattern_numeric(const char *name, char *why, size_t whysz)
{
	const char *host = name[0] == '*' ? name + 2 : name;
	const char *last = strrchr(host, '.');
	struct in_addr a4;

	last = last ? last + 1 : host;
	if (name[0] != '*' && inet_aton(host, &a4)) {
		snprintf(why, whysz, "a resolver reads it as the IPv4 address %s (inet_aton "
			 "forms: 127.1, 0x7f.1, 2130706433, 010.8.8.8); list addresses under "
			 "'cidrs'", inet_ntoa(a4));
		return -EINVAL;
	}
	if (label_numeric(last, strlen(last))) {
		snprintf(why, whysz, "the last label '%.63s' is numeric: no top-level domain is "
			 "(RFC 3696 2) and resolvers read such names as IPv4 addresses; list "
			 "addresses under 'cidrs'", last);
		return -EINVAL;
	}
	return 0;
}

/* A "*.SUFFIX" pattern whose SUFFIX is a public suffix allows everyone's names under it. */
static int pattern_public(const char *name, char *why, size_t whysz)
{
	bool icann = false;
	int r;

	if (name[0] != '*')
		return 0;
	r = public_suffix(name + 2, &icann);
	if (r < 0) {
		snprintf(why, whysz, "no Public Suffix List data to check the wildcard against "
			 "(install Debian's publicsuffix); list the names instead");
		return -EINVAL;
	}
	if (r == 0)
		return 0;
	if (!icann && strchr(name + 2, '.'))	/* a company's: github.io, githubusercontent.com */
		snprintf(why, whysz, "'%.80s' is a public suffix (private section of the Public "
			 "Suffix List): each name directly under it is a site of its own owner, "
			 "so the wildcard allows every owner's; list the hosts you need, e.g. "
			 "'HOST.%.80s'", name + 2, name + 2);
	else if (strchr(name + 2, '.') || icann)
		snprintf(why, whysz, "'%.80s' is a public suffix (ICANN section of the Public Suffix "
			 "List): the wildcard allows every site registered under it; name the "
			 "registrable domain, e.g. '*.example.%.80s', or list the hosts", name + 2,
			 name + 2);
	else
		snprintf(why, whysz, "'%.63s' is a top-level domain (every single label is one to "
			 "the Public Suffix List): the wildcard allows every name under it; name "
			 "a domain below it, e.g. '*.example.%.63s', or list the hosts", name + 2,
			 name + 2);
	return -EINVAL;
}

/*
 * Normalize domain pattern @in (NUL-terminated, @len bytes) into @out
 * (>= DNS_NAME_MAX + 1 bytes): lower-case, trailing dot stripped.  On
 * error @why says what is wrong.  @narrow: an except pattern, which only
 * takes names back, so a wildcard over a public suffix is fine there
 * ("*.s3.amazonaws.com" inside "*.amazonaws.com").
 */
int policy_pattern_norm(const char *in, size_t len, char *out, char *why, size_t whysz,
			bool narrow)
{
	struct addr a;
	size_t n = len, lab = 0;

	if (addr_parse(in, &a) == 0) {
		snprintf(why, whysz, "an IP address; list it under 'cidrs' instead");
		return -EINVAL;
	}
	if (n && in[n - 1] == '.')
		n--;		/* a fully qualified name: the root label is implied */
	if (n == 0) {
		snprintf(why, whysz, "empty name");
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)in[i] >= 0x80) {
			snprintf(why, whysz, "non-ASCII name; use the A-label (punycode) form, "
				 "e.g. xn--bcher-kva.example for b\\xc3\\xbccher.example");
			return -EINVAL;
		}
	if (n > DNS_NAME_MAX) {
		snprintf(why, whysz, "name is %zu bytes long; the limit is %u (RFC 1035 3.1)", n,
			 DNS_NAME_MAX);
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++) {
		char c = in[i];

		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
		      c == '.' || c == '*')) {
			if ((unsigned char)c > 0x20 && (unsigned char)c < 0x7f && c != '\'')
				snprintf(why, whysz, "invalid character '%c' (allowed: a-z 0-9 - _ . "
					 "and a leading '*.')", c);
			else
				snprintf(why, whysz, "invalid character 0x%02x (allowed: a-z 0-9 - _ . "
					 "and a leading '*.')", (unsigned char)c);
			return -EINVAL;
		}
		out[i] = c;
	}
	out[n] = '\0';
	for (size_t i = 0; i <= n; i++) {
		if (i < n && out[i] != '.')
			continue;
		if (i == lab) {
			snprintf(why, whysz, "empty label (a leading dot or two dots in a row)");
			return -EINVAL;
		}
		if (i - lab > DNS_LABEL_MAX) {
			snprintf(why, whysz, "label %zu bytes long; the limit is %u (RFC 1035 2.3.4)",
				 i - lab, DNS_LABEL_MAX);
			return -EINVAL;
		}
		if (memchr(out + lab, '*', i - lab)) {
			if (lab != 0 || i - lab != 1) {
				snprintf(why, whysz, "'*' is allowed only as the whole first label, "
					 "as in '*.example.com'");
				return -EINVAL;
			}
			if (i == n) {
				snprintf(why, whysz, "a lone '*' matches everything; name a domain, "
					 "as in '*.example.com'");
				return -EINVAL;
			}
		}
		lab = i + 1;
	}
	if (pattern_numeric(out, why, whysz) < 0 || (!narrow && pattern_public(out, why, whysz) < 0))
		return -EINVAL;
	return 0;
}

int policy_pattern_check(const char *pattern, char *why, size_t whysz)
{
	char buf[DNS_NAME_MAX + 2];

	if (policy_pattern_norm(pattern, strlen(pattern), buf, why, whysz, false) < 0)
		return -EINVAL;
	if (strcmp(buf, pattern) != 0) {
		snprintf(why, whysz, "not in normal form (lower case, no trailing dot)");
		return -EINVAL;
	}
	return 0;
}

bool policy_name_below(const char *name, const char *suffix)
{
	size_t n = strlen(name), s = strlen(suffix);

	return n > s + 1 && name[n - s - 1] == '.' && memcmp(name + n - s, suffix, s) == 0;
}
