/*
 * gw/worker - the gateway worker process: set-up, privilege drop, seccomp,
 * the channel to netd, the accept loop (netd/gw/worker.h).  What happens to
 * a connection is netd/gw/conn.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sched.h>
#include <unistd.h>

#include <event2/event.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <jansson.h>
#include <seccomp.h>

#include "common/log.h"
#include "netd/gw/conn.h"
#include "netd/gw/leafcache.h"
#include "netd/gw/rate.h"
#include "netd/gw/worker.h"

#define GW_RATE_KEYS 65536	/* (sandbox, rule) buckets kept */

struct worker_args {
	const char *user, *root, *ca_file;
	bool debug;
};

static int parse_args(int argc, char **argv, struct worker_args *a)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--debug")) {
			a->debug = true;
			continue;
		}
		const char **dst = !strcmp(argv[i], "--user") ? &a->user :
				   !strcmp(argv[i], "--root") ? &a->root :
				   !strcmp(argv[i], "--ca-file") ? &a->ca_file : NULL;

		if (!dst || i + 1 == argc) {
			fprintf(stderr, "netd gateway-worker: bad argument '%s' (netd starts this, not you)\n",
				argv[i]);
			return -EINVAL;
		}
		*dst = argv[++i];
	}
	if (!a->user || !a->root) {
		fprintf(stderr, "netd gateway-worker: --user and --root are required (netd starts this)\n");
		return -EINVAL;
	}
	return 0;
}

/* ALPN (RFC 7301): pick what the upstream chose, which the client offered (conn.c knows). */
static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
		       const unsigned char *in, unsigned int inlen, void *arg)
{
	(void)arg;
	const char *want = gw_conn_alpn(SSL_get_app_data(ssl));
	size_t wl = strlen(want);

	for (unsigned int i = 0; i < inlen;) {
		unsigned int n = in[i];

		if (i + 1 + n > inlen)
			break;
		if (n == wl && !memcmp(in + i + 1, want, wl)) {
			*out = in + i + 1;
			*outlen = (unsigned char)n;
			return SSL_TLSEXT_ERR_OK;
		}
		i += 1 + n;
	}
	return SSL_TLSEXT_ERR_ALERT_FATAL;
}

/* Both TLS contexts; the trust store is read now, before the chroot. */
static int tls_setup(struct gw_worker *w, const char *ca_file)
{
	const char *store = ca_file ? ca_file : X509_get_default_cert_file();

	w->up_ctx = SSL_CTX_new(TLS_client_method());
	w->cli_ctx = SSL_CTX_new(TLS_server_method());
	if (!w->up_ctx || !w->cli_ctx) {
		fprintf(stderr, "netd gateway-worker: no TLS context (out of memory)\n");
		return -ENOMEM;
	}
	SSL_CTX_set_min_proto_version(w->up_ctx, TLS1_2_VERSION);
	SSL_CTX_set_min_proto_version(w->cli_ctx, TLS1_2_VERSION);
	SSL_CTX_set_verify(w->up_ctx, SSL_VERIFY_PEER, NULL);
	if (SSL_CTX_load_verify_locations(w->up_ctx, store, NULL) != 1) {
		fprintf(stderr, "netd gateway-worker: cannot load the upstream trust store %s\n", store);
		return -EIO;
	}
	/* Leaves come per connection; no session tickets: each key stays in this process. */
	SSL_CTX_set_options(w->cli_ctx, SSL_OP_NO_TICKET | SSL_OP_NO_RENEGOTIATION);
	SSL_CTX_set_options(w->up_ctx, SSL_OP_NO_RENEGOTIATION);
	/* Upstream sessions are kept per name and resumed (netd/gw/leafcache.h). */
	SSL_CTX_set_session_cache_mode(w->up_ctx, SSL_SESS_CACHE_CLIENT |
						  SSL_SESS_CACHE_NO_INTERNAL_STORE);
	SSL_CTX_sess_set_new_cb(w->up_ctx, gw_conn_new_session);
	SSL_CTX_set_alpn_select_cb(w->cli_ctx, alpn_select, NULL);
	SSL_CTX_set_mode(w->cli_ctx, SSL_MODE_RELEASE_BUFFERS);
	SSL_CTX_set_mode(w->up_ctx, SSL_MODE_RELEASE_BUFFERS);
	return 0;
}

