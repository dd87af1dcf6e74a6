# lib/: what applications load, and only that.
#
#   libsteptime.so.1 / libsteptime.a   the app library: step marks, CANN's
#	aclprof step and msproftx API, mstx, the reader, formatting. Links
#	libc alone (checked by `make check-host`): the few bpf(2) calls it
#	makes are raw syscalls (lib/bpf_sys.c), the npusim HAL is not in it.
#	libms_tools_ext.so is a link to it: torch_npu and CANN's mstx users
#	load that name.
#   The loader (loader/, libsteptime-loader.a) and the stand-ins for
#	Ascend hardware (sim/) are built beside it, never linked into it.
#   npusim's HAL (sim/hal/) and its ACL runtime stand-in (sim/runtime/)
#	stand in for Ascend hardware: test and demo infrastructure, never
#	part of libsteptime.
#
# Adding a source: one line in APP_SRCS.

# One version, in the public header.
STEPTIME_VERSION := $(shell sed -n 's/^\#define STEPTIME_VERSION\t*"\(.*\)"/\1/p' \
		    include/steptime/steptime.h)
LIBDIR		?= $(PREFIX)/lib
INCLUDEDIR	?= $(PREFIX)/include
BINDIR		?= $(PREFIX)/bin
MANDIR		?= $(PREFIX)/share/man
# The dist-packages folder Debian's python3 searches under PREFIX
# (/usr/local/lib/python3.11/dist-packages), computed when installing.
PYTHON		?= $(firstword $(wildcard /usr/bin/python3) python3)
PYDIR		?= $(PREFIX)/lib/python$(shell $(PYTHON) -c \
		   'import sys; print("%d.%d" % sys.version_info[:2])')/dist-packages

APP_SRCS	:= lib/base.c lib/step.c lib/stream.c lib/reader.c lib/format.c \
		   lib/acl_prof.c lib/bpf_sys.c lib/phase_write.c lib/mstx.c \
		   lib/forward.c lib/cann.c lib/phase_read.c lib/pyexit.c lib/sends.c

APP_OBJS	:= $(patsubst %.c,$(O)/obj/%.o,$(APP_SRCS))
LIB_CFLAGS	:= $(ALL_CFLAGS) -fvisibility=hidden -MMD -MP
LIB_SO		:= $(O)/libsteptime.so
LIB_SONAME	:= libsteptime.so.1
LIB_A		:= $(O)/libsteptime.a
MSTX_SO		:= $(O)/libms_tools_ext.so
# What a program linking $(LIB_A) statically adds (the loader and libbpf
# for those that load; a program that does not load drops them).
LIB_LDLIBS	:= $(LOADER_A) $(LIB_A) $(LDLIBS_BPF) -lpthread -ldl

ALL_TARGETS	+= $(O)/$(LIB_SONAME) $(LIB_SO) $(LIB_A) $(LOADER_A) $(MSTX_SO)

# The app objects call libbpf's names; lib/bpf_sys.h maps them to ours.
$(APP_OBJS): LIB_CFLAGS += -include lib/bpf_sys.h

$(O)/obj/lib/%.o: lib/%.c
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(LIB_CFLAGS) -c -o $@ $<

# libc only: no -lpthread/-ldl (glibc 2.34+ has them in libc).
$(O)/$(LIB_SONAME): $(APP_OBJS) lib/libsteptime.map
	$(Q)$(CC) -shared -Wl,-soname,$(LIB_SONAME) \
		-Wl,--version-script=lib/libsteptime.map -Wl,-z,defs \
		-Wl,-z,nodelete \
		-Wl,--as-needed -o $@ $(APP_OBJS)

$(LIB_SO) $(MSTX_SO): $(O)/$(LIB_SONAME)
	$(Q)ln -sf $(LIB_SONAME) $@

# A program linking $(LIB_A) also gets $(LOADER_A) through $(LIB_LDLIBS).
$(LIB_A): $(APP_OBJS) $(LOADER_A)
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $(APP_OBJS)

-include $(APP_OBJS:.o=.d)

# steptime.step() in C (python/steptime/_steptime.c), for the source tree's
# python/ (tests, bench) as `pip install ./python` builds it for a package:
# where $(PYTHON) has its headers (python3-dev), else the module runs ctypes.
# Not in a cross build (make arm64): the headers are the build machine's.
PY_INC		:= $(shell $(PYTHON) -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null)
PY_EXT		:= $(O)/python/steptime/_steptime$(shell $(PYTHON) -c \
		   'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))' 2>/dev/null)
ifeq ($(ARCH),$(shell uname -m))
ifneq ($(wildcard $(PY_INC)/Python.h),)
ALL_TARGETS	+= $(PY_EXT)
endif
endif

