#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A PyTorch-shaped training loop marked with steptime.

data -> forward -> backward -> optimizer, one steptime step per iteration.
As torch_npu does, the device is driven through the ACL runtime
(libascendcl.so: aclrtSetDevice, aclrtCreateStream, kernel launches,
aclrtSynchronizeStream); on npusim that is steptime's ACL runtime
(build/runtime/libascendcl.so, $ASCEND_ACL_LIB), which drives the device as
CANN's runtime drives a 910B: kernels and stream marks without reports, SQ
head queries on synchronize. The step marks are ordered on the stream.
Without a device the phases sleep. At the end the loop prints its own
steps as steptime recorded them. With --framework-exit it ends as a
torch_npu script does instead: no flush, no reading, its ACL shut down by an
atexit handler registered before the first step (torch_npu registers its
_npu_shutdown at import); read its steps with `steptime stat -p PID`.
With --profiler the steps are marked as torch_npu's profiler marks them,
with mstx ranges "ProfilerStep#N" on the stream (libms_tools_ext.so, here
libsteptime), not through steptime's Python module.

    PYTHONPATH=python examples/torch_like.py --steps 5
"""
import argparse
import atexit
import ctypes
import errno
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "python"))
import steptime  # noqa: E402

TASK_NS = 100000
ACL_NPUSIM_KERNEL_AICORE = 0
ACL_ERROR_RT_NO_DEVICE = 207004


class Acl:
    """The few ACL runtime calls a torch_npu-like framework makes."""

    def __init__(self):
        here = os.path.dirname(os.path.abspath(__file__))
        path = os.environ.get("ASCEND_ACL_LIB") or os.path.join(
            here, "..", "build", "runtime", "libascendcl.so")
        # RTLD_GLOBAL: libsteptime finds rtProfilerTraceEx by name, as it
        # finds CANN's on a real host.
        self.lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        self.lib.aclnpusimLaunchKernel.argtypes = [
            ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32]
        self.lib.aclrtSynchronizeStream.argtypes = [ctypes.c_void_p]
        self.lib.aclrtDestroyStream.argtypes = [ctypes.c_void_p]

    def check(self, ret, what):
        if ret:
            raise OSError(ret, "%s failed: %d" % (what, ret))

    def open(self):
        """The stream (an int pointer), or None when there is no device."""
        self.check(self.lib.aclInit(None), "aclInit")
        ret = self.lib.aclrtSetDevice(0)
        if ret == ACL_ERROR_RT_NO_DEVICE:
            return None
        self.check(ret, "aclrtSetDevice")
        stream = ctypes.c_void_p()
        self.check(self.lib.aclrtCreateStream(ctypes.byref(stream)),
                   "aclrtCreateStream")
        return stream.value

    def launch(self, stream, ntasks):
        self.check(self.lib.aclnpusimLaunchKernel(
            stream, ACL_NPUSIM_KERNEL_AICORE, ntasks, TASK_NS),
            "aclnpusimLaunchKernel")

    def sync(self, stream):
        self.check(self.lib.aclrtSynchronizeStream(stream),
                   "aclrtSynchronizeStream")

    def close(self, stream):
        if stream:
            self.check(self.lib.aclrtDestroyStream(stream), "aclrtDestroyStream")
            self.check(self.lib.aclrtResetDeviceForce(0), "aclrtResetDevice")
        self.check(self.lib.aclFinalize(), "aclFinalize")


class Model:
    """Layers are batches of device tasks; backward is twice forward."""

    def __init__(self, acl, stream, layers):
        self.acl = acl
        self.stream = stream
        self.layers = layers

    def _run(self, ntasks):
        if self.stream:
            self.acl.launch(self.stream, ntasks)
        else:
            time.sleep(ntasks * TASK_NS / 1e9)

    def forward(self, batch):
        self._run(self.layers)
        return batch

    def backward(self, loss):
        self._run(2 * self.layers)

    def optimizer_step(self):
        self._run(1)


def train_step(model, batch):
    loss = model.forward(batch)
    model.backward(loss)
    model.optimizer_step()


class Profiler:
    """torch_npu's profiler.step()/stop(): a "ProfilerStep#N" mstx range
    on the stream per step, each one ending where the next starts."""

    def __init__(self, stream):
        self.lib = steptime.lib
        self.lib.mstxRangeStartA.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
        self.lib.mstxRangeStartA.restype = ctypes.c_uint64
        self.lib.mstxRangeEnd.argtypes = [ctypes.c_uint64]
        self.stream = stream
        self.range = 0
        self.n = 0
        self.errors = set()

    def step(self):
        self.stop()
        self.range = self.lib.mstxRangeStartA(
            b"ProfilerStep#%d" % self.n, self.stream)
        if not self.range:
            self.errors.add(-errno.ENODEV)
        self.n += 1

    def stop(self):
        if self.range:
            self.lib.mstxRangeEnd(self.range)
        self.range = 0


def data_loader(n, load_s):
    for i in range(n):
        time.sleep(load_s)            # host work: steptime's "gap"
        yield i


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--load-ms", type=float, default=2.0)
    ap.add_argument("--framework-exit", action="store_true",
                    help="end as torch_npu does: ACL shut down at exit")
    ap.add_argument("--profiler", action="store_true",
                    help="mark steps as torch_npu's profiler: mstx ranges")
    args = ap.parse_args()

    acl = Acl()
    stream = acl.open()
    if args.framework_exit:
        atexit.register(acl.close, stream)
    model = Model(acl, stream, args.layers)
    errors = set()
    profiler = Profiler(stream) if args.profiler else None
    for batch in data_loader(args.steps, args.load_ms / 1000):
        if profiler:
            profiler.step()
            train_step(model, batch)
        else:
            with steptime.step(stream=stream) as st:
                train_step(model, batch)
            errors.update(st.errors)
        if stream:
            acl.sync(stream)          # like loss.item(): wait for the device
    if profiler:
        profiler.stop()
        errors.update(profiler.errors)

    if errors:
        print("torch_like: marks not recorded (%s): is steptime loaded?"
              % ", ".join(os.strerror(-e) for e in sorted(errors)))
    elif args.framework_exit:
        print("torch_like: pid %d, %d steps%s, ACL shut down at exit"
              % (os.getpid(), args.steps, " on npusim" if stream else ""))
        return 0
    else:
        # The last step's device time, before its stream goes away.
        steptime.flush()
        try:
            for s in steptime.steps(pid=os.getpid(), last=args.steps):
                dev_us = (s["device_time_ns"] or 0) / 1000
                host_us = (s["host_time_ns"] or 0) / 1000
                print("step %-4d %-10s host %8.1f us  device %8.1f us  "
                      "tasks %d" % (s["index_id"], s["state"], host_us,
                                    dev_us, s["tasks"]))
        except OSError as e:
            print("torch_like: cannot read steps: %s" % e)
    acl.close(stream)
    print("torch_like: %d steps%s" % (args.steps,
                                      " on npusim" if stream else " (host only)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
