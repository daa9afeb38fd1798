//! `reclaimsim plot`: charts of a run or a sweep, as SVG (plotters) and PNG (the SVG
//! rendered by resvg with an embedded DejaVu font, so no system fonts are needed).
//!
//! A run directory (results.json + timeseries.csv) gets memory by type over time, scan
//! and steal rates over time, PSI over time and the workloads' latency CDFs. A sweep
//! directory (sweep.csv) gets one chart per metric against the first swept key, one
//! line per combination of the other keys. A `reclaimsim cache --json` file gets its
//! miss ratio curve (`report::mrc`).
//!
//! Charts are described in base units (bytes, nanoseconds, counts); drawing picks the
//! unit each axis is labelled in from the data's range, lays out the tick labels from
//! their measured width (DejaVu metrics, the font the PNG is rendered with), switches a
//! y axis to log scale when its series are orders of magnitude apart, and puts the
//! legend beside the plot, with at most `TOP_N` named series.

use super::results::Results;
use crate::scenario::units::{parse_size, parse_time, PAGE_SIZE};
use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, Ranged, ValueFormatter};
use plotters::prelude::*;
use std::ops::Range;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    #[error(
        "{0}: not a run directory (results.json + timeseries.csv), a sweep directory (sweep.csv) or a `reclaimsim cache --json` file"
    )]
    NotARun(PathBuf),
    #[error("{path}: {message}")]
    Read { path: PathBuf, message: String },
    /// A malformed CSV file: the line (1 is the header) and what is wrong with it.
    #[error("{path}:{line}: {message}")]
    Csv {
        path: PathBuf,
        line: u64,
        message: String,
    },
    #[error("drawing {path}: {message}")]
    Draw { path: PathBuf, message: String },
    /// A damo record that is not one (the error names the file).
    #[error(transparent)]
    Record(#[from] crate::trace::TraceError),
}

const W: u32 = 960;
const H: u32 = 540;
/// Series a legend names; the rest are folded into one "other" entry.
pub const TOP_N: usize = 8;
/// Per-series maxima further apart than this put the y axis on a log scale.
const LOG_RATIO: f64 = 100.0;
const FONT: &str = "sans-serif";
const LABEL_PX: f64 = 16.0;
const DESC_PX: f64 = 18.0;
const TITLE_PX: f64 = 26.0;

/// One line of a chart, in the chart's base units.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// Drawn grey: part of the "other" entry of a folded legend.
    pub other: bool,
}

impl Series {
    pub fn new(name: &str, points: Vec<(f64, f64)>) -> Series {
        Series {
            name: name.to_string(),
            points,
            other: false,
        }
    }

    fn max_y(&self) -> f64 {
        self.points.iter().map(|p| p.1).fold(0.0, f64::max)
    }
}

/// What an axis measures: decides the unit it is labelled in.
#[derive(Debug, Clone, PartialEq)]
pub enum Quantity {
    /// Bytes: B, KiB, MiB, GiB, TiB.
    Bytes,
    BytesPerSec,
    /// Nanoseconds: ns, µs, ms, s.
    Nanos,
    /// A count of the named things ("pages/s"; "" for a bare count): k, M, G.
    Count(String),
    Percent,
    /// A number shown as it is.
    Plain,
}

/// How an axis places its values and ticks.
#[derive(Debug, Clone, PartialEq)]
pub enum Scale {
    Linear,
    Log,
    /// A swept numeric key: ticks at the swept values where they fit, else round
    /// ticks (whole numbers only if `integer`).
    Values {
        integer: bool,
    },
    /// Non-numeric values, evenly spaced in this order at 0, 1, 2...
    Categories(Vec<String>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    pub name: String,
    pub quantity: Quantity,
    pub scale: Scale,
    /// A fixed range in base units (a CDF's 0..1); else the data's.
    pub range: Option<(f64, f64)>,
}

impl Axis {
    pub fn new(name: &str, quantity: Quantity, scale: Scale) -> Axis {
        Axis {
            name: name.to_string(),
            quantity,
            scale,
            range: None,
        }
    }
}

/// A line chart: what every plot here is.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    pub file: String,
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    pub series: Vec<Series>,
    /// Switch a linear y axis to log scale when the series are orders of magnitude apart.
    pub auto_log_y: bool,
    /// Mark each data point (sweeps: a line may have a single point).
    pub markers: bool,
    /// What the legend's entries are values of (a sweep's other keys).
    pub legend_title: Option<String>,
}

/// Writes the charts for `dir` into `dir/plots/` (a file: `reclaimsim cache
/// --json`'s, its miss ratio curve into plots/ beside it); returns the files written.
pub fn plot_dir(dir: &Path) -> Result<Vec<PathBuf>, PlotError> {
    if dir.is_file() {
        return super::mrc::plot_file(dir).map(Vec::from);
    }
    let DirCharts { charts, heatmaps } = dir_charts(dir)?;
    let out = dir.join("plots");
    std::fs::create_dir_all(&out).map_err(|e| read_err(&out, e))?;
    let mut written = Vec::new();
    for c in &charts {
        written.extend(write_svg_png(&out, &c.file, || draw_svg(c))?);
    }
    for h in &heatmaps {
        written.extend(write_svg_png(&out, &h.file, || {
            super::heatmap::draw_svg(h)
        })?);
    }
    Ok(written)
}

/// The charts of a run or sweep directory, as `plot` draws them and `report` inlines
/// them.
pub struct DirCharts {
    /// A sweep's charts, or a run's (memory, reclaim rates, PSI, latency CDF, and
    /// DAMON's working-set size when the run was recorded with --damon-record).
    pub charts: Vec<Chart>,
    /// DAMON's access heatmaps of a run recorded with --damon-record.
    pub heatmaps: Vec<super::heatmap::Heatmap>,
}

/// The charts of `dir`: a sweep's (sweep.csv) or a run's (results.json and
/// timeseries.csv, and damon.data if recorded).
pub fn dir_charts(dir: &Path) -> Result<DirCharts, PlotError> {
    let mut heatmaps = Vec::new();
    let mut charts = if dir.join("sweep.csv").is_file() {
        // sweep.json says how many leading columns are swept keys; a sweep.csv alone
        // is split where the results.json paths begin.
        let nkeys = super::sweep_dir::listed_points(dir)
            .ok()
            .and_then(|p| p.first().map(|p| p.values.len()));
        sweep_charts(&read_csv(&dir.join("sweep.csv"))?, nkeys)?
    } else if dir.join("results.json").is_file() && dir.join("timeseries.csv").is_file() {
        let path = dir.join("results.json");
        let text = std::fs::read_to_string(&path).map_err(|e| read_err(&path, e))?;
        let results: Results = serde_json::from_str(&text).map_err(|e| read_err(&path, e))?;
        let ts = Timeseries::from_csv(&read_csv(&dir.join("timeseries.csv"))?)?;
        run_charts(&ts, &results)
    } else {
        // A sweep writes sweep.csv when its last point has run.
        let unfinished = super::sweep_dir::listed_points(dir)
            .ok()
            .and_then(|points| super::sweep_dir::unfinished(&points));
        return Err(match unfinished {
            Some(message) => PlotError::Read {
                path: dir.to_path_buf(),
                message,
            },
            None => PlotError::NotARun(dir.to_path_buf()),
        });
    };
    // A run recorded with --damon-record: DAMON's heatmaps and working-set size.
    let record = dir.join("damon.data");
    if !dir.join("sweep.csv").is_file() && record.is_file() {
        let (maps, wss) = super::heatmap::charts(&record)?;
        heatmaps = maps;
        charts.push(wss);
    }
    Ok(DirCharts { charts, heatmaps })
}

