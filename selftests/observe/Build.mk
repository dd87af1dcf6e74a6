# selftests/observe: `steptime trace`, `export` and `top` on the host, on
# maps pinned by fake_steps with known records (root: else they SKIP), with
# Debian's prometheus, promtool and tmux; the slow-rank run on npusim is a
# VM test (VM_TEST_SCRIPTS).

OBS_FAKE	:= $(O)/selftests/observe/fake_steps

$(OBS_FAKE): selftests/observe/fake_steps.c include/steptime/abi.h
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< $(LIBBPF_LDLIBS_OBS)

LIBBPF_LDLIBS_OBS := -lbpf -lelf -lz

ALL_TARGETS	+= $(OBS_FAKE)

# LD_PRELOAD shim of the exporter's allocation-failure test.
OBS_FAIL_REALLOC := $(O)/selftests/observe/fail_realloc.so

$(OBS_FAIL_REALLOC): selftests/observe/fail_realloc.c
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -shared -o $@ $< -ldl

ALL_TARGETS	+= $(OBS_FAIL_REALLOC)

# LD_PRELOAD shim of the exporter's leak test: live allocations.
OBS_COUNT_ALLOCS := $(O)/selftests/observe/count_allocs.so

$(OBS_COUNT_ALLOCS): selftests/observe/count_allocs.c
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -shared -o $@ $<

ALL_TARGETS	+= $(OBS_COUNT_ALLOCS)

# Exit 4: a whole-program SKIP with its reason (not root), counted as one.
define CHECK_HOST_CMDS +=
	$(Q)echo "# selftests/observe/test_observe.py"; O=$(O) python3 selftests/observe/test_observe.py; \
		rc=$$?; [ $$rc = 0 ] || [ $$rc = 4 ]

endef

# One rank of the slow-rank VM test: a CANN program on the ACL stand-in.
OBS_RANK	:= $(O)/selftests/observe/rank

$(OBS_RANK): selftests/observe/rank.c $(LIB_A) $(O)/runtime/libascendcl.so
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< $(LIB_A) $(LIB_LDLIBS) \
		-L$(O)/runtime -lascendcl -Wl,-rpath,$(abspath $(O)/runtime)

ALL_TARGETS	+= $(OBS_RANK)
VM_TEST_SCRIPTS	+= selftests/observe/slow_rank_vm.py selftests/observe/demo_vm.py
