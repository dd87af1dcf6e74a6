#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Kernel coding style for the code that is kernel code or kernel ABI
# (kmod/, bpf/, the UAPI headers): the kernel's own checkpatch.pl, taken
# from Debian's linux-source tarball (never committed), one TAP test per
# file. Fails on any ERROR or WARNING but the types ignored below.
#   [KSRC_TAR=...] selftests/style/checkpatch.sh [FILE...]
# make check passes the Makefile's KSRC_TAR (the kselftest headers' source).
set -uo pipefail

cd "$(dirname "$0")/../.." || exit 1
O=${O:-build}
tar=${KSRC_TAR:-$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | head -n1)}
dir=$O/checkpatch

# Why each type is not the kernel's rule here:
#  VOLATILE: libbpf's `const volatile` settings, written by the loader
#    before load (libbpf-tools' convention);
#  LINUX_VERSION_CODE, CONSTANT_COMPARISON: npusim is out of tree and
#    builds against 6.1 and 6.12, where an API changed in between;
#  ENOSYS: npusim answers a second OPEN with -ENOSYS, as the real driver
#    does (ascend-abi.md), which user space checks for;
#  PREFER_DEFINED_ATTRIBUTE_MACRO: BPF and UAPI code has no
#    compiler_attributes.h: __aligned_u64 is spelt as linux/types.h does.
ignore=VOLATILE,LINUX_VERSION_CODE,CONSTANT_COMPARISON,ENOSYS
ignore+=,PREFER_DEFINED_ATTRIBUTE_MACRO

files=("$@")
[ ${#files[@]} -gt 0 ] || files=(kmod/*.[ch] bpf/*.[ch] bench/bench.bpf.c selftests/bpf_helpers/*.bpf.c \
				   include/uapi/*.h)

echo "TAP version 13"
if [ ! -f "$tar" ]; then
	# a build dependency (the kselftest headers come from it too)
	echo "Bail out! no linux-source tarball (${tar:-/usr/src/linux-source-*.tar.xz}): run scripts/deps.sh build"
	exit 1
fi
if [ ! -x "$dir/scripts/checkpatch.pl" ] || [ "$tar" -nt "$dir/scripts/checkpatch.pl" ]; then
	mkdir -p "$dir"
	tar -xJf "$tar" -C "$dir" --strip-components=1 --wildcards \
		'*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
		'*/scripts/const_structs.checkpatch' || exit 1
	touch "$dir/scripts/checkpatch.pl"
fi

n=0
for f in "${files[@]}"; do
	[ -f "$f" ] && n=$((n + 1))
done
echo "1..$n"
i=0 fail=0
for f in "${files[@]}"; do
	[ -f "$f" ] || continue
	i=$((i + 1))
	out=$(perl "$dir/scripts/checkpatch.pl" --no-tree --terse --show-types \
		--ignore "$ignore" -f "$f" 2>&1 | grep -v '^total: ')
	if [ -z "$out" ]; then
		echo "ok $i $f"
	else
		echo "$out" | sed 's/^/# /'
		echo "not ok $i $f"
		fail=1
	fi
done
exit $fail
