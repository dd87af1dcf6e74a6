# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A stand-in for torch_npu over the ACL runtime stand-in (npusim), for
tests of `python3 -m steptime.run` (selftests/lib/lib_e2e.sh, in the VM).

What steptime relies on, shaped as Ascend/pytorch has it:
  - torch_npu.npu.current_stream() returns a Stream whose .npu_stream is
    the raw aclrtStream as an int (torch_npu/csrc/npu/Stream.cpp,
    PyLong_FromVoidPtr) and whose ._as_parameter_ is a c_void_p of it
    (torch_npu/npu/streams.py); the device is set up lazily, at the first
    call that needs it (torch_npu.npu._lazy_init);
  - the ACL runtime is loaded RTLD_LOCAL, as torch_npu's libraries are;
  - the device is shut down by an atexit handler registered at import
    (torch_npu's _npu_shutdown).
Operators run on the device: each nn.Module forward launches one kernel of
TASKS tasks of TASK_NS ns on the current stream (a global forward hook), so
a step's device time is the kernels its forwards launched. The ACL runtime
is $ASCEND_ACL_LIB, else $O/runtime/libascendcl.so of the source tree; it
reaches the device as CANN's does, through libruntime.so and the chip's
libruntime_v100.so or libruntime_v200.so (sim/runtime/rt_sim.h).
"""
import atexit
import ctypes
import os
import threading

import torch

TASKS = 2
TASK_NS = 100000
_KERNEL_AICORE = 0

_here = os.path.dirname(os.path.abspath(__file__))
_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    _here))))
_acl = ctypes.CDLL(os.environ.get("ASCEND_ACL_LIB") or os.path.join(
    _root, os.environ.get("O", "build"), "runtime", "libascendcl.so"))
_acl.aclnpusimLaunchKernel.argtypes = [ctypes.c_void_p, ctypes.c_uint32,
                                       ctypes.c_uint32, ctypes.c_uint32]
_acl.aclrtSynchronizeStream.argtypes = [ctypes.c_void_p]
_acl.aclrtDestroyStream.argtypes = [ctypes.c_void_p]


def _check(ret, what):
    if ret:
        raise RuntimeError("torch_npu (stand-in): %s failed: %d" % (what, ret))


class _Npu:
    """torch_npu.npu: the few calls a training loop and steptime make."""

    def __init__(self):
        self._lock = threading.Lock()
        self._stream = None
        self._acl_init = False
        self.launched = 0

    def _lazy_init(self):
        with self._lock:
            if not self._acl_init:
                _check(_acl.aclInit(None), "aclInit")
                self._acl_init = True
            if self._stream is None:
                _check(_acl.aclrtSetDevice(0), "aclrtSetDevice")
                s = ctypes.c_void_p()
                _check(_acl.aclrtCreateStream(ctypes.byref(s)),
                       "aclrtCreateStream")
                self._stream = s.value
        return self._stream

    def current_stream(self, device=None):
        return Stream(self._lazy_init())

    def synchronize(self, device=None):
        if self._stream is not None:
            _check(_acl.aclrtSynchronizeStream(self._stream),
                   "aclrtSynchronizeStream")

    def _launch(self):
        _check(_acl.aclnpusimLaunchKernel(self._lazy_init(), _KERNEL_AICORE,
                                          TASKS, TASK_NS),
               "aclnpusimLaunchKernel")
        self.launched += 1

    def _shutdown(self):
        with self._lock:
            s, self._stream = self._stream, None
        if s is not None:
            _acl.aclrtSynchronizeStream(s)
            _acl.aclrtDestroyStream(s)
            _acl.aclrtResetDeviceForce(0)
        if self._acl_init:
            _acl.aclFinalize()


class Stream:
    """torch_npu.npu.Stream: .npu_stream, the aclrtStream as an int."""

    def __init__(self, handle):
        self.npu_stream = handle

    @property
    def _as_parameter_(self):
        return ctypes.c_void_p(self.npu_stream)

    def synchronize(self):
        _check(_acl.aclrtSynchronizeStream(self.npu_stream),
               "aclrtSynchronizeStream")


npu = _Npu()
atexit.register(npu._shutdown)
torch.nn.modules.module.register_module_forward_hook(
    lambda module, args, out: npu._launch())
