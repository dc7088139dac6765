#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Module life cycle: load/unload cycles, the family parameter and its
# errors, unload refused while a socket is open.
cd "$(dirname "$0")/.." && . selftests/lib.sh

vmak_unload

ok=1
for i in $(seq 100); do
	if ! insmod "$VMAK_KO" >/dev/null 2>&1 || ! rmmod vmak 2>/dev/null; then
		ok=0; tap_diag "cycle $i failed"; break
	fi
done
[ $ok = 1 ] && tap_ok "load/unload 100 times" || tap_fail "load/unload 100 times"

check "load with family=24" insmod "$VMAK_KO" family=24
check "family published in sysfs" grep -qx 24 /sys/module/vmak/parameters/family
check "sysfs parameter is read-only" bash -c '! echo 25 > /sys/module/vmak/parameters/family'
check "netlink info reports family 24" bash -c 'vmakctl -j info | grep -q "\"family\":24"'
check "unload" rmmod vmak

# AF_NETLINK (16) is always registered: the load must fail cleanly, with
# EBUSY (EEXIST would tell modprobe that vmak is loaded already).
check_fails "load on a taken family fails" "Device or resource busy" insmod "$VMAK_KO" family=16
check "taken family logged clearly" bash -c 'dmesg | grep -q "socket family 16 is taken"'
check "genl family gone after failed load" bash -c '! vmakctl info'
check_fails "family=0 rejected" "Invalid" insmod "$VMAK_KO" family=0
check_fails "family=46 (>= NPROTO) rejected" "Invalid" insmod "$VMAK_KO" family=46
check_fails "family=-1 rejected" "Invalid" insmod "$VMAK_KO" family=-1
check_fails "family=abc rejected" "Invalid" insmod "$VMAK_KO" family=abc
check "out-of-range family logged" bash -c 'dmesg | grep -q "family=46 out of range"'
check "loads after failed attempts" insmod "$VMAK_KO"
check "default family is 22" grep -qx 22 /sys/module/vmak/parameters/family

# A socket holds the module.
coproc HOLD { vmak-hold 3; }
read -r line <&"${HOLD[0]}"
[ "$line" = ready ] && tap_ok "helper holds 3 sockets" || tap_fail "helper holds 3 sockets"
check_fails "unload refused while sockets are open" "in use|Resource temporarily" rmmod vmak
check "module still loaded" vmak_loaded
eval "exec ${HOLD[1]}>&-"
wait "$HOLD_PID"
check "unload after the sockets close" rmmod vmak

check_fails "vmakctl says module not loaded" "module not loaded" vmakctl info
tap_done
