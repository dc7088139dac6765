#!/bin/bash
# check.sh [KERNEL[:short]...] -- the whole test suite, from a fresh Debian
# 12 machine: install dependencies, build, run host unit tests and checks
# (among them the build-only check of the compat probes on every kernel),
# then the VM selftests on each kernel, then prove that a kernel WARN fails
# a VM run. Ends with "N passed, N failed, N skipped".
#
# KERNEL:short runs the short set of VM selftests on that kernel (module,
# socket, netlink, RX, TX, ownership, preload) instead of all of them. The
# default, within CI's time: all of them on 6.1 (bookworm's) and unstable
# (Debian unstable's newest, 7.2 today, built in a Debian unstable build
# root), the short set on 6.12 and 6.12-rt.
set -uo pipefail
cd "$(dirname "$0")/.."

kernels=("$@")
[ ${#kernels[@]} -eq 0 ] && kernels=(6.1 unstable 6.12:short 6.12-rt:short)
short_set=10-module,20-socket,30-netlink,40-rx,44-tx,55-ownership,60-preload,61-preload

scripts/deps.sh || { echo "check: installing dependencies failed"; exit 1; }
out=build/check
rm -rf "$out"
mkdir -p "$out"

if ! make -s -j2 lib tools selftests preload-bins > "$out/build.log" 2>&1; then
	cat "$out/build.log"
	echo "not ok - userspace builds with -Werror" > "$out/build.tap"
else
	echo "ok - userspace builds with -Werror" > "$out/build.tap"
fi

echo "== host unit tests"
make -s unit 2>&1 | tee "$out/unit.tap"

# Each program plain and with libvmak.so preloaded (module absent), then
# the threaded ones on libvmak built with ASan+UBSan and with TSan. make's
# own "Error" line when a probe fails is not TAP.
echo "== host preload probes"
make -s preload-host 2>&1 | grep -v '^make: \*\*\*' | tee "$out/preload.tap"
echo "== host preload probes under ASan and TSan"
for t in asan tsan; do
	make -s $t 2>&1 | grep -v '^make: \*\*\*'
done | tee "$out/sanitizers.tap"

# The host checks of the tree: each is one TAP line, its output in a log.
echo "== host checks"
for t in "style:checkpatch --strict finds nothing unexpected" \
	 "check-abi:libvmak.so exports exactly lib/libvmak.map" \
	 "check-layers:library objects call only lower floors of lib/LAYERS, none below preload an interposed name" \
	 "htmldocs:Documentation builds with Sphinx, warnings as errors" \
	 "man-check:man pages format without a groff warning"; do
	target=${t%%:*}
	if make -s "$target" > "$out/$target.log" 2>&1; then
		echo "ok - $target: ${t#*:}"
	else
		cat "$out/$target.log"
		echo "not ok - $target: ${t#*:}"
	fi
done | tee "$out/host.tap"

# Build-only: vmak.ko builds W=1 for every kernel of the run, and the
# compat probes choose on each the branches selftests/vm/probe-check's
# table expects.
echo "== compat probes (build only)"
selftests/vm/probe-check "${kernels[@]%%:*}" 2>&1 | tee "$out/probes.tap"

for spec in "${kernels[@]}"; do
	k=${spec%%:*}
	args=()
	what="VM selftests"
	if [ "$spec" != "$k" ]; then
		args=(-- "$short_set")
		what="VM selftests (short set: $short_set)"
	fi
	echo "== $what on $k"
	selftests/vm/run --kernel "$k" "${args[@]}" 2>&1 | tee "$out/vm-$k.tap"
	[ "${PIPESTATUS[0]}" -le 1 ] || echo "not ok - VM run on $k could not start" | tee -a "$out/vm-$k.tap"
done

echo "== console scan self-check (a WARN must fail the run)"
if selftests/vm/run --kernel "${kernels[0]%%:*}" --warn-selftest > "$out/warn.log" 2>&1; then
	echo "not ok - a WARN_ON in a module fails the VM run" | tee "$out/warn.tap"
	tail -20 "$out/warn.log"
elif grep -q 'WARNING:.*warn' "$out/warn.log"; then
	echo "ok - a WARN_ON in a module fails the VM run" | tee "$out/warn.tap"
else
	echo "not ok - a WARN_ON in a module fails the VM run (no WARNING reported)" | tee "$out/warn.tap"
	tail -20 "$out/warn.log"
fi

echo "== summary"
selftests/tap-count "$out"/*.tap
