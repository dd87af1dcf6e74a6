#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# One CLI grammar (steptime(8), DURATIONS and OLD SPELLINGS):
#   - a short option means one thing in every command: the -X|--long pairs
#     of every command's --help synopsis give each -X one --long, -o is
#     --format and --output takes a FILE;
#   - each old spelling still works, with one warning naming the new one:
#     with a good value it does what the new spelling does, with a bad one
#     the usage error names the new option;
#   - a bad duration (-1s, 5x, ms, past 2^64 ns...) is a usage error, exit
#     2, before anything is done: no file, no output.
# Needs no BPF: every command runs against a pin directory that does not
# exist, where parsing is all that happens before "not loaded" (exit 1).
# Prints TAP.
set -uo pipefail
cd "$(dirname "$(readlink -f "$0")")/../.." || exit 1
O=${O:-build}
ST=${STEPTIME_CLI:-$O/steptime}
T=$(mktemp -d)
trap 'rm -rf $T' EXIT
NO=$T/not_loaded
# shellcheck source=selftests/tap.sh
. selftests/tap.sh
# run NAME ARGS...: $NAME.out, $NAME.err, $NAME.rc
run() {
	local name=$1
	shift
	"$ST" "$@" >$T/$name.out 2>$T/$name.err </dev/null
	echo $? >$T/$name.rc
}
rc() { cat $T/$1.rc; }
warnings() { grep -c 'is deprecated, use' $T/$1.err; }

cmds="load unload status stat record trace top export doctor"
echo "TAP version 13"
echo "1..7"

# 1. One meaning per short option. The synopsis: the "usage:" line and the
# lines under it that go on with "[".
bad=
for c in $cmds; do
	"$ST" $c --help >$T/help.$c 2>&1 || bad="$bad $c:--help-failed"
	awk '/^usage:/ { on = 1; print; next } on && /^ +\[/ { print; next } { on = 0 }' \
		$T/help.$c >$T/syn.$c
	grep -oE -- '-[A-Za-z]\|--[a-z0-9-]+' $T/syn.$c | sed "s/^/$c /" >>$T/pairs
done
[ -s $T/pairs ] || bad="$bad no-short-option-in-any-synopsis"
# "-X --long" pairs: one --long per -X, over every command.
for s in $(awk '{ split($2, p, "|"); print p[1] }' $T/pairs | sort -u); do
	m=$(awk -v s="$s" '{ split($2, p, "|"); if (p[1] == s) print p[2] }' $T/pairs | sort -u)
	[ "$(echo "$m" | wc -l)" = 1 ] ||
		bad="$bad $s:$(awk -v s="$s" '{ split($2, p, "|"); if (p[1] == s) printf "%s=%s,", $1, p[2] }' $T/pairs)"
