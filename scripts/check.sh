#!/bin/bash
# check.sh [KERNEL...] -- the whole test suite, from a fresh Debian 12
# machine: install dependencies, build, run host unit tests, then the VM
# selftests on each kernel (default: 6.1, 6.12 and 6.12-rt), then prove that a
# kernel WARN fails a VM run. Ends with "N passed, N failed, N skipped".
set -uo pipefail
cd "$(dirname "$0")/.."

kernels=("$@")
[ ${#kernels[@]} -eq 0 ] && kernels=(6.1 6.12 6.12-rt)

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
	 "check-layers:no library layer below preload calls an interposed name" \
	 "htmldocs:Documentation builds with Sphinx, warnings as errors"; do
	target=${t%%:*}
	if make -s "$target" > "$out/$target.log" 2>&1; then
		echo "ok - $target: ${t#*:}"
	else
		cat "$out/$target.log"
		echo "not ok - $target: ${t#*:}"
	fi
done | tee "$out/host.tap"

for k in "${kernels[@]}"; do
	echo "== VM selftests on $k"
	selftests/vm/run --kernel "$k" 2>&1 | tee "$out/vm-$k.tap"
	[ "${PIPESTATUS[0]}" -le 1 ] || echo "not ok - VM run on $k could not start" | tee -a "$out/vm-$k.tap"
done

echo "== console scan self-check (a WARN must fail the run)"
if selftests/vm/run --kernel "${kernels[0]}" --warn-selftest > "$out/warn.log" 2>&1; then
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