/// Draws one chart to out/FILE.svg and out/FILE.png; returns both paths.
pub(crate) fn write_svg_png(
    out: &Path,
    file: &str,
    draw: impl FnOnce() -> Result<String, String>,
) -> Result<[PathBuf; 2], PlotError> {
    let svg_path = out.join(format!("{file}.svg"));
    let draw_err = |path: &Path| {
        let path = path.to_path_buf();
        move |message| PlotError::Draw { path, message }
    };
    let svg = draw().map_err(draw_err(&svg_path))?;
    super::write_atomic(&svg_path, svg.as_bytes()).map_err(|e| read_err(&svg_path, e))?;
    let png_path = out.join(format!("{file}.png"));
    let png = svg_to_png(&svg).map_err(draw_err(&png_path))?;
    super::write_atomic(&png_path, &png).map_err(|e| read_err(&png_path, e))?;
    Ok([svg_path, png_path])
}

pub(crate) fn read_err(path: &Path, e: impl std::fmt::Display) -> PlotError {
    PlotError::Read {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

// ---------------------------------------------------------------- reading the CSVs

/// A CSV file with a header row.
pub struct Csv {
    pub path: PathBuf,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// The line each row starts on (the header is line 1).
    pub lines: Vec<u64>,
}

impl Csv {
    fn error(&self, line: u64, message: String) -> PlotError {
        PlotError::Csv {
            path: self.path.clone(),
            line,
            message,
        }
    }

    /// The number in row `row`, column `col`; an error naming the line and column if the
    /// cell is not a finite number.
    fn number(&self, row: usize, col: usize) -> Result<f64, PlotError> {
        let cell = &self.rows[row][col];
        match cell.trim().parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err(self.error(
                self.lines[row],
                format!(
                    "column `{}`: `{}` is not a number",
                    printable(&self.header[col]),
                    printable(cell)
                ),
            )),
        }
    }
}

/// Reads a CSV file: quoted cells may hold commas; every row must have the header's
/// number of fields.
pub fn read_csv(path: &Path) -> Result<Csv, PlotError> {
    let file = std::fs::File::open(path).map_err(|e| read_err(path, e))?;
    parse_csv(path, file)
}

fn parse_csv(path: &Path, input: impl std::io::Read) -> Result<Csv, PlotError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(input);
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| csv_error(path, &e))?
        .iter()
        .map(str::to_string)
        .collect();
    if header.is_empty() {
        return Err(PlotError::Csv {
            path: path.to_path_buf(),
            line: 1,
            message: "empty file: no header line".into(),
        });
    }
    let mut rows = Vec::new();
    let mut lines = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| csv_error(path, &e))?;
        lines.push(record.position().map_or(0, |p| p.line()));
        rows.push(record.iter().map(str::to_string).collect());
    }
    Ok(Csv {
        path: path.to_path_buf(),
        header,
        rows,
        lines,
    })
}

fn csv_error(path: &Path, e: &csv::Error) -> PlotError {
    let message = match e.kind() {
        csv::ErrorKind::Io(io) => return read_err(path, io),
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => format!("{len} fields, but the header has {expected_len}"),
        csv::ErrorKind::Utf8 { .. } => "not valid UTF-8".to_string(),
        _ => e.to_string(),
    };
    PlotError::Csv {
        path: path.to_path_buf(),
        line: e.position().map_or(0, |p| p.line()),
        message,
    }
}

/// timeseries.csv as numbers: a column per header name.
pub struct Timeseries {
    pub header: Vec<String>,
    pub columns: Vec<Vec<f64>>,
}

/// The columns the run charts draw (stats::series::COLUMNS writes them all).
const TIMESERIES_COLUMNS: [&str; 18] = [
    "time_s",
    "nr_free_pages",
    "nr_inactive_anon",
    "nr_active_anon",
    "nr_inactive_file",
    "nr_active_file",
    "nr_dirty",
    "zram_pool_pages",
    "pgscan_kswapd_per_s",
    "pgscan_direct_per_s",
    "pgsteal_kswapd_per_s",
    "pgsteal_direct_per_s",
    "pswpin_per_s",
    "pswpout_per_s",
    "workingset_refault_anon_per_s",
    "workingset_refault_file_per_s",
    "psi_some_pct",
    "psi_full_pct",
];

impl Timeseries {
    /// Checks that the columns the charts need are there and every cell is a number.
    pub fn from_csv(csv: &Csv) -> Result<Timeseries, PlotError> {
        if let Some(missing) = TIMESERIES_COLUMNS
            .iter()
            .find(|c| !csv.header.iter().any(|h| h == *c))
        {
            return Err(csv.error(1, format!("missing column `{missing}`")));
        }
        let mut columns = vec![Vec::with_capacity(csv.rows.len()); csv.header.len()];
        for row in 0..csv.rows.len() {
            for (col, values) in columns.iter_mut().enumerate() {
                values.push(csv.number(row, col)?);
            }
        }
        Ok(Timeseries {
            header: csv.header.clone(),
            columns,
        })
    }

    fn column(&self, name: &str) -> &[f64] {
        self.header
            .iter()
            .position(|h| h == name)
            .map_or(&[], |c| &self.columns[c])
    }

    /// (time in ns, the sum of the named columns times `scale`) per row.
    fn points(&self, names: &[&str], scale: f64) -> Vec<(f64, f64)> {
        let time = self.column("time_s");
        (0..time.len())
            .map(|i| {
                let sum: f64 = names
                    .iter()
                    .map(|n| self.column(n).get(i).copied().unwrap_or(0.0))
                    .sum();
                (time[i] * 1e9, sum * scale)
            })
            .collect()
    }
}

// ---------------------------------------------------------------- the charts of a run

fn time_axis() -> Axis {
    Axis::new("time", Quantity::Nanos, Scale::Linear)
}

/// The charts of one run.
pub fn run_charts(ts: &Timeseries, r: &Results) -> Vec<Chart> {
    vec![
        memory_chart(ts),
        reclaim_chart(ts),
        psi_chart(ts),
        latency_chart(r),
    ]
}

fn memory_chart(ts: &Timeseries) -> Chart {
    let page = PAGE_SIZE as f64;
    let mut series = vec![
        Series::new("free", ts.points(&["nr_free_pages"], page)),
        Series::new(
            "anon",
            ts.points(&["nr_inactive_anon", "nr_active_anon"], page),
        ),
        Series::new(
            "file",
            ts.points(&["nr_inactive_file", "nr_active_file"], page),
        ),
        Series::new("dirty", ts.points(&["nr_dirty"], page)),
        Series::new("zram pool", ts.points(&["zram_pool_pages"], page)),
    ];
    let cgroups: Vec<Series> = ts
        .header
        .iter()
        .filter_map(|h| h.strip_prefix("memory.current:").map(|p| (h, p)))
        .map(|(h, p)| Series::new(&format!("cgroup {p}"), ts.points(&[h], page)))
        .collect();
    // Five node-wide lines leave room for this many cgroups before "other".
    series.extend(top_n(cgroups, TOP_N - 3, Fold::Sum, "cgroups"));
    Chart {
        file: "memory".into(),
        title: "Memory by type and cgroup".into(),
        x: time_axis(),
        y: Axis::new("memory", Quantity::Bytes, Scale::Linear),
        series,
        auto_log_y: true,
        markers: false,
        legend_title: None,
    }
}

