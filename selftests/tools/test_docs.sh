#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The docs match the code:
#   - every long option a command parses (the struct option tables of
#     tools/*.c) is in that command's --help and in steptime(8), in the
#     command's section, among the options every command takes or, for
#     an old spelling, under OLD SPELLINGS;
#   - every function libsteptime exports (lib/libsteptime.map) is in
#     libsteptime(3).
# Prints TAP; one test per command, one for the library.
set -uo pipefail
cd "$(dirname "$(readlink -f "$0")")/../.." || exit 1
O=${O:-build}
ST=${STEPTIME_CLI:-$O/steptime}
T=$(mktemp -d)
trap 'rm -rf $T' EXIT
# shellcheck source=selftests/tap.sh
. selftests/tap.sh

# "CMD OPTION" per line: the options of the function each table is in
# (cmd_NAME; pin_arg() is unload's and status's).
awk '
/^int cmd_[a-z]+\(/ { f = $2; sub(/^cmd_/, "", f); sub(/\(.*/, "", f) }
/struct option [a-z_]+\[\] = \{/ { in_tab = 1; next }
in_tab && /^\t*\{\}/ { in_tab = 0 }
in_tab && match($0, /\{ *"[a-z0-9-]+"/) {
	o = substr($0, RSTART, RLENGTH); sub(/^\{ *"/, "", o); sub(/"$/, "", o)
	k = split(f, c, " ")
	for (i = 1; i <= k; i++) print c[i], o
}' tools/*.c | sort -u >$T/opts
# steptime(8) as text: \- is -; the common part is COMMANDS up to the
# first command's section.
sed 's/\\-/-/g' man/steptime.8 >$T/man
awk '/^\.SH COMMANDS/ { on = 1; next } on && /^\.S[SH]/ { exit } on' $T/man >$T/common
awk '/^\.SH/ { on = ($2 == "OLD") } on' $T/man >>$T/common

cmds=$(cut -d' ' -f1 $T/opts | sort -u)
echo "TAP version 13"
echo "1..$(($(echo "$cmds" | wc -w) + 1))"
[ -s $T/opts ] || { echo "Bail out! no option table found in tools/*.c"; exit 1; }
for c in $cmds; do
	bad=
	"$ST" "$c" --help >$T/help 2>&1 || bad="$bad (--help failed)"
	awk -v c="$c" '/^\.S[SH]/ { on = ($1 == ".SS" && $2 == c) } on' $T/man >$T/sect
	for o in $(awk -v c="$c" '$1 == c { print $2 }' $T/opts); do
		# --help: what printed it
		[ "$o" = help ] || grep -qE -- "--$o([^a-z0-9-]|\$)" $T/help ||
			bad="$bad --$o:help"
		grep -qE -- "--$o([^a-z0-9-]|\$)" $T/sect $T/common ||
			bad="$bad --$o:man"
	done
	[ -z "$bad" ] || echo "# steptime $c, missing:$bad"
	ok $([ -z "$bad" ]; echo $?) "steptime $c: every option in --help and steptime(8)"
done

bad=
for s in $(sed -n 's/^\t\t\([A-Za-z_0-9]*\);$/\1/p' lib/libsteptime.map); do
	grep -qE "(^|[^A-Za-z_0-9])$s([^A-Za-z_0-9]|\$)" man/libsteptime.3 || bad="$bad $s"
done
[ -z "$bad" ] || echo "# not in libsteptime(3):$bad"
ok $([ -z "$bad" ]; echo $?) "every function of libsteptime.map in libsteptime(3)"
exit $failed
