# selftests/lib: libsteptime's host unit tests (kselftest harness, TAP).
# Linked statically against libsteptime.a: also proves the static library
# works. Tests that need maps create their own (root; else they SKIP).
SELFTESTS_LIB_MK := 1

LIBTEST_NAMES	:= test_acl test_format test_marks test_cann test_tx test_reader \
		   test_failnth test_sends test_cann_late
LIBTEST_BINS	:= $(addprefix $(O)/selftests/lib/,$(LIBTEST_NAMES))
LIBTEST_CFLAGS	:= $(ALL_CFLAGS) -I$(KSFT_DIR) -Iselftests -Wno-missing-prototypes \
		   -Wno-shadow -Wno-format-nonliteral -Wno-sign-compare -MMD -MP

ALL_TARGETS	+= $(LIBTEST_BINS)

$(O)/selftests/lib/%: selftests/lib/%.c selftests/lib/st_test.h $(LIB_A) \
		      $(KSFT_HDRS)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(LIBTEST_CFLAGS) -o $@ $< $(LIB_A) $(LIB_LDLIBS)

# test_cann exports a fake CANN runtime for dlsym(RTLD_DEFAULT).
$(O)/selftests/lib/test_cann: LIBTEST_CFLAGS += -rdynamic
# test_tx plays the runtime's timeline events.
$(O)/selftests/lib/test_tx: LIBTEST_CFLAGS += -rdynamic

# test_cann_late: a runtime's event calls in a library it loads later.
CANN_LATE_SO	:= $(O)/selftests/lib/cann_late/libfake_acl.so
ALL_TARGETS	+= $(CANN_LATE_SO)
$(O)/selftests/lib/test_cann_late: | $(CANN_LATE_SO)

$(CANN_LATE_SO): selftests/lib/cann_late/fake_acl.c
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Wno-missing-prototypes -fvisibility=hidden \
		-Wno-unused-parameter -shared -o $@ $<

# test_sends: a libascend_hal.so of its own and two callers of it, one
# bound at load with full RELRO (as CANN's runtime), one lazily. Their
# path to it is a DT_RPATH, which comes before $LD_LIBRARY_PATH: in the
# VM that names npusim's stand-in (run_vm.sh, as CANN's set_env.sh does).
SENDS_DIR	:= $(O)/selftests/lib/sends
SENDS_SOS	:= $(SENDS_DIR)/libascend_hal.so $(SENDS_DIR)/libcaller_now.so \
		   $(SENDS_DIR)/libcaller_lazy.so
ALL_TARGETS	+= $(SENDS_SOS)
$(O)/selftests/lib/test_sends: | $(SENDS_SOS)

$(SENDS_DIR)/libascend_hal.so: selftests/lib/sends/fake_hal.c \
			       selftests/lib/sends/fake_hal.h
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Wno-missing-prototypes -fvisibility=hidden \
		-shared -Wl,-soname,libascend_hal.so -o $@ $<

$(SENDS_DIR)/libcaller_now.so: SENDS_BIND := -Wl,-z,now -Wl,-z,relro
$(SENDS_DIR)/libcaller_lazy.so: SENDS_BIND := -Wl,-z,lazy -Wl,-z,norelro
$(SENDS_DIR)/libcaller_%.so: selftests/lib/sends/caller.c \
			     selftests/lib/sends/fake_hal.h \
			     $(SENDS_DIR)/libascend_hal.so
	$(Q)$(CC) $(ALL_CFLAGS) -fvisibility=hidden -shared $(SENDS_BIND) \
		-Wl,--disable-new-dtags -Wl,-rpath,'$$ORIGIN' -o $@ $< \
		-L$(SENDS_DIR) -lascend_hal

-include $(LIBTEST_BINS:=.d)

define CHECK_HOST_CMDS +=
	$(Q)for t in $(LIBTEST_BINS); do echo "# $$t"; \
		STEPTIME_CLI=$(O)/steptime $$t || exit 1; done
	$(Q)STEPTIME_LIB=$(O)/libsteptime.so.1 python3 selftests/lib/test_python.py
	$(Q)STEPTIME_PY_CTYPES=1 STEPTIME_LIB=$(O)/libsteptime.so.1 \
		python3 selftests/lib/test_python.py

endef

# End to end with the BPF program on npusim: in the VM only.
VM_TEST_SCRIPTS	+= selftests/lib/lib_e2e.sh
