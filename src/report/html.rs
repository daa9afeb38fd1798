//! `reclaimsim report`: one self-contained HTML page of runs and sweeps, to post to a
//! list or show a team.
//!
//! The page needs nothing but itself: styles, a few lines of script (sortable tables,
//! details opened for printing) and the charts as inline SVG, drawn by the same code as
//! `plot` ([`super::plot::dir_charts`]). For each input it shows what was run (the
//! provenance results.json records: scenario file and text, overrides, seed, version,
//! hash), then a run's workloads, counters, PSI, throttling and charts, or a sweep's
//! points, the seed's table where the sweep is a seed experiment (pivot.csv, or
//! compare's stress-highalloc and DAMON_RECLAIM tables), the mmtests compare table by
//! its last swept key (a replicate `run.seed` aside), and its charts. Two or more runs
//! get the mmtests compare table across them first, the first run the baseline, as
//! `compare` prints it.
//!
//! Every table is rendered from the data `compare --format json` prints
//! ([`super::compare::JsonTable`]) or from results.json, so the page says nothing the
//! other outputs do not.

use super::compare::{self, JsonTable, LabelError, LoadError};
use super::plot::{self, Chart, DirCharts, PlotError};
use super::results::Results;
use super::sweep_dir::{self, ListedPoint};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("{}: not a run directory (results.json) or a sweep directory (sweep.json)", .0.display())]
    NotAnInput(PathBuf),
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error(transparent)]
    Label(#[from] LabelError),
    #[error(transparent)]
    Plot(#[from] PlotError),
    #[error("drawing a chart of {}: {message}", path.display())]
    Draw { path: PathBuf, message: String },
}

/// One directory the report covers.
enum Input {
    Run {
        dir: PathBuf,
        results: Box<Results>,
    },
    Sweep {
        dir: PathBuf,
        points: Vec<ListedPoint>,
        /// The first point's results: the provenance shared by every point.
        first: Box<Results>,
    },
}

impl Input {
    fn load(path: &Path) -> Result<Input, ReportError> {
        let dir = if path.is_file() {
            path.parent().unwrap_or(Path::new(".")).to_path_buf()
        } else {
            path.to_path_buf()
        };
        if dir.join("sweep.json").is_file() {
            let points = sweep_dir::listed_points(&dir).map_err(|e| LoadError {
                path: e.path.join("sweep.json"),
                reason: e.reason,
            })?;
            if let Some(reason) = sweep_dir::unfinished(&points) {
                return Err(LoadError { path: dir, reason }.into());
            }
            let Some(p0) = points.first() else {
                return Err(LoadError {
                    path: dir.join("sweep.json"),
                    reason: "the sweep lists no points".into(),
                }
                .into());
            };
            let (_, first) = compare::load_run(&p0.dir)?;
            return Ok(Input::Sweep {
                dir,
                points,
                first: Box::new(first),
            });
        }
        if dir.join("results.json").is_file() {
            let (_, results) = compare::load_run(&dir)?;
            return Ok(Input::Run {
                dir,
                results: Box::new(results),
            });
        }
        Err(ReportError::NotAnInput(path.to_path_buf()))
    }

    fn dir(&self) -> &Path {
        match self {
            Input::Run { dir, .. } | Input::Sweep { dir, .. } => dir,
        }
    }
}

/// The page for `paths` (run or sweep directories, or results.json files), each
/// named by `labels` (one per path) or else by the shortest distinct suffix of its
/// path, as `compare` names its columns.
pub fn build(paths: &[PathBuf], labels: &[String]) -> Result<String, ReportError> {
    let names = compare::column_names(paths, labels)?;
    let inputs: Vec<Input> = paths
        .iter()
        .map(|p| Input::load(p))
        .collect::<Result<_, _>>()?;
    let runs: Vec<(String, Results)> = inputs
        .iter()
        .zip(&names)
        .filter_map(|(i, n)| match i {
            Input::Run { results, .. } => Some((n.clone(), (**results).clone())),
            Input::Sweep { .. } => None,
        })
        .collect();

    let mut nav = Vec::new();
    let mut body = String::new();
    if runs.len() >= 2 {
        let id = "compare".to_string();
        nav.push((id.clone(), "Compare".to_string()));
        let _ = write!(body, "<section id=\"{id}\"><h2>Compare</h2>");
        let t = compare::build(&runs);
        body.push_str(&compare_legend(&t));
        body.push_str(&json_table_html(&compare::json_table(&t)));
        body.push_str("</section>\n");
    }
    for (i, (input, name)) in inputs.iter().zip(&names).enumerate() {
        let id = format!("input-{i}");
        nav.push((id.clone(), name.clone()));
        let _ = write!(body, "<section id=\"{id}\" class=\"input\">");
        match input {
            Input::Run { results, .. } => {
                let _ = write!(body, "<h2>{} <small>run</small></h2>", esc(name));
                body.push_str(&provenance(results, &[]));
                body.push_str(&run_tables(results));
            }
            Input::Sweep { dir, points, first } => {
                let _ = write!(
                    body,
                    "<h2>{} <small>sweep of {} point{}</small></h2>",
                    esc(name),
                    points.len(),
                    if points.len() == 1 { "" } else { "s" }
                );
                body.push_str(&provenance(first, points));
                body.push_str(&sweep_tables(dir, points)?);
            }
        }
        body.push_str(&charts_html(input.dir())?);
        body.push_str("</section>\n");
    }

    let version = inputs
        .first()
        .map(|i| match i {
            Input::Run { results, .. } => results.reclaimsim_version.clone(),
            Input::Sweep { first, .. } => first.reclaimsim_version.clone(),
        })
        .unwrap_or_default();
    let mut page = String::new();
    let title = format!("reclaimsim report: {}", names.join(", "));
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"reclaimsim {}\">\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        esc(&version),
        esc(&title)
    );
    let _ = write!(
        page,
        "<header><h1>reclaimsim report</h1><p>{}, by reclaimsim {}.</p><nav><ul>",
        describe(&inputs),
        esc(&version)
    );
    for (id, label) in &nav {
        let _ = write!(page, "<li><a href=\"#{id}\">{}</a></li>", esc(label));
    }
    page.push_str("</ul></nav></header>\n<main>\n");
    page.push_str(&body);
    let _ = write!(
        page,
        "</main>\n<footer>Written by <code>reclaimsim report</code>; the numbers are those of the \
         directories' results.json, sweep.csv and timeseries.csv.</footer>\n<script>{SCRIPT}</script>\n</body>\n</html>\n"
    );
    Ok(page)
}

