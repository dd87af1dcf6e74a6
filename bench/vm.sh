#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The VM half of `make bench`, run in the guest by bench/run.sh:
#   scripts/vmtest.sh -t 3600 -- bench/vm.sh OUT.md
#   VMTEST_QEMU_OPTS='-smp 1 -icount shift=0,...' scripts/vmtest.sh -- \
#	bench/vm.sh --icount OUT.md
# Loads npusim, runs the npusim benchmarks (their sections are appended to
# OUT.md), unloads npusim. Rounds and run lengths suit TCG: BENCH_VM_ROUNDS.
# --icount: tables 2b, 7b, 8 and 9, the hook table, the training loop and
# the HAL's tables again, in a guest whose clock counts instructions.
# BENCH_VM_TABLES: which to run (mark hook rate accuracy train verifier hal;
# --icount: hook train hal).
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
O=${O:-build}
# shellcheck source=scripts/vm/npusim.sh
. scripts/vm/npusim.sh
icount=0
if [ "${1:-}" = --icount ]; then
	icount=1
	shift
fi
out=${1:?usage: bench/vm.sh [--icount] OUT.md}
rounds=${BENCH_VM_ROUNDS:-5}
ko=$O/kmod/$(uname -r)/npusim.ko
bin=$O/bench
env="VM: $(uname -r), QEMU/TCG"
export STEPTIME_CLI=$O/steptime
rc=0

if grep -qw '^npusim' /proc/modules; then
	npusim_remove
fi
if ! insmod "$ko"; then
	printf '\n### VM rows (%s)\n\nnot run: insmod %s failed\n' "$env" "$ko" >>"$out"
	exit 1
fi

step() {	# name command...
	local s=$(date +%s) name=$1 st=0
	echo "# bench/vm.sh: $name" >&2
	shift
	"$@" || st=$?
	if [ $st != 0 ]; then
		rc=1
		printf '\n%s: failed in the VM (exit status %s)\n' "$name" "$st" >>"$out"
	fi
	echo "# bench/vm.sh: took $(($(date +%s) - s)) s" >&2
}

# The -icount guest runs tables 2b, 7b, 8 and 9; BENCH_VM_TABLES picks
# others. Its counts repeat exactly from round to round: the HAL's tables
# (a load per round and chip) run two.
tables="mark hook rate accuracy train verifier hal"
insns_env=
hal_rounds=$rounds
if [ $icount = 1 ]; then
	env="VM: $(uname -r), QEMU -icount"
	tables="hook train hal"
	insns_env="BENCH_HOOK_INSNS=1 BENCH_HAL_INSNS=1"
	hal_rounds=$((rounds < 2 ? rounds : 2))
fi
for t in ${BENCH_VM_TABLES:-$tables}; do
	case $t in
	mark)	step mark "$bin/bench_mark" --npusim -r "$rounds" -s 0.05 \
			-e "$env" -o "$out" ;;
	hook)	step hook env $insns_env "$bin/bench_hook" --npusim \
			-r "$rounds" -e "$env" -o "$out" ;;
	rate)	step rate "$bin/bench_rate" -r "$rounds" -s 1 -e "$env" \
			-o "$out" ;;
	accuracy)
		step accuracy "$bin/bench_accuracy" -e "$env" -o "$out" \
			${BENCH_ACC_MODES:-fentry tp_btf} ;;
	# One load per round and mode (30-55 s each under TCG): fewer rounds.
	train)	step train "$bin/bench_train" -r "${BENCH_TRAIN_ROUNDS:-3}" \
			-e "$env" -o "$out" \
			${BENCH_TRAIN_MODES:-fentry kprobe tp_btf tracepoint} ;;
	# Tables 8 and 9: through libascend_hal.so, one load per round.
	hal)	step hal env $insns_env "$bin/bench_hal" -r "$hal_rounds" \
			-e "$env" -o "$out" ;;
	verifier)
		step verifier "$bin/bench_verifier" --npusim -e "$env" -o "$out" ;;
	*)	echo "bench/vm.sh: unknown table $t" >&2
		rc=1 ;;
	esac
done

npusim_remove || rc=1
exit $rc
