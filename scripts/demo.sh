#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make demo`: steptime's main job on the simulated NPU.
#
# Loads npusim.ko and steptime, runs the CANN sample flow (3 steps of 2, 4
# and 6 tasks) and a PyTorch-shaped training loop, then shows what a user
# reads: `steptime stat`, `steptime stat -o json`, an excerpt of
# `bpftool map dump pinned`, and `steptime status`.
#
# Where modules load natively (and this kernel has a built npusim.ko) it
# runs here; otherwise it boots Debian's kernel under QEMU (scripts/vmtest.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
O=${O:-build}
ko=$O/kmod/$(uname -r)/npusim.ko

if [ "${1:-}" != --here ]; then
	if [ -e /proc/modules ] && [ -f "$ko" ]; then
		exec "$0" --here
	fi
	echo "demo: this kernel cannot load npusim.ko; booting Debian's kernel under QEMU"
	exec scripts/vmtest.sh -t 600 -- "$0" --here
fi

st=$O/steptime
out=$(mktemp -d)
section() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
cleanup() {
	"$st" unload 2>/dev/null || true
	rmmod npusim 2>/dev/null || true
	rm -rf "$out"
}
trap cleanup EXIT

section "insmod npusim.ko: a simulated Ascend NPU on /dev/npusim_manager"
grep -qw '^npusim' /proc/modules || insmod "$O/kmod/$(uname -r)/npusim.ko"
ls -l /dev/npusim_manager

section "steptime load   (root; then any user in the group can mark steps)"
"$st" load --mode 0666

section "CANN sample flow: aclprofInit > Start > 3 steps (2, 4, 6 tasks) > Stop > Finalize"
"$O/examples/acl_steps" --strict "$out/acl"
ls "$out/acl"
echo "--- $(ls "$out"/acl/*.csv | head -1):"
cat "$out"/acl/*.csv

section "PyTorch-shaped loop: data > forward > backward > optimizer, 5 steps"
PYTHONPATH=python STEPTIME_LIB=$PWD/$O/libsteptime.so \
	python3 examples/torch_like.py --steps 5

section "steptime stat   (every step of every process)"
"$st" stat

section "steptime stat -o json --last 2"
"$st" stat -o json --last 2

section "bpftool map dump pinned /sys/fs/bpf/steptime/steps   (first record)"
# sed reads to the end: no SIGPIPE for bpftool under pipefail.
bpftool map dump pinned /sys/fs/bpf/steptime/steps | sed -n '1,/^    },{/p'

section "steptime status"
"$st" status
