#!/bin/bash
# The console scanner finds kernel reports and ignores test output.
cd "$(dirname "$0")/../.." && . selftests/lib.sh
scan=selftests/vm/scan-console
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat > "$tmp/clean" <<'LOG'
[    1.234567] vmak: version 0.1.0, socket family 22
ok - 10-module.sh: WARNING: this is test output, not a kernel report
# BUG: mentioned by a test comment
[    2.000000] ACPI: PM: Preparing to enter system sleep state S5
LOG
check "clean log passes" $scan "$tmp/clean"

report() {	# report NAME LINE: a log with LINE must fail
	printf '[    1.000000] boot\n%s\n' "$2" > "$tmp/bad"
	check_fails "$1 detected" "." $scan "$tmp/bad"
}
report "WARN" "[   12.345678] WARNING: CPU: 1 PID: 77 at warn.c:10 vmak_warn_init+0x5/0x10 [warn]"
report "BUG" "[    3.141592] BUG: kernel NULL pointer dereference, address: 0000000000000008"
report "kernel BUG" "[    3.141592] kernel BUG at net/core/skbuff.c:1234!"
report "oops" "[    3.141592] Oops: 0002 [#1] PREEMPT SMP NOPTI"
report "GPF" "[    3.141592] general protection fault, probably for non-canonical address"
report "KASAN" "[    3.141592] BUG: KASAN: slab-use-after-free in vmak_rx+0x1/0x2"
report "lockdep" "[    3.141592] WARNING: possible circular locking dependency detected"
report "lockdep (recursive)" "[    3.141592] possible recursive locking detected"
report "refcount" "[    3.141592] refcount_t: underflow; use-after-free."
report "kmemleak" "[    3.141592] kmemleak: 1 new suspected memory leaks (see /sys/kernel/debug/kmemleak)"
report "hung task" "[  240.000000] INFO: task vmak:123 blocked for more than 120 seconds."
report "sleep in atomic" "[    3.141592] BUG: sleeping function called from invalid context at mm/slab.h:1"
report "UBSAN" "[    3.141592] UBSAN: shift-out-of-bounds in kmod/ring.c:10:5"
report "panic" "[    3.141592] Kernel panic - not syncing: Fatal exception"
tap_done
