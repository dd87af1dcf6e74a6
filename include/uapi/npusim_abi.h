/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * npusim's own ABI: the controls of the simulator that stands in for the
 * Ascend device (magic 'N', on any fd of /dev/npusim_manager), and how it
 * implements the driver's ABI of ascend_trs.h. The real driver has no
 * such commands; steptime never depends on them outside tests and the
 * loader's npusim profile.
 */
#ifndef _UAPI_NPUSIM_ABI_H
#define _UAPI_NPUSIM_ABI_H

#include "ascend_trs.h"

/* ---------------------------------------------------------------------- */
/* npusim only (magic 'N'); works on any fd of /dev/npusim_manager         */
/* ---------------------------------------------------------------------- */

#define NPUSIM_IOC_MAGIC		'N'
#define NPUSIM_DEV_NAME			"npusim_manager"

/*
 * How npusim implements sections 1-3. It follows hicann/driver (trs_fops.c,
 * trs_hw_sqcq.c, trs_logic_cq.c, trs_sqcq_map.c, davinci_intf_init.c) where
 * the driver's behaviour is visible to user space; "npusim:" marks its own
 * choices where the driver's depend on firmware or hardware.
 *
 * Devices. /dev/npusim_manager stands for /dev/davinci_manager and serves
 * module parameter `devices` devices (default 2) of `ts_per_device` task
 * schedulers each (default 2); OPEN's device_id picks the device. SQ, CQ,
 * logic CQ and resource ids are per (device, TS), handed out lowest free
 * from 0, so two devices (or two TS) hand out the same ids. The node is
 * created with module parameters dev_uid, dev_gid, dev_mode (default
 * root:root 0660, like davinci_manager's HwHiAiUser:HwHiAiUser 0660).
 * Each device's config.stars picks its SQE header: 1 (STARS v1, struct
 * trs_sqe) or 2 (STARS v2, struct trs_sqe_v2); config.sqcq_pair its chip
 * family: 1 (STARS): every NORMAL ALLOC makes an SQ-CQ pair, REUSE_CQ is
 * EINVAL; 0 (pre-STARS): an ALLOC with TSDRV_FLAG_REUSE_CQ adds an SQ to
 * the CQ in cqId, which must be this fd's, and channels are made as the
 * driver's non-pair mode makes them (npusim_chan_proc_fs_add_chan): an
 * ALLOC's SQ's, then its new CQ's own; a TS's first LOGIC ALLOC, its
 * physical CQ's (kept until unload). The module parameters `stars`
 * (default 1) and `sqcq_pair` (default 1) set both for every device.
 * URD_IOC_GET_CHIP_INFO names each device by its stars, as a real host's
 * driver names the chip: type "Ascend", version "V1", name
 * NPUSIM_CHIP_NAME_V1 ("910B3") for STARS v1, NPUSIM_CHIP_NAME_V2
 * ("950PR_9599") for v2, dev_id the device id; the module parameter
 * chip_name, when set, names every device instead (a chip a real driver
 * may name that steptime does not know: "310P3", "910_9691", cut at 31
 * bytes), its SQEs unchanged. sqcq_pair 0 does not change
 * the name: pre-STARS is a runtime mode here, and npusim's pre-STARS SQEs
 * keep the v1 header (a real pre-STARS 910 is no STARS chip at all).
 *
 * TRS dispatch (trs_ioctl): by _IOC_NR only, as the driver does; nr >= 33
 * or a command npusim does not implement: EOPNOTSUPP; a NULL argument:
 * EINVAL; an unreadable one: EFAULT; npusim: one that a command with Out
 * fields (RES_ID_ALLOC, SQCQ_ALLOC) cannot write back: EFAULT before
 * anything is created (the driver would create it and then fail the copy,
 * leaving it to the release). Then, for SQCQ commands: type < 0 or
 * >= TRS_SQCQ_TYPE_MAX: EINVAL; a type npusim has no handler for
 * (CALLBACK, SHM, CTRL, GDB; QUERY and SEND: anything but NORMAL): EINVAL
 * as the driver's empty handler slots; tsId >= ts_per_device: EINVAL. An id
 * that this fd does not own (never allocated, freed, another fd's or
 * another device's): EINVAL.
 *
 * RES_ID_ALLOC/FREE: res_type < 0 or >= TRS_RES_HW_SQ: EINVAL. ALLOC
 * writes the lowest free id of that type (per device, TS; 0..
 * NPUSIM_MAX_RES_IDS - 1) to id, ENOSPC when none is free; the id belongs
 * to this fd until FREE or release. FREE of an id this fd does not own:
 * EINVAL; of a stream still named by an SQ or logic CQ: EBUSY.
 *
 * SQCQ_ALLOC reads struct trs_uio_info through res[0..1] first (EFAULT),
 * and on success writes back the whole argument and the trs_uio_info.
 * - NORMAL: sqeSize 64, cqeSize 16 (the hardware CQE; npusim also accepts
 *   32 and treats it as 16), sqeDepth 1..TRS_SQ_MAX_DEPTH, cqeDepth
 *   1..TRS_SQ_MAX_DEPTH (else EINVAL). info[0] is a stream id this fd
 *   allocated with RES_ID_ALLOC, or TRS_STREAM_ID_NONE (else EINVAL).
 *   Flags other than REUSE_CQ: EINVAL (npusim). ext_info_len > 256, or
 *   non-zero ext_info with ext_info_len 0: EINVAL; ext_info is read
 *   (EFAULT) and ignored. sqId (and cqId, unless REUSE_CQ) are written.
 *   trs_uio_info: with sq_que_addr 0, or the device's uio_mode 0, the SQ is
 *   kernel mode ("kio": uio_flag 0, soft_que_flag 0; SEND submits). With a
 *   non-zero sq_que_addr and uio_mode 1 or 2, npusim maps the queue into
 *   the caller (npusim: it picks the address itself, as mmap() of
 *   NPUSIM_SQ_MMAP_OFFSET would) and writes: sq_que_addr = the first SQE
 *   slot, sq_ctrl_addr[TRS_UIO_HEAD] / [TRS_UIO_TAIL] / [TRS_UIO_DB] = the
 *   head, tail and tail (doorbell) words of its struct npusim_sq_ctrl,
 *   sq_ctrl_addr[TRS_UIO_SHR_INFO] = its struct trs_sq_shr_info (in the
 *   control page, at NPUSIM_SQ_MMAP_SHR_OFF; npusim never sets
 *   cqe_status), uio_flag = 1 and soft_que_flag = 1 for uio_mode 1 ("uio_t") or 0 for
 *   uio_mode 2 ("uio_d"). The mapping is the caller's: FREE stops the
 *   device reading it, munmap(sq_que_addr - NPUSIM_SQ_MMAP_SQE_OFF,
 *   NPUSIM_SQ_MMAP_SIZE(depth)) removes it.
 *   That is config.sq_mode NPUSIM_SQ_MODE_CONFIG (module parameter
 *   mode_by_chip=0; uio_mode's default, module parameter uio_mode, is 0:
 *   the driver's library, which always asks for a mapping, then gets kio
 *   SQs: how a test names kio). With NPUSIM_SQ_MODE_CHIP (the default,
 *   mode_by_chip=1) the
 *   chip picks, as the driver's trs_sq_remap() and send mode do: STARS v1
 *   (910B3) a soft queue ("uio_t", below); STARS v2 (950) the hardware
 *   queue ("uio_d", as uio_mode 2, but with sq_ctrl_addr[TRS_UIO_TAIL] 0,
 *   as a 950 in HIGH_PERFORMANCE mode maps no tail word: user space writes
 *   the new tail into the doorbell [TRS_UIO_DB], the tail register, and
 *   reads it back there), or kernel mode when config.send_mode is
 *   NPUSIM_SEND_HIGH_SECURITY (module parameter send_mode); kernel mode
 *   for sq_que_addr 0 either way. The mode is fixed at ALLOC.
 *   A chip-picked uio_t SQ is the driver's soft queue: sq_que_addr is the
 *   soft queue; sq_ctrl_addr[TRS_UIO_HEAD] its head (npusim_sq_ctrl.head:
 *   copied to the hardware SQ up to here), [TRS_UIO_TAIL] its tail (the
 *   runtime's), [TRS_UIO_DB] the trigger doorbell (npusim_sq_ctrl.db),
 *   [TRS_UIO_HEAD_REG] / [TRS_UIO_TAIL_REG] the hardware SQ's head
 *   (completed up to here) and tail (copied up to here). The runtime
 *   writes SQEs and the tail, and writes the SQ id into db when the queue
 *   was empty before them. npusim's worker (the TS's engine) copies the
 *   soft queue into the hardware SQ, every SQE through
 *   npusim_chan_trace_sqe(), when a doorbell was rung (seen within
 *   NPUSIM_UIO_POLL_US; it then copies every soft queue of the TS, and
 *   sets db back to NPUSIM_SQ_DB_IDLE) and every config.soft_poll_ms
 *   (1..4 ms, module parameter soft_poll_ms) on its own; config.soft_trigger
 *   0 (module parameter soft_trigger) ignores doorbells, leaving only the
 *   poll. A task's truth submit_ns is when it was copied. The two queues
 *   have the same depth and positions; the hardware SQ holds depth - 1.
 * - LOGIC: cqeSize 1..32 (as trs_logic_cq.c; control streams ask for 16:
 *   RECV copies each report's first cqeSize bytes, packed), cqeDepth
 *   1..NPUSIM_LOGIC_CQ_MAX_DEPTH, info[0] a
 *   stream of this fd that has no logic CQ yet (EINVAL; EBUSY when it has
 *   one), info[1] the thread id (kept, not used), flag 0. cqId is written,
 *   sqId is left as given. The stream's reports go to this logic CQ from
 *   now on. Like the driver's, a logic CQ of depth D holds D - 1 reports.
 *
 * SQCQ_FREE: NORMAL frees sqId and, unless flag has REUSE_CQ (pre-STARS
 * only; other flags, or REUSE_CQ on STARS: EINVAL), its CQ cqId (EINVAL
 * if that is not the SQ's CQ; EBUSY while another SQ still uses it).
 * LOGIC frees the logic CQ cqId and unbinds its stream.
 * Queued and running tasks are cancelled (truth NPUSIM_TASK_CANCELLED),
 * unreceived reports dropped, and waiters in SEND/RECV on them fail with
 * EINVAL. Releasing the fd frees all of its queues and ids the same way.
 *
 * SQCQ_SEND: type NORMAL, sqe_num 1..depth (else EINVAL); a mapped SQ:
 * EINVAL; a bad sqe_addr: EFAULT. A batch is accepted whole or not at all;
 * pos = SQ position of its first SQE. SQ full: timeout 0 fails at once
 * with EAGAIN; timeout > 0 waits up to that many ms for room, then
 * ETIMEDOUT; timeout < 0 waits forever. A signal ends a wait with EINTR.
 * Every SQE SEND accepts passes npusim_chan_trace_sqe() (C2 below). SQE
 * contents are not checked at submission: an SQE the device cannot run (a
 * type outside NPUSIM_SQE_VALID_TYPES) fails when it runs, with error
 * NPUSIM_ERR_BAD_SQE, like any failed task.
 *
 * SQCQ_QUERY: type NORMAL, an SQ of this fd. prop SQ_HEAD: value[0] = the
 * SQ position of the next task to complete (head); SQ_TAIL: the next free
 * position; SQ_DEPTH: the depth; SQ_STATUS: 1 (enabled); SQ_CQE_STATUS: 1
 * if the SQ wrote a report since the last such query (read clears); other
 * props: EINVAL. Only value[0] is written back.
 * SQCQ_CONFIG: NORMAL: SQ_PAUSE stops the SQ after its running task,
 * SQ_RESUME restarts it, SQ_DISABLE_TO_ENABLE is accepted and does nothing;
 * SQ_HEAD and SQ_TAIL, of an SQ whose mode the chip picked (the runtime's
 * stream cleanup sets both to 0): value[0] >= depth is EINVAL; an SQ with
 * tasks queued or running, or SQEs written to its mapping and not yet
 * taken, is EBUSY; otherwise npusim moves the empty SQ (and its mapping's
 * head, tail and registers) to position value[0], either prop alike; the
 * truth's seq goes on. A soft queue's tail word is the exception: the
 * driver's library moves only its own copy of the tail and issues this
 * ioctl, so the word keeps its old value until the next send writes it,
 * and the worker takes nothing from it until then (until it changes, or
 * the trigger doorbell is rung). A 950's library issues no ioctl for a
 * uio_d SQ: it writes the head and the doorbell itself; npusim takes
 * nothing from the mapping of a chip-picked uio_d SQ while it is paused
 * (SQ_PAUSE: the runtime does this on a disabled SQ) and, at SQ_RESUME
 * on an idle one, moves it to the head found in the mapping (the tail is
 * then read from the doorbell as always). Of other SQs: EOPNOTSUPP, as
 * other props;
 * LOGIC: SQCQ_RESET empties the logic CQ (its reports are dropped and
 * counted in report_drops); other props: EOPNOTSUPP.
 *
 * SQCQ_RECV: cqe_num >= 1, cqe_addr non-NULL, timeout >= -1, res[0] 0 or 1
 * (else EINVAL); type NORMAL reads 16-byte struct trs_hw_cqe from a CQ of
 * this fd, type LOGIC 32-byte struct trs_logic_cqe from a logic CQ of this
 * fd. It waits up to timeout ms (-1: forever) for a report; timeout 0 with
 * no report returns 0 with report_cqe_num 0 at once; a timeout that runs
 * out: ETIMEDOUT. Reports are copied while still queued and removed only
 * once the copy worked: an unwritable cqe_addr is EFAULT and loses none.
 * Only report_cqe_num is written back, and only on success.
 * In order (res[0] 0), RECV takes the first min(cqe_num, queued) reports.
 * Match mode (res[0] 1, logic CQs; the runtime's "version 1"): reports
 * with TRS_CQE_F_MATCH are held for the RECV that names their stream_id and
 * task_id. Scanning from the oldest report, RECV takes one contiguous run:
 * plain reports, ended by the match report it names (included), by a match
 * report it does not name (excluded; one met before the run starts is
 * skipped and stays queued), or by cqe_num. So a later report can come back
 * before an earlier one, deterministically: a held match report is
 * overtaken by every plain report behind it until its RECV comes.
 *
 * Reports. A task writes a report when its SQE has wr_cqe set (STARS v1:
 * TRS_SQE_F_WR_CQE, v2: TRS_SQE_V2_F_WR_CQE) or when it fails; other
 * tasks complete silently, visible through QUERY SQ_HEAD and the truth.
 * Its stream is the SQE's rt_stream_id (v1; bit 15 makes it a match report)
 * or the SQ's stream (v2, from ALLOC info[0]). If that stream is one of
 * the SQ's fd (npusim: another fd's stream never gets the report) and has
 * a logic CQ, the report is translated into a struct trs_logic_cqe and
 * offered to
 * it through npusim_logic_cq_enque(): a full logic CQ refuses it (-EAGAIN)
 * and the report is dropped, as the driver's full_drop (counted in
 * npusim_stats.report_drops and in the task's truth). Otherwise it stays in
 * the SQ's CQ as a struct trs_hw_cqe for RECV NORMAL; a full CQ stalls its
 * SQs until RECV makes room (nothing is lost there).
 * Logic CQE: stream_id, task_id (low 16 bits), sqe_type, sq_id, sq_head =
 * the SQ position after the task; success: timestamp = device counter when
 * the task started (event record and place-holder SQEs only, else 0);
 * failure: error_code = the task's error, flags TRS_CQE_F_ERROR, timestamp =
 * the SQE's position; match reports: enque_timestamp = host seconds
 * (CLOCK_MONOTONIC) when enqueued, flags TRS_CQE_F_MATCH. The hardware CQE
 * carries the same through its own fields (TRS_HW_CQE_*).
 *
 * Execution: the tasks of one SQ run one at a time in order; different SQs
 * of a TS run concurrently on config.units units. A task runs for
 * sim_duration_ns (0: config.default_duration_ns; 0 for place-holder and
 * event-record SQEs means instantaneous), times config.duration_pct / 100.
 * Time is simulated exactly: a task starts at max(its submission, the end
 * of the previous task of its SQ, a unit becoming free) and ends duration
 * later, whatever the latency of the simulator itself; reports and the SQ
 * head move at or after the task's end (CLOCK_MONOTONIC).
 * A task fails when its sim_error is non-zero (error_code = sim_error), when
 * config.inject_error_every = N > 0 and it is the Nth, 2Nth, ... task of its
 * SQ (seq + 1 divisible by N; error_code = inject_error_code), or when its
 * SQE type is not one npusim runs (NPUSIM_ERR_BAD_SQE; it takes no time).
 * A failure does not stop the SQ.
 *
 * Notifies and events (device sync, STARS v1 and v2 alike; the SQE layouts
 * of the runtime's RtStarsNotifySqe and RtStarsEventSqe): a NOTIFY_RECORD or
 * NOTIFY_WAIT SQE names notify id (u32 @8) & TRS_SQE_NOTIFY_ID_MASK, an
 * EVENT_RECORD or EVENT_WAIT SQE event id u16 @8; ids come from RES_ID_ALLOC
 * (TRS_RES_NOTIFY, TRS_RES_EVENT) on the SQ's (device, TS). A record sets its
 * notify or event at the record's end; a wait holds its unit and its SQ
 * (the SQ does not advance) until its notify or event is set, then clears
 * it and ends at max(its start, the record's end): a record before the wait
 * lets it pass at once, two records before one wait count once. The
 * truth's start_ns and end_ns of a wait are when it reached the unit and
 * when its notify came. A NOTIFY_RECORD with u16 @12 (npusim, below) = D + 1
 * sets notify id of device D (same tsId): the runtime records a notify of
 * another device with a WRITE_VALUE SQE to that notify's address
 * (notify_task_v100.cc:44-105), which npusim does not model by address.
 * An id not allocated there (or D >= devices): the task fails with
 * NPUSIM_ERR_BAD_SYNC_ID and takes no time; nothing is set, the SQ goes on.
 * An EVENT_RECORD of an id not allocated sets nothing and does not fail
 * (npusim's older runtime records events it never allocated). A wait that
 * its SQ's FREE or the process's exit cancels frees its unit, as every task.
 * Device counter: ticks = counter_epoch + host_ns * counter_freq_hz / 1e9
 * (host_ns: CLOCK_MONOTONIC, exact integer arithmetic, modulo 2^64), per
 * device. Its frequency is read as on a real host: URD_IOC_GET_DEV_OSC_FREQ
 * on a fd OPENed with "URD" (section 2), input the device id (EINVAL if
 * there is no such device). NPUSIM_IOC_CLOCK gives the same and more.
 *
 * Kernel hooks (contract C2), global and noinline, with module BTF:
 *   long npusim_manager_ioctl(struct file *, unsigned int, unsigned long)
 *	as drv_ascend_intf_ioctl (asdrv_pbl): every ioctl of the node;
 *   int npusim_logic_cq_enque(void *ts_inst, u32 logic_cq_id, u32 stream_id,
 *	u32 task_id, void *cqe) as trs_logic_cq_enque (asdrv_trs): every
 *	offer of a logic CQE (struct trs_logic_cqe *) to a logic CQ; 0 only
 *	when it was enqueued, -EAGAIN when the CQ was full;
 *   void npusim_chan_trace_sqe(const char *str, void *chan, void *sq,
 *	void *sqe) as trs_chan_trace_sqe: every SQE the kernel moves to the
 *	device: SEND (in the caller's context) and uio_t soft queues (in the
 *	engine thread); never uio_d. sqe is a kernel pointer to the 64 bytes;
 *	chan is the SQ's own channel object (one per SQ, as struct trs_chan);
 *   void npusim_chan_proc_fs_add_chan(void *chan) as chan_proc_fs_add_chan
 *	(asdrv_trsbase): an SQ's channel was made, in its ALLOC's thread,
 *	before the ALLOC returns; void npusim_chan_proc_fs_del_chan(void *chan)
 *	as chan_proc_fs_del_chan: it goes (FREE, or its file's release).
 * Tracepoint npusim:logic_cqe (u32 cq_id, the CQE) fires per enqueued one.
 *
 * Permissions and limits. Opening the node needs its mode/group. GET
 * commands, TRUTH of one's own SQs, STATS and CLOCK work for anyone who can
 * open it; SET_CONFIG, FAIL_NTH (global controls, error injection) and
 * TRUTH with NPUSIM_TRUTH_ANY_OWNER need CAP_SYS_ADMIN: EPERM otherwise. Kernel memory is allocated with
 * GFP_KERNEL_ACCOUNT (charged to the caller's memory cgroup) and capped per
 * process (the tgid that opened the fd): module parameter max_proc_kbytes
 * (default NPUSIM_DEFAULT_MAX_PROC_KBYTES, writable by root at run time);
 * an allocation beyond it fails with ENOMEM: queues, their rings and truth
 * pages, and the transient copies of SEND, RECV and TRUTH all count, and
 * stats.kmem_bytes is the total held. Id spaces are capped per
 * (device, TS): NPUSIM_MAX_SQS SQs and CQs, NPUSIM_MAX_LOGIC_CQS logic
 * CQs, NPUSIM_MAX_RES_IDS ids per resource type (ENOSPC).
 */
