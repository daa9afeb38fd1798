//! `reclaimsim compare`: an mmtests compare-kernels style table of two or more runs.
//!
//! The first run is the baseline; every run is one column, named by `--label` or else by
//! the shortest suffix of its directory's path that tells it from the others
//! ([`run_names`]). [`build`] turns the runs' [`Results`] into a [`CompareTable`] (pure data:
//! sections of rows, one value per run), and [`render`] prints it as text, markdown, CSV
//! or JSON.
//!
//! Sections and conventions:
//!
//! - **Latency** (microseconds), per workload: `Amean` (mean), `Stddev`, `Max-90` and
//!   `Max`. mmtests' Max-90 is the largest value of the best 90% of samples; results.json
//!   keeps no samples, so Max-90 here is the workload's p90 (`latency_ns.p90`).
//! - **Throughput**, per workload: `Ops/sec` (`throughput`) and `MB/sec`
//!   (`bytes_per_sec` / 1e6).
//! - **Time** (seconds): `User` and `System` summed over all tasks, `Reclaim` the CPU
//!   time of kswapd and direct reclaim (part of System), `Elapsed` the simulated
//!   duration.
//! - After the text and markdown tables, each run's reclaim throttling sleeps
//!   (`count usec_delayed=N reason=R`, as the seed's tables count tracepoint lines).
//! - **Ops**: reclaim counters from /proc/vmstat under mmtests' names, and ratios of
//!   them (a division by zero gives 0).
//!
//! Percentages (latency and throughput rows, runs after the first) are gains against
//! the baseline, as mmtests prints them: positive is better. For latency lower is
//! better, so % = (base - new) / base * 100; for throughput higher is better, so
//! % = (new - base) / base * 100. Equal values give 0%; a zero baseline with a non-zero
//! value has no percentage (`n/a`, JSON `null`). Time and Ops rows show plain values.
//!
//! Significance (`*` after the percentage) is computed for `Amean` rows only, the one
//! statistic the test is about: Welch's t-test on the two runs' means, with each run's
//! latency stddev and its `ops` as the sample size. The difference is significant when
//! |t| exceeds the two-sided 95% critical value of Student's t at the Welch-Satterthwaite
//! degrees of freedom ([`t_critical_95`]: a table up to 30, a Cornish-Fisher expansion
//! above, tending to 1.96). With fewer than 2 samples in either run there is no variance
//! estimate and nothing is significant. When both stddevs are 0 (and n >= 2) the samples
//! are constant, so the means are known exactly: significant iff they differ.

use super::natural::natural_cmp;
use super::results::{Results, WorkloadResult};
use serde::Serialize;
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};
use std::str::FromStr;

/// Which way is better for a row's values (rows without a percentage have neither).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    Lower,
    Higher,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SectionKind {
    Latency,
    Throughput,
    Time,
    Ops,
}

