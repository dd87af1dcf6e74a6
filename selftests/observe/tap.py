# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""What steptime's Python tests share: TAP lines, commands, polling.

Used by selftests/observe/test_observe.py, slow_rank_vm.py, cluster_vm.py
and selftests/deploy/test_deploy.py (which puts this directory on its path).
"""
import os
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
O = os.environ.get("O", "build")
O = O if os.path.isabs(O) else os.path.join(ROOT, O)
CLI = os.path.join(O, "steptime")
KSFT_SKIP = 4

results = []
skipped = []


def line(ok_, name, why=""):
    """Print one TAP result line and count it."""
    results.append(ok_)
    print("%s %d %s%s" % ("ok" if ok_ else "not ok", len(results), name,
                          " # " + why if why else ""))
    sys.stdout.flush()


def ok(cond, name, why=""):
    """A check: @why is said only when it fails."""
    line(bool(cond), name, "" if cond else why)


def tap(name, fn):
    """Run a test function: ok, not ok on any exception (said as TAP
    comments), or SKIP with the reason it returned as a string."""
    try:
        r = fn()
    except Exception as e:  # a failed assertion or a crash: not ok
        for s in ("%s: %s" % (type(e).__name__, e)).splitlines():
            print("# " + s)
        line(False, name)
        return
    if isinstance(r, str):
        skipped.append(name)
        line(True, name, "SKIP " + r)
    else:
        line(True, name)


def note(msg):
    print("# " + msg)
    sys.stdout.flush()


def status():
    """The exit status of a run: 1 when a test failed, or when none ran or
    every one skipped (nothing was tested)."""
    if not results or len(skipped) == len(results):
        note("no test ran, or every test skipped: nothing tested")
        return 1
    return 0 if all(results) else 1


def run(*args, check=True, timeout=120, **kw):
    """A command's CompletedProcess (text); AssertionError when it fails
    and @check."""
    p = subprocess.run(args, capture_output=True, text=True, timeout=timeout, **kw)
    if check and p.returncode != 0:
        raise AssertionError("%s: exit %d: %s%s" % (args, p.returncode, p.stdout, p.stderr))
    return p


def wait_for(what, fn, timeout=60.0, every=0.1):
    """Poll fn() until it returns a true value (state, never a fixed sleep);
    its exceptions mean "not yet"."""
    end = time.monotonic() + timeout
    last = None
    while time.monotonic() < end:
        try:
            v = fn()
            if v:
                return v
        except Exception as e:  # not ready yet
            last = e
        time.sleep(every)
    raise AssertionError("timed out waiting for %s (last: %r)" % (what, last))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port