fn describe(inputs: &[Input]) -> String {
    let runs = inputs
        .iter()
        .filter(|i| matches!(i, Input::Run { .. }))
        .count();
    let sweeps = inputs.len() - runs;
    let n = |k: usize, what: &str| format!("{k} {what}{}", if k == 1 { "" } else { "s" });
    match (runs, sweeps) {
        (r, 0) => n(r, "run"),
        (0, s) => n(s, "sweep"),
        (r, s) => format!("{} and {}", n(r, "run"), n(s, "sweep")),
    }
}

/// HTML text or attribute value.
fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            _ => o.push(c),
        }
    }
    o
}

/// A number as a table shows it: integers whole, others to a precision that suits
/// their size (the cell's `data-v` keeps the value for sorting).
fn num(v: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    if v == v.trunc() && v.abs() < 1e15 {
        return format!("{v:.0}");
    }
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.4}")
    }
}

/// A value cell: right-aligned, sortable by its number.
fn num_cell(v: f64) -> String {
    format!("<td class=\"n\" data-v=\"{v}\">{}</td>", num(v))
}

fn text_cell(s: &str) -> String {
    format!("<td>{}</td>", esc(s))
}

/// A sortable table: a header row, then sections (a title row, then rows; an untitled
/// section has no title row). Clicking a header sorts the rows within each section.
fn table_html(
    class: &str,
    header: &[String],
    sections: &[(Option<String>, Vec<String>)],
) -> String {
    let mut o = format!("<div class=\"wrap\"><table class=\"sortable {class}\"><thead><tr>");
    for h in header {
        let _ = write!(o, "<th scope=\"col\">{}</th>", esc(h));
    }
    o.push_str("</tr></thead>");
    for (title, rows) in sections {
        if let Some(t) = title {
            let _ = write!(
                o,
                "<tbody class=\"title\"><tr><th colspan=\"{}\" scope=\"rowgroup\">{}</th></tr></tbody>",
                header.len(),
                esc(t)
            );
        }
        o.push_str("<tbody class=\"rows\">");
        for r in rows {
            let _ = write!(o, "<tr>{r}</tr>");
        }
        o.push_str("</tbody>");
    }
    o.push_str("</table></div>\n");
    o
}

