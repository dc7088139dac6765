#!/bin/bash
# The demo, run inside the VM by `make demo` (selftests/vm/run --demo):
# the benchmarks' generator (udpgen: AF_PACKET, qdisc bypass, sendmmsg) in
# netns a sends 64-byte UDP datagrams as fast as it can, pinned to vCPU 0;
# in netns b the same port is received, pinned to vCPU 1, first by a kernel
# UDP socket, then through a vmak ring. Each run also counts what arrived
# at vb, the load offered to the receiver, so each receiver's rate reads
# against the same ceiling (as bench/results/rx.md does).
#
#   netns a: udpgen (vCPU 0) --veth--> netns b: receiver (vCPU 1)
cd "$(dirname "$0")/.." && . selftests/lib.sh
set -e
vmak_load
dmesg | grep 'vmak:' | tail -1
vmakctl info
ip netns add a; ip netns add b
ip link add name va type veth peer name vb
ip link set va netns a; ip link set vb netns b
ip -n a addr add 10.77.0.1/24 dev va; ip -n a link set va up
ip -n b addr add 10.77.0.2/24 dev vb; ip -n b link set vb up
mac_b=$(ip -n b -br link show vb | awk '{print $3}')
arrived() { ip netns exec b cat /sys/class/net/vb/statistics/rx_packets; }

declare -A got offered
for mode in kernel vmak; do
	echo
	[ $mode = kernel ] && echo "== kernel UDP socket" || echo "== vmak ring"
	ip netns exec a build/bench/udpgen -c 0 -i va -d "$mac_b" -s 10.77.0.1 \
		-D 10.77.0.2 -p 9000 -l 64 -t 6 &
	sleep 1
	a0=$(arrived)
	out=$(ip netns exec b taskset -c 1 build/ringrx -i vb -a 10.77.0.2 \
		-p 9000 -t 4 $([ $mode = kernel ] && echo -k))
	a1=$(arrived)
	wait
	printf '%s\n' "$out"
	got[$mode]=$(awk '$2 == "average" { print $3 }' <<< "$out")
	offered[$mode]=$(( (a1 - a0) / 4 ))
	echo "offered at vb: ${offered[$mode]} pkt/s"
done
echo
echo "== summary (64-byte datagrams, sender on vCPU 0, receiver on vCPU 1)"
for mode in kernel vmak; do
	awk -v m=$mode -v g=${got[$mode]} -v o=${offered[$mode]} 'BEGIN {
		printf "%-7s %8d pkt/s received of %8d offered (%3.0f%%)\n",
			m, g, o, o ? 100 * g / o : 0 }'
done
awk -v k=${got[kernel]} -v v=${got[vmak]} 'BEGIN {
	if (k) printf "vmak ring / kernel socket: %.2fx\n", v / k }'
ip netns del a; ip netns del b
vmak_unload
