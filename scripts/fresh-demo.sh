#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Time `make demo` as a new user on a fresh Debian 12 machine runs it:
# a minimal Debian 12 root (mmdebstrap --variant=minbase, plus git and make,
# from this machine's Debian mirror), /proc /sys /dev bound in, a `git
# clone` of this checkout's HEAD (committed work only), then `make demo`
# in it, end to end: its apt installs (downloads included: the root starts
# with an empty apt cache), the build, the QEMU (TCG) boot and the demo.
#
#   scripts/fresh-demo.sh [--base-only] [--keep] [--dir DIR] [--doc FILE]
#                         [--vm-lock FILE] [--doc-only]
#
#   --base-only  only build the base root's tarball (DIR/base.tar), not timed
#                as part of the demo; reused by later runs (delete it to
#                start from the mirror's current packages)
#   --keep       leave the root (DIR/root) and its mounts after the run
#   --dir DIR    work directory (default /var/tmp/steptime-fresh): about
#                3 GB while it runs, the base tarball (about 300 MB) after
#   --doc FILE   replace the section between FILE's fresh-demo:begin and
#                fresh-demo:end markers with the result (when complete)
#   --doc-only   no run: write DIR/result.md, the last run's, into --doc's
#                FILE (when complete)
#   --vm-lock FILE  the VM boot waits for FILE's flock(1) (vmtest.sh's
#                VMTEST_LOCK, on a machine whose VM runs take turns); the
#                wait is timed and left out of the result
#
# Prints `make demo`'s output with the seconds since its start on each
# line, then the total and where the time went (apt: index update,
# download, unpack and configure; build; VM boot; demo), the machine's
# conditions (CPUs, load) and the largest packages downloaded; the same
# goes to DIR/result.md. Exits 1 when `make demo` fails or its output
# lacks the step table. As root (mmdebstrap, chroot, mounts).
set -euo pipefail

proj=$(cd "$(dirname "$0")/.." && pwd)
dir=/var/tmp/steptime-fresh
base_only=0 keep=0 doc= vm_lock= doc_only=0
while [ $# -gt 0 ]; do
	case "$1" in
	--base-only)	base_only=1; shift ;;
	--keep)		keep=1; shift ;;
	--dir)		dir=${2:?}; shift 2 ;;
	--doc)		doc=$(realpath "${2:?}"); shift 2 ;;
	--vm-lock)	vm_lock=$(realpath "${2:?}"); shift 2 ;;
	--doc-only)	doc_only=1; shift ;;
	-h|--help)	sed -n '9,25s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	*)		echo "fresh-demo: unknown argument $1 (--help)" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" -eq 0 ] || { echo "fresh-demo: run as root (chroot, mounts)" >&2; exit 1; }
command -v mmdebstrap >/dev/null ||
	{ echo "fresh-demo: needs mmdebstrap (apt-get install mmdebstrap)" >&2; exit 1; }
mkdir -p "$dir"
dir=$(realpath "$dir")
base=$dir/base.tar
root=$dir/root
log=$dir/demo.log
res=$dir/result.md

# The result (DIR/result.md) between $doc's markers.
write_doc() {
	if ! grep -q '^<!-- fresh-demo:begin' "$doc" || ! grep -q '^<!-- fresh-demo:end' "$doc"; then
		echo "fresh-demo: $doc has no fresh-demo:begin/end markers: not updated" >&2
		return 1
	fi
	awk -v res="$res" '
		/^<!-- fresh-demo:begin/ { print; while ((getline l < res) > 0) print l; skip = 1; next }
		/^<!-- fresh-demo:end/ { skip = 0 }
		!skip' "$doc" >"$doc.tmp" && mv "$doc.tmp" "$doc"
}
if [ $doc_only = 1 ]; then
	[ -n "$doc" ] || { echo "fresh-demo: --doc-only wants --doc FILE" >&2; exit 2; }
	grep -q '(complete: ' "$res" 2>/dev/null ||
		{ echo "fresh-demo: no complete result in $res" >&2; exit 1; }
	write_doc
	exit
fi

# Debian's sources of this machine (deb822 or one-line), none of the others.
sources=()
for f in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list; do
	[ -s "$f" ] && grep -q '^[^#]*debian' "$f" && sources+=("$f")