fn reclaim_chart(ts: &Timeseries) -> Chart {
    let rates = [
        "pgscan_kswapd",
        "pgscan_direct",
        "pgsteal_kswapd",
        "pgsteal_direct",
        "pswpin",
        "pswpout",
        "workingset_refault_anon",
        "workingset_refault_file",
    ];
    Chart {
        file: "reclaim".into(),
        title: "Scan and steal rates".into(),
        x: time_axis(),
        y: Axis::new("rate", Quantity::Count("pages/s".into()), Scale::Linear),
        series: rates
            .iter()
            .map(|n| Series::new(n, ts.points(&[&format!("{n}_per_s")], 1.0)))
            .collect(),
        auto_log_y: true,
        markers: false,
        legend_title: None,
    }
}

/// PSI some and full; when they coincide (every task that stalled stalled them all),
/// one line says so instead of one hiding the other.
fn psi_chart(ts: &Timeseries) -> Chart {
    let some = ts.points(&["psi_some_pct"], 1.0);
    let full = ts.points(&["psi_full_pct"], 1.0);
    let series = if some == full {
        vec![Series::new("some = full", some)]
    } else {
        vec![Series::new("some", some), Series::new("full", full)]
    };
    Chart {
        file: "psi".into(),
        title: "Memory pressure (PSI)".into(),
        x: time_axis(),
        y: Axis::new("time stalled", Quantity::Percent, Scale::Linear),
        series,
        auto_log_y: false,
        markers: false,
        legend_title: None,
    }
}

fn latency_chart(r: &Results) -> Chart {
    let series: Vec<Series> = r
        .workloads
        .iter()
        .filter(|(_, w)| !w.latency_ns.cdf.is_empty())
        .map(|(name, w)| Series::new(name, cdf_steps(&w.latency_ns.cdf)))
        .collect();
    let mut y = Axis::new("fraction of operations", Quantity::Plain, Scale::Linear);
    y.range = Some((0.0, 1.0));
    Chart {
        file: "latency".into(),
        title: "Latency CDF".into(),
        x: Axis::new("latency", Quantity::Nanos, Scale::Log),
        y,
        // The slowest workloads are the ones to name.
        series: top_n(series, TOP_N, Fold::Grey, "workloads"),
        auto_log_y: false,
        markers: false,
        legend_title: None,
    }
}

/// A CDF sampled at quantiles, as the step function it is: the fraction at or below a
/// latency stays at the last quantile's until the next quantile's latency. Latencies
/// are at least 1 ns (the axis is logarithmic).
pub fn cdf_steps(cdf: &[(u64, f64)]) -> Vec<(f64, f64)> {
    let mut points: Vec<(f64, f64)> = Vec::with_capacity(cdf.len() * 2);
    for &(latency_ns, fraction) in cdf {
        let x = (latency_ns as f64).max(1.0);
        if let Some(&(_, below)) = points.last() {
            points.push((x, below));
        }
        points.push((x, fraction));
    }
    points
}

/// How the series beyond the top N are shown.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fold {
    /// One line, their sum at each x (parts of a whole: cgroups' memory).
    Sum,
    /// Each drawn thin and grey under one legend entry (lines that do not add up).
    Grey,
}

/// Keeps the `n` largest series (by their peak; the order among them kept) and folds
/// the rest into "other (K `what`)".
pub fn top_n(series: Vec<Series>, n: usize, fold: Fold, what: &str) -> Vec<Series> {
    if series.len() <= n {
        return series;
    }
    let mut by_size: Vec<usize> = (0..series.len()).collect();
    by_size.sort_by(|&a, &b| series[b].max_y().total_cmp(&series[a].max_y()));
    let keep: Vec<bool> = {
        let mut keep = vec![false; series.len()];
        by_size[..n].iter().for_each(|&i| keep[i] = true);
        keep
    };
    let name = format!("other ({} {what})", series.len() - n);
    let (mut kept, mut rest) = (Vec::new(), Vec::new());
    for (s, k) in series.into_iter().zip(keep) {
        if k {
            kept.push(s);
        } else {
            rest.push(s);
        }
    }
    match fold {
        Fold::Sum => kept.push(Series {
            name,
            points: sum_points(&rest),
            other: true,
        }),
        Fold::Grey => kept.extend(rest.into_iter().map(|s| Series {
            name: name.clone(),
            points: s.points,
            other: true,
        })),
    }
    kept
}

/// The sum of several series at each x any of them has.
fn sum_points(series: &[Series]) -> Vec<(f64, f64)> {
    let mut all: Vec<(f64, f64)> = series.iter().flat_map(|s| s.points.clone()).collect();
    all.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out: Vec<(f64, f64)> = Vec::new();
    for (x, y) in all {
        match out.last_mut() {
            Some(last) if last.0 == x => last.1 += y,
            _ => out.push((x, y)),
        }
    }
    out
}

// ---------------------------------------------------------------- the charts of a sweep

/// Top-level sections of results.json: a sweep.csv column starting with one is a
/// metric, the columns before the first metric are the swept keys.
const RESULT_ROOTS: [&str; 9] = [
    "vmstat.",
    "workloads.",
    "tasks.",
    "reclaim.",
    "reclaim_throttle.",
    "psi.",
    "swap.",
    "zones.",
    "cgroups.",
];

fn is_metric(column: &str) -> bool {
    RESULT_ROOTS.iter().any(|r| column.starts_with(r)) || column == "duration_ns"
}

/// How a swept key's values are drawn.
#[derive(Debug, Clone, PartialEq)]
enum KeyKind {
    Integer,
    Number,
    /// Sizes ("553M", "0"), drawn in bytes.
    Size,
    /// Times ("5ms", "2s"), drawn in ns.
    Time,
    /// Anything else (strings, arrays), in sweep order.
    Categories(Vec<String>),
}

fn key_kind(values: &[&str]) -> KeyKind {
    let all = |f: &dyn Fn(&str) -> bool| values.iter().all(|v| f(v));
    if all(&|v| v.parse::<i64>().is_ok()) {
        KeyKind::Integer
    } else if all(&|v| v.parse::<f64>().is_ok_and(f64::is_finite)) {
        KeyKind::Number
    } else if all(&|v| parse_size(v).is_ok()) {
        KeyKind::Size
    } else if all(&|v| parse_time(v).is_ok()) {
        KeyKind::Time
    } else {
        let mut order: Vec<String> = Vec::new();
        for v in values {
            if !order.iter().any(|o| o == v) {
                order.push(v.to_string());
            }
        }
        KeyKind::Categories(order)
    }
}

impl KeyKind {
    /// Where a value sits on the axis (base units, or the category's index).
    fn position(&self, v: &str) -> f64 {
        match self {
            KeyKind::Integer | KeyKind::Number => v.parse().unwrap_or(0.0),
            KeyKind::Size => parse_size(v).map_or(0.0, |b| b as f64),
            KeyKind::Time => parse_time(v).map_or(0.0, |ns| ns as f64),
            KeyKind::Categories(c) => c.iter().position(|c| c == v).unwrap_or(0) as f64,
        }
    }

    fn axis(&self, name: &str) -> Axis {
        let (quantity, scale) = match self {
            KeyKind::Integer => (Quantity::Plain, Scale::Values { integer: true }),
            KeyKind::Number => (Quantity::Plain, Scale::Values { integer: false }),
            KeyKind::Size => (Quantity::Bytes, Scale::Values { integer: false }),
            KeyKind::Time => (Quantity::Nanos, Scale::Values { integer: false }),
            KeyKind::Categories(c) => (Quantity::Plain, Scale::Categories(c.clone())),
        };
        Axis::new(name, quantity, scale)
    }
}

