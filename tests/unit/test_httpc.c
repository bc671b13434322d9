/*
 * test_httpc - common/httpc.c's deadline: a netd that is hung (SIGSTOP:
 * the kernel still completes the connect into its backlog, nothing ever
 * answers) or whose backlog is full must cost the caller no more than the
 * deadline it gave, and say -ETIMEDOUT (netd-docker answers Docker before
 * Docker's own plugin timeout: docs/docker.md).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/httpc.h"

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A listening unix socket at a fresh path in @dir (backlog @backlog) that never accepts. */
static int hung_server(char *dir, size_t dirsz, char *path, size_t pathsz, int backlog)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd;

	snprintf(dir, dirsz, "/tmp/test_httpc.XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(path, pathsz, "%s/netd.sock", dir);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	assert_int_equal(listen(fd, backlog), 0);
	return fd;
}

static void cleanup(int fd, const char *dir, const char *path)
{
	close(fd);
	unlink(path);
	rmdir(dir);
}

static void test_hung_reply(void **state)
{
	char dir[64], path[100];
	int fd = hung_server(dir, sizeof(dir), path, sizeof(path), 16), status = -1;
	json_t *body = json_pack("{s:s}", "name", "dk-000000000000"), *reply = NULL;
	long t0 = now_ms(), took;

	(void)state;
	assert_int_equal(httpc_request_timeout(path, "POST", "/v1/sandboxes", body, &status, &reply,
					       300), -ETIMEDOUT);
	took = now_ms() - t0;
	assert_true(took >= 250 && took < 2000);
	assert_null(reply);
	json_decref(body);
	cleanup(fd, dir, path);
}

static void test_full_backlog(void **state)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char dir[64], path[100];
	int fd = hung_server(dir, sizeof(dir), path, sizeof(path), 0), status = -1, c[4];
	json_t *reply = NULL;
	long t0, took;

	(void)state;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	/* Fill the backlog without blocking: a blocking connect now waits for an accept. */
	for (int i = 0; i < 4; i++) {
		c[i] = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		assert_true(c[i] >= 0);
		(void)connect(c[i], (struct sockaddr *)&sun, sizeof(sun));
	}
	t0 = now_ms();
	assert_int_equal(httpc_request_timeout(path, "GET", "/v1/status", NULL, &status, &reply,
					       300), -ETIMEDOUT);
	took = now_ms() - t0;
	assert_true(took >= 250 && took < 2000);
	for (int i = 0; i < 4; i++)
		close(c[i]);
	cleanup(fd, dir, path);
}

static void test_not_running(void **state)
{
	int status = -1;
	json_t *reply = NULL;

	(void)state;
	assert_int_equal(httpc_request_timeout("/nonexistent/netd.sock", "GET", "/v1/status", NULL,
					       &status, &reply, 300), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hung_reply),
		cmocka_unit_test(test_full_backlog),
		cmocka_unit_test(test_not_running),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