impl SectionKind {
    /// The section's key: JSON `section`.
    pub fn key(self) -> &'static str {
        match self {
            SectionKind::Latency => "latency",
            SectionKind::Throughput => "throughput",
            SectionKind::Time => "time",
            SectionKind::Ops => "ops",
        }
    }

    /// The section's title line in text and markdown.
    pub fn title(self) -> &'static str {
        match self {
            SectionKind::Latency => "Latency (us; Max-90 = p90)",
            SectionKind::Throughput => "Throughput",
            SectionKind::Time => "Time (s)",
            SectionKind::Ops => "Ops",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The row's name as data (CSV, JSON, [`CompareTable::row`]): `Amean reader`,
    /// `Kswapd velocity`.
    pub metric: String,
    /// The name as the text and markdown tables print it: the statistic padded to
    /// mmtests' 10 columns, `Amean     reader`.
    pub text_label: String,
    /// Whether the row compares runs (a percentage per later run).
    pub better: Option<Better>,
    /// One per run; `None` where the run lacks the workload.
    pub values: Vec<Option<f64>>,
    /// One per run: `None` for the baseline, for rows without a comparison, where a value
    /// is missing and where the baseline is 0 (and the value is not).
    pub pct: Vec<Option<f64>>,
    /// One per run; only `Amean` rows can be significant (see the module doc).
    pub significant: Vec<bool>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    pub kind: SectionKind,
    pub rows: Vec<Row>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CompareTable {
    /// Column names, baseline first.
    pub runs: Vec<String>,
    /// The runs each column merges (a sweep's points with its value; else 1).
    pub points: Vec<usize>,
    pub sections: Vec<Section>,
}

impl CompareTable {
    /// The row named `metric` (`Amean reader`; names are unique), if any.
    pub fn row(&self, metric: &str) -> Option<&Row> {
        self.sections
            .iter()
            .flat_map(|s| &s.rows)
            .find(|r| r.metric == metric)
    }
}

/// A workload row's name as data and as printed (mmtests' layout: the statistic padded
/// to 10 columns, then the workload).
fn names(stat: &str, workload: &str) -> (String, String) {
    (
        format!("{stat} {workload}"),
        format!("{stat:<10}{workload}"),
    )
}

/// Percentage gain of `new` against `base` (positive is better); `None` when the
/// baseline is 0 and the value is not.
pub fn pct_change(base: f64, new: f64, better: Better) -> Option<f64> {
    if base == new {
        return Some(0.0);
    }
    if base == 0.0 {
        return None;
    }
    Some(match better {
        Better::Lower => (base - new) / base * 100.0,
        Better::Higher => (new - base) / base * 100.0,
    })
}

/// Two-sided 95% critical values of Student's t for 1..=30 degrees of freedom.
const T_975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// The two-sided 95% critical value of Student's t with `df` degrees of freedom. Up to
/// 30 from the table, at `floor(df)` (rounding the degrees of freedom down is the
/// conservative choice); above 30 the Cornish-Fisher expansion around the normal
/// quantile 1.959964, within 0.001 of the exact value there and tending to 1.96.
pub fn t_critical_95(df: f64) -> f64 {
    if df.is_nan() || df < 1.0 {
        return T_975[0];
    }
    if df < 31.0 {
        return T_975[df as usize - 1];
    }
    let z: f64 = 1.959_963_984_540_054;
    let (z3, z5, z7, z9) = (z.powi(3), z.powi(5), z.powi(7), z.powi(9));
    let g1 = (z3 + z) / 4.0;
    let g2 = (5.0 * z5 + 16.0 * z3 + 3.0 * z) / 96.0;
    let g3 = (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / 384.0;
    let g4 = (79.0 * z9 + 776.0 * z7 + 1482.0 * z5 - 1920.0 * z3 - 945.0 * z) / 92160.0;
    z + g1 / df + g2 / df.powi(2) + g3 / df.powi(3) + g4 / df.powi(4)
}

/// A sample summary: mean, standard deviation, size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    pub mean: f64,
    pub stddev: f64,
    pub n: u64,
}

/// Welch's t statistic and Welch-Satterthwaite degrees of freedom, or `None` when either
/// sample has fewer than 2 values or both variances are 0.
pub fn welch(a: Sample, b: Sample) -> Option<(f64, f64)> {
    if a.n < 2 || b.n < 2 {
        return None;
    }
    let (na, nb) = (a.n as f64, b.n as f64);
    let va = a.stddev * a.stddev / na;
    let vb = b.stddev * b.stddev / nb;
    let se2 = va + vb;
    if se2 <= 0.0 {
        return None;
    }
    let t = (a.mean - b.mean) / se2.sqrt();
    let df = se2 * se2 / (va * va / (na - 1.0) + vb * vb / (nb - 1.0));
    Some((t, df))
}

/// Whether the two means differ significantly (two-sided, 95%); see the module doc for
/// the small-sample and zero-variance rules.
pub fn significant(a: Sample, b: Sample) -> bool {
    if a.n < 2 || b.n < 2 {
        return false;
    }
    match welch(a, b) {
        Some((t, df)) => t.abs() > t_critical_95(df),
        // Both variances 0: constant samples, the means are exact.
        None => a.mean != b.mean,
    }
}

fn latency_sample(w: &WorkloadResult) -> Sample {
    Sample {
        mean: w.latency_ns.mean,
        stddev: w.latency_ns.stddev,
        n: w.ops,
    }
}

fn div0(a: f64, b: f64) -> f64 {
    if b == 0.0 {
        0.0
    } else {
        a / b
    }
}

/// A row comparing runs: percentages against the first value, and significance from
/// `samples` (one per run) when given.
fn compared_row(
    (metric, text_label): (String, String),
    better: Better,
    values: Vec<Option<f64>>,
    samples: Option<Vec<Option<Sample>>>,
) -> Row {
    let base = values[0];
    let pct = values
        .iter()
        .enumerate()
        .map(|(i, v)| match (i, base, v) {
            (0, ..) => None,
            (_, Some(b), Some(v)) => pct_change(b, *v, better),
            _ => None,
        })
        .collect();
    let significant = match samples {
        Some(s) => s
            .iter()
            .enumerate()
            .map(|(i, x)| match (i, s[0], x) {
                (0, ..) => false,
                (_, Some(a), Some(b)) => significant(a, *b),
                _ => false,
            })
            .collect(),
        None => vec![false; values.len()],
    };
    Row {
        metric,
        text_label,
        better: Some(better),
        values,
        pct,
        significant,
    }
}

fn plain_row(metric: &str, values: Vec<f64>) -> Row {
    let n = values.len();
    Row {
        metric: metric.to_string(),
        text_label: metric.to_string(),
        better: None,
        values: values.into_iter().map(Some).collect(),
        pct: vec![None; n],
        significant: vec![false; n],
    }
}

/// Builds the table; `runs` are (column name, results), baseline first.
pub fn build(runs: &[(String, Results)]) -> CompareTable {
    let workloads: BTreeSet<&String> = runs.iter().flat_map(|(_, r)| r.workloads.keys()).collect();
    // Natural order, so a sweep's mmap-4 comes before mmap-12.
    let mut workloads: Vec<&String> = workloads.into_iter().collect();
    workloads.sort_by(|a, b| natural_cmp(a, b));
    let per_run = |name: &str, f: &dyn Fn(&WorkloadResult) -> f64| -> Vec<Option<f64>> {
        runs.iter()
            .map(|(_, r)| r.workloads.get(name).map(f))
            .collect()
    };
    let us = |ns: f64| ns / 1e3;

    let mut latency = Vec::new();
    type Stat = (&'static str, fn(&WorkloadResult) -> f64);
    let stats: [Stat; 4] = [
        ("Amean", |w| w.latency_ns.mean),
        ("Stddev", |w| w.latency_ns.stddev),
        ("Max-90", |w| w.latency_ns.p90 as f64),
        ("Max", |w| w.latency_ns.max as f64),
    ];
    for (stat, get) in stats {
        for name in &workloads {
            let values = per_run(name, &|w| us(get(w)));
            let samples = (stat == "Amean").then(|| {
                runs.iter()
                    .map(|(_, r)| r.workloads.get(name.as_str()).map(latency_sample))
                    .collect()
            });
            latency.push(compared_row(
                names(stat, name),
                Better::Lower,
                values,
                samples,
            ));
        }
    }

    let mut throughput = Vec::new();
    type Rate = (&'static str, fn(&WorkloadResult) -> f64);
    let rates: [Rate; 2] = [
        ("Ops/sec", |w| w.throughput),
        ("MB/sec", |w| w.bytes_per_sec / 1e6),
    ];
    for (stat, get) in rates {
        for name in &workloads {
            let values = per_run(name, &get);
            throughput.push(compared_row(
                names(stat, name),
                Better::Higher,
                values,
                None,
            ));
        }
    }

    let col =
        |f: &dyn Fn(&Results) -> f64| -> Vec<f64> { runs.iter().map(|(_, r)| f(r)).collect() };
    let secs = |r: &Results| r.duration_ns as f64 / 1e9;
    let time = vec![
        plain_row(
            "User",
            col(&|r| r.tasks.values().map(|t| t.user_ns as f64).sum::<f64>() / 1e9),
        ),
        plain_row(
            "System",
            col(&|r| r.tasks.values().map(|t| t.system_ns as f64).sum::<f64>() / 1e9),
        ),
        plain_row(
            "Reclaim",
            col(&|r| (r.reclaim.kswapd_cpu_ns + r.reclaim.direct_reclaim_cpu_ns) as f64 / 1e9),
        ),
        plain_row("Elapsed", col(&secs)),
    ];

    let vm = |k: &'static str| move |r: &Results| r.vm(k) as f64;
    let ops = vec![
        plain_row("Direct pages scanned", col(&vm("pgscan_direct"))),
        plain_row("Kswapd pages scanned", col(&vm("pgscan_kswapd"))),
        plain_row("Kswapd pages reclaimed", col(&vm("pgsteal_kswapd"))),
        plain_row("Direct pages reclaimed", col(&vm("pgsteal_direct"))),
        plain_row(
            "Kswapd efficiency %",
            col(&|r| {
                div0(
                    r.vm("pgsteal_kswapd") as f64 * 100.0,
                    r.vm("pgscan_kswapd") as f64,
                )
            }),
        ),
        plain_row(
            "Kswapd velocity",
            col(&|r| div0(r.vm("pgscan_kswapd") as f64, secs(r))),
        ),
        plain_row(
            "Direct efficiency %",
            col(&|r| {
                div0(
                    r.vm("pgsteal_direct") as f64 * 100.0,
                    r.vm("pgscan_direct") as f64,
                )
            }),
        ),
        plain_row(
            "Direct velocity",
            col(&|r| div0(r.vm("pgscan_direct") as f64, secs(r))),
        ),
        plain_row(
            "Percentage direct scans",
            col(&|r| {
                let d = r.vm("pgscan_direct") as f64;
                div0(d * 100.0, d + r.vm("pgscan_kswapd") as f64)
            }),
        ),
        plain_row("Page writes by reclaim", col(&vm("nr_vmscan_write"))),
        plain_row(
            "Page writes file",
            col(&|r| r.vm("nr_vmscan_write").saturating_sub(r.vm("pswpout")) as f64),
        ),
        plain_row("Page writes anon", col(&vm("pswpout"))),
        plain_row(
            "Page reclaim immediate",
            col(&vm("nr_vmscan_immediate_reclaim")),
        ),
        plain_row("Swap ins", col(&vm("pswpin"))),
        plain_row("Swap outs", col(&vm("pswpout"))),
        plain_row("Refaults anon", col(&vm("workingset_refault_anon"))),
        plain_row("Refaults file", col(&vm("workingset_refault_file"))),
        plain_row(
            "Allocation stalls",
            col(&|r| (r.vm("allocstall_dma32") + r.vm("allocstall_normal")) as f64),
        ),
        plain_row("OOM kills", col(&vm("oom_kill"))),
    ];

    CompareTable {
        runs: runs.iter().map(|(n, _)| n.clone()).collect(),
        points: vec![1; runs.len()],
        sections: vec![
            Section {
                kind: SectionKind::Latency,
                rows: latency,
            },
            Section {
                kind: SectionKind::Throughput,
                rows: throughput,
            },
            Section {
                kind: SectionKind::Time,
                rows: time,
            },
            Section {
                kind: SectionKind::Ops,
                rows: ops,
            },
        ],
    }
}

/// Output format of `reclaimsim compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Md,
    Csv,
    Json,
}

impl FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Format, String> {
        match s {
            "text" => Ok(Format::Text),
            "md" => Ok(Format::Md),
            "csv" => Ok(Format::Csv),
            "json" => Ok(Format::Json),
            _ => Err(format!(
                "unknown format `{s}` (expected text, md, csv or json)"
            )),
        }
    }
}

pub fn render(t: &CompareTable, format: Format) -> String {
    match format {
        Format::Text => render_text(t),
        Format::Md => render_md(t),
        Format::Csv => render_csv(t),
        Format::Json => render_json(t),
    }
}

/// The conventions, printed above the text and markdown tables (and `report`'s).
pub fn legend(t: &CompareTable) -> [String; 3] {
    [
        format!(
            "Baseline: {}. Each % is the gain against it (positive is better):",
            t.runs[0]
        ),
        "latency (base - new) / base * 100, throughput (new - base) / base * 100.".into(),
        "* after a %: the means differ significantly (Welch's t-test, two-sided 95%).".into(),
    ]
}

/// `v` to 2 decimals, never `-0.00`: a gain that rounds to nothing is no loss.
fn fixed2(v: f64) -> String {
    let s = format!("{v:.2}");
    if s == "-0.00" {
        "0.00".into()
    } else {
        s
    }
}

/// A cell of the text table: the value, then (runs after the first, compared rows) the
/// percentage and the significance mark.
fn text_cell(r: &Row, i: usize) -> (String, String) {
    let Some(v) = r.values[i] else {
        return ("-".into(), String::new());
    };
    let value = fixed2(v);
    if i == 0 || r.better.is_none() || r.values[0].is_none() {
        return (value, String::new());
    }
    let mark = if r.significant[i] { "*" } else { " " };
    let pct = match r.pct[i] {
        Some(p) => format!(" ({:>8}%){mark}", fixed2(p)),
        None => format!(" ({:>9}){mark}", "n/a"),
    };
    (value, pct)
}

/// mmtests-like aligned columns: the label, then per run the value right-aligned and the
/// percentage after it, so values line up whether or not a row has percentages.
pub fn render_text(t: &CompareTable) -> String {
    let rows: Vec<&Row> = t.sections.iter().flat_map(|s| &s.rows).collect();
    let label_w = rows
        .iter()
        .map(|r| r.text_label.chars().count())
        .chain(t.sections.iter().map(|s| s.kind.title().len()))
        .max()
        .unwrap_or(0);
    let n = t.runs.len();
    let (mut vw, mut sw) = (vec![0; n], vec![0; n]);
    for r in &rows {
        for i in 0..n {
            let (v, s) = text_cell(r, i);
            vw[i] = vw[i].max(v.len());
            sw[i] = sw[i].max(s.len());
        }
    }
    // A name longer than the column widens it on the value side.
    for i in 0..n {
        vw[i] = vw[i].max(t.runs[i].chars().count().saturating_sub(sw[i]));
    }

    let mut out = String::new();
    for line in legend(t) {
        let _ = writeln!(out, "{line}");
    }
    let mut header = format!("\n{:label_w$}", "");
    for i in 0..n {
        let _ = write!(header, "  {:>w$}", t.runs[i], w = vw[i] + sw[i]);
    }
    let _ = writeln!(out, "{}", header.trim_end());
    for s in &t.sections {
        let _ = writeln!(out, "\n{}", s.kind.title());
        for r in &s.rows {
            let mut line = format!("{:label_w$}", r.text_label);
            for i in 0..n {
                let (v, p) = text_cell(r, i);
                let _ = write!(line, "  {v:>vw$}{p:sw$}", vw = vw[i], sw = sw[i]);
            }
            let _ = writeln!(out, "{}", line.trim_end());
        }
    }
    out
}

fn md_escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '\\' | '|' | '*' | '_' | '`' | '<' | '>' | '[' | ']') {
            o.push('\\');
        }
        o.push(c);
    }
    o
}

