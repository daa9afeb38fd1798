"""The Python API against the CLI: same results byte for byte, DataFrames as
documented, errors with file/line/key, the GIL released, Ctrl-C.

Run by tests/python.rs (cargo test), which builds the package into a throw-away venv
and sets RECLAIMSIM_BIN to the CLI it compares with and RECLAIMSIM_ROOT to the repo.
"""

import _thread
import io
import os
import subprocess
import signal
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

import reclaimsim

ROOT = Path(os.environ.get("RECLAIMSIM_ROOT", Path(__file__).resolve().parents[2]))
BIN = os.environ.get("RECLAIMSIM_BIN", str(ROOT / "target" / "release" / "reclaimsim"))
QUICKSTART = "scenarios/quickstart.toml"


@pytest.fixture(autouse=True)
def at_root(monkeypatch):
    # Scenario paths as a user at the repository's root names them.
    monkeypatch.chdir(ROOT)


def cli(*args, cwd=None):
    return subprocess.run([BIN, *args], cwd=cwd or ROOT, check=True, capture_output=True, text=True)


def test_run_equals_the_cli_byte_for_byte(tmp_path):
    out = tmp_path / "cli"
    cli("run", QUICKSTART, "--out", str(out), "-q", "--set", "run.duration=3s",
        "--set", "kernel.vm.swappiness=60", "--seed", "7")
    sc = reclaimsim.load(QUICKSTART, set={"run.duration": "3s", "kernel.vm.swappiness": 60})
    r = reclaimsim.run(sc, seed=7)
    assert r.results_json == (out / "results.json").read_text()
    assert r.timeseries_csv == (out / "timeseries.csv").read_text()
    # And again: deterministic.
    assert reclaimsim.run(sc, seed=7).results_json == r.results_json


def test_dataframes_have_the_documented_columns_and_dtypes():
    r = reclaimsim.run(reclaimsim.load(QUICKSTART, set={"run.duration": "2s"}))
    w = r.workloads
    assert w.index.name == "workload" and sorted(w.index) == ["reader", "service"]
    for col, dtype in [("ops", "int64"), ("throughput", "float64"),
                       ("bytes_per_sec", "float64"), ("latency_ns.mean", "float64"),
                       ("latency_ns.p99", "int64"), ("latency_ns.max", "int64")]:
        assert str(w[col].dtype) == dtype, (col, w[col].dtype)
    # results.json's own numbers, not copies of the DataFrame's.
    assert w.loc["service", "ops"] == r.results["workloads"]["service"]["ops"]
    t = r.tasks
    assert t.index.name == "task" and "kswapd0" in t.index
    assert str(t["user_ns"].dtype) == "int64" and str(t["system_ns"].dtype) == "int64"
    p = r.psi
    assert list(p.index) == ["memory"]
    assert {"some.avg10", "some.total", "full.avg300", "full.total"} <= set(p.columns)
    ts = r.timeseries
    assert ts.columns[0] == "time_s" and list(ts["time_s"]) == [1, 2]  # a sample a second
    assert isinstance(r.vmstat["pgscan_kswapd"], int)


def test_cgroups_frame_is_indexed_by_path():
    text = """
[run]
duration = "1s"
[machine]
memory = "1G"
[[cgroup]]
path = "app"
memory.max = "64M"
[[workload]]
name = "w"
kind = "anon"
size = "32M"
cgroup = "app"
"""
    c = reclaimsim.run(reclaimsim.load(text)).cgroups
    assert list(c.index) == ["app"] and c.index.name == "cgroup"
    assert "memory.current" in c.columns


