/*
 * netd/common/ - what several rooms of netd use and none owns: the metrics
 * writer (metrics.c) and the version (version.h).  What other folders use
 * too is the top-level common/.
 */
/*
 * metrics - exposition format writer and process metrics.  See metrics.h.
 */
#include "netd/common/metrics.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* @s escaped for a label value (@quote) or a HELP text (!@quote). */
static void escaped(FILE *out, const char *s, int quote)
{
	for (; s && *s; s++) {
		if (*s == '\\')
			fputs("\\\\", out);
		else if (*s == '\n')
			fputs("\\n", out);
		else if (quote && *s == '"')
			fputs("\\\"", out);
		else
			fputc(*s, out);
	}
}

void metrics_family(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s ", name);
	escaped(out, help, 0);
	fprintf(out, "\n# TYPE %s %s\n", name, type);
}

static void head(FILE *out, const char *name, const char *const *labels)
{
	fputs(name, out);
	if (!labels || !labels[0])
		return;
	fputc('{', out);
	for (size_t i = 0; labels[i]; i += 2) {
		fprintf(out, "%s%s=\"", i ? "," : "", labels[i]);
		escaped(out, labels[i + 1], 1);
		fputc('"', out);
	}
	fputc('}', out);
}

void metrics_u64(FILE *out, const char *name, const char *const *labels, uint64_t v)
{
	head(out, name, labels);
	fprintf(out, " %" PRIu64 "\n", v);
}

void metrics_f(FILE *out, const char *name, const char *const *labels, double v)
{
	head(out, name, labels);
	/* %.17g round-trips a double; integers print without an exponent. */
	fprintf(out, " %.17g\n", v);
}

void metrics_histogram(FILE *out, const char *name, const double *le_s,
		       const uint64_t *counts, size_t n, double sum_s)
{
	char bname[128], le[32];
	uint64_t cum = 0;

	snprintf(bname, sizeof(bname), "%s_bucket", name);
	for (size_t i = 0; i < n; i++) {
		const char *l[] = { "le", le, NULL };

		cum += counts[i];
		snprintf(le, sizeof(le), "%g", le_s[i]);
		metrics_u64(out, bname, l, cum);
	}
	cum += counts[n];
	{
		const char *l[] = { "le", "+Inf", NULL };

		metrics_u64(out, bname, l, cum);
	}
	fprintf(out, "%s_sum %.17g\n%s_count %" PRIu64 "\n", name, sum_s, name, cum);
}

int metrics_proc_stat(const char *line, uint64_t *cpu_ticks, uint64_t *start_ticks,
		      uint64_t *vsize_bytes, uint64_t *rss_pages)
{
	const char *p = line ? strrchr(line, ')') : NULL;
	unsigned long long v[24];
	char *end;

	if (!p)
		return -EINVAL;
	p++;
	/* Fields 3 (state) .. 24 (rss); field 3 is a letter. */
	while (*p == ' ')
		p++;
	if (!*p || *p == ' ')
		return -EINVAL;
	p++;
	for (int i = 4; i <= 24; i++) {
		errno = 0;
		v[i - 1] = strtoull(p, &end, 10);
		if (end == p || errno)
			return -EINVAL;
		p = end;
	}
	/* proc(5): 14 utime, 15 stime, 22 starttime, 23 vsize, 24 rss. */
	*cpu_ticks = v[13] + v[14];
	*start_ticks = v[21];
	*vsize_bytes = v[22];
	*rss_pages = v[23];
	return 0;
}

/* Seconds since the epoch at boot, from /proc/stat's btime; 0 if unknown. */
static uint64_t boot_time_s(void)
{
	FILE *f = fopen("/proc/stat", "re");
	char line[256];
	unsigned long long bt = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "btime %llu", &bt) == 1)
			break;
	fclose(f);
	return bt;
}

static long open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	long n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;	/* the directory's own fd */
}

void metrics_process(FILE *out)
{
	FILE *f = fopen("/proc/self/stat", "re");
	char line[1024];
	uint64_t cpu, start, vsize, rss;
	long tick = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE), fds = open_fds();
	struct rlimit rl;
	int ok = 0;

	if (f) {
		ok = fgets(line, sizeof(line), f) &&
		     metrics_proc_stat(line, &cpu, &start, &vsize, &rss) == 0 && tick > 0 &&
		     page > 0;
		fclose(f);
	}
	if (ok) {
		metrics_family(out, "process_cpu_seconds_total", "counter",
			       "Total user and system CPU time spent in seconds.");
		metrics_f(out, "process_cpu_seconds_total", NULL, (double)cpu / (double)tick);
		metrics_family(out, "process_resident_memory_bytes", "gauge",
			       "Resident memory size in bytes.");
		metrics_u64(out, "process_resident_memory_bytes", NULL, rss * (uint64_t)page);
		metrics_family(out, "process_virtual_memory_bytes", "gauge",
			       "Virtual memory size in bytes.");
		metrics_u64(out, "process_virtual_memory_bytes", NULL, vsize);
		metrics_family(out, "process_start_time_seconds", "gauge",
			       "Start time of the process since unix epoch in seconds.");
		metrics_f(out, "process_start_time_seconds", NULL,
			  (double)boot_time_s() + (double)start / (double)tick);
	}
	if (fds >= 0) {
		metrics_family(out, "process_open_fds", "gauge", "Number of open file descriptors.");
		metrics_u64(out, "process_open_fds", NULL, (uint64_t)fds);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		metrics_family(out, "process_max_fds", "gauge",
			       "Maximum number of open file descriptors.");
		metrics_u64(out, "process_max_fds", NULL,
			    rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : (uint64_t)rl.rlim_cur);
	}
}

void metrics_build_info(FILE *out, const char *version)
{
	const char *l[] = { "version", version, NULL };

	metrics_family(out, "netd_build_info", "gauge",
		       "A metric with a constant '1' value labeled by the version netd was built from.");
	metrics_u64(out, "netd_build_info", l, 1);
}
