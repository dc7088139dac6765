#!/bin/bash
# check-layers.sh SYS_H OBJECT... -- no library object below lib/preload/
# may call a C library function that libvmak interposes: it would re-enter
# the interposer (lib/native/sys.h says why). The names are those of the
# VMAK_SYS_CALLS list in SYS_H; the objects' undefined symbols must not
# include any of them.
set -euo pipefail
sys_h=$1
shift
names=$(sed -n 's/^[[:space:]]*X([^,]*,[[:space:]]*\([a-z_0-9]*\),.*/\1/p' "$sys_h" | sort -u)
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