#define NPUSIM_MAX_DEVICES		64
#define NPUSIM_MAX_TS			4
#define NPUSIM_DEFAULT_DEVICES		2
#define NPUSIM_DEFAULT_TS		2
#define NPUSIM_MAX_SQS			2048
#define NPUSIM_MAX_LOGIC_CQS		2048
#define NPUSIM_MAX_RES_IDS		2048
#define NPUSIM_LOGIC_CQ_MAX_DEPTH	65536
#define NPUSIM_MAX_UNITS		64
#define NPUSIM_DEFAULT_UNITS		4
#define NPUSIM_DEFAULT_FREQ_HZ		50000000ull	/* 50 MHz */
#define NPUSIM_CHIP_NAME_V1		"910B3"
#define NPUSIM_CHIP_NAME_V2		"950PR_9599"
#define NPUSIM_DEFAULT_EPOCH		0x1000000000000ull
#define NPUSIM_DEFAULT_DURATION_NS	2000
#define NPUSIM_DEFAULT_MAX_PROC_KBYTES	(512u * 1024)	/* 512 MiB */

/* SQE types npusim executes: FFTS, AICPU, 3..8 and SDMA. */
#define NPUSIM_SQE_VALID_TYPES		0x9fbu
/* error_code of an SQE npusim cannot run */
#define NPUSIM_ERR_BAD_SQE		0x0bad5e
/* error_code of a notify/event record or wait naming no allocated id */
#define NPUSIM_ERR_BAD_SYNC_ID		0x0bad1d

