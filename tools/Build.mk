# tools/: the steptime command. Linked against libsteptime.a so that it runs
# from the build tree and after install alike.

TOOL_SRCS	:= $(sort $(wildcard tools/*.c))

$(O)/steptime: $(TOOL_SRCS) $(wildcard tools/*.h) $(LIB_A)
	$(Q)$(CC) $(ALL_CFLAGS) -Itools -o $@ $(TOOL_SRCS) $(LIB_A) $(LIB_LDLIBS)

ALL_TARGETS	+= $(O)/steptime

# The sidecar's steptime (deploy/README.md): static, libbpf, libelf, zlib and
# libc inside (Debian's -dev packages of the build ship the .a files), so
# that it runs in an image holding nothing else. glibc warns at link time
# that getpwuid(), getgrnam() and dlopen() want its shared NSS modules and
# loader: without them (an image with no /etc/passwd) owners print as
# numbers, and the ring kick's dlopen() of libsteptime.so.1 finds nothing
# (`load --lib` names it), which is all a sidecar meets; -w keeps those
# warnings, the only ones of this link, out of every build's output.
$(O)/steptime-static: $(TOOL_SRCS) $(wildcard tools/*.h) $(LIB_A) $(LOADER_A)
	$(Q)$(CC) $(ALL_CFLAGS) -static -Wl,-w -Itools -o $@ $(TOOL_SRCS) \
		$(LIB_LDLIBS)

ALL_TARGETS	+= $(O)/steptime-static

include selftests/observe/Build.mk

# The docs (--help, man pages) name every option and exported function.
define CHECK_HOST_CMDS +=
	$(Q)echo "# selftests/tools/test_docs.sh"; O=$(O) selftests/tools/test_docs.sh

endef

# bench/run.sh's verdicts: missing or partial data never reads "met".
define CHECK_HOST_CMDS +=
	$(Q)echo "# selftests/tools/test_bench_verdict.sh"; selftests/tools/test_bench_verdict.sh

endef