/// A GitHub markdown table with the same rows, a bold title row per section.
pub fn render_md(t: &CompareTable) -> String {
    let mut out = legend(t).join("\n");
    out.push_str("\n\n| |");
    for name in &t.runs {
        let _ = write!(out, " {} |", md_escape(name));
    }
    out.push_str("\n|---|");
    out.push_str(&"---:|".repeat(t.runs.len()));
    out.push('\n');
    let empty = " |".repeat(t.runs.len());
    for s in &t.sections {
        let _ = writeln!(out, "| **{}** |{empty}", md_escape(s.kind.title()));
        for r in &s.rows {
            let _ = write!(out, "| {} |", md_escape(&r.text_label));
            for i in 0..t.runs.len() {
                let (v, p) = text_cell(r, i);
                let p = p.split_whitespace().collect::<Vec<_>>().join("");
                let cell = if p.is_empty() { v } else { format!("{v} {p}") };
                let _ = write!(out, " {} |", md_escape(&cell));
            }
            out.push('\n');
        }
    }
    out
}

/// A number for CSV and JSON: rounded to 6 decimals (enough for nanoseconds in
/// microseconds) and printed in the shortest form.
fn raw(v: f64) -> f64 {
    let r = (v * 1e6).round() / 1e6;
    if r == 0.0 {
        0.0
    } else {
        r
    }
}

