/*
 * test_gw_creds - the gateway's secrets (netd/gw/creds.c): files with the
 * right and wrong modes, symbolic links, FIFOs, sizes, trailing newlines,
 * control bytes; systemd credentials with and without
 * $CREDENTIALS_DIRECTORY; inline values; the format applied; no message
 * with a secret in it; the host match.  Files live in a mkdtemp()
 * directory, removed at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "netd/gw/creds.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_gw_creds.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* @name in the temp dir with @len bytes @data and @mode; its path in @path. */
static void put(const char *name, const char *data, size_t len, mode_t mode, char *path,
		size_t sz)
{
	int fd;

	snprintf(path, sz, "%s/%s", dir, name);
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
	assert_int_equal(chmod(path, mode), 0);
}

/* A config with one credential whose source is @src ("file: /x", ...). */
static void conf(struct config *c, const char *format, const char *src)
{
	char y[1024];
	struct diag err = { 0 };
	char msg[1024];

	snprintf(y, sizeof(y), "credentials:\n  openai:\n    header: Authorization\n"
		 "    format: \"%s\"\n    placeholder: netd-placeholder-openai-0001\n"
		 "    hosts: [api.openai.com, \"*.openai.azure.com\"]\n    %s\n", format, src);
	assert_int_equal(config_init(c), 0);
	if (config_parse(c, y, strlen(y), "netd.yaml", &err) != 0)
		fail_msg("%s", diag_format(&err, msg, sizeof(msg)));
}

/* Load a one-credential config with secret file @data/@len of @mode: 0 and the value, or the error. */
static int load_file(const char *data, size_t len, mode_t mode, struct gw_creds **cs,
		     struct diag *err)
{
	char path[128], src[160];
	struct config c;
	int r;

	put("secret", data, len, mode, path, sizeof(path));
	snprintf(src, sizeof(src), "file: %s", path);
	conf(&c, "Bearer {secret}", src);
	r = gw_creds_load(&c, cs, err);
	config_done(&c);
	return r;
}

static void file_ok(const char *data, size_t len, const char *want)
{
	struct gw_creds *cs = NULL;
	struct diag err = { 0 };
	const struct gw_credential *g;
	char msg[1024];

	if (load_file(data, len, 0600, &cs, &err) != 0)
		fail_msg("%s", diag_format(&err, msg, sizeof(msg)));
	g = gw_creds_find(cs, "openai");
	assert_non_null(g);
	assert_int_equal(g->value_len, strlen(want));
	assert_memory_equal(g->value, want, g->value_len);
	/* the secret's own bytes inside the value: after "Bearer " (netd/gw/scrub.h) */
	assert_int_equal(g->secret_off, 7);
	assert_int_equal(g->secret_len, g->value_len - 7);
	gw_creds_free(cs);
}

static void file_bad(const char *data, size_t len, mode_t mode, int want, const char *frag)
{
	struct gw_creds *cs = (struct gw_creds *)1;
	struct diag err = { 0 };
	char msg[1024];
	int r = load_file(data, len, mode, &cs, &err);

	diag_format(&err, msg, sizeof(msg));
	if (r != want || !strstr(msg, frag))
		fail_msg("r=%d \"%s\", want %d \"...%s...\"", r, msg, want, frag);
	assert_null(cs);
	/* located at the credential's file: in netd.yaml, naming it, never its bytes */
	assert_string_equal(err.file, "netd.yaml");
	assert_int_equal(err.line, 7);
	assert_int_equal(err.col, 11);
	assert_non_null(strstr(msg, "credentials.openai"));
	assert_null(strstr(msg, "SECRET"));
}

static void test_file(void **state)
{
	(void)state;
	file_ok("sk-SECRET", 9, "Bearer sk-SECRET");
	file_ok("sk-SECRET\n", 10, "Bearer sk-SECRET");
	file_ok("sk-SECRET\r\n", 11, "Bearer sk-SECRET");
	file_ok("sk SECRET", 9, "Bearer sk SECRET");	/* an inner space is a byte like any */
	{
		struct gw_creds *cs = NULL;
		struct diag err = { 0 };

		/* 0400 is fine too */
		assert_int_equal(load_file("sk-SECRET\n", 10, 0400, &cs, &err), 0);
		gw_creds_free(cs);
	}
	file_bad("sk-SECRET\n\n", 11, 0600, -EINVAL, "control byte at byte 9");
	file_bad("sk-SECRET\r", 10, 0600, -EINVAL, "control byte at byte 9");
	file_bad("sk-SE\nCRET", 10, 0600, -EINVAL, "control byte at byte 5");
	file_bad("sk-SE\rCRET", 10, 0600, -EINVAL, "control byte at byte 5");
	file_bad("sk-SE\0CRET", 10, 0600, -EINVAL, "control byte at byte 5");
	file_bad("sk-SE\tCRET", 10, 0600, -EINVAL, "control byte at byte 5");
	file_bad("sk-SE\x7f" "CRET", 10, 0600, -EINVAL, "control byte at byte 5");
	file_bad("", 0, 0600, -EINVAL, "is empty");
	file_bad("\n", 1, 0600, -EINVAL, "is empty");
	file_bad(" SECRET", 7, 0600, -EINVAL, "starts or ends with a space");
	file_bad("sk-SECRET", 9, 0640, -EINVAL, "has mode 0640: group and others must have no access");
	file_bad("sk-SECRET", 9, 0604, -EINVAL, "has mode 0604");
	file_bad("sk-SECRET", 9, 0620, -EINVAL, "has mode 0620");
	file_bad("sk-SECRET", 9, 0644, -EINVAL, "chmod 0600");
}

