#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The VM test suite, run in the guest by `make check-vm`:
#   scripts/vmtest.sh --kernel KVER -- selftests/run_vm.sh [PATTERN...]
#
# Loads $O/kmod/$(uname -r)/npusim.ko (O defaults to build; extra insmod
# arguments in $NPUSIM_PARAMS) and checks it has BTF (fentry on its
# functions needs it), runs every program in $O/selftests/vm/ (or those
# whose name matches a PATTERN, a shell glob; a PATTERN "GLOB ARGS..."
# also gives the programs it matches arguments, e.g. the harness's test
# selection: 'loader_loader -r slow.npusim_auto_mode', see
# selftests/ksft_filter.h) with its output shown, counts
# their TAP results, then unloads npusim. $O's libascend_hal.so is in
# $LD_LIBRARY_PATH, as CANN's set_env.sh puts the driver's library. The kernel log must stay free of
# warnings, BUGs and oopses, and rmmod must succeed; all count as results.
# The first line names the kernel package ("# kernel: linux-image-KVER=VERSION
# (ARCH)"), the last one counts: "linux-image-KVER=VERSION: N passed, N
# failed, N skipped"; the status is non-zero when anything failed. A
# program fails when it reports no test, or when every test it reports
# skipped, unless its plan declares the whole program skipped with a reason
# ("1..0 # SKIP reason", counted as one skip).
#
# Each program has RUN_VM_TIMEOUT seconds: when unset, its folder's
# kselftest settings file (selftests/<folder>/settings, "timeout=SECS") says
# how many, else 300. From the host, pass these through vmtest.sh with
# VMTEST_ENV="RUN_VM_TIMEOUT NPUSIM_PARAMS".
#
#   selftests/run_vm.sh --run CMD [ARGS...]
#
# only loads npusim around CMD (demos, benchmarks, debugging) and exits
# with CMD's status (1 if CMD passed but rmmod or the kernel log did not).
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
O=${O:-build}
# shellcheck source=scripts/vm/npusim.sh
. scripts/vm/npusim.sh
kver=$(uname -r)
ko=$O/kmod/$kver/npusim.ko
tests=$O/selftests/vm

# The settings file of program $1 (<folder>_<file>): the longest folder
# that prefixes its name (folders may have a '_': hal_real, hal_steps).
prog_settings() {
	local d f best=

	for d in selftests/*/; do
		f=$(basename "$d")
		[[ $1 == "${f}_"* ]] && [ ${#f} -gt ${#best} ] && best=$f
	done
	echo "selftests/${best:-none}/settings"
}

# The time limit of program $1.
prog_timeout() {
	local settings secs=

	settings=$(prog_settings "$1")

	if [ -n "${RUN_VM_TIMEOUT:-}" ]; then
		echo "$RUN_VM_TIMEOUT"
		return
	fi
	[ -f "$settings" ] && secs=$(sed -n 's/^timeout=\([0-9]\+\)$/\1/p' "$settings")
	echo "${secs:-300}"
}

# The npusim parameters program $1 (<folder>_<file>) needs beyond
# $NPUSIM_PARAMS: its folder's settings line "npusim=PARAMS" (e.g. a
# process per device on 8 devices: "npusim=devices=8").
prog_npusim() {
	local settings

	settings=$(prog_settings "$1")
	[ -f "$settings" ] && sed -n 's/^npusim=\(.*\)$/\1/p' "$settings"
}

# npusim again, with the module parameters $1 added to $NPUSIM_PARAMS.
npusim_reload() {
	npusim_remove || return 1
	# shellcheck disable=SC2086
	insmod "$ko" ${NPUSIM_PARAMS:-} $1
}

pass=0 fail=0 skip=0 artefacts=0

result() {	# ok|fail name [reason]
	if [ "$1" = ok ]; then
		pass=$((pass + 1))
		echo "ok - $2"
	else
		fail=$((fail + 1))
		echo "not ok - $2${3:+ # $3}"
	fi
}

# Count the TAP result lines of one program's output (nested TAP, indented,
# is the program's business: only its top-level lines count).
count_tap() {	# log rc name
	local p f s
	p=$(grep -cE '^ok [0-9]+' "$1" | head -1)
	s=$(grep -cE '^ok [0-9]+.*# *SKIP' "$1" | head -1)
	f=$(grep -cE '^not ok [0-9]+' "$1" | head -1)
	pass=$((pass + p - s))
	skip=$((skip + s))
	fail=$((fail + f))
	# 4 is kselftest's "skipped" status; 124 (timeout) is counted already.
	if [ "$2" = 124 ]; then
		return
	elif [ "$2" != 0 ] && [ "$2" != 4 ] && [ "$f" = 0 ]; then
		result fail "$3" "exit status $2 with no failed test"
	elif [ $((p + f)) = 0 ] && grep -qE '^1\.\.0 # *SKIP' "$1"; then
		# A whole-program skip, declared with its reason: counted so.
		skip=$((skip + 1))
		echo "ok - $3 # SKIP $(sed -n 's/^1\.\.0 # *SKIP *//p' "$1" | head -n1)"
	elif [ $((p + f)) = 0 ]; then
		result fail "$3" "no TAP results"
	elif [ "$s" = "$p" ] && [ "$f" = 0 ]; then
		# Tested nothing, yet no reason for the whole program.
		result fail "$3" "every test skipped (a program that cannot run here says so in its plan: 1..0 # SKIP reason)"
	fi
}

