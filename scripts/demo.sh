#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make demo`: steptime's main job on the simulated NPU.
#
# Loads npusim.ko and steptime, runs the CANN sample flow (3 steps of 2, 4
# and 6 tasks) and a PyTorch-shaped training loop, then shows what a user
# reads: `steptime stat`, `steptime stat -o json`, an excerpt of
# `bpftool map dump pinned`, and `steptime status`.
#
# Both programs drive the device as a real host does: through the ACL
# runtime (steptime's libascendcl.so for npusim, sim/runtime/), which builds
# each stream as CANN's runtime does on a 910B (a stream id, its own SQ-CQ
# pair, a logic CQ), submits kernels and step marks without reports
# (place-holders without wr_cqe), a recycle task with a report every 64
# tasks, and synchronizes by SQ head queries. So reports are sparse, as on
# a real host; the demo ends with npusim's count of tasks and reports. It
# submits through the driver's library (libascend_hal.so's stand-in) into
# the soft queues a 910B's driver maps (uio_t, npusim's chip default),
# which the kernel sees only when it copies them: steptime counts them
# through its HAL probes on that library, found in CANN's environment.
#
# Where modules load natively (and this kernel has a built npusim.ko) it
# runs here; otherwise it boots Debian's kernel under QEMU (scripts/vmtest.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
O=${O:-build}
O=$(realpath -m "$O")
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

# npusim's streams are the chip's default, as on a real host: a 910B3's
# soft queues (uio_t), filled in user space by the driver's library, which
# only the HAL probes see. As there, CANN's environment is set first and
# `steptime load` finds the library in it.
section "CANN's environment: \`make install-ascend\`, then its setenv.bash sourced, as CANN's set_env.sh"
asc=$out/ascend
make -s --no-print-directory install-ascend ASCEND_HOME_PATH="$asc" >/dev/null
# shellcheck disable=SC1091
source "$asc/bin/setenv.bash"
echo "ASCEND_HOME_PATH=$ASCEND_HOME_PATH"
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"

section "steptime load --mode 0660 --group video   (root; then the group's users can mark steps and read stats; the HAL probes go on the driver's library)"
"$st" load --mode 0660 --group video
ls -l /sys/fs/bpf/steptime

section "CANN sample flow: aclprofInit > Start > 3 steps (2, 4, 6 tasks) > Stop > Finalize"
"$O/examples/acl_steps" --strict "$out/acl"
ls "$out/acl"
for f in "$out"/acl/*.csv; do
	echo "--- ${f#"$out"/}:"
	if [ -s "$f" ]; then cat "$f"; else echo "(empty)"; fi
done

section "PyTorch-shaped loop: data > forward > backward > optimizer, 5 steps"
PYTHONPATH=python STEPTIME_LIB=$O/libsteptime.so \
	python3 examples/torch_like.py --steps 5
echo "(Each program's first step is longer on the device: it idles from START to the first kernel while the host makes its first calls, slow under QEMU's TCG.)"

section "CANN's profiling sample shape (msproftx), built with CMake against \`make install-ascend\`"
if cmake -S selftests/runtime/cann_sample -B "$out/cmake" >/dev/null &&
   cmake --build "$out/cmake" >/dev/null 2>&1; then
	( cd "$out" && "$out/cmake/msproftx_like" "$out/msproftx" )
else
	echo "(skipped: the sample does not build here)"
fi

section "steptime stat   (every step of every process)"
"$st" stat

section "steptime stat -o json --last 2"
"$st" stat -o json --last 2

section "bpftool map dump pinned /sys/fs/bpf/steptime/steps   (first record)"
# sed reads to the end: no SIGPIPE for bpftool under pipefail.
bpftool map dump pinned /sys/fs/bpf/steptime/steps | sed -n '1,/^    },{/p'

section "steptime status"
"$st" status

section "npusim: tasks run vs reports written (sparse, as on a real host)"
python3 - <<'PY'
import fcntl, os, re, struct
# struct npusim_stats: its __u64 fields, counted in the UAPI header (the
# ioctl number carries its size: a stale count is ENOTTY).
hdr = open("include/uapi/npusim_abi.h").read()
body = re.search(r"struct npusim_stats \{(.*?)\};", hdr, re.S).group(1)
n = len(re.findall(r"__u64\s+\w+;", body))
fd = os.open("/dev/npusim_manager", os.O_RDWR)
buf = bytearray(n * 8)
# NPUSIM_IOC_STATS = _IOR('N', 3, struct npusim_stats)
fcntl.ioctl(fd, (2 << 30) | (len(buf) << 16) | (ord("N") << 8) | 3, buf)
st = struct.unpack("%dQ" % n, buf)
done, reports = st[6], st[7]
print("tasks completed %d, reports written %d (1 in %.0f): every other "
      "task completed silently, learnt from SQ head queries"
      % (done, reports, done / max(reports, 1)))
PY
