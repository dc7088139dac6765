#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The host preload probes (selftests/preload/, see Documentation/
# testing.rst) again, with the module loaded: each probe's sockets are
# bound to an address of a veth device the module hooks (PT_ADDR), so
# they have rings, an eventfd, epoll registrations of the library's own
# fds, and everything a fork, a close or a signal must get right around
# them. Each probe must still print what it prints on kernel sockets.
# The two budgets of the fallback (syscall-budget, rlimit-sockets) are the
# host run's: with the module, offloading costs what it costs.
#
#   netns pp: vp0 10.6.0.1/24 --veth-- vp1 (netns pq)
cd "$(dirname "$0")/.." && . selftests/lib.sh

vmak_load
trap 'ip netns del pp 2>/dev/null; ip netns del pq 2>/dev/null' EXIT
ip netns add pp
ip netns add pq
ip link add name vp0 type veth peer name vp1
ip link set vp0 netns pp
ip link set vp1 netns pq
ip -n pp addr add 10.6.0.1/24 dev vp0
ip -n pq addr add 10.6.0.2/24 dev vp1
for n in pp pq; do
	ip -n $n link set lo up
done
ip -n pp link set vp0 up
ip -n pq link set vp1 up

if ! ls build/preload/* >/dev/null 2>&1; then
	tap_skip "preload probes" "not built (make preload-bins)"
	tap_done
fi
probes=()
for p in build/preload/*; do
	n=$(basename "$p")
	[ -x "$p" ] || continue
	case $n in syscall-budget|rlimit-sockets) continue ;; esac
	probes+=("$n")
done
# the runner's own TAP, one line per probe and mode
ip netns exec pp env PT_ADDR=10.6.0.1 selftests/preload/run "${probes[@]}"