/// What a results.json metric measures, and the factor to its base unit.
fn metric_quantity(path: &str) -> (Quantity, f64) {
    let last = path.rsplit('.').next().unwrap_or(path);
    let cgroup_bytes = path.starts_with("cgroups.")
        && !path.contains(".events.")
        && (matches!(last, "current" | "peak" | "min" | "low" | "high" | "max")
            || path.contains(".peak_by_fd.")
            || (path.contains(".stat.")
                && !last.starts_with("pg")
                && !last.starts_with("workingset")));
    let psi = path.starts_with("psi.") || path.contains(".pressure.");
    if psi && last == "total" {
        (Quantity::Nanos, 1e3) // PSI totals are microseconds
    } else if psi && last.starts_with("avg") {
        (Quantity::Percent, 1.0)
    } else if path.ends_with("_ns") || path.contains("_ns.") {
        (Quantity::Nanos, 1.0)
    } else if last == "bytes_per_sec" {
        (Quantity::BytesPerSec, 1.0)
    } else if cgroup_bytes
        || last.ends_with("_bytes")
        || matches!(
            last,
            "orig_data_size" | "compr_data_size" | "mem_used_total"
        )
    {
        (Quantity::Bytes, 1.0)
    } else if last == "throughput" {
        (Quantity::Count("ops/s".into()), 1.0)
    } else if last.ends_with("_per_sec") || last.ends_with("_per_s") {
        (Quantity::Count("/s".into()), 1.0)
    } else if last.ends_with("_pages") || path.starts_with("vmstat.nr_") {
        (Quantity::Count("pages".into()), 1.0)
    } else {
        (Quantity::Count(String::new()), 1.0)
    }
}

