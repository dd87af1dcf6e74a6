build2/obj/lib/mstx.o: lib/mstx.c lib/bpf_sys.h \
 include/steptime/steptime.h include/steptime/export.h \
 include/steptime/abi.h include/mstx/ms_tools_ext.h \
 include/acl/acl_base.h lib/forward.h lib/st_internal.h lib/tx.h
lib/bpf_sys.h:
include/steptime/steptime.h:
include/steptime/export.h:
include/steptime/abi.h:
include/mstx/ms_tools_ext.h:
include/acl/acl_base.h:
lib/forward.h:
lib/st_internal.h:
lib/tx.h:
