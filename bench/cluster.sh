#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Scale figures of issue 28 (called by bench/run.sh; markdown on stdout):
#   - host: `steptime export` at 64 processes (fake_steps, 1024 records as
#     steptime keeps them, the flight recorder at its default --keep 32):
#     CPU per scrape and scrape bytes, CPU and bytes of one /trace; the
#     Prometheus series per rank (the exposition's, counted, plus the
#     per-rank recording rules of deploy/prometheus/steptime.rules.yml);
#   - VM (unless --host-only): the 64-rank job of `make check-cluster`, its
#     detection latency per case, against the anchors of issue 28.
#
#   bench/cluster.sh [--host-only]
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
O=${O:-build}
cli=$O/steptime
fake=$O/selftests/observe/fake_steps
pin=/sys/fs/bpf/steptime_bench_cluster
scrapes=${BENCH_CLUSTER_SCRAPES:-50}
procs=64
vm=1
[ "${1:-}" = --host-only ] && vm=0

echo
echo "### 64 ranks: exporter cost, series per rank, detection latency (bench/cluster.sh)"
echo

if [ "$(id -u)" != 0 ] || [ ! -x "$fake" ]; then
	echo "not run: needs root and $fake (make targets)"
	exit 0
fi

sleepers=()
cleanup() {
	[ -n "${exp:-}" ] && kill "$exp" 2>/dev/null && wait "$exp" 2>/dev/null
	for p in "${sleepers[@]}"; do kill "$p" 2>/dev/null; done
	rm -rf "$pin"
}
trap cleanup EXIT

for ((r = 0; r < procs; r++)); do
	RANK=$r LOCAL_RANK=$((r % 8)) WORLD_SIZE=$procs JOB_ID=bench DEVICE_ID=$((r % 8)) \
		sleep 3600 &
	sleepers+=($!)
done
args=()
for p in "${sleepers[@]}"; do args+=("$p:16"); done
rm -rf "$pin"
"$fake" "$pin" "${args[@]}" >/dev/null || { echo "not run: fake_steps failed"; exit 1; }

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# --interval 1h: a scrape renders only (one poll at start fills the state).
"$cli" export --pin "$pin" --listen 127.0.0.1:$port --interval 1h 2>/dev/null &
exp=$!
for _ in $(seq 100); do curl -sf -o /dev/null http://127.0.0.1:$port/metrics && break; sleep 0.1; done

# The exporter's CPU time in ns (schedstat's first field).
cpu() { cut -d' ' -f1 /proc/$exp/schedstat; }

# get PATH N: N requests; prints "CPU-us-per-request bytes".
get() {
	local c0 c1 bytes i
	c0=$(cpu)
	for ((i = 0; i < $2; i++)); do
		bytes=$(curl -sf http://127.0.0.1:$port$1 | wc -c)
	done
	c1=$(cpu)
	echo "$(((c1 - c0) / $2 / 1000)) $bytes"
}

read -r scr_us scr_b < <(get /metrics "$scrapes")
read -r tr_us tr_b < <(get "/trace?pid=${sleepers[0]}" "$scrapes")
exposition=$(curl -sf http://127.0.0.1:$port/metrics)
per_rank=$(grep -c "pid=\"${sleepers[0]}\"" <<<"$exposition")
global=$(grep -v '^#' <<<"$exposition" | grep -vc 'pid="')
rank_rules=$(grep -c 'record: steptime_rank:' deploy/prometheus/steptime.rules.yml)
job_rules=$(grep -c 'record: steptime_job:' deploy/prometheus/steptime.rules.yml)

echo "Host $(uname -r), $(nproc) CPUs; $procs live processes, 16 steps each in the map; $scrapes requests each."
echo
echo "| what | value |"
echo "| --- | --- |"
echo "| exporter CPU per scrape (render), $procs processes | $scr_us us |"
echo "| scrape size, text format, $procs processes | $scr_b bytes ($((scr_b / procs)) per process) |"
echo "| exporter CPU per /trace of one process (16 steps) | $tr_us us |"
echo "| /trace size, one process, 16 steps | $tr_b bytes |"
echo "| Prometheus series per rank: exposition + recording rules | $per_rank + $rank_rules = $((per_rank + rank_rules)) |"
echo "| series per exporter (no pid label) and per job (recording rules) | $global, $job_rules |"
echo "| series of a 64-rank job on 8 exporters | $((procs * (per_rank + rank_rules) + 8 * global + job_rules)) |"

cleanup
trap - EXIT
exp=

[ $vm = 1 ] || exit 0
echo
out=$(cd "$O" && pwd)/bench
mkdir -p "$out"
rm -f "$out/cluster_latency.json"
s=$(date +%s)
CLUSTER_OUT=$out make --no-print-directory check-cluster >"$out/cluster.log" 2>&1
st=$?
echo "The 64-rank job of \`make check-cluster\` (QEMU/TCG, 2 vCPUs; 8 nodes of 8 ranks," \
     "1 s scrapes and rule evaluations; exit $st, $(($(date +%s) - s)) s, log $out/cluster.log):"
echo
echo "| case | detected after (s) | anchors |"
echo "| --- | --- | --- |"
if [ -s "$out/cluster_latency.json" ]; then
	python3 - "$out/cluster_latency.json" <<'EOF'
import json, sys
anchor = {
    "slow rank (20%)": "NVRx straggler reports every 300 s; msMonitor/dynolog 60 s; msprof-analyze offline (5% rule)",
    "host hang": "xpu-timer 300 s; NVRx heartbeat 45 min by default",
    "device hang": "xpu-timer 300 s; NVRx heartbeat 45 min by default",
}
for k, v in json.load(open(sys.argv[1])).items():
    print("| %s | %.1f | %s |" % (k, v, anchor.get(k, "-")))
EOF
else
	echo "| (no latencies: the run failed, see the log) | - | - |"
fi
grep -E '^(not )?ok ' "$out/cluster.log" | sed 's/^/    /'
exit $st
