# SPDX-License-Identifier: GPL-2.0
# Shell helpers for a guest that loads npusim (selftests/run_vm.sh,
# bench/vm.sh). Sourced: defines functions only.

# Milliseconds since boot (busybox's date, in the arm64 guest, has no %N).
now_ms() {
	local up
	read -r up _ </proc/uptime
	echo $((${up%.*} * 1000 + 10#${up#*.} * 10))
}

# rmmod npusim once its users are gone. A test's processes release their
# files and mappings, and the kernel the programs an unload unpinned, a
# little after they exit (from workqueues): waited for, up to 10 s; a
# reference held longer is a leak, and the rmmod fails.
npusim_remove() {
	local ref=/sys/module/npusim/refcnt start n

	start=$(now_ms)
	while [ -r $ref ] && n=$(cat $ref) && [ "$n" != 0 ] &&
	      [ $(($(now_ms) - start)) -lt 10000 ]; do
		sleep 0.01 2>/dev/null || sleep 1
	done
	[ "${n:-0}" != 0 ] &&
		echo "# npusim: $n users $(($(now_ms) - start)) ms after the test"
	rmmod npusim
}
