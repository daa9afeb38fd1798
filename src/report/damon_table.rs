//! The DAMON_RECLAIM evaluation table in the seed's layout ("Introduce DAMON-based
//! Proactive Reclamation"): for each configuration, the memory saving, kdamond CPU
//! use and slowdown against the run without DAMON_RECLAIM, averaged over the
//! programs. `compare SWEEP --by KEY` prints it when KEY's first value ran without
//! DAMON_RECLAIM and others with it: that value is the baseline, and the other swept
//! keys name the programs (each compared with its own baseline point).

use super::compare::{csv_field, Format};
use super::results::Results;
use std::fmt::Write;

/// One configuration against the baseline, for one program or averaged.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Figures {
    /// (baseline mean footprint - mean footprint) / baseline, %.
    pub memory_saving_pct: f64,
    /// The kdamonds' CPU time over the run, % of one CPU.
    pub kdamond_cpu_pct: f64,
    /// (runtime - baseline runtime) / baseline runtime, %.
    pub slowdown_pct: f64,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Row {
    pub config: String,
    /// Empty for the average over the programs.
    pub program: String,
    #[serde(flatten)]
    pub figures: Figures,
}

fn ran_damon_reclaim(r: &Results) -> bool {
    r.damon
        .as_ref()
        .and_then(|d| d.damon_reclaim.as_ref())
        .is_some_and(|dr| dr.enabled)
}

/// Whether the table applies to comparing `points` by `by`: the first value of `by`
/// ran without DAMON_RECLAIM (the baseline) and some other point ran with it.
pub fn applies(by: &str, points: &[(Vec<(String, String)>, Results)]) -> bool {
    let value =
        |values: &[(String, String)]| values.iter().find(|(k, _)| k == by).map(|(_, v)| v.clone());
    let Some(first) = points.first().and_then(|(v, _)| value(v)) else {
        return false;
    };
    let (base, rest): (Vec<_>, Vec<_>) = points
        .iter()
        .partition(|(v, _)| value(v).as_ref() == Some(&first));
    base.iter().all(|(_, r)| !ran_damon_reclaim(r))
        && rest.iter().any(|(_, r)| ran_damon_reclaim(r))
}

/// A run's runtime: when its last workload finished (or was killed); the run's end if
/// one never did.
fn runtime_ns(r: &Results) -> u64 {
    r.workloads
        .values()
        .map(|w| w.runtime_ns.or(w.killed_at_ns).unwrap_or(r.duration_ns))
        .max()
        .unwrap_or(r.duration_ns)
}

fn kdamond_cpu_ns(r: &Results) -> u64 {
    r.damon
        .as_ref()
        .map_or(0, |d| d.kdamonds.values().map(|k| k.cpu_ns).sum())
}

/// `r` against `base`.
pub fn figures(r: &Results, base: &Results) -> Figures {
    let pct = |num: f64, den: f64| if den > 0.0 { num / den * 100.0 } else { 0.0 };
    let (m, mb) = (
        r.memory.mean_used_bytes as f64,
        base.memory.mean_used_bytes as f64,
    );
    let (t, tb) = (runtime_ns(r) as f64, runtime_ns(base) as f64);
    Figures {
        memory_saving_pct: pct(mb - m, mb),
        kdamond_cpu_pct: pct(kdamond_cpu_ns(r) as f64, r.duration_ns as f64),
        slowdown_pct: pct(t - tb, tb),
    }
}

