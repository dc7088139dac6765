// SPDX-License-Identifier: GPL-2.0
/*
 * ringmem: memory per vmak ring set at the library's default sizes
 * (vmak_ringset_config_default: four 2048-entry rings, 4096 chunks of
 * 2048 bytes), each bound to DEV and steering one UDP socket.
 *
 *   ringmem -i DEV -a LOCALIP [-n RINGS]
 *
 * Opens RINGS ring sets and reports, per ring set: the UMEM (user memory,
 * pinned), the module's pinned pages, and the kernel's share measured
 * from /proc/meminfo: Slab plus VmallocUsed (the rings), with the drop in
 * MemFree (UMEM and kernel together, noisier) for a cross-check. One line:
 *   ringmem rings N umem_kb U pinned_pages P memfree_kb M kernel_kb K slab_kb S vmalloc_kb V
 */
#include <arpa/inet.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "linux/vmak.h"
#include "vmak/vmak.h"

static long meminfo(const char *key)
{
	char line[160];
	size_t n = strlen(key);
	long v = -1;
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':')
			v = strtol(line + n + 1, NULL, 10);
	fclose(f);
	return v;
}

struct snap {
	long memfree, slab, vmalloc;
	uint64_t pinned;
};

static void snap(struct snap *s)
{
	struct vmak_info info = { .sz = sizeof(info) };

	/* Let deferred frees (RCU, work items) settle first. */
	usleep(200000);
	s->memfree = meminfo("MemFree");
	s->slab = meminfo("Slab");
	s->vmalloc = meminfo("VmallocUsed");
	s->pinned = vmak_info_get(&info) ? 0 : info.pinned_pages;
}

int main(int argc, char **argv)
{
	const char *dev = NULL, *addr = NULL;
	struct vmak_ringset_config cfg;
	struct vmak_ringset *rs;
	struct snap a, b;
	int c, n = 16, *udp;

	while ((c = getopt(argc, argv, "i:a:n:")) != -1) {
		switch (c) {
		case 'i': dev = optarg; break;
		case 'a': addr = optarg; break;
		case 'n': n = atoi(optarg); break;
		default: dev = NULL; break;
		}
	}
	if (!dev || !addr || n < 1) {
		fprintf(stderr, "usage: ringmem -i DEV -a LOCALIP [-n RINGS]\n");
		return 2;
	}
	rs = calloc((size_t)n, sizeof(*rs));
	udp = calloc((size_t)n, sizeof(*udp));
	if (!rs || !udp)
		return 1;
	vmak_ringset_config_default(&cfg);
	cfg.ifindex = if_nametoindex(dev);
	snap(&a);
	for (int i = 0; i < n; i++) {
		struct sockaddr_in sa = { .sin_family = AF_INET,
					  .sin_port = htons((uint16_t)(20000 + i)) };
		int err;

		inet_pton(AF_INET, addr, &sa.sin_addr);
		udp[i] = socket(AF_INET, SOCK_DGRAM, 0);
		if (udp[i] < 0 || bind(udp[i], (struct sockaddr *)&sa, sizeof(sa))) {
			perror("ringmem: udp");
			return 1;
		}
		err = vmak_ringset_open(&rs[i], &cfg);
		if (!err)
			err = vmak_rule_add_socket(rs[i].fd, udp[i], (uint32_t)i);
		if (err) {
			fprintf(stderr, "ringmem: ring %d: %s\n", i, vmak_strerror(err));
			return 1;
		}
		vmak_ringset_fill(&rs[i], 0, cfg.fill_size);
	}
	snap(&b);
	double umem_kb = (double)cfg.umem_len / 1024;	/* all of it pinned */
	double memfree_kb = (double)(a.memfree - b.memfree) / n;

	printf("ringmem rings %d umem_kb %.0f pinned_pages %.0f memfree_kb %.0f "
	       "kernel_kb %.0f slab_kb %.1f vmalloc_kb %.1f\n", n, umem_kb,
	       (double)(b.pinned - a.pinned) / n, memfree_kb,
	       (double)(b.slab - a.slab + b.vmalloc - a.vmalloc) / n,
	       (double)(b.slab - a.slab) / n, (double)(b.vmalloc - a.vmalloc) / n);
	for (int i = 0; i < n; i++) {
		vmak_ringset_close(&rs[i]);
		close(udp[i]);
	}
	return 0;
}
