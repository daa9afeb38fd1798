//! `reclaimsim sweep`: run every point of a scenario's `[sweep]` and tabulate chosen
//! metrics.
//!
//! Points are the cartesian product of the `[[sweep.param]]` values, the first
//! parameter outermost. Each point is its own deterministic run, written to
//! `DIR/point-NNN/` (point.json, then timeseries.csv and results.json, each atomically).
//! A point is complete when its results.json reads back whole and records the hash of
//! the fully resolved scenario the point would run now: an interrupted sweep resumes
//! where it stopped, and a changed scenario file or `--set` reruns every point it
//! changes. `DIR/sweep.json` lists the sweep's points; `compare` reads only those, so
//! point directories an older, larger sweep left behind are never mixed in. Points run
//! in parallel (rayon), one per core by default. `DIR/sweep.csv` has one row per point:
//! a column per swept key, named exactly as the key, then a column per metric, named
//! by its results.json path (checked against the results schema before anything runs).

use crate::report::{self, outdir::OutDir, results::Results};
use crate::scenario::{self, value_text, Scenario, Sweep};
use crate::sim::{RunOptions, Simulation};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Above this many points a sweep runs only when asked to (`--yes`).
pub const CONFIRM_POINTS: usize = 10_000;

/// One point: its index, the value of each swept key (or named dimension), and the
/// keys set along with them (`with`).
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub index: usize,
    pub values: Vec<(String, toml::Value)>,
    pub linked: Vec<(String, toml::Value)>,
    /// Columns of `values` that are names, not keys: nothing to set for them.
    pub labels: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    #[error("the scenario has no [sweep]")]
    NoSweep,
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("point {index}: {message}")]
    Point { index: usize, message: String },
    /// A point's values do not make a valid scenario.
    #[error("point {index}: {message}")]
    PointValue { index: usize, message: String },
    #[error("{points} points: more than {CONFIRM_POINTS}; pass --yes to run them all")]
    TooMany { points: usize },
    #[error(transparent)]
    OutDir(#[from] report::outdir::OutDirError),
    #[error(transparent)]
    NotASweep(#[from] report::sweep_dir::NotASweep),
    /// A sweep metric names no number in the points' results.
    #[error(transparent)]
    Metric(#[from] scenario::ScenarioError),
    #[error("interrupted: {done} of {points} points complete; run the sweep again to resume")]
    Interrupted { done: usize, points: usize },
}

impl SweepError {
    /// The user's input is at fault (exit 2) rather than the run (exit 1).
    pub fn is_input_error(&self) -> bool {
        matches!(
            self,
            SweepError::NoSweep
                | SweepError::PointValue { .. }
                | SweepError::TooMany { .. }
                | SweepError::OutDir(_)
                | SweepError::NotASweep(_)
                | SweepError::Metric(_)
        )
    }
}

/// A sweep's observer of its plan: (points, points to run).
pub type OnPlan = Box<dyn Fn(usize, usize) + Sync + Send>;
/// A sweep's observer of finished points.
pub type OnPoint = Box<dyn Fn(&PointDone) + Sync + Send>;

/// How to run a sweep.
#[derive(Default)]
pub struct SweepOptions {
    /// Points run at once.
    pub jobs: usize,
    /// Run the invariant checker in every point.
    pub check: bool,
    /// Run even more than [`CONFIRM_POINTS`] points.
    pub yes: bool,
    /// Set from outside (Ctrl-C): points not yet started are skipped, running ones end
    /// early and are not marked complete.
    pub interrupt: Option<Arc<AtomicBool>>,
    /// Told how many points there are and how many must run, before any runs.
    pub on_plan: Option<OnPlan>,
    /// Told of each point as it finishes.
    pub on_point: Option<OnPoint>,
}

/// A finished point, for progress reports.
#[derive(Debug, Clone)]
pub struct PointDone {
    pub index: usize,
    /// Points finished in this invocation, and how many it has to run.
    pub done: usize,
    pub to_run: usize,
    pub wall_s: f64,
    /// `key=value` of the point's swept values.
    pub label: String,
}

/// What a sweep did.
#[derive(Debug)]
pub struct SweepOutcome {
    pub points: usize,
    pub ran: usize,
    pub skipped: usize,
    /// `point-NNN` directories in DIR that this sweep does not list (left by an older
    /// sweep; ignored).
    pub stale_dirs: usize,
    /// Wall time of the whole sweep and the sum of the points' own wall times (their
    /// ratio shows the parallelism).
    pub wall_s: f64,
    pub point_time_s: f64,
    /// The most points that ran at once (None where the caller ran them: Python).
    pub max_in_flight: Option<usize>,
    pub csv: String,
    /// pivot.csv, if the sweep asks for one.
    pub pivot: Option<String>,
}

/// The points of a sweep, first parameter outermost.
pub fn points(sw: &Sweep) -> Vec<Point> {
    type Kv = Vec<(String, toml::Value)>;
    let mut out: Vec<(Kv, Kv)> = vec![(Vec::new(), Vec::new())];
    for p in &sw.params {
        out = out
            .into_iter()
            .flat_map(|(prefix, linked)| {
                p.values.iter().enumerate().map(move |(i, v)| {
                    let mut next = prefix.clone();
                    next.push((p.column().to_string(), v.clone()));
                    let mut linked = linked.clone();
                    for (k, vals) in &p.with {
                        linked.push((k.clone(), vals[i].clone()));
                    }
                    (next, linked)
                })
            })
            .collect();
    }
    let labels: Vec<String> = sw.params.iter().filter_map(|p| p.name.clone()).collect();
    out.into_iter()
        .enumerate()
        .map(|(index, (values, linked))| Point {
            index,
            values,
            linked,
            labels: labels.clone(),
        })
        .collect()
}

/// The scenario of one point: the base with the point's values set.
pub fn point_scenario(base: &Scenario, p: &Point) -> Result<Scenario, String> {
    let mut sc = base.clone();
    sc.sweep = None;
    for (k, v) in p
        .values
        .iter()
        .filter(|(k, _)| !p.labels.contains(k))
        .chain(&p.linked)
    {
        scenario::set_key(&mut sc, k, v).map_err(|e| format!("set {k} = {v}: {e}"))?;
        sc.source.sets.push(format!("{k}={v}"));
    }
    Ok(sc)
}

/// `key=value` for each swept value of a point, as progress lines show it.
pub fn point_label(p: &Point) -> String {
    let parts: Vec<String> = p
        .values
        .iter()
        .map(|(k, v)| format!("{k}={}", value_text(v)))
        .collect();
    parts.join(" ")
}

/// [`crate::host_memory::check`] for each point of `sc`'s sweep (loaded from `path`
/// with `sets`), before any runs: the first point that would not fit in the host's
/// memory on its own. A point whose values do not apply is left to fail when run.
pub fn check_host_memory(
    sc: &Scenario,
    path: &Path,
    sets: &[String],
) -> Result<(), scenario::ScenarioError> {
    let Some(sw) = &sc.sweep else {
        return Ok(());
    };
    for p in points(sw) {
        let Ok(point) = point_scenario(sc, &p) else {
            continue;
        };
        if let Err(e) = crate::host_memory::check(&point) {
            let message = format!("sweep point {}: {e}", p.index);
            return Err(scenario::error_at_key(path, sets, e.key(), message));
        }
    }
    Ok(())
}

/// A point's swept values (and linked keys) as point.json and sweep.json spell them.
fn point_values(p: &Point) -> serde_json::Value {
    let map = |kv: &[(String, toml::Value)]| -> serde_json::Map<String, serde_json::Value> {
        kv.iter()
            .map(|(k, v)| (k.clone(), serde_json::Value::String(value_text(v))))
            .collect()
    };
    let mut json = serde_json::json!({ "index": p.index, "values": map(&p.values) });
    if !p.linked.is_empty() {
        json["linked"] = map(&p.linked).into();
    }
    json
}

/// point.json: the point's values and the provenance of the run it is (the same
/// record results.json carries).
fn point_json(p: &Point, sc: &Scenario) -> String {
    let mut json = point_values(p);
    json["provenance"] = serde_json::json!({
        "scenario_file": sc.source.file,
        "scenario_text": sc.source.text,
        "sets": sc.source.sets,
        "seed": sc.run.seed,
        "reclaimsim_version": env!("CARGO_PKG_VERSION"),
        "scenario_hash": scenario::resolved_hash(sc),
        "build": build_id(),
    });
    let mut s = serde_json::to_string_pretty(&json).expect("point serialises");
    s.push('\n');
    s
}

fn point_dir(out: &Path, p: &Point) -> PathBuf {
    out.join(format!("point-{:03}", p.index))
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> SweepError + '_ {
    move |source| SweepError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// What identifies the program that runs points: its executable's size and
/// modification time (a rebuild changes them; None if they cannot be read, and then no
/// earlier point is reused). Not in results.json, which stays the same for the same
/// behaviour; in point.json.
pub fn build_id() -> Option<String> {
    static ID: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    ID.get_or_init(|| {
        let m = std::fs::metadata(std::env::current_exe().ok()?).ok()?;
        let t = m
            .modified()
            .ok()?
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?;
        Some(format!("{}-{}", m.len(), t.as_nanos()))
    })
    .clone()
}

/// A point's results, if its results.json reads back whole and was produced by the
/// scenario the point resolves to now (same hash) and by this build of the program
/// (point.json's `build`): anything else is run again.
fn complete_results(dir: &Path, hash: &str) -> Option<Results> {
    let point: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("point.json")).ok()?).ok()?;
    let build = build_id()?;
    if point["provenance"]["build"].as_str() != Some(build.as_str()) {
        return None;
    }
    let text = std::fs::read_to_string(dir.join("results.json")).ok()?;
    let r: Results = serde_json::from_str(&text).ok()?;
    (r.provenance.scenario_hash == hash && !r.interrupted).then_some(r)
}

pub use crate::report::results::metric;
pub use crate::report::sweep_dir::{listed_points, ListedPoint};

/// The first of `sc`'s sweep metrics that names no number in the results of any of its
/// points, as an error at its key (`sweep.metrics[1]`) in the scenario's text. A
/// scenario is checked after loading (the points must be valid scenarios first): the
/// CLI, the Python package and the sweep runner call this after `scenario::load`.
pub fn check_metrics(sc: &Scenario) -> Result<(), scenario::ScenarioError> {
    match metric_problems(sc).into_iter().next() {
        Some((key, message)) => Err(scenario::error_at(sc, &key, message)),
        None => Ok(()),
    }
}

/// Checks every metric the sweep asks for (columns and pivot) against the results
/// schema of its points: a path must name a number in at least one point's results
/// (task names, for one, differ between points that sweep a thread count). Returns
/// (scenario key, message) for each bad one, e.g. (`sweep.metrics[1]`, ...).
pub fn metric_problems(sc: &Scenario) -> Vec<(String, String)> {
    let Some(sw) = &sc.sweep else {
        return Vec::new();
    };
    let wanted: Vec<(String, &str)> = sw
        .metrics
        .iter()
        .enumerate()
        .map(|(i, m)| (format!("sweep.metrics[{i}]"), m.as_str()))
        .chain(
            sw.pivot
                .as_ref()
                .map(|p| ("sweep.pivot.metric".to_string(), p.metric.as_str())),
        )
        .collect();
    // Points that differ only in kernel settings share a schema: build each distinct
    // shape once (memory size, workloads and cgroups decide it).
    let mut schemas: Vec<(String, serde_json::Value)> = Vec::new();
    for p in points(sw) {
        let Ok(psc) = point_scenario(sc, &p) else {
            continue;
        };
        let shape = serde_json::json!([
            psc.machine.memory.0,
            psc.machine.dma32.map(|b| b.0),
            serde_json::to_value(&psc.workloads).unwrap_or_default(),
            serde_json::to_value(&psc.cgroups).unwrap_or_default(),
        ])
        .to_string();
        if !schemas.iter().any(|(s, _)| *s == shape) {
            let schema = report::results::schema(&psc);
            schemas.push((shape, schema));
        }
    }
    let mut problems = Vec::new();
    for (key, m) in wanted {
        let errs: Vec<String> = schemas
            .iter()
            .map(|(_, schema)| report::results::check_metric(schema, m))
            .take_while(Result::is_err)
            .filter_map(Result::err)
            .collect();
        if errs.len() == schemas.len() {
            if let Some(e) = errs.into_iter().next() {
                problems.push((key, e));
            }
        }
    }
    problems
}

/// CSV text of `rows` (the csv crate quotes cells holding commas, quotes or newlines).
fn to_csv(rows: &[Vec<String>]) -> String {
    let mut w = csv::WriterBuilder::new()
        .flexible(true)
        .from_writer(Vec::new());
    for r in rows {
        w.write_record(r).expect("writing CSV to memory");
    }
    String::from_utf8(w.into_inner().expect("flushing CSV to memory")).expect("CSV of UTF-8")
}

/// sweep.csv from the points' results.
pub fn sweep_csv(sw: &Sweep, points: &[Point], results: &[serde_json::Value]) -> String {
    let header: Vec<String> = sw
        .params
        .iter()
        .map(|p| p.column().to_string())
        .chain(sw.metrics.iter().cloned())
        .collect();
    let mut rows = vec![header];
    for (p, r) in points.iter().zip(results) {
        let mut row: Vec<String> = p.values.iter().map(|(_, v)| value_text(v)).collect();
        for m in &sw.metrics {
            row.push(metric(r, m).map(fmt_number).unwrap_or_default());
        }
        rows.push(row);
    }
    to_csv(&rows)
}

fn fmt_number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v:.3}")
    }
}

