// SPDX-License-Identifier: GPL-2.0
/*
 * hal_steps: N processes x M training steps on npusim, through the ACL
 * runtime stand-in (libascendcl.so) and so through the libascend_hal.so
 * stand-in, as CANN's runtime submits; each step marked on the process's
 * stream with aclprofGetStepTimestamp(); then npusim's truth of each
 * process's SQ, for a test to compare with what steptime recorded.
 *
 *   hal_steps [-n PROCS] [-m STEPS] [-t TASKS] [-u TASK_NS] [-d DEVICES]
 *             [-o DIR]
 *
 * Process i (0..PROCS-1) opens device i % DEVICES (DEVICES: npusim's
 * devices parameter), creates one stream, and once every process is ready
 * (all streams exist together, so ids collide across devices: each device
 * numbers its streams and SQs from the same start) runs STEPS steps of:
 * START mark, TASKS kernels (aclnpusimLaunchKernel, TASK_NS each, no
 * report), END mark, aclrtSynchronizeStream(). Marks need a started
 * profiling session (aclprofInit(DIR), default a new /tmp/hal_steps.XXXXXX)
 * and steptime loaded; a mark that fails is counted, not fatal.
 *
 * npusim's truth (NPUSIM_IOC_TRUTH on the library's own fd, the SQ's
 * records), read after each synchronize, splits the SQ's tasks by step.
 * Output, one line per record, "key=value" fields:
 *
 *   step proc=I pid=P dev=D ts=T sq=Q stream=S step=K index=X sqes=A
 *        tasks=B marks=C other=E completed=F traced=G
 *   proc proc=I pid=P dev=D ts=T sq=Q stream=S mode=MODE steps=M
 *        submitted=A completed=F traced=G marks_ok=H marks_failed=J
 *
 * index is the step object's indexId (aclprofCreateStepInfo() numbers the
 * process's objects from 1); sqes every SQE of the step's span (from the
 * SQE after the previous step's synchronize through this one's), tasks its
 * kernels, marks its place-holders without a report (step marks), other
 * the rest (recycle tasks, events), completed and traced those of its SQEs
 * npusim ran and passed through its trace hook. submitted is the SQ's
 * truth next_seq; MODE the SQ's mode as npusim's ALLOC gave it to the
 * library (kio, uio_t, uio_d). The exit status is 0 when every process ran every step
 * and npusim's truth has each step's kernels all completed, else 1.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/wait.h>

#include <npusim_abi.h>
#include "acl/acl.h"
#include "acl/acl_npusim.h"
#include "acl/acl_prof.h"
#include "../../../sim/ascend_hal/ascend_hal.h"

#define MAX_PROCS	64
#define TRUTH_CHUNK	512

struct opts {
	unsigned int procs, steps, tasks, task_ns, devices;
	const char *dir;
};

struct sq_ref {
	uint32_t dev, ts, sq;
	int32_t stream;
	int fd;
};

struct span {
	unsigned long sqes, tasks, marks, other, completed, traced;
};

static unsigned int sim_devices(void)
{
	FILE *f = fopen("/sys/module/npusim/parameters/devices", "r");
	unsigned int n = 1;

	if (f) {
		if (fscanf(f, "%u", &n) != 1)
			n = 1;
		fclose(f);
	}
	return n ? n : 1;
}

/* Truth records seq.. of @r's SQ; returns the count, or -errno. */
static int truth_read(const struct sq_ref *r, __u64 seq,
		      struct npusim_task_truth *t, unsigned int n,
		      __u64 *next_seq)
{
	struct npusim_truth_query q = {
		.sq_id = r->sq, .count = n, .seq = seq,
		.addr = (uintptr_t)t, .ts_id = r->ts,
	};

	if (ioctl(r->fd, NPUSIM_IOC_TRUTH, &q))
		return -errno;
	*next_seq = q.next_seq;
	return (int)q.count;
}

