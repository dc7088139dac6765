// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of the pure parts of the data path: the demultiplexer's
 * per-socket queue (lib/vma/demux.c) and the checksums of the frames
 * send.c builds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "demux.h"
#include "udp.h"

/* ---- the per-socket queue ---- */

TEST(queue_grows_wraps_and_stops_at_the_ring_size)
{
	struct vringset r = { .chunks = 200 };
	struct vatt a = { .ring = &r };
	struct vdgram d = { 0 }, *p;
	uint32_t i, next = 0;

	for (i = 0; i < 150; i++) {
		d.addr = i;
		ASSERT_TRUE(vatt_q_push(&a, &d));
	}
	for (i = 0; i < 100; i++, next++) {
		p = vatt_q_peek(&a);
		ASSERT_NE(NULL, p);
		EXPECT_EQ(next, p->addr);
		vatt_q_pop(&a);
	}
	for (i = 150; i < 350; i++) {	/* wraps, then grows to 200 */
		d.addr = i;
		if (!vatt_q_push(&a, &d))
			break;
	}
	EXPECT_EQ(200, a.qlen);
	EXPECT_EQ(300, i);		/* full at the ring's chunk count */
	for (; (p = vatt_q_peek(&a)); next++) {
		EXPECT_EQ(next, p->addr);
		vatt_q_pop(&a);
	}
	EXPECT_EQ(300, next);
	free(a.q);
}

/* ---- checksums of the frames send.c builds ---- */

TEST(internet_checksum)
{
	/* an IPv4 header whose checksum is 0xb861 (checksum field zeroed) */
	static const uint8_t ip[20] = {
		0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
		0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
	};
	uint8_t odd[3] = { 0x01, 0x02, 0x03 };

	EXPECT_EQ(0xb861, vcsum_fold(vcsum_add(0, ip, sizeof(ip))));
	/* an odd length pads with a zero byte: 0x0102 + 0x0300 */
	EXPECT_EQ((uint16_t)~0x0402, vcsum_fold(vcsum_add(0, odd, 3)));
	/* carries fold back in */
	EXPECT_EQ((uint16_t)~0x0001, vcsum_fold(0x10000));
}

/* The sum of big-endian byte pairs, one at a time: what RFC 1071 says. */
static uint32_t pairs(uint32_t sum, const uint8_t *b, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(b[i] << 8 | b[i + 1]);
	if (len & 1)
		sum += (uint32_t)b[len - 1] << 8;
	return sum;
}

TEST(checksum_matches_byte_pairs)
{
	uint8_t buf[1600];
	uint32_t seed = 12345, base;
	size_t len, off;

	for (len = 0; len < sizeof(buf); len++) {
		seed = seed * 1103515245u + 12345u;
		buf[len] = (uint8_t)(seed >> 16);
	}
	memset(buf + 1000, 0xff, 600);	/* long runs of carries */
	for (len = 0; len <= 300; len++)
		for (off = 0; off < 4; off++) {
			/* a running sum as the callers carry one, odd starts */
			base = (uint32_t)(len * 7919u);
			ASSERT_EQ(vcsum_fold(pairs(base, buf + off, len)),
				  vcsum_fold(vcsum_add(base, buf + off, len)));
			ASSERT_EQ(vcsum_fold(pairs(0, buf + 1000 + off, len)),
				  vcsum_fold(vcsum_add(0, buf + 1000 + off, len)));
		}
	ASSERT_EQ(vcsum_fold(pairs(0, buf, sizeof(buf))),
		  vcsum_fold(vcsum_add(0, buf, sizeof(buf))));
}

TEST_HARNESS_MAIN
