# npu HAL (include/npusim/hal.h): part of libsteptime, included by
# lib/Build.mk. The VM tests link it on its own as $(O)/obj/libnpuhal.a
# (selftests/Build.mk).
LIB_SRCS	+= lib/hal.c
