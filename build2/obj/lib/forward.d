build2/obj/lib/forward.o: lib/forward.c lib/bpf_sys.h lib/forward.h \
 lib/st_internal.h include/steptime/abi.h
lib/bpf_sys.h:
lib/forward.h:
lib/st_internal.h:
include/steptime/abi.h:
