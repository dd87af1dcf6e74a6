build2/obj/npuhal/hal.o: lib/hal.c include/npusim/hal.h \
 include/uapi/ascend_trs.h include/steptime/export.h
include/npusim/hal.h:
include/uapi/ascend_trs.h:
include/steptime/export.h:
