# bpf/: the CO-RE BPF object and its skeleton.

BPF_OBJ		:= $(O)/steptime.bpf.o
BPF_SKEL	:= $(O)/steptime.skel.h
VMLINUX_BTF	?= /sys/kernel/btf/vmlinux
BPF_CFLAGS	:= -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(BPF_ARCH) \
		   -Wall -Wno-unused-function -I$(O) -Iinclude -Iinclude/uapi -Ibpf

# Generated at build time from the running kernel's BTF; never committed.
$(O)/vmlinux.h: | $(O)
	$(Q)$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@.tmp && mv $@.tmp $@

$(BPF_OBJ): bpf/steptime.bpf.c bpf/steptime.h $(wildcard bpf/*.bpf.h) include/steptime/abi.h \
	    include/uapi/ascend_trs.h $(O)/vmlinux.h
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@.tmp.o
	$(Q)$(BPFTOOL) gen object $@ $@.tmp.o && rm -f $@.tmp.o

$(BPF_SKEL): $(BPF_OBJ)
	$(Q)$(BPFTOOL) gen skeleton $< name steptime_bpf > $@.tmp && mv $@.tmp $@

ALL_TARGETS	+= $(BPF_OBJ) $(BPF_SKEL)
