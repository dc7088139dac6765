// SPDX-License-Identifier: GPL-2.0
/*
 * Faults under traffic: the ring's network namespace deleted while it
 * receives and kicks; rings closed while packets arrive for them and
 * other threads dump them over netlink. The console scan catches any report;
 * the tests check that everything still answers afterwards.
 */
#include <pthread.h>
#include <sys/wait.h>

#include "harness.h"
#include "common.h"

#define PORT 5200

TEST_TIMEOUT(netns_deleted_under_traffic, 120)
{
	struct vmak_info info = { .sz = sizeof(info) };
	struct vnet net;
	int pipefd[2], st, fam, init_ns;
	pid_t rx, tx;
	char c;

	FAMILY_OR_SKIP(fam);
	init_ns = open("/proc/self/ns/net", O_RDONLY);
	ASSERT_GE(init_ns, 0);
	ASSERT_EQ(0, vnet_setup(&net, 1));
	ASSERT_EQ(0, pipe(pipefd));
	rx = fork_child();
	if (!rx) {
		struct vmak_ringset_config cfg;
		struct vmak_ringset rs;
		int udp = udp_bound(AF_INET, ADDR_B, PORT);

		vmak_ringset_config_default(&cfg);
		cfg.ifindex = (unsigned int)net.ifindex_b;
		cfg.rx_size = cfg.fill_size = cfg.tx_size = cfg.comp_size = 256;
		cfg.umem_len = 1024 * 2048;
		if (vmak_ringset_open(&rs, &cfg) || vmak_rule_add_socket(rs.fd, udp, 1))
			_exit(1);
		vmak_ringset_fill(&rs, 0, 256);
		if (write(pipefd[1], "r", 1) != 1)
			_exit(1);
		for (;;) {	/* receive, recycle and kick until killed */
			uint32_t idx, n = vmak_ring_peek(rs.rx, 64, &idx);

			for (uint32_t k = 0; k < n; k++)
				rx_recycle(&rs, vmak_ring_rx_desc(rs.rx, idx + k)->addr);
			vmak_ring_release(rs.rx, n);
			sendto(rs.fd, NULL, 0, MSG_DONTWAIT, NULL, 0);
			if (!n)
				rx_wait(&rs, 50);
		}
	}
	ASSERT_EQ(1, read(pipefd[0], &c, 1));
	struct send_spec s = { .ns = net.ns_a, .dst = ADDR_B, .dport = PORT,
			       .count = 1000000, .size = 64 };
	tx = sender_start(&s);
	/* Only the children keep the namespaces alive from here. */
	ASSERT_EQ(0, setns(init_ns, CLONE_NEWNET));
	close(init_ns);
	usleep(300000);
	/* The name goes; the namespace lives while the ring holds it. */
	ASSERT_EQ(0, sh("ip netns del %s", net.ns_b));
	usleep(300000);
	ASSERT_EQ(0, sh("ip netns del %s", net.ns_a));	/* the sender's too */
	usleep(300000);
	kill(rx, SIGKILL);	/* b dies with its last process and socket */
	ASSERT_EQ(rx, waitpid(rx, &st, 0));
	kill(tx, SIGKILL);
	sender_wait(tx);
	/* Both namespaces and their devices go now; the module is fine. */
	usleep(500000);
	ASSERT_EQ(0, vmak_info_get(&info));
}

/* ---- close racing with everything ------------------------------------------- */

struct race {
	volatile int stop;
	struct vnet *net;
	unsigned long dumps, dump_errors;
};

static int no_rule(const struct vmak_ctl_rule *rule, void *arg)
{
	(void)rule;
	(void)arg;
	return 0;
}

/* Dump rings and rules over netlink until told to stop. */
static void *dumper(void *arg)
{
	struct race *r = arg;

	while (!r->stop) {
		int n = 0;

		if (vmak_ctl_ring_list(NULL, count_rings, &n))
			r->dump_errors++;
		if (vmak_ctl_rule_list(0, no_rule, NULL))
			r->dump_errors++;
		r->dumps++;
	}
	return NULL;
}

TEST_TIMEOUT(close_races_rx_tx_and_dumps, 300)
{
	struct race r = { 0 };
	struct vmak_ringset_config cfg;
	pthread_t t1, t2;
	struct vnet net;
	pid_t tx;
	int udp, fam;

	FAMILY_OR_SKIP(fam);
	ASSERT_EQ(0, vnet_setup(&net, 1));
	r.net = &net;
	udp = udp_bound(AF_INET, ADDR_B, PORT);
	ASSERT_GE(udp, 0);
	struct send_spec s = { .ns = net.ns_a, .dst = ADDR_B, .dport = PORT,
			       .count = 100000000, .size = 64 };
	tx = sender_start(&s);
	ASSERT_EQ(0, pthread_create(&t1, NULL, dumper, &r));
	ASSERT_EQ(0, pthread_create(&t2, NULL, dumper, &r));

	vmak_ringset_config_default(&cfg);
	cfg.ifindex = (unsigned int)net.ifindex_b;
	cfg.rx_size = cfg.fill_size = cfg.tx_size = cfg.comp_size = 64;
	cfg.umem_len = 128 * 2048;
	/* Every ring is the device's only one: the hook lingers between
	 * them (hook_linger_ms), so 300 cycles do not patch the kernel's
	 * ingress static key 600 times; see Documentation/reliability.rst. */
	for (int i = 0; i < 300; i++) {
		struct vmak_ringset rs;
		int n = 0;

		ASSERT_EQ(0, vmak_ringset_open(&rs, &cfg));
		vmak_ringset_fill(&rs, 0, 64);
		ASSERT_EQ(0, vmak_rule_add_socket(rs.fd, udp, (uint32_t)i));
		/* a kick with an empty TX ring, packets arriving, then
		 * close at a varying moment (44-tx and 53-fuzz close rings
		 * with frames in flight) */
		sendto(rs.fd, NULL, 0, MSG_DONTWAIT, NULL, 0);
		usleep((useconds_t)(i % 7) * 300);
		if (i % 10 == 0)
			EXPECT_EQ(0, vmak_ctl_ring_list(NULL, count_rings, &n));
		vmak_ringset_close(&rs);
		if (i == 299)	/* just closed: the hook lingers */
			EXPECT_EQ(1, hooked_devices());
	}
	r.stop = 1;
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	kill(tx, SIGKILL);
	sender_wait(tx);
	TH_LOG("%lu dump rounds, %lu errors, while 300 rings came and went",
	       r.dumps, r.dump_errors);
	EXPECT_EQ(0, r.dump_errors);
	close(udp);
	vnet_teardown(&net);
}