/// The rows: per configuration (values of `by` after the first) the average over the
/// programs, then each program's own.
pub fn build(by: &str, points: &[(Vec<(String, String)>, Results)]) -> Result<Vec<Row>, String> {
    let value_of = |values: &[(String, String)]| {
        values
            .iter()
            .find(|(k, _)| k == by)
            .map(|(_, v)| v.clone())
            .ok_or_else(|| format!("`{by}` is not a swept key of this sweep"))
    };
    // A program is named by the other swept values; with none, by its workloads.
    let workloads = points
        .first()
        .map(|(_, r)| r.workloads.keys().cloned().collect::<Vec<_>>().join("+"))
        .unwrap_or_default();
    let program_of = |values: &[(String, String)]| {
        let rest: Vec<&str> = values
            .iter()
            .filter(|(k, _)| k != by)
            .map(|(_, v)| v.as_str())
            .collect();
        if rest.is_empty() {
            workloads.clone()
        } else {
            rest.join("-")
        }
    };
    let mut configs: Vec<String> = Vec::new();
    let mut programs: Vec<String> = Vec::new();
    for (values, _) in points {
        let c = value_of(values)?;
        if !configs.contains(&c) {
            configs.push(c);
        }
        let p = program_of(values);
        if !programs.contains(&p) {
            programs.push(p);
        }
    }
    let Some(baseline) = configs.first().cloned() else {
        return Err("the sweep lists no points".into());
    };
    let find = |config: &str, program: &str| {
        points
            .iter()
            .find(|(v, _)| value_of(v).is_ok_and(|c| c == config) && program_of(v) == program)
    };
    let mut per_program = Vec::new();
    let mut averages = Vec::new();
    for config in configs.iter().skip(1) {
        let mut sum = [0.0; 3];
        let mut n = 0;
        for program in &programs {
            let (Some((_, r)), Some((_, b))) = (find(config, program), find(&baseline, program))
            else {
                continue;
            };
            let f = figures(r, b);
            sum[0] += f.memory_saving_pct;
            sum[1] += f.kdamond_cpu_pct;
            sum[2] += f.slowdown_pct;
            n += 1;
            per_program.push(Row {
                config: config.clone(),
                program: program.clone(),
                figures: f,
            });
        }
        if n > 0 {
            let n = n as f64;
            averages.push(Row {
                config: config.clone(),
                program: String::new(),
                figures: Figures {
                    memory_saving_pct: sum[0] / n,
                    kdamond_cpu_pct: sum[1] / n,
                    slowdown_pct: sum[2] / n,
                },
            });
        }
    }
    if averages.is_empty() {
        return Err(format!(
            "no program has both a `{by} = {baseline}` baseline point and another"
        ));
    }
    averages.extend(per_program);
    Ok(averages)
}

/// The figures of a row, in [`Figures`]' order: the JSON table's columns.
const FIGURES: [&str; 3] = ["memory_saving_pct", "kdamond_cpu_pct", "slowdown_pct"];

/// The rows in `compare --format json`'s one shape (`kind` `damon_reclaim`).
pub fn json_table(rows: &[Row]) -> super::compare::JsonTable {
    // compare's one JSON shape: a row per configuration (section) and program
    // (`mean` for the average over them), the three figures its columns.
    let rows = rows
        .iter()
        .map(|r| {
            let f = &r.figures;
            super::compare::JsonRow {
                section: r.config.clone(),
                metric: if r.program.is_empty() {
                    "mean".to_string()
                } else {
                    r.program.clone()
                },
                values: vec![
                    Some(f.memory_saving_pct),
                    Some(f.kdamond_cpu_pct),
                    Some(f.slowdown_pct),
                ],
                pct: vec![None; 3],
                significant: vec![false; 3],
            }
        })
        .collect();
    super::compare::JsonTable {
        kind: "damon_reclaim",
        columns: FIGURES.map(String::from).to_vec(),
        points: None,
        rows,
    }
}

/// The table in `format`; `baseline` names the first value of the compared key.
pub fn render(rows: &[Row], baseline: &str, format: Format) -> String {
    let mut out = String::new();
    match format {
        Format::Json => out = json_table(rows).to_text(),
        Format::Csv => {
            out.push_str("config,program,memory_saving_pct,kdamond_cpu_pct,slowdown_pct\n");
            for r in rows {
                let f = &r.figures;
                let _ = writeln!(
                    out,
                    "{},{},{:.2},{:.2},{:.2}",
                    csv_field(&r.config),
                    csv_field(&r.program),
                    f.memory_saving_pct,
                    f.kdamond_cpu_pct,
                    f.slowdown_pct
                );
            }
        }
        Format::Text | Format::Md => {
            let averages: Vec<&Row> = rows.iter().filter(|r| r.program.is_empty()).collect();
            let programs: Vec<&Row> = rows.iter().filter(|r| !r.program.is_empty()).collect();
            let n = programs
                .iter()
                .map(|r| r.program.as_str())
                .collect::<std::collections::BTreeSet<_>>()
                .len();
            let _ = writeln!(
                out,
                "DAMON_RECLAIM against {baseline}, the mean over {n} program{}:",
                if n == 1 { "" } else { "s" }
            );
            table(&mut out, &averages, false, format);
            let _ = writeln!(out, "\nPer program:");
            table(&mut out, &programs, true, format);
        }
    }
    out
}

