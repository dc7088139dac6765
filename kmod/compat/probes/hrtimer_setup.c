// SPDX-License-Identifier: GPL-2.0
/* hrtimer_setup() sets a timer's function, clock and mode in one call. */
#include <linux/hrtimer.h>

static enum hrtimer_restart probe_fn(struct hrtimer *t)
{
	return HRTIMER_NORESTART;
}

static void __used probe_setup(struct hrtimer *t)
{
	hrtimer_setup(t, probe_fn, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
}
