"""The examples under examples/ run as their docstrings say, and say what they should."""

import os
import subprocess
import sys
from pathlib import Path


ROOT = Path(os.environ.get("RECLAIMSIM_ROOT", Path(__file__).resolve().parents[2]))


def run_example(name, *args):
    env = dict(os.environ, MPLBACKEND="Agg")
    r = subprocess.run([sys.executable, str(ROOT / "examples" / name), *args],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_memcg_low_step_example(tmp_path):
    import matplotlib  # noqa: F401  (the example plots: tests/python.rs installs it)
    out = run_example("memcg_low_step.py", "--out", str(tmp_path), "--jobs", "2")
    # The seed's table: the workload scanned in proportion below memory.low's step
    # under the new kernel, flat under the cliff.
    lines = [l.split() for l in out.splitlines() if l[:1].isdigit()]
    assert [l[0] for l in lines] == ["553M", "447M", "316M", "211M", "105M", "0"]
    prop = [float(l[1]) for l in lines]
    cliff = [float(l[2]) for l in lines]
    assert prop[0] == 0 and prop == sorted(prop) and prop[-1] == cliff[-1]
    assert (tmp_path / "memcg-low-step.png").stat().st_size > 10_000


def test_ray_example(tmp_path):
    import ray  # noqa: F401  (tests/python.rs installs it)
    out = run_example("ray_sweep.py", "--out", str(tmp_path))
    assert "12 points, 0 complete already, 12 to run on Ray" in out
    assert (tmp_path / "sweep.csv").exists()
