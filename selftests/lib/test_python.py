#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The Python binding without steptime loaded: constants, CANN semantics
and codes, the native step context manager, the reader's error, the JSON
conversion of a record. step() is the C extension's (the build's
$O/python/steptime) unless STEPTIME_PY_CTYPES=1: both run these tests
(lib/Build.mk). Prints TAP through unittest's result."""
import contextlib
import ctypes
import errno
import os
import sys
import subprocess
import tempfile
import types
import unittest
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "python"))
os.environ["STEPTIME_PIN_DIR"] = "/nonexistent/steptime-pytest"
os.environ["STEPTIME_QUIET"] = "1"
import steptime  # noqa: E402


@contextlib.contextmanager
def stand_in(name, fn):
    """steptime.<name> (_mark or _step_mark) replaced by @fn, as a C
    function: the ctypes step() and the extension's both call it."""
    real = getattr(steptime, name)
    cb = ctypes.CFUNCTYPE(real.restype, *real.argtypes)(fn)
    setattr(steptime, name, cb)
    steptime._bind()
    try:
        yield
    finally:
        setattr(steptime, name, real)
        steptime._bind()


class TestPython(unittest.TestCase):
    def test_the_step_asked_for(self):
        want = "ctypes" if os.environ.get("STEPTIME_PY_CTYPES") == "1" else "c"
        self.assertEqual(steptime.IMPL, want)
        self.assertEqual(steptime.step is steptime._py_step, want == "ctypes")

    def test_constants(self):
        self.assertEqual(steptime.ACL_ERROR_GE_FAILURE, 500002)
        self.assertEqual(steptime.ACL_ERROR_PROF_NOT_RUN, 100043)
        self.assertEqual(steptime.ACL_PROF_MSPROFTX, 0x80)
        self.assertEqual(steptime.ACL_STEP_END, 1)

    def test_acl_flags_and_codes(self):
        info = steptime.create_step_info()
        self.assertTrue(info)
        first = steptime.step_info_index_id(info)
        self.assertGreaterEqual(first, 1)
        other = steptime.create_step_info()
        self.assertEqual(steptime.step_info_index_id(other), first + 1)
        self.assertEqual(steptime.get_step_timestamp(None, 0),
                         steptime.ACL_ERROR_INVALID_PARAM)
        self.assertEqual(steptime.get_step_timestamp(info, 0),
                         steptime.ACL_ERROR_GE_FAILURE)
        self.assertEqual(steptime.get_step_timestamp(info, 0),
                         steptime.ACL_ERROR_INVALID_PARAM)
        self.assertEqual(steptime.get_step_timestamp(info, 60000),
                         steptime.ACL_ERROR_GE_FAILURE)
        self.assertEqual(steptime.get_step_timestamp(info, 1),
                         steptime.ACL_ERROR_INVALID_PARAM)
        steptime.set_step_info_index_id(other, 4242)
        self.assertEqual(steptime.step_info_index_id(other), 4242)
        steptime.destroy_step_info(info)
        steptime.destroy_step_info(info)        # reported, not a crash
        self.assertEqual(steptime.get_step_timestamp(info, 1),
                         steptime.ACL_ERROR_INVALID_PARAM)
        steptime.destroy_step_info(other)

    def test_session_codes(self):
        with tempfile.TemporaryDirectory() as d:
            cfg = steptime.prof_create_config()
            self.assertTrue(cfg)
            self.assertEqual(steptime.prof_start(cfg),
                             steptime.ACL_ERROR_UNINITIALIZE)
            self.assertEqual(steptime.prof_init(d), 0)
            self.assertEqual(steptime.prof_init(d),
                             steptime.ACL_ERROR_REPEAT_INITIALIZE)
            self.assertEqual(steptime.prof_stop(cfg),
                             steptime.ACL_ERROR_PROF_NOT_RUN)
            self.assertEqual(steptime.prof_start(cfg), 0)
            self.assertEqual(steptime.prof_start(cfg),
                             steptime.ACL_ERROR_PROF_ALREADY_RUN)
            self.assertEqual(steptime.prof_stop(cfg), 0)
            self.assertEqual(steptime.prof_destroy_config(cfg), 0)
            self.assertEqual(steptime.prof_finalize(), 0)
            self.assertTrue(any(f.endswith(".csv") for f in os.listdir(d)))
        self.assertIsNone(steptime.prof_create_config(
            devices=(), data_types=steptime.ACL_PROF_ACL_API))

    def test_step_context_never_raises(self):
        with steptime.step() as s:
            pass
        self.assertEqual(s.errors, [-errno.ENODEV, -errno.ENODEV])
        with self.assertRaises(OSError):
            with steptime.step(strict=True):
                pass
        self.assertEqual(steptime.mark(1, 0), -errno.ENODEV)

    def test_failures_warned_once(self):
        # A fresh process: the first failed mark is said once on stderr.
        env = dict(os.environ)
        env.pop("STEPTIME_QUIET")
        code = ("import steptime\n"
                "for i in range(3):\n"
                "    with steptime.step() as s: pass\n"
                "assert len(s.errors) == 2, s.errors\n")
        p = subprocess.run([sys.executable, "-c", code], env=env,
                           stderr=subprocess.PIPE, universal_newlines=True,
                           cwd=os.path.dirname(steptime.__file__) + "/..")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr.count("StepTimeWarning"), 1, p.stderr)
        self.assertIn("No such device", p.stderr)
        # ... and through warnings, as a StepTimeWarning.
        saved, steptime._warned = steptime._warned, False
        os.environ.pop("STEPTIME_QUIET")
        try:
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                with steptime.step():
                    pass
                with steptime.step():
                    pass
        finally:
            os.environ["STEPTIME_QUIET"] = "1"
            steptime._warned = saved
        self.assertEqual([x.category for x in w], [steptime.StepTimeWarning])

    def test_step_index_given(self):
        seen = []
        with stand_in("_mark", lambda i, tag, o: seen.append((i, tag)) or 0):
            with steptime.step(index=10000) as s:
                pass
        self.assertEqual(s.index_id, 10000)
        self.assertEqual(seen, [(10000, steptime.TAG_START),
                                (10000, steptime.TAG_END)])
        for bad in (0, -1, 1 << 64):
            with self.assertRaises(ValueError):
                steptime.Step(bad)

    def test_default_stream_is_torch_npus(self):
        # The stream object torch_npu.npu.current_stream() returns, whose
        # .npu_stream is the aclrtStream (see selftests/lib/npu_standin).
        npu = types.SimpleNamespace(current_stream=lambda: types.
                                    SimpleNamespace(npu_stream=0x5000))
        seen = []
        mark = stand_in("_step_mark", lambda p, tag, o: seen.append(
            o[0].stream if o else None) or 0)
        sys.modules["torch_npu"] = types.SimpleNamespace(npu=npu)
        try:
            mark.__enter__()
            with steptime.step():
                pass
            with steptime.step(stream=steptime.HOST):
                pass
            with steptime.step(stream=None):
                pass
            del sys.modules["torch_npu"]
            with steptime.step():
                pass
        finally:
            mark.__exit__(None, None, None)
            sys.modules.pop("torch_npu", None)
        self.assertEqual(seen, [0x5000] * 2 + [None] * 6)

    def test_body_raises_strict_end(self):
        # A body that raises: START only; a failed END with strict=True:
        # OSError, the error kept in .errors.
        seen = []
        with stand_in("_step_mark", lambda p, tag, o: seen.append(tag) or 0):
            with self.assertRaises(KeyError):
                with steptime.step():
                    raise KeyError("body")
        self.assertEqual(seen, [steptime.TAG_START])
        with stand_in("_step_mark", lambda p, tag, o: -errno.EIO * tag):
            with self.assertRaises(OSError) as cm:
                with steptime.step(strict=True) as s:
                    pass
        self.assertEqual(cm.exception.errno, errno.EIO)
        self.assertEqual(s.errors, [-errno.EIO])
        self.assertEqual(s.mark(steptime.TAG_START), -errno.ENODEV)

    def test_star_import_shadows_no_builtin(self):
        ns = {}
        exec("from steptime import *", ns)
        import builtins
        clash = [n for n in steptime.__all__ if hasattr(builtins, n)]
        self.assertEqual(clash, [])
        self.assertTrue(all(n in ns for n in steptime.__all__))
        self.assertTrue(callable(steptime.range))

    def test_steps_not_loaded(self):
        with self.assertRaises(OSError) as cm:
            steptime.steps()
        self.assertEqual(cm.exception.errno, errno.ENOENT)

    def test_record_to_dict(self):
        st = steptime.StepStats(tgid=10, ns_tgid=3, index_id=5,
                                stream=steptime.STREAM_NONE, state=1,
                                flags=0x3, host_start_ns=100,
                                host_end_ns=350)
        d = steptime._stats_dict(st)
        self.assertEqual(d["pid"], 10)
        self.assertEqual(d["ns_pid"], 3)
        self.assertIsNone(d["stream"])
        self.assertEqual(d["state"], "done")
        self.assertEqual(d["host_time_ns"], 250)
        self.assertIsNone(d["device_time_ns"])
        self.assertIsNone(d["lat_p50_ns"])
        self.assertEqual(ctypes.sizeof(st), 296)

    def test_phases_of_a_step(self):
        with tempfile.TemporaryDirectory() as d:
            os.environ["STEPTIME_PHASE_DIR"] = d
            with steptime.step() as s:
                with steptime.range("load"):
                    pass
                with steptime.range("load"):
                    pass
                self.assertEqual(steptime.mark_msg("ckpt"), 0)
            self.assertEqual(steptime.range_end(12345), -errno.ENOENT)
            ino = os.stat("/proc/self/ns/pid").st_ino
            st = steptime.StepStats(tgid=os.getpid(), ns_tgid=os.getpid(),
                                    pidns_ino=ino, index_id=s.index_id,
                                    state=1, uid=os.geteuid())
            d = steptime._stats_dict(st)
            self.assertEqual([(p["name"], p["count"]) for p in d["phases"]],
                             [("load", 2), ("ckpt", 1)])
            self.assertIsNone(d["phases"][0]["device_ns"])
            st.index_id += 1000
            self.assertEqual(steptime.phases(st), [])


if __name__ == "__main__":
    r = unittest.main(exit=False, verbosity=0).result
    n = r.testsRun
    bad = len(r.failures) + len(r.errors)
    print("%s python binding: %d tests, %d failed" %
          ("ok" if not bad else "not ok", n, bad))
    sys.exit(1 if bad else 0)
