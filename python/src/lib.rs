//! `reclaimsim._native`: the simulator's entry points for the Python package
//! (`python/reclaimsim/__init__.py` wraps them in `load`, `run`, `sweep`, `compare`).
//!
//! A scenario crosses as its source (a file path or TOML text, the name errors and
//! provenance give it) plus its `--set` overrides, so every call loads it through
//! `reclaimsim::scenario` exactly as the CLI does: the same validation, the same
//! errors, and a run's results.json byte for byte the CLI's. Errors are raised as
//! `ScenarioError(message, file, line, key, flag)` and `SimulationError(message)`; the
//! Python layer gives them attributes.

// pyo3 0.22's #[pyfunction] expansion converts PyErr into itself.
#![allow(clippy::useless_conversion)]

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyKeyboardInterrupt};
use pyo3::prelude::*;
use reclaimsim::scenario::{self, Scenario};
use reclaimsim::sim::{RunOptions, Simulation};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

create_exception!(_native, ScenarioError, PyException);
create_exception!(_native, SimulationError, PyException);

/// How often a call that released the GIL looks for Ctrl-C.
const SIGNAL_POLL: Duration = Duration::from_millis(50);

fn scenario_error(e: scenario::ScenarioError) -> PyErr {
    let message = e.to_string();
    ScenarioError::new_err((message, e.file, e.line, e.key, e.flag))
}

fn load_scenario(source: &str, is_text: bool, file: &str, sets: &[String]) -> PyResult<Scenario> {
    let sc = if is_text {
        scenario::parse_str(source, file, sets)
    } else {
        scenario::load(Path::new(source), sets)
    }
    .map_err(scenario_error)?;
    reclaimsim::sweep::check_metrics(&sc).map_err(scenario_error)?;
    Ok(sc)
}

/// [`load_scenario`] for a sweep, refused (as the CLI refuses it) if a point cannot fit
/// in the host's memory.
fn load_sweep_scenario(
    source: &str,
    is_text: bool,
    file: &str,
    sets: &[String],
) -> PyResult<Scenario> {
    let sc = load_scenario(source, is_text, file, sets)?;
    let path = Path::new(if is_text { file } else { source });
    reclaimsim::sweep::check_host_memory(&sc, path, sets).map_err(scenario_error)?;
    Ok(sc)
}

/// Loads and validates a scenario; its resolved form as JSON (every default filled in).
#[pyfunction]
#[pyo3(signature = (source, is_text, file, sets))]
fn load(source: &str, is_text: bool, file: &str, sets: Vec<String>) -> PyResult<String> {
    let sc = load_scenario(source, is_text, file, &sets)?;
    Ok(serde_json::to_string(&sc).expect("a scenario serialises"))
}

/// Runs `work` on a thread of its own with the GIL released, looking for Ctrl-C every
/// [`SIGNAL_POLL`]: a KeyboardInterrupt sets `interrupt` (the work is to stop soon),
/// waits for it and is raised.
fn without_gil<T: Send>(
    py: Python<'_>,
    interrupt: Arc<AtomicBool>,
    work: impl FnOnce() -> T + Send,
) -> PyResult<T> {
    std::thread::scope(|s| {
        // The worker says when it is done; until then this thread wakes only every
        // SIGNAL_POLL (waking more often costs the simulation its caches).
        let done = std::sync::Arc::new((std::sync::Mutex::new(false), std::sync::Condvar::new()));
        let done_w = done.clone();
        let handle = s.spawn(move || {
            let out = work();
            *done_w.0.lock().expect("not poisoned") = true;
            done_w.1.notify_all();
            out
        });
        loop {
            let finished = py.allow_threads(|| {
                let (lock, cv) = &*done;
                let g = lock.lock().expect("not poisoned");
                let (g, _) = cv
                    .wait_timeout_while(g, SIGNAL_POLL, |d| !*d)
                    .expect("not poisoned");
                *g
            });
            if finished {
                break;
            }
            if let Err(e) = py.check_signals() {
                interrupt.store(true, Ordering::Relaxed);
                let _ = handle.join();
                return Err(e);
            }
        }
        handle
            .join()
            .map_err(|_| SimulationError::new_err("the simulation panicked"))
    })
}

/// Runs a scenario: (results.json text, timeseries.csv text), as `reclaimsim run`
/// writes them.
#[pyfunction]
#[pyo3(signature = (source, is_text, file, sets, check=false))]
fn run(
    py: Python<'_>,
    source: &str,
    is_text: bool,
    file: &str,
    sets: Vec<String>,
    check: bool,
) -> PyResult<(String, String)> {
    let sc = load_scenario(source, is_text, file, &sets)?;
    // Refused before it starts if it cannot fit in the host's memory, as the CLI does.
    let path = Path::new(if is_text { file } else { source });
    reclaimsim::host_memory::check_file(&sc, path, &sets).map_err(scenario_error)?;
    let interrupt = Arc::new(AtomicBool::new(false));
    let flag = interrupt.clone();
    let out = without_gil(py, interrupt, move || {
        reclaimsim::report::run_with_series(
            Simulation::new(sc),
            RunOptions {
                check,
                interrupt: Some(flag),
                ..Default::default()
            },
        )
    })?;
    let out = out.map_err(|e| SimulationError::new_err(e.to_string()))?;
    if out.results.interrupted {
        return Err(PyKeyboardInterrupt::new_err("the run was interrupted"));
    }
    Ok((
        reclaimsim::report::results_json(&out.results),
        out.series.to_csv(),
    ))
}

/// Runs a scenario's `[sweep]` into `out` (resuming points already complete); the
/// sweep.csv text.
#[pyfunction]
#[pyo3(signature = (source, is_text, file, sets, out, jobs, check=false))]
#[allow(clippy::too_many_arguments)]
fn sweep(
    py: Python<'_>,
    source: &str,
    is_text: bool,
    file: &str,
    sets: Vec<String>,
    out: PathBuf,
    jobs: usize,
    check: bool,
) -> PyResult<String> {
    let sc = load_sweep_scenario(source, is_text, file, &sets)?;
    let interrupt = Arc::new(AtomicBool::new(false));
    let flag = interrupt.clone();
    let outcome = without_gil(py, interrupt, move || {
        reclaimsim::sweep::run_sweep(
            &sc,
            &out,
            &reclaimsim::sweep::SweepOptions {
                jobs: jobs.max(1),
                check,
                yes: true,
                interrupt: Some(flag),
                on_plan: None,
                on_point: None,
            },
        )
    })?;
    match outcome {
        Ok(o) => Ok(o.csv),
        Err(reclaimsim::sweep::SweepError::Interrupted { .. }) => {
            Err(PyKeyboardInterrupt::new_err("the sweep was interrupted"))
        }
        Err(e) => Err(SimulationError::new_err(e.to_string())),
    }
}

/// The compare table as CSV: runs (directories or results.json files) column by
/// column, or one sweep directory by a swept key.
#[pyfunction]
#[pyo3(signature = (runs, by=None, labels=Vec::new()))]
fn compare(runs: Vec<PathBuf>, by: Option<String>, labels: Vec<String>) -> PyResult<String> {
    use reclaimsim::report::compare::{compare_paths, compare_sweep, Format};
    let out = match (&by, runs.as_slice()) {
        (Some(key), [dir]) => compare_sweep(dir, key, Format::Csv).map_err(|e| e.to_string()),
        (Some(_), _) => Err("`by` compares the points of one sweep directory".to_string()),
        (None, _) if runs.len() < 2 => {
            Err("compare needs two or more runs (or one sweep and `by`)".to_string())
        }
        (None, _) => compare_paths(&runs, &labels, Format::Csv).map_err(|e| e.to_string()),
    };
    out.map_err(SimulationError::new_err)
}

/// A sweep prepared for an outside executor (the Ray driver): its directory locked
/// and sweep.json written; points run elsewhere come back through `write_point`;
/// `finish` writes sweep.csv (and pivot.csv) and releases the directory.
#[pyclass(module = "reclaimsim._native")]
struct PreparedSweep {
    inner: Option<reclaimsim::sweep::PreparedSweep>,
}

impl PreparedSweep {
    fn get(&self) -> PyResult<&reclaimsim::sweep::PreparedSweep> {
        self.inner
            .as_ref()
            .ok_or_else(|| SimulationError::new_err("the sweep was finished"))
    }
}