pub(crate) fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// `metric,<runs...>,<run>_pct...`: raw numbers, empty where a value or percentage is
/// missing or does not apply.
pub fn render_csv(t: &CompareTable) -> String {
    let mut header = vec!["metric".to_string()];
    header.extend(t.runs.iter().map(|r| csv_field(r)));
    header.extend(t.runs[1..].iter().map(|r| csv_field(&format!("{r}_pct"))));
    let mut out = header.join(",");
    out.push('\n');
    let num = |v: Option<f64>| v.map(|v| raw(v).to_string()).unwrap_or_default();
    for r in t.sections.iter().flat_map(|s| &s.rows) {
        let mut f = vec![csv_field(&r.metric)];
        f.extend(r.values.iter().map(|v| num(*v)));
        f.extend(r.pct[1..].iter().map(|p| num(*p)));
        out.push_str(&f.join(","));
        out.push('\n');
    }
    out
}

/// `compare --format json`'s one shape, whichever table it carries: `kind` names the
/// table (`mmtests`: the compare table; `highalloc`: stress-highalloc's seed table;
/// `damon_reclaim`: DAMON_RECLAIM's), `columns` what each entry of a row's `values` is
/// (the runs, the compared key's values, or DAMON_RECLAIM's three figures), `points`
/// the runs each column merges (null where the columns are not runs), and `rows`.
#[derive(Debug, Serialize)]
pub struct JsonTable {
    pub kind: &'static str,
    pub columns: Vec<String>,
    pub points: Option<Vec<usize>>,
    pub rows: Vec<JsonRow>,
}

/// A row of [`JsonTable`]: its section and name, a value per column (null where
/// missing), the gain against the first column in % (null where none is given:
/// the first column, a missing value, a row without one), and whether the difference
/// is significant (Welch's t-test over the runs' samples; false where not tested).
#[derive(Debug, Serialize)]
pub struct JsonRow {
    pub section: String,
    pub metric: String,
    pub values: Vec<Option<f64>>,
    pub pct: Vec<Option<f64>>,
    pub significant: Vec<bool>,
}

impl JsonTable {
    /// Pretty JSON with a final newline; numbers rounded to 6 decimals (no `-0`).
    pub fn to_text(mut self) -> String {
        for r in &mut self.rows {
            for v in r.values.iter_mut().chain(r.pct.iter_mut()).flatten() {
                *v = raw(*v);
            }
        }
        let mut s = serde_json::to_string_pretty(&self).expect("a table serialises");
        s.push('\n');
        s
    }
}

/// The compare table in `--format json`'s text.
pub fn render_json(t: &CompareTable) -> String {
    json_table(t).to_text()
}

