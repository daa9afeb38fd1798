"""Type stubs of the native module (python/src/lib.rs). Use the package's wrappers
(`reclaimsim.load`, `run`, `sweep`, `compare`), which give errors attributes and
results DataFrames."""

import os

__version__: str

class ScenarioError(Exception):
    """args: (message, file, line, key, flag)."""

class SimulationError(Exception):
    """args: (message,)."""

def load(source: str, is_text: bool, file: str, sets: list[str]) -> str:
    """The resolved scenario as JSON. Example: load("s.toml", False, "s.toml", [])."""

def run(
    source: str, is_text: bool, file: str, sets: list[str], check: bool = False
) -> tuple[str, str]:
    """(results.json text, timeseries.csv text); the GIL released, Ctrl-C stops it.
    Example: run("s.toml", False, "s.toml", ["run.seed=2"])."""

def sweep(
    source: str,
    is_text: bool,
    file: str,
    sets: list[str],
    out: str | os.PathLike,
    jobs: int,
    check: bool = False,
) -> str:
    """sweep.csv text, the points written under `out`.
    Example: sweep("s.toml", False, "s.toml", [], "out/s", 2)."""

def compare(
    runs: list[str | os.PathLike], by: str | None = None, labels: list[str] = ...
) -> str:
    """The compare table as CSV. Example: compare(["out/a", "out/b"])."""

class PreparedSweep:
    """A sweep prepared for an outside executor (the Ray driver): DIR locked,
    sweep.json written. Example: PreparedSweep("s.toml", False, "s.toml", [], "out/s")."""

    def __init__(self, source: str, is_text: bool, file: str, sets: list[str], out: str) -> None: ...
    def __len__(self) -> int: ...
    def todo(self) -> list[tuple[int, str]]:
        """(index, label) of the points still to run."""
    def write_point(self, index: int, point_json: str, results_json: str, timeseries_csv: str) -> None: ...
    def close(self) -> None:
        """Releases DIR without finishing."""
    def finish(self, ran: int, point_time_s: float) -> str:
        """sweep.csv's text; pivot.csv written too."""

def sweep_point(
    source: str, is_text: bool, file: str, sets: list[str], index: int, check: bool = False
) -> tuple[str, str, str]:
    """(point.json, results.json, timeseries.csv) of point `index`, run here.
    Example: sweep_point(text, True, "s.toml", [], 3)."""
