/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The libbpf calls the app library makes (open a pinned map, check
 * what it is, walk and read it, in batches where the kernel can), as raw bpf(2) syscalls in lib/bpf_sys.c,
 * so that what applications load links libc alone (lib/Build.mk).
 *
 * lib/Build.mk force-includes this header into the app library's objects:
 * the libbpf names they call map to st_bpf_* (and <bpf/bpf.h> declares
 * those with libbpf's prototypes), so the sources stay plain libbpf code
 * and nothing clashes with libbpf in a program that links both.
 */
#ifndef _STEPTIME_BPF_SYS_H
#define _STEPTIME_BPF_SYS_H

#define bpf_obj_get_opts	st_bpf_obj_get_opts
#define bpf_obj_get_info_by_fd	st_bpf_obj_get_info_by_fd
#define bpf_map_get_next_key	st_bpf_map_get_next_key
#define bpf_map_lookup_elem	st_bpf_map_lookup_elem
#define bpf_map_lookup_batch	st_bpf_map_lookup_batch

#endif /* _STEPTIME_BPF_SYS_H */
