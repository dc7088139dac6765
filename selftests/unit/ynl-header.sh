#!/bin/bash
# The uapi header of the netlink family is what the kernel's ynl generator
# makes of Documentation/netlink/specs/vmak.yaml (which also proves the spec
# valid against the kernel's genetlink schema).
cd "$(dirname "$0")/../.." && . selftests/lib.sh
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
if ! scripts/ynl-gen.sh "$tmp" > "$tmp.log" 2>&1; then
	cat "$tmp.log" >&2; rm -f "$tmp.log"
	echo "not ok - vmak.yaml generates a uapi header (ynl-gen-c.py)"
	exit 1
fi
rm -f "$tmp.log"
echo "ok - vmak.yaml is valid and generates a uapi header (ynl-gen-c.py)"
check "uapi/linux/vmak_genl.h equals the generated header" \
	diff -u "$tmp" uapi/linux/vmak_genl.h