static void test_file_size(void **state)
{
	char *big = malloc(GW_CREDS_FILE_MAX + 2);

	(void)state;
	assert_non_null(big);
	memset(big, 'S', GW_CREDS_FILE_MAX + 1);
	/* exactly the limit, "Bearer " + 8192 bytes */
	{
		struct gw_creds *cs = NULL;
		struct diag err = { 0 };

		assert_int_equal(load_file(big, GW_CREDS_FILE_MAX, 0600, &cs, &err), 0);
		assert_int_equal(cs->v[0].value_len, 7 + GW_CREDS_FILE_MAX);
		gw_creds_free(cs);
	}
	file_bad(big, GW_CREDS_FILE_MAX + 1, 0600, -EINVAL, "is 8193 bytes; the limit is 8192");
	free(big);
}

static void test_file_kinds(void **state)
{
	char path[128], link[128], src[200];
	struct gw_creds *cs = (struct gw_creds *)1;
	struct diag err = { 0 };
	struct config c;

	(void)state;
	/* a symbolic link to a good file: refused (O_NOFOLLOW) */
	put("target", "sk-1\n", 5, 0600, path, sizeof(path));
	snprintf(link, sizeof(link), "%s/link", dir);
	assert_int_equal(symlink(path, link), 0);
	snprintf(src, sizeof(src), "file: %s", link);
	conf(&c, "{secret}", src);
	assert_int_equal(gw_creds_load(&c, &cs, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "is a symbolic link"));
	assert_null(cs);
	config_done(&c);
	/* a FIFO: not a regular file (and the open does not hang) */
	snprintf(path, sizeof(path), "%s/fifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	snprintf(src, sizeof(src), "file: %s", path);
	conf(&c, "{secret}", src);
	assert_int_equal(gw_creds_load(&c, &cs, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "is not a regular file"));
	config_done(&c);
	/* a directory */
	snprintf(src, sizeof(src), "file: %s", dir);
	conf(&c, "{secret}", src);
	assert_int_equal(gw_creds_load(&c, &cs, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "is not a regular file"));
	config_done(&c);
	/* missing */
	snprintf(src, sizeof(src), "file: %s/none", dir);
	conf(&c, "{secret}", src);
	assert_int_equal(gw_creds_load(&c, &cs, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "credentials.openai.file: cannot open"));
	assert_non_null(strstr(err.msg, "/none: No such file"));
	config_done(&c);
}

/* Owned by someone else: only root can make such a file, so only as root. */
static void test_file_owner(void **state)
{
	char path[128], src[160];
	struct gw_creds *cs = NULL;
	struct diag err = { 0 };
	struct config c;

	(void)state;
	if (geteuid() != 0)
		skip();
	put("owned", "sk-1", 4, 0600, path, sizeof(path));
	assert_int_equal(chown(path, 65534, 65534), 0);
	snprintf(src, sizeof(src), "file: %s", path);
	conf(&c, "{secret}", src);
	assert_int_equal(gw_creds_load(&c, &cs, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "is owned by uid 65534"));
	config_done(&c);
}

static void test_systemd(void **state)
{
	char path[128];
	struct gw_creds *cs = NULL;
	struct diag err = { 0 };
	struct config c;

	(void)state;
	conf(&c, "token {secret}", "systemd: openai-key");
	unsetenv("CREDENTIALS_DIRECTORY");
	assert_int_equal(gw_creds_load(&c, &cs, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "credentials.openai.systemd: $CREDENTIALS_DIRECTORY is "
				   "not set"));
	assert_non_null(strstr(err.msg, "LoadCredential=openai-key:PATH"));
	assert_int_equal(err.line, 7);
	assert_int_equal(err.col, 14);
	setenv("CREDENTIALS_DIRECTORY", dir, 1);
	assert_int_equal(gw_creds_load(&c, &cs, &err), -ENOENT);
	/* systemd sets the owner and mode (0440 with a group is fine there) */
	put("openai-key", "sk-SYS\n", 7, 0440, path, sizeof(path));
	assert_int_equal(gw_creds_load(&c, &cs, &err), 0);
	assert_string_equal(gw_creds_find(cs, "openai")->value, "token sk-SYS");
	gw_creds_free(cs);
	/* the bytes are checked all the same */
	put("openai-key", "sk\r\nX", 5, 0400, path, sizeof(path));
	assert_int_equal(gw_creds_load(&c, &cs, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "control byte at byte 2"));
	unsetenv("CREDENTIALS_DIRECTORY");
	config_done(&c);
}

static void test_value(void **state)
{
	struct gw_creds *cs = NULL;
	struct diag err = { 0 };
	struct config c;

	(void)state;
	conf(&c, "Bearer {secret} (netd)", "value: sk-INLINE");
	assert_int_equal(gw_creds_load(&c, &cs, &err), 0);
	assert_string_equal(cs->v[0].value, "Bearer sk-INLINE (netd)");
	assert_int_equal(cs->v[0].value_len, strlen("Bearer sk-INLINE (netd)"));
	assert_string_equal(cs->v[0].header, "Authorization");
	assert_string_equal(cs->v[0].placeholder, "netd-placeholder-openai-0001");
	assert_null(gw_creds_find(cs, "other"));
	assert_null(gw_creds_find(NULL, "openai"));
	gw_creds_free(cs);
	gw_creds_free(NULL);
	config_done(&c);
	/* no credentials: an empty set */
	assert_int_equal(config_init(&c), 0);
	assert_int_equal(gw_creds_load(&c, &cs, &err), 0);
	assert_int_equal(cs->n, 0);
	gw_creds_free(cs);
	config_done(&c);
}

static void test_host_ok(void **state)
{
	struct gw_creds *cs = NULL;
	struct diag err = { 0 };
	struct config c;
	const struct gw_credential *g;

	(void)state;
	conf(&c, "{secret}", "value: x");
	assert_int_equal(gw_creds_load(&c, &cs, &err), 0);
	g = gw_creds_find(cs, "openai");
	assert_true(gw_creds_host_ok(g, "api.openai.com"));
	assert_true(gw_creds_host_ok(g, "API.OpenAI.com"));
	assert_true(gw_creds_host_ok(g, "api.openai.com."));
	assert_false(gw_creds_host_ok(g, "openai.com"));
	assert_false(gw_creds_host_ok(g, "x.api.openai.com"));
	assert_false(gw_creds_host_ok(g, "api.openai.com.evil.example"));
	assert_false(gw_creds_host_ok(g, "evilapi.openai.com"));
	/* *.openai.azure.com: any depth below, not the suffix itself */
	assert_true(gw_creds_host_ok(g, "x.openai.azure.com"));
	assert_true(gw_creds_host_ok(g, "a.b.openai.azure.com"));
	assert_false(gw_creds_host_ok(g, "openai.azure.com"));
	assert_false(gw_creds_host_ok(g, "xopenai.azure.com"));
	assert_false(gw_creds_host_ok(g, ".openai.azure.com"));
	assert_false(gw_creds_host_ok(g, ""));
	assert_false(gw_creds_host_ok(g, "."));
	assert_false(gw_creds_host_ok(g, NULL));
	assert_false(gw_creds_host_ok(NULL, "api.openai.com"));
	gw_creds_free(cs);
	config_done(&c);
}

/* Two credentials, the second bad: no half-loaded set comes back, nothing leaks. */
static void test_second_bad(void **state)
{
	static const char y[] =
		"credentials:\n"
		"  a:\n    header: X\n    placeholder: netd-placeholder-a-000001\n"
		"    hosts: [a.example.com]\n    value: sk-a\n"
		"  b:\n    header: X\n    placeholder: netd-placeholder-b-000001\n"
		"    hosts: [b.example.com]\n    file: /nonexistent/netd-test/b\n";
	struct gw_creds *cs = (struct gw_creds *)1;
	struct diag err = { 0 };
	struct config c;

	(void)state;
	assert_int_equal(config_init(&c), 0);
	assert_int_equal(config_parse(&c, y, strlen(y), "n.yaml", &err), 0);
	assert_int_equal(gw_creds_load(&c, &cs, &err), -ENOENT);
	assert_null(cs);
	assert_int_equal(err.line, 11);
	assert_non_null(strstr(err.msg, "credentials.b.file"));
	config_done(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file),
		cmocka_unit_test(test_file_size),
		cmocka_unit_test(test_file_kinds),
		cmocka_unit_test(test_file_owner),
		cmocka_unit_test(test_systemd),
		cmocka_unit_test(test_value),
		cmocka_unit_test(test_host_ok),
		cmocka_unit_test(test_second_bad),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