/// compare's legend above its table, as one paragraph.
fn compare_legend(t: &compare::CompareTable) -> String {
    format!(
        "<p class=\"legend\">{}</p>",
        esc(&compare::legend(t).join(" "))
    )
}

/// Any table of `compare --format json`'s one shape: a column per entry of `columns`
/// (each later one with its gain where the table gives one), a section per run of rows
/// with the same `section`.
fn json_table_html(t: &JsonTable) -> String {
    let with_pct = t.rows.iter().any(|r| r.pct.iter().any(Option::is_some));
    let mut header = vec![String::new()];
    for (i, c) in t.columns.iter().enumerate() {
        let points = match &t.points {
            Some(p) if p.get(i).is_some_and(|&n| n > 1) => format!(" ({} points)", p[i]),
            _ => String::new(),
        };
        header.push(format!("{c}{points}"));
        if with_pct && i > 0 {
            header.push(format!("{c} %"));
        }
    }
    let mut sections: Vec<(Option<String>, Vec<String>)> = Vec::new();
    let mut section = None;
    for r in &t.rows {
        if section != Some(&r.section) {
            section = Some(&r.section);
            sections.push((Some(section_title(t.kind, &r.section)), Vec::new()));
        }
        let mut row = format!("<th scope=\"row\">{}</th>", esc(&r.metric));
        for (i, v) in r.values.iter().enumerate() {
            row.push_str(&match v {
                Some(v) => num_cell(*v),
                None => "<td class=\"n na\" data-v=\"\">n/a</td>".to_string(),
            });
            if with_pct && i > 0 {
                row.push_str(&match r.pct[i] {
                    Some(p) => {
                        // Only mmtests' gains are signed as gains; stress-highalloc
                        // prints a higher success rate as a negative change.
                        let class = if t.kind != "mmtests" {
                            "same"
                        } else if p >= 0.005 {
                            // (a gain printed as 0.00% is neither)
                            "better"
                        } else if p <= -0.005 {
                            "worse"
                        } else {
                            "same"
                        };
                        let star = if r.significant[i] { "*" } else { "" };
                        format!("<td class=\"n pct {class}\" data-v=\"{p}\">{p:+.2}%{star}</td>")
                    }
                    None => "<td class=\"n\" data-v=\"\"></td>".to_string(),
                });
            }
        }
        sections.last_mut().expect("pushed above").1.push(row);
    }
    table_html(&format!("kind-{}", t.kind), &header, &sections)
}

fn section_title(kind: &str, key: &str) -> String {
    match (kind, key) {
        ("mmtests", "latency") => "Latency (us; Max-90 = p90)".into(),
        ("mmtests", "time") | ("highalloc", "time") => "Time (s)".into(),
        ("mmtests", "ops") | ("highalloc", "ops") => "Ops".into(),
        ("mmtests", "throughput") => "Throughput".into(),
        ("highalloc", "success") => "Success rate (%)".into(),
        _ => key.to_string(),
    }
}

/// What was run: the provenance results.json records. For a sweep, the first point's,
/// less its swept values (listed per point in the points table).
fn provenance(r: &Results, points: &[ListedPoint]) -> String {
    let p = &r.provenance;
    let swept: Vec<String> = points
        .first()
        .map(|pt| pt.values.iter().map(|(k, _)| format!("{k}=")).collect())
        .unwrap_or_default();
    let sets: Vec<&String> = p
        .sets
        .iter()
        .filter(|s| !swept.iter().any(|k| s.starts_with(k.as_str())))
        .collect();
    let mut o = String::from("<h3>What was run</h3><dl class=\"prov\">");
    let mut item = |k: &str, v: String| {
        let _ = write!(o, "<dt>{k}</dt><dd>{v}</dd>");
    };
    item(
        "Scenario",
        format!("<code>{}</code>", esc(&p.scenario_file)),
    );
    item(
        "Overrides",
        if sets.is_empty() {
            "none".into()
        } else {
            sets.iter()
                .map(|s| format!("<code>--set {}</code>", esc(s)))
                .collect::<Vec<_>>()
                .join(" ")
        },
    );
    if let Some(pt) = points.first() {
        item(
            "Swept",
            pt.values
                .iter()
                .map(|(k, _)| format!("<code>{}</code>", esc(k)))
                .collect::<Vec<_>>()
                .join(", "),
        );
    }
    item("Seed", r.seed.to_string());
    item(
        "Simulated",
        format!("{} s", num(r.duration_ns as f64 / 1e9)),
    );
    item("reclaimsim", esc(&p.reclaimsim_version));
    item(
        "Scenario hash",
        format!("<code class=\"hash\">{}</code>", esc(&p.scenario_hash)),
    );
    if r.interrupted {
        item(
            "Interrupted",
            "yes: the figures cover the time reached".into(),
        );
    }
    o.push_str("</dl>");
    if !p.scenario_text.is_empty() {
        let _ = write!(
            o,
            "<details><summary>Scenario text</summary><pre class=\"scenario\">{}</pre></details>",
            esc(&p.scenario_text)
        );
    }
    o
}

/// A run's workloads, reclaim counters, PSI, throttling and events.
fn run_tables(r: &Results) -> String {
    let mut o = String::from("<h3>Workloads</h3>");
    let header: Vec<String> = [
        "workload",
        "ops",
        "ops/s",
        "MB/s",
        "latency mean (us)",
        "p50 (us)",
        "p99 (us)",
        "max (us)",
    ]
    .map(String::from)
    .to_vec();
    let rows = r
        .workloads
        .iter()
        .map(|(name, w)| {
            let l = &w.latency_ns;
            format!(
                "<th scope=\"row\">{}</th>{}{}{}{}{}{}{}",
                esc(name),
                num_cell(w.ops as f64),
                num_cell(w.throughput),
                num_cell(w.bytes_per_sec / 1e6),
                num_cell(l.mean / 1e3),
                num_cell(l.p50 as f64 / 1e3),
                num_cell(l.p99 as f64 / 1e3),
                num_cell(l.max as f64 / 1e3),
            )
        })
        .collect();
    o.push_str(&table_html("workloads", &header, &[(None, rows)]));

    o.push_str("<h3>/proc/vmstat</h3><p class=\"note\">Counters that are not zero.</p>");
    let rows = r
        .vmstat
        .iter()
        .filter(|(_, &v)| v != 0)
        .map(|(k, &v)| {
            format!(
                "<th scope=\"row\"><code>{}</code></th>{}",
                esc(k),
                num_cell(v as f64)
            )
        })
        .collect();
    o.push_str(&table_html(
        "vmstat",
        &["counter".into(), "value".into()],
        &[(None, rows)],
    ));

    let m = &r.psi.memory;
    let _ = write!(
        o,
        "<h3>Pressure</h3><pre class=\"psi\">/proc/pressure/memory\nsome avg10={:.2} avg60={:.2} avg300={:.2} total={}\nfull avg10={:.2} avg60={:.2} avg300={:.2} total={}</pre>",
        m.some.avg10, m.some.avg60, m.some.avg300, m.some.total, m.full.avg10, m.full.avg60,
        m.full.avg300, m.full.total
    );
    if !r.reclaim_throttle.is_empty() {
        let _ = write!(
            o,
            "<h3>Reclaim throttling</h3><pre>{}</pre>",
            esc(&super::throttle_histogram(r))
        );
    }
    if !r.events.is_empty() {
        o.push_str("<h3>Events</h3>");
        let rows = r
            .events
            .iter()
            .map(|e| {
                format!(
                    "{}{}{}{}{}",
                    num_cell(e.time_ns as f64 / 1e9),
                    text_cell(&e.event),
                    text_cell(&e.workload),
                    num_cell(e.rss_pages as f64),
                    num_cell(e.swap_pages as f64)
                )
            })
            .collect();
        let header = ["time (s)", "event", "workload", "rss pages", "swap pages"].map(String::from);
        o.push_str(&table_html("events", &header, &[(None, rows)]));
    }
    o
}

