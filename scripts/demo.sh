#!/bin/bash
# demo.sh [KERNEL] -- from a fresh Debian 12 machine: install dependencies,
# build, boot a VM and run the demo in it.
set -eu
cd "$(dirname "$0")/.."
scripts/deps.sh
make -s -j2 lib tools selftests examples bench-bins
exec selftests/vm/run --kernel "${1:-6.1}" --demo
