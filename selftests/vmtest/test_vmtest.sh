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
echo "1..21"

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

suite -- sh -c 'echo "not ok 1 broken"; exit 1'
pkg=$(sed -n '1s/^\[[^]]*\] start: \(linux-image-[^=]*=[^,]*\), log .*/\1/p' "$out")
[ -n "$pkg" ] && [ "${pkg##*=}" != unknown ] &&
	tail -n 1 "$out" | grep -qF "FAIL (status 1) in" && tail -n 1 "$out" | grep -qF "on $pkg"
ok $? "vmsuite: the first and last lines name the kernel package ($pkg)"

VMSUITE_README=/dev/null suite -- sh -c 'echo "not ok 1 broken"; exit 1'
grep -q "note: $pkg is not a kernel make check was last green on" "$out"
ok $? "vmsuite: a failure on a kernel not listed as last green says so"
rm -f "$slog"

# selftests/run_vm.sh's verdicts, on stand-in programs beside the real
# npusim.ko (O=$fo): what it counts, and the kernel log it judges.
kver=$(sed -n 's/^kver=//p' "$vm" | head -n1)
fo=build/vm/.runvm-test.$$
mkdir -p "$fo/selftests/vm" "$fo/kmod"
ln -s "$PWD/${O:-build}/kmod/$kver" "$fo/kmod/$kver"
prog() {	# NAME BODY: a stand-in test program
	printf '#!/bin/sh\n%s\n' "$2" >"$fo/selftests/vm/$1"
	chmod +x "$fo/selftests/vm/$1"
}
runvm() {
	O=$fo run -- selftests/run_vm.sh "$@"
}
prog fake_fine 'echo "1..1"; echo "ok 1 fine"'
prog fake_allskip 'echo "1..1"; echo "ok 1 x # SKIP no reason at all"'
prog fake_wholeskip 'echo "1..0 # SKIP not on this kernel"; exit 4'
prog fake_none 'echo "1..0"'
if [ -f "$fo/kmod/$kver/npusim.ko" ]; then
	runvm 'fake_*'
	[ "$rc" = 1 ] &&
		grep -v '^vmtest:' "$out" | head -n 1 |
		grep -qE "^# kernel: linux-image-$kver=[^ ]+ \(x86_64\)$" &&
		grep -qx 'not ok - fake_allskip # every test skipped.*' "$out" &&
		grep -qx 'ok - fake_wholeskip # SKIP not on this kernel' "$out" &&
		grep -qx 'not ok - fake_none # no TAP results' "$out" &&
		tail -n 1 "$out" | grep -qE "^linux-image-$kver=[^ ]+: 4 passed, 2 failed, 2 skipped$"
	ok $? "run_vm: every test skipped fails, a declared whole-program skip counts, the kernel named first and last"

	# A known artefact's whole report (its signature, as the kernel
	# prints it), then anything else the kernel says.
	prog fake_tcgdb 'for l in "WARNING: CPU: 1 PID: 1485 at arch/x86/kernel/traps.c:1120 exc_debug_kernel+0xca/0x160" \
		"Call Trace:" " <#DB>" "---[ end trace 0000000000000000 ]---"; do echo "<4>$l" >/dev/kmsg; done
		echo "1..1"; echo "ok 1 fine"'
	runvm fake_tcgdb
	[ "$rc" = 0 ] && grep -q '^ok - kernel log free of warnings # but 1 known emulator artefact' "$out" &&
		grep -q 'known emulator artefacts .*tcg-kernel-single-step x1' "$out" &&
		grep -q '^# .*exc_debug_kernel' "$out"
	ok $? "run_vm: TCG's kernel single-step warning is printed and counted, not failed"

	prog fake_warn 'echo "<4>WARNING: CPU: 0 PID: 1 at mm/slub.c:1 kfree+0x1/0x2" >/dev/kmsg
		echo "<4>---[ end trace 0000000000000000 ]---" >/dev/kmsg; echo "1..1"; echo "ok 1 fine"'
	runvm fake_warn
	[ "$rc" = 1 ] && grep -q '^not ok - kernel log free of warnings' "$out"
	ok $? "run_vm: any other kernel warning fails"

	prog fake_both 'for l in "WARNING: CPU: 1 PID: 9 at arch/x86/kernel/traps.c:1120 exc_debug_kernel+0xca/0x160" \
		"---[ end trace 0000000000000000 ]---" "BUG: kernel NULL pointer dereference"; do echo "<4>$l" >/dev/kmsg; done
		echo "1..1"; echo "ok 1 fine"'
	runvm fake_both
	[ "$rc" = 1 ] && grep -q '^not ok - kernel log free of warnings' "$out"
	ok $? "run_vm: a known artefact does not hide a BUG beside it"
else
	for t in counts artefact warning both; do
		echo "ok $((n += 1)) # SKIP run_vm $t: no $fo/kmod/$kver/npusim.ko (make kmod)"
	done
fi
rm -rf "$fo"

# Issue 46: user-mode single-stepping (TF) and BPF loads, without steptime,
# leave the newest kernel's log clean: TF set in user space does not reach
# the kernel here.
tf=${O:-build}/selftests/vmtest/tf_step
if [ -n "$k612" ] && [ -x "$tf" ]; then
	run --kernel "$k612" -- sh -c "dmesg -C; $tf 20 2 && ! dmesg | grep -A30 -E 'WARNING:|BUG:'"
	[ "$rc" = 0 ] && grep -qE '^tf_step: [1-9][0-9]* single steps' "$out"
	ok $? "$(sed -n 's/^\(tf_step: .*\)/\1/p' "$out"), kernel $k612 log clean"
else
	echo "ok $((n += 1)) # SKIP no 6.12 kernel or no $tf"
fi

echo "# $((n - failed)) passed, $failed failed"
[ "$failed" = 0 ]