/* chroot to the empty @root, become @user, keep no capability. */
static int drop_privileges(const char *user, const char *root)
{
	struct passwd *pw = getpwnam(user);

	if (!pw) {
		fprintf(stderr, "netd gateway-worker: no user '%s' (gateway.user in netd.yaml)\n", user);
		return -ENOENT;
	}
	if (pw->pw_uid == 0) {
		fprintf(stderr, "netd gateway-worker: gateway.user '%s' is root: refused\n", user);
		return -EPERM;
	}
	if (chroot(root) < 0 || chdir("/") < 0) {
		fprintf(stderr, "netd gateway-worker: chroot %s: %s\n", root, strerror(errno));
		return -errno;
	}
	/*
	 * The bounding set, where we may (it takes CAP_SETPCAP, which netd's
	 * unit does not grant): what matters is below, no capability survives
	 * the uid change, and with no new privileges and no execve (seccomp)
	 * nothing could regain one.
	 */
	for (int cap = 0; cap <= 63; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL && errno != EPERM)
			return -errno;
	if (setgroups(0, NULL) < 0 || setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid) < 0 ||
	    setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid) < 0) {
		fprintf(stderr, "netd gateway-worker: cannot become %s: %s\n", user, strerror(errno));
		return -errno;
	}
	if (setuid(0) == 0) {
		fprintf(stderr, "netd gateway-worker: could become root again after the drop\n");
		return -EPERM;	/* never back */
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		fprintf(stderr, "netd gateway-worker: no_new_privs: %s\n", strerror(errno));
		return -errno;
	}
	return 0;
}

#if defined(__SANITIZE_ADDRESS__)
#define GW_SANITIZED 1	/* LeakSanitizer stops the world with ptrace and clone */
#else
#define GW_SANITIZED 0
#endif

/* One argument comparison, every field set (libseccomp's SCMP_An() leaves one to the compiler). */
static struct scmp_arg_cmp cmp(unsigned int arg, enum scmp_compare op, scmp_datum_t a,
			       scmp_datum_t b)
{
	return (struct scmp_arg_cmp){ .arg = arg, .op = op, .datum_a = a, .datum_b = b };
}

/* A denylist filter: what a parser of hostile bytes must never be able to do. */
static int seccomp_setup(void)
{
	static const int denied[] = {
		SCMP_SYS(execve), SCMP_SYS(execveat), SCMP_SYS(mount), SCMP_SYS(umount2),
		SCMP_SYS(chroot), SCMP_SYS(pivot_root), SCMP_SYS(unshare), SCMP_SYS(setns),
		SCMP_SYS(bpf), SCMP_SYS(init_module), SCMP_SYS(finit_module),
		SCMP_SYS(delete_module), SCMP_SYS(kexec_load), SCMP_SYS(kexec_file_load),
		SCMP_SYS(keyctl), SCMP_SYS(add_key), SCMP_SYS(request_key),
		SCMP_SYS(perf_event_open), SCMP_SYS(process_vm_readv),
		SCMP_SYS(process_vm_writev), SCMP_SYS(personality), SCMP_SYS(userfaultfd),
		SCMP_SYS(open_by_handle_at), SCMP_SYS(name_to_handle_at), SCMP_SYS(reboot),
		SCMP_SYS(swapon), SCMP_SYS(swapoff), SCMP_SYS(acct), SCMP_SYS(creat),
		SCMP_SYS(openat2), SCMP_SYS(link), SCMP_SYS(linkat), SCMP_SYS(symlink),
		SCMP_SYS(symlinkat), SCMP_SYS(unlink), SCMP_SYS(unlinkat), SCMP_SYS(rename),
		SCMP_SYS(renameat), SCMP_SYS(renameat2), SCMP_SYS(mkdir), SCMP_SYS(mkdirat),
		SCMP_SYS(mknod), SCMP_SYS(mknodat), SCMP_SYS(chmod), SCMP_SYS(fchmod),
		SCMP_SYS(fchmodat), SCMP_SYS(chown), SCMP_SYS(fchown), SCMP_SYS(fchownat),
		SCMP_SYS(lchown), SCMP_SYS(truncate), SCMP_SYS(setuid), SCMP_SYS(setgid),
		SCMP_SYS(setreuid), SCMP_SYS(setregid), SCMP_SYS(setresuid),
		SCMP_SYS(setresgid), SCMP_SYS(setgroups), SCMP_SYS(capset),
	};
	static const int write_flags[] = { O_WRONLY, O_RDWR, O_CREAT, O_TRUNC };
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int r = 0;

	if (!ctx)
		return -ENOMEM;
	for (size_t i = 0; r == 0 && i < sizeof(denied) / sizeof(denied[0]); i++)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), denied[i], 0);
	for (size_t i = 0; r == 0 && i < sizeof(write_flags) / sizeof(write_flags[0]); i++) {
		scmp_datum_t f = (scmp_datum_t)write_flags[i];

		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(open), 1,
				     cmp(1, SCMP_CMP_MASKED_EQ, f, f));
		if (r == 0)
			r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(openat), 1,
					     cmp(2, SCMP_CMP_MASKED_EQ, f, f));
	}
	/* Sockets: AF_UNIX (1), AF_INET (2), AF_INET6 (10) only. */
	for (int fam = 3; r == 0 && fam < AF_INET6; fam++)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1,
				     cmp(0, SCMP_CMP_EQ, (scmp_datum_t)fam, 0));
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1,
				     cmp(0, SCMP_CMP_GT, AF_INET6, 0));
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1,
				     cmp(0, SCMP_CMP_EQ, AF_UNSPEC, 0));
	if (r == 0 && !GW_SANITIZED)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ptrace), 0);
	/* No new namespaces through clone either; clone3 reports ENOSYS so libc uses clone. */
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
				     cmp(0, SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER));
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
				     cmp(0, SCMP_CMP_MASKED_EQ, CLONE_NEWNET, CLONE_NEWNET));
	if (r == 0)
		r = seccomp_load(ctx);
	seccomp_release(ctx);
	return r;
}

