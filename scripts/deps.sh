#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install what steptime needs, from Debian's packages only. Idempotent: when
# everything is already there it only runs dpkg-query and returns.
#
#   scripts/deps.sh [build|vm|all]     (default: all)
set -euo pipefail

build_pkgs=(make gcc clang llvm libbpf-dev libelf-dev zlib1g-dev pkg-config
	    bpftool dwarves python3 linux-source-6.1 xz-utils prometheus tmux)
vm_pkgs=(qemu-system-x86 busybox-static cpio zstd kmod
	 linux-image-amd64 linux-headers-amd64
	 linux-image-6.12-amd64 linux-headers-6.12-amd64)

case "${1:-all}" in
build)	want=("${build_pkgs[@]}") ;;
vm)	want=("${vm_pkgs[@]}") ;;
all)	want=("${build_pkgs[@]}" "${vm_pkgs[@]}") ;;
*)	echo "usage: $0 [build|vm|all]" >&2; exit 2 ;;
esac

missing=()
for p in "${want[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing packages: ${missing[*]}; run as root: $0" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
