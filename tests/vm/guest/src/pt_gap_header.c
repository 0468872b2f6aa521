// SPDX-License-Identifier: MIT
/*
 * Writes a few bytes of PT that a decoder syncs to and then rejects: a
 * PSB+ (PSB, TSC, MODE.Exec 64-bit, PSBEND) followed by a TNT packet,
 * which cannot come while tracing is off. Injected into a simulated ring
 * ahead of other bytes, it gives exactly one decode error, reported as a
 * gap at that TSC, so the gap belongs to whichever thread the sideband has
 * on the ring's CPU then: give one a thread read while it ran there.
 *   pt_gap_header FILE TSC
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	uint8_t pkt[29];
	uint64_t tsc;
	size_t n = 0;
	char *end;
	FILE *f;

	if (argc != 3) {
		fprintf(stderr, "usage: pt_gap_header FILE TSC\n");
		return 2;
	}
	tsc = strtoull(argv[2], &end, 0);
	if (end == argv[2] || *end) {
		fprintf(stderr, "pt_gap_header: bad TSC '%s'\n", argv[2]);
		return 2;
	}
	for (int i = 0; i < 8; i++) {		/* PSB */
		pkt[n++] = 0x02;
		pkt[n++] = 0x82;
	}
	pkt[n++] = 0x19;			/* TSC, 7 bytes little-endian */
	for (int i = 0; i < 7; i++)
		pkt[n++] = (uint8_t)(tsc >> (8 * i));
	pkt[n++] = 0x99;			/* MODE.Exec: 64-bit */
	pkt[n++] = 0x01;
	pkt[n++] = 0x02;			/* PSBEND */
	pkt[n++] = 0x23;
	pkt[n++] = 0x06;			/* TNT-8, one taken branch */
	f = fopen(argv[1], "wb");
	if (!f || fwrite(pkt, 1, n, f) != n || fclose(f)) {
		perror(argv[1]);
		return 1;
	}
	printf("PT header at TSC %llu\n", (unsigned long long)tsc);
	return 0;
}