/// A sweep's points (sweep.csv), the seed's table where the sweep is a seed experiment,
/// and the mmtests table by its last swept key (`run.seed` aside).
fn sweep_tables(dir: &Path, points: &[ListedPoint]) -> Result<String, ReportError> {
    let mut o = String::new();
    let csv_path = dir.join("sweep.csv");
    if csv_path.is_file() {
        o.push_str("<h3>Points</h3>");
        o.push_str(&csv_table(&plot::read_csv(&csv_path)?));
    }
    let pivot = dir.join("pivot.csv");
    if pivot.is_file() {
        o.push_str("<h3>The seed's table</h3><p class=\"note\">pivot.csv: the sweep's <code>[sweep.pivot]</code>, as <code>sweep</code> printed it.</p>");
        o.push_str(&csv_table(&plot::read_csv(&pivot)?));
    }
    let keys: Vec<&str> = points
        .first()
        .map(|p| p.values.iter().map(|(k, _)| k.as_str()).collect())
        .unwrap_or_default();
    let varied: Vec<&str> = keys
        .into_iter()
        .filter(|&k| {
            let values: std::collections::BTreeSet<&String> = points
                .iter()
                .filter_map(|p| p.values.iter().find(|(pk, _)| pk == k).map(|(_, v)| v))
                .collect();
            values.len() >= 2
        })
        .collect();
    // The seed's table by the first key that gives one, the compared key first.
    let Some(by) = compare_key(&varied) else {
        return Ok(o);
    };
    let mut tables = compare::sweep_tables(dir, by)?;
    let mut seed = tables.seed.take().map(|t| (by, t));
    for &other in varied.iter().filter(|&&k| k != by) {
        if seed.is_some() || pivot.is_file() {
            break;
        }
        seed = compare::sweep_tables(dir, other)?.seed.map(|t| (other, t));
    }
    if let Some((key, t)) = seed.filter(|_| !pivot.is_file()) {
        let _ = write!(o, "<h3>The seed's table, by <code>{}</code></h3>", esc(key));
        o.push_str(&json_table_html(&t.json_table()));
    }
    let _ = write!(o, "<h3>Compared by <code>{}</code></h3>", esc(by));
    let t = tables.compare_table();
    o.push_str(&compare_legend(&t));
    o.push_str(&json_table_html(&compare::json_table(&t)));
    Ok(o)
}

/// The key a sweep's mmtests table compares by, of the swept keys with two or more
/// values: the last but a replicate `run.seed`, as the seeds put the switch under test
/// last (stutterp after its worker counts, memcg-low-step's protection after
/// memory.low); `run.seed` only when nothing else varies.
fn compare_key<'a>(varied: &[&'a str]) -> Option<&'a str> {
    varied
        .iter()
        .rev()
        .find(|&&k| k != "run.seed")
        .or(varied.first())
        .copied()
}

/// A CSV file as a table: a column whose every cell is a number (or empty) is
/// right-aligned and sorts by value; any other, such as a swept size (`553M` beside
/// `0`), stays text.
fn csv_table(csv: &plot::Csv) -> String {
    let numeric: Vec<bool> = (0..csv.header.len())
        .map(|c| {
            csv.rows.iter().all(|r| {
                r.get(c)
                    .is_none_or(|v| v.is_empty() || v.parse::<f64>().is_ok())
            })
        })
        .collect();
    let rows = csv
        .rows
        .iter()
        .map(|r| {
            r.iter()
                .enumerate()
                .map(|(c, v)| match v.parse::<f64>() {
                    Ok(x) if numeric.get(c) == Some(&true) => {
                        format!("<td class=\"n\" data-v=\"{x}\">{}</td>", esc(v))
                    }
                    _ => text_cell(v),
                })
                .collect::<String>()
        })
        .collect();
    table_html("csv", &csv.header, &[(None, rows)])
}