/// sweep.json: the sweep's points (directory, values, scenario hash), written before
/// any point runs. It is what `compare` reads, so a directory holding points of an
/// older sweep is never mistaken for this one.
fn manifest_json(sw: &Sweep, pts: &[Point], hashes: &[String]) -> String {
    let points: Vec<serde_json::Value> = pts
        .iter()
        .zip(hashes)
        .map(|(p, h)| {
            let mut v = point_values(p);
            v["dir"] = point_dir(Path::new(""), p).display().to_string().into();
            v["scenario_hash"] = h.clone().into();
            v
        })
        .collect();
    let keys: Vec<&str> = sw.params.iter().map(|p| p.column()).collect();
    let json = serde_json::json!({
        "keys": keys,
        "metrics": sw.metrics,
        "points": points,
    });
    let mut s = serde_json::to_string_pretty(&json).expect("manifest serialises");
    s.push('\n');
    s
}

/// `point-NNN` directories in `out` that are not among `pts`.
fn stale_point_dirs(out: &Path, pts: &[Point]) -> usize {
    let listed: std::collections::HashSet<PathBuf> =
        pts.iter().map(|p| point_dir(out, p)).collect();
    std::fs::read_dir(out)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with("point-"))
                        && !listed.contains(p)
                })
                .count()
        })
        .unwrap_or(0)
}

