/*
 * log - the daemon's own diagnostic log (stderr), not the audit trail.
 *
 * Pure modules never log; the edge that calls them logs once.  Anything a
 * sandbox controls must be quoted with log_quote() before it is printed.
 */
#ifndef NETD_COMMON_LOG_H
#define NETD_COMMON_LOG_H

#include <stddef.h>

enum log_level { LOG_LVL_ERR = 0, LOG_LVL_WARN, LOG_LVL_INFO, LOG_LVL_DEBUG };

/* log_set_level() - messages above @lvl are discarded. Default LOG_LVL_INFO. */
void log_set_level(enum log_level lvl);

/*
 * log_msg() - print one line "netd[pid]: LEVEL: message" to stderr.
 * The message is printf-formatted; a trailing newline is added.
 */
void log_msg(enum log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_err(...)   log_msg(LOG_LVL_ERR, __VA_ARGS__)
#define log_warn(...)  log_msg(LOG_LVL_WARN, __VA_ARGS__)
#define log_info(...)  log_msg(LOG_LVL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LVL_DEBUG, __VA_ARGS__)

/*
 * log_quote() - render untrusted bytes printable: printable ASCII except '"'
 * and '\\' is copied, everything else becomes \xHH.
 * @in, @len: the bytes; @out, @outsz: destination, always NUL-terminated.
 * Return: @out.
 */
char *log_quote(const void *in, size_t len, char *out, size_t outsz);

#endif
