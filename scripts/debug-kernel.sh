#!/bin/bash
# debug-kernel.sh -- build the vmak debug kernel once and cache it.
#
# Source: Debian's linux-source-6.12. Config: tinyconfig, then
# kvm_guest.config, then selftests/vm/debug.config (KASAN, lockdep,
# PROVE_RCU, DEBUG_ATOMIC_SLEEP, kmemleak, failslab/fail_page_alloc; the
# test guest's needs built in; desktop hardware off). Release name
# <version>-vmakdebug. The result is laid out like fetch-kernel's Debian
# kernels, so `selftests/vm/run --kernel debug` boots it:
#   $VMAK_CACHE/kernels/<release>/{boot/vmlinuz-<release>,lib/modules/<release>,
#                                  usr/src/linux-headers-<release>}
# A build is redone only when the config fragment changes. Prints the
# release.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cache=${VMAK_CACHE:-/var/cache/vmak}
jobs=${JOBS:-$(nproc)}
frag=$here/selftests/vm/debug.config

deb=$(ls "$cache"/ynl/debs/linux-source-6.12_*.deb 2>/dev/null | tail -n1 || true)
if [ -z "$deb" ]; then
	mkdir -p "$cache/ynl/debs"
	(cd "$cache/ynl/debs" && apt-get download linux-source-6.12 >/dev/null 2>&1) || {
		echo "debug-kernel: apt-get download linux-source-6.12 failed" >&2; exit 1; }
	deb=$(ls "$cache"/ynl/debs/linux-source-6.12_*.deb | tail -n1)
fi

src=$cache/debug/linux-source-6.12
if [ ! -f "$src/Makefile" ]; then
	rm -rf "$cache/debug/unpack"
	mkdir -p "$cache/debug/unpack"
	echo "debug-kernel: unpacking $(basename "$deb")" >&2
	dpkg-deb --fsys-tarfile "$deb" |
		tar -x -O ./usr/src/linux-source-6.12.tar.xz | xz -dc |
		tar -x -C "$cache/debug/unpack"
	mv "$cache/debug/unpack/linux-source-6.12" "$src"
	rmdir "$cache/debug/unpack"
fi

version=$(make -s -C "$src" kernelversion)
release=$version-vmakdebug
dest=$cache/kernels/$release
sum=$(sha1sum "$frag" | cut -c1-40)
if [ -f "$dest/.complete" ] && [ "$(cat "$dest/.complete")" = "$sum" ]; then
	echo "$release"
	exit 0
fi

cd "$src"
echo "debug-kernel: configuring $release" >&2
make -s tinyconfig >&2
scripts/kconfig/merge_config.sh -m .config kernel/configs/kvm_guest.config "$frag" >/dev/null
make -s olddefconfig >&2
# Check that every option the fragment asks for survived olddefconfig.
bad=0
while IFS= read -r line; do
	case $line in CONFIG_*=*) ;; *) continue ;; esac
	opt=${line%%=*} want=${line#*=}
	if [ "$want" = n ]; then
		grep -q "^$opt=" .config && { echo "debug-kernel: $opt still set" >&2; bad=1; }
	else
		grep -qx "$opt=$want" .config || { echo "debug-kernel: $opt=$want not taken" >&2; bad=1; }
	fi
done < "$frag"
[ $bad -eq 0 ] || exit 1

echo "debug-kernel: building with -j$jobs (about 30 minutes on 2 cores)" >&2
make -s -j"$jobs" LOCALVERSION=-vmakdebug bzImage modules >&2
[ "$(make -s LOCALVERSION=-vmakdebug kernelrelease)" = "$release" ] || {
	echo "debug-kernel: release is not $release" >&2; exit 1; }

rm -rf "$dest.tmp"
mkdir -p "$dest.tmp/boot" "$dest.tmp/usr/src"
cp arch/x86/boot/bzImage "$dest.tmp/boot/vmlinuz-$release"
cp .config "$dest.tmp/boot/config-$release"
make -s LOCALVERSION=-vmakdebug INSTALL_MOD_PATH="$dest.tmp" INSTALL_MOD_STRIP=1 \
	modules_install >&2
# Same shape as a Debian kernel: usr/lib/modules, with lib a link to it.
if [ -d "$dest.tmp/lib/modules" ] && [ ! -L "$dest.tmp/lib" ]; then
	mkdir -p "$dest.tmp/usr/lib"
	mv "$dest.tmp/lib/modules" "$dest.tmp/usr/lib/"
	rmdir "$dest.tmp/lib"
fi
ln -sfn usr/lib "$dest.tmp/lib"
depmod -b "$dest.tmp" "$release"
# Out-of-tree modules build against the (in-place) build tree.
ln -s "$src" "$dest.tmp/usr/src/linux-headers-$release"
rm -rf "$dest"
mv "$dest.tmp" "$dest"
echo "$sum" > "$dest/.complete"
echo "$release"
