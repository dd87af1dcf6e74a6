build2/obj/lib/loader.o: lib/loader.c include/uapi/ascend_trs.h \
 include/steptime/loader.h include/steptime/export.h \
 include/steptime/abi.h build2/steptime.skel.h
include/uapi/ascend_trs.h:
include/steptime/loader.h:
include/steptime/export.h:
include/steptime/abi.h:
build2/steptime.skel.h:
