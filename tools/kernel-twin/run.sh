#!/bin/bash
# A twin of a reclaimsim scenario on the real kernel: a memory cgroup (cgroup v1) of
# LIMIT under a parent limited to 512 MiB, over a zram device of our own, the access
# workload inside, and an ftrace instance of our own recording every memcg statistics
# flush (memcg:memcg_flush_stats, with the caller's stack), shrink_active_list and
# memcg reclaim. Everything is removed on exit.
#
#   sudo tools/kernel-twin/run.sh OUTDIR [options]
#     --poll MS     read the cgroup's memory.stat every MS ms (default 0: never)
#     --phase S     start S seconds after a periodic flush (default: whenever)
#     --limit SIZE  the cgroup's limit (default 512M)
#     --pages N     the mapping in 4 KiB pages (default 196608: 768 MiB)
#     --passes N    uniform passes after the first write (default 10)
#     --fill BYTES  random bytes per page (default 2048)
#
# Writes OUTDIR/{workload.txt,vmstat.before,vmstat.after,oom_control,lru.txt,
# ftrace.txt}; summarize.py reads them.
set -u
OUT=${1:?usage: run.sh OUTDIR [--poll MS] [--phase S] [--limit SIZE] [--pages N] [--passes N] [--fill BYTES]}
shift
POLL=0 PHASE="" LIMIT=512M PAGES=196608 PASSES=10 FILL=2048
while [ $# -gt 0 ]; do
	case $1 in
	--poll) POLL=$2 ;; --phase) PHASE=$2 ;; --limit) LIMIT=$2 ;;
	--pages) PAGES=$2 ;; --passes) PASSES=$2 ;; --fill) FILL=$2 ;;
	*) echo "unknown option $1" >&2; exit 2 ;;
	esac
	shift 2
done
[ "$(id -u)" = 0 ] || { echo "run as root" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
WORK=$(mktemp -d)
gcc -O2 -o "$WORK/access" "$HERE/access.c" || exit 1
CG=/sys/fs/cgroup/memory/reclaimsim-twin.$$
TFS=$WORK/tracefs
I=$TFS/instances/reclaimsim-twin
Z=""
WPID=""
cleanup() {
	[ -n "$WPID" ] && kill -9 "$WPID" 2>/dev/null
	sleep 0.5
	if [ -d "$I" ]; then
		echo 0 >"$I/tracing_on"
		echo '!stacktrace' >"$I/events/memcg/memcg_flush_stats/trigger"
		rmdir "$I"
	fi
	mountpoint -q "$TFS" && umount "$TFS"
	if [ -n "$Z" ]; then
		swapoff "/dev/zram$Z" 2>/dev/null
		echo 1 >"/sys/block/zram$Z/reset"
		echo "$Z" >/sys/class/zram-control/hot_remove
	fi
	rmdir "$CG/exp" "$CG" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

mkdir -p "$TFS" && mount -t tracefs nodev "$TFS" || exit 1
mkdir "$I" || exit 1
echo 65536 >"$I/buffer_size_kb"
for e in memcg/memcg_flush_stats vmscan/mm_vmscan_lru_shrink_active \
	vmscan/mm_vmscan_memcg_reclaim_begin vmscan/mm_vmscan_memcg_reclaim_end oom/mark_victim; do
	echo 1 >"$I/events/$e/enable" || exit 1
done
echo stacktrace >"$I/events/memcg/memcg_flush_stats/trigger"
echo 1 >"$I/tracing_on"

Z=$(cat /sys/class/zram-control/hot_add) || exit 1
echo lzo-rle >"/sys/block/zram$Z/comp_algorithm"
echo 2G >"/sys/block/zram$Z/disksize"
mkswap "/dev/zram$Z" >/dev/null && swapon "/dev/zram$Z" || exit 1
mkdir -p "$CG/exp"
echo 512M >"$CG/memory.limit_in_bytes"
echo "$LIMIT" >"$CG/exp/memory.limit_in_bytes"

if [ -n "$PHASE" ]; then
	n0=$(grep -c memcg_flush_stats "$I/trace")
	while [ "$(grep -c memcg_flush_stats "$I/trace")" = "$n0" ]; do sleep 0.02; done
	sleep "$PHASE"
fi
cat /proc/vmstat >"$OUT/vmstat.before"
(
	echo $BASHPID >"$CG/exp/cgroup.procs"
	echo workload_start >"$I/trace_marker"
	FILL=$FILL exec timeout 300 "$WORK/access" "$PAGES" "$PASSES"
) >"$OUT/workload.txt" 2>&1 &
WPID=$!
: >"$OUT/lru.txt"
t0=$(date +%s.%N)
while kill -0 "$WPID" 2>/dev/null; do
	[ "$POLL" -gt 0 ] && cat "$CG/exp/memory.stat" >/dev/null
	# /proc/vmstat is the node's: reading it flushes no memcg statistics.
	echo "$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { printf "%.3f", a - b }') $(grep -E '^(nr_inactive_anon|nr_active_anon|workingset_activate_anon|pgdeactivate) ' /proc/vmstat | tr '\n' ' ')" >>"$OUT/lru.txt"
	if [ "$POLL" -gt 0 ]; then sleep "$(awk -v p="$POLL" 'BEGIN { print p / 1000 }')"; else sleep 0.1; fi
done
wait "$WPID"
echo "exit $?" >>"$OUT/workload.txt"
WPID=""
cat /proc/vmstat >"$OUT/vmstat.after"
cat "$CG/exp/memory.oom_control" >"$OUT/oom_control"
echo 0 >"$I/tracing_on"
cat "$I/trace" >"$OUT/ftrace.txt"