#define NPUSIM_UIO_KIO			0	/* uio_mode: never map */
#define NPUSIM_UIO_T			1	/* soft queue, SQEs traced */
#define NPUSIM_UIO_D			2	/* direct, nothing traced */

/*
 * Configuration of one device. GET fills every field of device @device;
 * SET (CAP_SYS_ADMIN) applies the fields whose NPUSIM_CFG_* bit is in @mask
 * to that device. Changing the counter frequency or epoch, or the unit
 * count, needs an idle device (no task queued or running on any of its
 * SQs): EBUSY otherwise; changing stars or sqcq_pair needs a device with
 * no SQ at all (EBUSY). SET checks: device < devices, units
 * 1..NPUSIM_MAX_UNITS, counter_freq_hz 1..0xffffffff, inject_error_code !=
 * 0 when inject_error_every != 0, uio_mode 0..2, duration_pct 1..100000,
 * stars 1 or 2, sqcq_pair 0 or 1, sq_mode 0 or 1, send_mode 0 or 1,
 * soft_poll_ms 1..NPUSIM_SOFT_POLL_MS_MAX, soft_trigger 0 or 1,
 * unknown mask bits, pad and res[] zero; else EINVAL and nothing is
 * applied. Defaults: the module parameters of the same names. A SET lasts
 * until the module is unloaded. GET fills mask with NPUSIM_CFG_ALL.
 */
