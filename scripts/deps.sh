#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install what steptime needs, from Debian's packages only, by purpose.
# Idempotent: when everything is already there it only runs dpkg-query.
#
#   scripts/deps.sh [build|demo|check|arm64|vm|all]     (default: build)
#
#   build   the library, the CLI, the BPF object, the examples (`make`)
#   demo    build + the VM of `make demo`: qemu, Debian's 6.1 kernel
#           (unpacked, see below) and its headers (npusim.ko), pahole,
#           CMake (CANN's sample)
#   check   everything `make check` uses: demo + the kselftest harness
#           (linux-source-6.1), the 6.1 and 6.12 kernels installed,
#           prometheus, tmux, torch, man, podman, arm64
#   arm64   the aarch64 cross build (`make arm64`) and its guests
#   vm      the x86_64 VM tests' packages (demo + 6.12); all: check
#
# As a user, it names what is missing for which purpose and exits 1.
#
# openEuler (and other dnf hosts; this script is apt-only): the build's
# packages are
#   dnf install make gcc clang libbpf-devel elfutils-libelf-devel \
#       zlib-devel pkgconf-pkg-config bpftool python3
# with glibc-static, libbpf-static, elfutils-libelf-devel-static and
# zlib-static for build/steptime-static (the image), rpm-build for
# `make rpm`, and kernel-devel and dwarves for npusim.ko.
#
# demo: the guest kernel (linux-image-amd64's, the one vmtest.sh boots) is
# unpacked with dpkg -x into $STEPTIME_AMD64_ROOT (default
# /var/cache/steptime/amd64/root), unless it is installed: installing a
# kernel builds its initramfs twice (the kernel's hook, then
# initramfs-tools' trigger), minutes on a fresh machine, and makes it the
# machine's default boot entry; the VM needs its image and modules only.
#
# arm64: the cross compiler and qemu-system-aarch64 are installed as usual;
# Debian's arm64 kernels, their headers and the static libraries the arm64
# build links are arm64 packages, unpacked with dpkg -x into
# $STEPTIME_ARM64_ROOT (default /var/cache/steptime/arm64/root), never
# installed: installing arm64 -dev packages would replace the amd64 ones.
set -euo pipefail

# clang alone compiles the BPF object (its BPF back end is in libllvm).
build_pkgs=(make gcc clang libbpf-dev libelf-dev zlib1g-dev pkg-config
	    bpftool python3)
# scripts/demo.sh boots vmtest.sh's default kernel (6.1) with npusim.ko
# built against its headers (6.1's module BTF by pahole, from the xz
# vmlinux: bookworm's pahole adds the .BTF section with llvm-objcopy, of
# llvm), and builds CANN's sample with CMake.
demo_pkgs=(qemu-system-x86 busybox-static cpio zstd kmod xz-utils dwarves
	   llvm linux-headers-amd64 cmake g++)
kernel612_pkgs=(linux-image-6.12-amd64 linux-headers-6.12-amd64)
# The tests beyond the demo: kselftest harness and checkpatch (linux-source),
# the observe suite (prometheus, tmux), torch, man page rendering, the
# Python package's install in a venv and its C extension (python3-dev), the
# sidecar's Docker command (Podman behind `docker`, with runc, the runtime
# the test configures), deploy/'s
# files (python3-yaml; the DaemonSet's pod under `podman kube play`, whose
# infra image podman builds from catatonit), `make rpm` (rpmbuild), the
# exporter's page rendered headless (chromium: about 80 MB to fetch).
check_pkgs=(linux-image-amd64 linux-source-6.1 prometheus tmux python3-torch man-db
	    python3-venv python3-pip python3-setuptools python3-wheel python3-dev
	    podman podman-docker runc catatonit python3-yaml rpm chromium)
