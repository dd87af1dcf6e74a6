#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Extract a kernel's own BTF (raw, as /sys/kernel/btf/vmlinux gives it)
# from its boot image: Debian's arm64 vmlinuz is the uncompressed Image,
# whose .BTF data sits in it without ELF section headers. The BTF base of
# out-of-tree modules (pahole --btf_base) and the source of the arm64
# vmlinux.h, without booting the kernel.
#
#   scripts/vm/extract-btf.sh IMAGE OUT
set -euo pipefail

img=$1
out=$2
[ -r "$img" ] || { echo "extract-btf: no $img" >&2; exit 1; }
mkdir -p "$(dirname "$out")"
python3 - "$img" "$out.tmp" <<'PY'
import struct, sys

data = open(sys.argv[1], 'rb').read()
# struct btf_header: magic 0xeB9F, version 1, flags 0, hdr_len 24.
magic = b'\x9f\xeb\x01\x00\x18\x00\x00\x00'
blobs = []
at = data.find(magic)
while at >= 0:
    _, _, _, hlen, toff, tlen, soff, slen = struct.unpack_from('<HBBIIIII', data, at)
    blobs.append((at, hlen + max(toff + tlen, soff + slen)))
    at = data.find(magic, at + 1)
if len(blobs) != 1:
    sys.exit('extract-btf: %d BTF headers in %s, want one' % (len(blobs), sys.argv[1]))
at, size = blobs[0]
open(sys.argv[2], 'wb').write(data[at:at + size])
PY
# bpftool must read it, and it must be a kernel's.
bpftool btf dump file "$out.tmp" format raw 2>/dev/null | grep -c "STRUCT 'task_struct'" >/dev/null || {
	rm -f "$out.tmp"
	echo "extract-btf: no kernel BTF in $img" >&2
	exit 1
}
mv -f "$out.tmp" "$out"
