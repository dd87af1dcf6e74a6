# selftests: tests that need npusim.ko run in the VM (make check-vm boots
# every kernel in $(KVERS) and runs selftests/run_vm.sh there, which loads
# npusim and runs every program in $(O)/selftests/vm/, in name order).
#
# To add VM tests:
#   - C tests: add the folder to VM_TEST_DIRS; each of its *.c files is one
#     kselftest-harness program $(O)/selftests/vm/<folder>_<file>, linked
#     with the HAL ($(NPUHAL_A)) and VM_TEST_LDLIBS_<folder> (headers of the
#     folder and $(KSFT_DIR) are on the include path);
#   - scripts (shell, python) printing TAP: add them to VM_TEST_SCRIPTS;
#   - programs built elsewhere (host suites that also run as root in the
#     guest): add them to VM_TEST_BINS; each is linked as
#     $(O)/selftests/vm/<its folder>_<its name>.
# Either here or in a fragment the top Makefile reads before this one (the
# rules are made when this file is read).

VM_TEST_DIRS	+= selftests/npusim selftests/steptime selftests/fuzz
VM_TEST_LDLIBS_steptime = $(LIB_A) $(LIB_LDLIBS)
VM_TEST_LDLIBS_fuzz = $(LIB_A) $(LIB_LDLIBS)
VM_TEST_DIRS	+= selftests/marks
VM_TEST_LDLIBS_marks = $(LIB_A) $(LIB_LDLIBS) $(RT_LDLIBS)
VM_TEST_DIRS	+= selftests/clients
VM_TEST_LDLIBS_clients = $(LIB_A) $(LIB_LDLIBS) $(RT_LDLIBS)
VM_TEST_DIRS	+= selftests/runtime
VM_TEST_LDLIBS_runtime = $(RT_LDLIBS) -lruntime
# hal_real: npusim through libascend_hal.so's entry points, chip modes.
VM_TEST_DIRS	+= selftests/hal_real
VM_TEST_LDLIBS_hal_real = $(ASCEND_HAL_LDLIBS)
# hal_steps: steptime's figures for processes submitting through it.
VM_TEST_DIRS	+= selftests/hal_steps
VM_TEST_LDLIBS_hal_steps = $(LIB_A) $(LIB_LDLIBS) $(ASCEND_HAL_LDLIBS)
VM_TEST_SCRIPTS	+=
VM_TEST_SCRIPTS	+= selftests/runtime/cann_sample.sh
# deploy/README.md's sidecar command, run as written.
VM_TEST_SCRIPTS	+= selftests/deploy/sidecar_vm.sh

# deploy/'s Kubernetes, Slurm and systemd files on the host: parsed, checked
# against each other and the rule file; deploy/Containerfile's image built
# (`make image`) and run: load with the stated capabilities and without
# each, the exporter scraped; the DaemonSet's pod from it under
# `podman kube play` (root; else SKIP). About 30 s. Debian's python3 has
# python3-yaml.
define CHECK_HOST_CMDS +=
	$(Q)echo "# selftests/deploy/test_deploy.py"; O=$(O) /usr/bin/python3 selftests/deploy/test_deploy.py

endef

# `make deb` and `make rpm`: the same files in both; the .deb installed,
# used and purged through an overlay of / in a private mount namespace
# (root; else SKIP). About 30 s, most of it dpkg's triggers.
define CHECK_HOST_CMDS +=
	$(Q)echo "# selftests/deploy/test_packages.py"; O=$(O) /usr/bin/python3 selftests/deploy/test_packages.py

endef

VM_TEST_DIR	:= $(O)/selftests/vm
# The harness compares values of any integer types and defines functions
# without prototypes.
VM_TEST_CFLAGS	= $(ALL_CFLAGS) -Wno-sign-compare -Wno-missing-prototypes \
		  -I$(KSFT_DIR) -Iselftests -MMD -MP