/* Account the records [from, to) of @r's SQ into @s. */
static int span_read(const struct sq_ref *r, __u64 from, __u64 to,
		     struct span *s)
{
	static struct npusim_task_truth t[TRUTH_CHUNK];
	__u64 next;
	int n, i;

	memset(s, 0, sizeof(*s));
	while (from < to) {
		n = truth_read(r, from, t, TRUTH_CHUNK, &next);
		if (n <= 0)
			return n < 0 ? n : -ENODATA;
		for (i = 0; i < n && from < to; i++, from++) {
			s->sqes++;
			if (t[i].sqe_type == TRS_SQE_PLACE_HOLDER &&
			    t[i].report == NPUSIM_REPORT_NONE)
				s->marks++;
			else if (t[i].sqe_type == TRS_SQE_PLACE_HOLDER ||
				 t[i].sqe_type == TRS_SQE_EVENT_RECORD)
				s->other++;
			else
				s->tasks++;
			s->completed += t[i].state == NPUSIM_TASK_DONE;
			s->traced += t[i].traced;
		}
	}
	return 0;
}

static __u64 sq_next_seq(const struct sq_ref *r)
{
	struct npusim_task_truth t;
	__u64 next = 0;

	truth_read(r, ~0ull >> 1, &t, 0, &next);
	return next;
}

/* The SQ's mode, from the trs_uio_info the library kept of its ALLOC. */
static const char *sq_mode(const struct sq_ref *r)
{
	struct trs_uio_info u;

	if (npusim_hal_sq_uio(r->dev, r->ts, r->sq, &u))
		return "unknown";
	if (!u.uio_flag)
		return "kio";
	return u.soft_que_flag == TRS_SOFT_QUE_SOFT ? "uio_t" : "uio_d";
}

static int prof_start(const char *dir, uint32_t dev, aclprofConfig **cfg)
{
	uint32_t ids[1] = { dev };

	if (aclprofInit(dir, strlen(dir)) != ACL_SUCCESS)
		return -1;
	*cfg = aclprofCreateConfig(ids, 1, ACL_AICORE_NONE, NULL,
				   ACL_PROF_TRAINING_TRACE);
	if (!*cfg || aclprofStart(*cfg) != ACL_SUCCESS)
		return -1;
	return 0;
}

static void prof_stop(aclprofConfig *cfg)
{
	if (cfg) {
		aclprofStop(cfg);
		aclprofDestroyConfig(cfg);
	}
	aclprofFinalize();
}

