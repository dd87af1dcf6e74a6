# SPDX-License-Identifier: GPL-2.0
# npusim.ko for every guest kernel in $(KVERS), built out of tree in
# $(O)/kmod/<kver>/: the top-level Kbuild, include/ and kmod/*.[ch] are
# symlinked there, so that kbuild writes nothing into the source tree.
#
# fentry on npusim's functions needs module BTF. 6.12's headers ship a BTF
# vmlinux, so kbuild makes it; 6.1's do not, so it is added afterwards with
# pahole against the vmlinux extracted from the installed bzImage (the same
# pahole flags 6.1's kbuild would use). flock: several make runs sharing
# $(O) must not run kbuild in the same directory at once. kbuild must not
# inherit our command line (O=, CC=...): it would build elsewhere, or with
# another compiler than the kernel's.

KMOD_SRCS	:= $(wildcard kmod/*.c kmod/*.h)
KMOD_KOS	:= $(foreach k,$(KVERS),$(O)/kmod/$(k)/npusim.ko)
KMOD_PAHOLE	:= --btf_gen_floats -j --lang_exclude=rust
# Cross builds (make arm64) set these: where the headers were unpacked,
# kbuild's ARCH/CROSS_COMPILE, and the BTF base of kernels whose headers
# have no vmlinux (the file name, up to the kernel version).
KHDR_ROOT	?=
KMOD_MAKE_ARGS	?=
KMOD_BTF_BASE	?= $(O)/vm/vmlinux-

ALL_TARGETS	+= $(KMOD_KOS)

kmod: $(KMOD_KOS)

# The uncompressed vmlinux inside the xz payload of /boot/vmlinuz-<kver>
# (installed, or unpacked by scripts/deps.sh demo under $(AMD64_ROOT));
# xz complains about the data after the payload, the output is fine.
AMD64_ROOT	?= /var/cache/steptime/amd64/root
vpath vmlinuz-% /boot $(AMD64_ROOT)/boot
$(O)/vm/vmlinux-%: vmlinuz-%
	$(Q)mkdir -p $(@D)
	$(Q)off=$$(LC_ALL=C grep -obUaP '\xfd\x37\x7a\x58\x5a\x00' $< | head -n1 | cut -d: -f1); \
		[ -n "$$off" ] || { echo "kmod: no xz payload in $<" >&2; exit 1; }; \
		tail -c +$$((off + 1)) $< | xz -dc >$@.tmp 2>/dev/null; \
		[ "$$(head -c 4 $@.tmp | od -An -tx1 | tr -d ' ')" = 7f454c46 ] || \
			{ echo "kmod: cannot extract vmlinux from $<" >&2; rm -f $@.tmp; exit 1; }
	$(Q)mv -f $@.tmp $@

# $(1): kernel version; $(2): headers; $(3): BTF base when kbuild has none.
define kmod_rule
$(O)/kmod/$(1)/npusim.ko: $(KMOD_SRCS) Kbuild kmod/Build.mk \
		include/uapi/ascend_trs.h include/uapi/npusim_abi.h $(3)
	@echo "  KMOD    $$@"
	$(Q)mkdir -p $$(@D)/kmod
	$(Q)ln -sfn $(abspath Kbuild) $$(@D)/Kbuild
	$(Q)ln -sfn $(abspath include) $$(@D)/include
	$(Q)for f in $(KMOD_SRCS); do ln -sfn $(abspath .)/$$$$f $$(@D)/$$$$f; done
	$(Q)flock $$(@D)/.lock env -u MAKEFLAGS -u MFLAGS $(MAKE) --no-print-directory \
		-C $(2) M=$(abspath $(O)/kmod/$(1)) $(if $(filter 1,$(V)),V=1) $(KMOD_MAKE_ARGS) \
		modules >$$(@D)/build.log 2>&1 || \
		{ cat $$(@D)/build.log >&2; exit 1; }
	$(Q)! grep -i -e warning -e error $$(@D)/build.log >&2
	$(if $(3),$(Q)pahole -J $(KMOD_PAHOLE) --btf_base $(3) $$@)
	$(Q)touch $$@
endef

$(foreach k,$(KVERS),$(eval $(call kmod_rule,$(k),$(KHDR_ROOT)/usr/src/linux-headers-$(k),$(if \
	$(wildcard $(KHDR_ROOT)/usr/src/linux-headers-$(k)/vmlinux),,$(KMOD_BTF_BASE)$(k)))))

.SECONDARY: $(foreach k,$(KVERS),$(KMOD_BTF_BASE)$(k))