done
# Every short option a command takes (its getopt_long() string in tools/*.c;
# pin_args()'s are status's, then unload's) is in its synopsis, or an old
# spelling its --help names.
awk '
/^(static )?int [a-z_]+\(/ { f = $0; sub(/\(.*/, "", f); sub(/.* /, "", f); sub(/^cmd_/, "", f) }
/getopt_long\(/ {
	k = 0; line = $0
	while (match(line, /"[A-Za-z:]*"/)) {
		k++; str = substr(line, RSTART + 1, RLENGTH - 2); line = substr(line, RSTART + RLENGTH)
		c = f == "pin_args" ? (k == 1 ? "status" : "unload") : f
		gsub(/:/, "", str)
		for (i = 1; i <= length(str); i++) print c, substr(str, i, 1)
	}
}' tools/*.c | sort -u >$T/shorts
[ -s $T/shorts ] || bad="$bad no-getopt_long-string-in-tools"
while read -r c x; do
	[ "$x" = h ] && continue
	grep -q -- "-$x|" $T/syn.$c ||
		sed -n '/Old spelling/,$p' $T/help.$c | grep -qE -- "(^|[ (])-$x([ |,)]|\$)" ||
		bad="$bad $c:-$x-undocumented"
done <$T/shorts
# -o is the format, --output a file, wherever they are.
grep -q -- ' -o|--format$' $T/pairs || bad="$bad -o-is-not---format-anywhere"
grep -v -- ' -o|--format$' $T/pairs | grep -- ' -o|' && bad="$bad -o-other-than---format"
for c in $cmds; do
	o=$(grep -oE -- '--output [A-Za-z|]+' $T/syn.$c | head -1)
	[ -z "$o" ] || [ "$o" = "--output FILE" ] || bad="$bad $c:$o"
done
ok $([ -z "$bad" ]; echo $?) "one meaning per short option across every command's --help" "$bad"

# 2. The old spellings, with a good value: one warning naming the new
# spelling, and else what the new spelling does. "OLD ARGS|NEW ARGS|NEW NAME"
bad=
while IFS='|' read -r old new name; do
	[ -n "$old" ] || continue
	run old $old
	run new $new
	sed '/is deprecated, use/d' $T/old.err >$T/old.rest
	if [ "$(warnings old)" != 1 ] || ! grep -q -- "deprecated, use $name" $T/old.err; then
		bad="$bad [$old: $(head -c 300 $T/old.err)]"
	elif [ "$(warnings new)" != 0 ] || [ "$(rc old)" != "$(rc new)" ] ||
	     ! cmp -s $T/old.rest $T/new.err || ! cmp -s $T/old.out $T/new.out; then
		bad="$bad [$old: exit $(rc old), not as $new: exit $(rc new), $(head -c 300 $T/new.err)]"
	fi
done <<EOF
stat --pin $NO -n 3|stat --pin $NO --last 3|--last
stat --pin $NO --output json|stat --pin $NO -o json|-o|--format
doctor --pin $NO --output json|doctor --pin $NO --format json|-o|--format
record --pin $NO -o $T/rec|record --pin $NO --output $T/rec|--output FILE
top --pin $NO -d 0.2 -n 1|top --pin $NO --interval 200ms -n 1|--interval 0.2s
top --pin $NO --delay 1 -n 1|top --pin $NO --interval 1s -n 1|--interval 1s
top --pin $NO --frames 1|top --pin $NO --count 1|-n|--count
top --pin $NO --interval 0.5 -n 1|top --pin $NO --interval 500ms -n 1|--interval 0.5s
export --pin $NO --once -l 127.0.0.1:1|export --pin $NO --once --listen 127.0.0.1:1|--listen
export --pin $NO --once --interval 2|export --pin $NO --once --interval 2s|--interval 2s
record --pin $NO --duration 3|record --pin $NO --duration 3s|--duration 3s
status -p $NO|status --pin $NO|--pin
unload -p $NO|unload --pin $NO|--pin
load -p $NO --help|load --pin $NO --help|--pin
EOF
# trace -o FILE writes FILE, as --output FILE does.
run old trace --pin $NO -i /dev/null -o $T/t_old.json
run new trace --pin $NO -i /dev/null --output $T/t_new.json
{ [ "$(rc old)" = 0 ] && [ "$(warnings old)" = 1 ] &&
  grep -q -- 'use --output FILE' $T/old.err && cmp -s $T/t_old.json $T/t_new.json; } ||
	bad="$bad [trace -o: exit $(rc old), $(head -c 300 $T/old.err)]"
ok $([ -z "$bad" ]; echo $?) "old spellings work as the new ones, with one warning naming them" "$bad"

# 3. The old spellings, with a bad value: the error names the new option,
# so the old one is parsed as it.
bad=
while IFS='|' read -r args what; do
	[ -n "$args" ] || continue
	run old $args
	[ "$(rc old)" = 2 ] && grep -q -- "$what" $T/old.err ||
		bad="$bad [$args: exit $(rc old), $(head -c 300 $T/old.err)]"
done <<EOF
stat --pin $NO -n 0|--last: '0'
stat --pin $NO --output xml|--format: 'xml'
doctor --pin $NO --output xml|--format: 'xml'
top --pin $NO -d 5x|--interval: '5x'
top --pin $NO --frames 0|--count: '0'
EOF
ok $([ -z "$bad" ]; echo $?) "old spellings with a bad value: the usage error names the new option" "$bad"

# 4. Good durations, each unit: accepted, no warning (then "not loaded").
bad=
for d in 500ms 1.5s 2m 1h 60000000us 60000000000ns; do
	run good record --pin $NO --duration $d
	[ "$(rc good)" = 1 ] && [ "$(warnings good)" = 0 ] && grep -q 'not loaded' $T/good.err ||
		bad="$bad [--duration $d: exit $(rc good), $(head -c 300 $T/good.err)]"
done
ok $([ -z "$bad" ]; echo $?) "durations in ns, us, ms, s, m and h are taken" "$bad"

# 5. Bad durations: exit 2, the option named, nothing done (record makes no
# file; top and export print nothing).
bad=
for d in -1s 5x ms s 1..5s .s "" " 1s" "1s " 1S 1sec 0x10s 1e3ms inf nan \
	 18446744073709551616ns 18446744073709551615s 99999999999999999999h; do
	for c in "record --output $T/made --duration" "top -n 1 --interval" \
		 "export --once --interval" "top -n 1 -d"; do
		run bad ${c% *} --pin $NO "${c##* }" "$d"
		opt=${c##* }
		[ "$opt" = -d ] && opt=--interval
		if [ "$(rc bad)" != 2 ] || ! grep -q -- "^steptime [a-z]*: $opt: '$d' is not" $T/bad.err ||
		   ! grep -q "^Try 'steptime [a-z]* --help'.\$" $T/bad.err ||
		   [ -s $T/bad.out ] || [ -e $T/made ] || [ "$(warnings bad)" != 0 ]; then
			bad="$bad [$c '$d': exit $(rc bad), $(head -c 300 $T/bad.err)]"
			rm -f $T/made
		fi
	done
done
ok $([ -z "$bad" ]; echo $?) "bad durations: usage error (exit 2), nothing done" "$bad"

# 6. Out of an option's range: the range named, exit 2.
bad=
for a in "top -n 1 --interval 49ms|from 50ms to 1h" "top -n 1 --interval 61m|from 50ms to 1h" \
	 "export --once --interval 9ms|from 10ms to 1h" "record --duration 0s|from 1ms to"; do
	run range ${a%|*} --pin $NO
	[ "$(rc range)" = 2 ] && grep -q -- "${a#*|}" $T/range.err && [ ! -s $T/range.out ] ||
		bad="$bad [${a%|*}: exit $(rc range), $(head -c 300 $T/range.err)]"
done
ok $([ -z "$bad" ]; echo $?) "durations out of range: usage error naming the range" "$bad"

# 7. The process filter, the same in stat, trace, top and export: in each
# synopsis; good values parsed (then "not loaded"); a bad one a usage
# error naming the option, nothing printed.
bad=
for c in stat trace top export; do
	for o in "-p|--pid PID" "--rank N" "--job ID" "--device ID"; do
		grep -qF -- "[$o]" $T/syn.$c || bad="$bad [$c: no '[$o]' in its synopsis]"
	done
	case $c in top) x="-n 1" ;; export) x=--once ;; *) x= ;; esac
	for a in "-p 1" "--pid 7" "--rank 0" "--rank 12" "--job slurm-42.x" "--device 3" \
		 "--rank 1 --job j --device 0 -p 5"; do
		run good $c $x --pin $NO $a
		[ "$(rc good)" = 1 ] && grep -q 'not loaded' $T/good.err ||
			bad="$bad [$c $a: exit $(rc good), $(head -c 300 $T/good.err)]"
	done
	while IFS='|' read -r a says; do
		run badf $c $x --pin $NO $a
		[ "$(rc badf)" = 2 ] && grep -q -- "^steptime $c: $says" $T/badf.err &&
			[ ! -s $T/badf.out ] ||
			bad="$bad [$c $a: exit $(rc badf), $(head -c 300 $T/badf.err)]"
	done <<EOF2
-p 0|--pid: '0' is not
--pid x|--pid: 'x' is not
--rank -1|--rank: '-1' is not
--rank r1|--rank: 'r1' is not
--rank 2147483648|--rank: '2147483648' is not
--device 0x1|--device: '0x1' is not
--device=|--device: '' is not
--job=|--job: '' is not a job id
--job $(printf '%064d' 0)|--job: '$(printf '%064d' 0)' is not a job id
EOF2
done
# A record's processes may be gone: no labels to match with -i.
printf '' >$T/rec.json
run badi trace --pin $NO -i $T/rec.json --rank 0
[ "$(rc badi)" = 2 ] && grep -q -- '--rank, --job, --device: not with -i' $T/badi.err ||
	bad="$bad [trace -i --rank: exit $(rc badi), $(head -c 300 $T/badi.err)]"
ok $([ -z "$bad" ]; echo $?) "stat, trace, top, export: -p|--pid, --rank, --job, --device alike" "$bad"
exit $failed
