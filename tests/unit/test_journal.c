/*
 * test_journal - audit records as journal entries (netd/trail/journal.c):
 * journal_fields() field by field; then the writer thread and libsystemd's
 * sd_journal_sendv() for real, into a socket this test binds at
 * /run/systemd/journal/socket inside a mount namespace of its own (as root
 * a plain one; otherwise inside a user namespace), read back in journald's
 * native protocol; and a journald that stops reading: journal_record()
 * still returns at once, what cannot wait is counted, journal_free() ends.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "netd/trail/journal.h"

static bool in_ns;

static int proc_write(const char *file, const char *s)
{
	char path[64];
	int fd, r;

	snprintf(path, sizeof(path), "/proc/self/%s", file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = write(fd, s, strlen(s)) == (ssize_t)strlen(s) ? 0 : -EIO;
	close(fd);
	return r;
}

/* /run a fresh tmpfs of this process's own: the host's journald is never reached. */
static int enter_mntns(void)
{
	uid_t uid = geteuid();
	gid_t gid = getegid();
	char map[64];

	if (uid == 0) {
		if (unshare(CLONE_NEWNS) < 0)
			return -errno;
	} else {
		if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
			return -errno;
		snprintf(map, sizeof(map), "0 %u 1", (unsigned)uid);
		if (proc_write("uid_map", map) < 0 || proc_write("setgroups", "deny") < 0)
			return -EPERM;
		snprintf(map, sizeof(map), "0 %u 1", (unsigned)gid);
		if (proc_write("gid_map", map) < 0)
			return -EPERM;
	}
	if (mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("tmpfs", "/run", "tmpfs", 0, "mode=0755") < 0)
		return -errno;
	if (mkdir("/run/systemd", 0755) < 0 || mkdir("/run/systemd/journal", 0755) < 0)
		return -errno;
	return 0;
}

static int group_setup(void **state)
{
	int r = enter_mntns();

	(void)state;
	in_ns = r == 0;
	if (!in_ns)
		fprintf(stderr, "test_journal: no mount namespace of our own (%s): failed\n",
			strerror(-r));
	return 0;
}

/* The fields of @rec as "NAME=value" lines (values without newlines). */
static char *fields(const char *json, int *n_out)
{
	static char buf[JOURNAL_ENTRY_MAX + 4096];
	static char out[8192];
	struct iovec iov[JOURNAL_FIELDS_MAX];
	json_error_t e;
	json_t *rec = json_loads(json, 0, &e);
	size_t o = 0;
	int n;

	assert_non_null(rec);
	n = journal_fields(rec, buf, sizeof(buf), iov, JOURNAL_FIELDS_MAX);
	json_decref(rec);
	*n_out = n;
	out[0] = '\0';
	for (int i = 0; i < n; i++)
		o += (size_t)snprintf(out + o, sizeof(out) - o, "%.*s\n", (int)iov[i].iov_len,
				      (const char *)iov[i].iov_base);
	return out;
}

static void test_fields(void **state)
{
	char *f;
	int n;

	(void)state;
	f = fields("{\"ts\":\"2026-11-30T07:20:02.623Z\",\"event\":\"conn\",\"sandbox\":\"web-1\","
		   "\"policy\":\"python-dev\",\"proto\":\"tcp\",\"src\":\"10.87.0.2\",\"sport\":40000,"
		   "\"dst\":\"198.51.100.10\",\"dport\":443,\"domain\":\"pypi.org\","
		   "\"bytes_out\":2452,\"bytes_in\":1053778,\"duration_s\":2.5}", &n);
	assert_int_equal(n, 3 + 13);
	assert_non_null(strstr(f, "MESSAGE=conn sandbox=web-1 proto=tcp dst=198.51.100.10 dport=443 "
				  "domain=pypi.org bytes_out=2452 bytes_in=1053778\n"));
	assert_non_null(strstr(f, "\nPRIORITY=6\n"));
	assert_non_null(strstr(f, "\nSYSLOG_IDENTIFIER=netd-audit\n"));
	assert_non_null(strstr(f, "\nNETD_TS=2026-11-30T07:20:02.623Z\n"));
	assert_non_null(strstr(f, "\nNETD_EVENT=conn\n"));
	assert_non_null(strstr(f, "\nNETD_SANDBOX=web-1\n"));
	assert_non_null(strstr(f, "\nNETD_DST=198.51.100.10\n"));
	assert_non_null(strstr(f, "\nNETD_DPORT=443\n"));
	assert_non_null(strstr(f, "\nNETD_DURATION_S=2.5\n"));

	/* A denied query: notice; every answer a field of its own; null left out. */
	f = fields("{\"event\":\"dns\",\"sandbox\":\"web-1\",\"qname\":\"evil.example\","
		   "\"verdict\":\"deny\",\"answers\":[\"192.0.2.1\",\"192.0.2.2\"],\"domain\":null,"
		   "\"x\":{\"a\":1},\"odd-key.name\":true}", &n);
	assert_non_null(strstr(f, "\nPRIORITY=5\n"));
	assert_non_null(strstr(f, "\nNETD_ANSWERS=192.0.2.1\nNETD_ANSWERS=192.0.2.2\n"));
	assert_null(strstr(f, "NETD_DOMAIN"));
	assert_non_null(strstr(f, "\nNETD_X={\"a\":1}\n"));
	assert_non_null(strstr(f, "\nNETD_ODD_KEY_NAME=true\n"));
	/* deny and would_deny records are notices too */
	f = fields("{\"event\":\"deny\",\"sandbox\":\"s\"}", &n);
	assert_non_null(strstr(f, "\nPRIORITY=5\n"));
	f = fields("{\"event\":\"conn_open\",\"would_deny\":\"not-pinned\"}", &n);
	assert_non_null(strstr(f, "\nPRIORITY=5\n"));
	/* What a sandbox wrote stays on MESSAGE's one line. */
	f = fields("{\"event\":\"dns\",\"qname\":\"a\\nb\\u0001c\"}", &n);
	assert_non_null(strstr(f, "MESSAGE=dns qname=a?b?c\n"));
	/* No event: no entry. */
	f = fields("{\"sandbox\":\"s\"}", &n);
	assert_int_equal(n, -EINVAL);
	{
		char small[40], big[1000];
		struct iovec iov[4];
		json_t *rec = json_pack("{s:s, s:s}", "event", "conn", "sandbox", "s");

		assert_int_equal(journal_fields(rec, small, sizeof(small), iov, 4), -ENOSPC);
		/* Room for the three fixed fields only: the members are left out. */
		assert_int_equal(journal_fields(rec, big, sizeof(big), iov, 3), 3);
		json_decref(rec);
	}
}

