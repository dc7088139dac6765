#!/bin/bash
# style.sh CHECKPATCH -- checkpatch --strict over the module (its compat
# probes too) and the uapi; fails on any finding not listed in
# scripts/checkpatch.expected (and on more of a listed kind than it allows).
set -uo pipefail
cd "$(dirname "$0")/.."
cp=${1:?usage: style.sh CHECKPATCH}
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
"$cp" --no-tree --strict --show-types --terse -f kmod/*.c kmod/*.h \
	kmod/compat/*.h kmod/compat/probes/*.c uapi/linux/*.h > "$tmp" 2>&1
grep -v '^total:' "$tmp" | sed -nE 's/^([^:]+):[0-9]+: [A-Z]+:([A-Z_]+):.*/\1:\2/p' |
	sort | uniq -c | awk '{ print $2, $1 }' > "$tmp.got"
rc=0
while read -r key n; do
	want=$(awk -v k="$key" '$1 == k { print $2 }' scripts/checkpatch.expected)
	if [ -z "$want" ] || [ "$n" -gt "$want" ]; then
		echo "style: $key: $n finding(s), ${want:-none} expected:"
		grep -F "${key%%:*}:" "$tmp" | grep -F ":${key#*:}:" | sed 's/^/  /'
		rc=1
	fi
done < "$tmp.got"
rm -f "$tmp.got"
[ $rc = 0 ] && echo "style: checkpatch --strict: only the expected findings (scripts/checkpatch.expected)"
exit $rc
