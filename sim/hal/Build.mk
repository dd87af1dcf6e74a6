# sim/hal/: npusim's user-space HAL (include/npusim/hal.h), what tests,
# examples, benchmarks and the ACL runtime stand-in drive npusim with. It
# stands in for the Ascend driver's user-space library: never part of
# libsteptime, never installed.

# The HAL alone, for test programs that do not need libsteptime (defined
# before the rules that name it: prerequisites expand when read).
NPUHAL_A	:= $(O)/obj/libnpuhal.a
NPUHAL_OBJS	:= $(O)/obj/npuhal/npu_hal.o

$(O)/obj/npuhal/%.o: sim/hal/%.c sim/ascend_hal/ascend_hal.h
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

# A program linking the archive exports its npu_* names: libsteptime finds
# the HAL at run time, as it finds CANN's runtime.
# The HAL sits on the driver's library (libascend_hal.so, sim/ascend_hal/),
# linked dynamically as CANN's runtime links it.
NPUHAL_LDFLAGS	:= -Wl,--export-dynamic-symbol='npu_*' -L$(O) -lascend_hal \
		   -Wl,-rpath,$(abspath $(O))

# Whatever links the archive needs the library built.
$(NPUHAL_A): $(NPUHAL_OBJS) | $(O)/libascend_hal.so
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $^

# The HAL as a shared library for the Python npusim binding (tests, demo):
# built here, never installed.
NPUHAL_SO	:= $(O)/libnpuhal.so
ALL_TARGETS	+= $(NPUHAL_SO)

$(NPUHAL_SO): $(NPUHAL_A)
	$(Q)$(CC) -shared -o $@ -Wl,--whole-archive $(NPUHAL_A) \
		-Wl,--no-whole-archive -L$(O) -lascend_hal \
		-Wl,-rpath,$(abspath $(O))
