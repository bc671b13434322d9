/*
 * quic_send - the QUIC client half sni_quic.sh needs and ngtcp2's client
 * cannot be made to send: a ClientHello for NAME large enough (about 1.9
 * KB, a post-quantum key share's size) to be split over two Initial
 * datagrams, sent from one UDP socket to ADDR PORT: the second half first,
 * then the first half, then both again (a client's retransmissions).
 * Built by tests/unit/quic_enc.h (test only).  Exit status 0 once sent;
 * it reads nothing back.  With "ech", the large extension has the type of
 * encrypted_client_hello (0xfe0d), as a GREASE ECH hello (Chrome's).
 *   quic_send ADDR PORT NAME [ech]
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/unit/quic_enc.h"

int main(int argc, char **argv)
{
	static const uint8_t dcid[8] = { 0x51, 0x75, 0x69, 0x63, 0x5f, 0x6e, 0x65, 0x74 };
	static uint8_t hello[4096], frames[4096], d[2][1400];
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct quic_keys k;
	size_t hl, n[2], cut;
	int fd;

	if ((argc != 4 && (argc != 5 || strcmp(argv[4], "ech") != 0)) ||
	    inet_pton(AF_INET, argv[1], &sa.sin_addr) != 1) {
		fprintf(stderr, "usage: quic_send ADDR PORT NAME [ech]\n");
		return 2;
	}
	sa.sin_port = htons((uint16_t)atoi(argv[2]));
	hl = qe_client_hello_ext(hello, argv[3], 1800, argc == 5 ? 0xfe0d : 0x0a0a);
	cut = hl / 2;
	if (quic_initial_keys(QUIC_V1, dcid, sizeof(dcid), false, &k) < 0)
		return 1;
	for (int i = 0; i < 2; i++) {
		struct qe_pkt p = { .version = QUIC_V1, .dcid = dcid, .dcid_len = sizeof(dcid),
				    .pn = (uint64_t)i, .pn_len = 2, .frames = frames, .size = 1300 };

		p.frames_len = i ? qe_crypto(frames, 0, hello, cut)
				 : qe_crypto(frames, cut, hello + cut, hl - cut);
		n[i] = qe_initial(d[i], &p, &k);
	}
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("quic_send");
		return 1;
	}
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 2; i++) {
			if (send(fd, d[i], n[i], 0) < 0)
				perror("quic_send: send");
			usleep(200000);
		}
	close(fd);
	return 0;
}
