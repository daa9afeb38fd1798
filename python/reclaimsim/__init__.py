"""reclaimsim from Python: load a scenario, run it, sweep it, compare runs.

The simulation is the same Rust code the ``reclaimsim`` command runs (this package's
native module is built from the same crate), so a run here gives the CLI's
results.json byte for byte for the same scenario, overrides and seed.

Example::

    import reclaimsim
    sc = reclaimsim.load("scenarios/quickstart.toml", set={"run.duration": "5s"})
    sc["kernel.vm.swappiness"] = 60
    r = reclaimsim.run(sc, seed=2)
    r.vmstat["pgscan_kswapd"], r.workloads.loc["service", "throughput"]
"""

from __future__ import annotations

import io
import json
import os
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from . import _native

if TYPE_CHECKING:
    import pandas as pd


def _pd():
    # pandas on first use: importing it costs more than a short run.
    import pandas

    return pandas

__all__ = [
    "Scenario",
    "Result",
    "ScenarioError",
    "SimulationError",
    "load",
    "run",
    "sweep",
    "compare",
]
__version__ = _native.__version__


class ScenarioError(ValueError):
    """A scenario problem, naming where it is, as the CLI prints it.

    Attributes: ``file`` (the scenario file, or ``<string>`` for TOML text),
    ``line`` (1-based; 0 when the problem has no line), ``key`` (the dotted key
    path, e.g. ``kernel.vm.swappiness``), ``flag`` (the ``KEY=VALUE`` override it
    came from, or None) and ``message`` (the whole text).

    Example::

        try:
            reclaimsim.load("[machine]\\nmemory = 5\\n")
        except reclaimsim.ScenarioError as e:
            print(e.file, e.line, e.key)
    """

    def __init__(self, message: str, file: str, line: int, key: str, flag: str | None):
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.key = key
        self.flag = flag


class SimulationError(RuntimeError):
    """A run that could not complete (an invariant broken under ``check=True``, a
    timed action that failed, a trace that changed under the run, a sweep point)."""


def _native_call(f, *args, **kwargs):
    try:
        return f(*args, **kwargs)
    except _native.ScenarioError as e:
        raise ScenarioError(*e.args) from None
    except _native.SimulationError as e:
        raise SimulationError(*e.args) from None


