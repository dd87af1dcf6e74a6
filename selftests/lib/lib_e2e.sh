#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# libsteptime end to end on npusim (run in the VM by selftests/run_vm.sh,
# npusim loaded): steptime loaded with its BPF program, then
#   - examples/acl_steps --strict: CANN's flow, stream marks through the HAL;
#     aclprofStop's CSV/JSON must hold the 3 steps (2, 4, 6 tasks), done,
#     with the stream id and a device time;
#   - steptime stat -p PID -o json sees the same steps;
#   - steptime record --count 3 streams them while they run;
#   - examples/torch_like.py (Python binding, HAL through ctypes);
#   - selftests/lib/acl_local.py: the ACL runtime loaded RTLD_LOCAL, device
#     time on every stream step all the same;
#   - an unchanged 12-step PyTorch CPU loop under python3 -m steptime.run:
#     it makes no ioctl on the device, and every step reaches steptime
#     through the ring kick (load --lib);
#   - the same loop importing torch_npu (a stand-in over the ACL runtime,
#     selftests/lib/npu_standin: each module forward a kernel on its
#     current stream): every step marked on that stream, with device time;
#   - the README's first Python example (selftests/lib/torch_step.py):
#     steptime.step() on torch_npu's current stream by default, numbered
#     from a resumed job's index.
# Prints TAP.
set -uo pipefail
cd "$(dirname "$(readlink -f "$0")")/../.." || exit 1
O=${O:-build}
PIN=/sys/fs/bpf/steptime_libtest
T=$(mktemp -d)
# shellcheck source=selftests/tap.sh
. selftests/tap.sh

# Poll STATE (a shell condition) for up to 10 s: waiting on state, not time.
wait_for() {
	local i
	for i in $(seq 200); do
		eval "$1" && return 0
		sleep 0.05
	done
	return 1
}

# run_loop LOG ARGS...: train_cpu.py under python3 -m steptime.run (Debian's
# torch), its output in $T/LOG; $pid is its pid, the status its exit's.
# --npu imports the torch_npu stand-in, whose modules run on npusim.
run_loop() {
	local log=$1
	shift
	PYTHONPATH=python:selftests/lib/npu_standin O=$O \
		STEPTIME_LIB=$O/libsteptime.so.1 /usr/bin/python3 \
		-m steptime.run selftests/lib/train_cpu.py "$@" \
		>$T/$log 2>&1 &
	pid=$!
	wait $pid
}

echo "TAP version 13"
echo "1..14"
$O/steptime unload --pin $PIN >/dev/null 2>&1
if ! $O/steptime load --pin $PIN --lib $O/libsteptime.so.1 >$T/load.log 2>&1; then
	cat $T/load.log
	echo "Bail out! steptime load failed"
	exit 1
fi
export STEPTIME_PIN_DIR=$PIN

$O/steptime record --pin $PIN --count 3 --duration 30s --output $T/rec.jsonl \
	2>$T/rec.err &
rec=$!
# Recording once it holds the ring buffer (map type 27): events from then on.
wait_for 'grep -qs "^map_type:[[:space:]]*27$" /proc/$rec/fdinfo/*' ||
	echo "# steptime record never opened the ring buffer"
$O/examples/acl_steps --strict $T/out >$T/acl.log 2>&1
ok $? "acl_steps --strict (marks reported)"
pid=$(sed -n 's/.*_\([0-9]*\)_1\.\*$/\1/p' $T/acl.log)
csv=$T/out/steptime_step_trace_${pid}_1.csv
json=$T/out/steptime_steps_${pid}_1.json

python3 - "$csv" "$json" >$T/check.log 2>&1 <<'PY'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
steps = json.load(open(sys.argv[2]))
assert [int(r["Tasks"]) for r in rows] == [2, 4, 6], rows
assert all(r["State"] == "done" for r in rows), rows
assert all(r["Stream"] != "" and r["Device Time(us)"] != "" for r in rows), rows
assert [s["tasks"] for s in steps] == [2, 4, 6], steps
assert all(s["device_time_ns"] and s["stream"] is not None for s in steps)
assert all(s["device_time_ns"] >= t * 200000 for s, t in zip(steps, (2, 4, 6)))
PY
r=$?; cat $T/check.log; ok $r "aclprofStop results: 3 done steps, stream, device time"