struct npusim_config {
	__u32	mask;			/* In (SET): fields to apply */
	__u32	units;			/* parallel execution units per TS */
	__u64	counter_freq_hz;	/* device counter frequency */
	__u64	counter_epoch;		/* counter value at host time 0 */
	__u32	default_duration_ns;	/* task time when SQE says 0 */
	__u32	pad;
	__u32	inject_error_every;	/* fail every Nth task (0: never) */
	__u32	inject_error_code;	/* error_code of injected failures */
	__u32	device;			/* In: which device */
	__u32	uio_mode;		/* NPUSIM_UIO_*: mapped SQs granted */
	__u32	duration_pct;		/* task time scale, 100 = as given */
	__u32	stars;			/* SQE header: 1 STARS v1, 2 v2 */
	__u32	sqcq_pair;		/* 1 STARS pairs, 0 pre-STARS */
	__u32	res[5];
	__u32	sq_mode;		/* NPUSIM_SQ_MODE_*: who picks */
	__u32	send_mode;		/* NPUSIM_SEND_*: a 950's mode */
	__u32	soft_poll_ms;		/* uio_t worker's poll, 1..4 ms */
	__u32	soft_trigger;		/* 1 the trigger doorbell wakes it */
};

#define NPUSIM_CFG_UNITS		(1u << 0)
#define NPUSIM_CFG_COUNTER_FREQ		(1u << 1)
#define NPUSIM_CFG_COUNTER_EPOCH	(1u << 2)
#define NPUSIM_CFG_DEFAULT_DURATION	(1u << 3)
/* bit 4 unused (round 1's report_every_task: real devices have none) */
#define NPUSIM_CFG_INJECT_ERROR		(1u << 5)	/* both inject_* */
#define NPUSIM_CFG_UIO_MODE		(1u << 6)
#define NPUSIM_CFG_DURATION_PCT		(1u << 7)
#define NPUSIM_CFG_STARS		(1u << 8)	/* no SQ on the device */
#define NPUSIM_CFG_SQCQ_PAIR		(1u << 9)	/* no SQ on the device */
#define NPUSIM_CFG_SQ_MODE		(1u << 10)	/* new SQs only */
#define NPUSIM_CFG_SEND_MODE		(1u << 11)	/* new SQs only */
#define NPUSIM_CFG_SOFT_POLL		(1u << 12)	/* both soft_* */
#define NPUSIM_CFG_ALL			0x1fef

