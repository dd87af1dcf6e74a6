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
# read (it is the container runtime's seccomp profile that wants it).
# Then the README's Docker block, as written, with Debian's Podman behind
# `docker` (podman-docker) given Docker's seccomp rule for bpf(), in a
# private mount namespace (the guest's root is read-only): the same steps
# served, the stated capabilities alone; without CAP_BPF, or under
# Podman's own profile, the maps refused with steptime's message.
set -uo pipefail

cd "$(dirname "$(readlink -f "$0")")/../.." || exit 1
# Mounts of our own (the Docker block's) are nobody else's.
[ -n "${SIDECAR_NS:-}" ] ||
	exec env SIDECAR_NS=1 unshare --mount --propagation private "$0" "$@"
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
	[ -n "${CONTAINERS_CONF:-}" ] && docker rm -f steptime-export >/dev/null 2>&1
	wait 2>/dev/null
	"$CLI" unload >/dev/null 2>&1
	rm -rf "$tmp" /run/steptime-sidecar
}
trap cleanup EXIT

# The README's block: the indented lines after its "$1:" marker, as
# written (the build dir's name put right when O is not build).
readme_block() {	# marker
	awk -v m="<!-- $1: " 'index($0, m) == 1 { on = 1; next }
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

skip() {	# count why
	local i

	for ((i = 0; i < $1; i++)); do
		n=$((n + 1))
		echo "ok $n # SKIP $2"
	done
}

# Podman's profile with Docker's rule for bpf() (docker_seccomp.py).
docker_seccomp() {	# podman-profile out
	python3 selftests/deploy/docker_seccomp.py "$1" "$2"
}

# Podman's configuration: images and state in $tmp, runc, the seccomp
# profile $1.
podman_conf() {	# seccomp-profile
	printf '[storage]\ndriver = "vfs"\ngraphroot = "%s"\nrunroot = "%s"\n' \
		"$tmp/graph" "$tmp/run" >"$tmp/storage.conf"
	printf '[containers]\nseccomp_profile = "%s"\n[engine]\nruntime = "runc"\n' \
		"$1" >"$tmp/containers.conf"
}

# The README's block $1, run as written but for sed expression $2 (an
# option taken away, another command).
run_block() {	# marker sed-expression
	bash -c "$(readme_block "$1" | sed "$2")"
}

docker_exited() {
	[ "$(docker inspect -f '{{.State.Status}}' steptime-export 2>/dev/null)" = exited ]
}

# The container the block started was refused the maps, and said so.
docker_refused() {	# test-name
	local out

	wait_for 60 docker_exited
	out=$(docker logs steptime-export 2>&1)
	docker rm -f steptime-export >/dev/null 2>&1
	echo "$out" | grep -q 'permission denied reading the maps under .*: bpf() is refused to this process'
	ok $? "$1" "$(echo "$out" | tr '\n' ' ' | head -c 200)"
}

docker_checks() {
	local prof=/usr/share/containers/seccomp.json pid caps want rc

	if ! command -v podman >/dev/null || ! grep -qs podman /usr/bin/docker ||
	   [ ! -r "$prof" ]; then
		skip 4 "no podman-docker (make deps-check installs it)"
		return
	fi
	# The block's /usr/local/bin and Podman's short-name cache: the
	# guest's root is read-only. Docker's own client, if installed
	# there, is hidden: `docker` is Podman's.
	if ! mount -t tmpfs tmpfs /usr/local/bin || ! mount -t tmpfs tmpfs /var/cache; then
		skip 4 "cannot mount tmpfs over /usr/local/bin and /var/cache"
		return
	fi
	docker_seccomp "$prof" "$tmp/docker-seccomp.json"
	podman_conf "$tmp/docker-seccomp.json"
	export CONTAINERS_STORAGE_CONF=$tmp/storage.conf CONTAINERS_CONF=$tmp/containers.conf
	# All the block needs of debian:12 is an image: an empty one.
	mkdir -p "$tmp/img"
	tar -C "$tmp/img" -cf "$tmp/img.tar" . &&
		podman import -q "$tmp/img.tar" localhost/debian:12 >/dev/null

	readme_block docker | sed 's/^/# /'
	run_block docker '' >"$tmp/docker" 2>&1
	wait_for 60 done_steps
	rc=$?
	[ $rc = 0 ] || { cat "$tmp/docker"; docker logs steptime-export 2>&1; } |
		head -30 | sed 's/^/# /'
	ok $rc "the README's Docker block (Podman's docker) serves the rank's 5 steps with its labels"

	pid=$(docker inspect -f '{{.State.Pid}}' steptime-export 2>/dev/null)
	caps=$(sed -n 's/^CapEff:\t//p' "/proc/$pid/status" 2>/dev/null)
	want=$(printf '%016x' $(((1 << 39) | (1 << 19) | (1 << 2))))
	[ -n "$caps" ] && [ "$caps" = "$want" ]
	ok $? "its exporter has CAP_BPF, SYS_PTRACE and DAC_READ_SEARCH alone" \
		"pid $pid, CapEff $caps (want $want)"
	docker rm -f steptime-export >/dev/null 2>&1

	run_block docker 's/ --cap-add BPF//' >"$tmp/docker.nobpf" 2>&1
	docker_refused "without --cap-add BPF, Docker's profile refuses the maps, named"

	podman_conf "$prof"
	run_block docker '' >"$tmp/docker.podman" 2>&1
	docker_refused "under Podman's own profile, CAP_BPF alone is refused the maps, named"
}

echo "TAP version 13"
echo "1..11"

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

block=$(readme_block sidecar)
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
"$CLI" stat -o json >"$tmp/stat.json"
run_block sidecar 's|/steptime export --listen 127.0.0.1:9775|/steptime stat -o json|' \
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
run_block sidecar 's/,+dac_read_search//; s|export --listen 127.0.0.1:9775|export --once|' \
	>"$tmp/nodac.m" 2>&1
rank_label=$(series steptime_steps_total "pid=\"$rank_pid\"" <"$tmp/nodac.m")
grep "^steptime_steps_total{.*pid=\"$rank_pid\"" "$tmp/nodac.m" | grep -q 'rank=""'
ok $? "without CAP_DAC_READ_SEARCH the rank's labels are lost" \
	"$rank_label: $(grep -v '^#' "$tmp/nodac.m" | head -c 300)"

# The kernel (6.1 and later) refuses only map and program creation to a
# process without CAP_BPF: it is the container runtime's seccomp profile
# that wants it, which this block does not apply.
run_block sidecar 's/+bpf,//; s|export --listen 127.0.0.1:9775|export --once|' \
	>"$tmp/nobpf" 2>&1
rc=$?
grep -q "^steptime_steps_total{pid=\"$rank_pid\",.*state=\"done\"} 5" "$tmp/nobpf"
ok $((rc + $?)) "without CAP_BPF the kernel still lets the exporter read the maps (CAP_BPF is for seccomp)" \
	"exit $rc: $(grep -v '^#' "$tmp/nobpf" | head -c 200)"

docker_checks
exit $failed