/* One message from netd: a verdict for a waiting connection. */
static void on_chan(evutil_socket_t fd, short what, void *arg)
{
	struct gw_worker *w = arg;
	static char buf[GW_IPC_MAX + 1];
	ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
	void *root = NULL;

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		event_base_loopbreak(w->base);	/* netd is gone: so are we */
		return;
	}
	if (n < 0)
		return;
	switch (gw_ipc_type(buf, (size_t)n, &root)) {
	case GW_IPC_CONN: {
		struct gw_ipc_verdict v;

		if (gw_ipc_decode_verdict(root, &v) == 0)
			gw_conn_verdict(w, &v);	/* takes what v owns */
		else
			log_warn("gateway worker: a bad verdict from netd, ignored");
		break;
	}
	case GW_IPC_ROTATE: {
		struct gw_ipc_rotate r;

		if (gw_ipc_decode_rotate(root, &r) == 0) {
			gw_conn_rotate(w, &r);
			gw_ipc_rotate_clear(&r);
		} else {
			log_warn("gateway worker: a bad rotation from netd, ignored");
		}
		break;
	}
	default:
		log_warn("gateway worker: a message from netd that is not one, ignored");
	}
	json_decref(root);
	explicit_bzero(buf, (size_t)n);
}

static void on_accept(evutil_socket_t fd, short what, void *arg)
{
	struct gw_worker *w = arg;

	for (int i = 0; i < 64; i++) {
		int c = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (c < 0) {
			if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
				log_warn("gateway worker: accept: %s", strerror(errno));
			return;
		}
		gw_conn_accept(w, c);
	}
}

/* The first message: netd's timeouts. */
static int read_config(struct gw_worker *w)
{
	char buf[4096];
	void *root = NULL;
	ssize_t n;
	int r = -EBADMSG;

	do
		n = recv(w->chan, buf, sizeof(buf), 0);
	while (n < 0 && errno == EINTR);
	if (n > 0 && gw_ipc_type(buf, (size_t)n, &root) == GW_IPC_CONFIG)
		r = gw_ipc_decode_config(root, &w->cfg);
	json_decref(root);
	return r;
}

int gw_worker_main(int argc, char **argv)
{
	struct worker_args a = { 0 };
	struct gw_worker w = { .chan = GW_IPC_FD_CHAN };
	struct event *ev_chan, *ev_listen;

	if (parse_args(argc, argv, &a) < 0)
		return 2;
	signal(SIGPIPE, SIG_IGN);
	if (a.debug)
		log_set_level(LOG_LVL_DEBUG);
	gw_ipc_wipe_allocators();
	OPENSSL_init_ssl(OPENSSL_INIT_LOAD_CONFIG | OPENSSL_INIT_LOAD_SSL_STRINGS, NULL);
	if (fcntl(GW_IPC_FD_LISTEN, F_GETFD) < 0 || fcntl(GW_IPC_FD_CHAN, F_GETFD) < 0) {
		fprintf(stderr, "netd gateway-worker: fds 3 and 4 are not open (netd starts this)\n");
		return 2;
	}
	if (tls_setup(&w, a.ca_file) < 0)
		return 1;	/* said */
	if (read_config(&w) < 0) {
		fprintf(stderr, "netd gateway-worker: no config message from netd\n");
		return 1;
	}
	if (!(w.rate = gw_rate_new(GW_RATE_KEYS)) || !(w.leaves = gw_leafcache_new()) ||
	    !(w.base = event_base_new())) {
		fprintf(stderr, "netd gateway-worker: out of memory\n");
		return 1;
	}
	if (drop_privileges(a.user, a.root) < 0)
		return 1;
	if (seccomp_setup() < 0) {
		fprintf(stderr, "netd gateway-worker: cannot load the seccomp filter\n");
		return 1;
	}
	evutil_make_socket_nonblocking(GW_IPC_FD_LISTEN);
	evutil_make_socket_nonblocking(GW_IPC_FD_CHAN);
	ev_chan = event_new(w.base, GW_IPC_FD_CHAN, EV_READ | EV_PERSIST, on_chan, &w);
	ev_listen = event_new(w.base, GW_IPC_FD_LISTEN, EV_READ | EV_PERSIST, on_accept, &w);
	if (!ev_chan || !ev_listen || event_add(ev_chan, NULL) < 0 ||
	    event_add(ev_listen, NULL) < 0) {
		fprintf(stderr, "netd gateway-worker: cannot watch its sockets\n");
		return 1;
	}
	event_base_dispatch(w.base);
	gw_conn_close_all(&w);
	event_free(ev_chan);
	event_free(ev_listen);
	event_base_free(w.base);
	gw_rate_free(w.rate);
	gw_leafcache_free(w.leaves);
	SSL_CTX_free(w.up_ctx);
	SSL_CTX_free(w.cli_ctx);
	return 0;
}
