#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The install, as a user would check it (host; staged with DESTDIR):
#   - `make install PREFIX=/opt/x` after a plain make: steptime.pc names
#     /opt/x; a CANN program (step API, msproftx, mstx) builds with
#     `pkg-config --cflags --libs steptime` and runs;
#   - the default prefix puts the Python module where Debian's python3
#     looks (/usr/local/lib/python3.X/dist-packages) and it imports;
#   - steptime --version; man pages steptime(8), libsteptime(3);
#   - what apps load links libc alone, exports no HAL, and steptime.h does
#     not declare the loader; no HAL header or library is installed.
# Prints TAP.
set -uo pipefail
cd "$(dirname "$(readlink -f "$0")")/../.." || exit 1
O=${O:-build}
PY=/usr/bin/python3
[ -x $PY ] || PY=python3
T=$(mktemp -d)
trap 'rm -rf $T' EXIT
n=0 failed=0
ok() {	# status name
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; failed=1; fi
}

echo "TAP version 13"
echo "1..10"
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
	[ ! -e $T/a/opt/x/include/npusim ] && ! ls $T/a/opt/x/lib | grep -q 'npuhal\|loader'
r=$?; echo "# NEEDED: $needed"; ok $r "installed app library: libc only, no HAL, no loader"

echo '#include <steptime/steptime.h>' | ${CC:-cc} -E -I$T/a/opt/x/include \
	-I$T/a/opt/x/include/steptime/uapi - 2>&1 | grep -q 'steptime__load\|steptime_load_opts'
[ $? = 1 ]; ok $? "steptime/steptime.h does not declare the loader"

v=$($T/a/opt/x/bin/steptime --version)
[ "$v" = "steptime $(sed -n 's/^Version: //p' $pc) (BPF ABI $(sed -n 's/^#define STEPTIME_ABI_VERSION\t*\([0-9]*\).*/\1/p' include/steptime/abi.h))" ] &&
	[ "$(cat $T/app.out)" = "$(sed -n 's/^Version: //p' $pc)" ]
r=$?; echo "# $v"; ok $r "steptime --version"

for m in man8/steptime.8 man3/libsteptime.3; do
	f=$T/a/opt/x/share/man/$m
	[ -s $f ] || { echo "# missing $f"; false; } || break
	w=$(MANWIDTH=80 man -l --warnings $f 2>&1 >/dev/null)
	[ -z "$w" ] || { echo "# $w"; false; } || break
done
ok $? "man pages steptime(8) and libsteptime(3) installed, render cleanly"

# The default prefix: where Debian's python3 looks.
make -s --no-print-directory install O=$O DESTDIR=$T/b >$T/b.log 2>&1
ok $? "make install (default prefix) DESTDIR=..."
pydir=$(cd $T/b && ls -d usr/local/lib/python3*/dist-packages 2>/dev/null)
$PY -c "import sys; sys.exit(0 if '/$pydir' in sys.path else 1)"
r=$?; echo "# module in /$pydir"; ok $r "module where $PY searches"
PYTHONPATH=$T/b/$pydir STEPTIME_LIB=$T/b/usr/local/lib/libsteptime.so.1 \
	$PY -c 'import steptime, sys; sys.exit(0 if steptime.__file__.startswith(sys.argv[1]) else 1)' \
	$T/b/$pydir
ok $? "import steptime from the installed tree"
exit $failed
