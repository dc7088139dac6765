#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vmakctl over netlink: ring show / set / arm, rule show, stats and monitor
# in text and JSON; errors carry the kernel's extack text and the name of
# the attribute; a clear message when the module is not loaded.
cd "$(dirname "$0")/.." && . selftests/lib.sh

vmak_load
tmp=$(mktemp -d)
trap 'exec 4>&- 2>/dev/null; rm -rf "$tmp"' EXIT

# Two rings held by a helper process.
mkfifo "$tmp/in"
vmak-hold 2 < "$tmp/in" > "$tmp/out" &
holder=$!
exec 4> "$tmp/in"
for i in $(seq 50); do grep -q ready "$tmp/out" && break; sleep 0.1; done

json_ok() { python3 -c 'import json,sys; json.load(sys.stdin)'; }
# ids of the holder's rings, from the JSON listing
ids=$(vmakctl -j ring show | python3 -c "
import json, sys
print(' '.join(str(r['id']) for r in json.load(sys.stdin) if r['owner_pid'] == $holder))")
set -- $ids
id=${1:-0}
check "ring show -j lists the holder's 2 rings" test $# = 2
check "ring show -j is valid JSON" bash -c 'vmakctl -j ring show | python3 -m json.tool >/dev/null'
check "ring show ID (text)" bash -c "vmakctl ring show $id | grep -q '^ring $id owner pid $holder uid 0 state ready'"
check "ring show ID -j fields" bash -c "vmakctl -j ring show $id | python3 -c '
import json, sys
r = json.load(sys.stdin)
assert r[\"id\"] == $id and r[\"state\"] == \"ready\" and r[\"rule_count\"] == 0, r
assert r[\"moderation\"] == {\"count\": 0, \"usec\": 0}, r
assert r[\"stats\"][\"rx-packets\"] == 0, r'"

check "ring set moderation count 32 usec 1000" vmakctl ring set "$id" moderation count 32 usec 1000
check "text shows the moderation" bash -c "vmakctl ring show $id | grep -q 'moderation count 32 usec 1000'"
check "ring set moderation usec only keeps count" vmakctl ring set "$id" moderation usec 50
check "JSON shows the moderation" bash -c "vmakctl -j ring show $id | python3 -c '
import json, sys
assert json.load(sys.stdin)[\"moderation\"] == {\"count\": 32, \"usec\": 50}'"
check "ring arm" vmakctl ring arm "$id"

check_fails "count 65536 names the attribute" "\(attribute moderation-count\)" \
	vmakctl ring set "$id" moderation count 65536
check_fails "usec 1000001 names the attribute" "\(attribute moderation-usec\)" \
	vmakctl ring set "$id" moderation usec 1000001
check_fails "unknown ring: extack text" "id: no such ring.*\(attribute id\)" vmakctl ring show 2147483000
check_fails "unknown ring for set" "no such ring" vmakctl ring arm 2147483000
check_fails "other user's ring: EPERM with the reason" "CAP_NET_ADMIN.*Operation not permitted" \
	setpriv --reuid 65534 --regid 65534 --clear-groups --inh-caps=-all \
	"$PWD/$VMAK_BUILD/vmakctl" ring set "$id" moderation count 1
check_fails "usage: bad id" "ring id" vmakctl ring show abc
check_fails "usage: set without values" "give count, usec or both" vmakctl ring set "$id" moderation
check_fails "usage: unknown command" "unknown command" vmakctl frobnicate

check "stats (text)" bash -c "vmakctl stats $id | grep -q '^ring $id rx-packets 0 rx-bytes 0'"
check "stats -j is valid JSON" bash -c 'vmakctl -j stats | python3 -m json.tool >/dev/null'
check "rule show -j: no rules is []" bash -c "test \"\$(vmakctl -j rule show $id)\" = '[]'"

# monitor: events for a ring that comes and goes
vmakctl monitor count 2 > "$tmp/mon" &
mon=$!
sleep 0.5
vmak-hold 1 < /dev/null > /dev/null
wait $mon
check "monitor prints create then delete" bash -c "grep -E '^(create|delete|change) ring' $tmp/mon | cut -d' ' -f1 | tr '\n' ' ' | grep -qx 'create delete '"
vmakctl -j monitor count 1 > "$tmp/monj" &
mon=$!
sleep 0.5
vmakctl ring set "$id" moderation count 3
wait $mon
check "monitor -j prints a change event" bash -c "python3 -c '
import json
e = json.load(open(\"$tmp/monj\"))
assert e[\"event\"] == \"change\" and e[\"ring\"][\"id\"] == $id, e
assert e[\"ring\"][\"moderation\"][\"count\"] == 3, e'"

exec 4>&-
wait $holder
check "the holder's rings are gone" bash -c "! vmakctl ring show $id"
vmak_unload
check_fails "module not loaded: clear message" "vmak module not loaded" vmakctl ring show
tap_done