/* config.sq_mode: what a NORMAL ALLOC asking for a mapped SQ gets. */
#define NPUSIM_SQ_MODE_CONFIG		0	/* config.uio_mode decides */
#define NPUSIM_SQ_MODE_CHIP		1	/* the chip decides (driver) */
/* config.send_mode: the driver's TRS_MODE_TYPE_SQ_SEND_* of a 950. */
#define NPUSIM_SEND_HIGH_PERFORMANCE	0	/* uio_d */
#define NPUSIM_SEND_HIGH_SECURITY	1	/* kio */
#define NPUSIM_SOFT_POLL_MS_MAX		4

/* Ground truth of one task. Device ticks and host ns describe one instant. */
struct npusim_task_truth {
	__u64	seq;		/* per-SQ submission index, from 0 */
	__u32	sq_id;
	__u32	pos;		/* SQ position */
	__u32	stream_id;	/* the task's stream (v1: SQE & 0x7fff) */
	__u32	task_id;	/* from the SQE (v2: 32 bits) */
	__u8	sqe_type;
	__u8	report;		/* NPUSIM_REPORT_* */
	__u8	traced;		/* passed npusim_chan_trace_sqe() */
	__u8	pad;
	__u32	error_code;	/* 0, or the task's error */
	__u32	state;		/* NPUSIM_TASK_* */
	__u32	pad2;
	__u64	submit_ns;	/* CLOCK_MONOTONIC when queued by SEND/tail */
	__u64	start_ns;	/* CLOCK_MONOTONIC when execution started */
	__u64	end_ns;		/* CLOCK_MONOTONIC when it completed */
	__u64	start_ticks;	/* device counter at start */
	__u64	end_ticks;	/* device counter at end */
};

