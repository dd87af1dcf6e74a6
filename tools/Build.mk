# tools/: the steptime command. Linked against libsteptime.a so that it runs
# from the build tree and after install alike.

TOOL_SRCS	:= $(sort $(wildcard tools/*.c))

# The commit built, for the exporter's steptime_build_info (empty outside a
# git checkout, "-dirty" with uncommitted changes): the header is rewritten
# only when it changes, so that the command is relinked only then.
TOOL_COMMIT	:= $(shell git describe --always --dirty --abbrev=12 --exclude='*' 2>/dev/null)
TOOL_COMMIT_H	:= $(O)/gen/tools/commit.h
$(shell mkdir -p $(dir $(TOOL_COMMIT_H)); \
	echo '#define STEPTIME_COMMIT "$(TOOL_COMMIT)"' | \
	cmp -s - $(TOOL_COMMIT_H) 2>/dev/null || \
	echo '#define STEPTIME_COMMIT "$(TOOL_COMMIT)"' > $(TOOL_COMMIT_H))
TOOL_CFLAGS	= -Itools -I$(dir $(TOOL_COMMIT_H))

$(O)/steptime: $(TOOL_SRCS) $(wildcard tools/*.h) $(TOOL_COMMIT_H) $(LIB_A)
	$(Q)$(CC) $(ALL_CFLAGS) $(TOOL_CFLAGS) -o $@ $(TOOL_SRCS) $(LIB_A) $(LIB_LDLIBS)

ALL_TARGETS	+= $(O)/steptime

# The sidecar's steptime (deploy/README.md): static, libbpf, libelf, zlib and
# libc inside (Debian's -dev packages of the build ship the .a files), so
# that it runs in an image holding nothing else. glibc warns at link time
# that getpwuid(), getgrnam() and dlopen() want its shared NSS modules and
# loader: without them (an image with no /etc/passwd) owners print as
# numbers, and the ring kick's dlopen() of libsteptime.so.1 finds nothing
# (`load --lib` names it), which is all a sidecar meets; -w keeps those
# warnings, the only ones of this link, out of every build's output.
$(O)/steptime-static: $(TOOL_SRCS) $(wildcard tools/*.h) $(TOOL_COMMIT_H) $(LIB_A) $(LOADER_A)
	$(Q)$(CC) $(ALL_CFLAGS) -static -Wl,-w $(TOOL_CFLAGS) -o $@ $(TOOL_SRCS) \
		$(LIB_LDLIBS)

ALL_TARGETS	+= $(O)/steptime-static

include selftests/observe/Build.mk

# The docs (--help, man pages) name every option and exported function.
define CHECK_HOST_CMDS +=
	$(Q)echo "# selftests/tools/test_docs.sh"; O=$(O) selftests/tools/test_docs.sh

endef

# One CLI grammar: a short option's one meaning, old spellings, durations.
define CHECK_HOST_CMDS +=
	$(Q)echo "# selftests/tools/test_cli.sh"; O=$(O) selftests/tools/test_cli.sh

endef

# bench/run.sh's verdicts: missing or partial data never reads "met".
define CHECK_HOST_CMDS +=
	$(Q)echo "# selftests/tools/test_bench_verdict.sh"; selftests/tools/test_bench_verdict.sh

endef
