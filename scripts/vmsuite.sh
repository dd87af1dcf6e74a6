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
# shows them). The status is vmtest's.
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

mkdir -p "$(dirname "$log")" || exit 1
start=$(date +%s)
echo "$tag start: log $log"
"$(dirname "$0")/vmtest.sh" "$@" </dev/null 2>&1 | tee "$log" |
	grep --line-buffered -E '^# ==== .*: exit|^not ok|^ok .*# *SKIP|^vmtest:|^[0-9]+ passed, ' |
	sed -u "s/^/$tag /"
rc=${PIPESTATUS[0]}
secs=$(($(date +%s) - start))

if [ "$rc" = 0 ]; then
	echo "$tag PASS in ${secs}s"
	exit 0
fi
echo "$tag FAIL (status $rc) in ${secs}s; its log:"
sed "s/^/$tag | /" "$log"
echo "$tag failed results:"
grep -E '^not ok|^vmtest:' "$log" | sed "s/^/$tag /"
echo "$tag FAIL (status $rc) in ${secs}s"
exit "$rc"
