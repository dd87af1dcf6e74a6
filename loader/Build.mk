# loader/: libsteptime-loader.a, what loads, attaches and pins the BPF
# program (libbpf, libelf, zlib and the embedded object): linked into the
# `steptime` command, the benchmarks and the tests that load; never into
# libsteptime, never installed. Its API: include/steptime/loader.h.
# Read before lib/Build.mk, which names it in LIB_LDLIBS.

LOADER_SRCS	:= loader/loader.c loader/probe.c loader/device.c loader/attach.c loader/uprobes.c loader/pin.c loader/read.c loader/hal.c
LOADER_OBJS	:= $(patsubst %.c,$(O)/obj/%.o,$(LOADER_SRCS))
LOADER_A	:= $(O)/libsteptime-loader.a

$(O)/obj/loader/%.o: loader/%.c
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -fvisibility=hidden -MMD -MP -c -o $@ $<

$(LOADER_A): $(LOADER_OBJS)
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $(LOADER_OBJS)

# The loader embeds the BPF object through its skeleton.
$(LOADER_OBJS): $(BPF_SKEL)

-include $(LOADER_OBJS:.o=.d)
