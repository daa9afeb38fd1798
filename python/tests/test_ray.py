"""Sweeps on a local two-worker Ray cluster: the same sweep.csv as a local sweep, a
failed point reported while the rest complete, a killed driver resumed.

Ray must be installed (tests/python.rs installs it): without it the module fails to
import, never skips."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import ray

import reclaimsim

ROOT = Path(os.environ.get("RECLAIMSIM_ROOT", Path(__file__).resolve().parents[2]))
BIN = os.environ.get("RECLAIMSIM_BIN", str(ROOT / "target" / "release" / "reclaimsim"))
SCENARIO = "scenarios/memcg-low-step.toml"  # 12 points


@pytest.fixture(scope="module")
def local_sweep(tmp_path_factory):
    out = tmp_path_factory.mktemp("local")
    subprocess.run([BIN, "sweep", SCENARIO, "--out", str(out), "-q", "--yes"], cwd=ROOT, check=True)
    return out / "sweep.csv"


@pytest.fixture(autouse=True)
def at_root(monkeypatch):
    monkeypatch.chdir(ROOT)


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_ray_sweep_equals_the_local_sweep(cluster, local_sweep, tmp_path):
    df = reclaimsim.sweep(reclaimsim.load(SCENARIO), tmp_path, ray=True)
    assert (tmp_path / "sweep.csv").read_text() == local_sweep.read_text()
    assert len(df) == 12
    assert sorted(p.name for p in tmp_path.glob("point-*")) == [f"point-{i:03}" for i in range(12)]


def test_a_failed_point_is_reported_and_the_rest_complete(cluster, local_sweep, tmp_path, monkeypatch):
    monkeypatch.setenv("RECLAIMSIM_RAY_FAIL_POINTS", "2")
    sc = reclaimsim.load(SCENARIO)
    with pytest.raises(reclaimsim.SimulationError) as e:
        reclaimsim.sweep(sc, tmp_path, ray=True)
    # Named with its parameters; the other eleven written, no sweep.csv yet.
    assert "point 2 (" in str(e.value) and "cgroup.0.memory.low=" in str(e.value)
    assert "failure injected" in str(e.value)
    done = sorted(p.parent.name for p in tmp_path.glob("point-*/results.json"))
    assert len(done) == 11 and "point-002" not in done
    assert not (tmp_path / "sweep.csv").exists()
    monkeypatch.delenv("RECLAIMSIM_RAY_FAIL_POINTS")
    lines = []
    reclaimsim.ray_sweep.sweep(sc, tmp_path, progress=lines.append)
    assert lines[0] == "12 points, 11 complete already, 1 to run on Ray", lines
    assert (tmp_path / "sweep.csv").read_text() == local_sweep.read_text()


def test_a_killed_sweep_resumes(local_sweep, tmp_path):
    cmd = [sys.executable, "-m", "reclaimsim.ray_sweep", SCENARIO, "--out", str(tmp_path),
           "--num-cpus", "2", "--set", "run.duration=6s"]
    p = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while len(list(tmp_path.glob("point-*/results.json"))) < 2:
        assert p.poll() is None, p.stderr.read()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    p.send_signal(signal.SIGKILL)
    p.wait()
    before = len(list(tmp_path.glob("point-*/results.json")))
    assert 2 <= before < 12
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    line = next(l for l in r.stderr.splitlines() if "complete already" in l)
    done_then = int(line.split(", ")[1].split()[0])
    assert done_then >= before, (line, before)
    assert (tmp_path / "sweep.csv").exists()
    # Same as a local sweep of the same scenario.
    local = tmp_path / "local"
    subprocess.run([BIN, "sweep", SCENARIO, "--out", str(local), "-q", "--yes", "--set", "run.duration=6s"],
                   cwd=ROOT, check=True)
    assert (tmp_path / "sweep.csv").read_text() == (local / "sweep.csv").read_text()


def test_the_cli_runs_it(local_sweep, tmp_path):
    env = dict(os.environ, RECLAIMSIM_PYTHON=sys.executable)
    r = subprocess.run([BIN, "sweep", SCENARIO, "--out", str(tmp_path), "--ray", "--jobs", "2", "-q"],
                       cwd=ROOT, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "sweep.csv").read_text() == local_sweep.read_text()
