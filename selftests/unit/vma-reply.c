// SPDX-License-Identifier: GPL-2.0
/*
 * The answer poll's back-off (lib/vma/reply.h), white-box: which
 * receives after a send poll before sleeping, given how the polls before
 * them ended. The receive loop that calls it is tested in the VM
 * (63-preload-findings).
 */
#include "harness.h"
#include "reply.h"

/* How many of the next n receives would poll, each poll ending so. */
static int polls(struct vreply *p, int n, bool came)
{
	int i, k = 0;

	for (i = 0; i < n; i++)
		if (vreply_try(p)) {
			k++;
			vreply_done(p, came ? VREPLY_CAME : VREPLY_MISSED);
		}
	return k;
}

TEST(answers_in_time_keep_every_receive_polling)
{
	struct vreply p = { 0 };

	EXPECT_EQ(1000, polls(&p, 1000, true));
	EXPECT_EQ(1000, p.n[VREPLY_CAME]);
	EXPECT_EQ(0, p.n[VREPLY_MISSED]);
}

TEST(grace_then_skips_double_up_to_the_cap)
{
	struct vreply p = { 0 };
	uint32_t want = 1;
	int i, n;

	/* the first VREPLY_GRACE - 1 empty polls change nothing */
	for (i = 0; i < VREPLY_GRACE - 1; i++) {
		ASSERT_TRUE(vreply_try(&p));
		vreply_done(&p, VREPLY_MISSED);
		ASSERT_EQ(0, p.skip);
	}
	/* then each empty poll doubles the sleeps before the next */
	for (i = 0; i < 20; i++) {
		ASSERT_TRUE(vreply_try(&p));
		vreply_done(&p, VREPLY_MISSED);
		ASSERT_EQ(want, p.skip) TH_LOG("poll %d", i);
		for (n = 0; n < (int)want; n++)
			ASSERT_FALSE(vreply_try(&p));
		if (want < VREPLY_SKIP_MAX)
			want = want * 2 + 1;
	}
	EXPECT_EQ(VREPLY_SKIP_MAX, want);
	EXPECT_EQ(VREPLY_GRACE - 1 + 20, p.n[VREPLY_MISSED]);
}

TEST(one_answer_in_time_starts_over)
{
	struct vreply p = { 0 };

	/* a long run of misses: polls become rare */
	EXPECT_GT(20, polls(&p, 5000, false));
	/* the next try's answer comes: every receive polls again */
	while (!vreply_try(&p))
		;
	vreply_done(&p, VREPLY_CAME);
	EXPECT_EQ(0, p.miss);
	EXPECT_EQ(0, p.skip);
	EXPECT_EQ(100, polls(&p, 100, true));
}

/*
 * A steady receiver whose answers never come pays for few polls: at most
 * the grace and then one per doubling, until one per VREPLY_SKIP_MAX + 1.
 */
TEST(misses_forever_cost_one_poll_in_a_thousand)
{
	struct vreply p = { 0 };
	int n = polls(&p, 1000000, false);

	EXPECT_GE(n, 1000000 / (VREPLY_SKIP_MAX + 1));
	EXPECT_LE(n, 1000000 / (VREPLY_SKIP_MAX + 1) + VREPLY_GRACE + 10);
	EXPECT_LE(p.skip, VREPLY_SKIP_MAX);
	EXPECT_LE(p.miss, 32);
}

/* A ping-pong that loses one exchange to a sleep keeps polling. */
TEST(one_late_answer_in_a_ping_pong_costs_no_sleeps)
{
	struct vreply p = { 0 };
	int i;

	for (i = 0; i < 10; i++) {
		EXPECT_EQ(50, polls(&p, 50, true));
		ASSERT_TRUE(vreply_try(&p));
		vreply_done(&p, VREPLY_MISSED);
	}
	EXPECT_EQ(0, p.skip);
	EXPECT_EQ(10, p.n[VREPLY_MISSED]);
}

/*
 * Two ends polling for each other: when one sleeps, the other's poll runs
 * out and its answer comes late. Late answers keep it polling, however
 * many in a row; misses among them do not add up across the late ones.
 */
TEST(late_answers_keep_polling)
{
	struct vreply p = { 0 };
	int i;

	for (i = 0; i < 100; i++) {
		ASSERT_TRUE(vreply_try(&p));
		vreply_done(&p, VREPLY_LATE_CAME);
	}
	for (i = 0; i < 100; i++) {
		ASSERT_TRUE(vreply_try(&p));
		vreply_done(&p, i % 3 ? VREPLY_MISSED : VREPLY_LATE_CAME);
	}
	EXPECT_EQ(0, p.skip);
	EXPECT_EQ(134, p.n[VREPLY_LATE_CAME]);
	EXPECT_EQ(66, p.n[VREPLY_MISSED]);
}

TEST_HARNESS_MAIN
