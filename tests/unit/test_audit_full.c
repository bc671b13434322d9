/*
 * test_audit_full - the audit log on a full disk (issue 12): the record
 * cut by ENOSPC must not stay half-written, and the first record after
 * space returns must not be glued to it.  Every line of the file is valid
 * JSON, and every record is either in the file or counted as dropped.
 *
 * Needs root: it makes its own mount namespace (unshare(CLONE_NEWNS), all
 * mounts private) with a 64 KiB tmpfs, so nothing outside this process
 * sees the mount and it vanishes with the process.  Skipped otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>
#include <cmocka.h>

#include <jansson.h>

#include "netd/trail/audit.h"

static char dir[] = "/tmp/netd-audit-full.XXXXXX";

static int setup(void **state)
{
	if (geteuid() != 0)
		return 0;
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    !mkdtemp(dir) || mount("netd-test", dir, "tmpfs", 0, "size=64k,mode=0755") < 0)
		fail_msg("private tmpfs: %s", strerror(errno));
	return 0;
}

static int teardown(void **state)
{
	if (geteuid() == 0) {
		umount2(dir, MNT_DETACH);
		rmdir(dir);
	}
	return 0;
}

/* Fill the file system: a file that grows until ENOSPC.  Return: its fd. */
static int fill(const char *path)
{
	static char block[4096];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	memset(block, 'x', sizeof(block));
	while (write(fd, block, sizeof(block)) > 0)
		;
	while (write(fd, block, 1) > 0)	/* the last partial block too */
		;
	return fd;
}

static void record(struct audit *a, int i)
{
	/* ~300 bytes: records straddle the tmpfs's page boundaries */
	char pad[256];

	memset(pad, 'p', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	audit_write(a, "test", json_pack("{s:i, s:s}", "seq", i, "pad", pad));
}

static void test_enospc_never_splits_or_glues(void **state)
{
	char path[64], filler[64], line[4096];
	struct audit *a;
	int fd, i, n_lines = 0;
	FILE *f;

	if (geteuid() != 0)
		skip();
	snprintf(path, sizeof(path), "%s/audit.jsonl", dir);
	snprintf(filler, sizeof(filler), "%s/filler", dir);
	assert_int_equal(audit_open(path, &a), 0);
	for (i = 0; i < 3; i++)
		record(a, i);	/* the file has a partly used page */
	fd = fill(filler);
	for (; i < 60; i++)
		record(a, i);	/* the page fills up; a record is cut by ENOSPC */
	assert_true(audit_dropped(a) > 0);
	close(fd);
	unlink(filler);		/* space returns */
	for (; i < 70; i++)
		record(a, i);
	assert_int_equal(audit_written(a) + audit_dropped(a), 70);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		json_error_t jerr;
		json_t *j = json_loads(line, 0, &jerr);

		if (!j)
			fail_msg("line %d is not JSON (%s): %.80s", n_lines + 1, jerr.text, line);
		json_decref(j);
		n_lines++;
	}
	fclose(f);
	assert_int_equal(n_lines, audit_written(a));
	assert_true(audit_written(a) > 3 + 10 - 1);	/* the records after space returned are there */
	audit_close(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_enospc_never_splits_or_glues),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