#define NPUSIM_TASK_QUEUED	0
#define NPUSIM_TASK_RUNNING	1
#define NPUSIM_TASK_DONE	2
#define NPUSIM_TASK_CANCELLED	3

#define NPUSIM_REPORT_NONE	0	/* the task wrote no report */
#define NPUSIM_REPORT_HW_CQ	1	/* a hardware CQE in its SQ's CQ */
#define NPUSIM_REPORT_LOGIC_CQ	2	/* a logic CQE in its stream's logic CQ */
#define NPUSIM_REPORT_DROPPED	3	/* its logic CQ was full: dropped */

/*
 * Read the ground truth of tasks seq .. seq + count - 1 of SQ @sq_id of TS
 * @ts_id: of this fd's device, and the SQ must be this fd's (EINVAL; the
 * fd must be OPENed with TSDRV: ENODEV); or, with NPUSIM_TRUTH_ANY_OWNER
 * in @flags (CAP_SYS_ADMIN: EPERM), of device @device whoever owns it, on
 * any fd. npusim keeps the last NPUSIM_TRUTH_DEPTH tasks of each SQ: ENOENT
 * when @seq is older than that. @seq >= next_seq: count 0 (not an error);
 * otherwise the records seq .. min(seq + count, next_seq) - 1 are written
 * and count set. A record is written at submission (QUEUED) and updated as
 * the task runs.
 */
struct npusim_truth_query {
	__u32	sq_id;		/* In */
	__u32	count;		/* In: capacity of @addr; Out: records written */
	__u64	seq;		/* In: first task wanted */
	__aligned_u64 addr;	/* In: user array of struct npusim_task_truth */
	__u64	next_seq;	/* Out: tasks submitted so far on this SQ */
	__u32	ts_id;		/* In */
	__u32	device;		/* In: with NPUSIM_TRUTH_ANY_OWNER */
	__u32	flags;		/* In: NPUSIM_TRUTH_* */
	__u32	res;
};

#define NPUSIM_TRUTH_ANY_OWNER	(1u << 0)	/* by (device, TS, SQ) */

#define NPUSIM_TRUTH_DEPTH	65536

/*
 * Live object counts of all devices (for leak checks: all zero but fds
 * when nothing is open) and totals since load.
 */
struct npusim_stats {
	__u64	fds;		/* open fds of the node */
	__u64	sqs;		/* allocated SQs */
	__u64	cqs;		/* allocated hardware CQs */
	__u64	tasks_queued;	/* submitted, not yet complete */
	__u64	reports_pending; /* in CQs and logic CQs, not yet received */
	__u64	submitted;	/* total since load */
	__u64	completed;
	__u64	reports;	/* total reports written */
	__u64	cancelled;
	__u64	errors;		/* failed tasks */
	__u64	logic_cqs;	/* allocated logic CQs */
	__u64	res_ids;	/* allocated resource ids (streams...) */
	__u64	report_drops;	/* reports a full logic CQ refused, resets */
	__u64	kmem_bytes;	/* kernel memory held for all processes */
	__u64	traced_sqes;	/* npusim_chan_trace_sqe() calls */
	__u64	fail_nth_hits;	/* allocations failed by FAIL_NTH */
	__u64	sent_sqes;	/* of submitted, by SEND (the others: mapped) */
};

/* A device's counter now, with the host time it corresponds to. */
struct npusim_clock {
	__u32	device;		/* In */
	__u32	res;
	__u64	host_ns;	/* Out: CLOCK_MONOTONIC now */
	__u64	ticks;		/* Out: device counter at host_ns */
	__u64	counter_freq_hz; /* Out */
	__u64	counter_epoch;	/* Out */
};

/*
 * Fail the @nth allocation (1: the next) that npusim makes for this fd,
 * in any command, with ENOMEM (iommufd's fail_nth, for kernels without
 * CONFIG_FAULT_INJECTION). It fires once; 0 disarms. CAP_SYS_ADMIN.
 */
struct npusim_fail_nth {
	__u32	nth;		/* In */
	__u32	res;
};

#define NPUSIM_IOC_GET_CONFIG	_IOWR(NPUSIM_IOC_MAGIC, 0, struct npusim_config)
#define NPUSIM_IOC_SET_CONFIG	_IOW(NPUSIM_IOC_MAGIC, 1, struct npusim_config)
#define NPUSIM_IOC_TRUTH	_IOWR(NPUSIM_IOC_MAGIC, 2, struct npusim_truth_query)
#define NPUSIM_IOC_STATS	_IOR(NPUSIM_IOC_MAGIC, 3, struct npusim_stats)
#define NPUSIM_IOC_CLOCK	_IOWR(NPUSIM_IOC_MAGIC, 4, struct npusim_clock)
#define NPUSIM_IOC_FAIL_NTH	_IOW(NPUSIM_IOC_MAGIC, 5, struct npusim_fail_nth)
/* 'N' commands are checked whole (value, size): anything else is ENOTTY. */

