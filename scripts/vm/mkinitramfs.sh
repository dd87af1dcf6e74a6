#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the vmtest initramfs for one kernel: static busybox, scripts/vm/init,
# and the modules needed to reach the host root over virtio-9p.
#
#   scripts/vm/mkinitramfs.sh [--root DIR | --modules DIR] KVER OUT.cpio.gz
#
# --root DIR: the kernel's modules and busybox come from DIR (an unpacked
# foreign-architecture root, e.g. arm64's) instead of /; the console there
# is virtio's (hvc0), whose driver may be a module too.
# --modules DIR: only the modules come from DIR (a kernel of this
# architecture unpacked there, not installed: scripts/deps.sh demo).
set -euo pipefail

root= modroot=
case "${1:-}" in
--root)		root=${2:?}; modroot=$root; shift 2 ;;
--modules)	modroot=${2:?}; shift 2 ;;
esac
kver=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)
mods=(virtio_pci 9pnet_virtio 9p overlay)
[ -z "$root" ] || mods+=(virtio_console)
busybox=${root}/bin/busybox

# The initramfs has no libc: busybox must be the static one.
if ldd "$busybox" >/dev/null 2>&1; then
	echo "mkinitramfs: $busybox is dynamic (install busybox-static)" >&2
	exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"/{bin,sbin,dev,proc,sys,newroot,modules}
cp "$busybox" "$tmp/bin/busybox"
# The applet list of the host's busybox (the same Debian version): a
# foreign one cannot run here.
for app in $(/bin/busybox --list); do
	[ "$app" = busybox ] || ln -s busybox "$tmp/bin/$app"
done
install -m 0755 "$here/init" "$tmp/init"

# Dependencies first, each module once.
# (modprobe takes one module per call: further words are parameters.)
for m in "${mods[@]}"; do
	modprobe -d "${modroot:-/}" -S "$kver" --show-depends "$m"
done |
	awk '$1 == "insmod" && !seen[$2]++ { print $2 }' |
	while read -r ko; do
		name=$(basename "$ko")
		case "$name" in
		*.xz)	name=${name%.xz}; xz -dc "$ko" >"$tmp/modules/$name" ;;
		*.zst)	name=${name%.zst}; zstd -dcq "$ko" >"$tmp/modules/$name" ;;
		*)	cp "$ko" "$tmp/modules/$name" ;;
		esac
		echo "$name" >>"$tmp/modules/order"
	done
touch "$tmp/modules/order"

mkdir -p "$(dirname "$out")"
(cd "$tmp" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) | gzip -1 >"$out.tmp"
mv -f "$out.tmp" "$out"
