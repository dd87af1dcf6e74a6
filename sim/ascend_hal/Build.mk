# sim/ascend_hal: libascend_hal.so, a stand-in for the driver's user-space
# library (the TRS entry points CANN's runtime calls), over npusim. Test and
# demo infrastructure: built under $(O), never installed. Only the hal*
# entry points (uprobes find them by name) and npusim_hal_* are
# exported.

ASCEND_HAL_SO	:= $(O)/libascend_hal.so
ASCEND_HAL_OBJS	:= $(O)/obj/sim/ascend_hal/ascend_hal.o
# What a program calling the entry points links.
ASCEND_HAL_LDLIBS = -L$(O) -lascend_hal -Wl,-rpath,$(abspath $(O))
ALL_TARGETS	+= $(ASCEND_HAL_SO)

$(O)/obj/sim/ascend_hal/%.o: sim/ascend_hal/%.c sim/ascend_hal/ascend_hal.h
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -fvisibility=hidden -MMD -MP -c -o $@ $<

$(ASCEND_HAL_SO): $(ASCEND_HAL_OBJS)
	$(Q)$(CC) -shared -Wl,-soname,libascend_hal.so -Wl,-z,defs -o $@ \
		$(ASCEND_HAL_OBJS) -lpthread

-include $(ASCEND_HAL_OBJS:.o=.d)
