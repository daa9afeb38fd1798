"""The Python package's benchmark figures (BENCHMARKS.md): the Python path's overhead
over the CLI for a quickstart run, and a Ray sweep's scaling from one worker to two.

    python python/bench.py [--rounds 3]      # from the repository's root, the package
                                              # installed with Ray, target/release built

Runs alternate (CLI, Python, CLI, Python, ...; one Ray worker, two, one, two, ...) so
that the host's noise falls on both; each figure is the median of the rounds' ratios.
The Ray sweep is memcg-low-step's 12 points at 60 s each (about a second of work a
point), timed from a started local Ray to the sweep's end.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

BIN = os.environ.get("RECLAIMSIM_BIN", "target/release/reclaimsim")
QUICKSTART = "scenarios/quickstart.toml"
PY_RUN = (
    "import reclaimsim; "
    f"reclaimsim.run(reclaimsim.load({QUICKSTART!r}))"
)
PY_RAY = """
import sys, time, ray, reclaimsim, reclaimsim.ray_sweep as rs
ray.init(num_cpus=int(sys.argv[1]), include_dashboard=False, log_to_driver=False)
sc = reclaimsim.load("scenarios/memcg-low-step.toml", set={"run.duration": "60s"})
t = time.monotonic(); rs.sweep(sc, sys.argv[2]); print(time.monotonic() - t)
"""


def wall(cmd):
    t = time.monotonic()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    cli, py = [], []
    with tempfile.TemporaryDirectory() as d:
        for _ in range(a.rounds):
            cli.append(wall([BIN, "run", QUICKSTART, "-q", "--out", f"{d}/cli"]))
            py.append(wall([sys.executable, "-c", PY_RUN]))
        ray1, ray2 = [], []
        for r in range(a.rounds):
            for n, acc in [(1, ray1), (2, ray2)]:
                out = subprocess.run([sys.executable, "-c", PY_RAY, str(n), f"{d}/ray{n}-{r}"],
                                     check=True, capture_output=True, text=True).stdout
                acc.append(float(out.strip().splitlines()[-1]))
    # Each round runs the two back to back: the median of the rounds' ratios.
    def median(xs):
        xs = sorted(xs)
        return xs[len(xs) // 2] if len(xs) % 2 else (xs[len(xs) // 2 - 1] + xs[len(xs) // 2]) / 2

    fig = {
        "quickstart_cli_s": cli,
        "quickstart_python_s": py,
        "python_overhead_percent": round(100 * (median([p / c for p, c in zip(py, cli)]) - 1), 1),
        "ray_sweep_12_points_1_worker_s": ray1,
        "ray_sweep_12_points_2_workers_s": ray2,
        "ray_speedup_1_to_2": round(median([a / b for a, b in zip(ray1, ray2)]), 2),
    }
    print(json.dumps(fig, indent=1))


if __name__ == "__main__":
    main()
