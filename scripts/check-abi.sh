#!/bin/bash
# check-abi.sh [--native] LIB.so MAP SRCDIR -- libvmak's ABI is what its
# version script says: the symbols LIB.so exports, the ones MAP lists as
# global and the functions the sources mark VMAK_API must be the same
# three sets. --native: LIB.so is libvmak-native.so, which exports the
# same versioned API and nothing else (no interposer).
# Prints the differences and exits 1 if there are any.
set -euo pipefail
native=0
if [ "${1:-}" = --native ]; then
	native=1
	shift
fi
so=$1 map=$2 src=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

nm -D --defined-only "$so" | awk '$2 ~ /^[TDBRVWiu]$/ { print $3 }' |
	grep '@' | sed 's/@.*//' | sort -u > "$tmp/exported"
# Unversioned exports: only the interposers of lib/preload/ (see MAP).
nm -D --defined-only "$so" | awk '$2 ~ /^[TDBRVWiu]$/ { print $3 }' |
	{ grep -v '@' || true; } | sort -u > "$tmp/unversioned"
grep -rhoE 'VMAK_API[^(]*\b[a-z_0-9]+\(' "$src/preload" --include='*.c' |
	sed -E 's/.*[^a-z_0-9]([a-z_0-9]+)\($/\1/' | sort -u > "$tmp/interposed"
[ $native = 1 ] && : > "$tmp/interposed"
awk '/global:/ { on = 1; next } /local:/ { on = 0 }
     /}/ { on = 0 }
     on && /;/ { gsub(/[ \t;]/, ""); if ($0 != "") print }' "$map" |
	sort -u > "$tmp/map"
grep -rhoE 'VMAK_API[^(]*\b[a-z_0-9]+\(' "$src" --include='*.c' \
	--exclude-dir=preload |
	sed -E 's/.*[^a-z_0-9]([a-z_0-9]+)\($/\1/' | sort -u > "$tmp/api"

rc=0
report() {	# report A B what
	local d
	d=$(comm -23 "$tmp/$1" "$tmp/$2")
	if [ -n "$d" ]; then
		echo "check-abi: $3:"
		printf '  %s\n' $d
		rc=1
	fi
}
report exported map "exported by $so but not in $map"
report map exported "in $map but not exported by $so"
report api map "marked VMAK_API but not in $map"
report map api "in $map but not marked VMAK_API in $src"
report unversioned interposed "exported without a version but not an interposer of $src/preload"
report interposed unversioned "interposers of $src/preload not exported without a version"
# Every function lib/preload/ defines outside a file (not static) is an
# interposer: one that lost its VMAK_API mark would silently stop
# interposing (the C library's would run instead).
objdir=$(dirname "$so")/lib/preload
if [ $native = 0 ] && ls "$objdir"/*.o >/dev/null 2>&1; then
	nm --defined-only -g "$objdir"/*.o | awk '$2 == "T" || $2 == "W" { print $3 }' |
		sort -u > "$tmp/preload_defined"
	report preload_defined unversioned "defined in $objdir but not exported (a VMAK_API mark missing?)"
fi
# Every interposer has a test that calls it: its name called somewhere
# under selftests/, or, for a fortified __X_chk, X() called in a program
# built with _FORTIFY_SOURCE (selftests/preload/fortified-*).
tests=$(dirname "$src")/selftests
if [ $native = 0 ] && [ -d "$tests" ]; then
	while read -r n; do
		base=${n#__}
		base=${base%_chk}
		if grep -rqE "(^|[^a-z_0-9])$n\(" "$tests" --include='*.c' --include='*.h'; then
			continue
		fi
		if [ "$base" != "$n" ] && [ "__${base}_chk" = "$n" ] &&
		   grep -qE "(^|[^a-z_0-9])$base\(" "$tests"/preload/fortified-*.c 2>/dev/null; then
			continue
		fi
		echo "check-abi: interposer $n has no test that calls it (selftests/)"
		rc=1
	done < "$tmp/interposed"
fi
[ $rc = 0 ] && echo "check-abi: $(wc -l < "$tmp/map") symbols, $so matches $map; $(wc -l < "$tmp/interposed") interposers unversioned"
exit $rc
