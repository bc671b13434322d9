/*
 * cli_exec - `netd exec [--user U[:G]] [--no-caps | --net-admin] NAME --
 * COMMAND`: the sandbox's namespace from the daemon (a tap has none), the
 * daemon's own files hidden from the command (/v1/status "paths" and this
 * client's socket), then netd/link/nsexec.h runs it.
 */
#include "netd/cli/cli_exec.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "netd/cli/cli_api.h"
#include "netd/cli/cli_help.h"
#include "netd/link/link.h"
#include "netd/link/nsexec.h"
#include "netd/model/policy.h"

/*
 * Can this process enter sandbox @name's netns at @netns?  Return: 0; else
 * an exit status, said why on stderr: a /run/netns entry that is a plain
 * file here is mounted in another mount namespace (netd's own, when it was
 * started under `ip netns exec`).
 */
static int exec_netns_visible(const char *name, const char *netns)
{
	int fd = link_netns_open(netns);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (fd == -EINVAL)
		fprintf(stderr, "netd: sandbox %s: %s is not visible in this mount namespace as a "
			"network namespace: netd mounted it in a mount namespace of its own (was it "
			"started under `ip netns exec`? start it with `nsenter --net=...` instead; "
			"docs/operations.md)\n", name, netns);
	else
		fprintf(stderr, "netd: sandbox %s: %s: %s\n", name, netns, strerror(-fd));
	return 126;
}

/* "paths" members of /v1/status that `netd exec` hides, and the client's socket. */
static const char *const exec_hide_keys[] = { "config", "socket", "state_dir", "policy_dir",
					      "audit_log" };
#define EXEC_MAX_HIDE (sizeof(exec_hide_keys) / sizeof(exec_hide_keys[0]) + 1)

/* Is @path one of the first @n entries of @list? */
static bool path_listed(const char *const list[], size_t n, const char *path)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(list[i], path) == 0)
			return true;
	return false;
}

/*
 * The paths netd uses, as the daemon reports them (it read its config; we
 * did not), plus the socket this client reached it on, into @hide
 * (NULL-terminated, EXEC_MAX_HIDE + 1 entries, pointing into @buf).
 * Return: 0; -EIO (API failure, printed; status in cli_api_exit()); -EPROTO (no
 * "paths" in the answer, printed).
 */
static int exec_hidden_paths(const char *hide[], char buf[][PATH_MAX])
{
	json_t *reply = cli_api("GET", "/v1/status", NULL, NULL), *paths;
	size_t n = 0;

	if (!reply)
		return -EIO;
	paths = json_object_get(reply, "paths");
	if (!json_is_object(paths)) {
		json_decref(reply);
		fprintf(stderr, "netd: exec: the daemon did not say where its files are (/v1/status "
			"has no \"paths\"), so the command could reach them: not running it\n");
		return -EPROTO;
	}
	for (size_t k = 0; k < sizeof(exec_hide_keys) / sizeof(exec_hide_keys[0]); k++) {
		const char *p = json_string_value(json_object_get(paths, exec_hide_keys[k]));

		if (!p || !*p || path_listed(hide, n, p))
			continue;
		snprintf(buf[n], PATH_MAX, "%s", p);
		hide[n] = buf[n];
		n++;
	}
	json_decref(reply);
	if (!realpath(cli_api_socket_path(), buf[n]))
		snprintf(buf[n], PATH_MAX, "%s", cli_api_socket_path());
	if (!path_listed(hide, n, buf[n])) {
		hide[n] = buf[n];
		n++;
	}
	hide[n] = NULL;
	return 0;
}

int cli_exec(int argc, char **argv)
{
	static const char exec_usage[] =
		"netd: usage: netd exec [--user USER[:GROUP]] [--no-caps | --net-admin] NAME -- "
		"COMMAND [ARG...]\n";
	char path[512], netns[PATH_MAX];
	static char hide_buf[EXEC_MAX_HIDE][PATH_MAX];
	const char *hide[EXEC_MAX_HIDE + 1];
	struct nsexec_cred cred = { 0 };
	const char *name = NULL;
	json_t *reply;
	int i, r;

	if (argc < 2)
		return cli_usage_of(argc, argv);
	/* Options and NAME, in any order, up to "--". */
	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "--no-caps") == 0) {
			cred.no_caps = true;
		} else if (strcmp(argv[i], "--net-admin") == 0) {
			cred.net_admin = true;
		} else if (strcmp(argv[i], "--user") == 0 && i + 1 < argc) {
			r = nsexec_parse_user(argv[++i], &cred);
			if (r < 0) {
				fprintf(stderr, "netd: --user %s: %s\n", argv[i],
					r == -ENOENT ? "no such user or group"
						     : "expected USER[:GROUP] (names or numbers; "
						       "a numeric UID without a passwd entry needs :GROUP)");
				return 2;
			}
		} else if (argv[i][0] == '-' || name) {
			fputs(exec_usage, stderr);
			return 2;
		} else {
			name = argv[i];
		}
	}
	if (!name || i + 1 >= argc) {
		fputs(exec_usage, stderr);
		return 2;
	}
	/* uid 0 owns the host's files, netd's policies among them, with or without capabilities. */
	if (cred.no_caps && (!cred.set_user || cred.uid == 0)) {
		fprintf(stderr, "netd: --no-caps needs --user with a non-root user (uid 0 owns the "
			"host's files, netd's among them, with or without capabilities): e.g. "
			"netd exec --user nobody --no-caps %s -- ...\n", name);
		return 2;
	}
	if (cred.no_caps && cred.net_admin) {
		fputs("netd: --net-admin and --no-caps contradict each other\n", stderr);
		return 2;
	}
	if (!policy_name_valid(name)) {
		fprintf(stderr, "netd: invalid sandbox name \"%s\"\n", name);
		return CLI_REJECTED;
	}
	snprintf(path, sizeof(path), "/v1/sandboxes/%s", name);
	reply = cli_api("GET", path, NULL, NULL);
	if (!reply)
		return cli_api_exit();	/* not found, daemon unreachable, ... (docs/install.md) */
	if (strcmp(cli_str(reply, "kind"), "tap") == 0) {
		fprintf(stderr, "netd: sandbox %s is a microVM's tap (%s): there is no namespace to run "
			"a command in; run it inside the guest\n", name, cli_str(reply, "tap"));
		json_decref(reply);
		return CLI_USAGE;
	}
	snprintf(netns, sizeof(netns), "%s", cli_str(reply, "netns"));
	json_decref(reply);
	r = exec_netns_visible(name, netns);
	if (r != 0)
		return r;
	r = exec_hidden_paths(hide, hide_buf);
	if (r < 0)
		return r == -EPROTO ? CLI_FAILED : cli_api_exit();
	/* netd writes /etc/netns/NAME/resolv.conf for every sandbox, attached ones too. */
	r = nsexec_run(netns, name, cred.set_user || cred.no_caps || cred.net_admin ? &cred : NULL,
		       hide, argv + i + 1);
	if (r >= 0)
		return r;	/* the command's own status */
	fprintf(stderr, "netd: exec %s in sandbox %s: %s\n", argv[i + 1], name, strerror(-r));
	return r == -ENOENT ? 127 : 126;
}
