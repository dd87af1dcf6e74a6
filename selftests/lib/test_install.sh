#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The install, as a user would check it (host):
#   - staged (DESTDIR), `make install PREFIX=/opt/x` after a plain make:
#     steptime.pc names /opt/x; a CANN program (step API, msproftx, mstx)
#     builds with `pkg-config --cflags --libs steptime` and runs; the
#     Python module imports, finding the library in its own prefix;
#   - the default prefix puts the Python module where Debian's python3
#     looks (/usr/local/lib/python3.X/dist-packages);
#   - steptime --version; man pages steptime(8), libsteptime(3);
#   - what apps load links libc alone, exports no HAL, and steptime.h does
#     not declare the loader; no HAL header or library, no BPF object;
#   - for real, as root, in a private mount namespace whose /usr/local and
#     /etc (the loader's cache) are overlays on tmpfs (the host's are
#     untouched): `make install PREFIX=/usr/local`, then a program built
#     with pkg-config runs and `import steptime` works with nothing set
#     (no LD_LIBRARY_PATH, STEPTIME_LIB, PYTHONPATH); with Debian's torch,
#     STEPTIME_TORCH=1 marks an unchanged training loop's steps in a fresh
#     interpreter (the .pth runs before torch's dist-packages is on the
#     path); `make uninstall` leaves /usr/local as it was.
# Prints TAP.
set -uo pipefail
cd "$(dirname "$(readlink -f "$0")")/../.." || exit 1
O=${O:-build}
PY=/usr/bin/python3
[ -x $PY ] || PY=python3
T=$(mktemp -d)
trap 'rm -rf $T' EXIT
# shellcheck source=selftests/tap.sh
. selftests/tap.sh

echo "TAP version 13"
echo "1..16"
make -s --no-print-directory install O=$O PREFIX=/opt/x DESTDIR=$T/a >$T/a.log 2>&1
ok $? "make install PREFIX=/opt/x DESTDIR=..."
pc=$T/a/opt/x/lib/pkgconfig/steptime.pc
grep -qx 'prefix=/opt/x' $pc && grep -qx 'libdir=/opt/x/lib' $pc &&
	grep -qx 'includedir=/opt/x/include' $pc && ! grep -q '/usr/local' $pc &&
	! grep -q 'libbpf' $pc
r=$?; [ $r = 0 ] || cat $pc; ok $r "steptime.pc names /opt/x, no libbpf"

cat >$T/app.c <<'C'
#include <stdio.h>
#include <string.h>
#include <acl/acl_prof.h>
#include <mstx/ms_tools_ext.h>
#include <steptime/steptime.h>
int main(int argc, char **argv)
{
	uint32_t dev = 0, id;
	aclprofConfig *cfg;
	aclprofStepInfo *s;
	void *st;

	if (aclprofInit(argv[1], strlen(argv[1])) ||
	    !(cfg = aclprofCreateConfig(&dev, 1, ACL_AICORE_NONE, NULL,
					ACL_PROF_MSPROFTX)) ||
	    aclprofStart(cfg))
		return 1;
	s = aclprofCreateStepInfo();
	aclprofGetStepTimestamp(s, ACL_STEP_START, NULL);
	st = aclprofCreateStamp();
	if (!st || aclprofSetStampTraceMessage(st, "fwd", 3) ||
	    aclprofRangeStart(st, &id) || aclprofRangeStop(id))
		return 2;
	mstxRangeEnd(mstxRangeStartA("bwd", NULL));
	aclprofGetStepTimestamp(s, ACL_STEP_END, NULL);
	aclprofDestroyStepInfo(s);
	aclprofDestroyStamp(st);
	if (aclprofStop(cfg) || aclprofDestroyConfig(cfg) || aclprofFinalize())
		return 3;
	printf("%s\n", STEPTIME_VERSION);
	return 0;
}
C
export PKG_CONFIG_PATH=$T/a/opt/x/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$T/a
${CC:-cc} -Wall -Werror -o $T/app $T/app.c $(pkg-config --cflags --libs steptime) \
	>$T/cc.log 2>&1 &&
	STEPTIME_PIN_DIR=$T/none STEPTIME_QUIET=1 STEPTIME_PHASE_DIR=$T/ph \
	LD_LIBRARY_PATH=$T/a/opt/x/lib $T/app $T/out >$T/app.out 2>&1 &&
	ls $T/out/steptime_msprof_tx_*_1.csv >/dev/null &&
	[ "$(grep -c 'start/end' $T/out/steptime_msprof_tx_*_1.csv)" = 2 ]
