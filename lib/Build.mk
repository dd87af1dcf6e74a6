# lib: libsteptime (step marks, reader, CANN aclprof drop-in, formatting).
#
# Other folders add their library sources to LIB_SRCS before the rules
# below are read: the lead's lib/loader.c here, the npusim HAL through
# lib/hal.mk.

STEPTIME_VERSION := 0.1.0
LIBDIR		?= $(PREFIX)/lib
INCLUDEDIR	?= $(PREFIX)/include
BINDIR		?= $(PREFIX)/bin
PYDIR		?= $(PREFIX)/lib/python3/dist-packages

LIB_SRCS	+= lib/step.c lib/stream.c lib/reader.c lib/format.c \
		   lib/acl_prof.c
LIB_SRCS	+= $(wildcard lib/loader.c)
-include lib/hal.mk
LIB_SRCS	:= $(sort $(LIB_SRCS))

LIB_OBJS	:= $(patsubst %.c,$(O)/obj/%.o,$(LIB_SRCS))
LIB_CFLAGS	:= $(ALL_CFLAGS) -fvisibility=hidden -MMD -MP
LIB_LDLIBS	:= $(LDLIBS_BPF) -lpthread -ldl
LIB_SO		:= $(O)/libsteptime.so
LIB_SONAME	:= libsteptime.so.1
LIB_A		:= $(O)/libsteptime.a
LIB_PC		:= $(O)/steptime.pc

ALL_TARGETS	+= $(O)/$(LIB_SONAME) $(LIB_SO) $(LIB_A) $(LIB_PC)

$(O)/obj/lib/%.o: lib/%.c
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(LIB_CFLAGS) -c -o $@ $<

$(O)/$(LIB_SONAME): $(LIB_OBJS) lib/libsteptime.map
	$(Q)$(CC) -shared -Wl,-soname,$(LIB_SONAME) \
		-Wl,--version-script=lib/libsteptime.map -Wl,-z,defs \
		-o $@ $(LIB_OBJS) $(LIB_LDLIBS)

$(LIB_SO): $(O)/$(LIB_SONAME)
	$(Q)ln -sf $(LIB_SONAME) $@

$(LIB_A): $(LIB_OBJS)
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $(LIB_OBJS)

$(LIB_PC): steptime.pc.in lib/Build.mk | $(O)
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
		-e 's|@VERSION@|$(STEPTIME_VERSION)|' $< > $@

# The loader embeds the BPF object through its skeleton.
$(O)/obj/lib/loader.o: $(BPF_SKEL)

-include $(LIB_OBJS:.o=.d)

# install: headers, libraries, pkg-config file, CLI, BPF object, Python.
LIB_HDRS	:= include/steptime/abi.h include/steptime/export.h \
		   include/steptime/loader.h include/steptime/steptime.h
ACL_HDRS	:= include/acl/acl_base.h include/acl/acl_prof.h
HAL_HDRS	:= $(wildcard include/npusim/*.h)
UAPI_HDRS	:= include/uapi/ascend_trs.h

INSTALL_DEPS	+= $(O)/$(LIB_SONAME) $(LIB_SO) $(LIB_A) $(LIB_PC) \
		   $(O)/steptime $(O)/steptime.bpf.o

define INSTALL_CMDS +=
	$(Q)install -d $(DESTDIR)$(INCLUDEDIR)/steptime/uapi \
		$(DESTDIR)$(INCLUDEDIR)/acl \
		$(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(LIBDIR)/steptime \
		$(DESTDIR)$(BINDIR) $(DESTDIR)$(PYDIR)/steptime
	$(Q)install -m 644 $(LIB_HDRS) $(DESTDIR)$(INCLUDEDIR)/steptime/
	$(Q)install -m 644 $(UAPI_HDRS) $(DESTDIR)$(INCLUDEDIR)/steptime/uapi/
	$(Q)install -m 644 $(ACL_HDRS) $(DESTDIR)$(INCLUDEDIR)/acl/
	$(Q)$(if $(HAL_HDRS),install -d $(DESTDIR)$(INCLUDEDIR)/npusim && \
		install -m 644 $(HAL_HDRS) $(DESTDIR)$(INCLUDEDIR)/npusim/,true)
	$(Q)install -m 755 $(O)/$(LIB_SONAME) $(DESTDIR)$(LIBDIR)/
	$(Q)ln -sf $(LIB_SONAME) $(DESTDIR)$(LIBDIR)/libsteptime.so
	$(Q)install -m 644 $(LIB_A) $(DESTDIR)$(LIBDIR)/
	$(Q)install -m 644 $(LIB_PC) $(DESTDIR)$(LIBDIR)/pkgconfig/
	$(Q)install -m 755 $(O)/steptime $(DESTDIR)$(BINDIR)/
	$(Q)install -m 644 $(O)/steptime.bpf.o $(DESTDIR)$(LIBDIR)/steptime/
	$(Q)install -m 644 python/steptime/*.py $(DESTDIR)$(PYDIR)/steptime/

endef

# An installed tree works for a CANN program: `pkg-config --cflags --libs
# steptime` is all it needs (the seed's flow, built from the staged tree).
define CHECK_HOST_CMDS +=
	$(Q)t=$$(mktemp -d) && $(MAKE) --no-print-directory -s install \
		DESTDIR=$$t >/dev/null && \
	PKG_CONFIG_PATH=$$t$(LIBDIR)/pkgconfig PKG_CONFIG_SYSROOT_DIR=$$t \
		$(CC) -o $$t/acl_steps examples/acl_steps.c \
		$$(PKG_CONFIG_PATH=$$t$(LIBDIR)/pkgconfig \
		   PKG_CONFIG_SYSROOT_DIR=$$t pkg-config --cflags --libs steptime) && \
	STEPTIME_PIN_DIR=$$t/none LD_LIBRARY_PATH=$$t$(LIBDIR) \
		$$t/acl_steps $$t/out >/dev/null 2>&1 && \
	test -s $$t/out/steptime_step_trace_*_1.csv && \
	echo "ok install + pkg-config build of examples/acl_steps.c" || \
	{ echo "not ok install + pkg-config build"; rm -rf $$t; exit 1; }; \
	rm -rf $$t

endef

ifndef SELFTESTS_LIB_MK
include selftests/lib/Build.mk
endif
