// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What the kernel offers, asked before anything is tried, as libbpf-tools'
 * trace_helpers.c asks it (kprobe_exists(), module_btf_exists(),
 * fentry_can_attach()): kallsyms, module BTF, an empty fentry program,
 * the mounts, the capabilities and the BTF that CO-RE needs.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>

#include "loader_int.h"

/* Whether kallsyms has @h's function, in @h's module. */
bool kallsyms_has(const struct hook *h)
{
	char line[512], name[256], mod[64];
	bool found = false;
	FILE *f;
	int n;

	if (!h->fn)
		return false;
	f = fopen("/proc/kallsyms", "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		mod[0] = '\0';
		n = sscanf(line, "%*s %*s %255s [%63[^]]]", name, mod);
		if (n >= 1 && strcmp(name, h->fn) == 0 &&
		    (!h->mod || strcmp(mod, h->mod) == 0 ||
		     (!mod[0] && access("/sys/module", F_OK) == 0)))
			found = true;
	}
	fclose(f);
	return found;
}

/* fentry on a module's function needs that module's BTF. */
bool module_btf_has(const struct hook *h)
{
	char path[PATH_MAX];

	if (!h->mod)
		return access("/sys/kernel/btf/vmlinux", R_OK) == 0;
	snprintf(path, sizeof(path), "/sys/kernel/btf/%s", h->mod);
	return access(path, R_OK) == 0;
}

/* "mod:fn", the kprobe target naming the module (vpbl has a namesake). */
const char *kprobe_target(const struct hook *h, char *buf, size_t len)
{
	if (!h->mod)
		return h->fn;
	snprintf(buf, len, "%s:%s", h->mod, h->fn);
	return buf;
}

static bool fs_is(const char *path, long magic)
{
	struct statfs st;

	return statfs(path, &st) == 0 && st.f_type == magic;
}

/* bpffs and tracefs at their usual places; mounted where that is safe. */
int ensure_mounts(const char *pin_dir)
{
	char parent[PATH_MAX], *slash;
	int err;

	if (!fs_is(BPFFS_ROOT, BPF_FS_MAGIC) &&
	    strncmp(pin_dir, BPFFS_ROOT "/", strlen(BPFFS_ROOT) + 1) == 0 &&
	    mount("bpf", BPFFS_ROOT, "bpf", 0, "mode=0755")) {
		fprintf(stderr, "steptime: bpffs is not mounted at %s and mounting it failed: %s\n",
			BPFFS_ROOT, strerror(errno));
		return -ENOTSUP;
	}
	snprintf(parent, sizeof(parent), "%s", pin_dir);
	slash = strrchr(parent, '/');
	if (slash && slash != parent)
		*slash = '\0';
	if (access(parent, F_OK)) {
		err = -errno;
		fprintf(stderr, "steptime: cannot pin at %s: its parent directory %s: %s\n",
			pin_dir, parent, strerror(-err));
		return err;
	}
	if (!fs_is(parent, BPF_FS_MAGIC)) {
		fprintf(stderr, "steptime: %s is not on a bpffs mount\n", pin_dir);
		return -EINVAL;
	}
	/* Mounted only where it is missing, not where it is unreadable. */
	if (access(TRACEFS_ROOT "/events", F_OK) && errno == ENOENT &&
	    mount("tracefs", TRACEFS_ROOT, "tracefs", 0, NULL) &&
	    errno != EBUSY)
		/* Not fatal: only the tracepoint mode needs it. */
		fprintf(stderr, "steptime: tracefs is not mounted at %s and mounting it failed (%s); the tracepoint mode is unavailable\n",
			TRACEFS_ROOT, strerror(errno));
	return 0;
}

/* The id of kernel BTF object @name ("vmlinux" or a module's), or 0. */
static __u32 kernel_btf_id(const char *name)
{
	char got[64];
	struct bpf_btf_info info;
	__u32 id = 0, len;
	int fd;

	while (bpf_btf_get_next_id(id, &id) == 0) {
		fd = bpf_btf_get_fd_by_id(id);
		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		got[0] = '\0';
		info.name = (__u64)(unsigned long)got;
		info.name_len = sizeof(got);
		len = sizeof(info);
		if (bpf_obj_get_info_by_fd(fd, &info, &len))
			got[0] = '\0';
		close(fd);
		if (info.kernel_btf && !strcmp(got, name))
			return id;
	}
	return 0;
}