/// The number of points of `sc`'s sweep, if it has one.
pub fn size(sc: &Scenario) -> Option<usize> {
    let sw = sc.sweep.as_ref()?;
    Some(sw.params.iter().map(|p| p.values.len()).product())
}

/// How big a sweep (or a single run) is, and roughly how long it will take.
#[derive(Debug, Clone, Copy)]
pub struct Estimate {
    pub points: usize,
    /// Virtual time simulated by all points together.
    pub simulated_ns: u64,
    /// Wall time, extrapolated from a short probe of the first point at this
    /// machine's speed and spread over `jobs`: rough, since a run's speed changes as
    /// memory fills and reclaim starts.
    pub wall_s: f64,
}

/// A point's relative cost, to start the big ones first: simulated time × the tasks
/// that make it (workload threads, plus one for the kernel's threads). A guess for
/// ordering only; results do not depend on it.
fn work_estimate(sc: &Scenario) -> u64 {
    let tasks: u64 = sc
        .workloads
        .iter()
        .map(|w| crate::workload::Workload::nr_threads(w) as u64)
        .sum();
    (sc.run.duration.0 / 1_000_000).saturating_mul(tasks + 1)
}

/// Estimates `sc`'s sweep (or its single run, without `[sweep]`) by simulating the
/// first point for at most `probe_wall_s` of wall time.
pub fn estimate(sc: &Scenario, jobs: usize, probe_wall_s: f64) -> Estimate {
    let pts = sc.sweep.as_ref().map(points).unwrap_or_default();
    let n = pts.len().max(1);
    let duration_ns = sc.run.duration.0;
    let first = pts
        .first()
        .and_then(|p| point_scenario(sc, p).ok())
        .unwrap_or_else(|| {
            let mut s = sc.clone();
            s.sweep = None;
            s
        });
    // The machine's setup (a big one's page cache on a ramdisk, say) is paid once per
    // point, not per simulated second: timed apart from the probe's simulation.
    let setup_started = Instant::now();
    let sim = Simulation::new(first);
    let setup_s = setup_started.elapsed().as_secs_f64();
    let interrupt = Arc::new(AtomicBool::new(false));
    let stop = interrupt.clone();
    // A timer, not the run's progress callback: samples may be far apart in wall time.
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs_f64(probe_wall_s));
        stop.store(true, Ordering::Relaxed);
    });
    let started = Instant::now();
    let done = crate::report::run(
        sim,
        RunOptions {
            check: false,
            progress: None,
            interrupt: Some(interrupt),
            ..Default::default()
        },
    );
    let probe_s = started.elapsed().as_secs_f64().max(1e-6);
    let reached_ns = done.map_or(duration_ns, |r| r.duration_ns).max(1);
    let per_point_s = setup_s + probe_s * duration_ns as f64 / reached_ns as f64;
    let waves = n.div_ceil(jobs.max(1)) as f64;
    Estimate {
        points: n,
        simulated_ns: duration_ns.saturating_mul(n as u64),
        wall_s: per_point_s * waves,
    }
}

