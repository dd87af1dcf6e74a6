#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run a command as root in a QEMU (TCG) guest booting one of Debian's kernels,
# with the host's whole userspace visible read-only and the project tree
# writable at the same path, in the style of the BPF selftests' vmtest.sh.
#
#   scripts/vmtest.sh [--kernel VERSION] [-b] [-s] [-t SECS] [-m MEM]
#                     [--share DIR]... [--prepare] -- CMD [ARGS...]
#
#   --kernel VERSION  guest kernel (default 6.1.0-57-amd64); any kernel with
#                     /boot/vmlinuz-VERSION and /lib/modules/VERSION, here
#                     or under $AMD64_ROOT (default /var/cache/steptime/
#                     amd64/root: scripts/deps.sh demo unpacks it there); an
#                     arm64 one (VERSION ending in -arm64) boots in
#                     qemu-system-aarch64 from $ARM64_ROOT (scripts/deps.sh
#                     arm64), which is also the guest's root: run the
#                     arm64 build there (O=build/arm64, make arm64)
#   -b                first build the project (make targets: npusim.ko for
#                     every kernel, the BPF object, the tests)
#   -s                debug shell in the guest after CMD (or instead of it),
#                     interactive on this terminal; ^D powers off
#   -t SECS           time limit of the whole run (default 600; none with -s)
#   -m MEM            guest memory (default 2G)
#   --share DIR       one more host folder shared writable at the same path
#   --prepare         only build the cached vmlinux and initramfs, print the
#                     vmlinux path (the BTF base for out-of-tree modules)
#
# The exit status is CMD's. A kernel panic, a hang past the time limit or a
# run that leaves no result fails (status 1, 124 for the timeout) and prints
# the tail of the serial log. CMD's stdout and stderr reach this stdout live
# (through the guest's second serial port); the kernel console goes to the
# log. In the guest: cwd is the caller's, HOME=/root, bpffs, tracefs and
# debugfs are mounted, /tmp /run /var/tmp /root are tmpfs (a cwd under
# them is shared writable, like the project tree). Environment
# variables named in VMTEST_ENV (plus O, V, TERM) are passed to CMD.
# VMTEST_LOCK: a file the run holds with flock(1) from boot to power-off
# (on a machine whose VM runs take turns), after building its cache.
#
# Cached per kernel under $O/vm/VERSION (O defaults to build/): the vmlinux
# extracted from the bzImage (booted via PVH: no decompressor, about 3 s
# saved under TCG) and the initramfs; rebuilt only when an input changes.
# arm64 (TCG, -M virt -cpu cortex-a57): Debian's vmlinuz is the
# uncompressed Image, booted as is; the console is the PL011 (ttyAMA0),
# the command's output a virtio console (hvc0), and the status comes back
# through the run directory only (no isa-debug-exit there).
set -euo pipefail

proj=$(cd "$(dirname "$0")/.." && pwd)
kver=6.1.0-57-amd64
shell=0
build=0
tmo=
mem=2G
prepare=0
shares=()

usage() {
	sed -n '7,20s/^# \{0,1\}//p' "$0" >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case "$1" in
	--kernel)	kver=${2:?}; shift 2 ;;
	--kernel=*)	kver=${1#*=}; shift ;;
	-b)		build=1; shift ;;
	-s)		shell=1; shift ;;
	-t)		tmo=${2:?}; shift 2 ;;
	-m)		mem=${2:?}; shift 2 ;;
	--share)	shares+=("$(cd "${2:?}" && pwd)"); shift 2 ;;
	--prepare)	prepare=1; shift ;;
	--)		shift; break ;;
	-h|--help)	usage ;;
	*)		break ;;
	esac
