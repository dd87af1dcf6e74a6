#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The demo's workloads seen through trace and top, in the VM (run_vm.sh).

steptime loaded with its BPF program on npusim; then
  1. examples/acl_steps --strict (CANN's flow, stream marks): `steptime
     trace` parses as Chrome Trace Event JSON, and its host and device step
     spans equal `steptime stat -o json` (start, length, device time);
  2. examples/torch_like.py running: `steptime top` in a tmux pane shows its
     process, and its step count grows while it runs (capture-pane, polled
     on screen state).
Prints TAP.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
O = os.environ.get("O", "build")
O = O if os.path.isabs(O) else os.path.join(ROOT, O)
CLI = os.path.join(O, "steptime")
PIN = "/sys/fs/bpf/steptime_obsdemo"
SOCK = "steptime_obsdemo"

n = 0
failed = False


def ok(cond, name, why=""):
    global n, failed
    n += 1
    failed |= not cond
    print("%s %d %s%s" % ("ok" if cond else "not ok", n, name,
                          "" if cond or not why else " # " + why))
    sys.stdout.flush()


def sh(*args, check=True, **kw):
    p = subprocess.run(args, capture_output=True, text=True, timeout=300, **kw)
    if check and p.returncode:
        raise RuntimeError("%s: exit %d: %s%s" % (args, p.returncode, p.stdout, p.stderr))
    return p


def wait_for(what, fn, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = fn()
        if v:
            return v
        time.sleep(0.1)
    raise TimeoutError(what)


def trace_vs_stat(tmp):
    env = dict(os.environ, STEPTIME_PIN_DIR=PIN)
    p = sh(os.path.join(O, "examples", "acl_steps"), "--strict", os.path.join(tmp, "acl"),
           env=env)
    pid = [s["pid"] for s in json.loads(sh(CLI, "stat", "--pin", PIN, "-o", "json").stdout)]
    assert pid, "no steps: " + p.stdout
    out = os.path.join(tmp, "trace.json")
    sh(CLI, "trace", "--pin", PIN, "--output", out)
    tr = json.load(open(out))
    stat = json.loads(sh(CLI, "stat", "--pin", PIN, "-o", "json").stdout)
    spans = {}
    for e in tr["traceEvents"]:
        if e["ph"] == "X":
            spans[(e["cat"], e["pid"], e["args"]["step"]["index_id"])] = e
    done = [s for s in stat if s["state"] == "done"]
    assert len(done) >= 3, stat
    for s in done:
        h = spans[("host_step", s["pid"], s["index_id"])]
        assert round(h["ts"] * 1000) == s["host_start_ns"], (h, s)
        assert round(h["dur"] * 1000) == s["host_time_ns"], (h, s)
        # The host span's args: the step's stat record, its phases beside it
        # (only where it has some: trace keeps its counters).
        phases = s.pop("phases", [])
        assert h["args"]["step"] == s, (h, s)
        assert h["args"].get("phases", []) == phases, (h, phases)
        assert s["device_time_ns"], s
        d = spans[("device_step", s["pid"], s["index_id"])]
        assert round(d["dur"] * 1000) == s["device_time_ns"], (d, s)
    return len(done)


def tmux(*args, check=True):
    return sh("tmux", "-L", SOCK, *args, check=check)


def top_live():
    env = dict(os.environ, STEPTIME_PIN_DIR=PIN, STEPTIME_LIB=os.path.join(O, "libsteptime.so"),
               PYTHONPATH=os.path.join(ROOT, "python"))
    work = subprocess.Popen([sys.executable, os.path.join(ROOT, "examples", "torch_like.py"),
                             "--steps", "100000"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        os.environ.setdefault("TERM", "xterm")
        tmux("new-session", "-d", "-x", "200", "-y", "30", "-s", "top",
             "%s top --pin %s --interval 500ms" % (CLI, PIN))

        def steps():     # the STEP column: its highest step id
            for line in tmux("capture-pane", "-p", "-t", "top").stdout.splitlines():
                f = line.split()
                if f and f[0] == str(work.pid):
                    return int(f[3])
            return 0
        first = wait_for("top to show the workload", steps, 120)
        wait_for("its step count to grow on screen", lambda: steps() > first + 2, 120)
        screen = tmux("capture-pane", "-p", "-t", "top").stdout
        print("\n".join("# " + l for l in screen.splitlines() if l.strip()))
        return True
    finally:
        tmux("kill-server", check=False)
        work.kill()
        work.wait()


def main():
    print("TAP version 13")
    print("1..2")
    tmp = tempfile.mkdtemp(prefix="steptime_obsdemo_")
    sh(CLI, "unload", "--pin", PIN, check=False)
    sh(CLI, "load", "--pin", PIN, "--mode", "0666")
    try:
        for name, fn in (("trace of acl_steps equals stat", lambda: trace_vs_stat(tmp)),
                         ("top shows torch_like.py live (tmux)", top_live)):
            try:
                fn()
                ok(True, name)
            except Exception as e:
                ok(False, name, "%s: %s" % (type(e).__name__, e))
    finally:
        sh(CLI, "unload", "--pin", PIN, check=False)
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
