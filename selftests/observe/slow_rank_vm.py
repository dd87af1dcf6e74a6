#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Slow ranks end to end on npusim, in the VM (run by selftests/run_vm.sh).

steptime is loaded with its BPF program; `steptime export` serves metrics on
loopback; Debian's prometheus scrapes it every second and evaluates
deploy/prometheus/steptime.rules.yml every second. Then:
  1. a healthy job: 4 ranks (RANK 0-3, JOB_ID healthy) on npusim devices
     0-3, equal work: no alert is ever pending or firing, while the job's
     median was recorded;
  2. a job with a slow rank: the same, with device 3 slowed through npusim's
     per-device config (duration_pct 300): SteptimeSlowRank fires for rank 3
     only, within 3 scrapes of the first scrape at which rank 3 had 3
     finished steps;
  3. the values Prometheus stored equal `steptime stat`'s for the job.
npusim is reloaded with 4 devices and reloaded as run_vm.sh left it at the
end. Prints TAP.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
O = os.environ.get("O", "build")
O = O if os.path.isabs(O) else os.path.join(ROOT, O)
CLI = os.path.join(O, "steptime")
RANK = os.path.join(O, "selftests", "observe", "rank")
KO = os.path.join(O, "kmod", os.uname().release, "npusim.ko")
RULES = os.path.join(ROOT, "deploy", "prometheus", "steptime.rules.yml")
PIN = "/sys/fs/bpf/steptime_slowrank"
NRANKS = 4
SLOW_RANK = 3
SLOW_PCT = 300
SCRAPES_BOUND = 3

n = 0
failed = False


def ok(cond, name, why=""):
    global n, failed
    n += 1
    if cond:
        print("ok %d %s" % (n, name))
    else:
        failed = True
        print("not ok %d %s%s" % (n, name, " # " + why if why else ""))
    sys.stdout.flush()


def skip(name, why):
    global n
    n += 1
    print("ok %d %s # SKIP %s" % (n, name, why))


def wait_for(what, fn, timeout):
    end = time.monotonic() + timeout
    last = None
    while time.monotonic() < end:
        try:
            v = fn()
            if v:
                return v
        except Exception as e:  # not ready yet
            last = e
        time.sleep(0.1)
    raise TimeoutError("%s (last: %r)" % (what, last))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def sh(*args, check=True):
    p = subprocess.run(args, capture_output=True, text=True, timeout=120)
    if p.returncode < 0 and shutil.which("gdb"):
        g = subprocess.run(["gdb", "-batch", "-ex", "run", "-ex", "bt", "--args"] + list(args),
                           capture_output=True, text=True, timeout=300)
        print("\n".join("# " + l for l in g.stdout.splitlines()[-25:]))
    if check and p.returncode:
        raise RuntimeError("%s: exit %d: %s%s" % (args, p.returncode, p.stdout, p.stderr))
    return p


class Prom:
    def __init__(self, tmp, exporter_port):
        self.port = free_port()
        cfg = os.path.join(tmp, "prometheus.yml")
        with open(cfg, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                    "rule_files:\n  - %s\n"
                    "scrape_configs:\n  - job_name: steptime\n    static_configs:\n"
                    "      - targets: ['127.0.0.1:%d']\n" % (RULES, exporter_port))
        self.proc = subprocess.Popen(
            ["prometheus", "--config.file", cfg, "--storage.tsdb.path",
             os.path.join(tmp, "data"), "--web.listen-address", "127.0.0.1:%d" % self.port],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "prom.log"), "w"))

    def api(self, path, **params):
        url = "http://127.0.0.1:%d/api/v1/%s?%s" % (self.port, path, urllib.parse.urlencode(params))
        with urllib.request.urlopen(url, timeout=20) as r:
            res = json.load(r)
        assert res["status"] == "success", res
        return res["data"]

    def query(self, q):
        return self.api("query", query=q)["result"]

    def up(self):
        t = self.api("targets")["activeTargets"]
        return t and t[0]["health"] == "up"

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def npusim_devices():
    """The device-count parameter of this npusim, or None."""
    p = sh("modinfo", "-F", "parm", KO, check=False)
    return any(l.startswith("devices:") for l in p.stdout.splitlines())


def reload_npusim(params):
    sh("rmmod", "npusim", check=False)
    sh("insmod", KO, *params)


def set_duration_pct(device, pct):
    sh(RANK, "--device", str(device), "--set-duration-pct", str(pct))


DEV_MODE = os.environ.get("OBS_SLOWRANK_DEV") == "1"