/// One chart per metric of a sweep: the metric against the first swept key, a line per
/// combination of the others. sweep.csv puts the swept keys before the metrics: the
/// first `nkeys` columns (from sweep.json), or, not given, those before the first
/// results.json path.
pub fn sweep_charts(csv: &Csv, nkeys: Option<usize>) -> Result<Vec<Chart>, PlotError> {
    let nkeys = nkeys
        .filter(|&n| n <= csv.header.len())
        .unwrap_or_else(|| csv.header.iter().take_while(|h| !is_metric(h)).count());
    if nkeys == 0 {
        return Err(csv.error(1, "no swept key before the metric columns".into()));
    }
    if nkeys == csv.header.len() {
        return Err(csv.error(
            1,
            "no metric column (a results.json path such as `vmstat.pgscan_kswapd`)".into(),
        ));
    }
    let firsts: Vec<&str> = csv.rows.iter().map(|r| r[0].as_str()).collect();
    let kind = key_kind(&firsts);
    // A line's name: its values of the other keys (the legend's title names the keys).
    let variant = |row: &[String]| -> String { row[1..nkeys].join(" / ") };
    let mut files: Vec<String> = Vec::new();
    let mut charts = Vec::new();
    for m in nkeys..csv.header.len() {
        let metric = &csv.header[m];
        let (quantity, to_base) = metric_quantity(metric);
        let mut series: Vec<Series> = Vec::new();
        for (i, row) in csv.rows.iter().enumerate() {
            if row[m].trim().is_empty() {
                continue; // the point's results.json has no such metric
            }
            let y = csv.number(i, m)? * to_base;
            let x = kind.position(&row[0]);
            let name = match variant(row) {
                v if v.is_empty() => metric.clone(),
                v => v,
            };
            match series.iter_mut().find(|s| s.name == name) {
                Some(s) => s.points.push((x, y)),
                None => series.push(Series::new(&name, vec![(x, y)])),
            }
        }
        for s in &mut series {
            s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
        let file = unique_file(&mut files, &format!("sweep-{}", file_stem(metric)));
        charts.push(Chart {
            file,
            title: format!("{metric} against {}", csv.header[0]),
            x: kind.axis(&csv.header[0]),
            y: Axis::new(metric, quantity, Scale::Linear),
            series: top_n(series, TOP_N, Fold::Grey, "lines"),
            auto_log_y: true,
            markers: true,
            legend_title: (nkeys > 1).then(|| csv.header[1..nkeys].join(" / ")),
        });
    }
    Ok(charts)
}

/// A file name from a metric path: letters, digits, '-' and '_' only.
fn file_stem(name: &str) -> String {
    name.chars()
        .take(120)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn unique_file(used: &mut Vec<String>, stem: &str) -> String {
    let mut name = stem.to_string();
    let mut n = 2;
    while used.contains(&name) {
        name = format!("{stem}-{n}");
        n += 1;
    }
    used.push(name.clone());
    name
}

/// Text as a chart shows it: control characters (which XML cannot hold) escaped.
pub fn printable(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() || c == '\u{FFFE}' || c == '\u{FFFF}' {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

// ---------------------------------------------------------------- units and ticks

/// The unit an axis is labelled in: (base units per unit, its name).
pub fn unit_for(q: &Quantity, max_abs: f64) -> (f64, String) {
    let pick = |steps: &[(f64, &str)]| -> (f64, String) {
        let (f, u) = steps
            .iter()
            .rev()
            .find(|(f, _)| max_abs >= *f)
            .unwrap_or(&steps[0]);
        (*f, u.to_string())
    };
    const KI: f64 = 1024.0;
    let bytes = [
        (1.0, "B"),
        (KI, "KiB"),
        (KI * KI, "MiB"),
        (KI * KI * KI, "GiB"),
        (KI * KI * KI * KI, "TiB"),
    ];
    match q {
        Quantity::Bytes => pick(&bytes),
        Quantity::BytesPerSec => {
            let (f, u) = pick(&bytes);
            (f, format!("{u}/s"))
        }
        Quantity::Nanos => pick(&[(1.0, "ns"), (1e3, "µs"), (1e6, "ms"), (1e9, "s")]),
        Quantity::Count(noun) if noun.is_empty() => pick(&[
            (1.0, ""),
            (1e3, "thousands"),
            (1e6, "millions"),
            (1e9, "billions"),
        ]),
        Quantity::Count(noun) => {
            let (f, prefix) = pick(&[(1.0, ""), (1e3, "k"), (1e6, "M"), (1e9, "G")]);
            let sep = if prefix.is_empty() || noun.starts_with('/') {
                ""
            } else {
                " "
            };
            let noun = match (prefix.is_empty(), noun.as_str()) {
                (true, "/s") => "per s",
                _ => noun,
            };
            (f, format!("{prefix}{sep}{noun}"))
        }
        Quantity::Percent => (1.0, "%".into()),
        Quantity::Plain => (1.0, String::new()),
    }
}

/// The axis description: its name, unit and scale.
fn axis_label(name: &str, unit: &str, log: bool) -> String {
    let notes: Vec<&str> = [unit, if log { "log scale" } else { "" }]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect();
    if notes.is_empty() {
        printable(name)
    } else {
        format!("{} ({})", printable(name), notes.join(", "))
    }
}

/// A round step giving about `target` intervals over `range`: 1, 2 or 5 times a power
/// of ten.
fn nice_step(range: f64, target: f64) -> f64 {
    let raw = (range / target.max(1.0)).max(f64::MIN_POSITIVE);
    let magnitude = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * magnitude)
}

/// Decimals that show every multiple of `step` exactly.
fn decimals(step: f64) -> usize {
    if step >= 1.0 {
        0
    } else {
        (-step.log10() - 1e-9).ceil().max(0.0) as usize
    }
}

fn fmt_fixed(v: f64, decimals: usize) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let s = format!("{v:.decimals$}");
    if s.starts_with('-') && s[1..].chars().all(|c| c == '0' || c == '.') {
        s[1..].to_string()
    } else {
        s
    }
}

/// A value as a tick label: whole numbers in full, others with trailing zeros
/// dropped; tiny and huge fractions as 1e-5.
fn fmt_value(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        return format!("{}", v as i64);
    }
    let a = v.abs();
    if !(1e-4..1e7).contains(&a) {
        return format!("{v:e}");
    }
    let s = format!("{v:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

/// One axis as drawn: its range in display units, ticks and their labels.
#[derive(Debug, Clone)]
struct Ticks {
    lo: f64,
    hi: f64,
    log: bool,
    at: Vec<f64>,
    labels: Vec<String>,
}

impl Ticks {
    fn label_at(&self, v: f64) -> String {
        self.at
            .iter()
            .position(|t| (t - v).abs() <= 1e-9 * (1.0 + t.abs()))
            .map(|i| self.labels[i].clone())
            .unwrap_or_default()
    }
}

/// Ticks at round values over [lo, hi] for an axis `len_px` long, at least `gap_px`
/// apart; the range widened to the outer ticks if `round_out`.
fn linear_ticks(
    lo: f64,
    hi: f64,
    len_px: f64,
    gap_px: f64,
    integer: bool,
    round_out: bool,
) -> Ticks {
    let (lo, hi) = if hi > lo {
        (lo, hi)
    } else {
        (lo - 0.5, lo + 0.5)
    };
    let mut step = nice_step(hi - lo, (len_px / gap_px).clamp(2.0, 10.0));
    if integer {
        step = step.max(1.0).round();
    }
    let (lo, hi) = if round_out {
        ((lo / step).floor() * step, (hi / step).ceil() * step)
    } else {
        (lo, hi)
    };
    let first = (lo / step - 1e-9).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    let at: Vec<f64> = (first..=last).map(|k| k as f64 * step).collect();
    let d = decimals(step);
    let labels = at.iter().map(|&v| fmt_fixed(v, d)).collect();
    Ticks {
        lo,
        hi,
        log: false,
        at,
        labels,
    }
}

/// Decades over the data's positive range, a little wider so that no line runs along
/// an edge (with 2 and 5 between decades when there are few), at most `MAX_DECADES`
/// below the top.
fn log_ticks(min_pos: f64, max: f64) -> Ticks {
    const MAX_DECADES: f64 = 7.0;
    let top = max.max(min_pos).log10();
    let bottom = min_pos.log10().max(top - MAX_DECADES);
    let pad = ((top - bottom) * 0.04).max(0.05);
    let (lo_e, hi_e) = (bottom - pad, top + pad);
    let mults: &[f64] = if hi_e - lo_e <= 2.5 {
        &[1.0, 2.0, 5.0]
    } else {
        &[1.0]
    };
    let (lo, hi) = (10f64.powf(lo_e), 10f64.powf(hi_e));
    let mut at = Vec::new();
    for k in lo_e.floor() as i32..=hi_e.ceil() as i32 {
        let decade = 10f64.powi(k);
        at.extend(
            mults
                .iter()
                .map(|m| m * decade)
                .filter(|v| (lo..=hi).contains(v)),
        );
    }
    let labels = at.iter().map(|&v| fmt_value(v)).collect();
    Ticks {
        lo,
        hi,
        log: true,
        at,
        labels,
    }
}

/// A log x axis of bytes: kept in bytes, ticked at powers of two, each labelled in
/// its own unit (4 KiB, 1 MiB), since no one unit suits a range of 100x and more.
fn binary_log_x(axis: &Axis) -> bool {
    axis.scale == Scale::Log && axis.quantity == Quantity::Bytes
}

/// Powers of two (bytes) over the data's positive range, a little wider, every
/// 2^step for the smallest step of 1, 2, 5, 10, 20... whose labels fit on `len_px`;
/// none below a byte.
fn binary_log_ticks(min_pos: f64, max: f64, len_px: f64, font: &FontDesc) -> Ticks {
    let top = max.max(min_pos).log2();
    let bottom = min_pos.log2();
    let pad = ((top - bottom) * 0.04).max(0.05);
    let (lo_e, hi_e) = (bottom - pad, top + pad);
    let label = |v: f64| {
        let (f, unit) = unit_for(&Quantity::Bytes, v);
        format!("{} {unit}", fmt_value(v / f))
    };
    let mut ticks = Vec::new();
    for step in [1, 2, 5, 10, 20, 30, 40, 50, 60] {
        let (first, last) = (
            (lo_e / step as f64).ceil() as i32,
            (hi_e / step as f64).floor() as i32,
        );
        ticks = (first..=last)
            .map(|k| 2f64.powi(k * step))
            .filter(|v| *v >= 1.0)
            .map(|v| (v, label(v)))
            .collect::<Vec<_>>();
        let widest = ticks
            .iter()
            .map(|(_, l)| text_width(font, l))
            .fold(0.0, f64::max);
        let gap_px = len_px * step as f64 / (hi_e - lo_e);
        if gap_px >= widest + 12.0 {
            break;
        }
    }
    Ticks {
        lo: 2f64.powf(lo_e),
        hi: 2f64.powf(hi_e),
        log: true,
        at: ticks.iter().map(|t| t.0).collect(),
        labels: ticks.into_iter().map(|t| t.1).collect(),
    }
}

/// Ticks at each distinct swept value, if their labels fit side by side on `len_px`.
fn value_ticks(values: &[f64], lo: f64, hi: f64, len_px: f64, font: &FontDesc) -> Option<Ticks> {
    let mut at: Vec<f64> = values.to_vec();
    at.sort_by(f64::total_cmp);
    at.dedup();
    let labels: Vec<String> = at.iter().map(|&v| fmt_value(v)).collect();
    let widest = labels
        .iter()
        .map(|l| text_width(font, l))
        .fold(0.0, f64::max);
    let px_per_unit = len_px / (hi - lo);
    let fits = at.len() <= 15
        && at
            .windows(2)
            .all(|w| (w[1] - w[0]) * px_per_unit >= widest + 8.0);
    fits.then_some(Ticks {
        lo,
        hi,
        log: false,
        at,
        labels,
    })
}

fn text_width(font: &FontDesc, text: &str) -> f64 {
    font.box_size(text).map_or(0.0, |(w, _)| w as f64)
}

// ---------------------------------------------------------------- drawing

/// A plotters coordinate with the ticks chosen here (linear or log10).
#[derive(Clone)]
struct Coord(Ticks);

impl Ranged for Coord {
    type FormatOption = NoDefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let t = &self.0;
        let frac = if t.log {
            let v = v.max(t.lo);
            (v.log10() - t.lo.log10()) / (t.hi.log10() - t.lo.log10())
        } else {
            (v - t.lo) / (t.hi - t.lo)
        };
        (limit.0 as f64 + frac * (limit.1 - limit.0) as f64).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        // Grid lines at the labelled ticks only.
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.0.at.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.0.lo..self.0.hi
    }
}

impl ValueFormatter<f64> for Coord {
    fn format(v: &f64) -> String {
        fmt_value(*v)
    }

    fn format_ext(&self, v: &f64) -> String {
        self.0.label_at(*v)
    }
}

/// Tableau 10, then plotters' palette: distinct colours for the named series.
fn colour(i: usize) -> RGBColor {
    const TABLEAU: [(u8, u8, u8); 10] = [
        (31, 119, 180),
        (255, 127, 14),
        (44, 160, 44),
        (214, 39, 40),
        (148, 103, 189),
        (140, 86, 75),
        (227, 119, 194),
        (23, 190, 207),
        (188, 189, 34),
        (127, 127, 127),
    ];
    match TABLEAU.get(i) {
        Some(&(r, g, b)) => RGBColor(r, g, b),
        None => {
            let c = Palette99::pick(i).to_rgba();
            RGBColor(c.0, c.1, c.2)
        }
    }
}

const OTHER_GREY: RGBColor = RGBColor(170, 170, 170);

/// A chart in display units with its layout decided.
struct Plan {
    title: String,
    x_label: String,
    y_label: String,
    x: Ticks,
    y: Ticks,
    /// In drawing order: "other" lines first, under the named ones.
    lines: Vec<Line>,
    /// (name, colour) in legend order, under `legend_title`.
    legend: Vec<(String, RGBColor)>,
    legend_title: Option<String>,
    markers: bool,
    /// Points joined by lines; not over categories (no order or distance between
    /// them): each point a marker, the lines' points side by side at a category.
    connect: bool,
    y_area_px: u32,
    x_area_px: u32,
    /// Rows the x tick labels are staggered over (long category names).
    x_label_rows: usize,
    legend_px: u32,
    right_px: u32,
}

fn font(px: f64) -> FontDesc<'static> {
    (FONT, px).into_font()
}

/// Registers DejaVu Sans as the font plotters measures text with.
pub(crate) fn register_font() -> Result<(), String> {
    static REGISTERED: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular())
                .map_err(|_| "the embedded DejaVu font did not load".to_string())
        })
        .clone()
}

