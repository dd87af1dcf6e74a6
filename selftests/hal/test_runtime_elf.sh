#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# npusim's runtime is linked as CANN's (sim/runtime/rt_sim.h, ascend-abi.md
# section 6), read from the built libraries with readelf (no device):
#   - libruntime_v100.so and libruntime_v200.so reach halSqTaskSend as a
#     weak undefined symbol through a GOT slot (what LD_PRELOAD and a GOT
#     patch interpose), the other HAL calls as strong ones; they are bound
#     at load (BIND_NOW, FLAGS_1 NOW) under full RELRO (GNU_RELRO), need
#     libascend_hal.so, and export rtSimTaskOps only;
#   - libruntime.so is linked the same way, finds them by its $ORIGIN
#     RUNPATH, exports its rtSim* calls only and sends nothing itself;
#   - libascendcl.so needs libruntime.so;
#   - libhal_dlsym.so names no HAL call and needs no libascend_hal.so (it
#     finds halSqTaskSend with dlsym).
# Prints TAP.
set -uo pipefail
cd "$(dirname "$(readlink -f "$0")")/../.." || exit 1
O=${O:-build}
R=$O/runtime
READELF=${READELF:-readelf}
# shellcheck source=selftests/tap.sh
. selftests/tap.sh
# dynsym lib: "BIND NDX NAME" per symbol (version suffixes cut)
dynsym() {
	$READELF --dyn-syms -W "$1" | awk 'NR > 3 && $8 != "" {
		sub(/@.*/, "", $8); print $5, $7, $8 }'
}
# exported lib: the names it defines, sorted, on one line
exported() {
	dynsym "$1" | awk '$2 != "UND" && $1 != "LOCAL" { print $3 }' |
		sort | tr '\n' ' '
}
dyn() {	# lib tag: the dynamic section's lines of that tag
	$READELF -dW "$1" | grep -E "\\($2\\)"
}
bound_now() {	# lib
	dyn "$1" FLAGS | grep -qw BIND_NOW && dyn "$1" FLAGS_1 | grep -qw NOW
}
relro() {	# lib
	$READELF -lW "$1" | grep -qw GNU_RELRO
}
needs() {	# lib soname
	dyn "$1" NEEDED | grep -qF "[$2]"
}

libs="$R/libruntime_v100.so $R/libruntime_v200.so $R/libruntime.so $R/libascendcl.so $R/libhal_dlsym.so"
echo "TAP version 13"
echo "1..20"
for l in $libs; do
	[ -f "$l" ] || { echo "Bail out! $l is not built (make targets)"; exit 1; }
done
for v in v100 v200; do
	l=$R/libruntime_$v.so
	dynsym "$l" | grep -qx 'WEAK UND halSqTaskSend'
	ok $? "$v: halSqTaskSend is weak undefined"
	dynsym "$l" | grep -qx 'GLOBAL UND halSqCqQuery'
	ok $? "$v: halSqCqQuery is strong undefined"
	$READELF -rW "$l" | grep -E '_(JUMP_SLOT|GLOB_DAT) ' | grep -qw halSqTaskSend
	ok $? "$v: halSqTaskSend goes through a GOT slot"
	bound_now "$l"
	ok $? "$v: BIND_NOW and FLAGS_1 NOW"
	relro "$l"
	ok $? "$v: GNU_RELRO"
	needs "$l" libascend_hal.so
	ok $? "$v: libascend_hal.so in DT_NEEDED"
	e=$(exported "$l")
	[ "$e" = "rtSimTaskOps " ]
	ok $? "$v: exports rtSimTaskOps only (exports: $e)"
done
k=$R/libruntime.so
bound_now "$k" && relro "$k"
ok $? "libruntime.so: BIND_NOW, FLAGS_1 NOW, GNU_RELRO"
needs "$k" libascend_hal.so && dyn "$k" RUNPATH | grep -qF '$ORIGIN'
ok $? "libruntime.so: libascend_hal.so in DT_NEEDED, \$ORIGIN in RUNPATH"
e=$(exported "$k")
[ "$e" = "rtSimDeviceInit rtSimLibrary rtSimSqHead rtSimSqWait rtSimTaskSend " ]
ok $? "libruntime.so: exports its rtSim* calls only (exports: $e)"
! dynsym "$k" | grep -qw halSqTaskSend
ok $? "libruntime.so: names no halSqTaskSend (its task libraries send)"
needs "$R/libascendcl.so" libruntime.so
ok $? "libascendcl.so: libruntime.so in DT_NEEDED"
! dynsym "$R/libhal_dlsym.so" | grep -qw 'halSqTaskSend' &&
	! needs "$R/libhal_dlsym.so" libascend_hal.so
ok $? "libhal_dlsym.so: no halSqTaskSend symbol, no DT_NEEDED libascend_hal.so"
exit $failed