/// A sweep ready to run: its directory made and locked, sweep.json written, every
/// point resolved (a bad value fails here, before anything runs). The local pool
/// ([`run_sweep`]) and other executors (the Python package's Ray driver) run its
/// points and hand their outputs back ([`PreparedSweep::write_point`]), then
/// [`PreparedSweep::finish`] writes sweep.csv and pivot.csv.
pub struct PreparedSweep {
    out: PathBuf,
    sw: Sweep,
    pts: Vec<Point>,
    scenarios: Vec<Scenario>,
    hashes: Vec<String>,
    started: Instant,
    _lock: OutDir,
}

/// What one point's run produced: point.json, results.json and timeseries.csv text.
pub struct PointOutput {
    pub point_json: String,
    pub results_json: String,
    pub timeseries_csv: String,
}

/// Resolves `sc`'s sweep into `out` (see [`PreparedSweep`]).
pub fn prepare_sweep(sc: &Scenario, out: &Path, yes: bool) -> Result<PreparedSweep, SweepError> {
    let sw = sc.sweep.as_ref().ok_or(SweepError::NoSweep)?;
    let started = Instant::now();
    let pts = points(sw);
    if pts.len() > CONFIRM_POINTS && !yes {
        return Err(SweepError::TooMany { points: pts.len() });
    }
    // Resolve every point and check the metrics before anything is written or run.
    let scenarios: Vec<Scenario> = pts
        .iter()
        .map(|p| {
            point_scenario(sc, p).map_err(|message| SweepError::PointValue {
                index: p.index,
                message,
            })
        })
        .collect::<Result<_, _>>()?;
    check_metrics(sc)?;
    let hashes: Vec<String> = scenarios.iter().map(scenario::resolved_hash).collect();

    let lock = OutDir::acquire(out, &format!("sweep {}", sc.source.file))?;
    let manifest = out.join("sweep.json");
    report::write_atomic(&manifest, manifest_json(sw, &pts, &hashes).as_bytes())
        .map_err(io(&manifest))?;
    for f in ["sweep.csv", "pivot.csv"] {
        match std::fs::remove_file(out.join(f)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(out)(e)),
            _ => {}
        }
    }
    Ok(PreparedSweep {
        out: out.to_path_buf(),
        sw: sw.clone(),
        pts,
        scenarios,
        hashes,
        started,
        _lock: lock,
    })
}