/// Whether the series' peaks are orders of magnitude apart (series that stay at zero
/// do not count).
pub fn orders_apart(series: &[Series]) -> bool {
    let peaks: Vec<f64> = series
        .iter()
        .map(Series::max_y)
        .filter(|m| *m > 0.0)
        .collect();
    let (lo, hi) = peaks
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(l, h), &m| (l.min(m), h.max(m)));
    peaks.len() >= 2 && hi / lo > LOG_RATIO
}

fn data_range(vals: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let (lo, hi) = vals.fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
        (l.min(v), h.max(v))
    });
    lo.is_finite().then_some((lo, hi))
}

impl Plan {
    fn new(c: &Chart) -> Plan {
        let log_y = c.y.scale == Scale::Log
            || (c.auto_log_y && c.y.scale == Scale::Linear && orders_apart(&c.series));
        let max_abs = |f: fn(&(f64, f64)) -> f64, axis: &Axis| {
            c.series
                .iter()
                .flat_map(|s| s.points.iter().map(f))
                .chain(axis.range.iter().flat_map(|r| [r.0, r.1]))
                .fold(0.0f64, |m, v| m.max(v.abs()))
        };
        let (x_factor, x_unit) = match c.x.scale {
            Scale::Categories(_) => (1.0, String::new()),
            // each tick carries its unit
            _ if binary_log_x(&c.x) => (1.0, String::new()),
            // a log count (cache sizes in objects): the unit of the smallest value, so
            // that no decade's label is a fraction of it
            Scale::Log if matches!(c.x.quantity, Quantity::Count(_)) => {
                let min_pos = c
                    .series
                    .iter()
                    .flat_map(|s| s.points.iter().map(|p| p.0))
                    .filter(|x| *x > 0.0)
                    .fold(f64::INFINITY, f64::min);
                unit_for(
                    &c.x.quantity,
                    if min_pos.is_finite() { min_pos } else { 1.0 },
                )
            }
            _ => unit_for(&c.x.quantity, max_abs(|p| p.0, &c.x)),
        };
        let (y_factor, y_unit) = unit_for(&c.y.quantity, max_abs(|p| p.1, &c.y));
        let series: Vec<Series> = c
            .series
            .iter()
            .map(|s| Series {
                name: printable(&s.name),
                points: s
                    .points
                    .iter()
                    .map(|&(x, y)| (x / x_factor, y / y_factor))
                    .collect(),
                other: s.other,
            })
            .collect();
        let (lines, mut legend) = colours(series);
        // A lone line named as its axis needs no legend.
        if legend.len() == 1 && legend[0].0 == printable(&c.y.name) {
            legend.clear();
        }
        let legend_title = c.legend_title.as_deref().map(printable);
        let legend_px = legend_width(&legend, legend_title.as_deref());
        let label_font = font(LABEL_PX);
        // Plot size before the label areas are known: their usual size.
        let plot_w = f64::from(W - legend_px) - 110.0;
        let plot_h = f64::from(H) - 120.0;
        let y_scaled = Axis {
            range: c.y.range.map(|(a, b)| (a / y_factor, b / y_factor)),
            ..c.y.clone()
        };
        let x_scaled = Axis {
            range: c.x.range.map(|(a, b)| (a / x_factor, b / x_factor)),
            ..c.x.clone()
        };
        let y = axis_ticks(&y_scaled, &lines, false, log_y, plot_h, &label_font);
        let x = axis_ticks(&x_scaled, &lines, true, false, plot_w, &label_font);
        let x_label_rows = label_rows(&x, plot_w, &label_font);
        let widest_y = y
            .labels
            .iter()
            .map(|l| text_width(&label_font, l))
            .fold(0.0, f64::max);
        let widest_x = x
            .labels
            .iter()
            .map(|l| text_width(&label_font, l))
            .fold(0.0, f64::max);
        let label_h = LABEL_PX / 1.24 + 4.0;
        Plan {
            title: printable(&c.title),
            x_label: axis_label(&c.x.name, &x_unit, c.x.scale == Scale::Log),
            y_label: axis_label(&c.y.name, &y_unit, log_y),
            // tick labels, 10 px from the axis, then the rotated description
            y_area_px: (widest_y + 10.0 + 8.0 + DESC_PX + 4.0).ceil() as u32,
            x_area_px: (10.0 + label_h * x_label_rows as f64 + 8.0 + DESC_PX + 4.0).ceil() as u32,
            right_px: (widest_x / 2.0 + 6.0).ceil() as u32,
            x,
            y,
            x_label_rows,
            lines,
            legend,
            legend_title,
            legend_px,
            markers: c.markers,
            connect: !matches!(c.x.scale, Scale::Categories(_)),
        }
    }
}

/// A series as drawn.
struct Line {
    series: Series,
    colour: RGBColor,
    width_px: u32,
}

/// Colours the named series in order; "other" lines are grey and drawn first, under
/// the named ones. The legend has one entry per name. A line that coincides with an
/// earlier one is drawn on top of it, narrower (the earlier one shows as a border),
/// and its legend entry says which it hides.
fn colours(series: Vec<Series>) -> (Vec<Line>, Vec<(String, RGBColor)>) {
    let mut legend: Vec<(String, RGBColor)> = Vec::new();
    let mut named: Vec<Line> = Vec::new();
    let mut grey: Vec<Line> = Vec::new();
    for s in series {
        if s.other {
            if !legend.iter().any(|(n, _)| *n == s.name) {
                legend.push((s.name.clone(), OTHER_GREY));
            }
            grey.push(Line {
                series: s,
                colour: OTHER_GREY,
                width_px: 1,
            });
            continue;
        }
        let colour = colour(named.len());
        let mut entry = s.name.clone();
        if !s.points.is_empty() && s.points.iter().all(|p| p.1 == 0.0) {
            entry.push_str(" (all 0)");
        }
        let mut under = named.iter_mut().filter(|l| l.series.points == s.points);
        if let Some(first) = under.next() {
            entry = format!("{entry} (= {})", first.series.name);
            first.width_px += 3;
        }
        under.for_each(|l| l.width_px += 3);
        legend.push((entry, colour));
        named.push(Line {
            series: s,
            colour,
            width_px: 2,
        });
    }
    grey.extend(named);
    (grey, legend)
}

