build2/obj/lib/tx.o: lib/tx.c lib/bpf_sys.h include/steptime/steptime.h \
 include/steptime/export.h include/steptime/abi.h lib/tx.h \
 lib/st_internal.h
lib/bpf_sys.h:
include/steptime/steptime.h:
include/steptime/export.h:
include/steptime/abi.h:
lib/tx.h:
lib/st_internal.h:
