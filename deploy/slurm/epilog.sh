#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Slurm epilog (slurm.conf: Epilog=/etc/slurm/epilog.d/*): stops the
# exporter prolog.sh started for this job and removes its target file. It
# leaves steptime loaded (the next job's prolog finds it; `steptime unload`
# removes it). Same settings as prolog.sh; never fails the node.
set -u
job=${SLURM_JOB_ID:?SLURM_JOB_ID is not set: run as the Slurm epilog}
run=${STEPTIME_RUN_DIR:-/run/steptime}
sd=${STEPTIME_SD_DIR:-/var/lib/steptime/targets}

rm -f "$sd/job_$job.json" "$run/job_$job.log"
pid=$(cat "$run/job_$job.pid" 2>/dev/null) || exit 0
rm -f "$run/job_$job.pid"
# Only our exporter: a pid reused since is someone else's process.
if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q " export --listen "; then
	kill -TERM "$pid"
	while kill -0 "$pid" 2>/dev/null; do
		sleep 0.1
	done
fi
exit 0
