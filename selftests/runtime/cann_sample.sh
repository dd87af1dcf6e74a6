#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# CANN's profiling-sample build against the ASCEND_HOME_PATH that
# `make install-ascend` lays out (both made by `make`: build/ascend and
# build/cann_sample, runtime/Build.mk), run in the VM with npusim loaded:
# our own programs making the calls of 0_create_config and 1_msproftx
# (selftests/runtime/cann_sample/), built with CMake as those samples
# build, run to their "-------- End --------" line; the step of the
# msproftx-like one is in `steptime stat -o json`. Prints TAP.
set -uo pipefail
cd "$(dirname "$(readlink -f "$0")")/../.." || exit 1
O=${O:-build}
A=$PWD/$O/ascend
B=$PWD/$O/cann_sample
PIN=/sys/fs/bpf/steptime_cann_sample
T=$(mktemp -d)
n=0

ok() {	# status name
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; fi
}

echo "TAP version 13"
echo "1..5"
r=0
for f in include/acl/acl.h include/acl/acl_prof.h lib64/libascendcl.so \
	 lib64/libmsprofiler.so lib64/libprofapi.so bin/setenv.bash; do
	[ -e "$A/$f" ] || { echo "# missing $A/$f"; r=1; }
done
ok $r "make install-ascend laid out what CANN's samples expect"
[ -x "$B/msproftx_like" ] && [ -x "$B/create_config_like" ]
ok $? "the samples' CMake build against it"

$O/steptime unload --pin $PIN >/dev/null 2>&1
if ! $O/steptime load --pin $PIN >$T/load.log 2>&1; then
	cat $T/load.log
	echo "Bail out! steptime load failed"
	exit 1
fi
run() {	# program
	# shellcheck disable=SC1091
	( unset LD_LIBRARY_PATH; source "$A/bin/setenv.bash" && cd $T &&
	  STEPTIME_PIN_DIR=$PIN "$B/$1" $T/out ) >$T/$1.log 2>&1
	local r=$?
	[ $r = 0 ] && [ "$(tail -1 $T/$1.log)" = "-------- End --------" ] ||
		{ cat $T/$1.log; return 1; }
}
run create_config_like
ok $? "0_create_config-like runs to its End line"
run msproftx_like
ok $? "1_msproftx-like runs to its End line"

pid=$(sed -n 's/^pid \([0-9]*\)$/\1/p' $T/msproftx_like.log)
$O/steptime stat --pin $PIN -p "${pid:-0}" -o json >$T/stat.json 2>&1
python3 - $T/stat.json <<'PY'
import json, sys
steps = json.load(open(sys.argv[1]))
assert len(steps) == 1, steps
s = steps[0]
assert s["state"] == "done", s
assert s["stream"] is not None, s
assert s["host_time_ns"] >= 400e6, s
# Its msproftx marks and ranges, as the step's phases.
ph = {p["name"]: p for p in s["phases"]}
assert set(ph) == {"load_mark", "outer_push", "prepare_range", "inner_push",
                   "exec_mark"}, s["phases"]
assert ph["outer_push"]["host_ns"] >= 400e6, ph
assert ph["prepare_range"]["host_ns"] >= 100e6, ph
assert ph["inner_push"]["host_ns"] >= 100e6, ph
assert ph["load_mark"]["count"] == 1 and ph["load_mark"]["host_ns"] == 0, ph
PY
r=$?; [ $r = 0 ] || cat $T/stat.json
ok $r "its step and its ranges in steptime stat -o json (done, on its stream)"

$O/steptime unload --pin $PIN >/dev/null 2>&1
rm -rf $T
