# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Run a PyTorch training script unchanged, one steptime step per optimizer step.

    python3 -m steptime.run train.py ARGS...
    python3 -m steptime.run -m package.module ARGS...
    STEPTIME_TORCH=1 torchrun ... train.py     # launchers: the environment
                                               # form (steptime-torch.pth)

A step starts at the first of optimizer.zero_grad(), a top-level
nn.Module forward, or optimizer.step() after the previous step ended, and
ends when optimizer.step() returns: gradient accumulation (several forwards,
one step) is one step, two optimizers stepping per iteration are two steps.
Inside each step, two phases: "forward" (top-level module calls) and
"optimizer" (optimizer.step()), with their host time.

torch >= 2.0: torch's global optimizer hooks
(torch.optim.optimizer.register_optimizer_step_pre_hook/_post_hook); older
torch (Debian's 1.13): each optimizer class's step() is wrapped when its
first instance is created. zero_grad() is wrapped the same way in both.
With torch_npu imported (by the script, or by torch's backend autoload),
each step is marked on torch_npu.npu.current_stream() at its start (its
raw aclrtStream, Stream.npu_stream), START and END on that same stream, so
the step gets its device time; otherwise, or if that stream cannot be had
(said once), marks are host marks. Nothing here raises into the training
loop when steptime is not loaded. Without an importable torch, the module form says
so in one line and exits with status 2 before running the script.
"""
import os
import runpy
import sys
import threading

__all__ = ["install", "autostart", "main"]

_state = None


class _Stepper:
    def __init__(self, steptime):
        self.st = steptime
        self.lock = threading.Lock()
        self.step = None
        self.depth = threading.local()
        self.fwd = None
        self.opt = None
        self.steps = 0
        self.stream = None
        self.npu_failed = False

    def npu_stream(self):
        """torch_npu's current stream (its aclrtStream as an int), or None:
        no torch_npu imported, or it failed once (said once)."""
        npu = sys.modules.get("torch_npu")
        if npu is None or self.npu_failed:
            return None
        try:
            return int(npu.npu.current_stream().npu_stream)
        except Exception as e:
            self.npu_failed = True
            sys.stderr.write("steptime.run: torch_npu's current stream: %s: "
                             "host marks only\n" % e)
            return None

    # -- step boundaries --
    def begin(self):
        with self.lock:
            if self.step is None:
                self.stream = self.npu_stream()
                self.step = self.st.Step()
                self.step.mark(self.st.TAG_START, self.stream)

    def end(self):
        with self.lock:
            s, self.step = self.step, None
            stream, self.stream = self.stream, None
        if s is not None:
            # The START's stream: the step's device time is between the
            # two marks on one stream.
            s.mark(self.st.TAG_END, stream)
            s.close()
            self.steps += 1

    # -- phases --
    def forward_pre(self, module, args):
        d = getattr(self.depth, "n", 0)
        self.depth.n = d + 1
        if d == 0:
            self.begin()
            self.fwd = self.st.range_start("forward")

    def forward_post(self, module, args, out):
        self.depth.n = max(getattr(self.depth, "n", 1) - 1, 0)
        if self.depth.n == 0 and self.fwd:
            self.st.range_end(self.fwd)
            self.fwd = None

    def step_pre(self, *unused):
        self.begin()
        self.opt = self.st.range_start("optimizer")

    def step_post(self, *unused):
        if self.opt:
            self.st.range_end(self.opt)
            self.opt = None
        self.end()


def _wrap(cls, name, before, after=None):
    """Wrap cls.name once (attribute marker), calling before/after."""
    fn = cls.__dict__.get(name)
    marker = "_steptime_wrapped_" + name
    # A class marker, not one on the function: torch 1.13 wraps step()
    # again (its profiler hook) after the first instance.
    if fn is None or cls.__dict__.get(marker):
        return

    def wrapper(self, *a, **k):
        before()
        try:
            return fn(self, *a, **k)
        finally:
            if after:
                after()

    setattr(cls, marker, True)
    wrapper.__wrapped__ = fn
    wrapper.__name__ = getattr(fn, "__name__", name)
    wrapper.__doc__ = getattr(fn, "__doc__", None)
    setattr(cls, name, wrapper)


def install():
    """Hook torch (imported here) once; return the hook state."""
    global _state
    if _state is not None:
        return _state
    import torch
    import steptime

    s = _Stepper(steptime)
    mod = torch.nn.modules.module
    mod.register_module_forward_pre_hook(s.forward_pre)
    mod.register_module_forward_hook(s.forward_post)
    import torch.optim.optimizer as optmod
    have_hooks = hasattr(optmod, "register_optimizer_step_post_hook")
    if have_hooks:
        optmod.register_optimizer_step_pre_hook(s.step_pre)
        optmod.register_optimizer_step_post_hook(s.step_post)
    base_init = torch.optim.Optimizer.__init__

    def init(self, *a, **k):
        # Per class, the first time one is made: zero_grad (and, without
        # torch's global hooks, step) of the class that defines it.
        for klass in type(self).__mro__:
            if "zero_grad" in klass.__dict__:
                _wrap(klass, "zero_grad", s.begin)
                break
        if not have_hooks:
            for klass in type(self).__mro__:
                if "step" in klass.__dict__:
                    _wrap(klass, "step", s.step_pre, s.step_post)
                    break
        base_init(self, *a, **k)

    init._steptime_wrapped = True
    if not getattr(base_init, "_steptime_wrapped", False):
        torch.optim.Optimizer.__init__ = init
    s.mode = "optimizer hooks" if have_hooks else "optimizer wrapper"
    _state = s
    return s


def autostart():
    """The environment form: STEPTIME_TORCH=1 (run from steptime-torch.pth)."""
    if os.environ.get("STEPTIME_TORCH", "0") in ("", "0"):
        return
    try:
        install()
    except Exception as e:      # never stop the job: say why, go on
        sys.stderr.write("steptime: STEPTIME_TORCH: not marking steps: %s\n" % e)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        sys.stderr.write("usage: python3 -m steptime.run SCRIPT [ARGS...]\n"
                         "       python3 -m steptime.run -m MODULE [ARGS...]\n")
        return 0 if argv else 2
    try:
        import torch  # noqa: F401  (install() hooks it)
    except ImportError as e:
        sys.stderr.write("steptime.run: cannot import torch (%s): it marks "
                         "the steps of PyTorch scripts\n" % e)
        return 2
    s = install()
    if argv[0] == "-m":
        if len(argv) < 2:
            sys.stderr.write("steptime.run: -m needs a module name\n")
            return 2
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        if not os.path.exists(argv[0]):
            sys.stderr.write("steptime.run: %s: no such file\n" % argv[0])
            return 2
        sys.argv = argv
        sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
        runpy.run_path(argv[0], run_name="__main__")
    if os.environ.get("STEPTIME_RUN_VERBOSE"):
        sys.stderr.write("steptime.run: %d steps (%s)\n" % (s.steps, s.mode))
    return 0


if __name__ == "__main__":
    # One hook state: that of the package's module (steptime-torch.pth may
    # have installed it already), not of this __main__ copy.
    import steptime.run
    sys.exit(steptime.run.main())