/// The directory's charts as inline SVG figures, each saying how many series it draws
/// (`data-series`) and their names (`data-names`), which the browser test checks.
fn charts_html(dir: &Path) -> Result<String, ReportError> {
    let DirCharts { charts, heatmaps } = match plot::dir_charts(dir) {
        Ok(c) => c,
        // A run without timeseries.csv (results.json alone) has no charts.
        Err(PlotError::NotARun(_)) => return Ok(String::new()),
        Err(e) => return Err(e.into()),
    };
    let mut o = String::from("<h3>Charts</h3><div class=\"charts\">");
    let draw_err = |file: &str| {
        let path = dir.join(format!("{file}.svg"));
        move |message| ReportError::Draw { path, message }
    };
    for c in &charts {
        let svg = plot::draw_svg(c).map_err(draw_err(&c.file))?;
        o.push_str(&figure(c, &svg));
    }
    for h in &heatmaps {
        let svg = super::heatmap::draw_svg(h).map_err(draw_err(&h.file))?;
        let _ = write!(
            o,
            "<figure class=\"chart heatmap\" data-series=\"1\" data-names=\"\">{}<figcaption>{}</figcaption></figure>",
            strip_prolog(&svg),
            esc(&h.title)
        );
    }
    o.push_str("</div>");
    Ok(o)
}

fn figure(c: &Chart, svg: &str) -> String {
    let drawn = c.series.iter().filter(|s| !s.points.is_empty());
    // The legend names each series but those folded into its one "other" entry.
    let named: Vec<&str> = drawn
        .clone()
        .filter(|s| !s.other)
        .map(|s| s.name.as_str())
        .collect();
    format!(
        "<figure class=\"chart {}\" data-series=\"{}\" data-names=\"{}\">{}<figcaption>{}</figcaption></figure>",
        if c.markers { "markers" } else { "lines" },
        drawn.count(),
        esc(&named.join("\u{1f}")),
        strip_prolog(svg),
        esc(&c.title)
    )
}

/// The `<svg>` element alone (an XML prolog is not allowed inside HTML).
fn strip_prolog(svg: &str) -> &str {
    svg.find("<svg").map_or(svg, |i| &svg[i..])
}

const STYLE: &str = r#"
:root { --fg: #1b1b1b; --muted: #5f6368; --line: #d5d7da; --head: #f1f3f4; --better: #1e7b34; --worse: #b3261e; }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1400px; padding: 0 1rem 2rem; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); }
header { border-bottom: 2px solid var(--line); margin-bottom: 1rem; }
h1 { font-size: 1.6rem; margin: 1rem 0 .2rem; }
h2 { font-size: 1.35rem; margin-top: 2rem; border-bottom: 1px solid var(--line); overflow-wrap: anywhere; }
h2 small { font-weight: normal; color: var(--muted); font-size: .8em; }
h3 { font-size: 1.1rem; margin: 1.4rem 0 .4rem; overflow-wrap: anywhere; }
nav ul { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: .3rem 1rem; }
nav a { overflow-wrap: anywhere; }
code, pre { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: .9em; }
pre { background: var(--head); padding: .6rem; overflow-x: auto; white-space: pre; }
dl.prov { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; margin: 0; }
dl.prov dt { color: var(--muted); }
dl.prov dd { margin: 0; overflow-wrap: anywhere; }
.note, .legend { color: var(--muted); font-size: .9em; }
.wrap { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; margin: .3rem 0 1rem; }
th, td { padding: .2rem .6rem; border-bottom: 1px solid var(--line); text-align: left; white-space: nowrap; }
thead th { background: var(--head); position: sticky; top: 0; cursor: pointer; user-select: none; }
thead th[aria-sort="ascending"]::after { content: " \25B2"; }
thead th[aria-sort="descending"]::after { content: " \25BC"; }
tbody.title th { background: #fafafa; font-weight: 600; }
tbody.rows th { font-weight: normal; }
td.n { text-align: right; }
td.na { color: var(--muted); }
td.better { color: var(--better); }
td.worse { color: var(--worse); }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 560px), 1fr)); gap: 1rem; }
figure.chart { margin: 0; }
figure.chart svg { display: block; width: 100%; height: auto; }
figcaption { color: var(--muted); font-size: .85em; text-align: center; }
footer { margin-top: 2rem; color: var(--muted); font-size: .85em; border-top: 1px solid var(--line); padding-top: .5rem; }
@media (max-width: 600px) { body { font-size: 14px; padding: 0 .5rem 1rem; } th, td { padding: .15rem .35rem; } }
@media print {
  body { max-width: none; font-size: 10pt; }
  nav, thead th::after { display: none; }
  thead th { position: static; }
  .wrap { overflow: visible; }
  figure.chart, dl, tr { break-inside: avoid; }
  h2, h3 { break-after: avoid; }
  .charts { grid-template-columns: 1fr 1fr; }
}
"#;

