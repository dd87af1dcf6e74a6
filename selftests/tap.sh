# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# shellcheck shell=bash
# TAP for the shell tests, sourced from the repository's top (each test
# cds there first): `ok STATUS NAME [DIAGNOSTIC]` prints test $n's line,
# the diagnostic's lines under a failed one as comments; $failed is 1
# once a test failed, the script's exit status.
n=0 failed=0

ok() {	# status name [diagnostic]
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n $2"
		return
	fi
	echo "not ok $n $2"
	[ -z "${3:-}" ] || echo "$3" | sed 's/^/# /'
	failed=1
}
