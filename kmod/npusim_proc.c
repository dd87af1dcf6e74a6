// SPDX-License-Identifier: GPL-2.0
/*
 * The driver's per-SQ /proc file, /proc/trs_core/ts_inst/dev<d>-ts<t>/hw_sq,
 * in its format (trs_proc_fs.c: res_detail_show, trs_hw_sq_to_string): per
 * allocated SQ an "id" line, its mode line and, for a mapped SQ, the
 * library's counters in the shared-info page ("uio send ok": SQEs sent).
 * steptime doctor reads it on a real host to set steptime's counts beside
 * the driver's; here it reads npusim's the same way.
 */
#include <linux/proc_fs.h>
#include <linux/seq_file.h>

#include "npusim.h"

static struct proc_dir_entry *npusim_proc_top;

static const char *npusim_proc_mode(const struct npusim_sq *sq)
{
	switch (sq->uio) {
	case NPUSIM_UIO_T:
		return "uio_t";
	case NPUSIM_UIO_D:
		return "uio_d";
	default:
		return "kio";
	}
}

static void npusim_proc_sq(struct seq_file *m, struct npusim_sq *sq)
{
	const struct trs_sq_shr_info *shr;

	seq_printf(m, "id %u ref %u status %d pid %d\n", sq->id,
		   kref_read(&sq->ref), 0,	/* RES_STATUS_NORMAL */
		   sq->owner ? sq->owner->owner_tgid : 0);
	seq_printf(m, "    mode %s type %u flag %u cqid %u stream_id %u chan %d cp_proc exist\n",
		   npusim_proc_mode(sq), 0, sq->flag, sq->cq ? sq->cq->id : 0,
		   sq->stream ? sq->stream->id : TRS_STREAM_ID_NONE,
		   (int)sq->id);
	if (sq->uio && sq->ring) {
		shr = sq->ring + NPUSIM_SQ_MMAP_SHR_OFF;
		/* the library's words, written without the kernel's lock */
		seq_printf(m, "    uio send ok %llu send full %llu send invalid in kernel %llu\n",
			   READ_ONCE(shr->send_ok), READ_ONCE(shr->send_full),
			   sq->send_fail);
	}
	seq_putc(m, '\n');
}

static int npusim_proc_hw_sq_show(struct seq_file *m, void *v)
{
	struct npusim_ts *ts = m->private;
	struct npusim_sq *sq;
	int id;

	mutex_lock(&ts->lock);
	idr_for_each_entry(&ts->sq_idr, sq, id)
		npusim_proc_sq(m, sq);
	mutex_unlock(&ts->lock);
	return 0;
}

/*
 * The driver makes these at its own load; with npusim, the only TRS on a
 * test machine, so does npusim. Not having them is no reason to fail.
 */
void npusim_proc_init(void)
{
	struct proc_dir_entry *inst, *dir;
	char name[32];
	u32 d, t;

	npusim_proc_top = proc_mkdir("trs_core", NULL);
	inst = npusim_proc_top ? proc_mkdir("ts_inst", npusim_proc_top) : NULL;
	if (!inst) {
		pr_warn("npusim: no /proc/trs_core/ts_inst\n");
		return;
	}
	for (d = 0; d < npusim_devices; d++) {
		for (t = 0; t < npusim_ts_per_device; t++) {
			snprintf(name, sizeof(name), "dev%u-ts%u", d, t);
			dir = proc_mkdir(name, inst);
			if (!dir ||
			    !proc_create_single_data("hw_sq", 0440, dir,
						     npusim_proc_hw_sq_show,
						     &npusim_devs[d].ts[t]))
				pr_warn("npusim: no /proc/trs_core/ts_inst/%s/hw_sq\n",
					name);
		}
	}
}

void npusim_proc_fini(void)
{
	proc_remove(npusim_proc_top);
}