done
[ ${#sources[@]} -gt 0 ] || { echo "fresh-demo: no Debian apt sources here" >&2; exit 1; }

if [ ! -s "$base" ]; then
	echo "fresh-demo: building the base root (minbase + git make) into $base" >&2
	t=$SECONDS
	mmdebstrap --quiet --variant=minbase --include=git,make,ca-certificates \
		bookworm "$dir/base.tmp.tar" "${sources[@]}"
	mv "$dir/base.tmp.tar" "$base"
	echo "fresh-demo: base root built in $((SECONDS - t)) s" >&2
fi
[ $base_only = 0 ] || exit 0

mounted() { findmnt -rn -o TARGET | grep -q "^$root\(/\|\$\)"; }
cleanup() {
	[ $keep = 1 ] && return
	umount -R "$root/run/vm.lock" "$root/dev" "$root/sys" "$root/proc" \
		2>/dev/null || true
	# Never remove through a mount (/dev).
	if mounted; then
		echo "fresh-demo: $root still has mounts: not removed" >&2
		return
	fi
	rm -rf --one-file-system "$root"
}
if [ -e "$root" ]; then
	mounted && { echo "fresh-demo: $root has mounts (a --keep run?): umount -R them" >&2; exit 1; }
	rm -rf --one-file-system "$root"
fi
mkdir -p "$root"
trap cleanup EXIT
tar --numeric-owner -xf "$base" -C "$root"
mount -t proc proc "$root/proc"
mount -t sysfs sys "$root/sys"
mount --rbind /dev "$root/dev"
mount --make-rslave "$root/dev"
lock_env=()
if [ -n "$vm_lock" ]; then
	touch "$vm_lock" "$root/run/vm.lock"
	mount --bind "$vm_lock" "$root/run/vm.lock"
	lock_env=(VMTEST_LOCK=/run/vm.lock)
fi

in_root() {
	chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
}
# Cloned from here: a worktree's .git names a directory the root lacks.
git clone -q "$proj" "$root/root/steptime"
commit=$(in_root git -C /root/steptime log -1 --format='%h %s')
dpkg_base=$(in_root dpkg-query -W -f '${Package}\n' | sort)

# Each line of make demo's output, with the seconds since its start.
stamp() {
	local l now
	while IFS= read -r l; do
		now=${EPOCHREALTIME/./}
		printf '%6d.%d %s\n' $(((now - t0) / 1000000)) \
			$(((now - t0) / 100000 % 10)) "$l"
	done
}
load0=$(cut -d' ' -f1-3 /proc/loadavg)
echo "fresh-demo: make demo in a fresh Debian 12 root ($commit)" >&2
t0=${EPOCHREALTIME/./}
start=${EPOCHREALTIME%.*}
set +e
in_root "${lock_env[@]}" /bin/bash -c 'cd /root/steptime && make demo' 2>&1 |
	stamp | tee "$log"
rc=${PIPESTATUS[0]}
set -e
t1=${EPOCHREALTIME/./}
load1=$(cut -d' ' -f1-3 /proc/loadavg)
total=$(((t1 - t0) / 100000))	# tenths of a second

# When a line matching $1 was printed (seconds since start, tenths), or "".
at() { awk -v re="$1" '$0 ~ re { print $1; exit }' "$log"; }
# A date of apt's or dpkg's logs (the root's local time: UTC) in seconds
# since the start.
since() { [ -n "$1" ] && echo $(($(date -u -d "$1" +%s) - start)) || true; }
hist=$root/var/log/apt/history.log
apt_start= apt_end=
if [ -s "$hist" ]; then
	apt_start=$(since "$(sed -n 's/^Start-Date: //p' "$hist" | head -n1)")
	apt_end=$(since "$(sed -n 's/^End-Date: //p' "$hist" | tail -n1)")
fi
# apt-get install starts downloading when deps.sh says what it installs
# (apt-get update is before); apt's history starts when dpkg does.
deps_at=$(at '^ *[0-9.]+ deps: installing')
# The guest kernel unpacked (scripts/deps.sh demo): done when its
# modules.dep was written.
kdone=
for f in "$root"/var/cache/steptime/amd64/root/lib/modules/*/modules.dep; do
	[ -e "$f" ] && kdone=$(($(stat -c %Y "$f") - start))
done
demo_at=$(at ' demo: this kernel|\[1m== insmod')
insmod_at=$(at '\[1m== insmod')
end=$(awk -v t=$total 'BEGIN { printf "%.1f", t / 10 }')
# (a run that never got the lock waited to its end)
wait_s=$(awk -v end="$end" '/ vmtest: waiting for / { a = $1; b = end }
	/ vmtest: got / { b = $1 } END { printf "%.1f", b - a }' "$log")
net=$(awk -v t=$end -v w=$wait_s 'BEGIN { printf "%.1f", t - w }')
# Seconds between two marks, "?" when one is missing.
# (less $3, a wait within).
span() {
	[ -n "$1" ] && [ -n "$2" ] &&
		awk -v a="$1" -v b="$2" -v w="${3:-0}" 'BEGIN { printf "%.0f", b - a - w }' ||
		echo "?"
}

# The packages make demo installed, largest download first.
pkgs=$(comm -13 <(echo "$dpkg_base") <(in_root dpkg-query -W -f '${Package}\n' | sort))
npkgs=$(echo "$pkgs" | grep -c . || true)
# (one apt-cache call: a chroot per package takes minutes)
sizes=$(in_root apt-cache show --no-all-versions $pkgs 2>/dev/null |
	awk '/^Package:/ { p = $2 } /^Size:/ { print $2, p }' | sort -rn)
dl_mb=$(echo "$sizes" | awk '{ s += $1 } END { printf "%.0f", s / 1e6 }')
inst_mb=$(in_root dpkg-query -W -f '${Installed-Size}\n' $pkgs |
	awk '{ s += $1 } END { printf "%.0f", s / 1024 }')

ok=1
[ "$rc" -eq 0 ] || ok=0
# The demo's result: the step table's rows (after each line's time: PID
# INDEX STREAM STATE HOST DEVICE TASKS ...), steps done with tasks.
table=$(awk '/\[1m== steptime stat +\(/ { on = 1; next } /\[1m== / { on = 0 } on' "$log")
steps=$(echo "$table" | awk '$2 ~ /^[0-9]+$/ && $5 == "done" && $8 > 0' | wc -l)
[ "$steps" -gt 0 ] || ok=0

{
	echo "\`make demo\` in a fresh Debian 12 root (\`scripts/fresh-demo.sh\`): $net s"
	echo "($([ $ok = 1 ] && echo "complete: $steps steps done with tasks in its step table" || echo "FAILED: status $rc, $steps steps with tasks")),"
	echo "commit $commit, $(date -u +%Y-%m-%d)."
	echo
	echo "| phase | s |"
	echo "| --- | --- |"
	echo "| \`scripts/deps.sh demo\`: what is missing, apt-get update | $(span 0 "$deps_at") |"
	echo "| apt: download $npkgs packages, $dl_mb MB | $(span "$deps_at" "$apt_start") |"
	echo "| apt: unpack and configure ($inst_mb MB installed) | $(span "$apt_start" "$apt_end") |"
	[ -z "$kdone" ] ||
		echo "| the guest kernel: download, unpack (dpkg -x), depmod | $(span "${apt_end:-0}" "$kdone") |"
	echo "| build (\`make targets\`) | $(span "${kdone:-${apt_end:-0}}" "$demo_at") |"
	echo "| VM: vmlinux, initramfs, boot to the first command | $(span "$demo_at" "$insmod_at" "$wait_s") |"
	echo "| the demo in the VM, to power-off | $(span "$insmod_at" "$end") |"
	[ "$wait_s" = 0.0 ] ||
		echo "| (left out: waiting for the VM lock) | $(span 0 "$wait_s") |"
	echo
	echo "Conditions: $(nproc) CPUs ($(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n1)),"
	echo "load average $load0 before, $load1 after; mirror $(awk '/^URIs:|^deb / { print ($1 == "deb" ? $2 : $2); exit }' "${sources[0]}");"
	echo "a minbase root with git and make (mmdebstrap), host kernel $(uname -r)."
	echo
	echo "Largest downloads (MB):"
	echo
	echo "$sizes" | head -n 10 | awk '{ printf "    %6.1f %s\n", $1 / 1e6, $2 }'
} >"$res"
echo
cat "$res"

[ -z "$doc" ] || [ $ok = 0 ] || write_doc
[ $ok = 1 ]
