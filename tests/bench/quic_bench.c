/*
 * quic_bench - what the QUIC check adds per new flow, in netd's own code
 * (release build, no sanitizers), beside the TCP check's parse of the same
 * kind of ClientHello: `make bench` prints it (tests/bench/run.sh).  Per
 * operation, the median of BENCH_QUIC_ROUNDS (5) rounds of N:
 *   tcp sni_parse      a 1-record TLS ClientHello (what a TCP flow costs
 *                      netd's parser once its bytes are in)
 *   quic keys          quic_initial_keys(): HKDF-Extract + 4 Expand-Labels
 *   quic initial       quic_dgram_read() of a 1200-byte v1 Initial for a
 *                      fresh connection (keys, header protection, AES-GCM,
 *                      frames, reassembly) + the ClientHello parse
 *   quic initial x2    the same hello, ~1.9 KB, over two datagrams
 *   qflow new flow     qflow_packet() + qflow_settle() of a new flow (the
 *                      table's work around the above), per flow
 * Not a test: it prints figures and asserts nothing about time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "netd/sni/qflow.h"
#include "netd/sni/quic.h"
#include "netd/sni/sni.h"
#include "tests/unit/quic_enc.h"

static uint8_t hello[4096], tls[4200], d1[1400], d2[1400], d3[1400];
static size_t hl, tl, n1, n2, n3;
static struct quic_hello qh;

static int on_crypto(void *ctx, uint64_t off, const uint8_t *d, size_t n)
{
	return quic_hello_add(&qh, off, d, n);
}

static void on_reset(void *ctx)
{
	quic_hello_init(&qh);
}

static const struct quic_reader rd = { on_crypto, on_reset, NULL };

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static volatile int sink;

static void op_tcp(int i)
{
	struct sni_result r;

	sink += sni_parse(tls, tl, &r);
}

static void op_keys(int i)
{
	struct quic_keys k;
	uint8_t dcid[8] = { 1, 2, 3, 4, 5, 6, 7, (uint8_t)i };

	sink += quic_initial_keys(QUIC_V1, dcid, 8, false, &k);
}

static void op_initial(int i)
{
	struct quic_conn c = { 0 };
	struct quic_dgram out;
	struct sni_result r;

	quic_hello_init(&qh);
	sink += quic_dgram_read(&c, d1, n1, &rd, &out);
	sink += quic_hello_parse(&qh, &r);
}

static void op_initial2(int i)
{
	struct quic_conn c = { 0 };
	struct quic_dgram out;
	struct sni_result r;

	quic_hello_init(&qh);
	sink += quic_dgram_read(&c, d2, n2, &rd, &out);
	sink += quic_dgram_read(&c, d3, n3, &rd, &out);
	sink += quic_hello_parse(&qh, &r);
}

static struct qflow_tab *tab;

static void op_qflow(int i)
{
	struct qflow_pkt p = { .sport = (uint16_t)i, .dport = 443, .payload = d1, .len = n1 };
	struct sni_result r;

	p.src.family = p.dst.family = AF_INET;
	memcpy(p.src.a, &i, 4);
	sink += qflow_packet(tab, &p, 0, 0, 5000, &r);
	qflow_settle(tab, &p, true, 0);
}

static void run(const char *name, void (*op)(int), int n)
{
	double r[5];

	for (int k = 0; k < 5; k++) {
		double t0 = now_ns();

		for (int i = 0; i < n; i++)
			op(i + k * n);
		r[k] = (now_ns() - t0) / n;
		if (op == op_qflow) {
			qflow_free(tab);
			qflow_new(1, &tab);
		}
	}
	qsort(r, 5, sizeof(r[0]), cmp);
	printf("%-18s %10.0f ns  (%5.1f us; range %.0f-%.0f ns)\n", name, r[2], r[2] / 1000, r[0],
	       r[4]);
}

/* An Initial of @v with CRYPTO [@from, @to) of hello. */
static size_t initial(uint8_t *out, uint64_t pn, size_t from, size_t to)
{
	static const uint8_t dcid[8] = { 8, 7, 6, 5, 4, 3, 2, 1 };
	uint8_t frames[4096];
	struct quic_keys k;
	struct qe_pkt p = { .version = QUIC_V1, .dcid = dcid, .dcid_len = 8, .pn = pn,
			    .pn_len = 2, .frames = frames, .size = 1200 };

	quic_initial_keys(QUIC_V1, dcid, 8, false, &k);
	p.frames_len = qe_crypto(frames, from, hello + from, to - from);
	return qe_initial(out, &p, &k);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2000;

	hl = qe_client_hello(hello, "allowed.example", 400);	/* ~500 B, a classic hello */
	tls[0] = 22;
	tls[1] = 3;
	tls[2] = 1;
	tls[3] = (uint8_t)(hl >> 8);
	tls[4] = (uint8_t)hl;
	memcpy(tls + 5, hello, hl);
	tl = hl + 5;
	n1 = initial(d1, 0, 0, hl);
	hl = qe_client_hello(hello, "allowed.example", 1800);	/* ~1.9 KB, post-quantum */
	n2 = initial(d2, 0, 0, 1000);
	n3 = initial(d3, 1, 1000, hl);
	qflow_new(1, &tab);
	printf("per operation (median of 5 rounds of %d; release build):\n", n);
	run("tcp sni_parse", op_tcp, n * 10);
	run("quic keys", op_keys, n);
	run("quic initial", op_initial, n);
	run("quic initial x2", op_initial2, n);
	run("qflow new flow", op_qflow, n);
	qflow_free(tab);
	return 0;
}
