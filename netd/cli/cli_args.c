/*
 * cli_args - option values of `netd sandbox create` that need more than a
 * string: --tap-owner's user and group, the numbers of --tap-queues and
 * --tap-mtu.  See cli_args.h.
 */
#include "netd/cli/cli_args.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netd/link/tap.h"

int cli_tap_owner_arg(const char *s, uint32_t *uid, bool *group_set, uint32_t *gid)
{
	char buf[256], *colon;
	uid_t u;
	gid_t g;

	if (tap_owner_parse(s, &u, &g) == 0) {
		*uid = u;
		*group_set = g != TAP_NO_GROUP;
		*gid = g;
		return 0;
	}
	if (snprintf(buf, sizeof(buf), "%s", s) >= (int)sizeof(buf))
		return -EINVAL;
	colon = strchr(buf, ':');
	if (colon)
		*colon++ = '\0';
	if (tap_owner_parse(buf, &u, &g) < 0) {
		struct passwd *pw = getpwnam(buf);

		if (!pw)
			return -ENOENT;
		u = pw->pw_uid;
	}
	*uid = u;
	*group_set = false;
	if (colon) {
		if (tap_owner_parse(colon, &g, &(gid_t){ 0 }) < 0) {
			struct group *gr = getgrnam(colon);

			if (!gr)
				return -ENOENT;
			g = gr->gr_gid;
		}
		*group_set = true;
		*gid = g;
	}
	return 0;
}

int cli_uint_arg(const char *opt, const char *s, unsigned min, unsigned max, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < min || v > max) {
		fprintf(stderr, "netd: %s wants a number from %u to %u, got \"%s\"\n", opt, min, max, s);
		return -EINVAL;
	}
	*out = (unsigned)v;
	return 0;
}