# $(1): test folder. Programs are named <folder>_<file> so that two folders
# may both have a basic.c.
define vm_test_dir
VM_TEST_PROGS += $(patsubst $(1)/%.c,$(VM_TEST_DIR)/$(notdir $(1))_%,$(wildcard $(1)/*.c))

$(VM_TEST_DIR)/$(notdir $(1))_%: $(1)/%.c $(NPUHAL_A) $(KSFT_HDRS)
	@echo "  TEST    $$@"
	$(Q)mkdir -p $$(@D)
	$(Q)mkdir -p $(O)/obj/selftests
	$(Q)$(CC) $$(VM_TEST_CFLAGS) -MF $(O)/obj/selftests/$$(@F).d -I$(1) -o $$@ $$< $(NPUHAL_A) $(NPUHAL_LDFLAGS) \
		$$(VM_TEST_LDLIBS_$(notdir $(1))) -lpthread
endef
$(foreach d,$(VM_TEST_DIRS),$(eval $(call vm_test_dir,$(d))))
# Explicit targets: a recipe-less pattern rule would add no prerequisite.
$(filter $(VM_TEST_DIR)/steptime_% $(VM_TEST_DIR)/marks_% $(VM_TEST_DIR)/clients_% $(VM_TEST_DIR)/fuzz_%,$(VM_TEST_PROGS)): $(LIB_A)
$(filter $(VM_TEST_DIR)/clients_%,$(VM_TEST_PROGS)): $(O)/runtime/libascendcl.so
$(filter $(VM_TEST_DIR)/hal_real_%,$(VM_TEST_PROGS)): $(ASCEND_HAL_SO)
$(filter $(VM_TEST_DIR)/hal_steps_%,$(VM_TEST_PROGS)): $(ASCEND_HAL_SO) $(LIB_A)
# marks_devtime: the step API on npusim's ACL runtime stand-in.
$(filter $(VM_TEST_DIR)/marks_%,$(VM_TEST_PROGS)): $(O)/runtime/libascendcl.so

VM_TEST_LINKS	:= $(addprefix $(VM_TEST_DIR)/,$(notdir $(VM_TEST_SCRIPTS)))

$(VM_TEST_LINKS): $(VM_TEST_DIR)/%: | $(VM_TEST_SCRIPTS)
	$(Q)mkdir -p $(@D)
	$(Q)ln -sfn $(abspath $(filter %/$*,$(VM_TEST_SCRIPTS))) $@

# The host suites where root is certain: the loader's, libsteptime's and
# the CANN drop-in's (as non-root on a host they skip, or fail for testing
# nothing). Read after the include of selftests/lib/Build.mk.
vm_bin_link = $(VM_TEST_DIR)/$(notdir $(patsubst %/,%,$(dir $(1))))_$(notdir $(1))
# Not test_failnth: it loads steptime hundreds of times (a minute on the
# host, hours under TCG).
VM_TEST_BINS	+= $(LOADERTEST_BIN) $(filter-out %/test_failnth,$(LIBTEST_BINS))
define vm_test_bin
$(call vm_bin_link,$(1)): $(1)
	$(Q)mkdir -p $$(@D)
	$(Q)ln -sfn $(abspath $(1)) $$@
endef
ALL_TARGETS	+= $(NPUHAL_A) $(VM_TEST_PROGS) $(VM_TEST_LINKS)

-include $(NPUHAL_OBJS:.o=.d) $(patsubst $(VM_TEST_DIR)/%,$(O)/obj/selftests/%.d,$(VM_TEST_PROGS))

# Host tests of the HAL (no device needed).
HALTEST_BINS	:= $(O)/selftests/hal/test_hal_host

$(O)/selftests/hal/%: selftests/hal/%.c $(NPUHAL_A) $(KSFT_HDRS)
	$(Q)mkdir -p $(@D) $(O)/obj/selftests
	$(Q)$(CC) $(VM_TEST_CFLAGS) -MF $(O)/obj/selftests/hal_$*.d -o $@ $< \
		$(NPUHAL_A) $(NPUHAL_LDFLAGS) -lpthread

ALL_TARGETS	+= $(HALTEST_BINS)
-include $(patsubst $(O)/selftests/hal/%,$(O)/obj/selftests/hal_%.d,$(HALTEST_BINS))

define CHECK_HOST_CMDS +=
	$(Q)for t in $(HALTEST_BINS); do echo "# $$t"; $$t || exit 1; done

endef

# The loader and the BPF program on the host kernel (root; else SKIP).
LOADERTEST_BIN	:= $(O)/selftests/loader/loader
# -DPIN_DIR=... -DMNT_PIN=...: pins of a run's own (selftests/mutate/).
LOADERTEST_PINS	?=

$(LOADERTEST_BIN): selftests/loader/loader.c $(LIB_A) $(KSFT_HDRS)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(VM_TEST_CFLAGS) $(LOADERTEST_PINS) -MF $@.d -o $@ $< $(LIB_A) $(LIB_LDLIBS)

ALL_TARGETS	+= $(LOADERTEST_BIN)
-include $(LOADERTEST_BIN).d

# `steptime doctor` on the host (root; else the loading tests SKIP).
DOCTORTEST_BIN	:= $(O)/selftests/tools/doctor

$(DOCTORTEST_BIN): selftests/tools/doctor.c $(LIB_A) $(KSFT_HDRS)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(VM_TEST_CFLAGS) -MF $@.d -o $@ $< $(LIB_A) $(LIB_LDLIBS)

ALL_TARGETS	+= $(DOCTORTEST_BIN)
-include $(DOCTORTEST_BIN).d

define CHECK_HOST_CMDS +=
	$(Q)echo "# $(DOCTORTEST_BIN)"; STEPTIME_CLI=$(O)/steptime $(DOCTORTEST_BIN)

endef

# Beside it: a process that marks through libsteptime.so (the ring kick's
# uprobe is on that file), found by the test next to its own binary.
KICK_MARKER	:= $(O)/selftests/loader/kick_marker
$(KICK_MARKER): selftests/loader/kick_marker.c $(O)/$(LIB_SONAME)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< -L$(O) -l:$(LIB_SONAME) \
		-Wl,-rpath,$(abspath $(O))
ALL_TARGETS	+= $(KICK_MARKER)

# Beside it: another kernel's BTF (selftests/loader/foreign_btf.c), for a
# --btf whose CO-RE relocations find nothing. Without pahole (dwarves) the
# test that uses it SKIPs.
FOREIGN_BTF	:= $(O)/selftests/loader/foreign.btf
$(FOREIGN_BTF): selftests/loader/foreign_btf.c
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -g -c -o $@.o $<
	$(Q)pahole --btf_encode_detached=$@ $@.o
	$(Q)rm -f $@.o
ifneq ($(shell command -v pahole),)
ALL_TARGETS	+= $(FOREIGN_BTF)
endif

$(foreach b,$(VM_TEST_BINS),$(eval $(call vm_test_bin,$(b))))
ALL_TARGETS	+= $(foreach b,$(VM_TEST_BINS),$(call vm_bin_link,$(b)))

define CHECK_HOST_CMDS +=
	$(Q)echo "# $(LOADERTEST_BIN)"; STEPTIME_CLI=$(O)/steptime $(LOADERTEST_BIN)

endef

# BPF helpers' unit tests (BPF_PROG_RUN on the host).
include selftests/bpf_helpers/Build.mk

# Kernel coding style of kmod/, bpf/ and the UAPI header (checkpatch.pl).
define CHECK_HOST_CMDS +=
	$(Q)echo "# selftests/style/checkpatch.sh"; O=$(O) KSRC_TAR=$(KSRC_TAR) selftests/style/checkpatch.sh

endef

# Beside it, run in a guest by it: user-mode single-stepping with BPF loads,
# without steptime (issue 46's kernel-mode single-step warning).
TF_STEP		:= $(O)/selftests/vmtest/tf_step
$(TF_STEP): selftests/vmtest/tf_step.c
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< -lpthread
ifeq ($(ARCH),x86_64)
ALL_TARGETS	+= $(TF_STEP)
endif

# The VM runner's own contract: scripts/vmtest.sh, scripts/vmsuite.sh and
# selftests/run_vm.sh's verdicts (boots about twenty guests, a few minutes;
# `make check` runs it before the suites that rely on it).
.PHONY: check-vmtest
check-vmtest: targets
	$(Q)selftests/vmtest/test_vmtest.sh

# The fuzzer, long: FUZZ_SECONDS per kernel (make check runs it for a
# minute, FUZZ_SECONDS=60 by default, as one of the VM tests).
FUZZ_SECONDS	?= 900
FUZZ_KILL_PCT	?= 40
.PHONY: fuzz
fuzz: targets
	$(Q)test -n "$(KVERS)" || { echo "fuzz: no guest kernel" >&2; exit 1; }
	$(Q)for k in $(KVERS); do \
		FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_KILL_PCT=$(FUZZ_KILL_PCT) FUZZ_STRICT=1 \
		RUN_VM_TIMEOUT=$$(($(FUZZ_SECONDS) + 600)) \
		VMTEST_ENV="FUZZ_SECONDS FUZZ_SEED FUZZ_KILL_PCT FUZZ_ATTACH FUZZ_STRICT RUN_VM_TIMEOUT" \
		scripts/vmtest.sh --kernel $$k -t $$(($(FUZZ_SECONDS) + 900)) -- \
		selftests/run_vm.sh 'fuzz_*' || exit 1; \
	done

# hal_steps (selftests/hal_real/prog/): N processes x M steps through the
# ACL runtime and libascend_hal.so stand-ins, printing npusim's truth per
# process and step; run by hal_real_ranks, and by tests comparing it with
# steptime's figures. Not a test itself: built beside $(VM_TEST_DIR).
HAL_STEPS	:= $(O)/selftests/hal_steps
ALL_TARGETS	+= $(HAL_STEPS)

$(HAL_STEPS): selftests/hal_real/prog/hal_steps.c $(LIB_A) \
		$(O)/runtime/libascendcl.so $(O)/libascend_hal.so
	@echo "  PROG    $@"
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< $(LIB_A) $(LIB_LDLIBS) $(RT_LDLIBS) \
		$(ASCEND_HAL_LDLIBS) -lpthread
$(VM_TEST_DIR)/hal_real_ranks: $(HAL_STEPS)

# Mutation check (selftests/mutate/mutations): known-bad edits in a scratch
# copy of the tree must fail the tests that name what they break. Here the
# host ones (about 2 minutes, most of it test_install.sh and two loads),
# after the runner's own check: mutations no test catches, which it must
# report "not ok". `make mutate` runs every mutation, the VM ones included.
define CHECK_HOST_CMDS +=
	$(Q)echo "# selftests/mutate/mutate.sh, on mutations nothing catches: 2 not ok"; \
		out=$$(O=$(O) MUTATE_LIST=selftests/mutate/uncaught selftests/mutate/mutate.sh); \
		st=$$?; echo "$$out" | sed 's/^/#   /'; \
		[ $$st = 1 ] && [ "$$(echo "$$out" | grep -c '^not ok')" = 2 ] && \
		echo "$$out" | grep -q '^not ok 1 .*# it still passes$$' && \
		echo "$$out" | grep -q '^not ok 2 .*# the edit changed nothing' || { \
		echo "mutate.sh passed mutations no test catches" >&2; exit 1; }
	$(Q)echo "# selftests/mutate/mutate.sh"; O=$(O) selftests/mutate/mutate.sh

endef

.PHONY: mutate
mutate: targets
	$(Q)O=$(O) MUTATE_KVER=$(firstword $(KVERS)) selftests/mutate/mutate.sh --all
