/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Random input for the fuzzers (43-ring-netlink, 53-fuzz): a seeded
 * xorshift generator and random generic netlink requests to the vmak
 * family. Deterministic for a given seed, so a failure can be replayed.
 */
#ifndef VMAK_SELFTEST_FUZZ_H
#define VMAK_SELFTEST_FUZZ_H

#include <stdint.h>
#include <string.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>

#include <linux/vmak_genl.h>

static uint64_t rnd_state = 0x9e3779b97f4a7c15ULL;

static inline void rnd_seed(uint64_t seed)
{
	rnd_state = seed ? seed : 0x9e3779b97f4a7c15ULL;
}

static inline uint32_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return (uint32_t)rnd_state;
}

/* One of n values, uniformly. */
#define RND_PICK(...) ({ \
	const uint64_t __v[] = { __VA_ARGS__ }; \
	__v[rnd() % (sizeof(__v) / sizeof(__v[0]))]; })

/* Random attributes, some nested, some carrying one of the real ring ids. */
static inline void fuzz_attrs(struct nlmsghdr *nlh, const uint32_t *ids,
			      int nids, int depth)
{
	int n = (int)(rnd() % 5);

	for (int i = 0; i < n; i++) {
		uint16_t type = (uint16_t)(rnd() % (VMAK_A_RING_MAX + 3));
		uint8_t payload[24];
		uint32_t len = rnd() % 3 ? 4 : rnd() % sizeof(payload);

		for (size_t j = 0; j < sizeof(payload); j++)
			payload[j] = (uint8_t)rnd();
		if (type == VMAK_A_RING_ID && nids && rnd() % 2)
			memcpy(payload, &ids[rnd() % (uint32_t)nids], 4);
		if (depth < 2 && rnd() % 8 == 0) {
			struct nlattr *nest = mnl_attr_nest_start(nlh, type);

			fuzz_attrs(nlh, ids, nids, depth + 1);
			mnl_attr_nest_end(nlh, nest);
			continue;
		}
		mnl_attr_put(nlh, type, len, payload);
	}
}

/* A random request to the family at buf; returns its aligned length. */
static inline size_t fuzz_genl_msg(void *buf, uint16_t family_id, uint32_t seq,
				   const uint32_t *ids, int nids)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g;

	nlh->nlmsg_type = family_id;
	nlh->nlmsg_flags = NLM_F_REQUEST | (rnd() % 4 == 0 ? NLM_F_DUMP : 0) |
			   (rnd() % 2 ? NLM_F_ACK : 0);
	nlh->nlmsg_seq = seq;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = (uint8_t)(rnd() % (VMAK_CMD_MAX + 2));
	g->version = rnd() % 16 ? VMAK_FAMILY_VERSION : (uint8_t)rnd();
	g->reserved = rnd() % 32 ? 0 : (uint16_t)rnd();
	fuzz_attrs(nlh, ids, nids, 0);
	return NLMSG_ALIGN(nlh->nlmsg_len);
}

#endif