r=$?; [ $r = 0 ] || cat $T/cc.log $T/app.out; ok $r "a CANN program builds with pkg-config and runs"
unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR

lib=$T/a/opt/x/lib/libsteptime.so.1
needed=$(readelf -d $lib | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
[ "$needed" = "libc.so.6 " ] && ! nm -D --defined-only $lib | grep -q ' npu_\| steptime__load' &&
	[ "$(readlink $T/a/opt/x/lib/libms_tools_ext.so)" = libsteptime.so.1 ] &&
	[ ! -e $T/a/opt/x/include/npusim ] && ! ls $T/a/opt/x/lib | grep -q 'npuhal\|loader' &&
	[ -z "$(find $T/a -name '*.bpf.o')" ]
r=$?; echo "# NEEDED: $needed"; ok $r "installed app library: libc only, no HAL, no loader, no BPF object"

echo '#include <steptime/steptime.h>' | ${CC:-cc} -E -I$T/a/opt/x/include \
	-I$T/a/opt/x/include/steptime/uapi - 2>&1 | grep -q 'steptime__load\|steptime_load_opts'
[ $? = 1 ]; ok $? "steptime/steptime.h does not declare the loader"

v=$($T/a/opt/x/bin/steptime --version)
[ "$v" = "steptime $(sed -n 's/^Version: //p' $pc) (BPF ABI $(sed -n 's/^#define STEPTIME_ABI_VERSION\t*\([0-9]*\).*/\1/p' include/steptime/abi.h))" ] &&
	[ "$(cat $T/app.out)" = "$(sed -n 's/^Version: //p' $pc)" ]
r=$?; echo "# $v"; ok $r "steptime --version"

# `|| break` would leave the loop with status 0: keep the failure in r.
r=0
for m in man8/steptime.8 man3/libsteptime.3; do
	f=$T/a/opt/x/share/man/$m
	[ -s $f ] || { echo "# missing $f"; r=1; continue; }
	w=$(MANWIDTH=80 man -l --warnings $f 2>&1 >/dev/null)
	[ -z "$w" ] || { echo "# $m: $w"; r=1; }
done
ok $r "man pages steptime(8) and libsteptime(3) installed, render cleanly"

# The default prefix: where Debian's python3 looks.
make -s --no-print-directory install O=$O DESTDIR=$T/b >$T/b.log 2>&1
ok $? "make install (default prefix) DESTDIR=..."
pydir=$(cd $T/b && ls -d usr/local/lib/python3*/dist-packages 2>/dev/null)
$PY -c "import sys; sys.exit(0 if '/$pydir' in sys.path else 1)"
r=$?; echo "# module in /$pydir"; ok $r "module where $PY searches"
# No STEPTIME_LIB: the module finds the library in its own prefix.
PYTHONPATH=$T/b/$pydir $PY -c 'import steptime, sys; sys.exit(0 if
	steptime.__file__.startswith(sys.argv[1]) and steptime.lib._name == sys.argv[2] else 1)' \
	$T/b/$pydir $T/b/usr/local/lib/libsteptime.so.1
ok $? "import steptime from the installed tree finds its prefix's library"

# For real, in a private mount namespace.
if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null; then
	for t in "install in /usr/local, a pkg-config program runs with nothing set" \
		 "import steptime with nothing set" \
		 "STEPTIME_TORCH=1 python3 train_cpu.py, installed: every step marked" \
		 "make uninstall leaves nothing" \
		 "pip install ./python in a venv: import finds the library through the loader" \
		 "make uninstall a second time: nothing installed, an error"; do
		n=$((n + 1)); echo "ok $n # SKIP $t: needs root and unshare"
	done
	exit $failed
