/*
 * box_daemon - the daemon in a box, shared by the tests that drive it
 * (tests/unit/test_daemon.c through the control API, test_box_cli.c through
 * the real `netd` and `netd-cni` binaries): `netd run`'s own code
 * (daemon_run() with a struct daemon_box, netd/daemon.h) in a child
 * process, as nobody when the test runs as root, with its kernel edges
 * stood in:
 *
 *   nf_tables  tests/golden/fake_nft.c, the model printed to ROOT/nft.txt
 *              after every batch it applied
 *   links      tests/unit/box_link.c: interfaces and netns as files under
 *              ROOT, every change a line of ROOT/link.log
 *   DNS        the replay seam (dnsproxy/replay.h): no socket on any
 *              network; a query reaches it as a datagram on the unix
 *              socket ROOT/dns.sock, its upstream answers at once (every
 *              A query: BOX_ANSWER_A, TTL 300)
 *
 * ROOT is a fresh directory under /tmp (box_setup()) holding netd.yaml
 * (socket ROOT/ctl.sock, state_dir ROOT/state, policy_dir ROOT/policies,
 * audit_log ROOT/audit.jsonl), the policies deny-all and python-dev, the
 * daemon's stderr (ROOT/daemon.log) and whatever the stand-ins leave.
 * Nothing here touches the host's network.  Not thread-safe: one box per
 * test process.
 */
#ifndef TESTS_UNIT_BOX_DAEMON_H
#define TESTS_UNIT_BOX_DAEMON_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define BOX_NOBODY   65534
#define BOX_WAIT_MS  30000	/* the longest a test waits for the daemon: a bound, not a timing */
#define BOX_ANSWER_A "198.51.100.10"	/* the stand-in upstream's answer to every A query */

/* The box's directory (absolute; set by box_setup()). */
extern char box_root[PATH_MAX];

/* Should the test's children run as nobody (the test runs as root, NETD_BOX_AS_ROOT unset)? */
bool box_as_nobody(void);

/* box_path() - ROOT/ followed by @fmt's expansion, into @buf (@sz bytes). */
void box_path(char *buf, size_t sz, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* box_slurp() - ROOT/@rel's content (caller frees), or NULL if it cannot be read (4 MiB at most). */
char *box_slurp(const char *rel);

/* box_file_exists() - does ROOT/@rel exist? */
bool box_file_exists(const char *rel);

/* box_put() - write ROOT/@rel (mode 0644) with @text; a failure fails the test. */
void box_put(const char *rel, const char *text);

/* box_count_in() - how many times @needle stands in ROOT/@rel (0 if it cannot be read). */
int box_count_in(const char *rel, const char *needle);

/*
 * box_count_when() - box_count_in() once @needle stands in ROOT/@rel @n
 * times, asked again until then within BOX_WAIT_MS: for the audit log,
 * which the daemon's loop writes after it answered.
 */
int box_count_when(const char *rel, const char *needle, int n);

/*
 * box_dgram_at() - a unix datagram socket bound at ROOT/@rel (a stale one
 * replaced) that any user may send to; @flags as socket()'s type flags.
 * Return: the fd (caller closes); -errno.
 */
int box_dgram_at(const char *rel, int flags);

/*
 * box_model_has() - does set @set of table inet netd in the model (as
 * fake_nft_print() wrote it last) hold an element whose key starts with
 * @key (32-bit words in host order, space-separated, as libnftnl prints)?
 */
bool box_model_has(const char *set, const char *key);

/* box_ifname_key() - the key words of interface @ifname (IFNAMSIZ bytes, NUL padded), into @out. */
void box_ifname_key(const char *ifname, char *out, size_t sz);

/* box_ifname_addr_key() - the key words of @ifname . @ipv4 (sandbox_src4), into @out. */
void box_ifname_addr_key(const char *ifname, const char *ipv4, char *out, size_t sz);

/*
 * box_pin_key() - the key words of a pin4 element @src . @dst . @proto .
 * @port (host order; each field 4 bytes), into @out.
 */
void box_pin_key(const char *src, const char *dst, uint8_t proto, uint16_t port, char *out,
		 size_t sz);

/*
 * box_setup() - make ROOT (owned by nobody where box_as_nobody()), its
 * netd.yaml (the keys above, then @extra_config if non-NULL: more YAML
 * lines), the policies deny-all and python-dev, and start the daemon.
 * Return: 0 ready; -1 (nothing to undo but ROOT, which box_teardown() removes).
 */
int box_setup(const char *extra_config);

/*
 * box_teardown() - stop the daemon if it runs, and remove ROOT (kept, and
 * said on stderr, if $NETD_BOX_KEEP is set).  Return: 0; -1.
 */
int box_teardown(void);

/*
 * box_daemon_start() - start the daemon over ROOT; wait for READY=1 on
 * ROOT/notify.sock, or for it to exit (within BOX_WAIT_MS, else the test
 * fails).  Return: 0 ready; the exit status of a daemon that stopped.
 */
int box_daemon_start(void);

/* box_daemon_pid() - the running daemon's process ID; 0 if none runs. */
int box_daemon_pid(void);

/* box_daemon_stop() - SIGTERM, as systemd stops it.  Return: its exit status; -1 if none ran. */
int box_daemon_stop(void);

/*
 * box_api() - one control API call on ROOT/ctl.sock (common/httpc.c, as
 * the CLI and netd-cni make it).  @body: a JSON text or NULL.  *@ret: the
 * answer (caller decrefs; NULL if none).  A call that cannot be made fails
 * the test.  Return: the HTTP status.
 */
int box_api(const char *method, const char *path, const char *body, json_t **ret);

/*
 * box_http_raw() - send @request (a whole HTTP/1.1 request, bytes as
 * given) on ROOT/ctl.sock and read until the daemon closes: for what
 * httpc (JSON only) cannot ask or read, the metrics text say.  Return:
 * the whole response (status line, headers, body), caller frees; the test
 * fails if it cannot connect.
 */
char *box_http_raw(const char *request);

/*
 * box_api_until() - GET @path until it answers HTTP @want, asked again
 * every 50 ms within BOX_WAIT_MS: for what the daemon's loop does after
 * an event (a link gone, a file changed).  Return: the last status.
 */
int box_api_until(const char *path, int want);

/* box_jstr() - string member @key of @o; the test fails if there is none. */
const char *box_jstr(json_t *o, const char *key);

/* box_jerr() - the message of an error answer ({"error": {"message": ...}}). */
const char *box_jerr(json_t *o);

/*
 * box_dns_ask() - an A query for @name from sandbox address @client
 * (IPv4) to the daemon's proxy.  @a_out: the answer's first A record, ""
 * if none.  Return: the reply's rcode.
 */
int box_dns_ask(const char *client, const char *name, char *a_out, size_t a_sz);

/* What box_run() saw of a program: its exit status and its output. */
struct box_run {
	int status;	/* the exit status; 128 + N if killed by signal N */
	char *out;	/* stdout, NUL-terminated (owned; box_run_done()) */
	char *err;	/* stderr, likewise */
};

/*
 * box_run() - run @argv (argv[0] a path) to its end, as nobody where
 * box_as_nobody(), with @env (NULL-terminated "NAME=value" strings, or
 * NULL) added to this process's environment and @in (or nothing) on its
 * stdin.  Its output is kept whole up to 1 MiB per stream.  The test fails
 * if the program cannot be started.  Release with box_run_done().
 */
void box_run(const char *const argv[], const char *const env[], const char *in,
	     struct box_run *ret);

/* box_run_done() - free what box_run() kept in @r; NULL-safe. */
void box_run_done(struct box_run *r);

#endif
