/* SPDX-License-Identifier: GPL-2.0 */
/*
 * npusim:logic_cqe, the analog of the real driver's trs_core:logic_cqe: one
 * event per completion report written to a CQ, for tracers that prefer a
 * tracepoint (tp_btf, raw_tp, perf) to a probe on npusim_logic_cq_enque().
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM npusim

#if !defined(_NPUSIM_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _NPUSIM_TRACE_H

#include <linux/tracepoint.h>
#include "npusim_abi.h"

TRACE_EVENT(logic_cqe,
	TP_PROTO(u32 cq_id, const struct trs_logic_cqe *cqe),
	TP_ARGS(cq_id, cqe),
	TP_STRUCT__entry(
		__field(u32, cq_id)
		__field(u16, stream_id)
		__field(u16, task_id)
		__field(u16, sq_id)
		__field(u16, sq_head)
		__field(u32, error_code)
		__field(u64, timestamp)
	),
	TP_fast_assign(
		__entry->cq_id = cq_id;
		__entry->stream_id = cqe->stream_id;
		__entry->task_id = cqe->task_id;
		__entry->sq_id = cqe->sq_id;
		__entry->sq_head = cqe->sq_head;
		__entry->error_code = cqe->error_code;
		__entry->timestamp = cqe->timestamp;
	),
	TP_printk("cq=%u stream=%u task=%u sq=%u head=%u error=%#x ts=%llu",
		  __entry->cq_id, __entry->stream_id, __entry->task_id,
		  __entry->sq_id, __entry->sq_head, __entry->error_code,
		  __entry->timestamp)
);

#endif /* _NPUSIM_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE npusim_trace
#include <trace/define_trace.h>
