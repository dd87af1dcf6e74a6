#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Slurm prolog (slurm.conf: Prolog=/etc/slurm/prolog.d/*, run as root on
# each node of a job as it starts): loads steptime where it is not loaded,
# and starts an exporter of this job's processes only (its cgroup), on the
# first free port of STEPTIME_PORTS, written for Prometheus as a file_sd
# target file (STEPTIME_SD_DIR: a directory your Prometheus reads through
# file_sd_configs, e.g. on a shared file system). epilog.sh stops it.
# Where a node-wide exporter runs already (steptime-export.service), a
# per-job one is not needed: keep only the load part.
#
# It never fails the job (a failing prolog drains the node): problems go to
# syslog (logger -t steptime-prolog).
#
# Settings, from the environment slurmd gives (or edit the defaults here):
#   STEPTIME            the command (/usr/local/bin/steptime)
#   STEPTIME_LOAD_ARGS  `steptime load` options, the same as every other load
#                       of the node (steptime-load.service's drop-in)
#   STEPTIME_PORTS      FIRST-LAST ports to try (9776-9875)
#   STEPTIME_RUN_DIR    pid and log files (/run/steptime)
#   STEPTIME_SD_DIR     target files (/var/lib/steptime/targets)
#   STEPTIME_CGROUP     the job's cgroup as /proc/PID/cgroup shows it
#                       (cgroup/v2: /system.slice/slurmstepd.scope/job_ID)
set -u
job=${SLURM_JOB_ID:?SLURM_JOB_ID is not set: run as the Slurm prolog}
st=${STEPTIME:-/usr/local/bin/steptime}
ports=${STEPTIME_PORTS:-9776-9875}
run=${STEPTIME_RUN_DIR:-/run/steptime}
sd=${STEPTIME_SD_DIR:-/var/lib/steptime/targets}
cg=${STEPTIME_CGROUP:-/system.slice/slurmstepd.scope/job_$job}

log() {
	logger -t steptime-prolog "job $job: $*" 2>/dev/null ||
		echo "steptime-prolog: job $job: $*" >&2
}

# Idempotent: 0 when loaded already with these options; 3 when loaded with
# others (the loaded program serves this job too: said, not fatal).
# shellcheck disable=SC2086 # options, split on purpose
out=$("$st" load ${STEPTIME_LOAD_ARGS:-} 2>&1)
case $? in
0) ;;
3) log "$out" ;;
*) log "steptime load failed: $out"; exit 0 ;;
esac

mkdir -p "$run" "$sd" || { log "cannot create $run or $sd"; exit 0; }
# The exporter on port $1, once it listens: 0; 1 when it exited (taken).
start() {
	setsid "$st" export --listen "0.0.0.0:$1" --cgroup "$cg" \
		</dev/null >>"$run/job_$job.log" 2>&1 &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		if ss -Htlnp "sport = :$1" 2>/dev/null | grep -q "pid=$pid,"; then
			echo "$pid" >"$run/job_$job.pid"
			return 0
		fi
		sleep 0.1
	done
	wait "$pid" 2>/dev/null
	return 1
}
port=${ports%-*}
while [ "$port" -le "${ports#*-}" ]; do
	if start "$port"; then
		# Written whole, then renamed: Prometheus never reads half a file.
		printf '[{"targets": ["%s:%d"], "labels": {"slurm_job_id": "%s"}}]\n' \
			"$(hostname -f 2>/dev/null || hostname)" "$port" "$job" \
			>"$sd/.job_$job.json" && mv "$sd/.job_$job.json" "$sd/job_$job.json"
		exit 0
	fi
	port=$((port + 1))
done
log "no free port in $ports for the exporter (see $run/job_$job.log)"
exit 0