/// The compare table as [`JsonTable`] (`kind` `mmtests`, the points each column
/// merges).
pub fn json_table(t: &CompareTable) -> JsonTable {
    let rows = t
        .sections
        .iter()
        .flat_map(|s| {
            s.rows.iter().map(move |r| JsonRow {
                section: s.kind.key().to_string(),
                metric: r.metric.clone(),
                values: r.values.clone(),
                pct: r.pct.clone(),
                significant: r.significant.clone(),
            })
        })
        .collect();
    JsonTable {
        kind: "mmtests",
        columns: t.runs.clone(),
        points: Some(t.points.clone()),
        rows,
    }
}

/// A run that could not be loaded: prints as `<path>: <reason>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    pub path: PathBuf,
    pub reason: String,
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.reason)
    }
}

impl std::error::Error for LoadError {}

/// The directory a run path names (the path itself, or the directory holding a
/// results.json path), absolute and lexically normalised (`.` dropped, `..` popped), as
/// components.
fn run_dir_components(path: &Path) -> Vec<String> {
    let is_file = path.is_file() || path.file_name().is_some_and(|n| n == "results.json");
    let dir = if is_file {
        path.parent().unwrap_or(Path::new(""))
    } else {
        path
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let abs = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mut parts: Vec<String> = Vec::new();
    for c in abs.components() {
        match c {
            Component::Normal(n) => parts.push(n.to_string_lossy().into_owned()),
            Component::ParentDir => {
                parts.pop();
            }
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    parts
}

/// The column name of a single run: the last component of its directory.
pub fn run_name(path: &Path) -> String {
    run_dir_components(path)
        .pop()
        .unwrap_or_else(|| "/".to_string())
}

/// Default column names: for each run the shortest suffix of its directory's path that
/// no other run's directory shares (`a/x` and `b/x` rather than `x` twice). The same
/// directory given twice keeps one name.
pub fn run_names(paths: &[PathBuf]) -> Vec<String> {
    let dirs: Vec<Vec<String>> = paths.iter().map(|p| run_dir_components(p)).collect();
    let suffix = |d: &[String], k: usize| d[d.len().saturating_sub(k)..].join("/");
    dirs.iter()
        .map(|d| {
            let others: Vec<&Vec<String>> = dirs.iter().filter(|o| *o != d).collect();
            (1..=d.len())
                .map(|k| suffix(d, k))
                .enumerate()
                .find(|(i, name)| others.iter().all(|o| suffix(o, i + 1) != *name))
                .map(|(_, name)| name)
                .unwrap_or_else(|| format!("/{}", d.join("/")))
        })
        .collect()
}

/// Why `--label` cannot name the columns.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LabelError {
    #[error("--label: {labels} labels for {runs} runs (give one per run, in order)")]
    Count { labels: usize, runs: usize },
    #[error("--label: `{0}` is given twice (each run needs its own name)")]
    Duplicate(String),
}

/// The columns' names: `labels` (one per run, all different) or, without labels,
/// [`run_names`].
pub fn column_names(paths: &[PathBuf], labels: &[String]) -> Result<Vec<String>, LabelError> {
    if labels.is_empty() {
        return Ok(run_names(paths));
    }
    if labels.len() != paths.len() {
        return Err(LabelError::Count {
            labels: labels.len(),
            runs: paths.len(),
        });
    }
    let mut seen = BTreeSet::new();
    if let Some(dup) = labels.iter().find(|l| !seen.insert(l.as_str())) {
        return Err(LabelError::Duplicate(dup.clone()));
    }
    Ok(labels.to_vec())
}

/// Reads a run: `path` is a run directory holding results.json, or a results.json file.
pub fn load_run(path: &Path) -> Result<(String, Results), LoadError> {
    let file = if path.is_dir() {
        path.join("results.json")
    } else {
        path.to_path_buf()
    };
    let err = |reason: String| LoadError {
        path: file.clone(),
        reason,
    };
    let text = std::fs::read_to_string(&file).map_err(|e| {
        err(match e.kind() {
            std::io::ErrorKind::NotFound => "no such file or directory".into(),
            _ => e.to_string(),
        })
    })?;
    let mut de = serde_json::Deserializer::from_str(&text);
    let results: Results = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let at = e.path().to_string();
        let inner = e.into_inner();
        err(if at == "." {
            inner.to_string()
        } else {
            format!("{at}: {inner}")
        })
    })?;
    de.end().map_err(|e| err(e.to_string()))?;
    Ok((run_name(path), results))
}

/// Why `compare` of run directories printed no table.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompareError {
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error(transparent)]
    Label(#[from] LabelError),
    /// A sweep directory given as a run: its points are compared with `--by`.
    #[error("{}: a sweep directory: compare its points with --by KEY{}", dir.display(), by_hint(keys))]
    SweepNeedsBy { dir: PathBuf, keys: Vec<String> },
}

fn by_hint(keys: &[String]) -> String {
    match keys {
        [] => " (KEY: one of its swept keys)".into(),
        [k] => format!(" (--by {k})"),
        _ => format!(", KEY one of: {}", keys.join(", ")),
    }
}

/// Loads every run (stopping at the first failure) and renders the table, the columns
/// named by `labels` (one per run) or, without them, by [`run_names`].
pub fn compare_paths(
    paths: &[PathBuf],
    labels: &[String],
    format: Format,
) -> Result<String, CompareError> {
    let names = column_names(paths, labels)?;
    let mut runs = Vec::with_capacity(paths.len());
    for (p, name) in paths.iter().zip(names) {
        let (_, r) = load_run(p).map_err(|e| match sweep_keys(p) {
            Some(keys) => CompareError::SweepNeedsBy {
                dir: p.clone(),
                keys,
            },
            None => e.into(),
        })?;
        runs.push((name, r));
    }
    Ok(render_with_throttling(&runs, None, format))
}

