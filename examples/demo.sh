#!/bin/bash
# The demo, run inside the VM by `make demo` (selftests/vm/run --demo).
cd "$(dirname "$0")/.." && . selftests/lib.sh
echo "demo: loading vmak.ko"
vmak_load || exit 1
dmesg | grep 'vmak:' | tail -1
echo "demo: vmakctl info"
vmakctl info
echo "demo: vmakctl -j info"
vmakctl -j info
vmak_unload
