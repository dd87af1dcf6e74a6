#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""`python3 -m steptime.run` and STEPTIME_TORCH=1 on an unchanged PyTorch
CPU loop (selftests/lib/train_cpu.py), with Debian's python3-torch: one
step per optimizer step, each with its "forward" and "optimizer" phases.

Steps are read back from the phases the library wrote (STEPTIME_PHASE_DIR),
through the Python reader (steptime.phases) and the file itself: a record
the marks produce independently of this module's own counting. Without
torch (one that fails to import, with or without python3-torch): one line,
status 2, the script not run and nothing written. TAP.
"""
import ctypes
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PYDIR = os.path.join(ROOT, "python")
LIB = os.path.abspath(os.environ.get("STEPTIME_LIB",
                                     os.path.join(ROOT, "build",
                                                  "libsteptime.so.1")))
TRAIN = os.path.join(HERE, "train_cpu.py")
PY = "/usr/bin/python3"

sys.path.insert(0, PYDIR)
os.environ["STEPTIME_LIB"] = LIB
import steptime  # noqa: E402


def have_torch():
    return subprocess.run([PY, "-c", "import torch"],
                          capture_output=True).returncode == 0


def phase_steps(phase_dir):
    """{index_id: {phase name: count}} from this user's one phase file."""
    phase_dir = os.path.join(phase_dir, str(os.geteuid()))
    files = [f for f in os.listdir(phase_dir) if f.endswith(".phases")]
    assert len(files) == 1, files
    steps = {}
    with open(os.path.join(phase_dir, files[0])) as f:
        for line in f:
            idx, cnt, host, dev, devn, name = line.split()
            steps.setdefault(int(idx), {})[name] = int(cnt)
    return files[0], steps


