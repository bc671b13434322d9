/*
 * test_audit_full - the audit log on a full disk (issue 12): the record
 * cut by ENOSPC must not stay half-written, and the first record after
 * space returns must not be glued to it.  Every line of the file is valid
 * JSON, and every record is either in the file or counted as dropped.
 * Also the writer's pacing on an event loop: gathered per turn, held for
 * up to a millisecond after a write, written at 64 KiB.
 *
 * Needs root: it makes its own mount namespace (unshare(CLONE_NEWNS), all
 * mounts private) with a 64 KiB tmpfs, so nothing outside this process
 * sees the mount and it vanishes with the process.  Skipped otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>
#include <cmocka.h>

#include <event2/event.h>
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

/* The lines of @path, each checked to be JSON.  Return: how many. */
static int json_lines(const char *path)
{
	char line[4096];
	int n = 0;
	FILE *f = fopen(path, "r");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		json_error_t jerr;
		json_t *j = json_loads(line, 0, &jerr);

		if (!j)
			fail_msg("line %d is not JSON (%s): %.80s", n + 1, jerr.text, line);
		json_decref(j);
		n++;
	}
	fclose(f);
	return n;
}

static void test_enospc_never_splits_or_glues(void **state)
{
	char path[64], filler[64];
	struct audit *a;
	int fd, i;

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
	assert_int_equal(json_lines(path), audit_written(a));
	assert_true(audit_written(a) > 3 + 10 - 1);	/* the records after space returned are there */
	audit_close(a);
}

/*
 * Run @base's loop until @a has written or dropped @n records in all: a
 * turn that ends less than a millisecond after the last write is held
 * until then (the hold's timer ends a later turn).  Fails after 100 turns.
 */
static void turns_until(struct event_base *base, struct audit *a, uint64_t n)
{
	for (int t = 0; t < 100 && audit_written(a) + audit_dropped(a) < n; t++)
		event_base_loop(base, EVLOOP_ONCE);
	assert_int_equal(audit_written(a) + audit_dropped(a), n);
}

/*
 * Attached to an event loop, records are gathered and written when the
 * loop turn ends (a burst of 100: all of them, one write); a gathered
 * write cut by ENOSPC is counted record by record (written + dropped =
 * asked: the writer counts lines only after a short write) and never
 * leaves half a record; what is gathered when netd stops (SIGTERM:
 * audit_close(), no further turn) is written all the same.
 */
static void test_attached_burst_and_close(void **state)
{
	char path[64], filler[64];
	struct event_base *base = event_base_new();
	struct audit *a;
	int fd, i;

	if (geteuid() != 0)
		skip();
	assert_non_null(base);
	snprintf(path, sizeof(path), "%s/burst.jsonl", dir);
	snprintf(filler, sizeof(filler), "%s/filler", dir);
	assert_int_equal(audit_open(path, &a), 0);
	assert_int_equal(audit_attach(a, base), 0);
	for (i = 0; i < 100; i++)
		record(a, i);
	assert_int_equal(audit_written(a), 0);	/* gathered until the turn ends */
	event_base_loop(base, EVLOOP_NONBLOCK);
	assert_int_equal(audit_written(a), 100);
	assert_int_equal(json_lines(path), 100);
	/* A turn cut by a full disk (the 64 KiB tmpfs). */
	fd = fill(filler);
	for (; i < 160; i++)
		record(a, i);
	turns_until(base, a, 160);
	assert_true(audit_dropped(a) > 0);
	assert_int_equal(audit_written(a) + audit_dropped(a), 160);
	assert_int_equal(json_lines(path), audit_written(a));
	close(fd);
	unlink(filler);
	unlink(path);		/* space for the burst */
	assert_int_equal(audit_reopen(a), 0);
	for (; i < 170; i++)
		record(a, i);
	audit_close(a);	/* no turn ended: written by the close */
	assert_int_equal(json_lines(path), 10);
	event_base_free(base);
}

/* A record of ~300 bytes through the hot path's writer (no formatting: fast). */
static void member_record(struct audit *a)
{
	static char m[300];
	static size_t n;

	if (!n) {
		n = (size_t)snprintf(m, sizeof(m), "\"pad\":\"%0280d\"", 0);
		assert_true(n < sizeof(m));
	}
	assert_int_equal(audit_write_members(a, "test", m, n), 0);
}

/*
 * The hold: a turn that ends less than a millisecond after the last write
 * is not written at once (of 50 one-record turns back to back, some are
 * held), but by the time the hold's timer has ended a turn; a turn that
 * gathered 64 KiB is written when it ends all the same; and an idle
 * writer's record is written when its turn ends.  On /tmp's file system
 * (the private tmpfs is only 64 KiB).
 */
static void test_attached_hold(void **state)
{
	char tdir[] = "/tmp/netd-audit-hold.XXXXXX", path[64];
	struct event_base *base = event_base_new();
	struct audit *a;
	bool held = false;
	int i;

	assert_non_null(base);
	assert_non_null(mkdtemp(tdir));
	snprintf(path, sizeof(path), "%s/hold.jsonl", tdir);
	assert_int_equal(audit_open(path, &a), 0);
	assert_int_equal(audit_attach(a, base), 0);
	member_record(a);
	event_base_loop(base, EVLOOP_NONBLOCK);
	assert_int_equal(json_lines(path), 1);	/* nothing written before: at once */
	for (i = 1; i <= 50; i++) {
		member_record(a);
		event_base_loop(base, EVLOOP_NONBLOCK);
		held |= json_lines(path) < i + 1;
	}
	assert_true(held);
	turns_until(base, a, 51);
	assert_int_equal(json_lines(path), 51);
	/* Right after a write, a turn of 64 KiB or more is written as it ends. */
	member_record(a);
	i++;
	event_base_loop(base, EVLOOP_NONBLOCK);
	turns_until(base, a, 52);
	for (; i < 52 + 230; i++)
		member_record(a);
	event_base_loop(base, EVLOOP_NONBLOCK);
	assert_int_equal(json_lines(path), 52 + 230);
	audit_close(a);
	unlink(path);
	rmdir(tdir);
	event_base_free(base);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_enospc_never_splits_or_glues),
		cmocka_unit_test(test_attached_burst_and_close),
		cmocka_unit_test(test_attached_hold),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
