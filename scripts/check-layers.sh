#!/bin/bash
# check-layers.sh SYS_H PRELOAD_OBJS OBJECT... -- no library object below
# lib/preload/ may call a C library function that libvmak interposes: it
# would re-enter the interposer (lib/native/sys.h says why). The names are
# those of the VMAK_SYS_CALLS lists in SYS_H and every function the
# preload objects (PRELOAD_OBJS, one space-separated argument) define; the
# objects' undefined symbols must not include any of them.
set -euo pipefail
sys_h=$1
preload=$2
shift 2
names=$( { sed -n 's/^[[:space:]]*X([^,]*,[[:space:]]*\([a-z_0-9]*\),.*/\1/p' "$sys_h"
	   [ -z "$preload" ] || nm --defined-only -g $preload | awk '$2 == "T" || $2 == "W" { print $3 }'
	 } | sort -u)
[ -n "$names" ] || { echo "check-layers: no VMAK_SYS_CALLS names in $sys_h"; exit 1; }
rc=0
for o in "$@"; do
	for n in $(nm -u "$o" | awk '{ print $2 }' | sed 's/@.*//'); do
		if grep -qx "$n" <<< "$names"; then
			echo "check-layers: $o calls $n(): use vmak_sys_$n() (lib/native/sys.h)"
			rc=1
		fi
	done
done
[ $rc = 0 ] && echo "check-layers: $# objects, none calls an interposed name ($(echo $names | wc -w) names)"
exit $rc
