# SPDX-License-Identifier: GPL-2.0
#
# steptime: per-training-step device timing for Ascend NPUs, kernel-assisted.
#
#   make            build the library, the CLI, the BPF object and npusim.ko
#   make check      every test: host tests, then the VM tests on npusim
#                   (x86_64 guests, then aarch64 guests of the arm64 build)
#   make arm64      cross-build everything for aarch64 into $(O)/arm64
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

.PHONY: all targets deps check check-host check-vm demo bench install clean kmod \
	arm64 check-vm-arm64
.DEFAULT_GOAL := all

deps:
	$(Q)scripts/deps.sh all

include bpf/Build.mk
include lib/Build.mk
include sim/ascend_hal/Build.mk
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

# aarch64 (Kunpeng hosts): the same tree cross-built into $(O)/arm64, against
# Debian's arm64 packages that scripts/deps.sh unpacks into $(ARM64_ROOT)
# (kernels, headers, libbpf/libelf/zlib, libc, busybox, bash). Programs are
# dynamic, as on a real host: the guest's root is $(ARM64_ROOT) over 9p.
# BTF: 6.12's headers ship a vmlinux; 6.1's BTF is cut out of its Image.
ARM64_ROOT	?= /var/cache/steptime/arm64/root
ARM64_LIBDIR	:= $(ARM64_ROOT)/usr/lib/aarch64-linux-gnu
ARM64_KVERS	= $(patsubst linux-headers-%,%,$(notdir $(patsubst %/,%,$(dir \
		  $(wildcard $(ARM64_ROOT)/usr/src/linux-headers-*-arm64/Module.symvers)))))
# The arm64 VM suites in make check, on both arm64 kernels: npusim's basics,
# the BPF suites in every attach mode the kernel has (6.1: kprobe, tp_btf,
# tracepoint, its fentry SKIPs for want of ftrace direct calls; 6.12: all
# four), and the loader's tests whose paths differ on arm64: auto picks
# kprobe on 6.1 and fentry on 6.12, --btf (raw_tp, kprobe), missing
# mounts, errors. Measured on 2 cores: 12 min of CPU in all (qemu's
# single TCG thread: about CI's wall time), of which steptime_* 2.8 min on
# 6.1 and 9 on 6.12 (whose verifier walks every bpf_loop() callback to
# convergence: 4x 6.1's load time).
# The rest of the loader's suite is loads of arch-independent code (5 min
# on 6.1, about 20 on 6.12); the other suites are user space tested on the
# x86_64 guests (scripts SKIP here: no python3 or bpftool in the arm64
# root). Everything, for a release:
#   make check-vm-arm64 ARM64_VM_TESTS="'*'"
ARM64_VM_TESTS	?= 'npusim_basic' 'steptime_*' \
		   'loader_loader -r global.errors -r slow.npusim_auto_mode -r slow.missing_mounts -r slow.verifier_budget'

ifeq ($(ARCH),arm64)
# Inside the cross build (the sub-make of `make arm64`).
$(O)/vm/btf-%: $(ARM64_ROOT)/boot/vmlinuz-% scripts/vm/extract-btf.sh
	$(Q)scripts/vm/extract-btf.sh $< $@
$(O)/vmlinux.h: $(VMLINUX_BTF)
endif

arm64:
	$(Q)scripts/deps.sh arm64
	$(Q)k="$(strip $(ARM64_KVERS))"; [ -n "$$k" ] || { \
		echo "arm64: no arm64 kernel headers in $(ARM64_ROOT)" >&2; exit 1; }; \
	$(MAKE) --no-print-directory targets O=$(O)/arm64 ARCH=arm64 \
		CC=aarch64-linux-gnu-gcc AR=aarch64-linux-gnu-ar \
		CFLAGS="$(CFLAGS) -I$(ARM64_ROOT)/usr/include -L$(ARM64_LIBDIR) -Wl,-rpath-link,$(ARM64_LIBDIR):$(ARM64_ROOT)/lib/aarch64-linux-gnu" \
		KVERS="$$k" KHDR_ROOT=$(ARM64_ROOT) KMOD_BTF_BASE=$(O)/arm64/vm/btf- \
		KMOD_MAKE_ARGS="ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-" \
		VMLINUX_BTF=$(O)/arm64/vm/btf-$$(echo $$k | cut -d' ' -f1)

check-vm-arm64: arm64
	$(Q)k="$(strip $(ARM64_KVERS))"; for k in $$k; do \
		O=$(O)/arm64 RUN_VM_TIMEOUT=1800 VMTEST_ENV=RUN_VM_TIMEOUT \
		scripts/vmtest.sh --kernel $$k -t 3600 -- selftests/run_vm.sh $(ARM64_VM_TESTS) || exit 1; \
	done

check: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(MAKE) --no-print-directory check-host
	$(Q)$(MAKE) --no-print-directory check-vm
	$(Q)$(MAKE) --no-print-directory check-vm-arm64

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
