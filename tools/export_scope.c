// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * steptime export's scope: which processes a scoped exporter serves
 * (--pidns, --cgroup, --devices and the process filter), and the parsing
 * of those options.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>

#include "cli.h"
#include "export.h"

/* Whether @path is @root or below it (cgroup v2 paths, "/" the root). */
static bool cgroup_under(const char *path, const char *root)
{
	size_t n = strlen(root);

	if (n == 1)
		return true;
	return !strncmp(path, root, n) && (path[n] == '\0' || path[n] == '/');
}

/*
 * Process @tgid's cgroup v2 path, as /proc/PID/cgroup shows it to this
 * exporter (relative to its cgroup namespace). Return: 0 or -errno.
 */
static int proc_cgroup(__u32 tgid, char *buf, size_t len)
{
	char path[64], line[1024];
	int err = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/cgroup", tgid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3))
			continue;	/* a v1 hierarchy */
		line[strcspn(line, "\n")] = '\0';
		snprintf(buf, len, "%s", line + 3);
		err = 0;
	}
	fclose(f);
	return err;
}

/* Whether device id @dev (a label value) is one of --devices. */
static bool scope_device(const struct scope *sc, const char *dev)
{
	unsigned long long id;

	if (cli_parse_ull(dev, 10, 0, SCOPE_DEVICES - 1, &id))
		return false;	/* unknown device: not one of the set */
	return sc->devices[id / 64] & (1ull << (id % 64));
}

/*
 * Whether the live process @tgid (@ns_tgid in its PID namespace, started
 * at @start) is in --cgroup, --devices and the process filter; the PID
 * namespace was checked on its records. A process out of scope is
 * remembered, so that its /proc files are not read at every poll (a slot
 * reused by another process only costs a new check).
 */
bool proc_in_scope(struct scope *sc, __u32 tgid, __u32 ns_tgid,
		   __u64 start)
{
	const struct proc_filter *f = &sc->filter;
	size_t slot = tgid % SCOPE_SKIP;
	char cg[sizeof(sc->cgroup)];
	struct proc_labels l;
	bool in = true;

	if (!sc->cgroup[0] && !sc->have_devices && !f->pid &&
	    !proc_filter_labels(f))
		return true;
	if (sc->skip[slot].tgid == tgid && sc->skip[slot].start == start)
		return false;
	if (sc->cgroup[0])
		in = !proc_cgroup(tgid, cg, sizeof(cg)) && cgroup_under(cg, sc->cgroup);
	if (in && (sc->have_devices || proc_filter_labels(f)))
		in = !proc_labels_read(tgid, &l) &&
		     (!sc->have_devices || scope_device(sc, l.device)) &&
		     proc_filter_match(f, tgid, ns_tgid, &l);
	else if (in)
		in = proc_filter_match(f, tgid, ns_tgid, NULL);
	if (!in) {
		sc->skip[slot].tgid = tgid;
		sc->skip[slot].start = start;
	}
	return in;
}

/* --pidns INO or a path to a namespace file (/proc/PID/ns/pid). */
int scope_pidns(struct scope *sc, const char *arg)
{
	unsigned long long ino;
	struct stat st;

	if (!cli_parse_ull(arg, 10, 1, UINT32_MAX, &ino)) {
		sc->pidns_ino = (__u32)ino;
		return 0;
	}
	if (stat(arg, &st))
		return cli_usage_error("export", "--pidns: '%s': %s (an inode number, or a path such as /proc/PID/ns/pid)",
				       arg, strerror(errno));
	sc->pidns_ino = (__u32)st.st_ino;
	return 0;
}

/*
 * The cgroup path of directory @dir on a cgroup2 file system: what is
 * below the mount's root (found where the device changes going up), which
 * is what /proc/PID/cgroup shows a reader of the same cgroup namespace.
 */
static int cgroup2_path(const char *dir, char *out, size_t len)
{
	char buf[PATH_MAX], up[PATH_MAX + 3];
	struct stat st, pst;
	size_t n;

	if (!realpath(dir, buf))
		return -errno;
	if (stat(buf, &st))
		return -errno;
	for (n = strlen(buf); n > 1; n = strlen(buf)) {
		snprintf(up, sizeof(up), "%s/..", buf);
		if (stat(up, &pst) || pst.st_dev != st.st_dev)
			break;
		*strrchr(buf, '/') = '\0';
		if (!buf[0])
			snprintf(buf, sizeof(buf), "/");
	}
	/* buf is the mount point now: the cgroup path is what follows it. */
	if (!realpath(dir, up))
		return -errno;
	n = strcmp(buf, "/") ? strlen(buf) : 0;
	snprintf(out, len, "%s", up[n] ? up + n : "/");
	return 0;
}

/*
 * --cgroup PATH: a cgroup v2 directory (/sys/fs/cgroup/kubepods/...), or a
 * path as /proc/PID/cgroup shows it ("/kubepods/pod...").
 */
int scope_cgroup(struct scope *sc, const char *arg)
{
	struct statfs fs;
	size_t n;
	int err;

	if (arg[0] != '/')
		return cli_usage_error("export", "--cgroup: '%s': not an absolute path", arg);
	if (!statfs(arg, &fs) && fs.f_type == CGROUP2_SUPER_MAGIC) {
		err = cgroup2_path(arg, sc->cgroup, sizeof(sc->cgroup));
		if (err)
			return cli_usage_error("export", "--cgroup: '%s': %s", arg, strerror(-err));
	} else if (!strncmp(arg, "/sys/fs/cgroup", 14)) {
		return cli_usage_error("export", "--cgroup: '%s': not a cgroup v2 directory", arg);
	} else {
		if (strlen(arg) >= sizeof(sc->cgroup))
			return cli_usage_error("export", "--cgroup: path too long");
		snprintf(sc->cgroup, sizeof(sc->cgroup), "%s", arg);
	}
	n = strlen(sc->cgroup);
	while (n > 1 && sc->cgroup[n - 1] == '/')
		sc->cgroup[--n] = '\0';
	return 0;
}

/* --devices LIST: ids and ranges, "0-3,6". */
int scope_devices(struct scope *sc, const char *arg)
{
	unsigned long long lo, hi, id;
	char buf[256], *tok, *save, *dash;

	if (strlen(arg) >= sizeof(buf) || !arg[0])
		return cli_usage_error("export", "--devices: '%s': a list such as 0-3,6", arg);
	snprintf(buf, sizeof(buf), "%s", arg);
	if (buf[0] == ',' || buf[strlen(buf) - 1] == ',' || strstr(buf, ",,"))
		return cli_usage_error("export", "--devices: '%s': an empty item", arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		dash = strchr(tok, '-');
		if (dash)
			*dash = '\0';
		if (cli_parse_ull(tok, 10, 0, SCOPE_DEVICES - 1, &lo) ||
		    cli_parse_ull(dash ? dash + 1 : tok, 10, 0, SCOPE_DEVICES - 1, &hi) ||
		    hi < lo)
			return cli_usage_error("export", "--devices: '%s': ids 0..%d, ranges LO-HI, comma-separated",
					       arg, SCOPE_DEVICES - 1);
		for (id = lo; id <= hi; id++)
			sc->devices[id / 64] |= 1ull << (id % 64);
	}
	sc->have_devices = true;
	return 0;
}
