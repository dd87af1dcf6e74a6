#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Mutation check: each known-bad edit of selftests/mutate/mutations, made
# in a scratch copy of this tree, must fail the test that names the
# behaviour it breaks, a test that passes on the same copy unmutated. It
# guards against the next check that cannot fail.
#
#   mutate.sh [--all] [NAME...]
#
# Host mutations only (make check-host, make check), or every one with
# --all (make mutate: the VM ones boot a guest, under VMTEST_LOCK). NAME
# picks mutations by name. MUTATE_LIST: another list (the runner's own
# check, below). O: the build to seed the copy with (build).
# MUTATE_BASELINE=0: no unmutated run of the tests (one guest boot, not two,
# for a VM test the suite has just run unmutated).
#
# The copy: the tree's files as they are (tracked and untracked, not
# ignored), mtimes kept, and a copy of $O as build/, so that make rebuilds
# only what an edit touches. Symlinks into this tree are pointed into the
# copy; programs whose run path names this tree's build are removed (they
# would load this tree's libraries), to be rebuilt by a mutation's make.
# Loads pin under a directory of this run's (the loader test's PIN_DIR and
# MNT_PIN), not the one another run of the loader suite uses.
#
# Prints TAP, a line per mutation: "ok N mutation NAME: TEST fails" when
# the test passed unmutated and failed mutated (its output matching the
# mutation's expect); "not ok" when the edit changed nothing (the source
# moved), a build failed, the test failed unmutated, or it still passed.
# Exits 1 on any "not ok", or when no mutation was selected.
set -uo pipefail
cd "$(dirname "$(readlink -f "$0")")/../.." || exit 1
top=$PWD
O=${O:-build}
list=$(readlink -f "${MUTATE_LIST:-selftests/mutate/mutations}")
all=0
[ "${1:-}" = --all ] && { all=1; shift; }
# The first guest kernel, for the VM mutations' tests.
: "${MUTATE_KVER:=$(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null |
	sed -n 's|.*/linux-headers-||p' | head -n1)}"
export MUTATE_KVER

S=$(mktemp -d "${TMPDIR:-/tmp}/steptime-mutate.XXXXXX") || exit 1
pins=/sys/fs/bpf/steptime_mutate_$$
cleanup() {
	rm -rf "$S"
	[ -d "$pins" ] && rm -rf "$pins"
}
trap cleanup EXIT
[ -w /sys/fs/bpf ] && mkdir -p $pins

# The copy (see above).
git ls-files -z -co --exclude-standard | cpio -0pdm --quiet "$S" || exit 1
[ -d "$O" ] || { echo "mutate: no build in $O (make first)" >&2; exit 1; }
mkdir -p "$S/build"
(cd "$O" && tar -cf - --exclude=./arm64 --exclude=./vm/log .) |
	(cd "$S/build" && tar -xpf -) || exit 1
find "$S/build" -type l | while read -r l; do
	t=$(readlink "$l")
	case "$t" in "$top"/*) ln -sfn "$S${t#"$top"}" "$l" ;; esac
done
absO=$(readlink -f "$O")
find "$S/build" -type f -perm -u+x | while read -r f; do
	readelf -d "$f" 2>/dev/null | grep -E 'R(UN)?PATH' | grep -qF "$absO" &&
		rm -f "$f"
done
rm -f "$S/build/selftests/loader/loader"	# built with $pins

# make_in TARGETS: build in the copy, quietly; its log in $S/make.log.
make_in() {
	[ -z "$1" ] && return 0
	# shellcheck disable=SC2086
	(cd "$S" && nice -n 10 make -j2 --no-print-directory O=build \
		LOADERTEST_PINS="-DPIN_DIR=\\\"$pins/loadertest\\\" -DMNT_PIN=\\\"$pins/mnt\\\"" \
		$1) </dev/null >"$S/make.log" 2>&1
}

# run_test COMMAND: in the copy, its output in $S/test.log.
run_test() {
	(cd "$S" && O=build STEPTIME_CLI=build/steptime bash -c "$1") \
		</dev/null >"$S/test.log" 2>&1
}

n=0 failed=0
result() {	# status text
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n mutation $2"
	else
		echo "not ok $n mutation $2"
		failed=1
	fi
}

tail_log() {	# file: its last lines, as TAP comments
	tail -n 15 "$1" | sed 's/^/#   /'
}

# mutate: the mutation in name, vm, file, edit, build, test, expect.
mutate() {
	local f=$S/$file what="$name: $test fails"

	echo "# mutation $name: $file; $test"
	cp -p "$f" "$S/orig" && cp -p "$f" "$S/mutated" ||
		{ result 1 "$what # no $file"; return; }
	perl -0777 -pi -e "$edit" "$S/mutated"
	if cmp -s "$S/mutated" "$S/orig"; then
		result 1 "$what # the edit changed nothing in $file (moved?)"
		return
	fi
	if ! make_in "$build"; then
		echo "# make $build, unmutated, failed:"; tail_log "$S/make.log"
		result 1 "$what # the unmutated build failed"; return
	fi
	if [ "${MUTATE_BASELINE:-1}" = 1 ] && ! run_test "$test"; then
		echo "# $test failed unmutated:"; tail_log "$S/test.log"
		result 1 "$what # it fails unmutated"; return
	fi
	cp "$S/mutated" "$f"
	diff -u "$S/orig" "$f" | sed -n '3,$s/^/#   /p'
	if ! make_in "$build"; then
		echo "# make $build, mutated, failed:"; tail_log "$S/make.log"
		result 1 "$what # the mutated build failed"
	elif run_test "$test"; then
		echo "# $test passed mutated:"; tail_log "$S/test.log"
		result 1 "$what # it still passes"
	elif [ -n "$expect" ] && ! grep -qE -- "$expect" "$S/test.log"; then
		echo "# no line matches '$expect':"; tail_log "$S/test.log"
		result 1 "$what # it fails, but not as expected"
	else
		grep -E -m3 -- "${expect:-^not ok}" "$S/test.log" | sed 's/^/#   /'
		grep -E -m5 -- 'Expected |# FAIL' "$S/test.log" | sed 's/^/#   /'
		result 0 "$what"
	fi
	# Back, newer than what the mutated build made: rebuilt next time.
	cp "$S/orig" "$f"
}

# selected: whether the mutation in name/vm runs.
selected() {
	local w
	[ "$vm" = 1 ] && [ $all = 0 ] && return 1
	[ $# = 0 ] && return 0
	for w; do [ "$w" = "$name" ] && return 0; done
	return 1
}

reset() { name='' vm=0 file='' edit='' build='' test='' expect=''; }
# flush NAME...: run the mutation read so far, if any and selected.
flush() {
	[ -n "$name" ] && selected "$@" && mutate
	reset
}

reset
while IFS= read -r -u 3 line || [ -n "$line" ]; do
	case "$line" in
	'#'*)		;;
	'')		flush "$@" ;;
	'name '*)	name=${line#name } ;;
	vm)		vm=1 ;;
	'file '*)	file=${line#file } ;;
	'edit '*)	edit=${line#edit } ;;
	'make '*)	build=${line#make } ;;
	'test '*)	test=${line#test } ;;
	'expect '*)	expect=${line#expect } ;;
	*)		echo "mutate: $list: what is '$line'?" >&2; exit 1 ;;
	esac
done 3<"$list"
flush "$@"

echo "1..$n"
[ $n -gt 0 ] || { echo "# no mutation selected: nothing was checked"; exit 1; }
exit $failed