/*
 * Mapped ("UIO") SQ (npusim's own uio_t and uio_d; a chip-picked soft
 * queue differs as section 4 says): ALLOC maps it (above); it can also be mapped again
 * with mmap() of the TSDRV fd at NPUSIM_SQ_MMAP_OFFSET(tsId, sqId),
 * MAP_SHARED, at most NPUSIM_SQ_MMAP_SIZE(depth) bytes (EINVAL otherwise).
 * The first page is the control block below, SQEs follow from
 * NPUSIM_SQ_MMAP_SQE_OFF. The runtime writes SQEs, then stores the new
 * tail (release): that store is the doorbell; the engine picks them up
 * within NPUSIM_UIO_POLL_US. head and tail are SQ positions (0..depth-1);
 * tail == head means empty, so at most depth - 1 SQEs are outstanding; a
 * tail >= depth is ignored. head is published (release) as tasks complete.
 * The mapping stays valid after FREE until munmap; the engine stops reading
 * it at FREE.
 */
struct npusim_sq_ctrl {
	__u32	tail;		/* written by user space: the doorbell */
	__u32	head;		/* written by npusim: consumed up to here */
	__u32	depth;
	__u32	db;		/* soft queue: trigger doorbell (an SQ id) */
	__u32	head_reg;	/* soft queue: hardware SQ head (completed) */
	__u32	tail_reg;	/* soft queue: hardware SQ tail (copied) */
	__u32	res[10];
};

/* npusim_sq_ctrl.db when no doorbell is pending. */
#define NPUSIM_SQ_DB_IDLE		0xffffffffu

#define NPUSIM_SQ_MMAP_OFFSET(ts, sq) \
	((__u64)((ts) * NPUSIM_MAX_SQS + (sq) + 1) << 24)
#define NPUSIM_SQ_MMAP_SQE_OFF		4096
#define NPUSIM_SQ_MMAP_SHR_OFF		2048	/* struct trs_sq_shr_info */
#define NPUSIM_SQ_MMAP_SIZE(depth) \
	((NPUSIM_SQ_MMAP_SQE_OFF + (depth) * TRS_SQE_SIZE + 4095) & ~4095ull)
#define NPUSIM_UIO_POLL_US		50

/*
 * The layouts above are the ABI: every size and every documented offset is
 * checked wherever this header is compiled (kernel, BPF and user space).
 */