fn table(out: &mut String, rows: &[&Row], with_program: bool, format: Format) {
    let mut header = vec!["config"];
    if with_program {
        header.push("program");
    }
    header.extend(["memory saving", "kdamond CPU", "slowdown"]);
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let mut c = vec![r.config.clone()];
            if with_program {
                c.push(r.program.clone());
            }
            let f = &r.figures;
            c.extend(
                [f.memory_saving_pct, f.kdamond_cpu_pct, f.slowdown_pct]
                    .map(|v| format!("{:.2} %", if v.abs() < 0.005 { 0.0 } else { v })),
            );
            c
        })
        .collect();
    let width: Vec<usize> = (0..header.len())
        .map(|i| {
            cells
                .iter()
                .map(|c| c[i].chars().count())
                .chain([header[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let texts = header.len() - 3;
    let line = |cols: &[String]| -> String {
        let parts: Vec<String> = cols
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if i < texts {
                    format!("{c:<w$}", w = width[i])
                } else {
                    format!("{c:>w$}", w = width[i])
                }
            })
            .collect();
        match format {
            Format::Md => format!("| {} |", parts.join(" | ")),
            _ => parts.join("  ").trim_end().to_string(),
        }
    };
    let head: Vec<String> = header.iter().map(|h| h.to_string()).collect();
    if format == Format::Md {
        out.push('\n');
    }
    let _ = writeln!(out, "{}", line(&head));
    if format == Format::Md {
        let rule: Vec<String> = (0..header.len())
            .map(|i| {
                let dashes = "-".repeat(width[i].max(3));
                if i < texts {
                    dashes
                } else {
                    format!("{}:", &dashes[1..])
                }
            })
            .collect();
        let _ = writeln!(out, "| {} |", rule.join(" | "));
    }
    for c in &cells {
        let _ = writeln!(out, "{}", line(c));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn results(mean_used: u64, runtime_ns: u64, cpu_ns: u64, duration_ns: u64) -> Results {
        let mut r = crate::report::results::minimal_results(duration_ns);
        r.memory.mean_used_bytes = mean_used;
        r.workloads.insert(
            "prog".into(),
            crate::report::results::minimal_workload(0, Some(runtime_ns)),
        );
        if cpu_ns > 0 {
            r.damon = Some(
                serde_json::from_value(serde_json::json!({
                    "kdamonds": {"kdamond.0": {"state": "on", "operations": "paddr",
                        "cpu_ns": cpu_ns, "nr_regions": 10, "schemes": []}},
                    "damon_reclaim": {"enabled": true, "kdamond_pid": 4,
                        "nr_reclaim_tried_regions": 0, "bytes_reclaim_tried_regions": 0,
                        "nr_reclaimed_regions": 0, "bytes_reclaimed_regions": 0,
                        "nr_quota_exceeds": 0}
                }))
                .expect("a damon result"),
            );
        }
        r
    }

    fn point(program: &str, config: &str, r: Results) -> (Vec<(String, String)>, Results) {
        (
            vec![
                ("program".into(), program.into()),
                ("damon_reclaim".into(), config.into()),
            ],
            r,
        )
    }

    #[test]
    fn figures_against_each_programs_own_baseline_then_averaged() {
        // a: 1000 -> 600 bytes (40 % saved), 100 s -> 105 s (5 % slower), 2 s of
        // kdamond in 105 s (1.905 %). b: 400 -> 300 (25 %), 50 s -> 50 s (0 %), 1 s in
        // 50 s (2 %). Mean: 32.5 %, 1.952 %, 2.5 %.
        let s = 1_000_000_000;
        let points = vec![
            point("a", "orig", results(1000, 100 * s, 0, 100 * s)),
            point("a", "50ms/s", results(600, 105 * s, 2 * s, 105 * s)),
            point("b", "orig", results(400, 50 * s, 0, 50 * s)),
            point("b", "50ms/s", results(300, 50 * s, s, 50 * s)),
        ];
        assert!(applies("damon_reclaim", &points));
        // By program, the first column is a program, not a run without DAMON_RECLAIM.
        assert!(!applies("program", &points));
        let rows = build("damon_reclaim", &points).unwrap();
        assert_eq!(rows.len(), 3);
        let avg = &rows[0];
        assert_eq!((avg.config.as_str(), avg.program.as_str()), ("50ms/s", ""));
        let f = &avg.figures;
        assert!((f.memory_saving_pct - 32.5).abs() < 1e-9, "{f:?}");
        assert!((f.kdamond_cpu_pct - (200.0 / 105.0 + 2.0) / 2.0).abs() < 1e-9);
        assert!((f.slowdown_pct - 2.5).abs() < 1e-9);
        assert_eq!(rows[1].program, "a");
        assert!((rows[1].figures.memory_saving_pct - 40.0).abs() < 1e-9);
        let text = render(&rows, "orig", Format::Text);
        assert!(text.contains("32.50 %"), "{text}");
        let csv = render(&rows, "orig", Format::Csv);
        assert_eq!(csv.lines().count(), 4);
    }

    #[test]
    fn without_damon_reclaim_the_table_does_not_apply() {
        let points = vec![point("a", "orig", results(1000, 1, 0, 1))];
        assert!(!applies("damon_reclaim", &points));
    }
}
