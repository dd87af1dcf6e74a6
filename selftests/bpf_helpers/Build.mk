# selftests/bpf_helpers: unit tests of bpf/'s helpers. Each *.bpf.c here
# includes one concern's header from bpf/ and is built like the program
# (BPF_CFLAGS), with a skeleton; test_helpers runs them by BPF_PROG_RUN on
# the host (root: else SKIP). Under a second.

BPFH_DIR	:= $(O)/selftests/bpf_helpers
BPFH_BIN	:= $(BPFH_DIR)/test_helpers
BPFH_OBJS	:= $(patsubst selftests/bpf_helpers/%.bpf.c,$(BPFH_DIR)/%.bpf.o,\
		   $(wildcard selftests/bpf_helpers/*.bpf.c))
BPFH_SKELS	:= $(BPFH_OBJS:.bpf.o=.skel.h)

# Its headers from clang (-MMD): an edit of one bpf/ header rebuilds the
# programs that include it, not all.
$(BPFH_DIR)/%.bpf.o: selftests/bpf_helpers/%.bpf.c $(O)/vmlinux.h
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MMD -MP -MF $@.d -MT $@ -c $< -o $@.tmp.o
	$(Q)$(BPFTOOL) gen object $@ $@.tmp.o && rm -f $@.tmp.o

$(BPFH_DIR)/%.skel.h: $(BPFH_DIR)/%.bpf.o
	$(Q)$(BPFTOOL) gen skeleton $< name $*_bpf > $@.tmp && mv $@.tmp $@

# The case tables leave the zeros they expect out.
$(BPFH_BIN): selftests/bpf_helpers/test_helpers.c $(BPFH_SKELS) $(KSFT_HDRS)
	$(Q)$(CC) $(VM_TEST_CFLAGS) -Wno-missing-field-initializers -Ibpf -I$(BPFH_DIR) -MF $@.d -o $@ $< $(LDLIBS_BPF)

ALL_TARGETS	+= $(BPFH_OBJS) $(BPFH_SKELS) $(BPFH_BIN)
-include $(BPFH_BIN).d $(BPFH_OBJS:=.d)

define CHECK_HOST_CMDS +=
	$(Q)echo "# $(BPFH_BIN)"; $(BPFH_BIN)

endef
