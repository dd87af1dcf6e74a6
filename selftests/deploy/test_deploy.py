#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""deploy/'s files, as far as this host runs them (TAP).

  - every YAML and JSON file of deploy/ parses (the Grafana dashboard's
    queries run in selftests/observe's test_dashboard_queries); each
    Kubernetes object names its apiVersion, kind, name and the one namespace;
  - deploy/k8s/prometheusrule.yaml is gen-prometheusrule.sh's output, and
    its spec.groups are deploy/prometheus/steptime.rules.yml's groups;
  - the DaemonSet, Service and ServiceMonitor fit together (selectors,
    ports, the loader and exporter commands, the exporter's capabilities);
  - deploy/Containerfile's image (`make image`, FROM scratch) loads with
    the capabilities deploy/README.md states and fails naming each one
    left out; its exporter runs with those stated for it and is scraped
    (root and podman, else SKIP; a host that cannot load BPF: SKIP);
  - the DaemonSet's pod, from that image, runs under `podman kube play` (root, podman and
    catatonit needed, else SKIP): its init container loads steptime on the
    host, its exporter serves it; played again the load is found with the
    same settings (exit 0) and the exporter serves again; with other
    settings the init container exits 3 naming them and no exporter starts;
  - the Slurm prolog starts an exporter per job, written as a file_sd
    target, and the epilog stops it (root, else SKIP);
  - the systemd drop-ins set only variables their units use.
Debian's python3 (python3-yaml): /usr/bin/python3.
"""
import glob
import json
import os
import re
import shutil
import sys
import tempfile
import urllib.request

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))),
                                "observe"))
import tap  # noqa: E402  selftests/observe/tap.py
from tap import ROOT, O, CLI  # noqa: E402


def run(*args, check=True, timeout=300, **kw):
    return tap.run(*args, check=check, timeout=timeout, **kw)


def wait_for(what, fn, timeout=120.0):
    return tap.wait_for(what, fn, timeout)


STATIC = os.path.join(O, "steptime-static")
DEPLOY = os.path.join(ROOT, "deploy")
K8S = os.path.join(DEPLOY, "k8s")
NS = "steptime"
# What `load` needs on this host, which has no NPU (selftests/loader's).
FAKE_DEV = ["--device", "/dev/full", "--freq", "100000000", "--stars", "1"]


def scrape(port):
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5) as r:
        return r.read().decode()


def docs(path):
    return [d for d in yaml.safe_load_all(open(path)) if d is not None]


def k8s_objects():
    """{kind: object} of deploy/k8s/ (one object of each kind)."""
    out = {}
    for f in sorted(glob.glob(os.path.join(K8S, "*.yaml"))):
        for d in docs(f):
            assert d["kind"] not in out, "two %s" % d["kind"]
            out[d["kind"]] = d
    return out


def test_yaml_parses():
    files = sorted(glob.glob(os.path.join(DEPLOY, "**", "*.y*ml"), recursive=True))
    k8s = [f for f in files if f.startswith(K8S + "/")]
    assert len(k8s) >= 4, "deploy/k8s/ holds %r" % k8s
    for f in files:
        assert docs(f), "%s: no document" % f
    for f in k8s:
        for d in docs(f):
            where = "%s: %s" % (os.path.relpath(f, ROOT), d.get("kind"))
            for key in ("apiVersion", "kind", "metadata"):
                assert key in d, "%s: no %s" % (where, key)
            assert d["metadata"].get("name"), "%s: no name" % where
            if d["kind"] == "Namespace":
                assert d["metadata"]["name"] == NS, where
            else:
                assert d["metadata"].get("namespace") == NS, "%s: namespace %r" % (
                    where, d["metadata"].get("namespace"))


def test_json_parses():
    files = sorted(glob.glob(os.path.join(DEPLOY, "**", "*.json"), recursive=True))
    assert os.path.join(DEPLOY, "grafana", "steptime.json") in files, files
    for f in files:
        assert isinstance(json.load(open(f)), dict), f


def test_prometheusrule_generated():
    """One source: the PrometheusRule is the rule file's groups, as the
    script writes them."""
    committed = os.path.join(K8S, "prometheusrule.yaml")
    with tempfile.TemporaryDirectory() as t:
        out = os.path.join(t, "prometheusrule.yaml")
        run(os.path.join(K8S, "gen-prometheusrule.sh"), out)
        assert open(out).read() == open(committed).read(), \
            "deploy/k8s/prometheusrule.yaml is not gen-prometheusrule.sh's output: run it"
    rule = k8s_objects()["PrometheusRule"]
    assert rule["apiVersion"] == "monitoring.coreos.com/v1", rule["apiVersion"]
    groups = yaml.safe_load(open(os.path.join(DEPLOY, "prometheus", "steptime.rules.yml")))["groups"]
    assert rule["spec"]["groups"] == groups, "spec.groups differ from steptime.rules.yml's groups"
    assert sum(len(g["rules"]) for g in groups) >= 12


def containers(pod):
    return {c["name"]: c for c in pod.get("initContainers", []) + pod["containers"]}


def test_k8s_consistent():
    o = k8s_objects()
    ds, svc, mon = o["DaemonSet"], o["Service"], o["ServiceMonitor"]
    tmpl = ds["spec"]["template"]
    labels = tmpl["metadata"]["labels"]
    sel = ds["spec"]["selector"]["matchLabels"]
    assert sel.items() <= labels.items(), (sel, labels)
    pod = tmpl["spec"]
    assert pod.get("hostPID") is True, "the exporter labels processes by kernel pid"
    init, = pod["initContainers"]
    c, = pod["containers"]
    assert init["command"] == ["/steptime"] and init["args"][0] == "load", init
    assert init["securityContext"].get("privileged") is True
    assert c["command"] == ["/steptime"] and c["args"][0] == "export", c
    caps = c["securityContext"]["capabilities"]
    assert caps["drop"] == ["ALL"], caps
    # deploy/README.md: what the exporter needs, and no more.
    assert sorted(caps["add"]) == ["BPF", "DAC_READ_SEARCH", "SYS_PTRACE"], caps
    assert not c["securityContext"].get("privileged")
    # One image for both, the one `make image` builds (deploy/Containerfile).
    made = re.search(r" -t (\S+) ", run("make", "-C", ROOT, "-s", "-n", "--no-print-directory",
                                        "O=" + O, "image").stdout)
    assert made, "make -n image names no image"
    assert init["image"] == c["image"] == made.group(1), (init["image"], c["image"], made.group(1))
    vols = {v["name"]: v for v in pod["volumes"]}
    for ctr, ro in ((init, False), (c, True)):
        m = [m for m in ctr["volumeMounts"] if m["mountPath"] == "/sys/fs/bpf"]
        assert m and vols[m[0]["name"]]["hostPath"]["path"] == "/sys/fs/bpf", ctr["name"]
        assert bool(m[0].get("readOnly")) == ro, (ctr["name"], m)
    listen = c["args"][c["args"].index("--listen") + 1]
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    assert int(listen.rsplit(":", 1)[1]) == ports["metrics"], (listen, ports)
    assert svc["spec"]["selector"].items() <= labels.items(), svc["spec"]["selector"]
    sports = {p["name"]: p for p in svc["spec"]["ports"]}
    assert sports["metrics"]["targetPort"] in ports, sports
    assert mon["spec"]["selector"]["matchLabels"].items() <= svc["metadata"]["labels"].items()
    assert NS in mon["spec"]["namespaceSelector"]["matchNames"]
    for ep in mon["spec"]["endpoints"]:
        assert ep["port"] in sports, ep


# --------------------------------------------------------------------------
# The pod under podman kube play
# --------------------------------------------------------------------------

def podman_skip():
    if os.geteuid() != 0:
        return "needs root (loads BPF, runs podman)"
    if not shutil.which("podman"):
        return "no podman (make deps-check installs it)"
    if not os.path.exists(STATIC):
        return "no %s (make)" % STATIC
    return None


PODMAN = {}


def podman_setup():
    """Podman with its images and state in a directory of its own, and
    the image of deploy/Containerfile built in it by `make image` under
    the DaemonSet's image name (FROM scratch: nothing to pull). Once per
    run; main() removes it.

    Docker's rules for bpf() and perf_event_open() (allowed with CAP_BPF,
    CAP_PERFMON), which Kubernetes runtimes' default profiles have and
    Podman's lacks (deploy/README.md). Root here lacks CAP_SYS_RESOURCE:
    rlimits no higher than the host's, where podman's defaults are."""
    if PODMAN:
        return PODMAN
    t = tempfile.mkdtemp(prefix="steptime_podman_")
    PODMAN["dir"] = t
    env = dict(os.environ, CONTAINERS_CONF=os.path.join(t, "containers.conf"),
               CONTAINERS_STORAGE_CONF=os.path.join(t, "storage.conf"))
    run("/usr/bin/python3", os.path.join(ROOT, "selftests", "deploy", "docker_seccomp.py"),
        "/usr/share/containers/seccomp.json", os.path.join(t, "seccomp.json"))
    open(env["CONTAINERS_STORAGE_CONF"], "w").write(
        '[storage]\ndriver = "vfs"\ngraphroot = "%s/graph"\nrunroot = "%s/run"\n' % (t, t))
    open(env["CONTAINERS_CONF"], "w").write(
        '[containers]\nseccomp_profile = "%s/seccomp.json"\nlog_driver = "k8s-file"\n'
        'default_ulimits = ["nofile=1024:1024", "nproc=1000:1000"]\n'
        '[engine]\nruntime = "runc"\n' % t)
    image = k8s_objects()["DaemonSet"]["spec"]["template"]["spec"]["containers"][0]["image"]
    run("make", "-C", ROOT, "--no-print-directory", "-s", "O=" + O, "IMAGE=" + image,
        "image", env=env)
    PODMAN.update(env=env, image="localhost/" + image)
    return PODMAN


def podman_cleanup():
    if PODMAN:
        run("podman", "rmi", "-a", "-f", check=False, env=PODMAN["env"])
        shutil.rmtree(PODMAN["dir"], ignore_errors=True)


def readme_block(marker):
    """The indented block after <!-- MARKER: ... --> in deploy/README.md,
    its continuation lines joined."""
    text = open(os.path.join(DEPLOY, "README.md")).read()
    i = text.index("<!-- %s:" % marker)
    block = []
    for line in text[i:].split("\n")[2:]:
        if not line.startswith("    "):
            break
        block.append(line.strip())
    return " ".join(block).replace("\\ ", "")


def stated_caps(marker):
    """The capabilities deploy/README.md's block gives the container."""
    block = readme_block(marker)
    assert "--cap-drop ALL" in block, block
    return sorted(re.findall(r"--cap-add (\w+)", block))


