#!/bin/bash
# One version: VERSION, dkms.conf's PACKAGE_VERSION (which `make
# dkms-install` also writes from VERSION) and the pkg-config template's
# placeholder. TAP on stdout.
cd "$(dirname "$0")/../.." && . selftests/lib.sh
v=$(cat VERSION)
check "dkms.conf PACKAGE_VERSION is VERSION ($v)" \
	grep -qx "PACKAGE_VERSION=\"$v\"" dkms.conf
check "libvmak.pc takes its version from VERSION" \
	grep -qx 'Version: @VERSION@' lib/libvmak.pc.in
tap_done
