#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lib/include/mellanox/vma_extra.h compiles in the languages and modes a
# libvma program may use: C++ (g++ -std=c++98 to c++20), strict C99 and C11
# with -pedantic, GNU C. Two sources: a probe written the way a libvma
# program uses the header (below), and extra-abi.c's ABI tables, which
# as C++ become static_asserts (every member's exact type, offset and size;
# every structure, enumeration and number). Clang too when installed.
# TAP on stdout.
cd "$(dirname "$0")/../.." && . selftests/lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat > "$tmp/probe.c" <<'EOF'
#include <mellanox/vma_extra.h>	/* first: it needs nothing else */
#include <string.h>

#ifndef VMA_EXTRA_H
#error "no VMA_EXTRA_H"
#endif

static vma_recv_callback_retval_t on_packet(int fd, size_t sz_iov,
					    struct iovec iov[],
					    struct vma_info_t *info, void *ctx)
{
	(void)fd;
	(void)iov;
	(void)ctx;
	if (!sz_iov || info->struct_sz < sizeof(*info))
		return VMA_PACKET_DROP;
	return info->payload_sz > 1000 ? VMA_PACKET_HOLD : VMA_PACKET_RECV;
}

static int moderate(struct vma_api_t *api, int ring_fd)
{
	struct vma_modify_ring_attr mr;

	memset(&mr, 0, sizeof(mr));
	mr.comp_bit_mask = VMA_MODIFY_RING_CQ_MODERATION;
	mr.ring_fd = ring_fd;
	mr.cq_moderation.cq_moderation_count = 16;
	mr.cq_moderation.cq_moderation_period_usec = 10;
	return api->vma_modify_ring(&mr);
}

int probe(int fd);
int probe(int fd)
{
	struct vma_api_t *api = vma_get_api();
	struct vma_ring_alloc_logic_attr attr;
	struct vma_completion_t comps[8];
	struct vma_buff_t *b;
	int n, i, flags = MSG_VMA_ZCOPY_FORCE, ring_fds[4];
	uint64_t user = 7;
	char buf[256];

	if (!api)
		return -1;
	memset(&attr, 0, sizeof(attr));
	attr.comp_mask = VMA_RING_ALLOC_MASK_RING_USER_ID;
	attr.ring_alloc_logic = RING_LOGIC_PER_USER_ID;
	attr.user_id = 1;
	attr.ingress = 1;
	if (setsockopt(fd, SOL_SOCKET, SO_VMA_RING_ALLOC_LOGIC, &attr,
		       sizeof(attr)) ||
	    setsockopt(fd, SOL_SOCKET, SO_VMA_USER_DATA, &user, sizeof(user)))
		return -1;
	if (api->vma_extra_supported_mask & VMA_EXTRA_API_REGISTER_RECV_CALLBACK)
		api->register_recv_callback(fd, on_packet, NULL);
	if (api->recvfrom_zcopy(fd, buf, sizeof(buf), &flags, NULL, NULL) > 0 &&
	    (flags & MSG_VMA_ZCOPY)) {
		struct vma_packets_t *pkts = (struct vma_packets_t *)buf;

		api->free_packets(fd, pkts->pkts, pkts->n_packet_num);
	}
	n = api->socketxtreme_poll(fd, comps, 8, 0);
	for (i = 0; i < n; i++) {
		if (comps[i].events & VMA_SOCKETXTREME_PACKET) {
			for (b = comps[i].packet.buff_lst; b; b = b->next)
				api->socketxtreme_ref_vma_buff(b);
			api->socketxtreme_free_vma_packets(&comps[i].packet, 1);
		}
		if (comps[i].events & VMA_SOCKETXTREME_NEW_CONNECTION_ACCEPTED)
			fd = comps[i].listen_fd;
	}
	switch (attr.ring_alloc_logic) {
	case RING_LOGIC_PER_THREAD:
	case RING_LOGIC_PER_CORE:
		return 0;
	default:
		break;
	}
	if (api->get_socket_rings_fds(fd, ring_fds, 4) < 1)
		return -1;
	send(fd, buf, 0, VMA_SND_FLAGS_DUMMY);
	return moderate(api, ring_fds[0]);
}
EOF

W="-Wall -Wextra -Werror"
POSIX=-D_POSIX_C_SOURCE=200809L
I=-Ilib/include

# cc NAME COMPILER ARGS...: one test point, the compiler's verdict.
cc_check() {
	local name=$1; shift
	check "$name" "$@" $I -fsyntax-only
}

cc_check "C99 -pedantic (POSIX 2008)" \
	gcc -std=c99 $POSIX -pedantic $W -Wstrict-prototypes -Wmissing-prototypes -Wshadow "$tmp/probe.c"
cc_check "C11 -pedantic (POSIX 2008)" \
	gcc -std=c11 $POSIX -pedantic $W -Wstrict-prototypes -Wmissing-prototypes "$tmp/probe.c"
cc_check "GNU C17 with the project's warnings" \
	gcc -std=gnu17 $W -Wshadow -Wstrict-prototypes -Wmissing-prototypes "$tmp/probe.c"
cc_check "GNU C89" gcc -std=gnu89 $W "$tmp/probe.c"
cc_check "C++98" g++ -std=c++98 $W -x c++ "$tmp/probe.c"
cc_check "C++11 -pedantic" g++ -std=c++11 -pedantic $W -x c++ "$tmp/probe.c"
cc_check "C++20 -pedantic" g++ -std=c++20 -pedantic $W -x c++ "$tmp/probe.c"
cc_check "C++11: the ABI tables as static_asserts" \
	g++ -std=c++11 -pedantic $W -x c++ selftests/unit/extra-abi.c
cc_check "C++20: the ABI tables as static_asserts" \
	g++ -std=c++20 -pedantic $W -x c++ selftests/unit/extra-abi.c

if command -v clang >/dev/null && command -v clang++ >/dev/null; then
	cc_check "clang C99 -pedantic (POSIX 2008)" \
		clang -std=c99 $POSIX -pedantic $W -Wstrict-prototypes "$tmp/probe.c"
	cc_check "clang++ C++11 -pedantic" \
		clang++ -std=c++11 -pedantic $W -x c++ "$tmp/probe.c"
	# (the tables name struct vma_packet_t[], which clang's -pedantic
	# flags in the test itself: an array of a structure with a
	# flexible array member)
	cc_check "clang++ C++11: the ABI tables as static_asserts" \
		clang++ -std=c++11 -pedantic -Wno-flexible-array-extensions $W \
		-x c++ selftests/unit/extra-abi.c
else
	tap_skip "clang" "not installed"
fi
tap_done
