// SPDX-License-Identifier: GPL-2.0
/*
 * 10,000 ring set lives (create, UMEM, four rings, bind, a rule, a
 * netlink look, close) return what they took: the module's pinned pages,
 * its module reference count, the rings in a dump, and unreclaimable slab
 * memory (within a margin far below what a leak of one small object per
 * cycle would add).
 */
#include "harness.h"
#include "common.h"

#define CYCLES 10000
#define PORT 5100

static long module_refcnt(void)
{
	char buf[32] = "";
	FILE *f = fopen("/sys/module/vmak/refcnt", "re");
	long v = -1;

	if (f) {
		if (fgets(buf, sizeof(buf), f))
			v = strtol(buf, NULL, 10);
		fclose(f);
	}
	return v;
}

TEST_TIMEOUT(ring_lives_return_everything, 900)
{
	struct vmak_ringset_config cfg;
	struct vmak_ringset keep, rs;
	struct vmak_ring_status *st = NULL;
	uint64_t pin0, slab0, slab1, pin1 = 0;
	long ref0, ref1 = 0;
	int fam, udp, rings0 = 0, rings1 = 0;
	struct vnet net;

	FAMILY_OR_SKIP(fam);
	ASSERT_EQ(0, vnet_setup(&net, 1));
	udp = udp_bound(AF_INET, ADDR_B, PORT);
	ASSERT_GE(udp, 0);
	vmak_ringset_config_default(&cfg);
	cfg.ifindex = (unsigned int)net.ifindex_b;
	cfg.rx_size = cfg.fill_size = cfg.tx_size = cfg.comp_size = 64;
	cfg.umem_len = 64 * 2048;
	/* one ring stays bound: the device's hook stays, cycles stay cheap */
	ASSERT_EQ(0, vmak_ringset_open(&keep, &cfg));

	pin0 = module_pinned();
	ref0 = module_refcnt();
	ASSERT_EQ(0, vmak_ctl_ring_list(NULL, count_rings, &rings0));
	slab0 = meminfo_kb("SUnreclaim");
	for (int i = 0; i < CYCLES; i++) {
		ASSERT_EQ(0, vmak_ringset_open(&rs, &cfg));
		ASSERT_EQ(0, vmak_rule_add_socket(rs.fd, udp, (uint32_t)i));
		if (i % 100 == 0) {
			struct vmak_ring_info info;
			socklen_t len = sizeof(info);

			ASSERT_EQ(0, getsockopt(rs.fd, SOL_VMAK, VMAK_RING_INFO, &info, &len));
			ASSERT_EQ(0, ring_get(info.id, &st));
			ASSERT_EQ(1, st->rule_count);
		}
		vmak_ringset_close(&rs);
	}
	/* UMEMs are released from a workqueue after an RCU grace period. */
	for (int t = 0; t < 100; t++) {
		pin1 = module_pinned();
		ref1 = module_refcnt();
		if (pin1 == pin0 && ref1 == ref0)
			break;
		usleep(50000);
	}
	ASSERT_EQ(0, vmak_ctl_ring_list(NULL, count_rings, &rings1));
	slab1 = meminfo_kb("SUnreclaim");
	TH_LOG("%d cycles: pinned %llu -> %llu, refcnt %ld -> %ld, rings %d -> %d, "
	       "SUnreclaim %llu -> %llu kB", CYCLES,
	       (unsigned long long)pin0, (unsigned long long)pin1, ref0, ref1,
	       rings0, rings1, (unsigned long long)slab0, (unsigned long long)slab1);
	EXPECT_EQ(pin0, pin1);
	EXPECT_EQ(ref0, ref1);
	EXPECT_EQ(rings0, rings1);
	/* 10,000 leaked 64-byte objects would be 625 kB; allow 4 MB of
	 * slab churn (partly filled slabs, per-CPU caches). */
	EXPECT_LT((long long)slab1 - (long long)slab0, 4096);

	vmak_ringset_close(&keep);
	close(udp);
	vnet_teardown(&net);
}

TEST_HARNESS_MAIN
