# examples: CANN's step flow in C (dynamic and static against libsteptime),
# a PyTorch-shaped Python loop (examples/torch_like.py, nothing to build).
# The ACL runtime on npusim they use is sim/runtime/Build.mk's.

include sim/runtime/Build.mk

EX_DIR		:= $(O)/examples
EX_CFLAGS	:= $(ALL_CFLAGS) -MMD -MP
EX_BINS		:= $(EX_DIR)/acl_steps $(EX_DIR)/acl_steps-static

ALL_TARGETS	+= $(EX_BINS)

# Both link the ACL runtime on npusim (sim/runtime/, $(RT_SO)) as a CANN
# program links libascendcl.so.
$(EX_DIR)/acl_steps: examples/acl_steps.c $(O)/$(LIB_SONAME) $(LIB_SO) $(RT_SO)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(EX_CFLAGS) -o $@ $< -L$(O) -lsteptime -L$(RT_DIR) -lascendcl \
		-Wl,-rpath,'$$ORIGIN/..' -Wl,-rpath,'$$ORIGIN/../runtime'

# Static libsteptime (system libraries stay dynamic).
$(EX_DIR)/acl_steps-static: examples/acl_steps.c $(LIB_A) $(RT_SO)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(EX_CFLAGS) -o $@ $< $(LIB_A) $(LIB_LDLIBS) -L$(RT_DIR) \
		-lascendcl -Wl,-rpath,'$$ORIGIN/../runtime'

-include $(EX_BINS:=.d)

# Both run on the host without steptime loaded (marks not reported).
define CHECK_HOST_CMDS +=
	$(Q)t=$$(mktemp -d) && for x in $(EX_BINS); do \
		STEPTIME_PIN_DIR=$$t/none $$x $$t/out >/dev/null 2>&1 && \
		test -s $$t/out/steptime_step_trace_*_1.csv || \
		{ echo "not ok $$x"; rm -rf $$t; exit 1; }; \
		echo "ok $$x"; rm -rf $$t/out; done; rm -rf $$t

endef