#define LINGER_PARAM "/sys/module/vmak/parameters/hook_linger_ms"

static int set_linger(unsigned int ms)
{
	char v[16];

	snprintf(v, sizeof(v), "%u\n", ms);
	return write_knob(LINGER_PARAM, v);
}

static unsigned int get_linger(void)
{
	FILE *f = fopen(LINGER_PARAM, "re");
	unsigned int ms = ~0u;

	if (f) {
		if (fscanf(f, "%u", &ms) != 1)
			ms = ~0u;
		fclose(f);
	}
	return ms;
}

/* One ring bound on net's device b, given a rule, and closed. */
static int ring_cycle(struct vnet *net, int udp)
{
	struct vmak_ringset_config cfg;
	struct vmak_ringset rs;
	int err;

	vmak_ringset_config_default(&cfg);
	cfg.ifindex = (unsigned int)net->ifindex_b;
	cfg.rx_size = cfg.fill_size = cfg.tx_size = cfg.comp_size = 64;
	cfg.umem_len = 128 * 2048;
	err = vmak_ringset_open(&rs, &cfg);
	if (!err)
		err = vmak_rule_add_socket(rs.fd, udp, 7);
	vmak_ringset_close(&rs);
	return err;
}

/*
 * A device keeps its hook hook_linger_ms after its last ring, a bind in
 * that time reuses it, the reaper removes it afterwards, 0 removes it at
 * once, and deleting a device or unloading never waits for the linger.
 */
TEST_TIMEOUT(hook_lingers_after_last_ring, 60)
{
	unsigned int old = get_linger();
	struct vnet net;
	double t0;
	int udp, fam;

	FAMILY_OR_SKIP(fam);
	ASSERT_EQ(5000, old);	/* the documented default */
	ASSERT_EQ(0, vnet_setup(&net, 1));
	udp = udp_bound(AF_INET, ADDR_B, PORT);
	ASSERT_GE(udp, 0);
	EXPECT_EQ(0, hooked_devices());

	ASSERT_EQ(0, set_linger(400));
	ASSERT_EQ(0, ring_cycle(&net, udp));
	EXPECT_EQ(1, hooked_devices());
	usleep(200 * 1000);
	ASSERT_EQ(0, ring_cycle(&net, udp));	/* takes the same hook */
	EXPECT_EQ(1, hooked_devices());
	t0 = mono();
	while (hooked_devices() == 1 && mono() - t0 < 5)
		usleep(20 * 1000);
	EXPECT_EQ(0, hooked_devices());
	/* the second close restarted the 400 ms */
	EXPECT_GE(elapsed_us(mono(), t0), 300 * 1000);

	ASSERT_EQ(0, set_linger(0));
	ASSERT_EQ(0, ring_cycle(&net, udp));
	EXPECT_EQ(0, hooked_devices());

	/* Unloading releases a lingering hook (and loads again). */
	ASSERT_EQ(0, set_linger(60000));
	ASSERT_EQ(0, ring_cycle(&net, udp));
	EXPECT_EQ(1, hooked_devices());
	ASSERT_TRUE(getenv("VMAK_KO") != NULL);
	EXPECT_EQ(0, sh("rmmod vmak"));
	ASSERT_EQ(0, sh("insmod %s", getenv("VMAK_KO")));
	EXPECT_EQ(0, hooked_devices());
	EXPECT_EQ(old, get_linger());

	/* A lingering hook does not hold the device back. */
	ASSERT_EQ(0, set_linger(60000));
	ASSERT_EQ(0, ring_cycle(&net, udp));
	EXPECT_EQ(1, hooked_devices());
	t0 = mono();
	EXPECT_EQ(0, sh("ip link del %s", net.dev_b));
	/* far below the 60 s linger (a debug kernel is slow to delete) */
	EXPECT_LT(elapsed_us(mono(), t0), 20 * 1000 * 1000);
	EXPECT_EQ(0, hooked_devices());

	EXPECT_EQ(0, set_linger(old));
	close(udp);
	vnet_teardown(&net);
}

TEST_HARNESS_MAIN
