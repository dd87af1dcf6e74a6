#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Table 10: the cost of `with steptime.step(): pass` in Python, against two
time.monotonic_ns() calls timed in the same round, in the same process.

    bench/python.py -r ROUNDS -e ENV -o FILE      (bench/run.sh, as root)

steptime is loaded as bench_mark loads it (on /dev/null, tp_btf, at a
private pin directory, no library probed), by `$STEPTIME_CLI load`; each
row's process then marks with the source tree's module and $O's
libsteptime, through the C extension or through ctypes
(STEPTIME_PY_CTYPES=1). The not-loaded rows (a pin directory that is not
there: every mark fails with -ENODEV, fast) time the binding alone.
Debian's python3 ($PYTHON).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PIN = "/sys/fs/bpf/steptime-bench-py"
N_C = 200000
N_CTYPES = 20000


def child(rounds):
    """One process's rounds: [(two monotonic_ns, step), ...] in ns."""
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import steptime
    mono = time.monotonic_ns
    clock = time.perf_counter_ns
    step = steptime.step
    n = N_C if steptime.IMPL == "c" else N_CTYPES
    with step() as s:           # the first mark opens the map
        pass
    out = []
    for _ in range(rounds):
        t = clock()
        for _ in range(n):
            mono()
            mono()
        base = (clock() - t) / n
        t = clock()
        for _ in range(n):
            with step():
                pass
        out.append((base, (clock() - t) / n))
    print(json.dumps({"impl": steptime.IMPL, "errors": s.errors,
                      "rounds": out}))


def run_child(rounds, env):
    e = dict(os.environ, STEPTIME_QUIET="1",
             STEPTIME_LIB=os.path.join(ROOT, os.environ.get("O", "build"),
                                       "libsteptime.so.1"))
    e.pop("STEPTIME_PY_CTYPES", None)
    e.update(env)
    py = os.environ.get("PYTHON") or "/usr/bin/python3"
    p = subprocess.run([py, os.path.abspath(__file__), "--child",
                        "-r", str(rounds)], env=e, stdout=subprocess.PIPE,
                       check=True, universal_newlines=True)
    return json.loads(p.stdout)


def cli(*args):
    c = os.environ.get("STEPTIME_CLI") or os.path.join(
        ROOT, os.environ.get("O", "build"), "steptime")
    return subprocess.run([c] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True)


def row(what, rounds, note, base=False):
    steps = [r[1] for r in rounds]
    ratios = sorted(r[1] / r[0] for r in rounds)
    if base:
        steps = [r[0] for r in rounds]
        ratios = [1.0]
    return "| %s | %.1f | %.1f | %.1f | ns/op | %.2fx [%.2f, %.2f] | %s |" % (
        what, statistics.median(steps), min(steps), max(steps),
        statistics.median(ratios), ratios[0], ratios[-1], note)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-r", type=int, default=7)
    ap.add_argument("-e", default="host")
    ap.add_argument("-o")
    ap.add_argument("--child", action="store_true")
    a = ap.parse_args()
    if a.child:
        child(a.r)
        return 0
    cli("unload", "--pin", PIN)
    ld = cli("load", "--device", "/dev/null", "--attach", "tp_btf",
             "--freq", "1000000000", "--stars", "1", "--pin", PIN)
    loaded = ld.returncode == 0
    try:
        res = {}
        for impl, env in (("c", {}), ("ctypes", {"STEPTIME_PY_CTYPES": "1"})):
            if loaded:
                res[impl, 1] = run_child(a.r, dict(env, STEPTIME_PIN_DIR=PIN))
            res[impl, 0] = run_child(a.r, dict(
                env, STEPTIME_PIN_DIR="/nonexistent/steptime-bench-py"))
    finally:
        if loaded:
            cli("unload", "--pin", PIN)
    for (impl, ld_), r in res.items():
        if r["impl"] != impl or bool(r["errors"]) == bool(ld_):
            print("bench/python.py: %s, loaded %d: ran %s, errors %s"
                  % (impl, ld_, r["impl"], r["errors"]), file=sys.stderr)
            return 1
    lines = ["", "### 10. Python: `with steptime.step():` (%s)" % a.e, "",
             "ns per step (two marks); ratio to two time.monotonic_ns() calls "
             "timed in the same round and process (Debian's python3; "
             "steptime loaded on /dev/null in tp_btf mode, no library "
             "probed).", "",
             "| what | median | min | max | unit | ratio to two "
             "time.monotonic_ns(): median [min, max] | note |",
             "| --- | ---: | ---: | ---: | --- | --- | --- |",
             row("two time.monotonic_ns() calls (baseline)",
                 res["c", int(loaded)]["rounds"],
                 "the first C row's process; each row's ratio is to its own",
                 base=True)]
    what = {"c": "C extension (steptime._steptime)",
            "ctypes": "ctypes (STEPTIME_PY_CTYPES=1)"}
    for ld_ in (1, 0):
        for impl in ("c", "ctypes"):
            if (impl, ld_) not in res:
                lines.append("| with steptime.step(): %s, loaded | n/a | | | "
                             "| | steptime load failed: %s |"
                             % (what[impl], ld.stdout.strip()[-200:]))
                continue
            lines.append(row("with steptime.step(): %s, %s" % (
                what[impl], "loaded" if ld_ else "not loaded"),
                res[impl, ld_]["rounds"],
                "" if ld_ else "every mark fails fast (-ENODEV, kept in "
                ".errors): the binding's cost"))
    out = "\n".join(lines) + "\n"
    if a.o:
        with open(a.o, "a") as f:
            f.write(out)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