done
[ $# -gt 0 ] || [ $shell = 1 ] || [ $prepare = 1 ] || usage
[ -n "$tmo" ] || { [ $shell = 1 ] && tmo=0 || tmo=600; }
if [ $build = 1 ]; then
	make -C "$proj" --no-print-directory -s targets || exit 1
fi

out=${O:-build}
case "$out" in /*) ;; *) out=$proj/$out ;; esac
cache=$out/vm/$kver
mkdir -p "$cache"
arch=x86_64 sysroot=
case "$kver" in *-arm64)
	arch=arm64
	sysroot=${ARM64_ROOT:-/var/cache/steptime/arm64/root}
	[ -d "$sysroot/lib/modules/$kver" ] || {
		echo "vmtest: no arm64 kernel $kver in $sysroot (scripts/deps.sh arm64)" >&2
		exit 1; }
esac

# Rebuild $1 with the rest of the command line when an input ($inputs) is
# newer or it is missing.
inputs=()
stale() {
	local f
	[ -s "$1" ] || return 0
	for f in "${inputs[@]}"; do
		[ "$f" -nt "$1" ] && return 0
	done
	return 1
}

prepare_cache_arm64() {
	inputs=("$proj/scripts/vm/init" "$proj/scripts/vm/mkinitramfs.sh"
		"$sysroot/bin/busybox" "$sysroot/lib/modules/$kver/modules.dep")
	if stale "$cache/initramfs.cpio.gz"; then
		echo "vmtest: building the initramfs for $kver" >&2
		"$proj/scripts/vm/mkinitramfs.sh" --root "$sysroot" "$kver" \
			"$cache/initramfs.cpio.gz"
	fi
}

prepare_cache() {
	[ $arch = x86_64 ] || { prepare_cache_arm64; return; }
	# Installed, or unpacked by scripts/deps.sh demo.
	local kroot=
	if [ ! -r "/boot/vmlinuz-$kver" ]; then
		kroot=${AMD64_ROOT:-/var/cache/steptime/amd64/root}
		[ -r "$kroot/boot/vmlinuz-$kver" ] || {
			echo "vmtest: no kernel /boot/vmlinuz-$kver (nor in $kroot)" >&2
			exit 1; }
	fi
	inputs=("$kroot/boot/vmlinuz-$kver" "$proj/scripts/vm/extract-vmlinux.sh")
	if stale "$cache/vmlinux"; then
		echo "vmtest: extracting vmlinux for $kver" >&2
		"$proj/scripts/vm/extract-vmlinux.sh" ${kroot:+--root "$kroot"} \
			"$kver" "$cache/vmlinux"
	fi
	inputs=("$proj/scripts/vm/init" "$proj/scripts/vm/mkinitramfs.sh"
		/bin/busybox "$kroot/lib/modules/$kver/modules.dep")
	if stale "$cache/initramfs.cpio.gz"; then
		echo "vmtest: building the initramfs for $kver" >&2
		"$proj/scripts/vm/mkinitramfs.sh" ${kroot:+--modules "$kroot"} \
			"$kver" "$cache/initramfs.cpio.gz"
	fi
}

# Concurrent runs (several developers, make -j) share the cache.
exec 9>"$cache/.lock"
flock 9
prepare_cache
flock -u 9
exec 9>&-
if [ $prepare = 1 ]; then
	[ $arch = x86_64 ] && echo "$cache/vmlinux" || echo "$sysroot/boot/vmlinuz-$kver"
	exit 0
fi

# The run directory must be visible in the guest: it lives in a writable
# share (the project tree, or $O when that is elsewhere).
case "$out/" in "$proj"/*) ;; *) shares+=("$out") ;; esac
# So must the cwd, which the guest's tmpfs mounts would hide.
case "$PWD/" in
"$proj"/*) ;;
/tmp/*|/run/*|/var/tmp/*|/root/*) shares+=("$PWD") ;;
esac
rw=("$proj" "${shares[@]}")
for d in "${rw[@]}"; do
	case "$d" in *[[:space:],]*)
		echo "vmtest: cannot share a path with spaces or commas: $d" >&2
		exit 2 ;;
	esac
done
run=$(mktemp -d "$out/vm/run.XXXXXX")
case "$run$PWD" in *[[:space:]]*)
	echo "vmtest: paths with spaces are not supported" >&2; exit 2 ;;
esac

echo "$PWD" >"$run/cwd"
if [ $# -gt 0 ]; then
	{
		printf 'cd %q || exit 126\n' "$PWD"
		for v in O V TERM ${VMTEST_ENV:-}; do
			[ -n "${!v+set}" ] && printf 'export %s=%q\n' "$v" "${!v}"
		done
		printf 'exec'
		printf ' %q' "$@"
		printf '\n'
	} >"$run/cmd"
fi

fsdevs=(-fsdev "local,id=hostroot,path=${sysroot:-/},security_model=none,readonly=on,multidevs=remap"
	-device "virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot")
i=0
for d in "${rw[@]}"; do
	fsdevs+=(-fsdev "local,id=rw$i,path=$d,security_model=none,multidevs=remap"
		 -device "virtio-9p-pci,fsdev=rw$i,mount_tag=rw$i")
	i=$((i + 1))
done

# ttyS0: kernel console, to the log. ttyS1: CMD's output (and the debug
# shell), on our stdout; with no -s, QEMU gets no stdin, so it never touches
# the terminal's modes and works without a tty. (arm64: ttyAMA0, hvc0.)
serial=(-chardev "file,id=con,path=$run/serial.log" -serial chardev:con)
outdev=(-serial chardev:out)
[ $arch = x86_64 ] || outdev=(-device virtio-serial-pci -device virtconsole,chardev=out)
if [ $shell = 1 ]; then
	serial+=(-chardev stdio,id=out,signal=off "${outdev[@]}")
else
	serial+=(-chardev stdio,id=out "${outdev[@]}")
fi

# Under TCG with two vCPUs the kernel finds the TSCs "unsynchronized" and
# falls back to the HPET: every clock read then traps to QEMU (about 1 us
# instead of 70 ns). QEMU derives both vCPUs' TSC from one host clock, so
# they are in fact synchronized: say so.
append="console=ttyS0 panic=-1 oops=panic mitigations=off tsc=reliable"
[ $arch = x86_64 ] ||
	append="console=ttyAMA0 panic=-1 oops=panic vmtest.log=ttyAMA0 vmtest.out=hvc0 vmtest.overlay=1"
# vmtest.accel=tcg: the guest's tests tell TCG's known artefacts by it
# (selftests/run_vm.sh, kernel_reports()).
append+=" vmtest.accel=tcg vmtest.proj=$(IFS=,; echo "${rw[*]}") vmtest.run=$run vmtest.shell=$shell"

# One TCG thread for both vCPUs: with multi-threaded TCG the kernel's live
# text patching (static keys flipped by every tracepoint attach/detach) can
# leave a vCPU executing a stale int3 ("Oops: int3" at a jump label, seen
# on 6.12); the guest still has two CPUs, interleaved.
qemu=(qemu-system-x86_64 -M pc -accel tcg,thread=single -cpu max -smp 2 -m "$mem"
	-nodefaults -no-user-config -display none -vga none -nic none -no-reboot
	-kernel "$cache/vmlinux" -initrd "$cache/initramfs.cpio.gz"
	-append "$append"
	-device isa-debug-exit,iobase=0xf4,iosize=0x04
	"${fsdevs[@]}" "${serial[@]}" ${VMTEST_QEMU_OPTS:-})
# arm64: the Image boots directly; cortex-a57 rather than max, whose
# pointer authentication costs dearly under TCG.
[ $arch = x86_64 ] ||
	qemu=(qemu-system-aarch64 -M virt -accel tcg,thread=single -cpu cortex-a57
	      -smp 2 -m "$mem" -nodefaults -no-user-config -display none -nic none
	      -no-reboot -kernel "$sysroot/boot/vmlinuz-$kver"
	      -initrd "$cache/initramfs.cpio.gz" -append "$append"
	      "${fsdevs[@]}" "${serial[@]}" ${VMTEST_QEMU_OPTS:-})

cleanup() { [ -n "${qpid:-}" ] && kill "$qpid" 2>/dev/null; true; }
trap cleanup EXIT
trap 'exit 130' INT TERM

# Waiting is said (and timed by scripts/fresh-demo.sh): a run that
# waits for others is no slower itself.
if [ -n "${VMTEST_LOCK:-}" ]; then
	exec 8>>"$VMTEST_LOCK"
	if ! flock -n 8; then
		echo "vmtest: waiting for $VMTEST_LOCK" >&2
		flock 8
		echo "vmtest: got $VMTEST_LOCK" >&2
	fi
fi
qrc=0
if [ $shell = 1 ]; then
	"${qemu[@]}" || qrc=$?
elif [ "$tmo" -gt 0 ]; then
	timeout -k 5 "$tmo" "${qemu[@]}" </dev/null &
	qpid=$!
	wait $qpid || qrc=$?
	qpid=
else
	"${qemu[@]}" </dev/null || qrc=$?
fi

fail() {
	echo "vmtest: $* (kernel $kver); serial log $run/serial.log:" >&2
	tail -n 60 "$run/serial.log" >&2 || true
	exit "${rc:-1}"
}

if [ $qrc = 124 ] || [ $qrc = 137 ]; then
	rc=124 fail "timed out after ${tmo}s"
fi
if grep -q -e 'Kernel panic' -e 'end Kernel panic' "$run/serial.log" 2>/dev/null; then
	fail "kernel panic"
fi
[ -s "$run/status" ] || fail "no result (QEMU exited with $qrc)"
rc=$(cat "$run/status")
[ "${VMTEST_KEEP:-0}" = 1 ] || rm -rf "$run"
exit "$rc"
