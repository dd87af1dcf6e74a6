#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""docker_seccomp.py PODMAN-PROFILE OUT: Podman's seccomp profile with
Docker's rule for bpf(): allowed to CAP_BPF or CAP_SYS_ADMIN, refused to
anyone else by the default action, EPERM as Docker's (Podman's: ENOSYS).
Podman's own (Debian 12's 4.3.1) refuses bpf() without CAP_SYS_ADMIN,
whatever else the container has."""
import json
import sys

p = json.load(open(sys.argv[1]))
rules = []
for r in p["syscalls"]:
    if "bpf" in r["names"]:
        r["names"] = [x for x in r["names"] if x != "bpf"]
        if not r["names"]:
            continue
    rules.append(r)
for cap in ("CAP_BPF", "CAP_SYS_ADMIN"):
    rules.append({"names": ["bpf"], "action": "SCMP_ACT_ALLOW",
                  "includes": {"caps": [cap]}})
p["syscalls"] = rules
p["defaultErrnoRet"] = 1
p.pop("defaultErrno", None)
json.dump(p, open(sys.argv[2], "w"))
