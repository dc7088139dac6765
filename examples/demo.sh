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
#
# Then the same two netns run Debian's sockperf ping-pong, unmodified, on
# kernel sockets and under LD_PRELOAD=libvmak.so.
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

# Part two: an unmodified program. Debian's sockperf ping-pong, client in
# netns a (vCPU 0), server in netns b (vCPU 1), both as user nobody: on
# kernel sockets, then with LD_PRELOAD=libvmak.so. The server's ring
# counters, read while it runs, show the datagrams went through vmak.
echo
echo "== Debian's sockperf ping-pong (unmodified, user nobody): kernel sockets, then LD_PRELOAD=libvmak.so"
lib=$PWD/build/libvmak.so
nobody=(setpriv --reuid 65534 --regid 65534 --clear-groups --inh-caps=-all)
tmp=$(mktemp -d)
chmod 755 "$tmp"
declare -A lat p50 p99
for mode in kernel vmak; do
	pre=()
	[ $mode = vmak ] && pre=(LD_PRELOAD="$lib" VMAK_TRACELEVEL=DETAILS)
	ip netns exec b env "${pre[@]}" taskset -c 1 "${nobody[@]}" \
		sockperf sr -i 10.77.0.2 -p 11111 >"$tmp/sr.$mode" 2>&1 &
	srv=$!
	wait_for 5 grep -q 'listen on' "$tmp/sr.$mode"
	ip netns exec a env "${pre[@]}" taskset -c 0 "${nobody[@]}" \
		sockperf pp -i 10.77.0.2 -p 11111 -t 4 >"$tmp/pp.$mode" 2>&1
	if [ $mode = vmak ]; then
		echo "-- while the server runs: its ring (vmakctl ring show in netns b) and its socket (vmakctl sockets):"
		ip netns exec b vmakctl ring show | grep -E '^ring|rx-packets' | head -4
		vmakctl sockets | sed 's/^/   /'
	fi
	kill -INT $srv
	wait $srv || true
	lat[$mode]=$(sed -n 's/.*Summary: Latency is \([0-9.]*\).*/\1/p' "$tmp/pp.$mode")
	p50[$mode]=$(sed -n 's/.*percentile 50.000 = *\([0-9.]*\).*/\1/p' "$tmp/pp.$mode")
	p99[$mode]=$(sed -n 's/.*percentile 99.000 = *\([0-9.]*\).*/\1/p' "$tmp/pp.$mode")
	echo "-- $mode: half round trip avg ${lat[$mode]} usec, p50 ${p50[$mode]}, p99 ${p99[$mode]}"
	grep -h '^vmak DETAILS' "$tmp/pp.$mode" "$tmp/sr.$mode" | sed 's/^/   /' || true
done
awk -v k="${lat[kernel]}" -v v="${lat[vmak]}" 'BEGIN {
	if (k > 0) printf "sockperf latency, libvmak / kernel sockets: %.2fx\n", v / k }'
rm -rf "$tmp"
ip netns del a; ip netns del b
vmak_unload
