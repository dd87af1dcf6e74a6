# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""steptime: mark training steps, read per-step device timing.

A ctypes binding of libsteptime, with `step()` in C where the package
built its extension (steptime._steptime: ~5x cheaper; STEPTIME_PY_CTYPES=1
keeps the ctypes one). The library is found through $STEPTIME_LIB, then a copy in this package's folder, the
build tree next to it (../../build/libsteptime.so.1), the lib folder of the
prefix it is installed in (PREFIX/lib for PREFIX/lib/python3.X/*-packages:
`make install`, a conda environment), then the system's library path.

    import torch_npu, steptime
    for batch in loader:
        with steptime.step():   # on torch_npu's current stream: device time
            loss = model(batch); loss.backward(); opt.step()
    print(steptime.steps(pid=os.getpid(), last=10))

`step()` marks on torch_npu's current stream when torch_npu is imported
(stream=steptime.HOST for a host mark); `step(index=n)` gives the step its
number (a job resumed at step 10,000 goes on from there).

CANN-style calls (create_step_info, get_step_timestamp, ...) keep CANN's
return codes; the native `step` context manager never raises for a mark
that could not be recorded (steptime not loaded): training goes on, and the
first such failure of the process is said once, as a StepTimeWarning
(Python's warnings: on stderr unless filtered; none with STEPTIME_QUIET=1).
"""
import contextlib
import ctypes
import ctypes.util
import errno as _errno
import json
import os
import sys
import warnings

# steptime.range (a phase) is not exported: `from steptime import *` must
# not shadow the builtin.
__all__ = [
    "lib", "Step", "step", "mark", "flush", "steps", "STREAM_NONE", "HOST",
    "StepTimeWarning",
    "range_start", "range_end", "mark_msg", "phases",
    "TAG_START", "TAG_END",
    "create_step_info", "get_step_timestamp", "destroy_step_info",
    "step_info_index_id", "set_step_info_index_id",
    "prof_init", "prof_create_config", "prof_start", "prof_stop",
    "prof_destroy_config", "prof_finalize",
]

TAG_START = 0
TAG_END = 1
STREAM_NONE = 0xFFFFFFFF


class _Host:
    def __repr__(self):
        return "steptime.HOST"


# step(stream=HOST): a host mark, whatever framework is imported.
HOST = _Host()
_CURRENT = object()     # step()'s default: torch_npu's current stream

# acl/acl_prof.h, acl/acl_base.h
ACL_SUCCESS = 0
ACL_ERROR_INVALID_PARAM = 100000
ACL_ERROR_UNINITIALIZE = 100001
ACL_ERROR_REPEAT_INITIALIZE = 100002
ACL_ERROR_INVALID_PROFILING_CONFIG = 100010
ACL_ERROR_PROF_ALREADY_RUN = 100042
ACL_ERROR_PROF_NOT_RUN = 100043
ACL_ERROR_BAD_ALLOC = 200000
ACL_ERROR_API_NOT_SUPPORT = 200001
ACL_ERROR_FEATURE_UNSUPPORTED = 200006
ACL_ERROR_INTERNAL_ERROR = 500000
ACL_ERROR_FAILURE = 500001
ACL_ERROR_GE_FAILURE = 500002
ACL_ERROR_RT_FAILURE = 500003
ACL_ERROR_DRV_FAILURE = 500004
ACL_ERROR_PROFILING_FAILURE = 500005
ACL_STEP_START = 0
ACL_STEP_END = 1
ACL_PROF_ACL_API = 0x0001
ACL_PROF_TASK_TIME = 0x0002
ACL_PROF_AICORE_METRICS = 0x0004
ACL_PROF_TRAINING_TRACE = 0x0040
ACL_PROF_MSPROFTX = 0x0080
ACL_PROF_RUNTIME_API = 0x0100
ACL_AICORE_ARITHMETIC_UTILIZATION = 0
ACL_AICORE_NONE = 0xFF

_FMT_JSON = 2


def _candidates():
    env = os.environ.get("STEPTIME_LIB")
    if env:
        yield env
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "libsteptime.so.1")
    repo = os.path.dirname(os.path.dirname(here))
    if os.path.exists(os.path.join(repo, "lib", "libsteptime.map")):
        # The source tree's python/steptime: its build ($O may be absolute).
        yield os.path.join(repo, os.environ.get("O", "build"),
                           "libsteptime.so.1")
    # PREFIX/lib/python3.X/{dist,site}-packages/steptime: PREFIX/lib first,
    # before the loader's cache (which `make install` refreshes as root).
    pkgs = os.path.dirname(here)
    if os.path.basename(pkgs) in ("dist-packages", "site-packages"):
        yield os.path.join(os.path.dirname(os.path.dirname(pkgs)),
                           "libsteptime.so.1")
    found = ctypes.util.find_library("steptime")
    if found:
        yield found
    yield "libsteptime.so.1"
    yield "libsteptime.so"


def _hal_path():
    """The npusim HAL of a build tree (tests, demo; never installed)."""
    env = os.environ.get("STEPTIME_NPUHAL_LIB")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(os.path.dirname(here))
    p = os.path.join(repo, os.environ.get("O", "build"), "libnpuhal.so")
    return p if os.path.exists(p) else None


def _load():
    # A build tree's HAL goes first, into the global scope: libsteptime
    # binds its (weak) HAL references when it is loaded.
    hal = _hal_path()
    if hal and os.path.exists("/dev/npusim_manager"):
        try:
            ctypes.CDLL(hal, mode=ctypes.RTLD_GLOBAL)
        except OSError:
            pass
    errors = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            continue
        try:
            return ctypes.CDLL(path, use_errno=True)
        except OSError as e:
            errors.append("%s: %s" % (path, e))
    raise ImportError("steptime: libsteptime not found (install it, e.g. "
                      "make install PREFIX=/usr/local, or set STEPTIME_LIB): "
                      + "; ".join(errors))


lib = _load()


class MarkOpts(ctypes.Structure):
    _fields_ = [("sz", ctypes.c_size_t), ("stream", ctypes.c_void_p)]


class ReaderOpts(ctypes.Structure):
    _fields_ = [("sz", ctypes.c_size_t), ("pin_dir", ctypes.c_char_p),
                ("pid", ctypes.c_int), ("last", ctypes.c_size_t),
                ("pidns_ino", ctypes.c_uint32)]


class StepStats(ctypes.Structure):
    """struct steptime_step_stats (steptime/abi.h)."""
    _fields_ = [
        ("tgid", ctypes.c_uint32), ("ns_tgid", ctypes.c_uint32),
        ("index_id", ctypes.c_uint64),
        ("stream", ctypes.c_uint32), ("state", ctypes.c_uint32),
        ("flags", ctypes.c_uint32), ("pidns_ino", ctypes.c_uint32),
    ] + [(n, ctypes.c_uint64) for n in (
        "host_start_ns", "host_end_ns", "gap_ns", "dev_start_ticks",
        "dev_end_ticks", "device_time_ns", "tasks", "completions",
        "reported", "errors", "submit_ioctls", "submit_ioctl_ns",
        "first_submit_ns", "last_submit_ns", "last_complete_ns",
        "lat_sum_ns")] + [("lat_hist", ctypes.c_uint32 * 32),
                          ("uid", ctypes.c_uint32), ("pad", ctypes.c_uint32)]


assert ctypes.sizeof(StepStats) == 296


def _proto(name, res, *args):
    fn = getattr(lib, name)
    fn.restype = res
    fn.argtypes = list(args)
    return fn


_vp = ctypes.c_void_p
_step_new = _proto("steptime_step__new", _vp)
_step_mark = _proto("steptime_step__mark", ctypes.c_int, _vp, ctypes.c_uint,
                    ctypes.POINTER(MarkOpts))
_step_index = _proto("steptime_step__index_id", ctypes.c_uint64, _vp)
_step_free = _proto("steptime_step__free", None, _vp)
_mark = _proto("steptime__mark", ctypes.c_int, ctypes.c_uint64, ctypes.c_uint,
               ctypes.POINTER(MarkOpts))
_flush = _proto("steptime__flush", ctypes.c_int)
_reader_open = _proto("steptime_reader__open", _vp, ctypes.POINTER(ReaderOpts))
_reader_next = _proto("steptime_reader__next", ctypes.c_int, _vp,
                      ctypes.POINTER(StepStats))
_reader_free = _proto("steptime_reader__free", None, _vp)
_snprintf = _proto("steptime_stats__snprintf", ctypes.c_int, ctypes.c_char_p,
                   ctypes.c_size_t, ctypes.c_int, ctypes.POINTER(StepStats))
_range_start = _proto("steptime_range__start", ctypes.c_uint64,
                      ctypes.c_char_p, _vp)
_range_end = _proto("steptime_range__end", ctypes.c_int, ctypes.c_uint64)
_mark_msg = _proto("steptime__mark_msg", ctypes.c_int, ctypes.c_char_p, _vp)
_phases_get = _proto("steptime_phases__get", ctypes.c_int,
                     ctypes.POINTER(StepStats), _vp, ctypes.c_size_t)
_acl_create = _proto("aclprofCreateStepInfo", _vp)
_acl_mark = _proto("aclprofGetStepTimestamp", ctypes.c_int, _vp, ctypes.c_int,
                   _vp)
_acl_destroy = _proto("aclprofDestroyStepInfo", None, _vp)
_acl_init = _proto("aclprofInit", ctypes.c_int, ctypes.c_char_p,
                   ctypes.c_size_t)
_acl_finalize = _proto("aclprofFinalize", ctypes.c_int)
_acl_cfg = _proto("aclprofCreateConfig", _vp, ctypes.POINTER(ctypes.c_uint32),
                  ctypes.c_uint32, ctypes.c_int, _vp, ctypes.c_uint64)
_acl_cfg_free = _proto("aclprofDestroyConfig", ctypes.c_int, _vp)
_acl_start = _proto("aclprofStart", ctypes.c_int, _vp)
_acl_stop = _proto("aclprofStop", ctypes.c_int, _vp)


def _stream_ptr(stream):
    """A stream object (torch_npu.npu.Stream: .npu_stream, its aclrtStream;
    ._as_parameter_ or .handle), int, or None."""
    if stream is None:
        return None
    for attr in ("npu_stream", "_as_parameter_", "handle"):
        if hasattr(stream, attr):
            return getattr(stream, attr)
    return stream


def _current_stream():
    """torch_npu's current stream where torch_npu is imported, else None (a
    host mark). Not imported here: a process without it pays nothing."""
    tn = sys.modules.get("torch_npu")
    npu = getattr(tn, "npu", None)
    if npu is None or not hasattr(npu, "current_stream"):
        return None
    return npu.current_stream()


def _resolve(stream):
    if stream is _CURRENT:
        return _current_stream()
    return None if stream is HOST else stream


class StepTimeWarning(RuntimeWarning):
    """A mark steptime could not record (not loaded, no ring, ...)."""


_warned = False


def _warn_once(err, what, stacklevel=4):
    """Say the process's first failed mark, once: training goes on."""
    global _warned
    if _warned:
        return
    # Set with STEPTIME_QUIET too: a step's failed marks cost no more.
    _warned = True
    if os.environ.get("STEPTIME_QUIET") == "1":
        return
    warnings.warn("steptime: %s: %s (%d); this process's steps are not "
                  "recorded: is steptime loaded (`steptime status`)? "
                  "Said once." % (what, os.strerror(-err), err),
                  StepTimeWarning, stacklevel=stacklevel)


def _what(index_id, tag):
    return "step %d's %s mark" % (index_id,
                                  "START" if tag == TAG_START else "END")


def _mark_failed(index_id, tag, err):
    """The extension's failed mark (its caller's frame is the user's)."""
    _warn_once(err, _what(index_id, tag), stacklevel=3)


def _check_index(index):
    if int(index) <= 0 or int(index) >= 1 << 64:
        raise ValueError("steptime: a step index is 1..2**64-1, not %r"
                         % (index,))
    return int(index)


def _stream_addr(stream):
    """A stream's address as a mark orders on it (int), or None."""
    return MarkOpts(0, _stream_ptr(stream)).stream


def _opts(stream):
    if stream is None:
        return None
    return ctypes.byref(MarkOpts(ctypes.sizeof(MarkOpts), _stream_ptr(stream)))


def mark(index_id, tag, stream=None):
    """Mark step @index_id; 0 or a negative errno (-ENODEV: not loaded)."""
    return _mark(index_id, tag, _opts(stream))


def flush():
    """Hand steptime every mark and completed device time of this process
    now, as at exit (steptime__flush()): before reading this process's own
    last step, or before destroying its streams. 0 or a negative errno."""
    return _flush()


class Step:
    """A step with a fresh index id (shared counter with the CANN API), or
    the given @index (any nonzero number: a resumed job's step)."""

    def __init__(self, index=None):
        self._p = None
        if index is not None:
            self.index_id = _check_index(index)
        else:
            self._p = _step_new()
            if not self._p:
                e = ctypes.get_errno()
                raise OSError(e, os.strerror(e))
            self.index_id = _step_index(self._p)
        self.errors = []

    def mark(self, tag, stream=None):
        """0, or a negative errno (see steptime_step__mark()); the
        process's first failure is warned about once."""
        if self._p:
            err = _step_mark(self._p, tag, _opts(stream))
        else:
            err = _mark(self.index_id, tag, _opts(stream))
        if err:
            self.errors.append(err)
            _warn_once(err, _what(self.index_id, tag))
        return err

    def close(self):
        if self._p:
            _step_free(self._p)
            self._p = None

    def __del__(self):
        self.close()


@contextlib.contextmanager
def step(stream=_CURRENT, strict=False, index=None):
    """START on entry, END on exit, on @stream: by default torch_npu's
    current stream where torch_npu is imported (device time), else a host
    mark; HOST (or None) for a host mark. @index: the step's number (else a
    fresh one). With strict=True a mark that could not be recorded raises
    OSError; by default it is kept in .errors and warned about once."""
    stream = _resolve(stream)
    s = Step(index)
    try:
        err = s.mark(TAG_START, stream)
        if err and strict:
            raise OSError(-err, os.strerror(-err))
        yield s
        err = s.mark(TAG_END, stream)
        if err and strict:
            raise OSError(-err, os.strerror(-err))
    finally:
        s.close()


def _find_ext():
    """steptime._steptime: the package's, else the source tree's build
    ($O/python/steptime), else None (ctypes)."""
    if os.environ.get("STEPTIME_PY_CTYPES") == "1":
        return None
    try:
        from . import _steptime
        return _steptime
    except ImportError:
        pass
    import importlib.machinery
    import importlib.util
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(os.path.dirname(here))
    if not os.path.exists(os.path.join(repo, "lib", "libsteptime.map")):
        return None
    d = os.path.join(repo, os.environ.get("O", "build"), "python", "steptime")
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = os.path.join(d, "_steptime" + suffix)
        if os.path.exists(path):
            spec = importlib.util.spec_from_file_location(
                __name__ + "._steptime", path)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            return mod
    return None


def _addr(fn):
    return ctypes.cast(fn, ctypes.c_void_p).value


def _bind():
    """Hand the extension the library's functions (again after a test put
    a ctypes callback in place of one of _step_new ... _mark)."""
    if _ext:
        _ext._bind(_addr(_step_new), _addr(_step_mark), _addr(_step_index),
                   _addr(_step_free), _addr(_mark), _CURRENT, HOST,
                   _current_stream, _stream_addr, _check_index, _mark_failed,
                   globals())


_ext = _find_ext()
_py_step = step
if _ext:
    _bind()
    step = _ext.step            # noqa: F811 (the same, in C)
# "c" or "ctypes": which step() this process runs.
IMPL = "c" if _ext else "ctypes"


class Phase(ctypes.Structure):
    """struct steptime_phase (steptime/steptime.h)."""
    _fields_ = [("name", ctypes.c_char * 64), ("count", ctypes.c_uint64),
                ("host_ns", ctypes.c_uint64), ("device_ns", ctypes.c_uint64),
                ("device_count", ctypes.c_uint64)]


def range_start(name, stream=None):
    """Start a range (a phase of the open step): its id, 0 on error."""
    return _range_start(name.encode(), _stream_ptr(stream))


def range_end(range_id):
    """End a range: 0, or -ENOENT for an id that is not open."""
    return _range_end(range_id)


@contextlib.contextmanager
def range(name, stream=None):  # noqa: A001 (steptime.range)
    """A phase of the open step: `with steptime.range("forward"): ...`."""
    rid = range_start(name, stream)
    try:
        yield rid
    finally:
        if rid:
            range_end(rid)


def mark_msg(name, stream=None):
    """An instant counted in the open step's phase @name."""
    return _mark_msg(name.encode(), _stream_ptr(stream))


def phases(st):
    """The phases of a step (a StepStats record) as dicts."""
    n = _phases_get(ctypes.byref(st), None, 0)
    if n <= 0:
        return []
    arr = (Phase * n)()
    n = min(_phases_get(ctypes.byref(st), arr, n), n)
    return [{"name": p.name.decode(errors="replace"), "count": p.count,
             "host_ns": p.host_ns,
             "device_ns": p.device_ns if p.device_count else None,
             "device_count": p.device_count} for p in arr[:n]]


def _stats_dict(st):
    buf = ctypes.create_string_buffer(2048)
    n = _snprintf(buf, len(buf), _FMT_JSON, ctypes.byref(st))
    if n < 0 or n >= len(buf):
        raise OSError(_errno.EINVAL, "steptime: cannot format a step")
    d = json.loads(buf.value.decode())
    d["phases"] = phases(st)
    return d


def steps(pid=None, last=None, pin_dir=None, raw=False):
    """Steps in step order as dicts (keys of `steptime stat -o json`), or
    StepStats records with raw=True. OSError(ENOENT) when not loaded."""
    o = ReaderOpts(ctypes.sizeof(ReaderOpts),
                   pin_dir.encode() if pin_dir else None,
                   int(pid or 0), int(last or 0), 0)
    r = _reader_open(ctypes.byref(o))
    if not r:
        e = ctypes.get_errno()
        raise OSError(e, "steptime: cannot read steps: " + os.strerror(e))
    out = []
    try:
        while True:
            st = StepStats()
            if _reader_next(r, ctypes.byref(st)):
                break
            out.append(st if raw else _stats_dict(st))
    finally:
        _reader_free(r)
    return out


# ---- CANN-style API (acl/acl_prof.h): CANN's return codes -------------

def create_step_info():
    """aclprofCreateStepInfo(): a handle (int), or None."""
    return _acl_create()


def get_step_timestamp(info, tag, stream=None):
    """aclprofGetStepTimestamp(): ACL_SUCCESS or an ACL error code."""
    return _acl_mark(info, tag, _stream_ptr(stream))


def destroy_step_info(info):
    """aclprofDestroyStepInfo()."""
    _acl_destroy(info)


def step_info_index_id(info):
    """The object's indexId (CANN layout: a u64 at offset 8)."""
    return ctypes.c_uint64.from_address(info + 8).value


def set_step_info_index_id(info, value):
    """Overwrite indexId, as MindSpore does with its own step number."""
    ctypes.c_uint64.from_address(info + 8).value = value


def prof_init(path):
    b = os.fsencode(path)
    return _acl_init(b, len(b))


def prof_create_config(devices=(0,), aicore_metrics=ACL_AICORE_ARITHMETIC_UTILIZATION,
                       data_types=ACL_PROF_ACL_API | ACL_PROF_TASK_TIME |
                       ACL_PROF_MSPROFTX):
    """aclprofCreateConfig(): a handle, or None for bad arguments."""
    devs = (ctypes.c_uint32 * max(len(devices), 1))(*devices)
    return _acl_cfg(devs if devices else None, len(devices), aicore_metrics,
                    None, data_types)


def prof_start(cfg):
    return _acl_start(cfg)


def prof_stop(cfg):
    return _acl_stop(cfg)


def prof_destroy_config(cfg):
    return _acl_cfg_free(cfg)


def prof_finalize():
    return _acl_finalize()
