#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The Python package as a venv user installs it: `pip install ./python`,
# offline (Debian's setuptools and wheel: a --system-site-packages venv,
# --no-build-isolation, --no-index), run from outside the source tree:
#   - its version is libsteptime's;
#   - it finds libsteptime through $STEPTIME_LIB, or a copy it carries;
#     with neither (and none on the loader's path), the import names both;
#   - from the source tree (python/ with lib/ and include/ beside it) it
#     builds and carries libsteptime and step()'s C extension: it runs
#     with nothing else installed, in C and through ctypes;
#   - pip uninstall removes it.
# Through the system's loader: selftests/lib/test_install.sh (as root).
# Prints TAP.
set -uo pipefail
cd "$(dirname "$(readlink -f "$0")")/../.." || exit 1
O=$(realpath -m "${O:-build}")
PY=/usr/bin/python3
[ -x $PY ] || PY=python3
T=$(mktemp -d)
trap 'rm -rf $T' EXIT
# shellcheck source=selftests/tap.sh
. selftests/tap.sh
# pip, setuptools, wheel, venv: Debian's (make deps-check)
# (one by one: pip's distutils and setuptools' own do not mix)
if ! for m in venv pip setuptools wheel; do $PY -c "import $m" 2>/dev/null || exit 1; done; then
	echo "Bail out! $PY lacks venv, pip, setuptools or wheel (python3-venv python3-pip python3-setuptools python3-wheel: make deps-check)"
	exit 1
fi
# A venv with the package from a copy of python/ (pip builds in place).
venv() {	# dir src
	$PY -m venv --system-site-packages "$1" &&
		"$1"/bin/pip install -q --no-index --no-build-isolation "$2"
}
# The module's file and library, run from / with only $@ set.
where() {	# venv [VAR=value...]
	local v=$1
	shift
	(cd / && env -u STEPTIME_LIB -u PYTHONPATH -u LD_LIBRARY_PATH -u O "$@" \
		"$v"/bin/python -c 'import steptime; print(steptime.__file__, steptime.lib._name)')
}

echo "TAP version 13"
echo "1..8"
v=$(sed -n 's/^version = "\(.*\)"/\1/p' python/pyproject.toml)
h=$(sed -n 's/^#define STEPTIME_VERSION\t*"\(.*\)"/\1/p' include/steptime/steptime.h)
[ -n "$v" ] && [ "$v" = "$h" ]
r=$?; echo "# pyproject $v, steptime.h $h"; ok $r "the package's version is libsteptime's"

cp -r python $T/src
venv $T/v $T/src >$T/pip.log 2>&1
r=$?; [ $r = 0 ] || cat $T/pip.log; ok $r "pip install ./python in a venv, offline"

out=$(where $T/v STEPTIME_LIB=$O/libsteptime.so.1 2>&1)
r=$?; echo "# $out"
[ $r = 0 ] && [[ $out == $T/v/lib/python3.*/site-packages/steptime/__init__.py" $O/libsteptime.so.1" ]]
ok $? "import steptime in the venv: \$STEPTIME_LIB"

if $PY -c 'import ctypes.util, sys; sys.exit(0 if ctypes.util.find_library("steptime") else 1)'; then
	n=$((n + 1)); echo "ok $n # SKIP import with no library: the loader has a libsteptime here"
else
	out=$(where $T/v 2>&1)
	r=$?; echo "$out" | tail -n1 | sed 's/^/# /'
	[ $r != 0 ] && echo "$out" | grep -q 'ImportError: steptime: libsteptime not found (install it.*set STEPTIME_LIB)'
	ok $? "import with no library anywhere: an ImportError saying how to give one"
fi

cp -r python $T/src2 && cp $O/libsteptime.so.1 $T/src2/steptime/ &&
	venv $T/v2 $T/src2 >$T/pip2.log 2>&1 && out=$(where $T/v2 2>&1) &&
	[[ $out == $T/v2/lib/python3.*/site-packages/steptime/__init__.py" "$T/v2/lib/python3.*/site-packages/steptime/libsteptime.so.1 ]]
r=$?; echo "# $out"; [ $r = 0 ] || cat $T/pip2.log; ok $r "a package carrying libsteptime.so.1 loads its copy, nothing set"

# From a copy of the tree's python/, lib/ and include/: what pip builds.
mkdir $T/tree && cp -r python lib include $T/tree/ &&
	venv $T/v3 $T/tree/python >$T/pip3.log 2>&1
r=$?; [ $r = 0 ] || cat $T/pip3.log
ok $r "pip install ./python from the source tree builds libsteptime and the extension"

# Nothing set, steptime not loaded (a pin dir that is not there): a step's
# two marks fail with -ENODEV, which only the C library can say.
use() {	# venv [VAR=value...]
	local v=$1
	shift
	(cd / && env -u STEPTIME_LIB -u PYTHONPATH -u LD_LIBRARY_PATH -u O "$@" \
		STEPTIME_PIN_DIR=/nonexistent/steptime-pip STEPTIME_QUIET=1 \
		"$v"/bin/python -c 'import errno, steptime
with steptime.step() as s:
	pass
assert s.errors == [-errno.ENODEV] * 2, s.errors
print(steptime.IMPL, steptime.lib._name, s.index_id)')
}
c=$(use $T/v3 2>&1)
r=$?; echo "# $c"
py=$(use $T/v3 STEPTIME_PY_CTYPES=1 2>&1)
r2=$?; echo "# $py"
lib="$T/v3/lib/python3.*/site-packages/steptime/libsteptime.so.1"
[ $r = 0 ] && [ $r2 = 0 ] && [[ $c == "c "$lib" 1" ]] && [[ $py == "ctypes "$lib" 1" ]]
ok $? "the package's own libsteptime runs a step, in C and through ctypes, nothing set"

$T/v/bin/pip uninstall -q -y steptime >$T/un.log 2>&1 &&
	$T/v3/bin/pip uninstall -q -y steptime >>$T/un.log 2>&1 &&
	[ -z "$(find $T/v/lib $T/v3/lib -path '*site-packages/steptime*')" ]
r=$?; [ $r = 0 ] || { cat $T/un.log; find $T/v/lib $T/v3/lib -path '*site-packages/steptime*'; }
ok $r "pip uninstall steptime removes it"
exit $failed
