/*
 * ipam - running the IPAM delegate (see ipam.h).  fork/exec with two pipes;
 * bounded output; SIGPIPE is ignored by main().
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cni-plugin/ipam.h"

#define IPAM_OUT_MAX    (1u << 20)	/* bytes of an IPAM plugin's answer we read */

static const char *stdin_buf;
static size_t stdin_len;

void ipam_stdin(const char *buf, size_t len)
{
	stdin_buf = buf;
	stdin_len = len;
}

static const char *jstr(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* The IPAM plugin's path: the first CNI_PATH directory with an executable @type. */
static int ipam_find(const char *type, char *out, size_t sz)
{
	const char *p = getenv("CNI_PATH");

	while (p && *p) {
		const char *end = strchr(p, ':');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		struct stat st;

		if (n > 0 && (size_t)snprintf(out, sz, "%.*s/%s", (int)n, p, type) < sz &&
		    stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
			return 0;
		p += n;
		if (*p == ':')
			p++;
	}
	return -ENOENT;
}

int ipam_exec(const struct cni_conf *c, const char *cmd, json_t **ret,
		     struct cni_err *err)
{
	char path[PATH_MAX], *out = NULL;
	int in_p[2] = { -1, -1 }, out_p[2] = { -1, -1 }, status, r;
	size_t len = 0, off = 0;
	json_t *o;
	pid_t pid;

	if (ret)
		*ret = NULL;
	if (ipam_find(c->ipam_type, path, sizeof(path)) < 0)
		return cni_err_set(err, CNI_ERR_CONFIG, "Invalid Configuration",
				   "IPAM plugin \"%s\" not found in CNI_PATH (%s)", c->ipam_type,
				   getenv("CNI_PATH") ? getenv("CNI_PATH") : "unset");
	out = malloc(IPAM_OUT_MAX + 1);
	if (!out || pipe2(in_p, O_CLOEXEC) < 0 || pipe2(out_p, O_CLOEXEC) < 0) {
		r = cni_err_set(err, CNI_ERR_IO, "I/O failure", "IPAM plugin %s: %s",
				c->ipam_type, strerror(errno ? errno : ENOMEM));
		goto out;
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		r = cni_err_set(err, CNI_ERR_IO, "I/O failure", "fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0) {
		char *argv[] = { path, NULL };

		if (dup2(in_p[0], STDIN_FILENO) < 0 || dup2(out_p[1], STDOUT_FILENO) < 0 ||
		    setenv("CNI_COMMAND", cmd, 1) < 0)
			_exit(127);
		execv(path, argv);
		_exit(127);
	}
	close(in_p[0]);
	close(out_p[1]);
	in_p[0] = out_p[1] = -1;
	/* A plugin that does not read all of stdin must not kill us (SIGPIPE ignored). */
	while (off < stdin_len) {
		ssize_t n = write(in_p[1], stdin_buf + off, stdin_len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	close(in_p[1]);
	in_p[1] = -1;
	for (;;) {
		ssize_t n = read(out_p[0], out + len, IPAM_OUT_MAX - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		if (len == IPAM_OUT_MAX)
			break;
	}
	close(out_p[0]);
	out_p[0] = -1;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	out[len] = '\0';
	o = json_loadb(out, len, 0, NULL);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		json_t *code = json_object_get(o, "code");
		const char *m = jstr(o, "msg"), *dt = jstr(o, "details");

		r = cni_err_set(err, json_is_integer(code) ? (int)json_integer_value(code) : CNI_ERR_IO,
				"IPAM plugin failed", "%s %s: %s%s%s", c->ipam_type, cmd,
				m ? m : WIFEXITED(status) ? "exited non-zero without an error" :
							    "killed by a signal",
				dt ? ": " : "", dt ? dt : "");
		json_decref(o);
		goto out;
	}
	if (ret && !json_is_object(o)) {
		json_decref(o);
		r = cni_err_set(err, CNI_ERR_DECODE, "Failed to decode content",
				"IPAM plugin %s %s: the result is not a JSON object", c->ipam_type,
				cmd);
		goto out;
	}
	if (ret)
		*ret = o;
	else
		json_decref(o);
	r = 0;
out:
	for (int i = 0; i < 2; i++) {
		if (in_p[i] >= 0)
			close(in_p[i]);
		if (out_p[i] >= 0)
			close(out_p[i]);
	}
	free(out);
	return r;
}

void ipam_undo(const struct cni_conf *c)
{
	struct cni_err e = { 0 };

	if (ipam_exec(c, "DEL", NULL, &e) < 0)
		fprintf(stderr, "netd-cni: releasing the IPAM address failed: %s: %s\n", e.msg,
			e.details);
}
