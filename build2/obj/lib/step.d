build2/obj/lib/step.o: lib/step.c lib/bpf_sys.h \
 include/steptime/steptime.h include/steptime/export.h \
 include/steptime/abi.h lib/st_internal.h lib/tx.h
lib/bpf_sys.h:
include/steptime/steptime.h:
include/steptime/export.h:
include/steptime/abi.h:
lib/st_internal.h:
lib/tx.h:
