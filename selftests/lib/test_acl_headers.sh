#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# steptime's <acl/acl_prof.h> and <mstx/ms_tools_ext.h> with CANN's
# acl_base.h (selftests/lib/cann_stub, CANN's layout and include guards)
# in one translation unit, as C (gnu11, c11) and C++ (c++11, c++17):
#   - CANN's first, then ours: builds, with and without
#     STEPTIME_ACL_BASE_EXTERNAL;
#   - ours first with STEPTIME_ACL_BASE_EXTERNAL, then CANN's: builds;
#   - ours first without it: rejected (CANN's codes redefine ours), which
#     is what the header documents.
# Each program is linked with libsteptime and run (it checks the codes'
# values). Prints TAP.
set -uo pipefail
cd "$(dirname "$(readlink -f "$0")")/../.." || exit 1
O=${O:-build}
CC=${CC:-gcc}
CXX=${CXX:-g++}
T=$(mktemp -d)
trap 'rm -rf $T' EXIT
# shellcheck source=selftests/tap.sh
. selftests/tap.sh
# build: compiler std defines... ; runs the program when it links
build() {
	local cc=$1 std=$2 x=c
	shift 2
	[ "$cc" = "$CXX" ] && x=c++
	$cc -x $x -std=$std -Wall -Wextra -Werror -Iinclude -Iselftests/lib \
		"$@" -o $T/p selftests/lib/acl_headers.c -x none \
		$O/libsteptime.a >$T/log 2>&1 && $T/p
}

echo "TAP version 13"
echo "1..16"
for c in "$CC gnu11" "$CC c11" "$CXX c++11" "$CXX c++17"; do
	set -- $c
	build $1 $2 -DCANN_FIRST; r=$?
	[ $r = 0 ] || cat $T/log; ok $r "$1 -std=$2: CANN's acl_base.h, then ours"
	build $1 $2 -DCANN_FIRST -DSTEPTIME_ACL_BASE_EXTERNAL; r=$?
	[ $r = 0 ] || cat $T/log
	ok $r "$1 -std=$2: CANN's, then ours with STEPTIME_ACL_BASE_EXTERNAL"
	build $1 $2 -DSTEPTIME_ACL_BASE_EXTERNAL; r=$?
	[ $r = 0 ] || cat $T/log
	ok $r "$1 -std=$2: ours with STEPTIME_ACL_BASE_EXTERNAL, then CANN's"
	build $1 $2; r=$?
	grep -q 'redefinition' $T/log; g=$?
	[ $r != 0 ] && [ $g = 0 ]
	ok $? "$1 -std=$2: ours without the macro, then CANN's: redefinition"
done
exit $failed