def _toml_value(v: Any) -> str:
    """A Python value as the VALUE of a ``--set KEY=VALUE`` override."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return v
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_literal(x) for x in v) + "]"
    raise TypeError(f"cannot set a scenario key to {type(v).__name__} {v!r}")


def _toml_literal(v: Any) -> str:
    if isinstance(v, str):
        return json.dumps(v)
    return _toml_value(v)


def _sets(overrides: Mapping[str, Any] | Iterable[str] | None) -> list[str]:
    if overrides is None:
        return []
    if isinstance(overrides, Mapping):
        return [f"{k}={_toml_value(v)}" for k, v in overrides.items()]
    return [str(s) for s in overrides]


class Scenario:
    """A loaded, validated scenario: its source (a file or TOML text) and its
    overrides. Keys read and change by dotted path; a change is validated at once
    (a bad value raises :class:`ScenarioError` and leaves the scenario as it was).

    Example::

        sc = reclaimsim.load("scenarios/memcg-low-step.toml")
        sc["cgroup.0.memory.low"]           # '553M' as the file says it
        sc["kernel.vm.swappiness"] = 100
        sc.sets                             # ['kernel.vm.swappiness=100']
    """

    def __init__(self, source: str, is_text: bool, file: str, sets: list[str]):
        resolved = _native_call(_native.load, source, is_text, file, sets)
        self._source = source
        self._is_text = is_text
        self._file = file
        self._sets = list(sets)
        self._resolved = json.loads(resolved)

    @property
    def file(self) -> str:
        """The scenario file as named (``<string>`` for text)."""
        return self._file

    @property
    def sets(self) -> list[str]:
        """The overrides, as ``KEY=VALUE`` strings in the order applied."""
        return list(self._sets)

    def to_dict(self) -> dict:
        """The resolved scenario (every default filled in) as a dict.
        Example: ``sc.to_dict()["kernel"]["lru"]`` → "classic"."""
        return json.loads(json.dumps(self._resolved))

    @staticmethod
    def _path(key: str) -> list[str | int]:
        segs: list[str | int] = []
        for part in key.replace("]", "").replace("[", ".").split("."):
            if part == "":
                raise KeyError(key)
            segs.append(int(part) if part.isdigit() else part)
        return segs

    def __getitem__(self, key: str) -> Any:
        node: Any = self._resolved
        for seg in self._path(key):
            try:
                node = node[seg]
            except (KeyError, IndexError, TypeError):
                raise KeyError(key) from None
        return node

    def get(self, key: str, default: Any = None) -> Any:
        """The value at ``key`` (resolved: defaults filled in), or ``default``.

        Example: ``sc.get("kernel.vm.swappiness")`` → 60 unless the file says."""
        try:
            return self[key]
        except KeyError:
            return default

    def __setitem__(self, key: str, value: Any) -> None:
        self.set(key, value)

    def set(self, key: str, value: Any) -> "Scenario":
        """Overrides ``key`` (as ``--set KEY=VALUE``), validating the result; returns
        the scenario. Example: ``sc.set("machine.memory", "8G").set("run.seed", 3)``."""
        new = Scenario(
            self._source, self._is_text, self._file, self._sets + [f"{key}={_toml_value(value)}"]
        )
        self.__dict__.update(new.__dict__)
        return self

    def copy(self) -> "Scenario":
        """An independent copy. Example: ``b = sc.copy(); b["kernel.lru"] = "mglru"``."""
        return Scenario(self._source, self._is_text, self._file, self._sets)

    def __repr__(self) -> str:
        return f"Scenario({self._file!r}, sets={self._sets!r})"


def load(path_or_text: str | os.PathLike, set: Mapping[str, Any] | Iterable[str] | None = None) -> Scenario:
    """Loads a scenario from a file (a path) or from TOML text (a string with a
    newline), with overrides as ``--set`` gives them (a dict of dotted keys to
    values, or ``KEY=VALUE`` strings). Raises :class:`ScenarioError` naming file,
    line and key.

    Example::

        sc = reclaimsim.load("scenarios/quickstart.toml", set={"run.duration": "5s"})
        sc2 = reclaimsim.load('[machine]\\nmemory = "1G"\\n[[workload]]\\n'
                              'name = "w"\\nkind = "anon"\\nsize = "64M"\\n')
    """
    sets = _sets(set)
    if isinstance(path_or_text, os.PathLike) or "\n" not in str(path_or_text):
        return Scenario(os.fspath(path_or_text), False, os.fspath(path_or_text), sets)
    return Scenario(str(path_or_text), True, "<string>", sets)


def _flatten(d: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        name = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(_flatten(v, f"{name}."))
        elif isinstance(v, list):
            continue
        else:
            out[name] = v
    return out


def _frame(table: Mapping[str, Mapping[str, Any]], index: str) -> "pd.DataFrame":
    rows = {name: _flatten(v) for name, v in table.items()}
    df = _pd().DataFrame.from_dict(rows, orient="index")
    df.index.name = index
    return df


class Result:
    """What a run produced. ``results_json`` is results.json's text exactly as the CLI
    writes it; the rest are views of it:

    - ``vmstat``: dict of /proc/vmstat counter → value;
    - ``timeseries``: DataFrame of timeseries.csv (a row per sample, ``time_s`` first);
    - ``workloads``: DataFrame indexed by workload name: ``ops``, ``throughput``,
      ``bytes_per_sec``, ``latency_ns.mean`` … ``latency_ns.max`` (int64/float64),
      ``killed_at_ns``, ``runtime_ns``;
    - ``tasks``: DataFrame indexed by task name: ``user_ns``, ``system_ns``, ``ops``, …;
    - ``cgroups``: DataFrame indexed by cgroup path: memory.current, memory.stat.*,
      memory.events.*, pressure …, flattened with dots;
    - ``psi``: DataFrame of the system's PSI, indexed by resource (``memory``), columns
      ``some.avg10`` … ``full.total``.

    Example::

        r = reclaimsim.run(reclaimsim.load("scenarios/quickstart.toml"))
        r.workloads["throughput"]
        r.timeseries.plot(x="time_s", y="nr_free_pages")
    """

    def __init__(self, results_json: str, timeseries_csv: str):
        self.results_json = results_json
        self.timeseries_csv = timeseries_csv
        self._r = json.loads(results_json)

    @property
    def results(self) -> dict:
        """results.json as a dict."""
        return self._r

    @property
    def vmstat(self) -> dict[str, int]:
        return dict(self._r["vmstat"])

    @property
    def timeseries(self) -> "pd.DataFrame":
        return _pd().read_csv(io.StringIO(self.timeseries_csv))

    @property
    def workloads(self) -> "pd.DataFrame":
        return _frame(self._r["workloads"], "workload")

    @property
    def tasks(self) -> "pd.DataFrame":
        return _frame(self._r["tasks"], "task")

    @property
    def cgroups(self) -> "pd.DataFrame":
        return _frame(self._r["cgroups"], "cgroup")

    @property
    def psi(self) -> "pd.DataFrame":
        return _frame(self._r["psi"], "resource")

    def __repr__(self) -> str:
        return f"Result(duration_ns={self._r['duration_ns']}, seed={self._r['seed']})"


def run(scenario: Scenario, seed: int | None = None, check: bool = False) -> Result:
    """Runs ``scenario`` (with ``run.seed = seed`` if given, as ``--seed``; with the
    invariant checker at every sample if ``check``). The GIL is released while it
    runs; Ctrl-C stops it (KeyboardInterrupt).

    Example::

        r = reclaimsim.run(reclaimsim.load("scenarios/quickstart.toml"), seed=3)
        r.vmstat["workingset_refault_anon"]
    """
    sets = scenario.sets + ([f"run.seed={seed}"] if seed is not None else [])
    results, series = _native_call(
        _native.run, scenario._source, scenario._is_text, scenario._file, sets, check
    )
    return Result(results, series)


def sweep(
    scenario: Scenario,
    out: str | os.PathLike | None = None,
    jobs: int | None = None,
    check: bool = False,
    ray: bool | str = False,
) -> "pd.DataFrame":
    """Runs the scenario's ``[sweep]`` into ``out`` (the CLI's directory layout:
    ``point-NNN/``, sweep.json, sweep.csv, pivot.csv; None: a temporary directory,
    removed afterwards), ``jobs`` points at a time (default: the host's cores),
    resuming points already complete. Returns sweep.csv as a DataFrame: a row per
    point, its swept values then its metrics. With ``ray=True`` (a local Ray, ``jobs``
    workers) or ``ray="ray://HOST:PORT"`` each point is a Ray task (see
    :mod:`reclaimsim.ray_sweep`).

    Example::

        df = reclaimsim.sweep(reclaimsim.load("scenarios/memcg-low-step.toml"), jobs=2)
        df.pivot(index="cgroup.0.memory.low", columns="kernel.memcg_protection",
                 values="cgroups.workload.pgscan_per_sec")
    """
    if out is None:
        import tempfile

        with tempfile.TemporaryDirectory(prefix="reclaimsim-sweep-") as d:
            return sweep(scenario, d, jobs=jobs, check=check, ray=ray)
    if ray:
        from . import ray_sweep

        return ray_sweep.sweep(scenario, out, address=ray, check=check, num_cpus=jobs)
    jobs = jobs or os.cpu_count() or 1
    csv = _native_call(
        _native.sweep,
        scenario._source,
        scenario._is_text,
        scenario._file,
        scenario.sets,
        os.fspath(out),
        jobs,
        check,
    )
    return _pd().read_csv(io.StringIO(csv))


def compare(
    *runs: str | os.PathLike,
    by: str | None = None,
    labels: Iterable[str] = (),
) -> "pd.DataFrame":
    """The mmtests-style compare table as a DataFrame (its CSV form: the section, the
    row's name, then a column per run): two or more run directories, or one sweep
    directory ``by`` a swept key.

    Example::

        reclaimsim.compare("out/low", by="cgroup.0.memory.low")
    """
    csv = _native_call(_native.compare, [os.fspath(r) for r in runs], by, list(labels))
    return _pd().read_csv(io.StringIO(csv))