/* One process: set up, report ready, wait for go, run, print. */
static int run_proc(const struct opts *o, unsigned int i, int ready, int go)
{
	unsigned long marks_ok = 0, marks_failed = 0, bad = 0;
	struct span s, total = { 0 };
	aclprofConfig *cfg = NULL;
	aclrtStream stream;
	struct sq_ref r;
	__u64 from = 0, to;
	unsigned int k;
	char c = 1;
	int err;

	r.dev = i % o->devices;
	if (aclrtSetDevice((int32_t)r.dev) != ACL_SUCCESS ||
	    aclrtCreateStream(&stream) != ACL_SUCCESS ||
	    aclrtStreamGetId(stream, &r.stream) != ACL_SUCCESS ||
	    aclnpusimStreamGetSq(stream, &r.dev, &r.ts, &r.sq) != ACL_SUCCESS) {
		fprintf(stderr, "hal_steps: proc %u: no stream on device %u\n",
			i, r.dev);
		return 1;
	}
	r.fd = npusim_hal_dev_fd(r.dev);
	if (prof_start(o->dir, r.dev, &cfg))
		fprintf(stderr, "hal_steps: proc %u: no profiling session: marks fail\n", i);
	if (write(ready, &c, 1) != 1 || read(go, &c, 1) < 0)
		return 1;
	for (k = 0; k < o->steps; k++) {
		aclprofStepInfo *st = aclprofCreateStepInfo();

		if (aclprofGetStepTimestamp(st, ACL_STEP_START, stream))
			marks_failed++;
		else
			marks_ok++;
		if (aclnpusimLaunchKernel(stream, ACL_NPUSIM_KERNEL_AICORE,
					  o->tasks, o->task_ns) != ACL_SUCCESS)
			bad++;
		if (aclprofGetStepTimestamp(st, ACL_STEP_END, stream))
			marks_failed++;
		else
			marks_ok++;
		if (aclrtSynchronizeStream(stream) != ACL_SUCCESS)
			bad++;
		aclprofDestroyStepInfo(st);
		to = sq_next_seq(&r);
		err = span_read(&r, from, to, &s);
		if (err || s.tasks != o->tasks || s.completed != s.sqes)
			bad++;
		printf("step proc=%u pid=%d dev=%u ts=%u sq=%u stream=%d step=%u index=%u sqes=%lu tasks=%lu marks=%lu other=%lu completed=%lu traced=%lu\n",
		       i, (int)getpid(), r.dev, r.ts, r.sq, r.stream, k, k + 1,
		       s.sqes, s.tasks, s.marks, s.other, s.completed,
		       s.traced);
		total.completed += s.completed;
		total.traced += s.traced;
		from = to;
	}
	printf("proc proc=%u pid=%d dev=%u ts=%u sq=%u stream=%d mode=%s steps=%u submitted=%llu completed=%lu traced=%lu marks_ok=%lu marks_failed=%lu\n",
	       i, (int)getpid(), r.dev, r.ts, r.sq, r.stream, sq_mode(&r),
	       o->steps,
	       (unsigned long long)from, total.completed, total.traced,
	       marks_ok, marks_failed);
	fflush(stdout);
	prof_stop(cfg);
	aclrtDestroyStream(stream);
	aclrtResetDevice((int32_t)r.dev);
	return bad ? 1 : 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: hal_steps [-n PROCS] [-m STEPS] [-t TASKS] [-u TASK_NS] [-d DEVICES] [-o DIR]\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct opts o = { .procs = 0, .steps = 4, .tasks = 8,
			  .task_ns = 20000 };
	char tmpl[] = "/tmp/hal_steps.XXXXXX";
	int ready[2], go[2], status, ret = 0, c;
	pid_t pids[MAX_PROCS];
	unsigned int i;
	char b;

	while ((c = getopt(argc, argv, "n:m:t:u:d:o:")) != -1) {
		switch (c) {
		case 'n': o.procs = (unsigned int)atoi(optarg); break;
		case 'm': o.steps = (unsigned int)atoi(optarg); break;
		case 't': o.tasks = (unsigned int)atoi(optarg); break;
		case 'u': o.task_ns = (unsigned int)atoi(optarg); break;
		case 'd': o.devices = (unsigned int)atoi(optarg); break;
		case 'o': o.dir = optarg; break;
		default: return usage();
		}
	}
	if (!o.devices)
		o.devices = sim_devices();
	if (!o.procs)
		o.procs = o.devices;
	if (o.procs > MAX_PROCS || !o.tasks || o.tasks > 1024 || !o.steps)
		return usage();
	if (!o.dir && !(o.dir = mkdtemp(tmpl))) {
		perror("hal_steps: mkdtemp");
		return 1;
	}
	if (pipe(ready) || pipe(go)) {
		perror("hal_steps: pipe");
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < o.procs; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			perror("hal_steps: fork");
			return 1;
		}
		if (!pids[i]) {
			close(ready[0]);
			close(go[1]);
			_exit(run_proc(&o, i, ready[1], go[0]));
		}
	}
	close(ready[1]);
	close(go[0]);
	/* every stream exists before any step runs */
	for (i = 0; i < o.procs; i++)
		if (read(ready[0], &b, 1) != 1)
			break;
	close(go[1]);
	for (i = 0; i < o.procs; i++) {
		if (waitpid(pids[i], &status, 0) != pids[i] ||
		    !WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "hal_steps: proc %u failed\n", i);
			ret = 1;
		}
	}
	return ret;
}