impl PreparedSweep {
    pub fn points(&self) -> &[Point] {
        &self.pts
    }

    /// The points still to run: those without complete results from this scenario
    /// and build.
    pub fn todo(&self) -> Vec<usize> {
        (0..self.pts.len())
            .filter(|&i| {
                complete_results(&point_dir(&self.out, &self.pts[i]), &self.hashes[i]).is_none()
            })
            .collect()
    }

    /// Point `i`'s scenario.
    pub fn scenario(&self, i: usize) -> &Scenario {
        &self.scenarios[i]
    }

    /// Writes point `i`'s outputs into its directory: point.json first, results.json
    /// last (results.json marks the point complete).
    pub fn write_point(&self, i: usize, o: &PointOutput) -> Result<(), SweepError> {
        let dir = point_dir(&self.out, &self.pts[i]);
        clear_point_dir(&dir)?;
        report::write_atomic(&dir.join("point.json"), o.point_json.as_bytes()).map_err(io(&dir))?;
        report::write_atomic(&dir.join("timeseries.csv"), o.timeseries_csv.as_bytes())
            .map_err(io(&dir))?;
        report::write_atomic(&dir.join("results.json"), o.results_json.as_bytes()).map_err(io(&dir))
    }

    /// Every point complete: sweep.csv and pivot.csv written, the lock released.
    /// `ran` and `point_time_s` are what this invocation ran, for the summary.
    pub fn finish(self, ran: usize, point_time_s: f64) -> Result<SweepOutcome, SweepError> {
        let (out, sw, pts) = (&self.out, &self.sw, &self.pts);
        let mut results = Vec::with_capacity(pts.len());
        for (p, h) in pts.iter().zip(&self.hashes) {
            let dir = point_dir(out, p);
            let r = complete_results(&dir, h).ok_or_else(|| SweepError::Point {
                index: p.index,
                message: format!(
                    "{}: results.json missing or stale after its run",
                    dir.display()
                ),
            })?;
            results.push(serde_json::to_value(&r).expect("results serialise"));
        }
        let csv = sweep_csv(sw, pts, &results);
        let csv_path = out.join("sweep.csv");
        report::write_atomic(&csv_path, csv.as_bytes()).map_err(io(&csv_path))?;
        let pivot = sw.pivot.as_ref().map(|pv| pivot_csv(sw, pv, pts, &results));
        if let Some(p) = &pivot {
            let path = out.join("pivot.csv");
            report::write_atomic(&path, p.as_bytes()).map_err(io(&path))?;
        }
        let stale_dirs = stale_point_dirs(out, pts);
        Ok(SweepOutcome {
            points: pts.len(),
            ran,
            skipped: pts.len() - ran,
            stale_dirs,
            wall_s: self.started.elapsed().as_secs_f64(),
            point_time_s,
            max_in_flight: None,
            csv,
            pivot,
        })
    }
}

