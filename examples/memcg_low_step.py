"""The memory.low step experiment from Python: load scenarios/memcg-low-step.toml,
sweep memory.low under both protection modes, print the seed's table (the workload
cgroup's pgscan/s, proportional against cliff) and plot it with matplotlib.

    pip install './python[plot]'
    python examples/memcg_low_step.py --out out/memcg-low-step-py

Run from the repository's root (the scenario path is relative to it).
"""

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import reclaimsim  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--out", default="out/memcg-low-step-py")
ap.add_argument("--jobs", type=int, default=None)
args = ap.parse_args()

sc = reclaimsim.load("scenarios/memcg-low-step.toml")
df = reclaimsim.sweep(sc, args.out, jobs=args.jobs)

# The seed's table: a row per memory.low, a column per protection mode.
low, mode = "cgroup.0.memory.low", "kernel.memcg_protection"
metric = "cgroups.workload.pgscan_per_sec"
table = df.pivot(index=low, columns=mode, values=metric)
table = table.reindex(df[low].drop_duplicates())  # the sweep's order: 553M … 0
table["% of cliff"] = (100 * table["proportional"] / table["cliff"]).round(1)
print(table[["proportional", "cliff", "% of cliff"]].to_string())

fig, ax = plt.subplots(figsize=(6, 3.5))
for m, style in [("cliff", "s--"), ("proportional", "o-")]:
    ax.plot(table.index.astype(str), table[m], style, label=m)
ax.set_xlabel("memory.low of the workload cgroup")
ax.set_ylabel("workload pgscan/s")
ax.set_title("memory.low step: proportional vs cliff reclaim")
ax.legend()
fig.tight_layout()
png = Path(args.out) / "memcg-low-step.png"
fig.savefig(png, dpi=120)
print(f"wrote {png}")
