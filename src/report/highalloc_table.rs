//! The stress-highalloc table in the seed's layout ("mm, kswapd: replace kswapd
//! compaction with waking up kcompactd", mmtests' compare-kernels): for each value of
//! the compared key, each pass's allocation success in % of its attempts (min, mean
//! and max over the points with that value, i.e. over seeds), then the compaction
//! counters and the time kswapd and kcompactd spent awake (means over the points).
//! `compare SWEEP --by KEY` prints it when the points ran `highalloc` workloads.

use super::compare::{csv_field, Format};
use super::natural::natural_cmp;
use super::results::Results;
use std::fmt::Write;

/// The counters the seed's table shows, with its row names.
const COUNTERS: [(&str, &str); 11] = [
    ("Compaction stalls", "compact_stall"),
    ("Compaction success", "compact_success"),
    ("Compaction failures", "compact_fail"),
    ("Page migrate success", "pgmigrate_success"),
    ("Page migrate failure", "pgmigrate_fail"),
    ("Compaction pages isolated", "compact_isolated"),
    ("Compaction migrate scanned", "compact_migrate_scanned"),
    ("Compaction free scanned", "compact_free_scanned"),
    ("Kcompactd wakeups", "compact_daemon_wake"),
    (
        "Kcompactd migrate scanned",
        "compact_daemon_migrate_scanned",
    ),
    ("Kcompactd free scanned", "compact_daemon_free_scanned"),
];