def cap_mask(names):
    numbers = {"SYS_PTRACE": 19, "SYS_ADMIN": 21, "DAC_READ_SEARCH": 2,
               "PERFMON": 38, "BPF": 39, "SYS_RESOURCE": 24}
    return sum(1 << numbers[n] for n in names)


def test_image_load_export():
    """deploy/Containerfile's image on this host: `steptime load` in it with
    the capabilities deploy/README.md states, and without each of them
    (refused, naming it); the exporter in it with its own, scraped."""
    why = podman_skip()
    if why:
        return why
    p = podman_setup()
    env, image = p["env"], p["image"]
    pin = "/sys/fs/bpf/steptime_image_%d" % os.getpid()
    port = 18775 + os.getpid() % 1000
    # The host's BTF and tracefs: the loader's, which it cannot mount
    # without CAP_SYS_ADMIN (deploy/README.md).
    for path in ("/sys/kernel/btf/vmlinux", "/sys/kernel/tracing/events"):
        if not os.path.exists(path):
            return "no %s on this host" % path
    load_caps = stated_caps("image-load")
    export_caps = stated_caps("image-export")
    # No NPU here: the loader's device is /dev/null, the container's too.
    load_args = ["load", "--pin", pin, "--device", "/dev/null",
                 "--freq", "100000000", "--stars", "1"]

    def podman(*args, check=True):
        return run("podman", *args, check=check, env=env)

    def load(caps):
        return podman("run", "--rm", "--pid=host", "--network=none", "--cap-drop", "ALL",
                      *["--cap-add=" + c for c in caps],
                      "-v", "/sys/fs/bpf:/sys/fs/bpf",
                      "-v", "/sys/kernel/tracing:/sys/kernel/tracing",
                      "--device", "/dev/null", image, *load_args, check=False)

    name = "steptime-image-test-export"
    try:
        run(CLI, "unload", "--pin", pin, check=False)
        for drop in load_caps:
            r = load([c for c in load_caps if c != drop])
            out = r.stdout + r.stderr
            assert r.returncode == 1, "load without CAP_%s: exit %d: %s" % (drop, r.returncode, out)
            assert "CAP_%s missing" % drop in out, "load without CAP_%s: %s" % (drop, out)
            assert not os.path.exists(pin), "load without CAP_%s pinned %s" % (drop, pin)
        r = load(load_caps)
        out = r.stdout + r.stderr
        if r.returncode != 0:
            h = run(CLI, *load_args, check=False)
            run(CLI, "unload", "--pin", pin, check=False)
            if h.returncode != 0:
                return "this host cannot load steptime: %s" % (h.stdout + h.stderr).strip()
            raise AssertionError("load in the image, %s: exit %d: %s" % (load_caps, r.returncode, out))
        assert "steptime: loaded on /dev/null" in out, out
        assert os.path.exists(os.path.join(pin, "steps")), "no pins on the host"

        podman("run", "-d", "--name", name, "--pid=host", "--network=host",
               "--cap-drop", "ALL", *["--cap-add=" + c for c in export_caps],
               "-v", "/sys/fs/bpf:/sys/fs/bpf:ro", "--device", "/dev/null", image,
               "export", "--listen", "127.0.0.1:%d" % port, "--pin", pin)
        m = wait_for("the image's exporter", lambda: scrape(port))
        assert "steptime_loaded 1\n" in m, m
        assert re.search(r'steptime_build_info\{version="%s"' % re.escape(
            run(CLI, "--version").stdout.split()[1]), m), m
        # Its capabilities: those stated, no more.
        pid = podman("inspect", "--format", "{{.State.Pid}}", name).stdout.strip()
        status = open("/proc/%s/status" % pid).read()
        eff = int(re.search(r"^CapEff:\s*(\w+)", status, re.M).group(1), 16)
        assert eff == cap_mask(export_caps), "exporter CapEff %#x, stated %s (%#x)" % (
            eff, export_caps, cap_mask(export_caps))
    finally:
        podman("rm", "-f", name, check=False)
        run(CLI, "unload", "--pin", pin, check=False)


