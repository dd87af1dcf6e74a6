#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make install` and `make uninstall`, one step at a time, keeping a
# manifest of every file install wrote and every directory it made, so that
# uninstall removes exactly those (and nothing that was there before).
#
#   scripts/install.sh MANIFEST dir DIR...            make DIR (and parents)
#   scripts/install.sh MANIFEST file MODE SRC... DIR  install SRC into DIR
#   scripts/install.sh MANIFEST as MODE SRC PATH      install SRC as PATH
#   scripts/install.sh MANIFEST link TARGET PATH      PATH -> TARGET
#   scripts/install.sh MANIFEST ldconfig LIBDIR       refresh the loader's cache
#   scripts/install.sh MANIFEST uninstall             remove what it lists
#
# Paths are the installed ones ($DESTDIR is prepended, not recorded);
# MANIFEST too (it lists itself). A second install over the first keeps
# the first's directories: they are still install's to remove.
set -euo pipefail

manifest=${1:?manifest}
cmd=${2:?command}
shift 2
D=${DESTDIR:-}

record() {	# kind path
	grep -qxF "$1 $2" "$D$manifest" 2>/dev/null || echo "$1 $2" >>"$D$manifest"
}

make_dirs() {
	local d p made=()

	# The manifest's own directory is one of install's.
	set -- "$@" "$(dirname "$manifest")"
	for d in "$@"; do
		p=$d
		# The missing components, deepest first.
		while [ "$p" != / ] && [ "$p" != . ] && [ ! -d "$D$p" ]; do
			made+=("$p")
			p=$(dirname "$p")
		done
	done
	for d in "$@"; do
		install -d "$D$d"
	done
	for d in ${made[@]+"${made[@]}"}; do
		record d "$d"
	done
	record f "$manifest"
}

case $cmd in
dir)
	make_dirs "$@"
	;;
file)
	mode=$1
	shift
	dir=${*: -1}
	make_dirs "$dir"
	for f in "${@:1:$#-1}"; do
		install -m "$mode" "$f" "$D$dir/"
		record f "$dir/$(basename "$f")"
	done
	;;
as)
	make_dirs "$(dirname "$3")"
	install -m "$1" "$2" "$D$3"
	record f "$3"
	;;
link)
	make_dirs "$(dirname "$2")"
	ln -sfn "$1" "$D$2"
	record f "$2"
	;;
ldconfig)
	# Only for the system's own loader: not staged, as root.
	ldc=$(command -v ldconfig || echo /sbin/ldconfig)
	if [ -z "$D" ] && [ "$(id -u)" = 0 ]; then
		"$ldc"
	elif [ -z "$D" ] && ! "$ldc" -p 2>/dev/null |
			grep -q " => $1/libsteptime.so.1\$"; then
		echo "install: $1 is not in the loader's cache: run ldconfig as root, or" \
		     "run programs with LD_LIBRARY_PATH=$1 (or link them with -Wl,-rpath,$1)" >&2
	fi
	;;
uninstall)
	[ -f "$D$manifest" ] || {
		echo "uninstall: no $D$manifest: nothing installed there" >&2
		exit 1
	}
	dirs=$(sed -n 's/^d //p' "$D$manifest" | sort -r)
	while read -r kind p; do
		[ "$kind" = f ] || continue
		rm -f "$D$p"
		# What python3 compiled from an installed module.
		case $p in *.py)
			b=$(basename "$p" .py)
			rm -f "$(dirname "$D$p")/__pycache__/$b".*.pyc
			rmdir "$(dirname "$D$p")/__pycache__" 2>/dev/null || true
		esac
	done <"$D$manifest"
	for p in $dirs; do
		rmdir "$D$p" 2>/dev/null ||
			echo "uninstall: $D$p is not empty: left in place" >&2
	done
	[ -n "$D" ] || [ "$(id -u)" != 0 ] || "$(command -v ldconfig || echo /sbin/ldconfig)"
	;;
*)
	echo "install.sh: unknown command $cmd" >&2
	exit 2
	;;
esac