#[derive(Debug, Clone, serde::Serialize)]
pub struct Table {
    /// The compared key's values, in sweep order (the first is the baseline).
    pub columns: Vec<String>,
    /// Points (seeds) per column.
    pub points: Vec<usize>,
    pub rows: Vec<Row>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Row {
    pub name: String,
    /// One value per column.
    pub values: Vec<f64>,
    /// Whether more is better (success) or merely more (counters): the gain column.
    #[serde(skip)]
    percent: bool,
}

/// Whether the points ran `highalloc` workloads (their results count successes).
pub fn applies(points: &[(Vec<(String, String)>, Results)]) -> bool {
    points
        .iter()
        .any(|(_, r)| r.workloads.values().any(|w| w.alloc_success.is_some()))
}

fn stats(xs: &[f64]) -> [f64; 3] {
    if xs.is_empty() {
        return [0.0; 3];
    }
    let min = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let max = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    [min, xs.iter().sum::<f64>() / xs.len() as f64, max]
}

/// Builds the table: columns by `by`'s value, every other swept value a repetition.
pub fn build(by: &str, points: &[(Vec<(String, String)>, Results)]) -> Result<Table, String> {
    let mut columns: Vec<String> = Vec::new();
    let mut groups: Vec<Vec<&Results>> = Vec::new();
    for (values, r) in points {
        let v = values
            .iter()
            .find(|(k, _)| k == by)
            .map(|(_, v)| v.clone())
            .ok_or_else(|| format!("`{by}` is not a swept key of this sweep"))?;
        match columns.iter().position(|c| *c == v) {
            Some(i) => groups[i].push(r),
            None => {
                columns.push(v);
                groups.push(vec![r]);
            }
        }
    }
    let mut passes: Vec<String> = points
        .iter()
        .flat_map(|(_, r)| {
            r.workloads
                .iter()
                .filter(|(_, w)| w.alloc_success.is_some())
                .map(|(n, _)| n.clone())
        })
        .collect();
    passes.sort_by(|a, b| natural_cmp(a, b));
    passes.dedup();
    let mut rows = Vec::new();
    for (what, i) in [("Min", 0), ("Mean", 1), ("Max", 2)] {
        for (pi, pass) in passes.iter().enumerate() {
            let values = groups
                .iter()
                .map(|g| {
                    let pct: Vec<f64> = g
                        .iter()
                        .filter_map(|r| r.workloads.get(pass))
                        .filter(|w| w.ops > 0)
                        .map(|w| w.alloc_success.unwrap_or(0) as f64 * 100.0 / w.ops as f64)
                        .collect();
                    stats(&pct)[i]
                })
                .collect();
            rows.push(Row {
                name: format!("Success {} {what}", pi + 1),
                values,
                percent: true,
            });
        }
    }
    let mean = |g: &[&Results], f: &dyn Fn(&Results) -> f64| {
        g.iter().map(|r| f(r)).sum::<f64>() / g.len().max(1) as f64
    };
    for (name, key) in COUNTERS {
        rows.push(Row {
            name: name.to_string(),
            values: groups
                .iter()
                .map(|g| mean(g, &|r| r.vmstat.get(key).copied().unwrap_or(0) as f64))
                .collect(),
            percent: false,
        });
    }
    for (name, f) in [
        (
            "Kswapd time awake (s)",
            (|r: &Results| r.reclaim.kswapd_awake_ns) as fn(&Results) -> u64,
        ),
        ("Kcompactd time awake (s)", |r: &Results| {
            r.reclaim.kcompactd_awake_ns
        }),
    ] {
        rows.push(Row {
            name: name.to_string(),
            values: groups
                .iter()
                .map(|g| mean(g, &|r| f(r) as f64 / 1e9))
                .collect(),
            percent: false,
        });
    }
    Ok(Table {
        points: groups.iter().map(Vec::len).collect(),
        columns,
        rows,
    })
}

/// A value with its change against the baseline, as mmtests prints it: for success
/// rates the gain, `(-125.00%)` meaning 125 % higher (mmtests' sign for
/// higher-is-better figures); for counters the ratio to the baseline.
fn cell(v: f64, base: f64, row: &Row, first: bool) -> String {
    let num = if row.name.ends_with("(s)") || row.percent {
        format!("{v:.2}")
    } else {
        format!("{v:.0}")
    };
    if first {
        return format!("{num} (  0.00%)");
    }
    if row.percent {
        let gain = if base != 0.0 {
            (base - v) / base * 100.0
        } else {
            0.0
        };
        format!("{num} ({gain:7.2}%)")
    } else if base != 0.0 {
        format!("{num} (x{:.2})", v / base)
    } else {
        num
    }
}

/// The table in `compare --format json`'s one shape (`kind` `highalloc`).
pub fn json_table(t: &Table) -> super::compare::JsonTable {
    // compare's one JSON shape: the gain where the text gives one (success
    // rates), none for the counters' ratios.
    let rows = t
        .rows
        .iter()
        .map(|r| super::compare::JsonRow {
            section: if r.percent {
                "success"
            } else if r.name.ends_with("(s)") {
                "time"
            } else {
                "ops"
            }
            .to_string(),
            metric: r.name.clone(),
            values: r.values.iter().map(|&v| Some(v)).collect(),
            pct: r
                .values
                .iter()
                .enumerate()
                .map(|(i, &v)| {
                    let base = r.values[0];
                    (r.percent && i > 0 && base != 0.0).then(|| (base - v) / base * 100.0)
                })
                .collect(),
            significant: vec![false; r.values.len()],
        })
        .collect();
    super::compare::JsonTable {
        kind: "highalloc",
        columns: t.columns.clone(),
        points: Some(t.points.clone()),
        rows,
    }
}

pub fn render(t: &Table, format: Format) -> String {
    let mut out = String::new();
    match format {
        Format::Json => out = json_table(t).to_text(),
        Format::Csv => {
            let head: Vec<String> = t.columns.iter().map(|c| csv_field(c)).collect();
            let _ = writeln!(out, "row,{}", head.join(","));
            for r in &t.rows {
                let vals: Vec<String> = r.values.iter().map(|v| format!("{v:.4}")).collect();
                let _ = writeln!(out, "{},{}", csv_field(&r.name), vals.join(","));
            }
        }
        Format::Text | Format::Md => {
            let cells: Vec<Vec<String>> = t
                .rows
                .iter()
                .map(|r| {
                    r.values
                        .iter()
                        .enumerate()
                        .map(|(i, &v)| cell(v, r.values[0], r, i == 0))
                        .collect()
                })
                .collect();
            let name_w = t.rows.iter().map(|r| r.name.len()).max().unwrap_or(0);
            let col_w: Vec<usize> = (0..t.columns.len())
                .map(|i| {
                    cells
                        .iter()
                        .map(|c| c[i].len())
                        .chain([t.columns[i].len()])
                        .max()
                        .unwrap_or(0)
                })
                .collect();
            let seeds: Vec<String> = t.points.iter().map(|n| n.to_string()).collect();
            let _ = writeln!(
                out,
                "stress-highalloc: success in % of each pass's attempts over {} point(s) per column; counters and times are means",
                seeds.join("/")
            );
            if format == Format::Md {
                let _ = writeln!(out, "\n| | {} |", t.columns.join(" | "));
                let _ = writeln!(out, "|---|{}", "---:|".repeat(t.columns.len()));
                for (r, c) in t.rows.iter().zip(&cells) {
                    let _ = writeln!(out, "| {} | {} |", r.name, c.join(" | "));
                }
            } else {
                let mut line = format!("{:name_w$}", "");
                for (c, w) in t.columns.iter().zip(&col_w) {
                    let _ = write!(line, "  {c:>w$}");
                }
                let _ = writeln!(out, "{line}");
                for (r, c) in t.rows.iter().zip(&cells) {
                    let mut line = format!("{:name_w$}", r.name);
                    for (v, w) in c.iter().zip(&col_w) {
                        let _ = write!(line, "  {v:>w$}");
                    }
                    let _ = writeln!(out, "{line}");
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(successes: &[(&str, u64, u64)], migrated: u64) -> Results {
        let mut r = crate::report::results::minimal_results(1);
        for &(name, ok, ops) in successes {
            let mut w = crate::report::results::minimal_workload(ops, None);
            w.alloc_success = Some(ok);
            r.workloads.insert(name.to_string(), w);
        }
        r.vmstat.insert("pgmigrate_success".into(), migrated);
        r
    }

    #[test]
    fn min_mean_max_per_pass_over_seeds_and_counter_means() {
        let pt = |v: &str, seed: &str| {
            vec![
                ("kernel.kswapd_compaction".to_string(), v.to_string()),
                ("run.seed".to_string(), seed.to_string()),
            ]
        };
        let points = vec![
            (
                pt("kswapd", "1"),
                result(&[("pass1", 1, 100), ("pass2", 40, 100)], 0),
            ),
            (
                pt("kswapd", "2"),
                result(&[("pass1", 3, 100), ("pass2", 44, 100)], 0),
            ),
            (
                pt("kcompactd", "1"),
                result(&[("pass1", 5, 100), ("pass2", 60, 100)], 100),
            ),
            (
                pt("kcompactd", "2"),
                result(&[("pass1", 9, 100), ("pass2", 70, 100)], 300),
            ),
        ];
        assert!(applies(&points));
        let t = build("kernel.kswapd_compaction", &points).unwrap();
        assert_eq!(t.columns, ["kswapd", "kcompactd"]);
        assert_eq!(t.points, [2, 2]);
        let row = |n: &str| t.rows.iter().find(|r| r.name == n).unwrap().values.clone();
        assert_eq!(row("Success 1 Min"), [1.0, 5.0]);
        assert_eq!(row("Success 1 Mean"), [2.0, 7.0]);
        assert_eq!(row("Success 1 Max"), [3.0, 9.0]);
        assert_eq!(row("Success 2 Mean"), [42.0, 65.0]);
        assert_eq!(row("Page migrate success"), [0.0, 200.0]);
        // The gain as mmtests signs it: 2 → 7 is -250 %.
        let text = render(&t, Format::Text);
        assert!(text.contains("7.00 (-250.00%)"), "{text}");
        assert!(render(&t, Format::Csv)
            .starts_with("row,kswapd,kcompactd\nSuccess 1 Min,1.0000,5.0000\n"));
        // JSON: compare's one shape, the text's gain as `pct` on success rows only.
        let v: serde_json::Value = serde_json::from_str(&render(&t, Format::Json)).unwrap();
        assert_eq!(v["kind"], "highalloc");
        assert_eq!(v["columns"], serde_json::json!(["kswapd", "kcompactd"]));
        assert_eq!(v["points"], serde_json::json!([2, 2]));
        let row = |n: &str| {
            v["rows"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["metric"] == n)
                .unwrap()
                .clone()
        };
        assert_eq!(
            row("Success 1 Mean"),
            serde_json::json!({"section": "success", "metric": "Success 1 Mean",
                "values": [2.0, 7.0], "pct": [null, -250.0], "significant": [false, false]})
        );
        let migrate = row("Page migrate success");
        assert_eq!(migrate["section"], "ops");
        assert_eq!(migrate["pct"], serde_json::json!([null, null]));
    }
}
