# SPDX-License-Identifier: GPL-2.0
#
# steptime: per-training-step device timing for Ascend NPUs, kernel-assisted.
#
#   make            build the library, the CLI, the BPF object and npusim.ko
#   make check      every test: host tests, then the VM tests on npusim
#   make demo       the main job on the simulated device (boots the VM here)
#   make bench      the benchmarks under bench/
#   make install    PREFIX=/usr/local DESTDIR=
#
# Each folder contributes a Build.mk fragment; build output goes to $(O).

O		?= build
PREFIX		?= /usr/local
DESTDIR		?=
V		?= 0
Q		:= $(if $(filter 1,$(V)),,@)

CC		?= gcc
CLANG		?= clang
BPFTOOL		?= bpftool
ARCH		:= $(shell uname -m)
BPF_ARCH	:= $(patsubst x86_64,x86,$(patsubst aarch64,arm64,$(ARCH)))

# The guest kernels the VM tests boot (Debian's, installed by scripts/deps.sh).
KVERS		?= $(notdir $(patsubst %/,%,$(dir $(wildcard /usr/src/linux-headers-*-amd64/Module.symvers))))
KVERS		:= $(patsubst linux-headers-%,%,$(KVERS))

CFLAGS		?= -O2 -g
WARNINGS	:= -Wall -Wextra -Wno-unused-parameter -Wshadow -Wstrict-prototypes \
		   -Wmissing-prototypes -Wpointer-arith -Wformat=2
ALL_CFLAGS	:= -std=gnu11 $(WARNINGS) $(CFLAGS) -fPIC -D_GNU_SOURCE \
		   -I$(O) -Iinclude -Iinclude/uapi -Ilib
LDLIBS_BPF	:= -lbpf -lelf -lz

# kselftest harness, from Debian's linux-source tarball, never committed.
KSFT_DIR	:= $(O)/kselftest
KSFT_HDRS	:= $(KSFT_DIR)/kselftest_harness.h $(KSFT_DIR)/kselftest.h
KSRC_TAR	:= $(firstword $(wildcard /usr/src/linux-source-6.1.tar.xz))

.PHONY: all targets deps check check-host check-vm demo bench install clean kmod
.DEFAULT_GOAL := all

deps:
	$(Q)scripts/deps.sh all

include bpf/Build.mk
include lib/Build.mk
include tools/Build.mk
include kmod/Build.mk
include selftests/Build.mk
include examples/Build.mk
include bench/Build.mk

# Dependencies first, then a fresh make that sees the installed kernels.
all: deps
	$(Q)$(MAKE) --no-print-directory targets

targets: $(ALL_TARGETS)

$(O) $(O)/bin $(O)/obj $(KSFT_DIR):
	$(Q)mkdir -p $@

$(KSFT_HDRS): | $(KSFT_DIR)
	$(Q)tar -xJf $(KSRC_TAR) -C $(KSFT_DIR) --strip-components=4 --wildcards \
		'*/tools/testing/selftests/kselftest_harness.h' \
		'*/tools/testing/selftests/kselftest.h'
	$(Q)touch $(KSFT_HDRS)

# Host tests: each Build.mk appends its runner to CHECK_HOST_CMDS (one
# command per line, via define/endef or +=  with a trailing ;).
check-host: targets
	$(CHECK_HOST_CMDS)

# VM tests: every guest kernel boots once and runs selftests/run_vm.sh,
# which loads npusim and runs every VM test, printing TAP.
# TCG is slow and CI machines are shared: generous per-program and per-boot
# limits (steptime_steps loads the BPF program ~60 times).
check-vm: targets
	$(Q)[ -n "$(strip $(KVERS))" ] || { \
		echo "check-vm: no guest kernel (/usr/src/linux-headers-*-amd64; scripts/deps.sh vm installs them): nothing would be tested" >&2; \
		exit 1; }
	$(Q)for k in $(KVERS); do \
		RUN_VM_TIMEOUT=900 VMTEST_ENV=RUN_VM_TIMEOUT \
		scripts/vmtest.sh --kernel $$k -t 1800 -- selftests/run_vm.sh || exit 1; \
	done

check: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(MAKE) --no-print-directory check-host
	$(Q)$(MAKE) --no-print-directory check-vm

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)scripts/demo.sh

bench: deps
	$(Q)$(MAKE) --no-print-directory all $(BENCH_TARGETS)
	$(Q)bench/run.sh

install: $(INSTALL_DEPS)
	$(INSTALL_CMDS)

clean:
	$(Q)rm -rf $(O)
	$(Q)rm -rf kmod/*.o kmod/.*.cmd
