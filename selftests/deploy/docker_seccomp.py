#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""docker_seccomp.py PODMAN-PROFILE OUT: Podman's seccomp profile with
Docker's rules for bpf() and perf_event_open(): allowed to CAP_BPF and
CAP_PERFMON respectively, or CAP_SYS_ADMIN, refused to anyone else by the
default action, EPERM as Docker's (Podman's: ENOSYS). Podman's own
(Debian 12's 4.3.1) refuses both without CAP_SYS_ADMIN, whatever else
the container has."""
import json
import sys

p = json.load(open(sys.argv[1]))
rules = []
for r in p["syscalls"]:
    ours = ("bpf", "perf_event_open")
    if any(n in ours for n in r["names"]):
        r["names"] = [x for x in r["names"] if x not in ours]
        if not r["names"]:
            continue
    rules.append(r)
for call, cap in (("bpf", "CAP_BPF"), ("perf_event_open", "CAP_PERFMON")):
    for c in (cap, "CAP_SYS_ADMIN"):
        rules.append({"names": [call], "action": "SCMP_ACT_ALLOW",
                      "includes": {"caps": [c]}})
p["syscalls"] = rules
p["defaultErrnoRet"] = 1
p.pop("defaultErrno", None)
json.dump(p, open(sys.argv[2], "w"))