/// Whether `dir` is a sweep's output (sweep.json, sweep.csv or point-NNN directories),
/// and if so its swept keys: sweep.json's, else those of the first point's point.json
/// (empty when neither can be read).
pub fn sweep_keys(dir: &Path) -> Option<Vec<String>> {
    // A sweep lists its points and their keys in sweep.json.
    if let Ok(listed) = super::sweep_dir::listed_points(dir) {
        return Some(
            listed
                .first()
                .map(|p| p.values.iter().map(|(k, _)| k.clone()).collect())
                .unwrap_or_default(),
        );
    }
    let mut points: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir() && p.file_name().is_some_and(is_point_dir_name))
        .collect();
    let csv = dir.join("sweep.csv");
    if points.is_empty() && !csv.is_file() {
        return None;
    }
    points.sort();
    let from_point = points.iter().find_map(|p| {
        let text = std::fs::read_to_string(p.join("point.json")).ok()?;
        let v: serde_json::Value = serde_json::from_str(&text).ok()?;
        Some(v["values"].as_object()?.keys().cloned().collect::<Vec<_>>())
    });
    Some(from_point.unwrap_or_default())
}

/// `point-` and three or more digits, as `sweep` names a point's directory.
fn is_point_dir_name(name: &std::ffi::OsStr) -> bool {
    name.to_str()
        .and_then(|n| n.strip_prefix("point-"))
        .is_some_and(|d| d.len() >= 3 && d.bytes().all(|c| c.is_ascii_digit()))
}

/// The table, then (text and markdown) each run's throttling histogram.
fn render_with_throttling(
    runs: &[(String, Results)],
    points: Option<&[usize]>,
    format: Format,
) -> String {
    let mut t = build(runs);
    if let Some(p) = points {
        t.points = p.to_vec();
    }
    let mut out = render(&t, format);
    if matches!(format, Format::Text | Format::Md) {
        for (name, r) in runs {
            if r.reclaim_throttle.is_empty() {
                continue;
            }
            let h = super::throttle_histogram(r);
            if format == Format::Md {
                let _ = write!(out, "\nReclaim throttling, {name}:\n\n```\n{h}```\n");
            } else {
                let _ = write!(out, "\nReclaim throttling, {name}\n{h}");
            }
        }
    }
    out
}

/// A seed experiment's own table, where a sweep is one (the sweep's points decide).
pub enum SeedTable {
    /// stress-highalloc's success rates and reclaim figures (`highalloc_table`).
    Highalloc(super::highalloc_table::Table),
    /// DAMON_RECLAIM's memory saving, kdamond CPU and slowdown (`damon_table`), against
    /// the first value of the compared key.
    DamonReclaim {
        rows: Vec<super::damon_table::Row>,
        baseline: String,
    },
}

impl SeedTable {
    pub fn render(&self, format: Format) -> String {
        match self {
            SeedTable::Highalloc(t) => super::highalloc_table::render(t, format),
            SeedTable::DamonReclaim { rows, baseline } => {
                super::damon_table::render(rows, baseline, format)
            }
        }
    }

    pub fn json_table(&self) -> JsonTable {
        match self {
            SeedTable::Highalloc(t) => super::highalloc_table::json_table(t),
            SeedTable::DamonReclaim { rows, .. } => super::damon_table::json_table(rows),
        }
    }
}

/// A sweep's points compared by one swept key: a column per value (in sweep order)
/// merging the points with it, and the seed's table where the sweep is one.
pub struct SweepTables {
    /// (the key's value, the points' merged results).
    pub columns: Vec<(String, Results)>,
    /// The points each column merges.
    pub counts: Vec<usize>,
    pub seed: Option<SeedTable>,
}

impl SweepTables {
    /// The mmtests table of the columns.
    pub fn compare_table(&self) -> CompareTable {
        let mut t = build(&self.columns);
        t.points = self.counts.clone();
        t
    }
}

/// `compare SWEEP_DIR --by KEY`: one column per value of the swept `KEY`, in sweep
/// order. Each column merges the sweep's points with that value, as mmtests reports a
/// benchmark that steps through worker counts: a workload's latency and throughput
/// rows once per combination of the other swept values (`mmap-4`, `mmap-8`), and the
/// time and /proc/vmstat rows summed over the points. A seed experiment's sweep prints
/// the seed's table first (CSV and JSON carry only it: one table per file).
pub fn compare_sweep(dir: &Path, by: &str, format: Format) -> Result<String, LoadError> {
    let t = sweep_tables(dir, by)?;
    let Some(seed) = &t.seed else {
        return Ok(render_with_throttling(&t.columns, Some(&t.counts), format));
    };
    let mut out = seed.render(format);
    if matches!(format, Format::Text | Format::Md) {
        out.push('\n');
        out.push_str(&render_with_throttling(&t.columns, Some(&t.counts), format));
    }
    Ok(out)
}

