#!/bin/bash
# A program that drives rings itself links libvmak-native (what
# `pkg-config --libs libvmak-native` says): no interposer runs inside it.
# examples/ringrx is built that way.
cd "$(dirname "$0")/../.."
b=build
n=0
check() {	# check DESCRIPTION COMMAND...
	n=$((n + 1))
	if "${@:2}" >/dev/null 2>&1; then
		echo "ok $n - $1"
	else
		echo "not ok $n - $1"
	fi
}
check "ringrx needs libvmak-native.so.0" \
	sh -c "readelf -d $b/ringrx | grep -q 'NEEDED.*libvmak-native.so.0'"
check "ringrx does not need libvmak.so.0" \
	sh -c "! readelf -d $b/ringrx | grep -q 'NEEDED.*\\[libvmak.so'"
check "libvmak-native.so defines no C library call" \
	sh -c "! nm -D --defined-only $b/libvmak-native.so | grep -Eq ' T (socket|recvmsg|close|poll|epoll_wait|sigaction)$'"
check "libvmak-native.pc links -lvmak-native" \
	sh -c "make -s $b/libvmak-native.pc && grep -q -- '-lvmak-native' $b/libvmak-native.pc"
echo "1..$n"
