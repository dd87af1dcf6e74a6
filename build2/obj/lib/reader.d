build2/obj/lib/reader.o: lib/reader.c lib/bpf_sys.h \
 include/steptime/steptime.h include/steptime/export.h \
 include/steptime/abi.h lib/st_internal.h
lib/bpf_sys.h:
include/steptime/steptime.h:
include/steptime/export.h:
include/steptime/abi.h:
lib/st_internal.h:
