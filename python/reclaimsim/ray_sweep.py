"""Sweeps on a Ray cluster: each point a Ray task, the driver writing the same
directory as a local sweep (point-NNN/, sweep.json, sweep.csv, pivot.csv).

The driver prepares the sweep (its directory locked, sweep.json written, the points
already complete from this scenario and build skipped), sends each remaining point
to a task (the scenario's text, its overrides and the point's index: workers need no
shared filesystem unless the scenario names other files, such as a masim config or a
trace, which they then read at the same paths), writes what each returns as it
comes back, and reports progress. A point that fails (a bad value, an invariant, a
lost worker) is reported with its parameters after the others have finished; the
others' results stay, so running the sweep again runs only what is missing.

From the command line (`reclaimsim sweep SCENARIO --out DIR --ray [ADDRESS]` runs
this)::

    python -m reclaimsim.ray_sweep SCENARIO --out DIR [--address ADDRESS] [--set K=V]...
"""

from __future__ import annotations

import argparse
import io
import os
import pathlib
import sys
import time
from typing import Callable

import pandas as pd

from . import Scenario, ScenarioError, SimulationError, _native, _native_call, load

_remote = None


def _point_task():
    global _remote
    if _remote is None:
        import ray

        @ray.remote(num_cpus=1, max_retries=1)
        def run_point(text: str, file: str, sets: list[str], index: int, check: bool, fail: bool):
            import time

            from reclaimsim import _native as native

            if fail:
                raise RuntimeError("failure injected by RECLAIMSIM_RAY_FAIL_POINTS")
            # The point's own wall time, not its wait in Ray's queue.
            started = time.monotonic()
            outputs = native.sweep_point(text, True, file, sets, index, check)
            return outputs, time.monotonic() - started

        _remote = run_point
    return _remote


def _connect(address: bool | str | None, num_cpus: int | None):
    import ray

    if ray.is_initialized():
        return
    if isinstance(address, str) and address not in ("", "local"):
        ray.init(address=address, log_to_driver=False)
    else:
        ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False)


def sweep(
    scenario: Scenario,
    out: str | os.PathLike,
    address: bool | str | None = True,
    check: bool = False,
    num_cpus: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> pd.DataFrame:
    """Runs the scenario's sweep on Ray (``address``: a ``ray://`` or ``host:port``
    address, or True for a local Ray started here with ``num_cpus`` workers); the
    sweep.csv DataFrame. Raises :class:`SimulationError` naming every failed point
    and its parameters, after the rest have run.

    Example::

        df = reclaimsim.sweep(reclaimsim.load("scenarios/memcg-low-step.toml"),
                              "out/low", ray=True)
    """
    import ray  # noqa: F401  (fails here, before the directory is locked, without Ray)

    text = scenario._source if scenario._is_text else pathlib.Path(scenario._source).read_text()
    prep = _native_call(
        _native.PreparedSweep,
        scenario._source,
        scenario._is_text,
        scenario._file,
        scenario.sets,
        os.fspath(out),
    )
    try:
        return _run(prep, text, scenario, address, check, num_cpus, progress)
    finally:
        prep.close()


def _run(prep, text, scenario, address, check, num_cpus, progress) -> pd.DataFrame:
    import ray

    todo = prep.todo()
    say = progress or (lambda line: None)
    say(f"{len(prep)} points, {len(prep) - len(todo)} complete already, {len(todo)} to run on Ray")
    _connect(address, num_cpus)
    task = _point_task()
    started = time.monotonic()
    # Tests make points fail on purpose: RECLAIMSIM_RAY_FAIL_POINTS=2,5.
    fail = {int(x) for x in os.environ.get("RECLAIMSIM_RAY_FAIL_POINTS", "").split(",") if x}
    pending = {
        task.remote(text, scenario._file, scenario.sets, i, check, i in fail): (i, label)
        for i, label in todo
    }
    failures = []
    ran, point_time_s = 0, 0.0
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1)
        for ref in ready:
            i, label = pending.pop(ref)
            try:
                (point_json, results_json, series), wall = ray.get(ref)
            except Exception as e:  # a task's error, or a lost worker
                failures.append((i, label, _reason(e)))
                say(f"point {i} ({label}) failed: {_reason(e)}")
                continue
            prep.write_point(i, point_json, results_json, series)
            ran += 1
            point_time_s += wall
            say(f"[{ran}/{len(todo)}] point {i} ({label}) done")
    if failures:
        lines = "; ".join(f"point {i} ({label}): {why}" for i, label, why in failures)
        raise SimulationError(
            f"{len(failures)} of {len(todo)} points failed ({lines}); the other "
            f"{ran} are written: run the sweep again to retry the failed ones"
        )
    csv = prep.finish(ran, point_time_s)
    say(f"sweep done in {time.monotonic() - started:.2f}s")
    return pd.read_csv(io.StringIO(csv))


def _reason(e: BaseException) -> str:
    # A task's exception arrives wrapped (RayTaskError); its cause is the message.
    cause = getattr(e, "cause", None)
    if cause is not None:
        return " ".join(str(a) for a in getattr(cause, "args", [cause])[:1]) or repr(cause)
    return str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="reclaimsim sweep --ray", description=__doc__.split("\n\n")[0])
    ap.add_argument("scenario")
    ap.add_argument("--out", required=True)
    ap.add_argument("--address", default=None, help="the Ray cluster (default: a local Ray)")
    ap.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--num-cpus", type=int, default=None, help="a local Ray's workers")
    ap.add_argument("-q", "--quiet", action="store_true")
    a = ap.parse_args(argv)
    try:
        sc = load(a.scenario, set=a.sets)
        df = sweep(
            sc,
            a.out,
            address=a.address or True,
            check=a.check,
            num_cpus=a.num_cpus,
            progress=None if a.quiet else (lambda line: print(line, file=sys.stderr, flush=True)),
        )
    except ScenarioError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except SimulationError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if not a.quiet:
        print(df.to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