const LEGEND_MAX_PX: u32 = W / 3;
/// Left of a legend entry's text: the colour swatch.
const SWATCH_PX: f64 = 40.0;

/// Legend width: the widest entry, a swatch and padding; at most a third of the chart.
fn legend_width(legend: &[(String, RGBColor)], title: Option<&str>) -> u32 {
    if legend.is_empty() {
        return 0;
    }
    let f = font(LABEL_PX);
    let widest = legend
        .iter()
        .map(|(n, _)| text_width(&f, n) + SWATCH_PX)
        .chain(title.map(|t| text_width(&f, t)))
        .fold(0.0, f64::max);
    ((widest + 12.0).ceil() as u32).min(LEGEND_MAX_PX)
}

/// `text` cut to `max_px` wide by taking characters out of its middle ("…" where they
/// were): names that differ only at the end (cgroup paths) stay apart.
fn fit(text: &str, max_px: f64) -> String {
    let f = font(LABEL_PX);
    if text_width(&f, text) <= max_px {
        return text.to_string();
    }
    let chars: Vec<char> = text.chars().collect();
    for cut in 1..chars.len() {
        let head = (chars.len() - cut) / 2;
        let tail = chars.len() - cut - head;
        let s: String = chars[..head]
            .iter()
            .chain(std::iter::once(&'…'))
            .chain(&chars[chars.len() - tail..])
            .collect();
        if text_width(&f, &s) <= max_px {
            return s;
        }
    }
    "…".to_string()
}

/// The ticks of one axis over the (display-unit) data of `lines`.
fn axis_ticks(
    axis: &Axis,
    lines: &[Line],
    is_x: bool,
    log: bool,
    len_px: f64,
    font: &FontDesc,
) -> Ticks {
    let coord = |p: &(f64, f64)| if is_x { p.0 } else { p.1 };
    let values = || lines.iter().flat_map(|l| l.series.points.iter().map(coord));
    let (lo, hi) = axis
        .range
        .or_else(|| data_range(values()))
        .unwrap_or((0.0, 1.0));
    if log || axis.scale == Scale::Log {
        let min_pos = values().filter(|v| *v > 0.0).fold(f64::INFINITY, f64::min);
        let min_pos = if min_pos.is_finite() { min_pos } else { 1.0 };
        if binary_log_x(axis) && is_x {
            return binary_log_ticks(min_pos, hi.max(min_pos), len_px, font);
        }
        return log_ticks(min_pos, hi.max(min_pos));
    }
    match &axis.scale {
        Scale::Categories(names) => Ticks {
            lo: -0.5,
            hi: names.len().max(1) as f64 - 0.5,
            log: false,
            at: (0..names.len()).map(|i| i as f64).collect(),
            labels: names.iter().map(|n| printable(n)).collect(),
        },
        Scale::Values { integer } => {
            let pad = if hi > lo { (hi - lo) * 0.05 } else { 0.5 };
            let (lo, hi) = (lo - pad, hi + pad);
            let distinct: Vec<f64> = values().collect();
            value_ticks(&distinct, lo, hi, len_px, font)
                .unwrap_or_else(|| linear_ticks(lo, hi, len_px, 90.0, *integer, false))
        }
        Scale::Linear | Scale::Log => {
            if axis.range.is_some() {
                linear_ticks(lo, hi, len_px, 60.0, false, false)
            } else if is_x {
                // x: the data's span exactly (time starts at the first sample)
                linear_ticks(lo, hi, len_px, 90.0, false, false)
            } else {
                // y: from zero for non-negative data, a little headroom, round ends
                let lo = lo.min(0.0);
                let hi = if hi > lo {
                    hi + (hi - lo) * 0.03
                } else {
                    lo + 1.0
                };
                linear_ticks(lo, hi, len_px, 50.0, false, true)
            }
        }
    }
}

/// How many rows the x tick labels need so that neighbours do not overlap (1 to 3).
fn label_rows(x: &Ticks, len_px: f64, font: &FontDesc) -> usize {
    let coord = Coord(x.clone());
    let px: Vec<i32> =
        x.at.iter()
            .map(|v| coord.map(v, (0, len_px as i32)))
            .collect();
    let Some(gap_px) = px.windows(2).map(|w| (w[1] - w[0]).abs()).min() else {
        return 1;
    };
    let widest = x
        .labels
        .iter()
        .map(|l| text_width(font, l))
        .fold(0.0, f64::max);
    ((widest + 10.0) / f64::from(gap_px.max(1)))
        .ceil()
        .clamp(1.0, 3.0) as usize
}

/// Draws a chart as SVG text.
pub fn draw_svg(c: &Chart) -> Result<String, String> {
    register_font()?;
    let plan = Plan::new(c);
    let mut svg = String::new();
    render(&plan, &mut svg).map_err(|e| e.to_string())?;
    Ok(svg)
}

type DrawResult = Result<(), Box<dyn std::error::Error>>;

fn render(p: &Plan, svg: &mut String) -> DrawResult {
    let root = SVGBackend::with_string(svg, (W, H)).into_drawing_area();
    root.fill(&WHITE)?;
    let body = root.titled(&p.title, font(TITLE_PX))?;
    let (plot_side, legend_side) = body.split_horizontally(W - p.legend_px);
    let mut chart = ChartBuilder::on(&plot_side)
        .margin_top(8)
        .margin_left(6)
        .margin_bottom(6)
        .margin_right(p.right_px.max(10))
        .x_label_area_size(p.x_area_px)
        .y_label_area_size(p.y_area_px)
        .build_cartesian_2d(Coord(p.x.clone()), Coord(p.y.clone()))?;
    let staggered = p.x_label_rows > 1;
    let x_fmt = |v: &f64| p.x.label_at(*v);
    let y_fmt = |v: &f64| p.y.label_at(*v);
    // Staggered labels are drawn apart from the mesh; its own are invisible (the SVG
    // backend skips transparent text).
    let x_label_colour = if staggered {
        TRANSPARENT
    } else {
        BLACK.to_rgba()
    };
    chart
        .configure_mesh()
        .x_desc(p.x_label.as_str())
        .y_desc(p.y_label.as_str())
        .label_style(font(LABEL_PX))
        .x_label_style(font(LABEL_PX).color(&x_label_colour))
        .axis_desc_style(font(DESC_PX))
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .draw()?;
    if staggered {
        draw_staggered_x_labels(&chart, p)?;
    }
    let n = p.lines.len();
    for (i, l) in p.lines.iter().enumerate() {
        if !p.connect {
            // Over categories: a marker per point, each line's a little to the side
            // (within a fifth of a category either way) so points at one value stay
            // apart.
            let dodge = if n > 1 {
                (i as f64 / (n - 1) as f64 - 0.5) * 0.4
            } else {
                0.0
            };
            for run in drawable_runs(&l.series.points, p.y.log) {
                let r = l.width_px + 2;
                chart.draw_series(
                    run.iter()
                        .map(|&(x, y)| Circle::new((x + dodge, y), r, l.colour.filled())),
                )?;
            }
            continue;
        }
        for run in drawable_runs(&l.series.points, p.y.log) {
            chart.draw_series(LineSeries::new(
                run.iter().copied(),
                l.colour.stroke_width(l.width_px),
            ))?;
            if p.markers {
                let r = l.width_px + 1;
                chart.draw_series(run.iter().map(|&pt| Circle::new(pt, r, l.colour.filled())))?;
            }
        }
    }
    draw_legend(&legend_side, p)?;
    root.present()?;
    Ok(())
}

