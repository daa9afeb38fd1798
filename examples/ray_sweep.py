"""A sweep on Ray from Python: each point of scenarios/memcg-low-step.toml as a Ray
task, on a local Ray (two workers) or on the cluster at --address.

    pip install './python[ray]'
    python examples/ray_sweep.py --out out/memcg-low-step-ray            # local Ray
    python examples/ray_sweep.py --out out/x --address ray://head:10001  # a cluster

The directory it writes is a local sweep's (point-NNN/, sweep.json, sweep.csv,
pivot.csv); `reclaimsim compare DIR --by kernel.memcg_protection` reads it. Run it
again after an interruption and only the missing points run.
"""

import argparse

import reclaimsim
import reclaimsim.ray_sweep

ap = argparse.ArgumentParser()
ap.add_argument("--out", default="out/memcg-low-step-ray")
ap.add_argument("--address", default=None, help="a Ray cluster (default: a local Ray)")
ap.add_argument("--workers", type=int, default=2, help="a local Ray's workers")
args = ap.parse_args()

sc = reclaimsim.load("scenarios/memcg-low-step.toml")
df = reclaimsim.ray_sweep.sweep(
    sc, args.out, address=args.address or True, num_cpus=args.workers, progress=print
)
print(df[["cgroup.0.memory.low", "kernel.memcg_protection", "cgroups.workload.pgscan_per_sec"]])
print(reclaimsim.compare(args.out, by="kernel.memcg_protection").head(12).to_string())