#[pymethods]
impl PreparedSweep {
    #[new]
    #[pyo3(signature = (source, is_text, file, sets, out))]
    fn new(
        source: &str,
        is_text: bool,
        file: &str,
        sets: Vec<String>,
        out: PathBuf,
    ) -> PyResult<Self> {
        let sc = load_sweep_scenario(source, is_text, file, &sets)?;
        let prep = reclaimsim::sweep::prepare_sweep(&sc, &out, true)
            .map_err(|e| SimulationError::new_err(e.to_string()))?;
        Ok(PreparedSweep { inner: Some(prep) })
    }

    /// Number of points.
    fn __len__(&self) -> PyResult<usize> {
        Ok(self.get()?.points().len())
    }

    /// The points still to run: (index, `key=value ...` label).
    fn todo(&self) -> PyResult<Vec<(usize, String)>> {
        let prep = self.get()?;
        Ok(prep
            .todo()
            .into_iter()
            .map(|i| (i, reclaimsim::sweep::point_label(&prep.points()[i])))
            .collect())
    }

    /// Writes point `index`'s outputs (from `sweep_point`) into its directory.
    fn write_point(
        &self,
        index: usize,
        point_json: String,
        results_json: String,
        timeseries_csv: String,
    ) -> PyResult<()> {
        let o = reclaimsim::sweep::PointOutput {
            point_json,
            results_json,
            timeseries_csv,
        };
        self.get()?
            .write_point(index, &o)
            .map_err(|e| SimulationError::new_err(e.to_string()))
    }

    /// Releases the directory without finishing (a sweep that stopped short).
    fn close(&mut self) {
        self.inner = None;
    }

    /// Every point complete: sweep.csv's text (pivot.csv written too).
    fn finish(&mut self, ran: usize, point_time_s: f64) -> PyResult<String> {
        let prep = self
            .inner
            .take()
            .ok_or_else(|| SimulationError::new_err("the sweep was finished"))?;
        prep.finish(ran, point_time_s)
            .map(|o| o.csv)
            .map_err(|e| SimulationError::new_err(e.to_string()))
    }
}

/// Runs point `index` of a scenario's sweep (on a worker): (point.json, results.json,
/// timeseries.csv) text, for `PreparedSweep.write_point`.
#[pyfunction]
#[pyo3(signature = (source, is_text, file, sets, index, check=false))]
fn sweep_point(
    py: Python<'_>,
    source: &str,
    is_text: bool,
    file: &str,
    sets: Vec<String>,
    index: usize,
    check: bool,
) -> PyResult<(String, String, String)> {
    let sc = load_scenario(source, is_text, file, &sets)?;
    let sw = sc
        .sweep
        .as_ref()
        .ok_or_else(|| SimulationError::new_err("the scenario has no [sweep]"))?;
    let pts = reclaimsim::sweep::points(sw);
    let p = pts
        .get(index)
        .ok_or_else(|| {
            SimulationError::new_err(format!("no point {index} (the sweep has {})", pts.len()))
        })?
        .clone();
    let psc = reclaimsim::sweep::point_scenario(&sc, &p)
        .map_err(|m| SimulationError::new_err(format!("point {index}: {m}")))?;
    let interrupt = Arc::new(AtomicBool::new(false));
    let flag = interrupt.clone();
    let out = without_gil(py, interrupt, move || {
        reclaimsim::sweep::run_point_outputs(psc, &p, check, Some(flag))
    })?;
    match out {
        Ok(Some(o)) => Ok((o.point_json, o.results_json, o.timeseries_csv)),
        Ok(None) => Err(PyKeyboardInterrupt::new_err("the point was interrupted")),
        Err(e) => Err(SimulationError::new_err(e.to_string())),
    }
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PreparedSweep>()?;
    m.add_function(wrap_pyfunction!(sweep_point, m)?)?;
    m.add("ScenarioError", m.py().get_type_bound::<ScenarioError>())?;
    m.add(
        "SimulationError",
        m.py().get_type_bound::<SimulationError>(),
    )?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(sweep, m)?)?;
    m.add_function(wrap_pyfunction!(compare, m)?)?;
    Ok(())
}
