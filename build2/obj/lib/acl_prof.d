build2/obj/lib/acl_prof.o: lib/acl_prof.c lib/bpf_sys.h \
 include/acl/acl_prof.h include/acl/acl_base.h \
 include/steptime/steptime.h include/steptime/export.h \
 include/steptime/abi.h lib/forward.h lib/st_internal.h lib/tx.h
lib/bpf_sys.h:
include/acl/acl_prof.h:
include/acl/acl_base.h:
include/steptime/steptime.h:
include/steptime/export.h:
include/steptime/abi.h:
lib/forward.h:
lib/st_internal.h:
lib/tx.h:
