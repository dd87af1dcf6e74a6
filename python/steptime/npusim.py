# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Submit tasks to npusim through its HAL (include/npusim/hal.h).

The HAL is test and demo infrastructure, not part of libsteptime: it is
loaded from $STEPTIME_NPUHAL_LIB, else the build tree (build/libnpuhal.so),
with RTLD_GLOBAL so that libsteptime's stream marks find it.

    from steptime import npusim
    if npusim.available():
        dev = npusim.Device(); s = dev.stream()
        s.submit(3, duration_ns=100000); s.sync()

A Stream is accepted as `stream=` by steptime.step(): the step marks are
then ordered on it (place-holder tasks the device time-stamps).
"""
import ctypes
import os

from . import _candidates  # noqa: F401  (the package loads libsteptime first)


def _load_hal():
    env = os.environ.get("STEPTIME_NPUHAL_LIB")
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(os.path.dirname(here))
    paths = [env] if env else []
    paths.append(os.path.join(repo, os.environ.get("O", "build"),
                              "libnpuhal.so"))
    for p in paths:
        if os.path.exists(p):
            return ctypes.CDLL(p, mode=ctypes.RTLD_GLOBAL, use_errno=True)
    raise ImportError("steptime.npusim: libnpuhal.so not found (a build "
                      "tree's, or set STEPTIME_NPUHAL_LIB)")


lib = _load_hal()

DEVICE = "/dev/npusim_manager"
SQE_FFTS = 0
SQE_AICPU = 1
SQE_SDMA = 11


class TaskDesc(ctypes.Structure):
    """struct npu_task_desc."""
    _fields_ = [("type", ctypes.c_uint8), ("stream_id", ctypes.c_uint16),
                ("task_id", ctypes.c_uint16), ("wr_cqe", ctypes.c_bool),
                ("duration_ns", ctypes.c_uint32),
                ("sim_error", ctypes.c_uint32)]


Sqe = ctypes.c_uint8 * 64

_vp = ctypes.c_void_p


def _proto(name, res, *args):
    fn = getattr(lib, name)
    fn.restype = res
    fn.argtypes = list(args)
    return fn


_dev_open = _proto("npu_dev_open", _vp, _vp)
_dev_close = _proto("npu_dev_close", None, _vp)
_stream_create = _proto("npu_stream_create", _vp, _vp, _vp)
_stream_destroy = _proto("npu_stream_destroy", None, _vp)
_stream_id = _proto("npu_stream_id", ctypes.c_int, _vp)
_sqe_task = _proto("npu_sqe_task", None, _vp, ctypes.POINTER(TaskDesc))
_submit = _proto("npu_stream_submit", ctypes.c_int, _vp, _vp, ctypes.c_uint)
_sync = _proto("npu_stream_sync", ctypes.c_int, _vp, ctypes.c_int)


def available():
    return os.path.exists(DEVICE)


def _check(ret, what):
    if ret < 0:
        raise OSError(-ret, "%s: %s" % (what, os.strerror(-ret)))
    return ret


class Stream:
    def __init__(self, dev):
        self._as_parameter_ = _stream_create(dev._as_parameter_, None)
        if not self._as_parameter_:
            e = ctypes.get_errno()
            raise OSError(e, "npu_stream_create: " + os.strerror(e))
        self.id = _stream_id(self._as_parameter_)

    def submit(self, n=1, duration_ns=0, sqe_type=SQE_FFTS, sim_error=0):
        """Submit @n tasks of @duration_ns each; the first task id."""
        sqes = (Sqe * n)()
        d = TaskDesc(sqe_type, 0, 0, False, duration_ns, sim_error)
        for i in range(n):
            _sqe_task(ctypes.addressof(sqes[i]), ctypes.byref(d))
        return _check(_submit(self._as_parameter_, sqes, n),
                      "npu_stream_submit")

    def sync(self, timeout_ms=10000):
        _check(_sync(self._as_parameter_, timeout_ms), "npu_stream_sync")

    def close(self):
        if self._as_parameter_:
            _stream_destroy(self._as_parameter_)
            self._as_parameter_ = None


class Device:
    def __init__(self):
        self._as_parameter_ = _dev_open(None)
        if not self._as_parameter_:
            e = ctypes.get_errno()
            raise OSError(e, "npu_dev_open: " + os.strerror(e))

    def stream(self):
        return Stream(self)

    def close(self):
        if self._as_parameter_:
            _dev_close(self._as_parameter_)
            self._as_parameter_ = None