/*
 * Whether a trampoline attaches to @h: 0, or the error of an empty fentry
 * program's load or attach. arm64 has BPF trampolines since 6.0 but they
 * need ftrace direct calls, which it has since 6.4 (commit 2aa6ac03516d
 * "arm64: ftrace: Add direct call support"): on Debian's 6.1 arm64 kernel
 * fentry programs load and then fail to attach (-ENOTSUPP). Two
 * instructions tell in milliseconds what trying steptime's programs tells
 * after two full verifications (with and without the optional hooks), about
 * a minute under QEMU's TCG.
 */
int fentry_probe(const struct hook *h)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	struct btf *vmlinux, *btf;
	__u32 obj_id = 0;
	int obj_fd = 0, fn_id, prog, link;

	vmlinux = btf__load_vmlinux_btf();
	if (libbpf_get_error(vmlinux))
		return -EOPNOTSUPP;
	btf = vmlinux;
	if (h->mod) {
		obj_id = kernel_btf_id(h->mod);
		btf = obj_id ? btf__load_from_kernel_by_id_split(obj_id, vmlinux) :
			       NULL;
		if (libbpf_get_error(btf) || !btf) {
			btf__free(vmlinux);
			return -ENOENT;
		}
	}
	fn_id = btf__find_by_name_kind(btf, h->fn, BTF_KIND_FUNC);
	if (btf != vmlinux)
		btf__free(btf);
	btf__free(vmlinux);
	if (fn_id < 0)
		return -ENOENT;
	if (obj_id) {
		obj_fd = bpf_btf_get_fd_by_id(obj_id);
		if (obj_fd < 0)
			return -errno;
	}

	LIBBPF_OPTS(bpf_prog_load_opts, po,
		    .expected_attach_type = BPF_TRACE_FENTRY,
		    .attach_btf_id = fn_id,
		    .attach_btf_obj_fd = obj_fd);
	prog = bpf_prog_load(BPF_PROG_TYPE_TRACING, "steptime_probe", "GPL",
			     insns, sizeof(insns) / sizeof(insns[0]), &po);
	if (obj_fd > 0)
		close(obj_fd);
	if (prog < 0)
		return prog;
	link = bpf_raw_tracepoint_open(NULL, prog);
	close(prog);
	if (link < 0)
		return link;
	close(link);
	return 0;
}

/*
 * Which of CAP_BPF and CAP_PERFMON (5.8) this process lacks to load tracing
 * programs: none with both or CAP_SYS_ADMIN. Where capget() fails, the
 * kernel will say.
 */
__u64 load_caps_missing(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = {};
	__u64 eff, bpf = 1ull << CAP_BPF | 1ull << CAP_PERFMON;

	if (syscall(SYS_capget, &h, d))
		return 0;
	eff = d[0].effective | (__u64)d[1].effective << 32;
	return eff & 1ull << CAP_SYS_ADMIN ? 0 : bpf & ~eff;
}

/* Check and note what the kernel offers CO-RE: its BTF, or --btf FILE. */
int btf_check(struct load_ctx *c)
{
	struct btf *btf;
	int err;

	c->kernel_btf = access("/sys/kernel/btf/vmlinux", R_OK) == 0;
	c->btf_path = OPT(c->opts, btf_path);
	if (!c->btf_path) {
		if (c->kernel_btf)
			return 0;
		fprintf(stderr, "steptime: this kernel has no BTF (no /sys/kernel/btf/vmlinux: CONFIG_DEBUG_INFO_BTF is off), which CO-RE needs; pass this kernel's BTF with --btf FILE (BTFHub has files for many distribution kernels; or `pahole --btf_encode_detached FILE vmlinux` from its debug vmlinux)\n");
		return -EOPNOTSUPP;
	}
	btf = btf__parse(c->btf_path, NULL);
	err = libbpf_get_error(btf);
	if (err) {
		char msg[128];

		libbpf_strerror(err, msg, sizeof(msg));
		fprintf(stderr, "steptime: --btf %s: not a BTF file: %s\n",
			c->btf_path, msg);
		return err == -ENOENT ? -ENOENT : -EINVAL;
	}
	if (btf__find_by_name_kind(btf, "task_struct", BTF_KIND_STRUCT) < 0) {
		fprintf(stderr, "steptime: --btf %s: not a kernel's BTF (no struct task_struct)\n",
			c->btf_path);
		err = -EINVAL;
	}
	btf__free(btf);
	return err;
}