$O/steptime stat --pin $PIN -p "$pid" -o json >$T/stat.json 2>&1
python3 -c "
import json, sys
s = json.load(open('$T/stat.json'))
assert [x['tasks'] for x in s] == [2, 4, 6], s
" ; ok $? "steptime stat -p PID -o json"
$O/steptime stat --pin $PIN -p "$pid" | grep -q '^PID'
ok $? "steptime stat table"

wait $rec
ok $? "steptime record --count 3 exits"
[ "$(wc -l < $T/rec.jsonl)" = 3 ] && python3 -c "
import json
for l in open('$T/rec.jsonl'): assert json.loads(l)['state'] in ('done', 'incomplete')
"
ok $? "record wrote 3 JSON lines"

STEPTIME_LIB=$O/libsteptime.so.1 python3 examples/torch_like.py --steps 3 \
	>$T/torch.log 2>&1 && grep -q 'on npusim' $T/torch.log &&
	[ "$(grep -c ' done ' $T/torch.log)" = 3 ] &&
	! grep -Eq 'device +0\.0 us' $T/torch.log
r=$?; cat $T/torch.log; ok $r "torch_like.py: 3 done steps on npusim, the last one's device time too (steptime.flush())"

# Ended as a torch_npu script ends: its ACL shut down by a Python atexit
# handler registered before the first step, no flush. The library's own
# flush, registered with the interpreter at the first stream mark, must run
# before it, whether the steps are marked through steptime's Python module
# or through mstx ranges (torch_npu's profiler). 3 done steps, each with
# its device time.
framework_exit() {	# log torch_like.py-options...
	local log=$T/$1 pid
	shift
	STEPTIME_LIB=$O/libsteptime.so.1 python3 examples/torch_like.py \
		--steps 3 --framework-exit "$@" >$log 2>&1
	pid=$(sed -n 's/^torch_like: pid \([0-9]*\), 3 steps on npusim.*/\1/p' $log)
	$O/steptime stat --pin $PIN -p "${pid:-0}" -o json >$log.json 2>&1
	python3 - $log.json >>$log 2>&1 <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
assert [x["state"] for x in s] == ["done"] * 3, s
assert all(x["device_time_ns"] for x in s), [x["device_time_ns"] for x in s]
PY
	r=$?
	cat $log
	return $r
}
framework_exit torch_exit.log
ok $? "torch_like.py --framework-exit: every step's device time, the last one's too, with ACL shut down by the framework's atexit"
framework_exit torch_prof.log --profiler
ok $? "torch_like.py --framework-exit --profiler (mstx ranges): the same"

O=$O STEPTIME_LIB=$O/libsteptime.so.1 /usr/bin/python3 \
	selftests/lib/acl_local.py >$T/local.log 2>&1
r=$?; cat $T/local.log; ok $r "acl_local.py: ACL runtime loaded RTLD_LOCAL, device time on every stream step"

# Debian's torch (/usr/bin/python3); the loop knows nothing of steptime.
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
	run_loop cpu.log --steps 12
	r=$?
	$O/steptime stat --pin $PIN -p $pid -o json >$T/cpu.json 2>>$T/cpu.log
	[ $r = 0 ] && python3 - $T/cpu.json >>$T/cpu.log 2>&1 <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
assert len(s) == 12, [x["index_id"] for x in s]
assert all(x["state"] == "done" for x in s), [x["state"] for x in s]
PY
	r=$?; cat $T/cpu.log; ok $r "python3 -m steptime.run, a 12-step CPU loop with no ioctl: 12 done steps"
else
	echo "ok $((n += 1)) # SKIP no torch for /usr/bin/python3"
fi

# With torch_npu imported, steptime.run marks on its current stream: 8
# steps, each done on a stream, with the device time of its 4 forwards'
# kernels (2 tasks of 100 us each).
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
	run_loop npu.log --steps 8 --npu
	r=$?
	$O/steptime stat --pin $PIN -p $pid -o json >$T/npu.json 2>>$T/npu.log
	[ $r = 0 ] && ! grep -q 'host marks only' $T/npu.log &&
		python3 - $T/npu.json >>$T/npu.log 2>&1 <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print("# device_time_ns", [x["device_time_ns"] for x in s])
assert len(s) == 8, [x["index_id"] for x in s]
assert all(x["state"] == "done" for x in s), [x["state"] for x in s]
assert all(x["stream"] is not None for x in s), [x["stream"] for x in s]
assert all((x["device_time_ns"] or 0) >= 8 * 100000 for x in s), s
PY
	r=$?; cat $T/npu.log; ok $r "python3 -m steptime.run, the loop with torch_npu: 8 steps on its current stream, each with device time"