/// Runs the scenario of one point (from [`point_scenario`]); its outputs, or None if
/// interrupted.
pub fn run_point_outputs(
    sc: Scenario,
    p: &Point,
    check: bool,
    interrupt: Option<Arc<AtomicBool>>,
) -> Result<Option<PointOutput>, SweepError> {
    let point_json = point_json(p, &sc);
    let run = crate::report::run_with_series(
        Simulation::new(sc),
        RunOptions {
            check,
            progress: None,
            interrupt,
            ..Default::default()
        },
    )
    .map_err(|e| SweepError::Point {
        index: p.index,
        message: e.to_string(),
    })?;
    if run.results.interrupted {
        return Ok(None);
    }
    Ok(Some(PointOutput {
        point_json,
        results_json: report::results_json(&run.results),
        timeseries_csv: run.series.to_csv(),
    }))
}

/// Runs every incomplete point of `sc`'s sweep into `out`, then writes `out/sweep.csv`.
pub fn run_sweep(
    sc: &Scenario,
    out: &Path,
    opts: &SweepOptions,
) -> Result<SweepOutcome, SweepError> {
    let prep = prepare_sweep(sc, out, opts.yes)?;
    let todo: Vec<usize> = prep.todo();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.jobs.max(1))
        .build()
        .map_err(|e| SweepError::Io {
            path: out.to_path_buf(),
            source: std::io::Error::other(e),
        })?;
    let done = std::sync::atomic::AtomicUsize::new(0);
    let to_run = todo.len();
    if let Some(f) = &opts.on_plan {
        f(prep.pts.len(), to_run);
    }
    let interrupted = || {
        opts.interrupt
            .as_ref()
            .is_some_and(|i| i.load(Ordering::Relaxed))
    };
    // Longest first (by `work_estimate`), each worker taking the next point when it is
    // free: rayon's halving would give one worker the first half of the points and
    // the other the second, which for a sweep whose points grow (stutterp's 4 to 16
    // workers) leaves one core with all the big ones.
    let mut todo = todo;
    todo.sort_by_key(|&i| (std::cmp::Reverse(work_estimate(prep.scenario(i))), i));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let (in_flight, max_in_flight) = (
        std::sync::atomic::AtomicUsize::new(0),
        std::sync::atomic::AtomicUsize::new(0),
    );
    // A point's outcome: its wall time (None if interrupted before it ran), or why not.
    type Outcome = Result<Option<f64>, SweepError>;
    let slots: Vec<std::sync::Mutex<Option<Outcome>>> =
        todo.iter().map(|_| std::sync::Mutex::new(None)).collect();
    let run_point = |k: usize| -> Outcome {
        let i = todo[k];
        let p = &prep.pts[i];
        let started = Instant::now();
        let dir = point_dir(out, p);
        // A point about to rerun loses its old results first: a run that fails
        // leaves nothing that looks complete.
        clear_point_dir(&dir)?;
        let Some(o) = run_point_outputs(
            prep.scenario(i).clone(),
            p,
            opts.check,
            opts.interrupt.clone(),
        )?
        else {
            return Ok(None);
        };
        prep.write_point(i, &o)?;
        let wall_s = started.elapsed().as_secs_f64();
        if let Some(f) = &opts.on_point {
            f(&PointDone {
                index: p.index,
                done: done.fetch_add(1, Ordering::Relaxed) + 1,
                to_run,
                wall_s,
                label: point_label(p),
            });
        }
        Ok(Some(wall_s))
    };
    // Counts the points running at once, for the outcome.
    let run_one = |k: usize| -> Outcome {
        if interrupted() {
            return Ok(None);
        }
        let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        max_in_flight.fetch_max(now, Ordering::SeqCst);
        let outcome = run_point(k);
        in_flight.fetch_sub(1, Ordering::SeqCst);
        outcome
    };
    pool.scope(|s| {
        for _ in 0..opts.jobs.max(1).min(todo.len()) {
            s.spawn(|_| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                if k >= todo.len() {
                    break;
                }
                *slots[k].lock().expect("not poisoned") = Some(run_one(k));
            });
        }
    });
    let times: Vec<Outcome> = slots
        .into_iter()
        .map(|s| s.into_inner().expect("not poisoned").unwrap_or(Ok(None)))
        .collect();
    let mut point_time_s = 0.0;
    let mut ran = 0;
    for t in times {
        if let Some(s) = t? {
            point_time_s += s;
            ran += 1;
        }
    }
    if ran < to_run {
        return Err(SweepError::Interrupted {
            done: prep.pts.len() - to_run + ran,
            points: prep.pts.len(),
        });
    }
    let mut o = prep.finish(ran, point_time_s)?;
    o.max_in_flight = Some(max_in_flight.into_inner());
    Ok(o)
}