def start_ranks(job, seconds, slow=None):
    """4 ranks that step for @seconds, then stay alive until SIGTERM.

    OBS_SLOWRANK_DEV=1 (development on a single-device npusim only): every
    rank on device 0, the slow one with 3x longer tasks from the app.
    """
    procs = []
    for r in range(NRANKS):
        env = dict(os.environ, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(NRANKS),
                   JOB_ID=job, DEVICE_ID=str(r), STEPTIME_PIN_DIR=PIN)
        args = [RANK, "--device", "0" if DEV_MODE else str(r), "--seconds", str(seconds),
                "--linger", "1"]
        if DEV_MODE and r == slow:
            args += ["--task-ns", str(200000 * SLOW_PCT // 100)]
        procs.append(subprocess.Popen(args, env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True))
    return procs


def wait_done(procs):
    """The ranks' "N steps" lines, once each finished stepping."""
    lines = []
    for p in procs:
        line = p.stdout.readline().strip()
        if "steps" not in line:
            raise RuntimeError("a rank failed: %r (exit %r)" % (line, p.poll()))
        lines.append(line)
    return lines


def stop(procs):
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
        p.wait(timeout=60)


def compare(prom, job):
    """After two more scrapes, Prometheus holds exactly stat's figures."""
    def scrapes():
        r = prom.query("steptime_exporter_scrapes_total")
        return int(float(r[0]["value"][1])) if r else 0
    first = scrapes()
    wait_for("two more scrapes", lambda: scrapes() >= first + 2, 30)
    stat = json.loads(sh(CLI, "stat", "--pin", PIN, "-o", "json").stdout)
    env_pids = {}
    want = {}
    for s in stat:
        if s["state"] == "open":
            continue
        w = want.setdefault(str(s["pid"]), [0, 0, 0])
        w[0] += s["device_time_ns"] is not None
        w[1] += s["tasks"]
        w[2] = max(w[2], s["index_id"])
    got = {}
    for name, i in (("steptime_step_device_seconds_count", 0), ("steptime_tasks_total", 1),
                    ("steptime_last_step_id", 2)):
        for x in prom.query('%s{job_id="%s"}' % (name, job)):
            got.setdefault(x["metric"]["pid"], [0, 0, 0])[i] = int(float(x["value"][1]))
    want = {p: w for p, w in want.items() if p in got}
    return len(got) == NRANKS and got == want, "prometheus %r, stat %r" % (got, want)


def main():
    print("TAP version 13")
    print("1..8")
    if not shutil.which("prometheus"):
        print("Bail out! no prometheus (scripts/deps.sh installs it)")
        return 1
    if not npusim_devices() and not DEV_MODE:
        for name in ("npusim with 4 devices", "healthy run", "healthy: no alert",
                     "slow run", "slow rank alert fires for rank 3 only",
                     "alert within %d scrapes" % SCRAPES_BOUND,
                     "prometheus equals steptime stat", "npusim restored"):
            skip(name, "this npusim has no devices parameter (multi-device npusim not merged)")
        return 0
    # The guest boots without a network: loopback only, brought up here.
    sh("ip", "link", "set", "lo", "up", check=False)
    tmp = tempfile.mkdtemp(prefix="steptime_slowrank_")
    exporter = prom = None
    try:
        if not DEV_MODE:
            reload_npusim(["devices=%d" % NRANKS])
        ok(True, "npusim with 4 devices" + (" (OBS_SLOWRANK_DEV: 1 device)" if DEV_MODE else ""))
        sh(CLI, "unload", "--pin", PIN, check=False)
        sh(CLI, "load", "--pin", PIN)
        eport = free_port()
        exporter = subprocess.Popen([CLI, "export", "--pin", PIN, "--listen",
                                     "127.0.0.1:%d" % eport, "--interval", "0.5"],
                                    stderr=subprocess.DEVNULL)
        prom = Prom(tmp, eport)
        wait_for("prometheus scraping the exporter", prom.up, 120)

        # 1. Healthy.
        procs = start_ranks("healthy", 15)
        try:
            lines = wait_done(procs)
            print("# " + "; ".join(lines))
            ok(True, "healthy run")
            good, why = compare(prom, "healthy")
        finally:
            stop(procs)
        rec = prom.query('count_over_time(steptime_job:device_step_seconds:median{job_id="healthy"}[10m])')
        alerts = prom.query('count_over_time(ALERTS{job_id="healthy"}[10m])')
        ok(rec and float(rec[0]["value"][1]) >= 5 and not alerts, "healthy: no alert",
           "median samples %r, alerts %r" % (rec, alerts))

        # 2. Rank 3's device slowed through npusim's config.
        if not DEV_MODE:
            set_duration_pct(SLOW_RANK, SLOW_PCT)
        procs = start_ranks("slow", 20, slow=SLOW_RANK)
        try:
            fired = wait_for("SteptimeSlowRank", lambda: prom.query(
                'ALERTS{alertname="SteptimeSlowRank",job_id="slow",alertstate="firing"}'), 60)
            # Scrapes from the first one with 3 finished steps of rank 3 to now.
            window = prom.query('count_over_time(steptime_recent_device_step_min_seconds'
                                '{job_id="slow",rank="%d"}[10m])' % SLOW_RANK)
            lines = wait_done(procs)
            print("# " + "; ".join(lines))
            ok(True, "slow run")
            good2, why2 = compare(prom, "slow")
        finally:
            stop(procs)
        ranks = sorted(a["metric"]["rank"] for a in fired)
        everything = prom.query('count_over_time(ALERTS{job_id="slow"}[10m])')
        ok(ranks == [str(SLOW_RANK)] and {a["metric"]["rank"] for a in everything} ==
           {str(SLOW_RANK)}, "slow rank alert fires for rank 3 only", repr(everything))
        scrapes = int(float(window[0]["value"][1])) if window else -1
        print("# alert fired %d scrapes after rank %d had 3 finished steps" % (scrapes, SLOW_RANK))
        ok(0 < scrapes <= SCRAPES_BOUND, "alert within %d scrapes" % SCRAPES_BOUND,
           "took %d" % scrapes)
        ok(good and good2, "prometheus equals steptime stat", why + "; " + why2)
    except Exception as e:
        ok(False, "slow-rank run", "%s: %s" % (type(e).__name__, e))
    finally:
        if exporter:
            exporter.terminate()
            exporter.wait()
        if prom:
            prom.stop()
        sh(CLI, "unload", "--pin", PIN, check=False)
        try:
            if not DEV_MODE:
                reload_npusim(os.environ.get("NPUSIM_PARAMS", "").split())
            ok(True, "npusim restored")
        except Exception as e:
            ok(False, "npusim restored", str(e))
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