def test_errors_carry_file_line_and_key():
    with pytest.raises(reclaimsim.ScenarioError) as e:
        reclaimsim.load('[machine]\nmemory = "1G"\n[kernel]\nvm.swappiness = 900\n')
    assert (e.value.file, e.value.line, e.value.key) == ("<string>", 4, "kernel.vm.swappiness")
    assert "must be in 0..=200" in str(e.value)
    with pytest.raises(reclaimsim.ScenarioError) as e:
        reclaimsim.load(QUICKSTART, set={"machine.memory": "1K"})
    assert e.value.file == QUICKSTART and e.value.key == "machine.memory"
    assert e.value.flag == "--set machine.memory=1K"
    # A bad change leaves the scenario as it was.
    sc = reclaimsim.load(QUICKSTART)
    with pytest.raises(reclaimsim.ScenarioError):
        sc["kernel.vm.swappiness"] = -1
    assert sc.sets == [] and sc["kernel.vm.swappiness"] == 100
    with pytest.raises(reclaimsim.ScenarioError) as e:
        reclaimsim.load("scenarios/no-such.toml")
    assert "no-such.toml" in str(e.value)


def test_keys_read_and_change_by_dotted_path():
    sc = reclaimsim.load("scenarios/memcg-low-step.toml")
    assert sc["cgroup.0.path"] == sc["cgroup[0].path"]
    sc["kernel.vm.swappiness"] = 10
    sc.set("run.duration", "2s")
    assert sc["kernel.vm.swappiness"] == 10
    assert sc.sets == ["kernel.vm.swappiness=10", "run.duration=2s"]
    with pytest.raises(KeyError):
        sc["kernel.no_such_key"]
    assert sc.get("kernel.no_such_key", 5) == 5


def test_sweep_and_compare_equal_the_cli(tmp_path):
    cli("sweep", "scenarios/memcg-low-step.toml", "--out", str(tmp_path / "cli"), "-q", "--yes")
    sc = reclaimsim.load("scenarios/memcg-low-step.toml")
    df = reclaimsim.sweep(sc, tmp_path / "py", jobs=2)
    want = pd.read_csv(tmp_path / "cli" / "sweep.csv")
    pd.testing.assert_frame_equal(df, want)
    assert (tmp_path / "py" / "sweep.csv").read_text() == (tmp_path / "cli" / "sweep.csv").read_text()
    key = "cgroup.0.memory.low"
    c = reclaimsim.compare(tmp_path / "py", by=key)
    text = cli("compare", str(tmp_path / "cli"), "--by", key, "--format", "csv").stdout
    pd.testing.assert_frame_equal(c, pd.read_csv(io.StringIO(text)))


def test_sweep_without_a_directory_returns_the_table():
    sc = reclaimsim.load("scenarios/memcg-low-step.toml", set={"run.duration": "5s"})
    df = reclaimsim.sweep(sc, jobs=2)
    assert len(df) == 12
    assert list(df.columns[:2]) == ["cgroup.0.memory.low", "kernel.memcg_protection"]


def test_the_gil_is_released_while_it_runs():
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.005)

    th = threading.Thread(target=ticker)
    th.start()
    t0 = time.monotonic()
    reclaimsim.run(reclaimsim.load(QUICKSTART, set={"run.duration": "4s"}))
    t1 = time.monotonic()
    stop.set()
    th.join()
    # A run that held the GIL would leave the ticker no tick between its start and
    # its end. Released, the ticker ticks all through it: no gap between ticks (or
    # between the run's start or end and the nearest tick) is anywhere near the run's
    # length. Half of it leaves room for any sleep overshoot on a loaded machine.
    assert t1 - t0 > 0.2, t1 - t0
    marks = [t0] + [t for t in ticks if t0 < t < t1] + [t1]
    gap = max(b - a for a, b in zip(marks, marks[1:]))
    assert gap < (t1 - t0) / 2, (t1 - t0, gap, len(marks) - 2)


def test_ctrl_c_stops_a_run():
    sc = reclaimsim.load(QUICKSTART, set={"run.duration": "600s"})
    # Python's own handler, as an interactive session has it: a process started in
    # the background of a non-interactive shell (a CI job, `cargo test &`) inherits
    # SIGINT ignored, and interrupt_main then does nothing at all.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        threading.Timer(0.3, _thread.interrupt_main).start()
        t0 = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            reclaimsim.run(sc)
        assert time.monotonic() - t0 < 5
    finally:
        signal.signal(signal.SIGINT, previous)
