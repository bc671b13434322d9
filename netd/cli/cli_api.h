/*
 * cli_api - the `netd` commands' client of the control socket
 * (netd/api/ctl.h): one request, its failure said on stderr and kept as
 * an exit status (enum cli_exit, cli_help.h); and the JSON cells the
 * commands print.  Internal to netd/cli/.
 */
#ifndef NETD_CLI_API_H
#define NETD_CLI_API_H

#include <stddef.h>

#include <jansson.h>

/* cli_api_socket_set() - the control socket's path for what follows (borrowed: keep it alive). */
void cli_api_socket_set(const char *path);

/* cli_api_socket_path() - the path cli_api_socket_set() was given (NULL before). */
const char *cli_api_socket_path(void);

/*
 * cli_api() - @method @path on the control socket with @body (taken, may
 * be NULL).  Return: the 2xx answer (the caller frees it; an empty object
 * when it had no body), with *@ret_status (may be NULL) its HTTP status;
 * NULL when unreachable or not 2xx, the error said on stderr ("cannot
 * reach the daemon", or the answer's error.message) and cli_api_exit()
 * set from the status (CLI_UNREACHABLE when the socket is not there).
 */
json_t *cli_api(const char *method, const char *path, json_t *body, int *ret_status);

/* cli_api_exit() - the exit status of cli_api()'s last failure (CLI_FAILED before any). */
int cli_api_exit(void);

/* cli_print_json() - @j indented, its members in order, and a newline, on stdout. */
void cli_print_json(const json_t *j);

/* cli_str() - the string member @key of @obj, or "-" when it is absent or not a string. */
const char *cli_str(const json_t *obj, const char *key);

/* cli_num() - the integer member @key of @o as decimal text in @buf (@sz bytes); returns @buf. */
const char *cli_num(const json_t *o, const char *key, char *buf, size_t sz);

#endif
