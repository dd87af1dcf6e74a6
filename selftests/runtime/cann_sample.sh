#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# CANN's profiling-sample build against the ASCEND_HOME_PATH that
# `make install-ascend` lays out (both made by `make`: build/ascend and
# build/cann_sample, sim/runtime/Build.mk), run in the VM with npusim
# loaded: our own programs making the calls of 0_create_config and
# 1_msproftx (selftests/runtime/cann_sample/), in the samples' order, each
# return checked as the samples check it (exit on any non-zero one). They
# must run to their "-------- End --------" line however steptime comes
# in and whatever it can do there (issue 25: steptime never breaks the
# app):
#   - link: built with CMake as those samples build, libmsprofiler.so being
#     libsteptime;
#   - preload: linked against a stand-in for CANN's profiling library
#     (selftests/lib/fake_cann.c, answering as CANN does with profiling
#     working) and run with LD_PRELOAD=libsteptime.so.1;
# each with steptime loaded, loaded but its maps unreadable (a non-root
# user, in the device's group as HwHiAiUser is), and not loaded. Loaded,
# the step of the msproftx-like one is in `steptime stat -o json`. TAP.
set -uo pipefail
cd "$(dirname "$(readlink -f "$0")")/../.." || exit 1
O=${O:-build}
A=$PWD/$O/ascend
B=$PWD/$O/cann_sample
P=$PWD/$O/cann_sample_preload
LIB=$PWD/$O/libsteptime.so.1
PIN=/sys/fs/bpf/steptime_cann_sample
T=$(mktemp -d)
# shellcheck source=selftests/tap.sh
. selftests/tap.sh

echo "TAP version 13"
echo "1..16"
r=0
for f in include/acl/acl.h include/acl/acl_prof.h lib64/libascendcl.so \
	 lib64/libmsprofiler.so lib64/libprofapi.so bin/setenv.bash; do
	[ -e "$A/$f" ] || { echo "# missing $A/$f"; r=1; }
done
ok $r "make install-ascend laid out what CANN's samples expect"
[ -x "$B/msproftx_like" ] && [ -x "$B/create_config_like" ] &&
	[ -x "$P/msproftx_like" ] && [ -x "$P/create_config_like" ]
ok $? "the samples' CMake build against it, and the build against CANN's library"

$O/steptime unload --pin $PIN >/dev/null 2>&1
# Loaded as on a CANN host, setenv.bash sourced: the HAL probes go on the
# driver's library the linked samples map ($A's) and on the build tree's
# (run_vm.sh's $LD_LIBRARY_PATH) the preloaded ones map, whose SQs only
# those probes see in npusim's default modes.
# shellcheck disable=SC1091
if ! ( source "$A/bin/setenv.bash" && $O/steptime load --pin $PIN ) \
	>$T/load.log 2>&1; then
	cat $T/load.log
	echo "Bail out! steptime load failed"
	exit 1
fi
# A user the maps' mode (0600 root) denies, in the device node's group.
chmod 755 $T
nobody=(setpriv --reuid=65534 --regid=65534
	--groups="$(stat -c %g /dev/npusim_manager)")

run() {	# link|preload loaded|nobody|unloaded program (as $log)
	local mode=$1 prog=$3 d=$T/$1-$2-$3 as=() r
	log=$d.log
	mkdir -m 777 $d
	[ "$2" = nobody ] && as=("${nobody[@]}")
	if [ "$mode" = link ]; then
		# shellcheck disable=SC1091
		( unset LD_LIBRARY_PATH; source "$A/bin/setenv.bash" && cd $d &&
		  "${as[@]}" env STEPTIME_PIN_DIR=$PIN "$B/$prog" $d/out ) >$log 2>&1
	else
		( cd $d && "${as[@]}" env FAKE_CANN_OK=1 LD_PRELOAD=$LIB \
		  STEPTIME_PIN_DIR=$PIN "$P/$prog" $d/out ) >$log 2>&1
	fi
	r=$?
	[ $r = 0 ] && [ "$(tail -1 $log)" = "-------- End --------" ] ||
		{ echo "# exit $r"; sed 's/^/# /' $log; return 1; }
}
state() {	# loaded|nobody|unloaded description
	local mode prog
	for mode in link preload; do
		for prog in create_config_like msproftx_like; do
			run $mode $1 $prog
			ok $? "$mode, $2: ${prog%_like}-like runs to its End line"
			[ "$1/$mode/$prog" = loaded/link/msproftx_like ] && cp $log $T/stat.log
		done
	done
}

state loaded "steptime loaded"
pid=$(sed -n 's/^pid \([0-9]*\)$/\1/p' $T/stat.log)
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
ok $r "link, steptime loaded: its step and its ranges in steptime stat -o json (done, on its stream)"

# The state said: the maps there, this user denied them.
"${nobody[@]}" $O/steptime stat --pin $PIN >$T/denied.log 2>&1
[ $? = 1 ] && grep -q 'permission denied' $T/denied.log
r=$?; [ $r = 0 ] || sed 's/^/# /' $T/denied.log
ok $r "uid 65534 is denied steptime's maps (the state tested next)"
state nobody "steptime loaded, its maps unreadable (uid 65534)"
$O/steptime unload --pin $PIN >/dev/null 2>&1
state unloaded "steptime not loaded"
rm -rf $T
exit $failed
