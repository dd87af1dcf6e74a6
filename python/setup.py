# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""`pip install ./python` builds, from the source tree around python/:

  - steptime/libsteptime.so.1: libsteptime itself (lib/Build.mk's APP_SRCS,
    its flags and version script), which the module loads first when
    $STEPTIME_LIB does not name another: the package runs with nothing else
    installed;
  - steptime._steptime: step() in C (python/steptime/_steptime.c).

The rest (name, version, packages) is pyproject.toml's. Without the source
tree (python/ copied alone) neither is built: the package then needs a
libsteptime on the system, and step() runs through ctypes.
"""
import os
import re
import subprocess
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TREE = os.path.exists(os.path.join(ROOT, "lib", "libsteptime.map"))
SONAME = "libsteptime.so.1"


def app_srcs():
    """lib/Build.mk's APP_SRCS: one list of the library's sources."""
    with open(os.path.join(ROOT, "lib", "Build.mk")) as f:
        mk = f.read()
    m = re.search(r"^APP_SRCS\s*:=((?:.*\\\n)*.*)$", mk, re.M)
    return m.group(1).replace("\\\n", " ").split()


class BuildLib(build_ext):
    """build_ext, after building libsteptime.so.1 into the package."""

    def run(self):
        if TREE:
            self.build_lib_so()
        super().run()

    def build_lib_so(self):
        top = HERE if self.inplace else self.build_lib
        out = os.path.abspath(os.path.join(top, "steptime", SONAME))
        os.makedirs(os.path.dirname(out), exist_ok=True)
        cc = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
        # The Makefile's ALL_CFLAGS and LIB_CFLAGS, for the app objects.
        cflags = ["-std=gnu11", "-O2", "-g", "-fPIC", "-D_GNU_SOURCE",
                  "-fvisibility=hidden", "-Iinclude", "-Iinclude/uapi",
                  "-Ilib", "-include", "lib/bpf_sys.h"]
        ldflags = ["-shared", "-Wl,-soname," + SONAME,
                   "-Wl,--version-script=lib/libsteptime.map", "-Wl,-z,defs",
                   "-Wl,--as-needed"]
        cmd = cc.split() + cflags + ldflags + ["-o", out] + app_srcs()
        self.announce("building " + SONAME + ": " + " ".join(cmd), level=2)
        subprocess.check_call(cmd, cwd=ROOT)


ext = []
if TREE:
    ext = [Extension("steptime._steptime", ["steptime/_steptime.c"],
                     include_dirs=[os.path.join(ROOT, "include"),
                                   os.path.join(ROOT, "include", "uapi")],
                     extra_compile_args=["-std=gnu11",
                                         "-fvisibility=hidden"])]

setup(ext_modules=ext, cmdclass={"build_ext": BuildLib})
