//! `reclaimsim sweep`: run every point of a scenario's `[sweep]` and tabulate chosen
//! metrics.
//!
//! Points are the cartesian product of the `[[sweep.param]]` values, the first
//! parameter outermost. Each point is its own deterministic run, written to
//! `DIR/point-NNN/` (point.json, then results.json and timeseries.csv, each atomically):
//! a point whose results.json exists and whose point.json matches is complete, so an
//! interrupted sweep resumes where it stopped. Points run in parallel (rayon), one per
//! core by default. `DIR/sweep.csv` has one row per point: a column per swept key,
//! named exactly as the key, then a column per metric, named by its results.json path.

use crate::report::{self, results::Results};
use crate::scenario::{self, Scenario, Sweep};
use crate::sim::{RunOptions, Simulation};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::time::Instant;

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
}

/// What a sweep did.
#[derive(Debug)]
pub struct SweepOutcome {
    pub points: usize,
    pub ran: usize,
    pub skipped: usize,
    /// Wall time of the whole sweep and the sum of the points' own wall times (their
    /// ratio shows the parallelism).
    pub wall_s: f64,
    pub point_time_s: f64,
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
        scenario::set_key(&mut sc, k, v)?;
    }
    Ok(sc)
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
            return Err(scenario::error_at_key(path, sets, &e.key, message));
        }
    }
    Ok(())
}

/// A value as sweep.csv and point directories spell it (strings without quotes).
pub fn value_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn point_json(p: &Point) -> String {
    let values: serde_json::Map<String, serde_json::Value> = p
        .values
        .iter()
        .map(|(k, v)| (k.clone(), serde_json::Value::String(value_text(v))))
        .collect();
    let json = if p.linked.is_empty() {
        serde_json::json!({ "index": p.index, "values": values })
    } else {
        let linked: serde_json::Map<String, serde_json::Value> = p
            .linked
            .iter()
            .map(|(k, v)| (k.clone(), serde_json::Value::String(value_text(v))))
            .collect();
        serde_json::json!({ "index": p.index, "values": values, "linked": linked })
    };
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

/// A point is complete when its results.json exists and it was run with these values.
fn is_complete(dir: &Path, p: &Point) -> bool {
    dir.join("results.json").is_file()
        && std::fs::read_to_string(dir.join("point.json")).is_ok_and(|s| s == point_json(p))
}

/// Runs one point into its directory; returns its wall time in seconds.
fn run_point(base: &Scenario, out: &Path, p: &Point) -> Result<f64, SweepError> {
    let started = Instant::now();
    let err = |message: String| SweepError::Point {
        index: p.index,
        message,
    };
    let sc = point_scenario(base, p).map_err(err)?;
    let dir = point_dir(out, p);
    std::fs::create_dir_all(&dir).map_err(io(&dir))?;
    // point.json first, results.json last: results.json marks the point complete.
    let _ = std::fs::remove_file(dir.join("results.json"));
    report::write_atomic(&dir.join("point.json"), point_json(p).as_bytes()).map_err(io(&dir))?;
    let run = Simulation::new(sc)
        .run_with_series(RunOptions::default())
        .map_err(|e| err(e.to_string()))?;
    report::write_run_dir(&dir, &run.results, &run.series).map_err(io(&dir))?;
    Ok(started.elapsed().as_secs_f64())
}

/// A metric's value: the number at a dotted path in results.json, if there is one.
pub fn metric(results: &serde_json::Value, path: &str) -> Option<f64> {
    let segs: Vec<&str> = path.split('.').collect();
    walk(results, &segs)
}

/// Keys may contain dots themselves (a cgroup `workload.slice/app`): at each level the
/// longest run of segments that names a key wins.
fn walk(v: &serde_json::Value, segs: &[&str]) -> Option<f64> {
    if segs.is_empty() {
        return v.as_f64();
    }
    (1..=segs.len()).rev().find_map(|n| {
        v.get(segs[..n].join("."))
            .and_then(|next| walk(next, &segs[n..]))
    })
}

/// sweep.csv from the points' results.
pub fn sweep_csv(sw: &Sweep, points: &[Point], results: &[serde_json::Value]) -> String {
    let mut s = String::new();
    let header: Vec<&str> = sw
        .params
        .iter()
        .map(|p| p.column())
        .chain(sw.metrics.iter().map(String::as_str))
        .collect();
    s.push_str(&header.join(","));
    s.push('\n');
    for (p, r) in points.iter().zip(results) {
        let mut row: Vec<String> = p
            .values
            .iter()
            .map(|(_, v)| csv_cell(&value_text(v)))
            .collect();
        for m in &sw.metrics {
            row.push(metric(r, m).map(fmt_number).unwrap_or_default());
        }
        s.push_str(&row.join(","));
        s.push('\n');
    }
    s
}

fn csv_cell(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn fmt_number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v:.3}")
    }
}

/// Runs every incomplete point of `sc`'s sweep into `out` on `jobs` threads, then writes
/// `out/sweep.csv`.
pub fn run_sweep(sc: &Scenario, out: &Path, jobs: usize) -> Result<SweepOutcome, SweepError> {
    let sw = sc.sweep.as_ref().ok_or(SweepError::NoSweep)?;
    let started = Instant::now();
    std::fs::create_dir_all(out).map_err(io(out))?;
    let pts = points(sw);
    let todo: Vec<&Point> = pts
        .iter()
        .filter(|p| !is_complete(&point_dir(out, p), p))
        .collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .build()
        .expect("thread pool");
    let times: Vec<Result<f64, SweepError>> =
        pool.install(|| todo.par_iter().map(|p| run_point(sc, out, p)).collect());
    let mut point_time_s = 0.0;
    for t in times {
        point_time_s += t?;
    }
    let mut results = Vec::with_capacity(pts.len());
    for p in &pts {
        let path = point_dir(out, p).join("results.json");
        let text = std::fs::read_to_string(&path).map_err(io(&path))?;
        let r: Results = serde_json::from_str(&text).map_err(|e| SweepError::Point {
            index: p.index,
            message: format!("{}: {e}", path.display()),
        })?;
        results.push(serde_json::to_value(&r).expect("results serialise"));
    }
    let csv = sweep_csv(sw, &pts, &results);
    let csv_path = out.join("sweep.csv");
    report::write_atomic(&csv_path, csv.as_bytes()).map_err(io(&csv_path))?;
    let pivot = sw
        .pivot
        .as_ref()
        .map(|pv| pivot_csv(sw, pv, &pts, &results));
    if let Some(p) = &pivot {
        let path = out.join("pivot.csv");
        report::write_atomic(&path, p.as_bytes()).map_err(io(&path))?;
    }
    Ok(SweepOutcome {
        points: pts.len(),
        ran: todo.len(),
        skipped: pts.len() - todo.len(),
        wall_s: started.elapsed().as_secs_f64(),
        point_time_s,
        csv,
        pivot,
    })
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
    let mut s = header
        .iter()
        .map(|h| csv_cell(h))
        .collect::<Vec<_>>()
        .join(",");
    s.push('\n');
    for r in &rows {
        let mut row = vec![csv_cell(&value_text(r))];
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
        s.push_str(&row.join(","));
        s.push('\n');
    }
    s
}

/// sweep.csv as an aligned table for the terminal.
pub fn table(csv: &str) -> String {
    let rows: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    let ncol = rows.first().map_or(0, Vec::len);
    let widths: Vec<usize> = (0..ncol)
        .map(|c| {
            rows.iter()
                .map(|r| r.get(c).map_or(0, |s| s.len()))
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