/// Makes a point's directory and removes its earlier run's files.
fn clear_point_dir(dir: &Path) -> Result<(), SweepError> {
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    for f in report::RUN_FILES {
        match std::fs::remove_file(dir.join(f)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(dir)(e)),
            _ => {}
        }
    }
    Ok(())
}

/// The pivot table: a row per value of `rows` (in sweep order), a column per value of
/// `columns` (the metric, averaged over any other swept keys), then `% of <baseline>`
/// for every other column.
pub fn pivot_csv(
    sw: &Sweep,
    pv: &crate::scenario::Pivot,
    points: &[Point],
    results: &[serde_json::Value],
) -> String {
    let values_of = |key: &str| {
        sw.params
            .iter()
            .find(|p| p.column() == key)
            .map(|p| p.values.clone())
            .unwrap_or_default()
    };
    let (rows, cols) = (values_of(&pv.rows), values_of(&pv.columns));
    let cell = |r: &toml::Value, c: &toml::Value| -> Option<f64> {
        let vals: Vec<f64> = points
            .iter()
            .zip(results)
            .filter(|(p, _)| {
                p.values.iter().any(|(k, v)| k == &pv.rows && v == r)
                    && p.values.iter().any(|(k, v)| k == &pv.columns && v == c)
            })
            .filter_map(|(_, res)| metric(res, &pv.metric))
            .collect();
        (!vals.is_empty()).then(|| vals.iter().sum::<f64>() / vals.len() as f64)
    };
    let others: Vec<&toml::Value> = cols.iter().filter(|c| **c != pv.baseline).collect();
    let mut header = vec![pv.rows.clone()];
    header.extend(
        cols.iter()
            .map(|c| format!("{} {}", value_text(c), pv.metric)),
    );
    header.extend(
        others
            .iter()
            .map(|c| format!("{} % of {}", value_text(c), value_text(&pv.baseline))),
    );
    let mut table = vec![header];
    for r in &rows {
        let mut row = vec![value_text(r)];
        row.extend(
            cols.iter()
                .map(|c| cell(r, c).map(fmt_number).unwrap_or_default()),
        );
        let base = cell(r, &pv.baseline);
        for c in &others {
            let pct = match (cell(r, c), base) {
                (Some(v), Some(b)) if b != 0.0 => format!("{:.1}", 100.0 * v / b),
                _ => String::new(),
            };
            row.push(pct);
        }
        table.push(row);
    }
    to_csv(&table)
}