#define __TRS_ASSERT_SIZE(t, n) \
	_Static_assert(sizeof(struct t) == (n), #t " size")
#define __TRS_ASSERT_OFF(t, f, n) \
	_Static_assert(__builtin_offsetof(struct t, f) == (n), #t "." #f)

__TRS_ASSERT_SIZE(ascend_manager_arg, 260);
__TRS_ASSERT_SIZE(ascend_module_status, 260);
__TRS_ASSERT_OFF(ascend_module_status, status, 256);
__TRS_ASSERT_SIZE(trs_uio_info, 64);
__TRS_ASSERT_OFF(trs_uio_info, sq_ctrl_addr, 8);
__TRS_ASSERT_OFF(trs_uio_info, sq_mem_local_flag, 56);
__TRS_ASSERT_OFF(trs_uio_info, soft_que_flag, 57);
__TRS_ASSERT_OFF(trs_uio_info, uio_flag, 58);
__TRS_ASSERT_SIZE(trs_sq_shr_info, 1040);
__TRS_ASSERT_OFF(trs_sq_shr_info, send_full, 1024);
__TRS_ASSERT_OFF(trs_sq_shr_info, send_ok, 1032);
_Static_assert(NPUSIM_SQ_MMAP_SHR_OFF >= sizeof(struct npusim_sq_ctrl) &&
	       NPUSIM_SQ_MMAP_SHR_OFF + sizeof(struct trs_sq_shr_info) <=
	       NPUSIM_SQ_MMAP_SQE_OFF, "shr_info inside the control page");
__TRS_ASSERT_SIZE(trs_sqcq_alloc_info, 96);
__TRS_ASSERT_OFF(trs_sqcq_alloc_info, flag, 28);
__TRS_ASSERT_OFF(trs_sqcq_alloc_info, cqId, 32);
__TRS_ASSERT_OFF(trs_sqcq_alloc_info, sqId, 36);
__TRS_ASSERT_OFF(trs_sqcq_alloc_info, info, 40);
__TRS_ASSERT_OFF(trs_sqcq_alloc_info, ext_info_len, 60);
__TRS_ASSERT_OFF(trs_sqcq_alloc_info, ext_info, 64);
__TRS_ASSERT_OFF(trs_sqcq_alloc_info, uio_info, 72);
__TRS_ASSERT_OFF(trs_sqcq_alloc_info, res, 80);
__TRS_ASSERT_SIZE(trs_sqcq_alloc_out, 40);
__TRS_ASSERT_OFF(trs_sqcq_alloc_out, flag, 16);
__TRS_ASSERT_SIZE(trs_sqcq_free_info, 52);
__TRS_ASSERT_OFF(trs_sqcq_free_info, flag, 16);
__TRS_ASSERT_SIZE(trs_sqcq_query_info, 52);
__TRS_ASSERT_OFF(trs_sqcq_query_info, prop, 16);
__TRS_ASSERT_OFF(trs_sqcq_query_info, value, 20);
__TRS_ASSERT_SIZE(trs_sqcq_config_info, 52);
__TRS_ASSERT_SIZE(trs_task_send_info, 64);
__TRS_ASSERT_OFF(trs_task_send_info, timeout, 12);
__TRS_ASSERT_OFF(trs_task_send_info, sqe_addr, 16);
__TRS_ASSERT_OFF(trs_task_send_info, sqe_num, 24);
__TRS_ASSERT_OFF(trs_task_send_info, pos, 28);
__TRS_ASSERT_OFF(trs_task_send_info, res, 32);
__TRS_ASSERT_SIZE(trs_report_recv_info, 72);
__TRS_ASSERT_OFF(trs_report_recv_info, cqe_addr, 16);
__TRS_ASSERT_OFF(trs_report_recv_info, cqe_num, 24);
__TRS_ASSERT_OFF(trs_report_recv_info, report_cqe_num, 28);
__TRS_ASSERT_OFF(trs_report_recv_info, stream_id, 32);
__TRS_ASSERT_OFF(trs_report_recv_info, task_id, 36);
__TRS_ASSERT_OFF(trs_report_recv_info, res, 40);
__TRS_ASSERT_SIZE(trs_res_id_para, 44);
__TRS_ASSERT_OFF(trs_res_id_para, id, 8);
__TRS_ASSERT_OFF(trs_res_id_para, prop, 32);
__TRS_ASSERT_OFF(trs_res_id_para, value, 36);
__TRS_ASSERT_SIZE(urd_ioctl_arg, 64);
__TRS_ASSERT_OFF(urd_ioctl_arg, main_cmd, 8);
__TRS_ASSERT_OFF(urd_ioctl_arg, input, 32);
__TRS_ASSERT_OFF(urd_ioctl_arg, output, 48);
__TRS_ASSERT_SIZE(urd_chip_info, 112);
__TRS_ASSERT_OFF(urd_chip_info, type, 8);
__TRS_ASSERT_OFF(urd_chip_info, name, 40);
__TRS_ASSERT_OFF(urd_chip_info, version, 72);
__TRS_ASSERT_OFF(urd_chip_info, resv, 104);
__TRS_ASSERT_SIZE(trs_sqe, 64);
__TRS_ASSERT_OFF(trs_sqe, rt_stream_id, 4);
__TRS_ASSERT_OFF(trs_sqe, task_id, 6);
__TRS_ASSERT_OFF(trs_sqe, place_holder.profiler_trace_id, 16);
__TRS_ASSERT_OFF(trs_sqe, place_holder.model_id, 24);
__TRS_ASSERT_OFF(trs_sqe, place_holder.tag_id, 32);
__TRS_ASSERT_OFF(trs_sqe, place_holder.sim_error, 56);
__TRS_ASSERT_OFF(trs_sqe, task.sim_duration_ns, 60);
__TRS_ASSERT_SIZE(trs_sqe_v2, 64);
__TRS_ASSERT_OFF(trs_sqe_v2, task_id, 4);
__TRS_ASSERT_OFF(trs_sqe_v2, place_holder.task_type, 12);
__TRS_ASSERT_OFF(trs_sqe_v2, place_holder.profiler_trace_id, 16);
__TRS_ASSERT_OFF(trs_sqe_v2, place_holder.tag_id, 32);
__TRS_ASSERT_OFF(trs_sqe_v2, task.sim_error, 56);
__TRS_ASSERT_OFF(trs_sqe_v2, task.sim_duration_ns, 60);
__TRS_ASSERT_SIZE(trs_hw_cqe, 16);
__TRS_ASSERT_OFF(trs_hw_cqe, sq_head, 2);
__TRS_ASSERT_OFF(trs_hw_cqe, stream_id, 4);
__TRS_ASSERT_OFF(trs_hw_cqe, task_id, 6);
__TRS_ASSERT_OFF(trs_hw_cqe, timestamp, 8);
__TRS_ASSERT_OFF(trs_hw_cqe, error.sqe_index, 10);
__TRS_ASSERT_OFF(trs_hw_cqe, error.error_code, 12);
__TRS_ASSERT_SIZE(trs_logic_cqe, 32);
__TRS_ASSERT_OFF(trs_logic_cqe, error_type, 8);
__TRS_ASSERT_OFF(trs_logic_cqe, sqe_type, 9);
__TRS_ASSERT_OFF(trs_logic_cqe, sq_id, 10);
__TRS_ASSERT_OFF(trs_logic_cqe, sq_head, 12);
__TRS_ASSERT_OFF(trs_logic_cqe, flags, 14);
__TRS_ASSERT_OFF(trs_logic_cqe, timestamp, 16);
__TRS_ASSERT_OFF(trs_logic_cqe, enque_timestamp, 24);
__TRS_ASSERT_SIZE(npusim_config, 96);
__TRS_ASSERT_OFF(npusim_config, sq_mode, 80);
__TRS_ASSERT_SIZE(npusim_task_truth, 80);
__TRS_ASSERT_SIZE(npusim_truth_query, 48);
__TRS_ASSERT_SIZE(npusim_stats, 136);
__TRS_ASSERT_SIZE(npusim_clock, 40);
__TRS_ASSERT_SIZE(npusim_sq_ctrl, 64);
__TRS_ASSERT_OFF(npusim_sq_ctrl, db, 12);
__TRS_ASSERT_OFF(npusim_sq_ctrl, head_reg, 16);
__TRS_ASSERT_OFF(npusim_sq_ctrl, tail_reg, 20);

#endif /* _UAPI_NPUSIM_ABI_H */