@unittest.skipUnless(have_torch(), "Debian's python3-torch is not installed")
class TestRun(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="steptime-run-")
        self.env = dict(os.environ, PYTHONPATH=PYDIR, STEPTIME_LIB=LIB,
                        STEPTIME_PHASE_DIR=self.dir, STEPTIME_QUIET="1",
                        STEPTIME_PIN_DIR="/nonexistent/steptime-run",
                        STEPTIME_RUN_VERBOSE="1")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def run_py(self, args, env=None):
        p = subprocess.run([PY] + args, env=env or self.env,
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("trained", p.stdout)
        return p

    def check(self, steps, forwards):
        name, got = phase_steps(self.dir)
        self.assertEqual(len(got), steps, got)
        for idx, ph in got.items():
            self.assertEqual(ph.get("optimizer"), 1, (idx, ph))
            self.assertEqual(ph.get("forward"), forwards, (idx, ph))
        # The same through the library's reader, as `steptime stat` does.
        os.environ["STEPTIME_PHASE_DIR"] = self.dir
        ino, pid = (int(x) for x in name.split(".")[:2])
        for idx in got:
            st = steptime.StepStats(pidns_ino=ino, ns_tgid=pid, tgid=pid,
                                    index_id=idx, uid=os.geteuid())
            names = {p["name"]: p for p in steptime.phases(st)}
            self.assertEqual(set(names), {"forward", "optimizer"})
            self.assertGreater(names["optimizer"]["host_ns"], 0)
        return got

    def test_module_form(self):
        p = self.run_py(["-m", "steptime.run", TRAIN, "--steps", "6"])
        self.assertIn("6 steps (optimizer wrapper)", p.stderr)
        self.check(6, 1)

    def test_gradient_accumulation_is_one_step(self):
        self.run_py(["-m", "steptime.run", TRAIN, "--steps", "3",
                     "--accum", "4", "--adam"])
        self.check(3, 4)

    def venv_with_pth(self):
        """A fresh venv (Debian's python3, its system site, so torch) with
        steptime laid out in its site-packages as `make install` lays it
        out in a site dir: the package, _steptime_torch.py and
        steptime-torch.pth. site.py processes that dir, and so runs the
        .pth, before /usr/lib/python3/dist-packages (torch) is on sys.path:
        the order of Debian's /usr/local/lib/python3.X/dist-packages."""
        venv = os.path.join(self.dir, "venv")
        subprocess.run([PY, "-m", "venv", "--system-site-packages",
                        "--without-pip", venv], check=True, timeout=120)
        vpy = os.path.join(venv, "bin", "python")
        site = subprocess.run([vpy, "-c", "import site; print(site."
                               "getsitepackages()[0])"], capture_output=True,
                              text=True, check=True).stdout.strip()
        shutil.copytree(os.path.join(PYDIR, "steptime"),
                        os.path.join(site, "steptime"))
        for f in ("_steptime_torch.py", "steptime-torch.pth"):
            shutil.copy(os.path.join(PYDIR, f), site)
        env = dict(self.env, STEPTIME_TORCH="1")
        del env["PYTHONPATH"]
        return vpy, env

    def test_environment_form(self):
        vpy, env = self.venv_with_pth()
        phases = os.path.join(self.dir, "phases")
        env["STEPTIME_PHASE_DIR"] = phases
        # A fresh interpreter: the .pth armed the hook; no steptime, no
        # libsteptime until torch is imported.
        p = subprocess.run([vpy, "-c", "import sys; print(sorted(m for m in "
                            "sys.modules if 'steptime' in m))"], env=env,
                           capture_output=True, text=True, timeout=60)
        self.assertEqual((p.returncode, p.stdout.strip(), p.stderr),
                         (0, "['_steptime_torch']", ""))
        # torch imported: hooked, torch's own loader in its spec.
        p = subprocess.run([vpy, "-c", "import sys, torch, steptime.run; "
                            "print(steptime.run._state is not None, "
                            "type(torch.__spec__.loader).__name__, "
                            "type(torch.__loader__).__name__)"], env=env,
                           capture_output=True, text=True, timeout=300)
        self.assertEqual((p.returncode, p.stdout.split(), p.stderr),
                         (0, ["True", "SourceFileLoader", "SourceFileLoader"],
                          ""))
        p = subprocess.run([vpy, TRAIN, "--steps", "4"], env=env,
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertNotIn("steptime", p.stderr)
        self.dir, saved = phases, self.dir
        try:
            self.check(4, 1)
        finally:
            self.dir = saved
        # Without the variable the .pth does nothing: no module imported.
        env["STEPTIME_TORCH"] = "0"
        shutil.rmtree(phases)
        os.mkdir(phases)
        p = subprocess.run([vpy, "-c", "import sys, torch; print(sorted(m for m"
                            " in sys.modules if 'steptime' in m))"], env=env,
                           capture_output=True, text=True, timeout=300)
        self.assertEqual((p.returncode, p.stdout.strip()), (0, "[]"), p.stderr)
        self.run_py([TRAIN, "--steps", "2"], dict(env, PYTHONPATH=""))
        self.assertEqual(os.listdir(phases), [])

    def test_bad_usage(self):
        p = subprocess.run([PY, "-m", "steptime.run", "/nonexistent.py"],
                           env=self.env, capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("no such file", p.stderr)
        p = subprocess.run([PY, "-m", "steptime.run"], env=self.env,
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("usage", p.stderr)


class TestNoTorch(unittest.TestCase):
    """Without torch: one clear line and status 2, the script not run."""

    def test_no_torch(self):
        d = tempfile.mkdtemp(prefix="steptime-run-")
        try:
            # A torch that imports as an absent one does, first on the path:
            # the same whether or not python3-torch is installed.
            fake = os.path.join(d, "fake")
            os.makedirs(os.path.join(fake, "torch"))
            with open(os.path.join(fake, "torch", "__init__.py"), "w") as f:
                f.write("raise ModuleNotFoundError(\"No module named "
                        "'torch'\", name='torch')\n")
            work = os.path.join(d, "work")
            phases = os.path.join(d, "phases")
            os.mkdir(work)
            os.mkdir(phases)
            train = os.path.join(work, "train.py")
            with open(train, "w") as f:
                f.write("open(%r, 'w').close()\nprint('trained')\n"
                        % os.path.join(work, "ran"))
            env = dict(os.environ, PYTHONPATH=fake + os.pathsep + PYDIR,
                       STEPTIME_LIB=LIB, STEPTIME_PHASE_DIR=phases,
                       STEPTIME_PIN_DIR="/nonexistent/steptime-run",
                       PYTHONDONTWRITEBYTECODE="1")
            p = subprocess.run([PY, "-m", "steptime.run", train, "--steps",
                                "2"], env=env, cwd=work, capture_output=True,
                               text=True, timeout=60)
            self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
            self.assertEqual(p.stdout, "")
            lines = p.stderr.splitlines()
            self.assertEqual(len(lines), 1, p.stderr)
            self.assertIn("steptime.run: cannot import torch", lines[0])
            self.assertIn("No module named 'torch'", lines[0])
            self.assertNotIn("Traceback", p.stderr)
            # Nothing left behind: the script never ran, no phases, no
            # files beside it.
            self.assertEqual(os.listdir(work), ["train.py"])
            self.assertEqual(os.listdir(phases), [])
        finally:
            shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    r = unittest.main(exit=False, verbosity=2).result
    print("1..1")
    print("%s 1 test_python_run (%d run, %d skipped)" %
          ("ok" if r.wasSuccessful() else "not ok", r.testsRun,
           len(r.skipped)))
    sys.exit(0 if r.wasSuccessful() else 1)