arm64_pkgs=(qemu-system-arm gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
# Unpacked, not installed (metapackages are resolved to what they name).
arm64_debs=(linux-image-arm64 linux-headers-arm64
	    linux-image-6.12-arm64 linux-headers-6.12-arm64
	    libbpf-dev libelf-dev zlib1g-dev busybox-static bash-static
	    libc6 libbpf1 libelf1 zlib1g)
arm64_root=${STEPTIME_ARM64_ROOT:-/var/cache/steptime/arm64/root}
amd64_root=${STEPTIME_AMD64_ROOT:-/var/cache/steptime/amd64/root}

# The demo's guest kernel: linux-image-amd64's version, installed or
# unpacked (with the modules.dep its postinst would have made).
kernel_pkg() {
	{ apt-cache depends linux-image-amd64 2>/dev/null || true; } |
		awk '$1 == "Depends:" && $2 ~ /^linux-image-/ { print $2; exit }'
}
kernel_there() {	# VERSION
	local r
	for r in "" "$amd64_root"; do
		[ -r "$r/boot/vmlinuz-$1" ] && [ -s "$r/lib/modules/$1/modules.dep" ] &&
			return 0
	done
	return 1
}
kernel_unpack() {	# PACKAGE VERSION
	local debs=$amd64_root/../debs deb

	mkdir -p "$amd64_root" "$debs"
	(cd "$debs" && apt-get download -qq -o APT::Sandbox::User=root "$1") ||
		{ echo "deps: cannot download $1" >&2; exit 1; }
	deb=$(cd "$debs" && ls -1t "$1"_*.deb | head -n1)
	echo "deps: unpacking $deb into $amd64_root" >&2
	dpkg -x "$debs/$deb" "$amd64_root"
	depmod -b "$amd64_root" "$2"
	rm -f "$debs/$deb"
}

# The arm64 packages: each .deb unpacked once into $arm64_root (a list of
# the unpacked files is kept in $arm64_root/.debs).
arm64_unpack() {
	local want=() p dep deb debs=$arm64_root/../debs

	mkdir -p "$arm64_root" "$debs"
	touch "$arm64_root/.debs"
	if ! dpkg --print-foreign-architectures | grep -qx arm64; then
		dpkg --add-architecture arm64
		apt-get update -qq
	fi
	if ! apt-cache show linux-image-arm64:arm64 >/dev/null 2>&1; then
		apt-get update -qq
	fi
	for p in "${arm64_debs[@]}"; do
		case "$p" in
		linux-image-*arm64|linux-headers-*arm64)
			dep=$(apt-cache depends "$p:arm64" |
			      awk '$1 == "Depends:" && $2 ~ /^linux-(image|headers)-/ { sub(/:arm64$/, "", $2); print $2; exit }')
			[ -n "$dep" ] || { echo "deps: cannot resolve $p:arm64" >&2; exit 1; }
			want+=("$dep:arm64")
			case "$dep" in linux-headers-*)
				# The arch-independent half of the headers.
				want+=("$(apt-cache depends "$dep:arm64" |
					awk '$1 == "Depends:" { d = $2; gsub(/[<>]|:arm64/, "", d); if (d ~ /-common$/) { print d; exit } }')")
			esac ;;
		*)	want+=("$p:arm64") ;;
		esac
	done
	for p in "${want[@]}"; do
		deb=$(cd "$debs" && ls -1 "${p%%:*}"_*.deb 2>/dev/null | head -n1 || true)
		if [ -z "$deb" ]; then
			(cd "$debs" && apt-get download -qq "$p") ||
				{ echo "deps: cannot download $p" >&2; exit 1; }
			deb=$(cd "$debs" && ls -1 "${p%%:*}"_*.deb | head -n1)
		fi
		grep -qxF "$deb" "$arm64_root/.debs" && continue
		echo "deps: unpacking $deb into $arm64_root" >&2
		dpkg -x "$debs/$deb" "$arm64_root"
		echo "$deb" >>"$arm64_root/.debs"
	done
	touch "$arm64_root/.debs"	# newer than what it lists: make's stamp
	# kbuild's host programs are amd64's (installed with the amd64 headers
	# of the same versions): the arm64 headers' scripts/ links point there.
	for p in "$arm64_root"/usr/src/linux-headers-*-arm64/scripts; do
		[ -L "$p" ] || continue
		dep=$(readlink "$p")
		dep=${dep#../../lib/}
		dep=${dep%%/*}
		[ -e "$arm64_root/usr/lib/$dep" ] || ln -sfn "/usr/lib/$dep" "$arm64_root/usr/lib/$dep"
	done
	# What a package's postinst would have made: modules.dep (for the
	# guest's initramfs).
	for p in "$arm64_root"/lib/modules/*; do
		[ -s "$p/modules.dep" ] || depmod -b "$arm64_root" "${p##*/}"
	done
}

