// SPDX-License-Identifier: GPL-2.0
/*
 * The wake-up protocol of lib/vma/wait.c, white-box: a producer queues
 * datagrams (vwait_post, as a thread draining a shared ring does) while a
 * consumer sleeps on the eventfd whenever nothing is queued, consumes it
 * when it fires and takes what is queued. A lost wakeup shows as a sleep
 * that times out with datagrams queued; the invariant "armed means the
 * eventfd is readable" is checked whenever both sides are still.
 */
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "wait.h"

#define ROUNDS	200000

static struct vwait w;
static volatile int done;
static unsigned int seed = 1;

static void gap(void)
{
	int n = rand_r(&seed) % 64, i;

	for (i = 0; i < n; i++)
		__asm__ volatile("" ::: "memory");
	if (!(rand_r(&seed) % 1024))
		usleep(rand_r(&seed) % 50);
}

static void *producer(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < ROUNDS; i++) {
		vwait_post(&w, 100);
		if (i & 1)
			vwait_post(&w, 100);	/* bursts of two, as in the review */
		gap();
	}
	done = 1;
	return NULL;
}

TEST(no_lost_wakeup_between_a_drainer_and_a_sleeper)
{
	uint64_t taken = 0, want = ROUNDS + ROUNDS / 2;
	struct pollfd p;
	pthread_t t;
	uint32_t n;
	int rc, lost = 0;

	vwait_init(&w);
	ASSERT_EQ(0, vwait_efd(&w));
	ASSERT_EQ(0, pthread_create(&t, NULL, producer, NULL));
	while (taken < want) {
		if (!vwait_sleep_begin(&w, vwait_gen(&w))) {
			p = (struct pollfd){ .fd = w.efd, .events = POLLIN };
			rc = poll(&p, 1, 2000);
			if (rc == 0 && vwait_ready(&w)) {
				lost++;
				break;
			}
			vwait_sleep_end(&w, rc > 0);
		} else {
			vwait_sleep_end(&w, false);
		}
		n = vwait_ready(&w);
		taken += n;
		vwait_take(&w, n, (uint64_t)n * 100);
	}
	pthread_join(t, NULL);
	EXPECT_EQ(0, lost) TH_LOG("a sleeper slept through queued datagrams: ready %u armed %d",
				  vwait_ready(&w), w.armed);
	EXPECT_EQ(want, taken);
	/* both still: armed means readable */
	p = (struct pollfd){ .fd = w.efd, .events = POLLIN };
	if (__atomic_load_n(&w.armed, __ATOMIC_SEQ_CST))
		EXPECT_EQ(1, poll(&p, 1, 0));
	vwait_destroy(&w);
}

/*
 * The review's race, with nothing taken: an epoll set watches, another
 * thread consumes the eventfd whenever it sees it readable while bursts of two
 * datagrams are queued. After each burst the eventfd must be readable
 * (datagrams are queued and a set watches), whatever the interleaving.
 */
static volatile int round_done, round_seen;

static void *consumer(void *arg)
{
	struct pollfd p = { .events = POLLIN };
	int r;

	(void)arg;
	p.fd = w.efd;
	for (r = 1; r <= ROUNDS / 10; r++) {
		/* as a wait does: consume it when it is seen readable */
		while (round_done < r)
			if (poll(&p, 1, 0) == 1)
				vwait_consume(&w);
		round_seen = r;
	}
	return NULL;
}

TEST(armed_means_readable_under_a_racing_consumer)
{
	struct pollfd p;
	pthread_t t;
	int r, lost = 0;

	vwait_init(&w);
	ASSERT_EQ(0, vwait_efd(&w));
	vwait_set_add(&w, 1);
	round_done = round_seen = 0;
	ASSERT_EQ(0, pthread_create(&t, NULL, consumer, NULL));
	for (r = 1; r <= ROUNDS / 10 && !lost; r++) {
		vwait_post(&w, 100);
		gap();
		vwait_post(&w, 100);
		round_done = r;
		while (round_seen < r)
			;
		/* both still: datagrams queued, a set watching */
		p = (struct pollfd){ .fd = w.efd, .events = POLLIN };
		if (poll(&p, 1, 1000) != 1)
			lost = r;
	}
	round_done = ROUNDS;
	pthread_join(t, NULL);
	EXPECT_EQ(0, lost) TH_LOG("round %d: %u queued, armed %d, eventfd not readable",
				  lost, vwait_ready(&w), w.armed);
	vwait_set_add(&w, -1);
	vwait_destroy(&w);
}

/* The last datagram taken consumes an armed eventfd: no stale readiness. */
TEST(taking_the_last_datagram_leaves_the_eventfd_quiet)
{
	struct pollfd p;

	vwait_init(&w);
	ASSERT_EQ(0, vwait_efd(&w));
	vwait_set_add(&w, 1);		/* an epoll set watches */
	vwait_post(&w, 100);
	vwait_post(&w, 100);
	EXPECT_EQ(200, vwait_bytes(&w));	/* FIONREAD's total */
	p = (struct pollfd){ .fd = w.efd, .events = POLLIN };
	EXPECT_EQ(1, poll(&p, 1, 0));
	vwait_take(&w, 2, 200);
	EXPECT_EQ(0, vwait_bytes(&w));
	EXPECT_EQ(0, poll(&p, 1, 0));
	EXPECT_EQ(0, w.armed);
	vwait_set_add(&w, -1);
	vwait_destroy(&w);
}

TEST_HARNESS_MAIN
