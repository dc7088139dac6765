#!/bin/bash
# Generate the uapi header of the "vmak" netlink family from its YAML spec
# with the kernel's own generator (tools/net/ynl of Debian's
# linux-source-6.12), which also validates the spec against the kernel's
# genetlink schema. Usage: scripts/ynl-gen.sh OUT.h
# The source tree's ynl directory is unpacked once into $VMAK_CACHE/ynl.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: ynl-gen.sh OUT.h}
cache=${VMAK_CACHE:-/var/cache/vmak}/ynl
src=$cache/linux-source-6.12

if [ ! -f "$src/tools/net/ynl/ynl-gen-c.py" ]; then
	mkdir -p "$cache/debs"
	deb=$(ls "$cache"/debs/linux-source-6.12_*.deb 2>/dev/null | tail -n1 || true)
	if [ -z "$deb" ]; then
		(cd "$cache/debs" && apt-get download linux-source-6.12 >/dev/null)
		deb=$(ls "$cache"/debs/linux-source-6.12_*.deb | tail -n1)
	fi
	tmp=$(mktemp -d "$cache/unpack.XXXXXX")
	dpkg-deb --fsys-tarfile "$deb" |
		tar -x -O ./usr/src/linux-source-6.12.tar.xz | xz -dc |
		tar -x -C "$tmp" --wildcards 'linux-source-6.12/tools/net/ynl/*' \
			'linux-source-6.12/Documentation/netlink/*'
	rm -rf "$src"
	mv "$tmp/linux-source-6.12" "$src"
	rmdir "$tmp"
fi

# The generator wants the spec inside a kernel tree (it looks for
# MAINTAINERS above it and the schemas beside specs/) and an absolute path.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/Documentation/netlink/specs"
touch "$work/MAINTAINERS"
cp "$src"/Documentation/netlink/*.yaml "$work/Documentation/netlink/"
cp "$here/Documentation/netlink/specs/vmak.yaml" "$work/Documentation/netlink/specs/"
timeout 120 /usr/bin/python3 "$src/tools/net/ynl/ynl-gen-c.py" --mode uapi \
	--header --spec "$work/Documentation/netlink/specs/vmak.yaml" -o "$out"
