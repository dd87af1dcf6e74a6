# sim/runtime/: libascendcl.so, CANN's ACL runtime calls on npusim
# (include/acl/acl_rt.h), built on the npu HAL (libnpuhal.a, linked in
# and hidden) and on libruntime.so, npusim's runtime built as CANN's
# (rt_sim.h), which dlopen()s libruntime_v100.so or _v200.so by the chip.
# Test and demo infrastructure, like the HAL: not part of libsteptime,
# installed only by `make install-ascend`.
#
#   make install-ascend ASCEND_HOME_PATH=DIR [DESTDIR=]
#
# lays out what CANN's samples build against: include/acl/*.h,
# lib64/libascendcl.so (+ libruntime.so, libruntime_v100.so and
# libruntime_v200.so), lib64/libmsprofiler.so and
# libprofapi.so and libms_tools_ext.so (links to libsteptime, which
# carries aclprof*, msproftx and mstx), lib64/libsteptime.so.1,
# include/mstx, bin/setenv.bash, and the driver library the runtime calls,
# driver/lib64/driver/libascend_hal.so (sim/ascend_hal/; the driver's own
# place, relative to an Ascend root).

RT_DIR		:= $(O)/runtime
RT_SO		:= $(RT_DIR)/libascendcl.so
RT_OBJS		:= $(O)/obj/runtime/acl.o
RT_HDRS		:= include/acl/acl.h include/acl/acl_rt.h include/acl/acl_npusim.h \
		   include/acl/acl_prof_config.h

# The runtime: the keeper libruntime.so and the chips' task libraries it
# loads (found by its RUNPATH, $ORIGIN). libhal_dlsym.so: a caller that
# finds halSqTaskSend with dlsym(), as memfabric_hybrid does.
RT_KEEPER_SO	:= $(RT_DIR)/libruntime.so
RT_TASK_SOS	:= $(RT_DIR)/libruntime_v100.so $(RT_DIR)/libruntime_v200.so
RT_DLSYM_SO	:= $(RT_DIR)/libhal_dlsym.so
RT_TASK_OBJS	:= $(O)/obj/runtime/rt_task_v100.o $(O)/obj/runtime/rt_task_v200.o
RT_SIM_OBJS	:= $(O)/obj/runtime/rt_keeper.o $(O)/obj/runtime/hal_dlsym.o \
		   $(RT_TASK_OBJS)
# As CANN's runtime.cmake links its libraries: bound at load, full RELRO.
RT_HARDEN	:= -Wl,-z,now -Wl,-z,relro

ALL_TARGETS	+= $(RT_SO) $(RT_KEEPER_SO) $(RT_TASK_SOS) $(RT_DLSYM_SO)

$(O)/obj/runtime/%.o: sim/runtime/%.c
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -fvisibility=hidden -MMD -MP -c -o $@ $<

$(RT_TASK_OBJS): $(O)/obj/runtime/rt_task_%.o: sim/runtime/rt_task.c
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -fvisibility=hidden $(if $(filter v200,$*),-DRT_V200) \
		-MMD -MP -c -o $@ $<

$(RT_TASK_SOS): $(RT_DIR)/libruntime_%.so: $(O)/obj/runtime/rt_task_%.o \
		$(ASCEND_HAL_SO)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -shared -Wl,-soname,$(@F) -Wl,-z,defs $(RT_HARDEN) -o $@ $< \
		$(ASCEND_HAL_LDLIBS)

# The task libraries are dlopen()ed, not linked: whatever links the keeper
# needs them built.
$(RT_KEEPER_SO): $(O)/obj/runtime/rt_keeper.o $(ASCEND_HAL_SO) | $(RT_TASK_SOS)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -shared -Wl,-soname,libruntime.so -Wl,-z,defs $(RT_HARDEN) \
		-Wl,-rpath,'$$ORIGIN' -o $@ $< $(ASCEND_HAL_LDLIBS) -ldl -lpthread

$(RT_DLSYM_SO): $(O)/obj/runtime/hal_dlsym.o | $(ASCEND_HAL_SO)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -shared -Wl,-soname,libhal_dlsym.so -Wl,-z,defs \
		-Wl,-rpath,$(abspath $(O)) -o $@ $< -ldl -lpthread