else
	echo "ok $((n += 1)) # SKIP no torch for /usr/bin/python3"
fi

# steptime.step() with no stream, torch_npu imported: its current stream.
# Steps numbered from 10000 (a resumed job), each with its 4 forwards'
# device time (2 tasks of 100 us each per forward: see npu_standin).
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
	PYTHONPATH=python:selftests/lib/npu_standin O=$O \
		STEPTIME_LIB=$O/libsteptime.so.1 /usr/bin/python3 \
		selftests/lib/torch_step.py 3 10000 >$T/step.log 2>&1 &
	pid=$!
	wait $pid
	r=$?
	$O/steptime stat --pin $PIN -p $pid -o json >$T/step.json 2>>$T/step.log
	[ $r = 0 ] && ! grep -q StepTimeWarning $T/step.log &&
		python3 - $T/step.json >>$T/step.log 2>&1 <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print("# index_id", [x["index_id"] for x in s],
      "device_time_ns", [x["device_time_ns"] for x in s])
assert [x["index_id"] for x in s] == [10000, 10001, 10002], s
assert all(x["state"] == "done" for x in s), [x["state"] for x in s]
assert all(x["stream"] is not None for x in s), [x["stream"] for x in s]
assert all((x["device_time_ns"] or 0) >= 2 * 2 * 100000 for x in s), s
PY
	r=$?; cat $T/step.log; ok $r "steptime.step() with torch_npu imported: its current stream by default, device time, index= kept"
else
	echo "ok $((n += 1)) # SKIP no torch for /usr/bin/python3"
fi

# The same loop under load --journal: its mapped SQ's sends counted from
# libsteptime's journal, which the library begins only once it patched the
# runtime (loaded after it, by Python): the driver's count then is the
# journal's start. 40 steps, each as `steptime record` streams it when it
# finishes (16 records are kept per process), exact and done: the tasks
# the HAL's probes counted per step in the run above, an independent
# record. The loop synchronizes only at its end; its runtime reads the
# SQ's head every 64 tasks (8 steps), short of the tail: those heads
# complete the steps before them, else the journal's 32 pending segments
# per SQ (2 a step) would fill and flag the oldest.
if /usr/bin/python3 -c 'import torch' 2>/dev/null && [ -s $T/npu.json ]; then
	$O/steptime unload --pin $PIN >/dev/null 2>&1
	$O/steptime load --pin $PIN --lib $O/libsteptime.so.1 --journal \
		>$T/jload.log 2>&1
	r=$?
	$O/steptime record --pin $PIN --count 40 --duration 120s \
		--output $T/jrec.jsonl 2>$T/jrec.err &
	rec=$!
	wait_for 'grep -qs "^map_type:[[:space:]]*27$" /proc/$rec/fdinfo/*' ||
		echo "# steptime record never opened the ring buffer"
	run_loop jnpu.log --steps 40 --npu
	[ $r = 0 ] && r=$?
	wait $rec
	[ $r = 0 ] && r=$?
	[ $r = 0 ] && python3 - $T/npu.json $T/jrec.jsonl $pid >>$T/jnpu.log 2>&1 <<'PY'
import json, sys
probed = json.load(open(sys.argv[1]))
s = [json.loads(l) for l in open(sys.argv[2])]
s = [x for x in s if x["pid"] == int(sys.argv[3])]
print("# tasks", [x["tasks"] for x in s], "probed", [x["tasks"] for x in probed])
want = {x["tasks"] for x in probed}
assert len(want) == 1 and None not in want, want
assert sorted(x["index_id"] for x in s) == list(range(1, 41)), s
for x in s:
    assert x["tasks"] in want and x["state"] == "done", x
    # Counted per step: no per-task figure reads as measured (F_JOURNAL).
    assert x["flags"] & 2048 and x["errors"] is None, x
    assert x["first_submit_ns"] is None and x["lat_p50_ns"] is None, x
PY
	r=$?; cat $T/jload.log $T/jrec.err $T/jnpu.log
	ok $r "python3 -m steptime.run under load --journal: 40 steps, every one exact and done"
else
	echo "ok $((n += 1)) # SKIP no torch for /usr/bin/python3"
fi

$O/steptime unload --pin $PIN >/dev/null 2>&1
rm -rf $T
exit $failed
