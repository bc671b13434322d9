/*
 * fuzz_audit - `netd audit` on an arbitrary audit log (netd/cli/cli_audit.c):
 * the line splitter (feed(), with overlong lines skipped), the JSON record
 * filter (cli_audit_match()), the table and summary builders and their
 * printers, and cli_audit_time() on the first line as a --since argument.
 * The log is a file anyone with write access to it (or a bug in the
 * writer) controls; it is not trusted.
 *
 * The reader is static, so this harness includes netd/cli/cli_audit.c;
 * the library archive supplies the rest.  Output goes to /dev/null.
 *
 * Input: byte 0 picks the mode and the filters (bit 0 --json, bit 1
 * --summary, bit 2 --sandbox sb1, bit 3 --event conn, bits 4-5 --domain
 * none / pypi.org / *.example.com, bit 6 --since, bit 7 --until); the rest
 * is the log, fed in two reads split at byte 1 of the log's length.
 *
 * Asserts: cli_audit_time() output is NUL-terminated within the buffer and
 * of RFC 3339 characters only; the reader never holds more than
 * AUDIT_LINE_MAX bytes of a line; ASan/UBSan and LeakSanitizer do the rest.
 */
#include "netd/cli/cli_audit.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void time_check(const uint8_t *data, size_t size)
{
	char arg[64], out[40];
	size_t n = 0;

	while (n < size && n < sizeof(arg) - 1 && data[n] != '\n')
		n++;
	memcpy(arg, data, n);
	arg[n] = '\0';
	memset(out, 'x', sizeof(out));
	if (cli_audit_time(arg, 1796021400LL /* 2026-12-01T10:10:00Z */, out, sizeof(out)) < 0)
		return;
	if (!memchr(out, '\0', sizeof(out)))
		abort();
	for (size_t i = 0; out[i]; i++)
		if (!strchr("0123456789-:.TZ", out[i]))
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null_out;
	static char *line;	/* the reader's line buffer: 1 MiB, allocated once */
	struct audit_filter f = { 0 };
	struct reader rd = { .f = &f };
	FILE *saved;
	size_t half;
	uint8_t mode;

	if (size < 1 || size > (1u << 21))
		return 0;
	if (!null_out && !(null_out = fopen("/dev/null", "w")))
		return 0;
	mode = data[0];
	data++, size--;
	time_check(data, size);

	rd.json = mode & 1;
	rd.summary = mode & 2;
	if (mode & 4)
		f.sandbox = "sb1";
	if (mode & 8)
		f.event = "conn";
	if ((mode >> 4 & 3) == 1)
		f.domain = "pypi.org";
	else if ((mode >> 4 & 3) >= 2)
		f.domain = "*.example.com";
	if (mode & 64)
		cli_audit_time("2026-11-30T06:00:00Z", 0, f.since, sizeof(f.since));
	if (mode & 128)
		cli_audit_time("1d", 1796021400LL, f.until, sizeof(f.until));

	if (!line && !(line = malloc(AUDIT_LINE_MAX)))
		return 0;
	rd.line = line;
	if (!rd.json && !rd.summary && !(rd.table = table_new()))
		return 0;
	/* (glibc's stdout is a variable: point it at /dev/null for the printers) */
	saved = stdout;
	stdout = null_out;
	half = size / 2;
	feed(&rd, (const char *)data, half);
	if (rd.len > AUDIT_LINE_MAX)
		abort();
	feed(&rd, (const char *)data + half, size - half);
	if (rd.len > AUDIT_LINE_MAX)
		abort();
	if (rd.table) {
		cli_table_print(rd.table, stdout);
		cli_table_free(rd.table);
	}
	if (rd.summary)
		summary_print(&rd.sum, rd.json);
	stdout = saved;
	return 0;
}
