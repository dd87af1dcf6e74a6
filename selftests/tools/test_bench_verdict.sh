#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# bench/run.sh's verdicts fail when the data is not there: fed sections
# with rows missing, steps missing, tasks counted differing from those
# npusim received, or a loss counter moved, every goal they decide must
# read NOT MET or NO DATA, never met; fed complete, good rows, met (so the
# checks can tell the two apart). Runs `bench/run.sh --summary` on files
# made here: no BPF, no VM. Prints TAP.
set -uo pipefail
cd "$(dirname "$(readlink -f "$0")")/../.." || exit 1
T=$(mktemp -d)
trap 'rm -rf $T' EXIT
n=0 failed=0
ok() {	# status name
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; failed=1; fi
}

# summary HOST VM IC: the summary table's rows.
summary() {
	BENCH_ACC_MODES=fentry BENCH_TRAIN_MODES=fentry \
		bench/run.sh --summary "$1" "$2" "$3" | grep '^| '
}

# verdict_of ROWS GOAL-PREFIX: the verdict column of the row(s) whose goal
# starts with GOAL-PREFIX ("" when there is none).
verdict_of() {
	echo "$1" | grep -F "| $2" | awk -F'|' '{ gsub(/^ +| +$/, "", $4); print $4 }'
}

# expect ROWS GOAL-PREFIX WANT NAME: every matching row's verdict is WANT
# (and there is one).
expect() {
	local got
	got=$(verdict_of "$1" "$2")
	if [ -n "$got" ] && ! echo "$got" | grep -vqx "$3"; then
		ok 0 "$4"
	else
		ok 1 "$4"
		echo "# $2: want $3, got: $(echo "$got" | tr '\n' ';')"
	fi
}

row() {	# what value [ratio]
	echo "| $1 | $2 | | | | ${3:-} | |"
}

# The accuracy and throughput rows of a good run.
good_vm() {
	row "fentry: steps checked" 1000
	row "fentry: steps missing" 0
	row "fentry: max abs error of per-step device time" "0 ns"
	row "fentry: device time outside the bench's own bounds" 0
	row "fentry: max abs error of per-step task count" 0
	for b in 1 16 256; do
		row "B=$b: tasks counted by steptime (all rounds)" 5000
		row "B=$b: tasks npusim received (all rounds)" 5000
		row "B=$b: losses (all rounds)" 0
	done
}
good_host() {
	row "steptime host mark: steptime__mark(id, tag, NULL)" 30 "1.20x [1.10, 1.30]"
	row "aclprofGetStepTimestamp() (objects made in advance)" 30 "1.20x [1.10, 1.30]"
	row "holdout: aclprofGetStepTimestamp() in an app" 30 "1.40x [1.30, 1.50]"
	row "holdout, the step API alone: aclprofGetStepTimestamp() with no kick probe" 28 "1.45x [1.30, 1.50]"
}

echo "TAP version 13"
echo "1..13"

: >$T/empty
rows=$(summary $T/empty $T/empty $T/empty)
if [ -n "$rows" ] && ! verdict_of "$rows" "" | grep -qx met; then
	ok 0 "no data at all: no goal met"
else
	ok 1 "no data at all: no goal met"
	echo "$rows" | grep '| met |' | sed 's/^/# /'
fi
expect "$rows" "device step time and task count exact" "NO DATA" \
	"no accuracy rows: NO DATA"
expect "$rows" "no losses at B=" "NO DATA" "no throughput rows: NO DATA"
expect "$rows" "host mark within 1.5x" "NO DATA" "no mark rows: NO DATA"

good_vm >$T/vm
good_host >$T/host
rows=$(summary $T/host $T/vm $T/empty)
expect "$rows" "device step time and task count exact" met \
	"every step checked, no error: met"
expect "$rows" "no losses at B=" met "no loss, every task counted: met"
expect "$rows" "CANN mark in an app linked with libsteptime.so, its ring kick probed (holdout) within 1.5x" \
	met "holdout within 1.5x: met"
expect "$rows" "CANN mark in an app linked with libsteptime.so, no kick probe (holdout) within 1.5x" \
	met "holdout, no kick probe, within 1.5x: met"
# The kicked holdout 10x: its verdict fails, the library's alone stands.
good_host | sed '/| holdout: aclprof/s/1.40x \[1.30, 1.50\]/10.50x [10.40, 10.60]/' >$T/host2
rows=$(summary $T/host2 $T/vm $T/empty)
expect "$rows" "CANN mark in an app linked with libsteptime.so, its ring kick probed (holdout) within 1.5x" \
	"NOT MET" "kicked holdout at 10.5x: NOT MET"

# Device time 0 ns off, but steps missing or none found.
good_vm | sed 's/| fentry: steps missing | 0 |/| fentry: steps missing | 16 |/' >$T/vm
rows=$(summary $T/host $T/vm $T/empty)
expect "$rows" "device step time and task count exact" "NOT MET" \
	"16 steps missing, 0 ns off the others: NOT MET"
good_vm | sed -e 's/| fentry: steps checked | 1000 |/| fentry: steps checked | 0 |/' \
	-e 's/| fentry: steps missing | 0 |/| fentry: steps missing | 1000 |/' >$T/vm
rows=$(summary $T/host $T/vm $T/empty)
expect "$rows" "device step time and task count exact" "NOT MET" \
	"no step found: NOT MET"

# No loss counter moved, but tasks counted differ from those received;
# a loss counter moved.
good_vm | sed 's/| B=16: tasks npusim received (all rounds) | 5000 |/| B=16: tasks npusim received (all rounds) | 5001 |/' \
	| sed 's/| B=256: losses (all rounds) | 0 |/| B=256: losses (all rounds) | 1 |/' \
	| grep -v "B=1: tasks npusim received" >$T/vm
rows=$(summary $T/host $T/vm $T/empty)
expect "$rows" "no losses at B=16 " "NOT MET" \
	"5000 tasks counted of 5001 received, no loss counter moved: NOT MET"
v1=$(verdict_of "$rows" "no losses at B=1 ") v256=$(verdict_of "$rows" "no losses at B=256 ")
[ "$v1" = "NO DATA" ] && [ "$v256" = "NOT MET" ]
ok $? "npusim's count missing: NO DATA; a loss counter moved: NOT MET"

exit $failed