# dmesg lines that mean the kernel found a bug, ours or one we triggered.
COMPLAINT='WARNING:|BUG:|Oops|general protection|Call Trace:|UBSAN|KASAN|kmemleak|refcount_t:|list_(add|del) corruption'

# The kernel's complaints, each report (from its first line to its "---[
# end trace" line) sorted: "known NAME" for an emulator artefact the
# harness knows by its whole signature, "bad LINE" for anything else.
# Known, and only under QEMU's TCG (vmtest.sh says so on the kernel command
# line: vmtest.accel=tcg):
#   tcg-kernel-single-step: x86's exc_debug_kernel() warning that a
#   single-step #DB (EFLAGS.TF) was taken in kernel mode, where no kernel
#   code of these guests sets TF (x86 kprobes single-step with int3 since
#   5.15, uprobes set TF in user registers only, no KGDB): the emulator's
#   (README, "Set-up"; selftests/vmtest/tf_step.c shows user-mode stepping
#   does not leak into the kernel).
kernel_reports() {
	local tcg=0

	grep -qw 'vmtest.accel=tcg' /proc/cmdline && tcg=1
	dmesg | awk -v tcg=$tcg -v re="$COMPLAINT" '
		/---\[ end trace/ { known = ""; inrep = 0; next }
		$0 ~ re {
			if (!inrep) {
				inrep = 1
				known = ""
				if (tcg && $0 ~ /WARNING: CPU: [0-9]+ PID: [0-9]+ at arch\/x86\/kernel\/traps\.c:[0-9]+ exc_debug_kernel\+/)
					known = "tcg-kernel-single-step"
				if (known != "")
					print "known " known
			}
			if (known == "")
				print "bad " $0
		}'
}

# The kernel log, judged: a report nobody explains fails; a known artefact
# is printed (the whole log) and counted, never silently passed. Returns
# 1 when anything is unexplained.
kernel_log_check() {
	local reports known

	reports=$(kernel_reports)
	[ -z "$reports" ] && return 0
	echo "# kernel log:"
	dmesg | sed 's/^/# /'
	known=$(echo "$reports" | sed -n 's/^known //p' | sort | uniq -c |
		awk '{ printf("%s%s x%d", (NR > 1 ? ", " : ""), $2, $1) }')
	if [ -n "$known" ]; then
		artefacts=$(echo "$reports" | grep -c '^known ')
		echo "# known emulator artefacts in the kernel log (not steptime's, not the kernel's): $known"
	fi
	! echo "$reports" | grep -q '^bad '
}

# The driver's library (the libascend_hal.so stand-in) where a CANN host's
# set_env.sh puts it, in $LD_LIBRARY_PATH: the programs (whose RUNPATH is
# the build dir already) and a `steptime load` started before any of them
# find the same file, and uprobes are per file. On a real host the loader
# finds it there or under /usr/local/Ascend/driver/lib64/driver; npusim's
# chip default gives mapped SQs that only its probes see.
# (Not `realpath -m`: the arm64 guest's busybox has no -m.)
odir=$(cd "$O" 2>/dev/null && pwd -P || echo "$O")
export LD_LIBRARY_PATH=$odir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# The kernel as its package names it (Debian's /proc/version carries the
# package's version): Debian's archive serves only its newest kernel, so
# a fresh machine may boot one that CI never saw. A suite's first and last
# lines say which.
kpkg=$(sed -n 's/.* Debian \([^ ]*\) .*/\1/p' /proc/version)
kpkg=linux-image-$kver=${kpkg:-unknown}
summary() {
	[ "$artefacts" = 0 ] || echo "# $artefacts known emulator artefact(s) in the kernel log, printed above"
	echo "$kpkg: $pass passed, $fail failed, $skip skipped"
}
[ "${1:-}" = --run ] || echo "# kernel: $kpkg ($(uname -m))"

dmesg -C 2>/dev/null
if grep -qw '^npusim' /proc/modules; then
	npusim_remove || { echo "run_vm: a loaded npusim cannot be removed" >&2; exit 1; }
fi
if [ ! -f "$ko" ]; then
	echo "run_vm: no $ko (make kmod)" >&2
	result fail "insmod npusim" "missing $ko"
	summary
	exit 1
fi
# shellcheck disable=SC2086
if ! insmod "$ko" ${NPUSIM_PARAMS:-}; then
	result fail "insmod npusim"
	summary
	exit 1
fi

if [ "${1:-}" = --run ]; then
	shift
	"$@"
	rc=$?
	bad=0
	npusim_remove || bad=1
	if ! kernel_log_check; then
		echo "run_vm: the kernel complained (above)" >&2
		bad=1
	fi
	[ "$rc" = 0 ] && rc=$bad
	exit "$rc"
fi

if [ -e /sys/kernel/btf/npusim ]; then
	result ok "npusim has BTF"
else
	result fail "npusim has BTF" "no /sys/kernel/btf/npusim"
fi

# The host suites run here too (as root, which is certain here): the CLI
# they drive is the build tree's.
export STEPTIME_CLI=${STEPTIME_CLI:-$odir/steptime}
log=$(mktemp)
ran=0
for t in "$tests"/*; do
	[ -x "$t" ] && [ -f "$t" ] || continue
	name=$(basename "$t")
	args=()
	if [ $# -gt 0 ]; then
		want=0
		for pat in "$@"; do
			# shellcheck disable=SC2053
			[[ $name == ${pat%% *} ]] || continue
			want=1
			# "NAME ARGS...": the program's arguments (words).
			[ "${pat%% *}" = "$pat" ] || read -ra args <<<"${pat#* }"
			break
		done
		[ $want = 1 ] || continue
	fi
	# The arm64 guest's root has no python3 or bpftool, which the test
	# scripts drive: they skip there, said so; compiled programs run.
	if [ "$(head -c 2 "$t")" = '#!' ] && ! { command -v python3 &&
	     command -v bpftool; } >/dev/null; then
		skip=$((skip + 1))
		echo "ok - $name # SKIP no python3/bpftool in this guest ($(uname -m))"
		continue
	fi
	echo "# ==== $name${args[*]:+ ${args[*]}}"
	ran=$((ran + 1))
	extra=$(prog_npusim "$name")
	if [ -n "$extra" ] && ! npusim_reload "$extra"; then
		result fail "$name" "npusim with $extra does not load"
		npusim_reload "" || exit 1
		continue
	fi
	start=$(now_ms)
	limit=$(prog_timeout "$name")
	timeout -k 5 "$limit" "$t" "${args[@]}" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	echo "# ==== $name: exit $rc, $(($(now_ms) - start)) ms"
	[ "$rc" = 124 ] && result fail "$name" "timed out after ${limit}s"
	count_tap "$log" "$rc" "$name"
	if [ -n "$extra" ] && ! npusim_reload ""; then
		result fail "$name" "npusim does not unload after it"
		break
	fi
done
rm -f "$log"
# A run that tests nothing (no program built, a pattern that matches none)
# is a failure, not an empty pass.
[ $ran -gt 0 ] || result fail "test programs" "none in $tests${1:+ matches $*}"

if npusim_remove; then
	result ok "rmmod npusim"
else
	result fail "rmmod npusim"
fi
if ! kernel_log_check; then
	result fail "kernel log free of warnings"
elif [ "$artefacts" -gt 0 ]; then
	result ok "kernel log free of warnings # but $artefacts known emulator artefact(s), above"
else
	result ok "kernel log free of warnings"
fi

summary
[ "$fail" = 0 ]