purpose=${1:-build}
# Each purpose: the groups it needs, in order.
case "$purpose" in
build)	groups=(build) ;;
demo)	groups=(build demo) ;;
vm)	groups=(build demo kernel612) ;;
arm64)	groups=(build demo kernel612 arm64) ;;	# kbuild's host tools: amd64 headers
check|all) groups=(build demo kernel612 check arm64) ;;
-h|--help) sed -n '3,/^set -e/p' "$0" | sed -e '/^set -e/d' -e 's/^# \{0,1\}//'; exit 0 ;;
*)	echo "usage: $0 [build|demo|check|arm64|vm|all] (--help: what each installs, and openEuler's)" >&2; exit 2 ;;
esac
arm64=0
case " ${groups[*]} " in *" arm64 "*)
	# none unpacked yet on a fresh machine: no list, not an error
	n=0
	[ ! -e "$arm64_root/.debs" ] || n=$(wc -l <"$arm64_root/.debs")
	[ "$n" -ge $((${#arm64_debs[@]} + 2)) ] || arm64=1
esac

missing=() why=()
for g in "${groups[@]}"; do
	declare -n list=${g}_pkgs
	m=()
	for p in "${list[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
			m+=("$p")
	done
	unset -n list
	[ ${#m[@]} -eq 0 ] && continue
	missing+=("${m[@]}")
	case $g in kernel612) g="the 6.12 guests" ;; esac
	why+=("for $g: ${m[*]}")
done
kpkg= kver= updated=0
case " ${groups[*]} " in *" demo "*)
	kpkg=$(kernel_pkg)
	# A fresh machine's apt may have no lists yet.
	if [ -z "$kpkg" ] && [ "$(id -u)" -eq 0 ]; then
		apt-get update -qq
		updated=1
		kpkg=$(kernel_pkg)
	fi
	[ -n "$kpkg" ] || { echo "deps: no linux-image-amd64 in apt's lists (apt-get update, as root)" >&2; exit 1; }
	kver=${kpkg#linux-image-}
	! kernel_there "$kver" || kpkg=
esac
[ ${#missing[@]} -eq 0 ] && [ $arm64 = 0 ] && [ -z "$kpkg" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	[ -z "$kpkg" ] || why+=("for demo: the guest kernel $kpkg to unpack")
	[ $arm64 = 0 ] || why+=("for arm64: Debian's arm64 kernels and libraries to unpack")
	{ echo "deps: missing packages ($purpose):"
	  printf '  %s\n' "${why[@]}"
	  echo "deps: run as root: $0 $purpose"; } >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
if [ ${#missing[@]} -gt 0 ]; then
	echo "deps: installing ${missing[*]}" >&2
	[ $updated = 1 ] || apt-get update -qq
	# dpkg's unsafe-io (as Debian's container images have it): no fsync
	# before each unpacked file's rename. Most of a fresh machine's
	# install of these packages (headers: thousands of small files) is
	# waiting for those syncs, not CPU (scripts/fresh-demo.sh). The risk
	# it takes: files of the packages being installed left empty by a
	# crash during the install (reinstall them).
	apt-get install -y -qq --no-install-recommends \
		-o Dpkg::Options::=--force-unsafe-io "${missing[@]}" >/dev/null
fi
# After the install: depmod is kmod's; and make check's packages install
# the kernel (linux-image-amd64), which then needs no copy.
[ -z "$kpkg" ] || kernel_there "$kver" || kernel_unpack "$kpkg" "$kver"
[ $arm64 = 0 ] || arm64_unpack
