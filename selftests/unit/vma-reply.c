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

TEST(misses_double_the_skip_up_to_the_cap)
{
	struct vreply p = { 0 };
	uint32_t want = 1;
	int i, n;

	/* the first miss leaves the debt under the bound */
	ASSERT_TRUE(vreply_try(&p));
	vreply_done(&p, VREPLY_MISSED);
	ASSERT_EQ(0, p.skip);
	/* then each one doubles the sleeps before the next try */
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
	EXPECT_EQ(21, p.n[VREPLY_MISSED]);
}

TEST(answers_in_time_start_over)
{
	struct vreply p = { 0 };

	/* a long run of misses: polls become rare */
	EXPECT_GT(20, polls(&p, 5000, false));
	/* the next try's answer comes: every receive polls again */
	while (!vreply_try(&p))
		;
	vreply_done(&p, VREPLY_CAME);
	EXPECT_EQ(0, p.skip);
	EXPECT_EQ(100, polls(&p, 100, true));
	/* the debt paid back: a miss now costs no skip */
	EXPECT_EQ(0, p.debt);
	EXPECT_EQ(0, p.level);
	EXPECT_EQ(1, polls(&p, 1, false));
	EXPECT_EQ(0, p.skip);
}

/*
 * A socket whose answers never come pays for few polls: one before the
 * doubling starts, one per doubling, then one per VREPLY_SKIP_MAX + 1.
 */
TEST(misses_forever_cost_one_poll_in_a_thousand)
{
	struct vreply p = { 0 };
	int n = polls(&p, 1000000, false);

	EXPECT_GE(n, 1000000 / (VREPLY_SKIP_MAX + 1));
	EXPECT_LE(n, 1000000 / (VREPLY_SKIP_MAX + 1) + VREPLY_LEVEL_MAX + 2);
	EXPECT_LE(p.skip, VREPLY_SKIP_MAX);
	EXPECT_LE(p.level, VREPLY_LEVEL_MAX);
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

/* How many of n receives polled, ending by turns: k so, then one as e. */
static int mixed(struct vreply *p, int n, int k, enum vreply_end e)
{
	int i, polled = 0, j = 0;

	for (i = 0; i < n; i++)
		if (vreply_try(p)) {
			polled++;
			vreply_done(p, j++ % (k + 1) < k ? VREPLY_CAME : e);
		}
	return polled;
}

/*
 * Two ends polling for each other: when one sleeps, the other's answer
 * comes late. Half the answers late keep it polling; late ones alone,
 * a peer slower than the poll, do not.
 */
TEST(half_the_answers_late_keep_polling)
{
	struct vreply p = { 0 }, q = { 0 };

	EXPECT_EQ(10000, mixed(&p, 10000, 1, VREPLY_LATE_CAME));
	EXPECT_EQ(5000, p.n[VREPLY_LATE_CAME]);
	EXPECT_EQ(0, p.skip);
	EXPECT_LT(mixed(&q, 100000, 0, VREPLY_LATE_CAME),
		  100000 / (VREPLY_SKIP_MAX + 1) + 100);
}

/*
 * The try after a back-off is a probe, polling longer; an answer in it
 * clears the debt, so the end that caught one polls for a while.
 */
TEST(a_probe_s_answer_clears_the_debt)
{
	struct vreply p = { 0 };
	int i;

	EXPECT_EQ(VREPLY_POLL, vreply_try(&p));
	vreply_done(&p, VREPLY_MISSED);
	EXPECT_EQ(VREPLY_POLL, vreply_try(&p));
	vreply_done(&p, VREPLY_MISSED);
	EXPECT_EQ(1, p.skip);
	EXPECT_EQ(VREPLY_SLEEP, vreply_try(&p));
	EXPECT_EQ(VREPLY_PROBE_POLL, vreply_try(&p));
	vreply_done(&p, VREPLY_CAME);
	EXPECT_EQ(0, p.debt);
	/* polls again, as a plain poll, through late answers */
	for (i = 0; i < VREPLY_DEBT_MAX - 1; i++) {
		ASSERT_EQ(VREPLY_POLL, vreply_try(&p));
		vreply_done(&p, VREPLY_LATE_CAME);
	}
	EXPECT_EQ(0, p.skip);
	/* the debt at the bound again: the skip doubles from the last */
	ASSERT_EQ(VREPLY_POLL, vreply_try(&p));
	vreply_done(&p, VREPLY_LATE_CAME);
	EXPECT_EQ(3, p.skip);
	for (i = 0; i < 3; i++)
		EXPECT_EQ(VREPLY_SLEEP, vreply_try(&p));
	/* a probe whose answer is late: again */
	EXPECT_EQ(VREPLY_PROBE_POLL, vreply_try(&p));
	vreply_done(&p, VREPLY_LATE_CAME);
	EXPECT_EQ(7, p.skip);
}

/*
 * A relay (sends to one address, receives from another) and a server of
 * many clients: others' datagrams, in the poll or late, stop the polls,
 * unless four answers in time come for each.
 */
TEST(others_datagrams_stop_the_polls)
{
	struct vreply p = { 0 }, q = { 0 }, r = { 0 };

	EXPECT_LT(mixed(&p, 100000, 0, VREPLY_OTHER),
		  100000 / (VREPLY_SKIP_MAX + 1) + 60);
	EXPECT_LT(mixed(&q, 100000, 1, VREPLY_OTHER), 3000);
	EXPECT_EQ(100000, mixed(&r, 100000, 4, VREPLY_OTHER));
}

TEST(keys_name_address_and_port)
{
	uint8_t a[16] = { 0 }, b[16] = { 0 };

	a[10] = a[11] = 0xff;
	a[12] = 10, a[13] = 8, a[14] = 0, a[15] = 1;
	memcpy(b, a, 16);
	EXPECT_EQ(vreply_key(a, 9), vreply_key(b, 9));
	EXPECT_NE(vreply_key(a, 9), vreply_key(b, 10));
	b[15] = 2;
	EXPECT_NE(vreply_key(a, 9), vreply_key(b, 9));
	memset(b, 0, 16);
	EXPECT_NE(0, vreply_key(b, 0));
	b[0] = 0xfd;
	EXPECT_NE(vreply_key(a, 9), vreply_key(b, 9));
}

TEST_HARNESS_MAIN