def test_podman_kube_play():
    why = podman_skip()
    if why:
        return why
    if not (shutil.which("catatonit") or os.path.exists("/usr/libexec/podman/catatonit")):
        return "no catatonit: podman kube play builds its pod's infra image from it"
    p = podman_setup()
    env, image = p["env"], p["image"]
    pin = "/sys/fs/bpf/steptime_kube_%d" % os.getpid()
    port = 19775 + os.getpid() % 1000

    def podman(*args, check=True):
        return run("podman", *args, check=check, env=env)

    def logs(name):
        p = podman("logs", "steptime-kube-test-" + name)
        return p.stdout + p.stderr

    def pod_yaml(load_extra):
        """The DaemonSet's pod as a Pod, changed only where this host or
        podman needs it (said at each change)."""
        ds = k8s_objects()["DaemonSet"]
        spec = ds["spec"]["template"]["spec"]
        # No NPU node to select, no cluster priorities.
        for k in ("nodeSelector", "priorityClassName", "tolerations"):
            spec.pop(k, None)
        # Podman 4.3 restarts an exited init container under the pod's
        # restart policy (podman issue 16343), Kubernetes does not: Never,
        # so that its exit code stays to be read.
        spec["restartPolicy"] = "Never"
        # No Ascend driver here: not created on this host by hostPath.
        spec["volumes"] = [v for v in spec["volumes"] if v["name"] != "ascend-driver"]
        init, c = spec["initContainers"][0], spec["containers"][0]
        init["volumeMounts"] = [m for m in init["volumeMounts"] if m["name"] != "ascend-driver"]
        # This test's image and pins, a device and port of this host's.
        for ctr in (init, c):
            ctr["image"] = image
            ctr["args"] = ctr["args"] + ["--pin", pin]
        init["args"] += FAKE_DEV + load_extra
        i = c["args"].index("--listen") + 1
        c["args"][i] = c["args"][i].rsplit(":", 1)[0] + ":%d" % port
        c["ports"][0]["containerPort"] = port
        c["ports"][0]["hostPort"] = port
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": "steptime-kube-test",
                            "labels": ds["spec"]["template"]["metadata"]["labels"],
                            # Podman 4.3 removes a "once" init container
                            # as it exits and can race it (podman issue
                            # 18477); "always" keeps its exit code and log.
                            "annotations": {"io.podman.annotations.init.container.type": "always"}},
               "spec": spec}
        path = os.path.join(PODMAN["dir"], "pod.yaml")
        yaml.safe_dump(pod, open(path, "w"))
        return path

    def state(name):
        p = podman("inspect", "--format", "{{.State.Status}} {{.State.ExitCode}}",
                   "steptime-kube-test-" + name, check=False)
        return p.stdout.split() if p.returncode == 0 else None

    def serving():
        return "steptime_loaded 1\n" in scrape(port)

    try:
        run(CLI, "unload", "--pin", pin, check=False)
        podman("kube", "play", pod_yaml([]))
        wait_for("the pod's exporter to serve the load", serving)
        assert os.path.exists(os.path.join(pin, "steps")), "the pins are not on the host"
        first = logs("load")
        assert "steptime: loaded on /dev/full" in first, first
        def load_id():
            """The load's pinned info map, and status's account of it
            (not its age, nor the counters, which the host's ioctls move)."""
            st = os.stat(os.path.join(pin, "info"))
            out = run(CLI, "status", "--pin", pin).stdout
            return st.st_ino, st.st_ctime_ns, out.split("counters:")[0].split("\n")[1:]
        info = load_id()

        # A restarted pod: its init container finds the same load.
        podman("kube", "play", "--replace", pod_yaml([]))
        wait_for("the replaced pod's exporter", serving)
        assert state("load") == ["exited", "0"], state("load")
        again = logs("load")
        assert "steptime: already loaded at %s with these settings" % pin in again, again
        assert load_id() == info, "the load changed: %r, then %r" % (info, load_id())

        # Other settings: exit 3, the difference named, no exporter.
        p = podman("kube", "play", "--replace", pod_yaml(["--mode", "0644"]), check=False)
        wait_for("the init container to exit", lambda: (state("load") or [""])[0] == "exited")
        assert state("load") == ["exited", "3"], (state("load"), p.stdout, p.stderr)
        log = logs("load")
        assert "with other settings: --mode: the maps' mode is 0600, not 0644" in log, log
        assert (state("export") or [""])[0] != "running", state("export")
    finally:
        podman("pod", "rm", "-f", "steptime-kube-test", check=False)
        run(CLI, "unload", "--pin", pin, check=False)