/// Loads a sweep's listed points and merges them by the swept key `by`
/// ([`compare_sweep`]).
pub fn sweep_tables(dir: &Path, by: &str) -> Result<SweepTables, LoadError> {
    let err = |path: &Path, reason: String| LoadError {
        path: path.to_path_buf(),
        reason,
    };
    // Only the points the sweep lists: a directory may also hold an older sweep's.
    let listed = super::sweep_dir::listed_points(dir).map_err(|e| err(dir, e.to_string()))?;
    if listed.is_empty() {
        return Err(err(dir, "the sweep lists no points".into()));
    }
    if let Some(reason) = super::sweep_dir::unfinished(&listed) {
        return Err(err(dir, reason));
    }
    let mut columns: Vec<(String, Results)> = Vec::new();
    let mut loaded: Vec<(Vec<(String, String)>, Results)> = Vec::new();
    // The points each column merges.
    let mut counts: Vec<usize> = Vec::new();
    for point in &listed {
        let pd = &point.dir;
        let column = point
            .values
            .iter()
            .find(|(k, _)| k == by)
            .map(|(_, v)| v.clone())
            .ok_or_else(|| err(dir, format!("`{by}` is not a swept key of this sweep")))?;
        let label: Vec<String> = point
            .values
            .iter()
            .filter(|(k, _)| k.as_str() != by)
            .map(|(_, v)| v.clone())
            .collect();
        let (_, r) = load_run(pd)?;
        loaded.push((point.values.clone(), r.clone()));
        match columns.iter().position(|(c, _)| *c == column) {
            Some(i) => {
                counts[i] += 1;
                merge_point(&mut columns[i].1, r, &label.join("-"));
            }
            None => {
                counts.push(1);
                let mut merged = r.clone();
                merged.workloads.clear();
                merged.tasks.clear();
                merged.vmstat.clear();
                merged.reclaim_throttle.clear();
                merged.duration_ns = 0;
                merged.reclaim.kswapd_cpu_ns = 0;
                merged.reclaim.direct_reclaim_cpu_ns = 0;
                merged.reclaim.kswapd_awake_ns = 0;
                merged.reclaim.kcompactd_awake_ns = 0;
                merge_point(&mut merged, r, &label.join("-"));
                columns.push((column, merged));
            }
        }
    }
    if columns.len() < 2 {
        return Err(err(
            dir,
            format!("`{by}` has one value in this sweep: nothing to compare"),
        ));
    }
    let seed = if super::highalloc_table::applies(&loaded) {
        let table = super::highalloc_table::build(by, &loaded).map_err(|e| err(dir, e))?;
        Some(SeedTable::Highalloc(table))
    } else if super::damon_table::applies(by, &loaded) {
        let rows = super::damon_table::build(by, &loaded).map_err(|e| err(dir, e))?;
        Some(SeedTable::DamonReclaim {
            rows,
            baseline: columns[0].0.clone(),
        })
    } else {
        None
    };
    Ok(SweepTables {
        columns,
        counts,
        seed,
    })
}

