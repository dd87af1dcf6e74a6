# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""STEPTIME_TORCH=1 (steptime-torch.pth): hook PyTorch once it is imported.

A .pth file runs while site.py is still building sys.path. `make install`
puts steptime in /usr/local/lib/python3.X/dist-packages, which Debian's
python3 processes before /usr/lib/python3/dist-packages (python3-torch),
and a venv processes its own site-packages before the system's: torch
cannot be imported from the .pth, and importing it there would cost every
interpreter torch's start-up. So the .pth only puts a finder on
sys.meta_path; the first `import torch`, wherever torch is, runs torch's
own module and then steptime.run.install(). Nothing of steptime (nor
libsteptime) is loaded before that, nor ever in a process without torch.

Only the standard library's import machinery is used here: this module is
imported while site.py runs.
"""
import sys

__all__ = ["arm"]

_TARGET = "torch"


def _hook():
    # steptime.run.autostart() never raises into the import of torch.
    try:
        import steptime.run
    except Exception as e:
        sys.stderr.write("steptime: STEPTIME_TORCH: not marking steps: %s\n"
                         % e)
        return
    steptime.run.autostart()


class _Loader:
    """torch's loader, then the hook, once torch's module has run."""

    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        create = getattr(self.loader, "create_module", None)
        return create(spec) if create else None

    def exec_module(self, module):
        # torch's own loader back in its module and spec: importlib.reload,
        # resource readers and pickling see what they would without us.
        module.__loader__ = self.loader
        if getattr(module, "__spec__", None) is not None:
            module.__spec__.loader = self.loader
        self.loader.exec_module(module)
        _hook()


class _Finder:
    """Finds nothing itself: wraps the loader of the spec the finders after
    it find for torch, the first time torch is imported, then leaves."""

    def __init__(self):
        self.busy = False

    def find_spec(self, name, path=None, target=None):
        if name != _TARGET or self.busy:
            return None
        self.busy = True
        try:
            spec = None
            for finder in list(sys.meta_path):
                find = getattr(finder, "find_spec", None)
                if finder is self or find is None:
                    continue
                spec = find(name, path, target)
                if spec is not None:
                    break
        finally:
            self.busy = False
        if spec is None or not hasattr(spec.loader, "exec_module"):
            return spec
        disarm()
        spec.loader = _Loader(spec.loader)
        return spec


_finder = None


def arm():
    """Hook torch when it is imported (at once if it already is)."""
    global _finder
    if _TARGET in sys.modules:
        _hook()
        return
    if _finder is None:
        _finder = _Finder()
        sys.meta_path.insert(0, _finder)


def disarm():
    global _finder
    if _finder is not None:
        try:
            sys.meta_path.remove(_finder)
        except ValueError:
            pass
        _finder = None
