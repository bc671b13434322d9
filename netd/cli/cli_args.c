/*
 * cli_args - option values of `netd sandbox create` that need more than a
 * string: --tap-owner's user and group, the numbers of --tap-queues and
 * --tap-mtu; and the reading of its options (cli_opt_next()).  See cli_args.h.
 */
#include "netd/cli/cli_args.h"

#include <errno.h>
#include <getopt.h>
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

int cli_opt_next(const char *cmd, int argc, char **argv, const struct option *opts,
		 const char *repeatable, const char *seen[128])
{
	int li = -1, c;

	opterr = 0;
	c = getopt_long(argc, argv, ":", opts, &li);
	if (c == ':') {
		/* argv[optind - 1] is the option as written (GNU getopt moves words, not it) */
		fprintf(stderr, "netd: %s: %s wants a value\n", cmd, argv[optind - 1]);
		return '?';
	}
	if (c == '?') {
		fprintf(stderr, "netd: %s: unknown option '%s'\n", cmd, argv[optind - 1]);
		return '?';
	}
	if (c < 0 || li < 0 || opts[li].has_arg == no_argument || c >= 128 ||
	    (repeatable && strchr(repeatable, c)))
		return c;
	if (seen[c]) {
		fprintf(stderr, "netd: %s: --%s given twice (\"%s\", then \"%s\"): give it once\n",
			cmd, opts[li].name, seen[c], optarg);
		return '?';
	}
	seen[c] = optarg;
	return c;
}
