# bench/: `make bench` builds $(BENCH_TARGETS) and runs bench/run.sh, which
# runs the host benchmarks here and the npusim ones in the VM, and writes
# the summary table to $(O)/bench/results.md (bench/README.md reads it).

BENCH_DIR	:= $(O)/bench
BENCH_NAMES	:= mark hook rate accuracy footprint observe appload train verifier hal
BENCH_BINS	:= $(addprefix $(BENCH_DIR)/bench_,$(BENCH_NAMES))
BENCH_BPF_OBJ	:= $(BENCH_DIR)/bench.bpf.o
BENCH_SKEL	:= $(BENCH_DIR)/bench.skel.h
BENCH_CFLAGS	= $(ALL_CFLAGS) -I$(BENCH_DIR) -Ibench

$(BENCH_BPF_OBJ): bench/bench.bpf.c $(O)/vmlinux.h
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@.tmp.o
	$(Q)$(BPFTOOL) gen object $@ $@.tmp.o && rm -f $@.tmp.o

$(BENCH_SKEL): $(BENCH_BPF_OBJ)
	$(Q)$(BPFTOOL) gen skeleton $< name bench_bpf > $@.tmp && mv $@.tmp $@

# The uprobe target must keep its symbol: no LTO, no stripping.
$(BENCH_DIR)/bench_%: bench/%.c bench/common.c bench/bench.h $(LIB_A) $(NPUHAL_A) \
		      $(wildcard include/steptime/*.h include/npusim/*.h) \
		      $(BENCH_SKEL) $(BPF_SKEL)
	@echo "  BENCH   $@"
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(BENCH_CFLAGS) -o $@ $< bench/common.c $(NPUHAL_A) \
		$(NPUHAL_LDFLAGS) $(LIB_A) \
		$(LIB_LDLIBS) $(BENCH_LDLIBS_$*)

# bench_hal submits through libascend_hal.so, as CANN's runtime does.
BENCH_LDLIBS_hal = $(ASCEND_HAL_LDLIBS)
$(BENCH_DIR)/bench_hal: $(ASCEND_HAL_SO)

BENCH_TARGETS	+= $(BENCH_BINS)

# bench_observe runs steptime export/trace/stat on fake_steps' maps.
$(BENCH_DIR)/bench_observe: | $(OBS_FAKE) $(O)/steptime

# bench_mark's holdout: an app of its own, linked with libsteptime.so (the
# file the ring kick probes) and nothing of the bench.
BENCH_HOLDOUT	:= $(BENCH_DIR)/holdout
$(BENCH_HOLDOUT): bench/holdout.c $(O)/$(LIB_SONAME)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< -L$(O) -l:$(LIB_SONAME) \
		-Wl,-rpath,$(abspath $(O))
$(BENCH_DIR)/bench_mark: | $(BENCH_HOLDOUT)

# bench_appload: the app library against the library apps loaded before the
# loader moved out (app + loader objects, libbpf/libelf/zlib), built here.
BENCH_FULL_SO	:= $(BENCH_DIR)/libsteptime-full.so
$(BENCH_FULL_SO): $(APP_OBJS) $(LOADER_OBJS)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -shared -Wl,--version-script=lib/libsteptime.map -o $@ \
		$(APP_OBJS) $(LOADER_OBJS) $(LDLIBS_BPF) -lpthread -ldl
$(BENCH_DIR)/appload_child: bench/appload_child.c
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $<
$(BENCH_DIR)/bench_appload: | $(BENCH_FULL_SO) $(O)/$(LIB_SONAME) \
			      $(BENCH_DIR)/appload_child
