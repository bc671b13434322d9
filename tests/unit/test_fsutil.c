/*
 * test_fsutil - common/fsutil.c: fs_mkdir_p() and fs_write_atomic() in a
 * temp directory of its own: a new file, a replacement, the mode, no temp
 * file left behind, a missing directory, a name too long; fs_open_stat():
 * the size of what it opened, a missing file.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

#include "common/fsutil.h"

static char dir[] = "/tmp/netd-test-fsutil-XXXXXX";

static size_t entries(const char *d)
{
	DIR *dh = opendir(d);
	struct dirent *e;
	size_t n = 0;

	assert_non_null(dh);
	while ((e = readdir(dh)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(dh);
	return n;
}

static void slurp(const char *path, char *buf, size_t sz)
{
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, sz - 1, f);
	buf[n] = '\0';
	fclose(f);
}

static void test_write_atomic(void **state)
{
	char path[512], sub[256], buf[64], big[PATH_MAX + 16];
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/a/b", dir);
	assert_int_equal(fs_mkdir_p(sub, 0750), 0);
	snprintf(path, sizeof(path), "%s/f.json", sub);
	assert_int_equal(fs_write_atomic(path, "one", 3, 0640), 0);
	slurp(path, buf, sizeof(buf));
	assert_string_equal(buf, "one");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	/* replaced whole, with the new mode; nothing else left in the directory */
	assert_int_equal(fs_write_atomic(path, "second", 6, 0644), 0);
	slurp(path, buf, sizeof(buf));
	assert_string_equal(buf, "second");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	assert_int_equal(entries(sub), 1);
	/* a missing directory: an error, and no file */
	snprintf(path, sizeof(path), "%s/nope/f", dir);
	assert_int_equal(fs_write_atomic(path, "x", 1, 0644), -ENOENT);
	/* too long for PATH_MAX */
	memset(big, 'a', sizeof(big) - 1);
	big[0] = '/';
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(fs_write_atomic(big, "x", 1, 0644), -ENAMETOOLONG);
	/* an empty file is a file */
	snprintf(path, sizeof(path), "%s/empty", sub);
	assert_int_equal(fs_write_atomic(path, "", 0, 0600), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 0);
	assert_int_equal(entries(sub), 2);
	unlink(path);
	snprintf(path, sizeof(path), "%s/f.json", sub);
	unlink(path);
	rmdir(sub);
	snprintf(sub, sizeof(sub), "%s/a", dir);
	rmdir(sub);
	assert_int_equal(rmdir(dir), 0);
}

static void test_open_stat(void **state)
{
	char d[] = "/tmp/netd-test-fsutil-XXXXXX", path[512];
	struct stat st;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(d));
	snprintf(path, sizeof(path), "%s/f", d);
	assert_int_equal(fs_write_atomic(path, "four", 4, 0600), 0);
	fd = fs_open_stat(path, O_RDONLY | O_CLOEXEC, 0, &st);
	assert_true(fd >= 0);
	assert_int_equal(st.st_size, 4);
	assert_true(S_ISREG(st.st_mode));
	close(fd);
	unlink(path);
	assert_int_equal(fs_open_stat(path, O_RDONLY | O_CLOEXEC, 0, &st), -ENOENT);
	/* O_CREAT with its mode, as the audit log opens */
	fd = fs_open_stat(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0640, &st);
	assert_true(fd >= 0);
	assert_int_equal(st.st_size, 0);
	close(fd);
	unlink(path);
	assert_int_equal(rmdir(d), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_atomic),
		cmocka_unit_test(test_open_stat),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
