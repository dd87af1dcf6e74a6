#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# One guest kernel's VM suite, as one of several run at once (make check
# runs VM_JOBS of them: each QEMU is one TCG thread, about one CPU):
#
#   scripts/vmsuite.sh LOG -- VMTEST_ARGS...
#
# runs scripts/vmtest.sh VMTEST_ARGS... with its whole output in LOG, and
# shows live, each line prefixed with the kernel, only what says how the
# suite goes: a program's end ("# ==== NAME: exit RC, MS ms"), a failed or
# skipped result and vmtest's own complaints. When the suite fails, the
# whole log follows, then its failed results again (last, where CI's tail
# shows them). The first and last lines name the kernel package and its
# version; a failure on a kernel the README does not list as last green
# says so. The status is vmtest's.
set -uo pipefail

if [ $# -lt 3 ] || [ "$2" != -- ]; then
	echo "usage: $0 LOG -- VMTEST_ARGS..." >&2
	exit 2
fi
log=$1
shift 2

kver=6.1.0-57-amd64
args=("$@")
for i in "${!args[@]}"; do
	[ "${args[$i]}" = --kernel ] && kver=${args[$((i + 1))]:-$kver}
done
tag="[$kver]"
here=$(dirname "$0")

# The kernel package's version: installed (dpkg), or unpacked by
# scripts/deps.sh (its .debs lists), else what the guest said of itself.
pkg_version() {
	local v root

	v=$(dpkg-query -W -f='${Version}' "linux-image-$kver" 2>/dev/null) &&
		[ -n "$v" ] && { echo "$v"; return; }
	for root in "${STEPTIME_AMD64_ROOT:-/var/cache/steptime/amd64/root}" \
		    "${STEPTIME_ARM64_ROOT:-/var/cache/steptime/arm64/root}"; do
		v=$(sed -n "s/^linux-image-$kver"'_\([^_]*\)_.*\.deb$/\1/p' \
		    "$root/.debs" 2>/dev/null | head -n1)
		[ -n "$v" ] && { echo "$v"; return; }
	done
	[ -f "$log" ] && v=$(sed -n "s/^# kernel: linux-image-$kver=\([^ ]*\) .*/\1/p" "$log" | head -n1)
	echo "${v:-unknown}"
}

# The versions `make check` was last green on, from the README's list.
green_versions() {
	sed -n '/<!-- green-kernels:begin/,/<!-- green-kernels:end/s/^| `\(linux-image-[^`]*\)` | `\([^`]*\)` .*/\1=\2/p' \
		"${VMSUITE_README:-$here/../README.md}" 2>/dev/null
}

mkdir -p "$(dirname "$log")" || exit 1
start=$(date +%s)
pkg=linux-image-$kver=$(pkg_version)
echo "$tag start: $pkg, log $log"
"$here/vmtest.sh" "$@" </dev/null 2>&1 | tee "$log" |
	grep --line-buffered -E '^# ==== .*: exit|^not ok|^ok .*# *SKIP|^vmtest:|^(linux-image-[^ ]*: )?[0-9]+ passed, ' |
	sed -u "s/^/$tag /"
rc=${PIPESTATUS[0]}
secs=$(($(date +%s) - start))

if [ "$rc" = 0 ]; then
	echo "$tag PASS in ${secs}s on $pkg"
	exit 0
fi
echo "$tag FAIL (status $rc) in ${secs}s; its log:"
sed "s/^/$tag | /" "$log"
if ! green_versions | grep -qxF "$pkg"; then
	echo "$tag note: $pkg is not a kernel make check was last green on" \
	     "(README.md, \"Kernels make check was last green on\": $(green_versions |
	     tr '\n' ' ')): the failure may come with this kernel"
fi
echo "$tag failed results:"
grep -E '^not ok|^vmtest:' "$log" | sed "s/^/$tag /"
echo "$tag FAIL (status $rc) in ${secs}s on $pkg"
exit "$rc"