$(RT_SO): $(RT_OBJS) $(NPUHAL_A) sim/runtime/libascendcl.map $(RT_KEEPER_SO)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -shared -Wl,-soname,libascendcl.so \
		-Wl,--version-script=sim/runtime/libascendcl.map -Wl,-z,defs \
		-o $@ $(RT_OBJS) $(NPUHAL_A) -L$(RT_DIR) -lruntime -L$(O) \
		-lascend_hal -Wl,-rpath,'$$ORIGIN' -Wl,-rpath,$(abspath $(O)) \
		-lpthread

-include $(RT_OBJS:.o=.d) $(RT_SIM_OBJS:.o=.d)

ASCEND_HOME_PATH ?=
ASCEND_DIR	= $(DESTDIR)$(ASCEND_HOME_PATH)

.PHONY: install-ascend
install-ascend: $(RT_SO) $(RT_KEEPER_SO) $(RT_TASK_SOS) $(O)/$(LIB_SONAME) \
		$(O)/libascend_hal.so
	$(Q)test -n "$(ASCEND_HOME_PATH)" || \
		{ echo "install-ascend: set ASCEND_HOME_PATH=DIR" >&2; exit 1; }
	$(Q)install -d $(ASCEND_DIR)/include/acl/error_codes \
		$(ASCEND_DIR)/lib64 $(ASCEND_DIR)/bin \
		$(ASCEND_DIR)/driver/lib64/driver
	$(Q)install -m 755 $(O)/libascend_hal.so $(ASCEND_DIR)/driver/lib64/driver/
	$(Q)install -m 644 $(RT_HDRS) include/acl/acl_base.h \
		include/acl/acl_prof.h \
		$(ASCEND_DIR)/include/acl/
	$(Q)install -m 644 include/acl/error_codes/rt_error_codes.h \
		$(ASCEND_DIR)/include/acl/error_codes/
	$(Q)$(if $(wildcard include/mstx/*.h),install -d $(ASCEND_DIR)/include/mstx && \
		install -m 644 $(wildcard include/mstx/*.h) $(ASCEND_DIR)/include/mstx/,true)
	$(Q)install -m 755 $(RT_SO) $(RT_KEEPER_SO) $(RT_TASK_SOS) \
		$(O)/$(LIB_SONAME) $(ASCEND_DIR)/lib64/
	$(Q)ln -sf $(LIB_SONAME) $(ASCEND_DIR)/lib64/libsteptime.so
	$(Q)ln -sf $(LIB_SONAME) $(ASCEND_DIR)/lib64/libmsprofiler.so
	$(Q)ln -sf $(LIB_SONAME) $(ASCEND_DIR)/lib64/libprofapi.so
	$(Q)ln -sf $(LIB_SONAME) $(ASCEND_DIR)/lib64/libms_tools_ext.so
	$(Q)install -m 644 sim/runtime/setenv.bash $(ASCEND_DIR)/bin/setenv.bash
	$(Q)echo "ACL runtime for npusim in $(ASCEND_HOME_PATH): source $(ASCEND_HOME_PATH)/bin/setenv.bash"

# VM tests of selftests/runtime/ link the library as an app would.
RT_LDLIBS	= -L$(RT_DIR) -lascendcl -Wl,-rpath,$(abspath $(RT_DIR))
$(filter $(VM_TEST_DIR)/runtime_%,$(VM_TEST_PROGS)): $(RT_SO) $(RT_DLSYM_SO)

# Host test: the library without a device.
HALTEST_BINS	+= $(O)/selftests/hal/test_acl_host

$(O)/selftests/hal/test_acl_host: selftests/hal/test_acl_host.c $(RT_SO) $(KSFT_HDRS)
	$(Q)mkdir -p $(@D) $(O)/obj/selftests
	$(Q)$(CC) $(VM_TEST_CFLAGS) -MF $(O)/obj/selftests/hal_test_acl_host.d \
		-o $@ $< $(RT_LDLIBS)

# Host test: the chips' task libraries, dlopen()ed as the keeper does,
# calling this program's halSqTaskSend and halSqCqQuery.
HALTEST_BINS	+= $(O)/selftests/hal/test_runtime_host

$(O)/selftests/hal/test_runtime_host: selftests/hal/test_runtime_host.c \
		$(RT_TASK_SOS) $(KSFT_HDRS)
	$(Q)mkdir -p $(@D) $(O)/obj/selftests
	$(Q)$(CC) $(VM_TEST_CFLAGS) -MF $(O)/obj/selftests/hal_test_runtime_host.d \
		-o $@ $< -Wl,--export-dynamic-symbol=halSqTaskSend \
		-Wl,--export-dynamic-symbol=halSqCqQuery \
		-Wl,-rpath,$(abspath $(RT_DIR)) -ldl

# Host test: the runtime's libraries are linked as CANN's (readelf).
define CHECK_HOST_CMDS +=
	$(Q)echo "# selftests/hal/test_runtime_elf.sh"; O=$(O) selftests/hal/test_runtime_elf.sh

endef

# An ASCEND_HOME_PATH in the build tree and CANN's sample build against it
# (selftests/runtime/cann_sample/, CMake as CANN's samples build), made at
# build time so that the VM test only runs them.
RT_ASCEND	:= $(O)/ascend
RT_SAMPLE	:= $(O)/cann_sample

$(RT_ASCEND)/bin/setenv.bash: $(RT_SO) $(RT_KEEPER_SO) $(RT_TASK_SOS) \
		$(O)/$(LIB_SONAME) sim/runtime/setenv.bash \
		$(RT_HDRS) include/acl/acl_base.h include/acl/acl_prof.h
	$(Q)rm -rf $(RT_ASCEND)
	$(Q)$(MAKE) --no-print-directory -s install-ascend \
		ASCEND_HOME_PATH=$(abspath $(RT_ASCEND)) DESTDIR= >/dev/null

# (CMake's make, a small serial build, is no sub-make of ours: without our
# MAKEFLAGS it does not warn of a jobserver it cannot use, under make -j.)
$(RT_SAMPLE)/msproftx_like: $(RT_ASCEND)/bin/setenv.bash \
		$(wildcard selftests/runtime/cann_sample/*)
	$(Q)rm -rf $(RT_SAMPLE)
	$(Q)env -u MAKEFLAGS -u MFLAGS bash -c 'source $(RT_ASCEND)/bin/setenv.bash && \
		cmake -S selftests/runtime/cann_sample -B $(RT_SAMPLE) >/dev/null && \
		cmake --build $(RT_SAMPLE) >/dev/null' || \
		{ echo "cann_sample: the CMake build failed" >&2; exit 1; }

# The same programs linked as they are on a CANN host: against CANN's
# profiling library (a stand-in, selftests/lib/fake_cann.c) and the ACL
# runtime, for steptime to come in by LD_PRELOAD.
RT_PRELOAD	:= $(O)/cann_sample_preload
RT_PRELOAD_BINS	:= $(RT_PRELOAD)/msproftx_like $(RT_PRELOAD)/create_config_like

$(RT_PRELOAD_BINS): $(RT_PRELOAD)/%: selftests/runtime/cann_sample/main.cpp \
		$(FAKE_CANN_SO) $(RT_SO) $(RT_HDRS) include/acl/acl_prof.h
	$(Q)mkdir -p $(@D)
	$(Q)$(CXX) -Wall -Iinclude $(if $(filter msproftx_like,$*),-DWITH_STAMPS=1) \
		-o $@ $< -L$(dir $(FAKE_CANN_SO)) -lfakecann -L$(RT_DIR) -lascendcl \
		-Wl,-rpath,$(abspath $(dir $(FAKE_CANN_SO))):$(abspath $(RT_DIR))

ALL_TARGETS	+= $(RT_ASCEND)/bin/setenv.bash
# C++: the arm64 cross build (make arm64) has no C++ cross compiler.
ifneq ($(ARCH),arm64)
ALL_TARGETS	+= $(RT_SAMPLE)/msproftx_like $(RT_PRELOAD_BINS)
endif
