#!/bin/bash
# The demo, run inside the VM by `make demo` (selftests/vm/run --demo):
# one generator in netns a sends 64-byte UDP datagrams as fast as it can;
# in netns b the same port is received first by a kernel UDP socket, then
# through a vmak ring, each for 4 seconds.
#
#   netns a: udpgen --veth--> netns b: kernel socket, then vmak ring
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

for mode in "-k" ""; do
	echo
	[ -n "$mode" ] && echo "== kernel UDP socket" || echo "== vmak ring"
	ip netns exec a build/bench/udpgen -i va -d "$mac_b" -s 10.77.0.1 \
		-D 10.77.0.2 -p 9000 -l 64 -t 5 &
	ip netns exec b build/ringrx -i vb -a 10.77.0.2 -p 9000 -t 4 $mode
	wait
done
ip netns del a; ip netns del b
vmak_unload
