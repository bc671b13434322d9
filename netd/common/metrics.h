/*
 * metrics - a writer for the Prometheus text exposition format 0.0.4
 * (https://prometheus.io/docs/instrumenting/exposition_formats/), and the
 * families every process exports (process_*, from /proc/self) plus
 * netd_build_info.  What netd's own families mean is docs/metrics.md; who
 * counts them is trail.c (traffic, denials, DNS decisions) and the
 * daemon's API views (proxy, sandboxes).
 *
 * Conventions kept here: every family has # HELP and # TYPE before its
 * samples, all samples of a family are together, label values are escaped
 * (backslash, double quote, newline), values are base units (seconds,
 * bytes), counters end in _total.  No allocation; writes go to a FILE
 * (an open_memstream() buffer in practice).
 */
#ifndef NETD_METRICS_H
#define NETD_METRICS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * metrics_family() - "# HELP @name @help" and "# TYPE @name @type"
 * (@type: "counter", "gauge", "histogram").  @help: one line, escaped
 * (backslash, newline) as the format requires.
 */
void metrics_family(FILE *out, const char *name, const char *type, const char *help);

/*
 * metrics_u64() / metrics_f() - one sample "@name{k="v",...} value".
 * @labels: NULL, or pairs (name, value) ending with a NULL name; values
 * are escaped here, a NULL value prints as "".
 */
void metrics_u64(FILE *out, const char *name, const char *const *labels, uint64_t v);
void metrics_f(FILE *out, const char *name, const char *const *labels, double v);

/*
 * metrics_histogram() - the _bucket (cumulative, le = @le_s[i] seconds,
 * then +Inf), _sum and _count samples of histogram @name.  @counts[i]:
 * observations in (le_s[i-1], le_s[i]]; @counts[@n]: above the last bound.
 * @sum_s: the sum of all observations, seconds.
 */
void metrics_histogram(FILE *out, const char *name, const double *le_s,
		       const uint64_t *counts, size_t n, double sum_s);

/*
 * metrics_process() - process_cpu_seconds_total, process_resident_memory_bytes,
 * process_virtual_memory_bytes, process_open_fds, process_max_fds,
 * process_start_time_seconds, read from /proc/self (Linux proc(5)).  A
 * file that cannot be read leaves its families out.
 */
void metrics_process(FILE *out);

/* metrics_build_info() - netd_build_info{version="@version"} 1. */
void metrics_build_info(FILE *out, const char *version);

/*
 * metrics_proc_stat() - parse one /proc/PID/stat line (proc(5)): the
 * process's user+system CPU time and start time in clock ticks after
 * boot, its virtual size in bytes and resident set in pages.  The comm
 * field may hold spaces and ')': the last ')' ends it.  Pure.
 * Return: 0; -EINVAL if the line is malformed.
 */
int metrics_proc_stat(const char *line, uint64_t *cpu_ticks, uint64_t *start_ticks,
		      uint64_t *vsize_bytes, uint64_t *rss_pages);

#endif