fi
cat >$T/ns.sh <<'SH'
set -u
T=$1 O=$2 PY=$3 R=$PWD
n=10
ok() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; fi
}
mount -t tmpfs none $T/ov || exit 1
for d in /usr/local /etc; do
	u=$T/ov/$(basename $d)
	mkdir -p $u/up $u/work
	mount -t overlay overlay -o lowerdir=$d,upperdir=$u/up,workdir=$u/work $d || exit 1
done
find /usr/local | sort >$T/before
unset LD_LIBRARY_PATH STEPTIME_LIB PYTHONPATH PKG_CONFIG_PATH
make -s --no-print-directory install O=$O PREFIX=/usr/local >$T/c.log 2>&1 &&
	${CC:-cc} -Wall -Werror -o $T/app2 $T/app.c $(pkg-config --cflags --libs steptime) \
		>>$T/c.log 2>&1 &&
	STEPTIME_PIN_DIR=$T/none STEPTIME_QUIET=1 STEPTIME_PHASE_DIR=$T/ph2 \
	$T/app2 $T/out2 >>$T/c.log 2>&1 && ls $T/out2/steptime_msprof_tx_*_1.csv >/dev/null
r=$?; [ $r = 0 ] || cat $T/c.log; ok $r "install in /usr/local, a pkg-config program runs with nothing set"
(cd / && $PY -c 'import steptime, sys; print("#", steptime.__file__, steptime.lib._name)')
ok $? "import steptime with nothing set"
# STEPTIME_TORCH=1 as a launcher sets it: the loop knows nothing of steptime.
if $PY -c 'import torch' 2>/dev/null; then
	(cd / && STEPTIME_TORCH=1 STEPTIME_PIN_DIR=$T/none STEPTIME_QUIET=1 \
		STEPTIME_PHASE_DIR=$T/ph3 $PY $R/selftests/lib/train_cpu.py \
		--steps 3) >$T/torch.log 2>&1 &&
		[ "$(cat $T/ph3/$(id -u)/*.phases | awk '$6 == "optimizer" && $2 == 1' |
		     wc -l)" = 3 ] && ! grep -q steptime $T/torch.log
	r=$?; [ $r = 0 ] || { cat $T/torch.log; cat $T/ph3/*/* 2>&1; }
	ok $r "STEPTIME_TORCH=1 python3 train_cpu.py, installed: every step marked"
else
	n=$((n + 1)); echo "ok $n # SKIP STEPTIME_TORCH=1, installed: no torch for $PY"
fi
# A venv's module (pip) has no library in its prefix: the loader's cache.
cp -r python $T/pysrc && $PY -m venv --system-site-packages $T/venv &&
	$T/venv/bin/pip install -q --no-index --no-build-isolation $T/pysrc >$T/pip.log 2>&1 &&
	(cd / && $T/venv/bin/python -c 'import steptime, sys
print("#", steptime.__file__, steptime.lib._name)
sys.exit(0 if steptime.__file__.startswith(sys.argv[1]) and
	 steptime.lib._name == "libsteptime.so.1" else 1)' $T/venv/lib) >>$T/pip.log 2>&1
r=$?; [ $r = 0 ] || cat $T/pip.log; ok $r "pip install ./python in a venv: import finds the library through the loader"
make -s --no-print-directory uninstall O=$O PREFIX=/usr/local >$T/u.log 2>&1 &&
	find /usr/local | sort >$T/after && diff $T/before $T/after >>$T/u.log
r=$?; [ $r = 0 ] || cat $T/u.log; ok $r "make uninstall leaves nothing"
! make -s --no-print-directory uninstall O=$O PREFIX=/usr/local >$T/u2.log 2>&1 &&
	grep -q 'nothing installed' $T/u2.log
r=$?; [ $r = 0 ] || cat $T/u2.log; ok $r "make uninstall a second time: nothing installed, an error"
SH
mkdir $T/ov
unshare -m --propagation private bash $T/ns.sh $T $O $PY >$T/ns.out 2>&1
cat $T/ns.out
k=$(grep -c '^\(not \)\?ok ' $T/ns.out)
grep -q '^not ok ' $T/ns.out && failed=1
n=$((10 + k))
while [ $n -lt 16 ]; do ok 1 "the private mount namespace (set-up failed)"; done
exit $failed
