#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# scripts/vmtest.sh's contract, from the host (TAP): exit statuses, output,
# paths, arguments, environment, mounts, both kernels, and the failures
# (panic, time limit). About a minute: `make check-vmtest`.
set -u
cd "$(dirname "$0")/../.." || exit 1
vm=scripts/vmtest.sh
k612=$(ls /boot | sed -n 's/^vmlinuz-\(6\.12\..*\)$/\1/p' | head -n1)
n=0 failed=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT

ok() {	# status description
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n $2"
	else
		failed=$((failed + 1))
		echo "not ok $n $2"
		sed 's/^/#   /' "$out" | tail -n 15
	fi
	# The run directory a failed run keeps for its serial log.
	sed -n 's|.*; serial log \(.*/run\.[^/]*\)/serial\.log:$|\1|p' "$out" |
		xargs -r rm -rf
}

# Run vmtest.sh with no stdin (as CI does); $rc and $out hold the result.
run() {
	"$vm" "$@" </dev/null >"$out" 2>&1
	rc=$?
}

echo "TAP version 13"
echo "1..14"

t0=$(date +%s)
run -- true
ok $(( rc != 0 || $(date +%s) - t0 >= 30 )) "true: status 0 in under 30 s"

run -- sh -c 'exit 3'
ok $(( rc != 3 )) "status 3 comes back"

run -- sh -c 'exit 200'
ok $(( rc != 200 )) "status 200 comes back"

run -- sh -c 'echo to-stdout; echo to-stderr >&2'
grep -qx to-stdout "$out" && grep -qx to-stderr "$out"
ok $? "stdout and stderr reach the caller"

mark=build/vm/.vmtest-test.$$
run -- sh -c "pwd; echo guest >$mark"
[ "$rc" = 0 ] && grep -qx "$PWD" "$out" && [ "$(cat $mark 2>/dev/null)" = guest ]
ok $? "cwd is the caller's, project tree writable at the same path"
rm -f "$mark"

run -- printf '%s|' 'a b' "c'd" '$HOME' ''
[ "$rc" = 0 ] && grep -qF "a b|c'd|\$HOME||" "$out"
ok $? "arguments are passed verbatim"

FOO='x y' VMTEST_ENV=FOO run -- sh -c 'echo "[$FOO]"'
grep -qxF '[x y]' "$out"
ok $? "VMTEST_ENV passes variables"

run -- sh -c '[ "$(id -u)" = 0 ] && mountpoint -q /sys/fs/bpf &&
	mountpoint -q /sys/kernel/tracing && mountpoint -q /tmp &&
	touch /tmp/x && ! touch /usr/.vmtest 2>/dev/null && command -v python3'
ok $rc "root, bpffs, tracefs, tmpfs /tmp, read-only host root, host tools"

if [ -n "$k612" ]; then
	run --kernel "$k612" -- uname -r
	[ "$rc" = 0 ] && grep -qx "$k612" "$out"
	ok $? "kernel $k612 boots"
else
	echo "ok $((n += 1)) # SKIP no 6.12 kernel installed"
fi

run -- sh -c 'echo c >/proc/sysrq-trigger; sleep 5'
[ "$rc" != 0 ] && grep -q 'Kernel panic' "$out"
ok $? "a panic fails and shows the serial log"

t0=$(date +%s)
run -t 10 -- sleep 100
[ "$rc" = 124 ] && [ $(( $(date +%s) - t0 )) -lt 40 ] && grep -q 'timed out' "$out"
ok $? "a hang past -t fails with 124"

run -- sh -c 'echo o >/proc/sysrq-trigger; sleep 5'
[ "$rc" != 0 ] && grep -q 'no result' "$out"
ok $? "a guest that powers off without a result fails"

# scripts/vmsuite.sh, one kernel's suite of make check's pool.
slog=build/vm/.vmsuite-test.$$.log
suite() {
	scripts/vmsuite.sh "$slog" -- "$@" </dev/null >"$out" 2>&1
	rc=$?
}

suite -- sh -c 'echo "ok 1 fine"; echo "# ==== p: exit 0, 1 ms"'
[ "$rc" = 0 ] && grep -qx 'ok 1 fine' "$slog" &&
	grep -q '^\[6\.1\..*\] # ==== p: exit 0' "$out" &&
	grep -q '^\[6\.1\..*\] PASS in' "$out" && ! grep -q 'ok 1 fine' "$out"
ok $? "vmsuite: a passing suite: status 0, its log whole, only its progress shown"

suite -- sh -c 'echo "ok 1 fine"; echo "not ok 2 broken"; exit 5'
[ "$rc" = 5 ] && grep -q '^\[6\.1\..*\] | ok 1 fine$' "$out" &&
	[ "$(tail -n 2 "$out" | head -n 1 | sed 's/^\[[^]]*\] //')" = "not ok 2 broken" ] &&
	tail -n 1 "$out" | grep -q 'FAIL (status 5)'
ok $? "vmsuite: a failing suite: its status, its whole log, its failures last"
rm -f "$slog"

echo "# $((n - failed)) passed, $failed failed"
[ "$failed" = 0 ]
