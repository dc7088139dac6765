#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# examples/vma-rx, a receiver written against libvma's extra API alone
# (<mellanox/vma_extra.h>, nothing of vmak's linked), run unchanged with
# libvmak.so preloaded, as user nobody: zero-copy receive, a receive
# callback holding packets, and socketXtreme on the socket's ring. Each
# must get every datagram, through the rings.
#
#   netns xa: xa0 10.5.0.1 --veth-- xb0 10.5.0.2 (netns xb, the receiver)
cd "$(dirname "$0")/.." && . selftests/lib.sh

vmak_load
lib=$PWD/$VMAK_BUILD/libvmak.so
tmp=$(mktemp -d)
chmod 755 "$tmp"
trap 'ip netns del xa 2>/dev/null; ip netns del xb 2>/dev/null; rm -rf "$tmp"' EXIT
veth_pair xa xa0 10.5.0.1 xb xb0 10.5.0.2
ip netns exec xa ping -c 1 -W 5 10.5.0.2 >/dev/null

[ -x "$VMAK_BUILD/vma-rx" ] || { tap_skip "vma-rx" "not built (make examples)"; tap_done; }
port=21000
for mode in zcopy callback xtreme; do
	port=$((port + 1))
	env=(LD_PRELOAD="$lib" VMAK_TRACELEVEL=DETAILS)
	[ $mode = xtreme ] && env+=(VMA_SOCKETXTREME=1)
	ip netns exec xb env "${env[@]}" setpriv --reuid 65534 --regid 65534 \
		--clear-groups --inh-caps=-all "$VMAK_BUILD/vma-rx" 10.5.0.2 $port \
		1000 $mode 20 >"$tmp/$mode" 2>&1 &
	pid=$!
	wait_for 30 grep -q ready "$tmp/$mode"
	ip netns exec xa udpcheck send 10.5.0.2 $port 1000
	wait $pid
	rc=$?
	check "vma-rx $mode: all 1000 datagrams" test $rc = 0
	check "vma-rx $mode: through the rings" \
		grep -qE 'received [1-9][0-9]* via rings' "$tmp/$mode"
	tap_diag "$mode: $(tr '\n' ' ' < "$tmp/$mode")"
done
tap_done
