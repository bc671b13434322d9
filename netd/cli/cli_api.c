/*
 * cli_api - the `netd` commands' client of the control socket
 * (netd/api/ctl.h, over common/httpc.h), its failures turned into exit
 * statuses (cli_help.h), and the JSON cells the commands print.
 */
#include "netd/cli/cli_api.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/httpc.h"
#include "netd/cli/cli_help.h"

static const char *socket_path;
static int api_exit = CLI_FAILED;	/* the exit status for cli_api()'s last failure */

void cli_api_socket_set(const char *path)
{
	socket_path = path;
}

const char *cli_api_socket_path(void)
{
	return socket_path;
}

int cli_api_exit(void)
{
	return api_exit;
}

/*
 * One API call; prints the error and returns NULL unless 2xx, with
 * api_exit set from the HTTP status (or CLI_UNREACHABLE).
 */
json_t *cli_api(const char *method, const char *path, json_t *body, int *ret_status)
{
	json_t *reply = NULL;
	int status = 0, r;

	r = httpc_request(socket_path, method, path, body, &status, &reply);
	json_decref(body);
	if (r < 0) {
		api_exit = CLI_FAILED;
		if (r == -ENOENT || r == -ECONNREFUSED) {
			fprintf(stderr, "netd: cannot reach the daemon at %s: %s (is `netd run` running?)\n",
				socket_path, strerror(-r));
			api_exit = CLI_UNREACHABLE;
		} else {
			fprintf(stderr, "netd: %s %s: %s\n", method, path, strerror(-r));
		}
		return NULL;
	}
	if (ret_status)
		*ret_status = status;
	api_exit = cli_exit_from_http(status);
	if (status < 200 || status > 299) {
		const char *msg = json_string_value(
			json_object_get(json_object_get(reply, "error"), "message"));

		/* The exit status says what kind of error (docs/install.md), not the HTTP code. */
		if (msg)
			fprintf(stderr, "netd: %s\n", msg);
		else
			fprintf(stderr, "netd: %s %s: the daemon answered HTTP %d\n", method, path, status);
		json_decref(reply);
		return NULL;
	}
	return reply ? reply : json_object();
}

void cli_print_json(const json_t *j)
{
	char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	if (s)
		puts(s);
	free(s);
}

const char *cli_str(const json_t *obj, const char *key)
{
	const char *s = json_string_value(json_object_get(obj, key));

	return s ? s : "-";
}

/* A row's integer cell: @key of object @o, in @buf. */
const char *cli_num(const json_t *o, const char *key, char *buf, size_t sz)
{
	snprintf(buf, sz, "%lld", (long long)json_integer_value(json_object_get(o, key)));
	return buf;
}
