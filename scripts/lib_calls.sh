#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Who calls whom in libsteptime: for each object of lib/ (built in
# $O/obj/lib), the library's own names it uses (st_*, steptime*) and the
# object that defines them, one line a pair of objects:
#	step -> stream: st_stream_collect st_stream_resolve st_stream_submit
# Exit 1 when the objects call in a circle (tsort names it on stderr).
# Usage: O=build scripts/lib_calls.sh
set -eu
dir=${O:-build}/obj/lib
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for o in "$dir"/*.o; do
	nm -g --defined-only "$o" |
		awk -v f="$(basename "$o" .o)" '$3 ~ /^(st_|steptime)/ { print $3, f }'
done | sort > "$tmp/defs"
for o in "$dir"/*.o; do
	f=$(basename "$o" .o)
	nm -u "$o" | awk '$2 ~ /^(st_|steptime)/ { print $2 }' | sort |
		join - "$tmp/defs" |
		awk -v f="$f" '$2 != f { e[$2] = e[$2] " " $1 }
			END { for (t in e) print f " -> " t ":" e[t] }'
done | sort > "$tmp/edges"
cat "$tmp/edges"
sed 's/ -> / /; s/:.*//' "$tmp/edges" | tsort > /dev/null