/// sweep.csv as an aligned table for the terminal. Cells are read back with the csv
/// crate, so quoted cells holding commas stay one column; rows of another width are
/// shown as they are rather than trusted to line up.
pub fn table(csv_text: &str) -> String {
    let rows: Vec<Vec<String>> = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(csv_text.as_bytes())
        .records()
        .filter_map(Result::ok)
        .map(|r| r.iter().map(str::to_string).collect())
        .collect();
    let ncol = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..ncol)
        .map(|c| {
            rows.iter()
                .map(|r| r.get(c).map_or(0, |s| s.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut s = String::new();
    for r in &rows {
        let cells: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(c, v)| format!("{v:>w$}", w = widths[c]))
            .collect();
        s.push_str(cells.join("  ").trim_end());
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::SweepParam;

    #[test]
    fn points_are_the_cartesian_product_first_outermost() {
        let sw = Sweep {
            pivot: None,
            metrics: vec![],
            params: vec![
                SweepParam {
                    key: "a".into(),
                    name: None,
                    values: vec![toml::Value::Integer(1), toml::Value::Integer(2)],
                    with: [("c".to_string(), vec!["p".into(), "q".into()])].into(),
                },
                SweepParam {
                    key: "b".into(),
                    name: None,
                    values: vec!["x".into(), "y".into(), "z".into()],
                    with: Default::default(),
                },
            ],
        };
        let p = points(&sw);
        assert_eq!(p.len(), 6);
        let spelled: Vec<String> = p
            .iter()
            .map(|p| {
                p.values
                    .iter()
                    .map(|(_, v)| value_text(v))
                    .collect::<Vec<_>>()
                    .join("")
            })
            .collect();
        assert_eq!(spelled, ["1x", "1y", "1z", "2x", "2y", "2z"]);
        assert_eq!(p[4].index, 4);
        // `with` keys follow their parameter's value, adding no dimension.
        let linked: Vec<String> = p.iter().map(|p| value_text(&p.linked[0].1)).collect();
        assert_eq!(linked, ["p", "p", "p", "q", "q", "q"]);
    }

    #[test]
    fn metric_paths_walk_the_json() {
        let v = serde_json::json!({"vmstat": {"pgscan_direct": 7}, "workloads": {"db": {"latency_ns": {"p99": 1.5}}}});
        assert_eq!(metric(&v, "vmstat.pgscan_direct"), Some(7.0));
        assert_eq!(metric(&v, "workloads.db.latency_ns.p99"), Some(1.5));
        assert_eq!(metric(&v, "vmstat.nope"), None);
        let v = serde_json::json!({"cgroups": {"workload.slice/app": {"memory": {"stat": {"pgscan": 3}}}}});
        assert_eq!(
            metric(&v, "cgroups.workload.slice/app.memory.stat.pgscan"),
            Some(3.0)
        );
    }
}