$(PY_EXT): python/steptime/_steptime.c include/steptime/steptime.h
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -isystem $(PY_INC) -fvisibility=hidden \
		-shared -o $@ $<

# install: headers, the app library, pkg-config file, CLI, Python module,
# man pages. Never the HAL nor the loader library; not the BPF object (the
# command carries it, in its skeleton). Not loader.h: its library is the
# command's, never installed. scripts/install.sh keeps a manifest of what
# it puts (files, and the directories it makes), for `make uninstall`.
LIB_HDRS	:= include/steptime/abi.h include/steptime/export.h \
		   include/steptime/steptime.h
ACL_HDRS	:= include/acl/acl_base.h include/acl/acl_prof.h
MSTX_HDRS	:= include/mstx/ms_tools_ext.h
UAPI_HDRS	:= include/uapi/ascend_trs.h
MAN_PAGES	:= man/steptime.8 man/libsteptime.3
MANIFEST	= $(LIBDIR)/steptime/manifest
INST		= DESTDIR=$(DESTDIR) scripts/install.sh $(MANIFEST)

INSTALL_DEPS	+= $(O)/$(LIB_SONAME) $(LIB_SO) $(LIB_A) $(O)/steptime

# steptime.pc is written at install time, so that it names the PREFIX of
# this install, not that of the first build. ldconfig last: a program
# linked with `pkg-config --libs steptime` then starts with nothing set.
define INSTALL_CMDS +=
	$(Q)$(INST) file 644 $(LIB_HDRS) $(INCLUDEDIR)/steptime
	$(Q)$(INST) file 644 $(UAPI_HDRS) $(INCLUDEDIR)/steptime/uapi
	$(Q)$(INST) file 644 $(ACL_HDRS) $(INCLUDEDIR)/acl
	$(Q)$(INST) file 644 $(MSTX_HDRS) $(INCLUDEDIR)/mstx
	$(Q)$(INST) file 755 $(O)/$(LIB_SONAME) $(LIBDIR)
	$(Q)$(INST) link $(LIB_SONAME) $(LIBDIR)/libsteptime.so
	$(Q)$(INST) link $(LIB_SONAME) $(LIBDIR)/libms_tools_ext.so
	$(Q)$(INST) file 644 $(LIB_A) $(LIBDIR)
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
		-e 's|@VERSION@|$(STEPTIME_VERSION)|' steptime.pc.in > $(O)/steptime.pc
	$(Q)$(INST) file 644 $(O)/steptime.pc $(LIBDIR)/pkgconfig
	$(Q)$(INST) file 755 $(O)/steptime $(BINDIR)
	$(Q)$(INST) file 644 python/steptime/*.py $(PYDIR)/steptime
	$(Q)$(INST) file 644 python/_steptime_torch.py python/steptime-torch.pth $(PYDIR)
	$(Q)$(INST) file 644 man/steptime.8 $(MANDIR)/man8
	$(Q)$(INST) file 644 man/libsteptime.3 $(MANDIR)/man3
	$(Q)$(INST) ldconfig $(LIBDIR)

endef

define UNINSTALL_CMDS +=
	$(Q)$(INST) uninstall

endef

# Zero-change deployment (LD_PRELOAD in front of a stand-in for CANN's
# profiling libraries) and the install, on the host.
FAKE_CANN_SO	:= $(O)/selftests/lib/libfakecann.so
FWD_TEST	:= $(O)/selftests/lib/test_forward
ALL_TARGETS	+= $(FAKE_CANN_SO) $(FWD_TEST)

$(FAKE_CANN_SO): selftests/lib/fake_cann.c include/acl/acl_prof.h
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Wno-missing-prototypes -shared -o $@ $<

$(FWD_TEST): selftests/lib/test_forward.c $(FAKE_CANN_SO) $(KSFT_HDRS)
	$(Q)$(CC) $(ALL_CFLAGS) -I$(KSFT_DIR) -Wno-missing-prototypes \
		-Wno-sign-compare -o $@ $< -L$(@D) -lfakecann \
		-Wl,-rpath,'$$ORIGIN'

define CHECK_HOST_CMDS +=
	$(Q)echo "# $(FWD_TEST)"; STEPTIME_LIB=$(O)/$(LIB_SONAME) $(FWD_TEST)
	$(Q)O=$(O) selftests/lib/test_install.sh
	$(Q)O=$(O) selftests/lib/test_pip.sh
	$(Q)O=$(O) CC=$(CC) selftests/lib/test_acl_headers.sh
	$(Q)STEPTIME_LIB=$(O)/$(LIB_SONAME) $(PYTHON) selftests/lib/test_python_run.py

endef

ifndef SELFTESTS_LIB_MK
include selftests/lib/Build.mk
endif