/* A stand-in journald: our socket at the path libsystemd sends to. */
static int fake_journald(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/run/systemd/journal/socket");
	unlink(sa.sun_path);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

/* One datagram in the native protocol: is FIELD=VALUE (a text line) in it? */
static bool has_field(const char *d, size_t n, const char *line)
{
	size_t l = strlen(line);

	for (size_t i = 0; i + l <= n; i++)
		if ((i == 0 || d[i - 1] == '\n') && memcmp(d + i, line, l) == 0 &&
		    (i + l == n || d[i + l] == '\n'))
			return true;
	return false;
}

static void test_send(void **state)
{
	struct journal *j = NULL;
	char d[65536];
	ssize_t n = -1;
	int fd;
	json_t *rec;

	(void)state;
	if (!in_ns)
		fail();
	fd = fake_journald();
	assert_int_equal(journal_new(&j), 0);
	rec = json_pack("{s:s, s:s, s:s, s:s}", "ts", "2026-11-30T07:20:02.623Z", "event", "conn",
			"sandbox", "web-1", "qname", "two\nlines");
	assert_int_equal(journal_record(j, rec), 0);
	json_decref(rec);
	for (int i = 0; i < 200 && n < 0; i++) {
		struct timespec nap = { .tv_nsec = 10 * 1000 * 1000 };

		n = recv(fd, d, sizeof(d), MSG_DONTWAIT);
		if (n < 0)
			nanosleep(&nap, NULL);
	}
	assert_true(n > 0);
	assert_true(has_field(d, (size_t)n, "NETD_EVENT=conn"));
	assert_true(has_field(d, (size_t)n, "NETD_SANDBOX=web-1"));
	assert_true(has_field(d, (size_t)n, "SYSLOG_IDENTIFIER=netd-audit"));
	assert_true(has_field(d, (size_t)n, "PRIORITY=6"));
	/* A value with a newline goes in the binary-safe form: NAME\n, 64-bit length, bytes. */
	assert_non_null(memmem(d, (size_t)n, "NETD_QNAME\n\x09\0\0\0\0\0\0\0two\nlines\n", 29));
	journal_free(j);
	j = NULL;
	assert_int_equal(journal_new(&j), 0);
	assert_int_equal(journal_written(j), 0);
	journal_free(j);
	close(fd);
}

/* A journald that reads nothing: netd's side never waits for it. */
static void test_stalled(void **state)
{
	struct journal *j = NULL;
	json_t *rec = json_pack("{s:s, s:s}", "event", "dns", "sandbox", "web-1");
	int fd, full = 0;
	const int offered = JOURNAL_QUEUE_MAX + 4000;

	(void)state;
	if (!in_ns)
		fail();
	fd = fake_journald();
	assert_int_equal(journal_new(&j), 0);
	for (int i = 0; i < offered; i++)
		if (journal_record(j, rec) == -ENOBUFS)
			full++;
	assert_true(full > 0);	/* the queue's bound, not a wait */
	assert_true(journal_dropped(j) >= (uint64_t)full);
	journal_free(j);	/* the writer stuck in sendmsg() is cut off */
	json_decref(rec);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_send),
		cmocka_unit_test(test_stalled),
	};

	return cmocka_run_group_tests(tests, group_setup, NULL);
}
