// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of the user-space ring accessors (lib/include/vmak/ring.h):
 * a producer and a consumer view of one shared region, as the kernel and
 * the library have.
 */
#include <pthread.h>

#include "harness.h"
#include "vmak/ring.h"

struct shared {
	uint32_t producer __attribute__((aligned(64)));
	uint32_t consumer __attribute__((aligned(64)));
	uint32_t flags __attribute__((aligned(64)));
	uint64_t desc[] __attribute__((aligned(64)));
};

#define RING_VIEW(v, sh, n, start) do {					\
	memset((v), 0, sizeof(*(v)));					\
	(v)->producer = &(sh)->producer;				\
	(v)->consumer = &(sh)->consumer;				\
	(v)->flags = &(sh)->flags;					\
	(v)->desc = (sh)->desc;						\
	(v)->size = (n);						\
	(v)->mask = (n) - 1;						\
	(v)->cached_prod = (v)->cached_cons = (start);			\
} while (0)

static struct shared *ring_new(uint32_t n, uint32_t start,
			       struct vmak_ring_prod *prod,
			       struct vmak_ring_cons *cons)
{
	struct shared *sh = calloc(1, sizeof(*sh) + n * sizeof(uint64_t));

	sh->producer = sh->consumer = start;	/* exercise wrap-around */
	RING_VIEW(prod, sh, n, start);
	RING_VIEW(cons, sh, n, start);
	return sh;
}

TEST(empty_ring_peeks_nothing)
{
	struct vmak_ring_prod p;
	struct vmak_ring_cons c;
	struct shared *sh = ring_new(8, 0, &p, &c);
	uint32_t idx;

	EXPECT_EQ(0, vmak_ring_peek(&c, 8, &idx));
	EXPECT_EQ(8, vmak_ring_free(&p, 1));
	free(sh);
}

TEST(fills_exactly_to_size)
{
	struct vmak_ring_prod p;
	struct vmak_ring_cons c;
	struct shared *sh = ring_new(8, 0, &p, &c);
	uint32_t idx;

	EXPECT_EQ(0, vmak_ring_reserve(&p, 9, &idx));
	ASSERT_EQ(8, vmak_ring_reserve(&p, 8, &idx));
	for (uint32_t i = 0; i < 8; i++)
		*vmak_ring_fill_addr(&p, idx + i) = 100 + i;
	EXPECT_EQ(0, vmak_ring_reserve(&p, 1, &idx));
	/* Not visible before submit. */
	EXPECT_EQ(0, vmak_ring_peek(&c, 8, &idx));
	vmak_ring_submit(&p, 8);
	ASSERT_EQ(3, vmak_ring_peek(&c, 3, &idx));
	EXPECT_EQ(100, vmak_ring_comp_addr(&c, idx));
	ASSERT_EQ(5, vmak_ring_peek(&c, 8, &idx));
	EXPECT_EQ(103, vmak_ring_comp_addr(&c, idx));
	/* Slots come back to the producer only after release. */
	EXPECT_EQ(0, vmak_ring_reserve(&p, 1, &idx));
	vmak_ring_release(&c, 8);
	EXPECT_EQ(8, vmak_ring_free(&p, 8));
	free(sh);
}

TEST(wraps_around_u32)
{
	struct vmak_ring_prod p;
	struct vmak_ring_cons c;
	struct shared *sh = ring_new(16, 0xfffffff0u, &p, &c);
	uint64_t expect = 0;

	for (int round = 0; round < 10; round++) {
		uint32_t idx, n;

		ASSERT_EQ(11, vmak_ring_reserve(&p, 11, &idx));
		for (uint32_t i = 0; i < 11; i++)
			*vmak_ring_fill_addr(&p, idx + i) = expect + i;
		vmak_ring_submit(&p, 11);
		n = vmak_ring_peek(&c, 64, &idx);
		ASSERT_EQ(11, n);
		for (uint32_t i = 0; i < n; i++)
			EXPECT_EQ(expect + i, vmak_ring_comp_addr(&c, idx + i));
		vmak_ring_release(&c, n);
		expect += 11;
	}
	EXPECT_EQ(0xfffffff0u + 110u, sh->producer);
	free(sh);
}

TEST(need_wakeup_flag)
{
	struct vmak_ring_prod p;
	struct vmak_ring_cons c;
	struct shared *sh = ring_new(8, 0, &p, &c);

	EXPECT_FALSE(vmak_ring_needs_wakeup(&p));
	sh->flags = VMAK_RING_NEED_WAKEUP;
	EXPECT_TRUE(vmak_ring_needs_wakeup(&p));
	free(sh);
}

TEST(recycle_moves_rx_chunks_to_fill)
{
	struct vmak_ring_prod fp, rp;
	struct vmak_ring_cons fc, rc;
	struct shared *f = ring_new(8, 0, &fp, &fc);
	struct shared *r = calloc(1, sizeof(*r) + 8 * sizeof(struct vmak_rx_desc));
	uint32_t idx;

	/* An RX ring over r: the test produces as the kernel would. */
	RING_VIEW(&rp, r, 8, 0);
	RING_VIEW(&rc, r, 8, 0);
	ASSERT_EQ(3, vmak_ring_reserve(&rp, 3, &idx));
	for (uint32_t i = 0; i < 3; i++)
		((struct vmak_rx_desc *)rp.desc)[(idx + i) & rp.mask].addr =
			4096 * (i + 1) + 64;
	vmak_ring_submit(&rp, 3);
	ASSERT_EQ(3, vmak_ring_peek(&rc, 8, &idx));
	EXPECT_EQ(3, vmak_ring_recycle(&fp, &rc, idx, 3));
	vmak_ring_release(&rc, 3);
	ASSERT_EQ(3, vmak_ring_peek(&fc, 8, &idx));
	for (uint32_t i = 0; i < 3; i++)
		EXPECT_EQ(4096 * (i + 1) + 64, vmak_ring_comp_addr(&fc, idx + i));
	/* No room for 8 more on a ring holding 3 unreleased: nothing moved. */
	EXPECT_EQ(0, vmak_ring_recycle(&fp, &rc, idx, 8));
	free(f);
	free(r);
}

#define STRESS_N 2000000u

static void *stress_consumer(void *arg)
{
	struct vmak_ring_cons *c = arg;
	uint64_t expect = 0;

	while (expect < STRESS_N) {
		uint32_t idx, n = vmak_ring_peek(c, 32, &idx);

		for (uint32_t i = 0; i < n; i++)
			if (vmak_ring_comp_addr(c, idx + i) != expect++)
				return (void *)1;
		if (n)
			vmak_ring_release(c, n);
	}
	return NULL;
}

TEST(two_threads_see_every_entry_in_order)
{
	struct vmak_ring_prod p;
	struct vmak_ring_cons c;
	struct shared *sh = ring_new(64, 0xffff0000u, &p, &c);
	uint64_t next = 0;
	pthread_t t;
	void *ret;

	ASSERT_EQ(0, pthread_create(&t, NULL, stress_consumer, &c));
	while (next < STRESS_N) {
		uint32_t idx, n = 7;

		if (STRESS_N - next < n)
			n = (uint32_t)(STRESS_N - next);
		if (!vmak_ring_reserve(&p, n, &idx))
			continue;
		for (uint32_t i = 0; i < n; i++)
			*vmak_ring_fill_addr(&p, idx + i) = next++;
		vmak_ring_submit(&p, n);
	}
	ASSERT_EQ(0, pthread_join(t, &ret));
	EXPECT_TRUE(ret == NULL);
	free(sh);
}

TEST_HARNESS_MAIN
