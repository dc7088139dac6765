#!/bin/bash
# The module's netlink policies and op table say what the family's spec
# says (scripts/nl-policy-check.py). TAP on stdout.
cd "$(dirname "$0")/../.." || exit 1
exec python3 scripts/nl-policy-check.py Documentation/netlink/specs/vmak.yaml \
	kmod/netlink.c uapi/linux/vmak.h
