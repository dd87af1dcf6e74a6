#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""`make deb` and `make rpm` (TAP).

  - both build (dpkg-deb; rpmbuild, Debian's rpm: else SKIP), and the
    .rpm lists the files and symlinks of the .deb, no more, no fewer, and
    only directories the .deb has;
  - the .deb installs with dpkg -i into this system as seen through an
    overlay (a private mount namespace: a tmpfs upper layer over /, then
    chroot; root, else SKIP), where `steptime --version` runs and Debian's
    python3 imports the packaged module; dpkg --purge then leaves none of
    its files, nor any file outside dpkg's own records (the overlay's
    upper layer says what changed).
Debian's python3: /usr/bin/python3.
"""
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))),
                                "observe"))
import tap  # noqa: E402  selftests/observe/tap.py
from tap import ROOT, O, CLI  # noqa: E402

PYDIR = "/usr/lib/python3/dist-packages"
# What dpkg -i and --purge may leave changed: its database and log, the
# caches its triggers refresh (ldconfig's, man-db's index).
DPKG_OWN = re.compile(r"^/(var/lib/dpkg/|var/log/dpkg\.log$|etc/ld\.so\.cache$|"
                      r"var/cache/ldconfig/|var/cache/man/)")

PKGS = {}


def run(*args, check=True, timeout=300, **kw):
    return tap.run(*args, check=check, timeout=timeout, **kw)


def make(target):
    """The package `make TARGET` builds (its last line names it)."""
    if target not in PKGS:
        out = run("make", "-C", ROOT, "--no-print-directory", "-s", "O=" + O, target).stdout
        path = out.strip().split("\n")[-1]
        assert os.path.isfile(path), "make %s: %r" % (target, out)
        PKGS[target] = path
    return PKGS[target]


def deb_entries(deb):
    """{path: is_dir} of the .deb's data."""
    out = {}
    for line in run("dpkg-deb", "-c", deb).stdout.splitlines():
        f = line.split(None, 5)
        path = f[5].split(" -> ")[0][1:].rstrip("/")
        if path:
            out[path] = f[0].startswith("d")
    return out


def rpm_entries(rpm):
    out = {}
    q = run("rpm", "-qp", "--qf", "[%{FILEMODES:perms} %{FILENAMES}\n]", rpm).stdout
    for line in q.splitlines():
        perms, path = line.split(" ", 1)
        out[path] = perms.startswith("d")
    return out


def test_deb_rpm_same_files():
    if not shutil.which("rpmbuild"):
        return "no rpmbuild (Debian's rpm: make deps-check installs it)"
    deb, rpm = deb_entries(make("deb")), rpm_entries(make("rpm"))
    dfiles = {p for p, d in deb.items() if not d}
    rfiles = {p for p, d in rpm.items() if not d}
    assert dfiles == rfiles, "only in the .deb: %s; only in the .rpm: %s" % (
        sorted(dfiles - rfiles), sorted(rfiles - dfiles))
    for want in ("/usr/bin/steptime", "/usr/lib/libsteptime.so.1", PYDIR + "/steptime/__init__.py",
                 "/usr/share/man/man8/steptime.8.gz", "/usr/lib/systemd/system/steptime-load.service",
                 "/usr/share/steptime/prometheus/steptime.rules.yml"):
        assert want in dfiles, "%s not packaged" % want
    extra = sorted(p for p, d in rpm.items() if d and not deb.get(p))
    assert not extra, "directories of the .rpm only: %s" % extra


# In a private mount namespace: / seen through an overlay whose upper layer
# is a tmpfs, the .deb installed, used and purged in a chroot of it.
OVERLAY = r'''
set -eu
t=$1 deb=$2 version=$3
mount -t tmpfs tmpfs "$t"
mkdir "$t/up" "$t/work" "$t/root"
mount -t overlay overlay -o "lowerdir=/,upperdir=$t/up,workdir=$t/work" "$t/root"
mount --rbind /dev "$t/root/dev"
mount -t proc proc "$t/root/proc"
cp "$deb" "$t/root/steptime.deb"
in_root() { env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root chroot "$t/root" "$@"; }
in_root dpkg -i /steptime.deb >/dev/null
rm "$t/root/steptime.deb"
in_root dpkg-query -L steptime >"$t/listed"
v=$(in_root steptime --version)
case $v in "steptime $version "*) ;; *) echo "steptime --version: $v" >&2; exit 1 ;; esac
f=$(in_root /usr/bin/python3 -c 'import steptime; print(steptime.__file__)')
[ "$f" = /usr/lib/python3/dist-packages/steptime/__init__.py ] ||
	{ echo "import steptime: $f" >&2; exit 1; }
in_root dpkg --purge steptime >/dev/null
# What stayed of the package, then every file the upper layer changed
# (whiteouts too: files removed from the system).
while read -r p; do
	[ "$p" = /. ] || [ ! -e "$t/root$p" ] || [ -d "$t/root$p" ] || echo "left: $p"
done <"$t/listed"
cd "$t/up" && find . ! -type d | sed 's|^\.|changed: |'
'''


def test_deb_install_purge():
    if os.geteuid() != 0:
        return "needs root (dpkg -i, mounts)"
    if not shutil.which("unshare"):
        return "no unshare (util-linux)"
    deb = make("deb")
    version = run(CLI, "--version").stdout.split()[1]
    t = tempfile.mkdtemp(prefix="steptime_deb_")
    try:
        p = run("unshare", "--mount", "--propagation", "private", "sh", "-c", OVERLAY,
                "overlay", t, deb, version, check=False)
        assert p.returncode == 0, "exit %d: %s%s" % (p.returncode, p.stdout, p.stderr)
        left = [line for line in p.stdout.splitlines() if line.startswith("left: ")]
        assert not left, "dpkg --purge left the package's files: %s" % left
        changed = [line[len("changed: "):] for line in p.stdout.splitlines()
                   if line.startswith("changed: ")]
        stray = [c for c in changed if not DPKG_OWN.match(c)]
        assert not stray, "files changed outside dpkg's records after --purge: %s" % stray
        assert any(c.startswith("/var/lib/dpkg/") for c in changed), \
            "dpkg changed nothing: was anything installed? %r" % changed
    finally:
        shutil.rmtree(t, ignore_errors=True)


def main():
    print("TAP version 13")
    tests = [(n, f) for n, f in globals().items() if n.startswith("test_") and
             (len(sys.argv) < 2 or any(a in n for a in sys.argv[1:]))]
    print("1..%d" % len(tests))
    for n, f in tests:
        tap.tap(n, f)
    return tap.status()


if __name__ == "__main__":
    sys.exit(main())