# --------------------------------------------------------------------------
# Slurm and bare hosts
# --------------------------------------------------------------------------

def test_slurm_prolog_epilog():
    if os.geteuid() != 0:
        return "needs root (loads BPF)"
    t = tempfile.mkdtemp(prefix="steptime_slurm_")
    pin = "/sys/fs/bpf/steptime_slurm_%d" % os.getpid()
    first = 29800 + os.getpid() % 100 * 10
    env = dict(os.environ, STEPTIME=CLI, STEPTIME_PIN_DIR=pin,
               STEPTIME_LOAD_ARGS=" ".join(FAKE_DEV), STEPTIME_RUN_DIR=os.path.join(t, "run"),
               STEPTIME_SD_DIR=os.path.join(t, "sd"),
               STEPTIME_PORTS="%d-%d" % (first, first + 9))
    jobs = ("101", "102")
    pids = []

    def script(name, job):
        return run(os.path.join(DEPLOY, "slurm", name), env=dict(env, SLURM_JOB_ID=job))

    try:
        for job in jobs:
            script("prolog.sh", job)
        ports = []
        for job in jobs:
            sd = json.load(open(os.path.join(t, "sd", "job_%s.json" % job)))
            assert sd[0]["labels"] == {"slurm_job_id": job}, sd
            ports.append(int(sd[0]["targets"][0].rsplit(":", 1)[1]))
            m = scrape(ports[-1])
            assert "steptime_loaded 1\n" in m, m
        assert ports == [first, first + 1], ports
        pids += [open(os.path.join(t, "run", "job_%s.pid" % j)).read().strip() for j in jobs]
        cmd = open("/proc/%s/cmdline" % pids[0]).read().split("\0")
        assert cmd[cmd.index("--cgroup") + 1] == "/system.slice/slurmstepd.scope/job_101", cmd
        for job in jobs:
            script("epilog.sh", job)
        for pid in pids:
            assert not os.path.exists("/proc/%s" % pid), "exporter %s still runs" % pid
        assert os.listdir(os.path.join(t, "sd")) == [], os.listdir(os.path.join(t, "sd"))
        assert os.path.exists(os.path.join(pin, "steps")), "the epilog unloaded steptime"
    finally:
        # Those the prolog started that still run (a failed epilog).
        pids += [open(f).read().strip() for f in glob.glob(os.path.join(t, "run", "*.pid"))]
        for pid in pids:
            run("kill", pid, check=False)
        run(CLI, "unload", "--pin", pin, check=False)
        shutil.rmtree(t, ignore_errors=True)


def test_systemd_dropins():
    """Each drop-in sets, in [Service], only variables its unit uses."""
    found = glob.glob(os.path.join(DEPLOY, "systemd", "*.service.d", "*.conf"))
    assert len(found) >= 2, found
    for f in found:
        unit = open(os.path.dirname(f)[:-2]).read()
        text = open(f).read()
        assert re.findall(r'^\[(\w+)\]', text, re.M) == ["Service"], f
        for var in re.findall(r'^Environment="?(\w+)=', text, re.M):
            assert re.search(r'\$\{?%s\b' % var, unit), "%s: %s is not used by its unit" % (f, var)


def main():
    print("TAP version 13")
    tests = [(n, f) for n, f in globals().items() if n.startswith("test_") and
             (len(sys.argv) < 2 or any(a in n for a in sys.argv[1:]))]
    print("1..%d" % len(tests))
    try:
        for n, f in tests:
            tap.tap(n, f)
    finally:
        podman_cleanup()
    return tap.status()


if __name__ == "__main__":
    sys.exit(main())
