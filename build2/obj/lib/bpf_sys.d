build2/obj/lib/bpf_sys.o: lib/bpf_sys.c lib/bpf_sys.h lib/st_internal.h \
 include/steptime/abi.h
lib/bpf_sys.h:
lib/st_internal.h:
include/steptime/abi.h:
