#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# deploy/README.md's sidecar, in the VM (run_vm.sh; prints TAP): steptime
# loaded at its default pin, one CANN rank of user nobody (RANK=3,
# JOB_ID=sidecar) stepping on npusim and lingering, then the README's
# container-less block run as written: build/steptime-static alone in a
# root of its own, /proc and the bpffs bound in, the capabilities the
# README states and no other. Its /metrics must carry the rank's steps and
# labels as the build tree's `steptime export --once` does; the same root
# runs `stat -o json` as the build tree's. Without CAP_DAC_READ_SEARCH the
# rank's labels are lost; without CAP_BPF the kernel still lets the maps be
# read (it is for the container runtime's seccomp profile, not tested here:
# no Docker or Podman).
set -uo pipefail

cd "$(dirname "$(readlink -f "$0")")/../.." || exit 1
O=${O:-build}
CLI=$O/steptime
RANK=$O/selftests/observe/rank
README=deploy/README.md
URL=http://127.0.0.1:9775/metrics
tmp=$(mktemp -d /tmp/steptime_sidecar.XXXXXX)
n=0 failed=0 rank_pid='' side_pid=''

ok() {	# cond-status name [why]
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n $2"
	else
		failed=1
		echo "not ok $n $2${3:+ # $3}"
	fi
}

cleanup() {
	[ -n "$side_pid" ] && kill -- -"$side_pid" 2>/dev/null
	[ -n "$rank_pid" ] && kill "$rank_pid" 2>/dev/null
	wait 2>/dev/null
	"$CLI" unload >/dev/null 2>&1
	rm -rf "$tmp" /run/steptime-sidecar
}
trap cleanup EXIT

# The README's block: the indented lines after its "sidecar:" marker, as
# written (the build dir's name put right when O is not build).
readme_block() {
	awk '/<!-- sidecar: / { on = 1; next }
	     on && /^    / { sub(/^    /, ""); print; seen = 1; next }
	     on && seen && !/^$/ { exit }' "$README" |
		sed "s|build/steptime-static|$O/steptime-static|"
}

scrape() {
	python3 -c 'import sys, urllib.request
sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' "$URL" 2>/dev/null
}

# Value of the series of metric $1 whose labels include all of $2 (a
# comma-separated list of k="v"), in the exposition read from stdin.
series() {
	awk -v m="$1" -v want="$2" '
		index($0, m "{") == 1 {
			n = split(want, w, ",")
			for (i = 1; i <= n; i++)
				if (index($0, w[i]) == 0)
					next
			print $NF
			exit
		}'
}

# Wait up to $1 seconds for command $2... to succeed.
wait_for() {
	local end=$((SECONDS + $1))

	shift
	until "$@"; do
		[ $SECONDS -lt "$end" ] || return 1
		sleep 0.2
	done
}

echo "TAP version 13"
echo "1..7"

if [ ! -x "$O/steptime-static" ] || [ ! -x "$RANK" ]; then
	echo "Bail out! no $O/steptime-static or $RANK (make)"
	exit 1
fi
interp=$(readelf -lW "$O/steptime-static" | grep -c 'Requesting program interpreter')
needed=$(readelf -dW "$O/steptime-static" | grep -c NEEDED)
ok $((interp + needed)) "steptime-static needs no loader or library" \
	"$interp interpreter, $needed NEEDED"

# The guest's loopback starts down.
ip link set lo up 2>/dev/null
"$CLI" unload >/dev/null 2>&1
# The rank marks as nobody: the maps and the device let every user.
if ! "$CLI" load --mode 0666 >"$tmp/load" 2>&1; then
	sed 's/^/# /' "$tmp/load"
	echo "Bail out! steptime load failed"
	exit 1
fi
chmod 0666 /dev/npusim_manager
setpriv --reuid 65534 --regid 65534 --clear-groups \
	env RANK=3 JOB_ID=sidecar "$RANK" --device 0 --max-steps 5 --linger 1 \
	>"$tmp/rank" 2>&1 &
rank_pid=$!
if ! wait_for 120 grep -q ' 5 steps' "$tmp/rank"; then
	sed 's/^/# /' "$tmp/rank"
	echo "Bail out! the rank did not make its 5 steps"
	exit 1
fi

block=$(readme_block)
echo "$block" | sed 's/^/# /'
setsid bash -c "$block" >"$tmp/side" 2>&1 &
side_pid=$!
labels="pid=\"$rank_pid\",job_id=\"sidecar\",rank=\"3\",state=\"done\""
done_steps() {
	[ "$(scrape | series steptime_steps_total "$labels")" = 5 ]
}
wait_for 60 done_steps
rc=$?
[ $rc = 0 ] || { python3 -c 'import sys, urllib.request
print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode()[:3000])' "$URL" 2>&1 |
		grep -v '^# [HT]' | head -30; cat "$tmp/side"; } | sed 's/^/# /'
ok $rc "the README's sidecar serves the rank's 5 steps with its labels"

# The same per-process counters as the build tree's exporter (not gauges:
# ages move between the two reads).
scrape | grep "pid=\"$rank_pid\"" | grep '^steptime_[a-z_]*_total{' | sort >"$tmp/side.m"
"$CLI" export --once | grep "pid=\"$rank_pid\"" | grep '^steptime_[a-z_]*_total{' |
	sort >"$tmp/once.m"
[ -s "$tmp/side.m" ] && cmp -s "$tmp/side.m" "$tmp/once.m"
ok $? "its counters equal the build tree's export --once" \
	"$(diff "$tmp/side.m" "$tmp/once.m" | head -5 | tr '\n' ' ')"

# What the exporter runs as: the stated capabilities, a root of its own.
exp_pid=$(pgrep -s "$side_pid" -x steptime | head -1)
caps=$(sed -n 's/^CapEff:\t//p' "/proc/$exp_pid/status" 2>/dev/null)
want=$(printf '%016x' $(((1 << 39) | (1 << 19) | (1 << 18) | (1 << 2))))
root=$(stat -Lc %d:%i "/proc/$exp_pid/root/" 2>/dev/null)
files=$(ls /run/steptime-sidecar | tr '\n' ' ')
[ "$caps" = "$want" ] && [ "$root" = "$(stat -c %d:%i /run/steptime-sidecar/)" ] &&
	[ "$files" = "proc steptime sys " ]
ok $? "the exporter has CAP_BPF, SYS_PTRACE, DAC_READ_SEARCH (and SYS_CHROOT) alone, in a root of the binary alone" \
	"CapEff $caps (want $want), root $root: $files"
kill -- -"$side_pid" 2>/dev/null
wait "$side_pid" 2>/dev/null
side_pid=

# The README's root and capabilities, another command.
run_as_readme() {	# sed-expression
	bash -c "$(echo "$block" | sed "$1")"
}
"$CLI" stat -o json >"$tmp/stat.json"
run_as_readme 's|/steptime export --listen 127.0.0.1:9775|/steptime stat -o json|' \
	>"$tmp/side.json" 2>"$tmp/side.err"
python3 - "$tmp/stat.json" "$tmp/side.json" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
for s in a + b:
    s.pop("phases", None)	# under /dev/shm, which the sidecar is not given
sys.exit(not a or a != b)
EOF
ok $? "stat -o json in that root equals the build tree's" "$(head -c 200 "$tmp/side.err")"

# Each capability is needed.
run_as_readme 's/,+dac_read_search//; s|export --listen 127.0.0.1:9775|export --once|' \
	>"$tmp/nodac.m" 2>&1
rank_label=$(series steptime_steps_total "pid=\"$rank_pid\"" <"$tmp/nodac.m")
grep "^steptime_steps_total{.*pid=\"$rank_pid\"" "$tmp/nodac.m" | grep -q 'rank=""'
ok $? "without CAP_DAC_READ_SEARCH the rank's labels are lost" \
	"$rank_label: $(grep -v '^#' "$tmp/nodac.m" | head -c 300)"

# The kernel (6.1 and later) refuses only map and program creation to a
# process without CAP_BPF: it is the container runtime's seccomp profile
# that wants it, which this block does not apply.
run_as_readme 's/+bpf,//; s|export --listen 127.0.0.1:9775|export --once|' \
	>"$tmp/nobpf" 2>&1
rc=$?
grep -q "^steptime_steps_total{pid=\"$rank_pid\",.*state=\"done\"} 5" "$tmp/nobpf"
ok $((rc + $?)) "without CAP_BPF the kernel still lets the exporter read the maps (CAP_BPF is for seccomp)" \
	"exit $rc: $(grep -v '^#' "$tmp/nobpf" | head -c 200)"
exit $failed