/// Adds one sweep point's results to a merged column.
fn merge_point(merged: &mut Results, r: Results, label: &str) {
    for (name, w) in r.workloads {
        let name = if label.is_empty() {
            name
        } else {
            format!("{name}-{label}")
        };
        merged.workloads.insert(name, w);
    }
    for (name, t) in r.tasks {
        let m = merged.tasks.entry(name).or_default();
        m.user_ns += t.user_ns;
        m.system_ns += t.system_ns;
        m.ops += t.ops;
    }
    for (k, v) in r.vmstat {
        *merged.vmstat.entry(k).or_default() += v;
    }
    for (k, t) in r.reclaim_throttle {
        let m = merged.reclaim_throttle.entry(k).or_default();
        m.count += t.count;
        m.woken_early += t.woken_early;
        m.timed_out += t.timed_out;
        for (usec, n) in t.usec_delayed {
            *m.usec_delayed.entry(usec).or_default() += n;
        }
    }
    merged.duration_ns += r.duration_ns;
    merged.reclaim.kswapd_cpu_ns += r.reclaim.kswapd_cpu_ns;
    merged.reclaim.direct_reclaim_cpu_ns += r.reclaim.direct_reclaim_cpu_ns;
    merged.reclaim.kswapd_awake_ns += r.reclaim.kswapd_awake_ns;
    merged.reclaim.kcompactd_awake_ns += r.reclaim.kcompactd_awake_ns;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(mean: f64, stddev: f64, n: u64) -> Sample {
        Sample { mean, stddev, n }
    }

    #[test]
    fn t_critical_matches_the_table_and_tends_to_1_96() {
        assert_eq!(t_critical_95(1.0), 12.706);
        assert_eq!(t_critical_95(0.3), 12.706);
        assert_eq!(t_critical_95(f64::NAN), 12.706);
        // Fractional degrees of freedom round down (conservative).
        assert_eq!(t_critical_95(9.9), 2.262);
        assert_eq!(t_critical_95(30.0), 2.042);
        // Published values: 40 -> 2.021, 60 -> 2.000, 120 -> 1.980.
        for (df, want) in [(31.0, 2.040), (40.0, 2.021), (60.0, 2.000), (120.0, 1.980)] {
            let got = t_critical_95(df);
            assert!((got - want).abs() < 0.001, "df {df}: {got} vs {want}");
        }
        assert!((t_critical_95(1e9) - 1.96).abs() < 0.0001);
        // Decreasing in df.
        let mut prev = f64::INFINITY;
        for df in 1..2000 {
            let c = t_critical_95(df as f64);
            assert!(c <= prev, "df {df}");
            prev = c;
        }
    }

    #[test]
    fn welch_statistic_and_degrees_of_freedom() {
        // Equal variances and sizes: se = sqrt(2 * 10^2 / 5) = sqrt(40) = 6.3246,
        // t = (100 - 80) / 6.3246 = 3.1623, df = (40)^2 / (2 * 20^2 / 4) = 8.
        let (t, df) = welch(s(100.0, 10.0, 5), s(80.0, 10.0, 5)).unwrap();
        assert!((t - 3.16228).abs() < 1e-4, "{t}");
        assert!((df - 8.0).abs() < 1e-9, "{df}");
        // 3.162 > t(8) = 2.306: significant. With n = 3 per run: se^2 = 2 * 100 / 3,
        // t = 20 / 8.165 = 2.449, df = 4, t(4) = 2.776: not significant.
        assert!(significant(s(100.0, 10.0, 5), s(80.0, 10.0, 5)));
        assert!(!significant(s(100.0, 10.0, 3), s(80.0, 10.0, 3)));
        // One zero variance: df is the other sample's n - 1.
        let (_, df) = welch(s(1.0, 0.0, 10), s(2.0, 3.0, 7)).unwrap();
        assert!((df - 6.0).abs() < 1e-9);
    }

    #[test]
    fn significance_edge_cases() {
        // Fewer than 2 samples: no variance estimate, never significant.
        assert!(!significant(s(100.0, 0.0, 1), s(1.0, 0.0, 1000)));
        assert!(!significant(s(100.0, 5.0, 0), s(1.0, 5.0, 1000)));
        assert_eq!(welch(s(100.0, 5.0, 1), s(1.0, 5.0, 1000)), None);
        // Both constant: significant iff the means differ.
        assert!(significant(s(100.0, 0.0, 10), s(101.0, 0.0, 10)));
        assert!(!significant(s(100.0, 0.0, 10), s(100.0, 0.0, 10)));
        // Equal means are never significant.
        assert!(!significant(s(100.0, 1.0, 1000), s(100.0, 1.0, 1000)));
    }

    #[test]
    fn percentages_are_gains() {
        assert_eq!(pct_change(200.0, 150.0, Better::Lower), Some(25.0));
        assert_eq!(pct_change(200.0, 250.0, Better::Lower), Some(-25.0));
        assert_eq!(pct_change(200.0, 250.0, Better::Higher), Some(25.0));
        assert_eq!(pct_change(200.0, 150.0, Better::Higher), Some(-25.0));
        assert_eq!(pct_change(0.0, 0.0, Better::Higher), Some(0.0));
        assert_eq!(pct_change(0.0, 5.0, Better::Lower), None);
        assert_eq!(pct_change(5.0, 0.0, Better::Lower), Some(100.0));
    }

    fn row(values: Vec<Option<f64>>, pct: Vec<Option<f64>>, sig: Vec<bool>) -> Row {
        Row {
            metric: "Amean w".into(),
            text_label: names("Amean", "w").1,
            better: Some(Better::Lower),
            values,
            pct,
            significant: sig,
        }
    }

    #[test]
    fn text_cells() {
        let r = row(
            vec![Some(200.0), Some(150.0), None, Some(7.0)],
            vec![None, Some(25.0), None, Some(-12.345)],
            vec![false, true, false, false],
        );
        assert_eq!(text_cell(&r, 0), ("200.00".into(), "".into()));
        assert_eq!(text_cell(&r, 1), ("150.00".into(), " (   25.00%)*".into()));
        assert_eq!(text_cell(&r, 2), ("-".into(), "".into()));
        assert_eq!(text_cell(&r, 3), ("7.00".into(), " (  -12.35%) ".into()));
        // Zero baseline: no percentage.
        let r = row(
            vec![Some(0.0), Some(3.0)],
            vec![None, None],
            vec![false, false],
        );
        assert_eq!(text_cell(&r, 1), ("3.00".into(), " (      n/a) ".into()));
        // Baseline missing: values only.
        let r = row(vec![None, Some(3.0)], vec![None, None], vec![false, false]);
        assert_eq!(text_cell(&r, 1), ("3.00".into(), "".into()));
    }

    #[test]
    fn raw_numbers_drop_float_noise() {
        assert_eq!(raw(0.1 + 0.2).to_string(), "0.3");
        assert_eq!(raw(74.011497).to_string(), "74.011497");
        assert_eq!(raw(-0.0000001).to_string(), "0");
        assert_eq!(raw(100.0).to_string(), "100");
    }

    #[test]
    fn formats_parse() {
        assert_eq!("md".parse::<Format>(), Ok(Format::Md));
        assert!("html".parse::<Format>().is_err());
    }

    #[test]
    fn single_run_names() {
        assert_eq!(run_name(Path::new("out/base")), "base");
        assert_eq!(run_name(Path::new("out/base/")), "base");
        assert_eq!(run_name(Path::new("out/patched/results.json")), "patched");
        assert_eq!(
            run_name(Path::new("results.json")),
            std::env::current_dir()
                .unwrap()
                .file_name()
                .unwrap()
                .to_string_lossy()
        );
    }

    fn names_of(paths: &[&str]) -> Vec<String> {
        let paths: Vec<PathBuf> = paths.iter().map(PathBuf::from).collect();
        run_names(&paths)
    }

    #[test]
    fn default_names_are_the_shortest_distinct_suffixes() {
        assert_eq!(names_of(&["out/a", "out/b"]), ["a", "b"]);
        // Same last component: one more component each.
        assert_eq!(names_of(&["a/x", "b/x/results.json"]), ["a/x", "b/x"]);
        // Only the runs that clash grow; `.` and `..` are resolved first.
        assert_eq!(
            names_of(&["p/q/x", "r/q/x", "s/y", "p/./z/../q/x/"]),
            ["p/q/x", "r/q/x", "y", "p/q/x"]
        );
        // A directory that is the tail of another's path: the whole path tells them apart.
        assert_eq!(names_of(&["/x", "/a/x"]), ["/x", "a/x"]);
        // The same directory twice keeps one name.
        assert_eq!(names_of(&["o/a", "o/b", "o/a"]), ["a", "b", "a"]);
    }

    #[test]
    fn labels_name_the_columns_once_each() {
        let paths = [PathBuf::from("x/a"), PathBuf::from("y/a")];
        let l = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(column_names(&paths, &[]), Ok(l(&["x/a", "y/a"])));
        assert_eq!(
            column_names(&paths, &l(&["old", "new"])),
            Ok(l(&["old", "new"]))
        );
        assert_eq!(
            column_names(&paths, &l(&["old"])),
            Err(LabelError::Count { labels: 1, runs: 2 })
        );
        assert_eq!(
            column_names(&paths, &l(&["v", "v"])),
            Err(LabelError::Duplicate("v".into()))
        );
    }

    #[test]
    fn percentages_that_round_to_zero_print_unsigned() {
        assert_eq!(fixed2(-0.004), "0.00");
        assert_eq!(fixed2(-0.0), "0.00");
        assert_eq!(fixed2(0.004), "0.00");
        assert_eq!(fixed2(-0.005001), "-0.01");
        let r = row(
            vec![Some(200.0), Some(200.001)],
            vec![None, Some(-0.0005)],
            vec![false, false],
        );
        assert_eq!(text_cell(&r, 1), ("200.00".into(), " (    0.00%) ".into()));
    }

    #[test]
    fn csv_quotes_when_needed() {
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("plain"), "plain");
    }
}
