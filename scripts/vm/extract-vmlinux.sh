#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Extract the uncompressed vmlinux (ELF, with .BTF) from a Debian bzImage.
#
#   scripts/vm/extract-vmlinux.sh [--root DIR] KVER OUT
#
# --root DIR: the kernel unpacked under DIR (DIR/boot/vmlinuz-KVER).
#
# QEMU boots it through its PVH entry, which skips the decompressor (about
# 3 s of the 9 s a TCG boot of the bzImage takes); pahole wants it as the
# BTF base of out-of-tree modules. The payload is xz (6.1) or zstd (6.12).
set -euo pipefail

root=
if [ "${1:-}" = --root ]; then
	root=${2:?}
	shift 2
fi
kver=$1
out=$2
img=$root/boot/vmlinuz-$kver
[ -r "$img" ] || { echo "extract-vmlinux: no $img" >&2; exit 1; }

is_elf() { [ "$(head -c 4 "$1" | od -An -tx1 | tr -d ' ')" = 7f454c46 ]; }

try() {	# magic (grep -P) and decompressor
	local magic=$1 dec=$2 off
	for off in $(LC_ALL=C grep -obUaP "$magic" "$img" | cut -d: -f1); do
		# The decompressors complain about the data after the payload.
		tail -c +$((off + 1)) "$img" | $dec >"$out.tmp" 2>/dev/null || true
		if is_elf "$out.tmp"; then
			mv -f "$out.tmp" "$out"
			return 0
		fi
	done
	return 1
}

mkdir -p "$(dirname "$out")"
try '\xfd\x37\x7a\x58\x5a\x00' 'xz -dc' || try '\x28\xb5\x2f\xfd' 'zstd -dcq' || {
	rm -f "$out.tmp"
	echo "extract-vmlinux: no xz or zstd vmlinux found in $img" >&2
	exit 1
}
