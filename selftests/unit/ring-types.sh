#!/bin/bash
# The ring verbs of lib/include/vmak/ring.h take distinct producer and
# consumer types: a consumer verb on a producer ring (or the reverse) must
# not compile, and the right verbs must. TAP on stdout.
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 fail=0

try() {	# try WANT NAME CODE: WANT is ok (compiles) or reject
	local want=$1 name=$2 code=$3 got
	n=$((n + 1))
	printf '#include "vmak/ring.h"\nvoid f(struct vmak_ring_prod *p, struct vmak_ring_cons *c);\nvoid f(struct vmak_ring_prod *p, struct vmak_ring_cons *c)\n{\n\tuint32_t idx;\n\t(void)p; (void)c; (void)idx;\n\t%s;\n}\n' "$code" > "$tmp/t.c"
	if cc -Iuapi -Ilib/include -Wall -Werror -c -o "$tmp/t.o" "$tmp/t.c" 2>"$tmp/err"; then
		got=ok
	else
		got=reject
	fi
	if [ "$got" = "$want" ]; then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name (wanted $want, got $got)"
		sed 's/^/# /' "$tmp/err" | head -5
		fail=1
	fi
}

try ok "peek on a consumer ring" "vmak_ring_peek(c, 1, &idx)"
try ok "reserve on a producer ring" "vmak_ring_reserve(p, 1, &idx)"
try ok "recycle RX chunks to FILL" "vmak_ring_recycle(p, c, 0, 1)"
try reject "peek on a producer ring" "vmak_ring_peek(p, 1, &idx)"
try reject "release on a producer ring" "vmak_ring_release(p, 1)"
try reject "reserve on a consumer ring" "vmak_ring_reserve(c, 1, &idx)"
try reject "submit on a consumer ring" "vmak_ring_submit(c, 1)"
try reject "recycle into a consumer ring" "vmak_ring_recycle(c, c, 0, 1)"
try reject "RX descriptor of a producer ring" "(void)vmak_ring_rx_desc(p, 0)"
try reject "TX descriptor of a consumer ring" "(void)vmak_ring_tx_desc(c, 0)"
echo "1..$n"
exit $fail
