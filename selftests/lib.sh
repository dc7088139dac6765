# SPDX-License-Identifier: GPL-2.0
# Shared by the shell selftests: TAP output, module and namespace helpers.
# Tests print "ok N - name" lines and end with tap_done.

VMAK_KO=${VMAK_KO:-build/vm/kmod/vmak.ko}
VMAK_BUILD=${VMAK_BUILD:-build}
export PATH=$PWD/$VMAK_BUILD:$PWD/$VMAK_BUILD/selftests:$PATH

__tap_n=0
__tap_fail=0

tap_ok()   { __tap_n=$((__tap_n + 1)); echo "ok $__tap_n - $*"; }
tap_fail() { __tap_n=$((__tap_n + 1)); __tap_fail=$((__tap_fail + 1)); echo "not ok $__tap_n - $*"; }
tap_skip() { __tap_n=$((__tap_n + 1)); echo "ok $__tap_n - $1 # SKIP ${2:-}"; }
tap_diag() { echo "# $*"; }

# check NAME CMD... : one test point from a command's exit status.
check() {
	local name=$1; shift
	local out
	if out=$("$@" 2>&1); then
		tap_ok "$name"
	else
		tap_fail "$name"
		[ -n "$out" ] && printf '%s\n' "$out" | sed 's/^/#   /' | head -20
	fi
}

# check_fails NAME PATTERN CMD... : the command must fail, printing PATTERN.
check_fails() {
	local name=$1 pat=$2; shift 2
	local out
	if out=$("$@" 2>&1); then
		tap_fail "$name (succeeded)"
	elif printf '%s\n' "$out" | grep -qE -- "$pat"; then
		tap_ok "$name"
	else
		tap_fail "$name (wrong error)"
		printf '%s\n' "$out" | sed 's/^/#   /' | head -10
	fi
}

tap_done() {
	echo "1..$__tap_n"
	[ $__tap_fail -eq 0 ]
	exit $?
}

vmak_loaded() { grep -q '^vmak ' /proc/modules; }

# vmak_load [PARAMS...]: insmod the module built for this kernel.
vmak_load() {
	vmak_loaded && return 0
	insmod "$VMAK_KO" "$@"
}

vmak_unload() {
	vmak_loaded || return 0
	rmmod vmak
}

# Modules of the booted kernel come from the unpacked Debian tree.
kmod_load() {
	modprobe ${VMAK_KROOT:+-d "$VMAK_KROOT"} "$@"
}

# wait_for TIMEOUT_S CMD...: retry CMD until it succeeds or time runs out.
wait_for() {
	local t=$1 i; shift
	for ((i = 0; i < t * 10; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

# veth_pair NSA DEVA ADDRA NSB DEVB ADDRB: two new netns joined by a veth
# pair, each end with its IPv4 address in a /24, lo and both ends up.
veth_pair() {
	ip netns add "$1" && ip netns add "$4" || return 1
	ip link add name "$2" type veth peer name "$5" || return 1
	ip link set "$2" netns "$1"
	ip link set "$5" netns "$4"
	ip -n "$1" addr add "$3/24" dev "$2"
	ip -n "$4" addr add "$6/24" dev "$5"
	ip -n "$1" link set lo up
	ip -n "$4" link set lo up
	ip -n "$1" link set "$2" up
	ip -n "$4" link set "$5" up
}
