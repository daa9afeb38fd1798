#!/bin/bash
# MAP_POPULATE into a memcg smaller than the mapping, on the real kernel: a memory
# cgroup (v1) of LIMIT under a 512 MiB parent, over a zram device of our own, both
# removed on exit.
#
#   sudo tools/kernel-twin/populate.sh SIZE_MIB LIMIT populate|touch
#
# Prints the workload's exit status, the cgroup's oom_kill count and the pages
# swapped out meanwhile (/proc/vmstat pswpout; other swap activity on the machine
# would add to it).
set -u
SIZE=${1:?usage: populate.sh SIZE_MIB LIMIT populate|touch}
LIMIT=${2:?}
MODE=${3:?}
[ "$(id -u)" = 0 ] || { echo "run as root" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d)
CG=/sys/fs/cgroup/memory/reclaimsim-twin.$$
Z=""
cleanup() {
	if [ -n "$Z" ]; then
		swapoff "/dev/zram$Z" 2>/dev/null
		echo 1 >"/sys/block/zram$Z/reset"
		echo "$Z" >/sys/class/zram-control/hot_remove
	fi
	rmdir "$CG/exp" "$CG" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT INT TERM
gcc -O2 -o "$WORK/populate" "$HERE/populate.c" || exit 1
Z=$(cat /sys/class/zram-control/hot_add) || exit 1
echo 1G >"/sys/block/zram$Z/disksize"
mkswap "/dev/zram$Z" >/dev/null && swapon "/dev/zram$Z" || exit 1
mkdir -p "$CG/exp"
echo 512M >"$CG/memory.limit_in_bytes"
echo "$LIMIT" >"$CG/exp/memory.limit_in_bytes"
before=$(awk '/^pswpout /{print $2}' /proc/vmstat)
(
	echo $BASHPID >"$CG/exp/cgroup.procs"
	exec timeout 60 "$WORK/populate" "$SIZE" "$MODE"
) 2>/dev/null
status=$?
after=$(awk '/^pswpout /{print $2}' /proc/vmstat)
echo "$MODE $SIZE MiB in $LIMIT: exit $status, $(grep '^oom_kill ' "$CG/exp/memory.oom_control"), pswpout $((after - before))"