/// Sorting: a header click sorts each section's rows by that column (numbers by
/// `data-v`, else text; again to reverse). Printing opens every <details>.
const SCRIPT: &str = r#"
(function () {
  function key(row, i) {
    var c = row.children[i];
    if (!c) return "";
    var v = c.getAttribute("data-v");
    if (v !== null && v !== "") return parseFloat(v);
    return c.textContent.trim();
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    table.querySelectorAll("thead th").forEach(function (th, i) {
      th.addEventListener("click", function () {
        var asc = th.getAttribute("aria-sort") !== "ascending";
        table.querySelectorAll("thead th").forEach(function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", asc ? "ascending" : "descending");
        table.querySelectorAll("tbody.rows").forEach(function (tb) {
          var rows = Array.prototype.slice.call(tb.rows);
          rows.sort(function (a, b) {
            var x = key(a, i), y = key(b, i);
            var cmp = (typeof x === "number" && typeof y === "number") ? x - y
              : String(x).localeCompare(String(y), undefined, { numeric: true });
            return asc ? cmp : -cmp;
          });
          rows.forEach(function (r) { tb.appendChild(r); });
        });
      });
    });
  });
  window.addEventListener("beforeprint", function () {
    document.querySelectorAll("details").forEach(function (d) { d.open = true; });
  });
})();
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(esc("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
    }

    #[test]
    fn numbers_keep_integers_whole_and_suit_precision_to_size() {
        assert_eq!(num(1234567.0), "1234567");
        assert_eq!(num(-3.0), "-3");
        assert_eq!(num(123.456), "123.5");
        assert_eq!(num(1.2345), "1.23");
        assert_eq!(num(0.012345), "0.0123");
    }

    #[test]
    fn sweeps_compare_by_their_last_key_but_a_replicate_seed() {
        assert_eq!(
            compare_key(&["workers", "kernel.reclaim_throttle"]),
            Some("kernel.reclaim_throttle")
        );
        assert_eq!(
            compare_key(&["kernel.kswapd_compaction", "run.seed"]),
            Some("kernel.kswapd_compaction")
        );
        assert_eq!(compare_key(&["run.seed"]), Some("run.seed"));
        assert_eq!(compare_key(&[]), None);
    }

    #[test]
    fn json_tables_keep_sections_columns_and_gains() {
        use super::super::compare::JsonRow;
        let t = JsonTable {
            kind: "mmtests",
            columns: vec!["base".into(), "new".into()],
            points: Some(vec![1, 3]),
            rows: vec![
                JsonRow {
                    section: "latency".into(),
                    metric: "Amean app".into(),
                    values: vec![Some(10.0), Some(8.0)],
                    pct: vec![None, Some(20.0)],
                    significant: vec![false, true],
                },
                JsonRow {
                    section: "ops".into(),
                    metric: "pgscan_kswapd".into(),
                    values: vec![Some(5.0), None],
                    pct: vec![None, None],
                    significant: vec![false, false],
                },
            ],
        };
        let h = json_table_html(&t);
        assert!(h.contains("<th scope=\"col\">new (3 points)</th><th scope=\"col\">new %</th>"));
        assert!(h.contains(">Latency (us; Max-90 = p90)</th>"));
        assert!(h.contains(">Ops</th>"));
        assert!(h.contains("class=\"n pct better\" data-v=\"20\">+20.00%*</td>"));
        assert!(h.contains(">n/a</td>"));
        assert_eq!(h.matches("<tbody class=\"rows\">").count(), 2);
        assert_eq!(h.matches("<tr>").count(), 5, "header, two titles, two rows");
    }
}
