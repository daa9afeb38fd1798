#!/usr/bin/env python3
"""One line per twin run directory (tools/kernel-twin/run.sh): whether the memcg OOM
killer ran, the counters reclaimsim reports for the same scenario, and when the
periodic memcg statistics flush ran relative to the workload's start.

    tools/kernel-twin/summarize.py DIR...
"""
import re
import sys


def vmstat(path):
    with open(path) as f:
        return {k: int(v) for k, v in (line.split() for line in f)}


def flushes(path):
    """(start, [periodic flush times], oom time) from ftrace.txt, in seconds."""
    start, times, oom = None, [], None
    caller = None
    pending = None
    with open(path) as f:
        for line in f:
            m = re.search(r"\s(\d+\.\d+): (\w+):", line)
            if m:
                t, ev = float(m.group(1)), m.group(2)
                if ev == "tracing_mark_write" and start is None:
                    start = t
                elif ev == "memcg_flush_stats":
                    pending = t
                elif ev == "mark_victim" and oom is None:
                    oom = t
            elif pending is not None and "=> flush_memcg_stats_dwork" in line:
                times.append(pending)
                pending = None
    rel = lambda t: None if t is None or start is None else round(t - start, 3)
    return start, [rel(t) for t in times if start is None or t >= start], rel(oom)


COUNTERS = ["pgscan_anon", "pgsteal_anon", "pgmajfault", "pswpout",
            "workingset_activate_anon", "pgdeactivate", "pgactivate"]

print("run", "oom", *COUNTERS, "oom_at_s", "periodic_flushes_s", sep="\t")
for d in sys.argv[1:]:
    before, after = vmstat(f"{d}/vmstat.before"), vmstat(f"{d}/vmstat.after")
    oom = re.search(r"oom_kill (\d+)", open(f"{d}/oom_control").read()).group(1)
    _, times, oom_at = flushes(f"{d}/ftrace.txt")
    print(d, oom, *(after.get(k, 0) - before.get(k, 0) for k in COUNTERS), oom_at,
          times[:4], sep="\t")