/// The stretches of a line that can be drawn: on a log y axis, zero has no place, so
/// the line breaks where it is zero (the legend says when a line is zero throughout).
fn drawable_runs(points: &[(f64, f64)], log_y: bool) -> Vec<&[(f64, f64)]> {
    if !log_y {
        return vec![points];
    }
    points
        .split(|p| p.1 <= 0.0)
        .filter(|run| !run.is_empty())
        .collect()
}

type Chart2d<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<Coord, Coord>>;

/// Category labels too long to sit side by side, alternating between rows.
fn draw_staggered_x_labels(chart: &Chart2d, p: &Plan) -> DrawResult {
    let area = chart.plotting_area();
    let y_bottom = area.get_pixel_range().1.end;
    let row_h = (LABEL_PX / 1.24 + 4.0) as i32;
    let style = font(LABEL_PX)
        .color(&BLACK)
        .pos(plotters::style::text_anchor::Pos::new(
            plotters::style::text_anchor::HPos::Center,
            plotters::style::text_anchor::VPos::Top,
        ));
    let root = area.strip_coord_spec();
    let (x0, y0) = root.get_base_pixel();
    for (i, (&at, label)) in p.x.at.iter().zip(&p.x.labels).enumerate() {
        let (px, _) = chart.backend_coord(&(at, p.y.lo));
        let py = y_bottom + 10 + row_h * (i % p.x_label_rows) as i32;
        root.draw_text(label, &style, (px - x0, py - y0))?;
    }
    Ok(())
}

/// The legend, top right beside the plot: an optional title, then a swatch and name
/// per entry.
fn draw_legend(area: &DrawingArea<SVGBackend, plotters::coord::Shift>, p: &Plan) -> DrawResult {
    use plotters::style::text_anchor::{HPos, Pos, VPos};
    let style = font(LABEL_PX)
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    let row_px = 22;
    let mut y = 20;
    if let Some(title) = &p.legend_title {
        let text = fit(title, f64::from(p.legend_px) - 12.0);
        area.draw_text(&text, &style, (6, y))?;
        y += row_px;
    }
    for (name, colour) in &p.legend {
        area.draw(&PathElement::new(
            vec![(6, y), (28, y)],
            colour.stroke_width(3),
        ))?;
        let text = fit(name, f64::from(p.legend_px) - SWATCH_PX - 6.0);
        area.draw_text(&text, &style, (34, y))?;
        y += row_px;
    }
    Ok(())
}

/// Renders SVG to PNG with the embedded DejaVu Sans as every font.
pub fn svg_to_png(svg: &str) -> Result<Vec<u8>, String> {
    use resvg::{tiny_skia, usvg};
    let mut opt = usvg::Options::default();
    let db = opt.fontdb_mut();
    db.load_font_data(dejavu::sans::regular().to_vec());
    db.set_sans_serif_family("DejaVu Sans");
    db.set_serif_family("DejaVu Sans");
    let tree = usvg::Tree::from_str(svg, &opt).map_err(|e| e.to_string())?;
    let size = tree.size().to_int_size();
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height()).ok_or("empty image")?;
    pixmap.fill(tiny_skia::Color::WHITE);
    resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
    pixmap.encode_png().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_columns_plot_reads_are_columns_the_timeseries_writes() {
        // One definition of timeseries.csv (stats::series::COLUMNS); plot only names
        // the ones it draws, and must not drift from it.
        for c in TIMESERIES_COLUMNS {
            assert!(crate::stats::series::COLUMNS.contains(&c), "{c}");
        }
    }

    #[test]
    fn units_step_up_at_each_power() {
        let kib = 1024.0;
        assert_eq!(unit_for(&Quantity::Bytes, 1023.0), (1.0, "B".into()));
        assert_eq!(unit_for(&Quantity::Bytes, kib), (kib, "KiB".into()));
        assert_eq!(
            unit_for(&Quantity::Bytes, 3.0 * kib * kib * kib),
            (kib * kib * kib, "GiB".into())
        );
        assert_eq!(unit_for(&Quantity::Nanos, 999.0), (1.0, "ns".into()));
        assert_eq!(unit_for(&Quantity::Nanos, 1500.0), (1e3, "µs".into()));
        assert_eq!(unit_for(&Quantity::Nanos, 2e9), (1e9, "s".into()));
        let pages = Quantity::Count("pages/s".into());
        assert_eq!(unit_for(&pages, 12_000.0), (1e3, "k pages/s".into()));
        assert_eq!(unit_for(&pages, 12.0), (1.0, "pages/s".into()));
        let bare = Quantity::Count(String::new());
        assert_eq!(unit_for(&bare, 3e6), (1e6, "millions".into()));
    }

    #[test]
    fn other_is_the_sum_of_the_rest_at_each_x() {
        let s = |name: &str, ys: [f64; 2]| Series::new(name, vec![(0.0, ys[0]), (1.0, ys[1])]);
        let folded = top_n(
            vec![s("a", [1.0, 2.0]), s("b", [10.0, 10.0]), s("c", [3.0, 1.0])],
            1,
            Fold::Sum,
            "x",
        );
        assert_eq!(folded.len(), 2);
        assert_eq!(folded[0].name, "b");
        assert_eq!(folded[1].name, "other (2 x)");
        assert_eq!(folded[1].points, [(0.0, 4.0), (1.0, 3.0)]);
        assert!(folded[1].other);
    }

    #[test]
    fn cdf_steps_hold_each_fraction_until_the_next_latency() {
        let steps = cdf_steps(&[(0, 0.0), (10, 0.5), (40, 1.0)]);
        assert_eq!(
            steps,
            [
                (1.0, 0.0),
                (10.0, 0.0),
                (10.0, 0.5),
                (40.0, 0.5),
                (40.0, 1.0)
            ]
        );
    }

    #[test]
    fn names_cut_to_fit_keep_their_ends_apart() {
        register_font().unwrap();
        let long = |n: u32| format!("cgroup system.slice/very-long-service-name-{n}.service");
        let (a, b) = (fit(&long(11), 200.0), fit(&long(12), 200.0));
        assert!(
            a.contains('…') && text_width(&font(LABEL_PX), &a) <= 200.0,
            "{a}"
        );
        assert!(
            a.ends_with("11.service") && b.ends_with("12.service"),
            "{a} {b}"
        );
        assert_eq!(fit("free", 200.0), "free");
    }

    #[test]
    fn metric_units_follow_the_results_schema() {
        assert_eq!(
            metric_quantity("psi.memory.some.total"),
            (Quantity::Nanos, 1e3)
        );
        assert_eq!(
            metric_quantity("workloads.db.latency_ns.p99"),
            (Quantity::Nanos, 1.0)
        );
        assert_eq!(
            metric_quantity("cgroups.a.memory.stat.file"),
            (Quantity::Bytes, 1.0)
        );
        assert_eq!(
            metric_quantity("cgroups.a.memory.stat.pgscan"),
            (Quantity::Count(String::new()), 1.0)
        );
        assert_eq!(
            metric_quantity("cgroups.a.memory.swap.peak_by_fd.S"),
            (Quantity::Bytes, 1.0)
        );
    }
}
