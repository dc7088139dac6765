#!/bin/bash
# check-layers.sh SYS_H LAYERS OBJECT... -- the library's layers, by what
# each object calls (nm). OBJECT... are all of libvmak's objects, built
# from lib/native/, lib/vma/ and lib/preload/ (B/lib/DIR/NAME.o).
#
# 1. No re-entry: no object outside lib/preload/ may call a C library
#    function that libvmak interposes: it would re-enter the interposer
#    (lib/native/sys.h says why). The names are those of the
#    VMAK_SYS_CALLS lists in SYS_H and every function lib/preload/ defines.
# 2. Floors: LAYERS (lib/LAYERS; its head gives the format) puts every
#    object on a floor. A call from one object to a symbol another defines
#    must go to a lower floor: one to its own floor or above fails, so
#    does any loop. lib/native/ calls nothing of lib/vma/ or lib/preload/,
#    lib/vma/ nothing of lib/preload/. An object LAYERS does not place
#    fails, and so does a LAYERS line naming a file that builds no object.
#
# One line per failure, naming the two objects and the symbol.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: check-layers.sh SYS_H LAYERS OBJECT..."; exit 2; }
sys_h=$1
layers=$2
shift 2
sys_names() { sed -n 's/^[[:space:]]*X([^,]*,[[:space:]]*\([a-z_0-9]*\),.*/\1/p' "$sys_h"; }
[ -n "$(sys_names)" ] || { echo "check-layers: no VMAK_SYS_CALLS names in $sys_h"; exit 1; }

out=$( {
	sys_names | sed 's/^/sys /'
	printf 'obj %s\n' "$@"
	sed 's/^/layers /' "$layers"
	nm -A --defined-only -g "$@" | sed 's/^/def /'
	nm -A -u "$@" | sed 's/^/undef /'
} | awk -v layers="$layers" '
# lib/vma/x.o (the object, by its place in the tree) of B/lib/vma/x.o:
# the name LAYERS gives, less ".c"
function name(path) {
	if (!match(path, /lib\/[^\/]+\/[^\/]+\.o$/))
		return path
	return substr(path, RSTART, RLENGTH)
}
function dir(n,    p) { split(n, p, "/"); return p[2] }
function err(s) { print "check-layers: " s }
function floorname(f) { return "floor " f " (" fname[f] ")" }
$1 == "sys" { interposed[$2] = 1; next }
$1 == "obj" {
	n = name($2)
	obj[n] = 1
	nobj++
	if (dir(n) != "preload")
		nbelow++
	next
}
$1 == "layers" {
	line++
	sub(/^layers /, "")
	if ($0 ~ /^[ \t]*(#|$)/)
		next
	if ($1 == "floor") {
		nfloor++
		fname[nfloor] = $2
		for (i = 3; i <= NF; i++)
			fname[nfloor] = fname[nfloor] " " $i
		next
	}
	n = $1
	sub(/\.c$/, ".o", n)
	if ($1 !~ /^lib\/[^\/]+\/[^\/]+\.c$/)
		err(layers ":" line ": \"" $1 "\" is neither \"floor\" nor a lib/DIR/NAME.c file")
	else if (!nfloor)
		err(layers ":" line ": " $1 " comes before the first floor")
	else if (n in floor)
		err(layers ":" line ": " $1 " is placed twice (line " at[n] ")")
	else {
		floor[n] = nfloor
		at[n] = line
	}
	next
}
$1 == "def" {
	n = $2
	sub(/:[0-9a-fA-F]*$/, "", n)
	n = name(n)
	defs[$4] = n
	fn[$4] = $3 ~ /^[TWi]$/
	if (dir(n) == "preload" && ($3 == "T" || $3 == "W"))
		interposed[$4] = 1
	next
}
$1 == "undef" {
	sym = $4
	sub(/@.*/, "", sym)
	nu++
	n = $2
	sub(/:$/, "", n)
	ufrom[nu] = name(n)
	usym[nu] = sym
	next
}
END {
	for (n in obj)
		if (!(n in floor))
			err(n " is on no floor of " layers ": place it there (its head says how)")
	for (n in floor)
		if (!(n in obj)) {
			c = n
			sub(/\.o$/, ".c", c)
			err(layers ":" at[n] ": " c " builds no library object")
		}
	for (i = 1; i <= nu; i++) {
		a = ufrom[i]
		s = usym[i]
		if (dir(a) != "preload" && (s in interposed))
			err(a " calls " s "(): use vmak_sys_" s "() (lib/native/sys.h)")
		if (!(s in defs) || defs[s] == a)
			continue
		b = defs[s]
		what = fn[s] ? "calls " s "()" : "uses " s
		edge = a " " b
		if (!(edge in seen)) {
			seen[edge] = 1
			nedge++
		}
		if (dir(a) == "native" && dir(b) != "native") {
			err(a " " what " of " b ": lib/native/ calls nothing of lib/vma/ or lib/preload/")
			continue
		}
		if (dir(a) == "vma" && dir(b) == "preload") {
			err(a " " what " of " b ": lib/vma/ calls nothing of lib/preload/")
			continue
		}
		if (!(a in floor) || !(b in floor))
			continue
		if (floor[b] == floor[a])
			err(a " " what " of " b ", on its own " floorname(floor[a]) " of " layers)
		else if (floor[b] > floor[a])
			err(a " " what " of " b ", a floor up: " floorname(floor[a]) " calls " floorname(floor[b]) " of " layers)
	}
	for (s in interposed)
		nnames++
	printf "ok %d objects below lib/preload/, none calls an interposed name (%d names)\n", nbelow, nnames
	printf "ok %d objects on %d floors of %s, %d object-to-object call edges, each one to a floor below\n", nobj, nfloor, layers, nedge
}') || { echo "check-layers: nm or awk failed"; exit 1; }

if grep -q '^check-layers: ' <<< "$out"; then
	grep '^check-layers: ' <<< "$out" | sort
	exit 1
fi
sed -n 's/^ok /check-layers: /p' <<< "$out"
