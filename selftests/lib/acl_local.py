#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The ACL runtime loaded RTLD_LOCAL, as Python's ctypes.CDLL and extension
modules load torch_npu's libraries: its names are not in the global scope,
and libsteptime (loaded first, by the steptime module) must still find
rtProfilerTraceEx and the aclrt* event calls there (by soname, RTLD_NOLOAD)
so that every stream-marked step gets its device time.

In the VM only (npusim loaded, steptime loaded at STEPTIME_PIN_DIR), from
selftests/lib/lib_e2e.sh: exits 0 when every step is done with a device
time, else prints why and exits 1."""
import ctypes
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
import steptime  # noqa: E402

STEPS = 5
TASK_NS = 100000


def main():
    path = os.environ.get("ASCEND_ACL_LIB") or os.path.join(
        HERE, "..", "..", os.environ.get("O", "build"), "runtime",
        "libascendcl.so")
    acl = ctypes.CDLL(path)             # RTLD_LOCAL: ctypes' default
    if hasattr(ctypes.CDLL(None), "rtProfilerTraceEx"):
        print("acl_local: rtProfilerTraceEx is global: not the case tested")
        return 1
    acl.aclnpusimLaunchKernel.argtypes = [
        ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32]
    acl.aclrtSynchronizeStream.argtypes = [ctypes.c_void_p]
    acl.aclrtDestroyStream.argtypes = [ctypes.c_void_p]
    stream = ctypes.c_void_p()
    if acl.aclInit(None) or acl.aclrtSetDevice(0) or \
            acl.aclrtCreateStream(ctypes.byref(stream)):
        print("acl_local: no npusim device through the ACL runtime")
        return 1
    ids = []
    for i in range(STEPS):
        with steptime.step(stream.value, strict=True) as s:
            if acl.aclnpusimLaunchKernel(stream.value, 0, i + 1, TASK_NS):
                print("acl_local: kernel launch failed")
                return 1
            ids.append(s.index_id)
    acl.aclrtSynchronizeStream(stream.value)
    if steptime.flush():
        print("acl_local: steptime.flush() failed")
        return 1
    got = {s["index_id"]: s for s in steptime.steps(pid=os.getpid())}
    bad = [(i, got.get(i)) for i in ids
           if i not in got or got[i]["state"] != "done" or
           not got[i]["device_time_ns"] or got[i]["stream"] is None]
    acl.aclrtDestroyStream(stream.value)
    acl.aclrtResetDeviceForce(0)
    acl.aclFinalize()
    if bad:
        print("acl_local: steps without device time: %r" % bad)
        return 1
    print("acl_local: %d stream steps, each with its device time: %s" %
          (STEPS, [got[i]["device_time_ns"] for i in ids]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
