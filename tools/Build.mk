# tools/: the steptime command. Linked against libsteptime.a so that it runs
# from the build tree and after install alike.

TOOL_SRCS	:= $(sort $(wildcard tools/*.c))

$(O)/steptime: $(TOOL_SRCS) $(wildcard tools/*.h) $(LIB_A)
	$(Q)$(CC) $(ALL_CFLAGS) -Itools -o $@ $(TOOL_SRCS) $(LIB_A) $(LIB_LDLIBS)

ALL_TARGETS	+= $(O)/steptime

include selftests/observe/Build.mk

# The docs (--help, man pages) name every option and exported function.
define CHECK_HOST_CMDS +=
	$(Q)echo "# selftests/tools/test_docs.sh"; O=$(O) selftests/tools/test_docs.sh

endef

# bench/run.sh's verdicts: missing or partial data never reads "met".
define CHECK_HOST_CMDS +=
	$(Q)echo "# selftests/tools/test_bench_verdict.sh"; selftests/tools/test_bench_verdict.sh

endef
