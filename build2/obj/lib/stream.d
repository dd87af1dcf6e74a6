build2/obj/lib/stream.o: lib/stream.c lib/bpf_sys.h \
 include/steptime/steptime.h include/steptime/export.h \
 include/steptime/abi.h include/uapi/ascend_trs.h include/npusim/hal.h \
 lib/st_internal.h
lib/bpf_sys.h:
include/steptime/steptime.h:
include/steptime/export.h:
include/steptime/abi.h:
include/uapi/ascend_trs.h:
include/npusim/hal.h:
lib/st_internal.h:
