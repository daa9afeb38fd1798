//! `reclaimsim compare` on two hand-written runs, tests/data/compare/{a,b}/results.json
//! (a is the baseline). Expected figures are worked out by hand from those files in the
//! comments. Latency percentages are gains, (base - new) / base * 100; throughput
//! percentages (new - base) / base * 100.
//!
//! The fixtures: a ran 10 s, b 8 s. Workloads (latency in ns):
//!   fast:  a ops 10000, mean 200000, stddev 50000,   p90 300000,  max 1000000,
//!          1000 ops/s, 4e6 B/s;  b ops 10000, mean 150000, stddev 50000,
//!          p90 250000, max 800000, 1250 ops/s, 5e6 B/s
//!   noisy: a ops 400, mean 1000000, stddev 2000000, p90 2000000, max 20000000, 40 ops/s,
//!          4e7 B/s;  b ops 400, mean 1050000, stddev 2500000, p90 2200000,
//!          max 16000000, 38 ops/s, 3.8e7 B/s
//!   batch: only in a.

use reclaimsim::report::compare::{self, CompareTable, Format, Row, SectionKind};
use reclaimsim::report::results::Results;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_reclaimsim");

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/compare")
}

fn load(name: &str) -> (String, Results) {
    compare::load_run(&data().join(name)).unwrap_or_else(|e| panic!("{e}"))
}

fn table() -> CompareTable {
    compare::build(&[load("a"), load("b")])
}

fn row<'a>(t: &'a CompareTable, metric: &str) -> &'a Row {
    t.row(metric).unwrap_or_else(|| panic!("no row `{metric}`"))
}

fn close(got: f64, want: f64) -> bool {
    (got - want).abs() < 1e-9 * want.abs().max(1.0)
}

/// Asserts a row's values and (for b) its percentage and significance.
fn check(t: &CompareTable, metric: &str, values: [f64; 2], pct: Option<f64>, sig: bool) {
    let r = row(t, metric);
    for (i, want) in values.iter().enumerate() {
        let got = r.values[i].unwrap_or_else(|| panic!("{metric}: value {i} missing"));
        assert!(
            close(got, *want),
            "{metric}: value {i} is {got}, want {want}"
        );
    }
    assert_eq!(r.pct[0], None, "{metric}: the baseline has no %");
    match (r.pct[1], pct) {
        (Some(got), Some(want)) => assert!(close(got, want), "{metric}: {got}% want {want}%"),
        (got, want) => assert_eq!(got, want, "{metric}: %"),
    }
    assert_eq!(r.significant, vec![false, sig], "{metric}: significance");
}

#[test]
fn runs_are_named_by_their_directory() {
    assert_eq!(load("a").0, "a");
    assert_eq!(load("b/results.json").0, "b");
    let t = table();
    assert_eq!(t.runs, vec!["a", "b"]);
    let kinds: Vec<SectionKind> = t.sections.iter().map(|s| s.kind).collect();
    assert_eq!(
        kinds,
        [
            SectionKind::Latency,
            SectionKind::Throughput,
            SectionKind::Time,
            SectionKind::Ops
        ]
    );
}

#[test]
fn latency_rows() {
    let t = table();
    // fast: Amean 200 -> 150 us, (200 - 150) / 200 = +25%. Welch: se = sqrt(50000^2/10000
    // + 50000^2/10000) = sqrt(250000 + 250000) = 707.1 ns, t = 50000 / 707.1 = 70.7,
    // df = 19998, critical 1.96: significant.
    check(&t, "Amean fast", [200.0, 150.0], Some(25.0), true);
    // noisy: Amean 1000 -> 1050 us, (1000 - 1050) / 1000 = -5%. se^2 = 2e6^2/400 +
    // 2.5e6^2/400 = 1e10 + 1.5625e10, se = 160078 ns, t = 50000 / 160078 = 0.31 < 1.97:
    // not significant.
    check(&t, "Amean noisy", [1000.0, 1050.0], Some(-5.0), false);
    // Stddev: fast 50 -> 50 = 0%; noisy 2000 -> 2500, (2000 - 2500) / 2000 = -25%.
    // Only Amean rows carry a significance mark.
    check(&t, "Stddev fast", [50.0, 50.0], Some(0.0), false);
    check(&t, "Stddev noisy", [2000.0, 2500.0], Some(-25.0), false);
    // Max-90 is p90: fast 300 -> 250, 50 / 300 = +16.667%; noisy 2000 -> 2200 = -10%.
    check(&t, "Max-90 fast", [300.0, 250.0], Some(100.0 / 6.0), false);
    check(&t, "Max-90 noisy", [2000.0, 2200.0], Some(-10.0), false);
    // Max: fast 1000 -> 800 = +20%; noisy 20000 -> 16000 = +20%.
    check(&t, "Max fast", [1000.0, 800.0], Some(20.0), false);
    check(&t, "Max noisy", [20000.0, 16000.0], Some(20.0), false);
    // batch ran only in a: b's cell is missing, with no % and no mark.
    let r = row(&t, "Amean batch");
    assert_eq!(r.values, vec![Some(5000.0), None]);
    assert_eq!(r.pct, vec![None, None]);
    assert_eq!(r.significant, vec![false, false]);
    // Rows are grouped by statistic, then workload (sorted), as mmtests prints them.
    let lat: Vec<&str> = t.sections[0]
        .rows
        .iter()
        .map(|r| r.metric.as_str())
        .collect();
    assert_eq!(
        &lat[..4],
        ["Amean batch", "Amean fast", "Amean noisy", "Stddev batch"]
    );
    assert_eq!(lat.len(), 12);
}

#[test]
fn throughput_rows() {
    let t = table();
    // Higher is better: fast 1000 -> 1250 ops/s, (1250 - 1000) / 1000 = +25%;
    // noisy 40 -> 38 = -5%. MB/sec = bytes_per_sec / 1e6: fast 4 -> 5 = +25%,
    // noisy 40 -> 38 = -5%.
    check(&t, "Ops/sec fast", [1000.0, 1250.0], Some(25.0), false);
    check(&t, "Ops/sec noisy", [40.0, 38.0], Some(-5.0), false);
    check(&t, "MB/sec fast", [4.0, 5.0], Some(25.0), false);
    check(&t, "MB/sec noisy", [40.0, 38.0], Some(-5.0), false);
    assert_eq!(row(&t, "MB/sec batch").values, vec![Some(10.0), None]);
}

#[test]
fn time_rows() {
    let t = table();
    // User: a 0.5 (batch) + 2.0 (fast) + 0 + 0 + 1.0 (noisy) = 3.5 s; b 2.0 + 1.0 = 3.0 s.
    // System: a 0 + 0.5 + 0 + 0.75 (kswapd0) + 0.25 = 1.5 s; b 0.3 + 0.5 + 0.2 = 1.0 s.
    // Reclaim: kswapd + direct reclaim CPU, a 0.75 + 0.1 = 0.85 s; b 0.5 + 0 = 0.5 s.
    // Elapsed: duration_ns, 10 s and 8 s. No percentages.
    check(&t, "User", [3.5, 3.0], None, false);
    check(&t, "System", [1.5, 1.0], None, false);
    check(&t, "Reclaim", [0.85, 0.5], None, false);
    check(&t, "Elapsed", [10.0, 8.0], None, false);
}

#[test]
fn ops_rows() {
    let t = table();
    check(&t, "Direct pages scanned", [25000.0, 0.0], None, false);
    check(&t, "Kswapd pages scanned", [100000.0, 60000.0], None, false);
    check(
        &t,
        "Kswapd pages reclaimed",
        [80000.0, 54000.0],
        None,
        false,
    );
    check(&t, "Direct pages reclaimed", [5000.0, 0.0], None, false);
    // pgsteal_kswapd * 100 / pgscan_kswapd: 80000 * 100 / 100000 = 80,
    // 54000 * 100 / 60000 = 90.
    check(&t, "Kswapd efficiency %", [80.0, 90.0], None, false);
    // pgscan_kswapd / elapsed: 100000 / 10 = 10000, 60000 / 8 = 7500.
    check(&t, "Kswapd velocity", [10000.0, 7500.0], None, false);
    // 5000 * 100 / 25000 = 20; b scanned nothing directly: 0 / 0 -> 0.
    check(&t, "Direct efficiency %", [20.0, 0.0], None, false);
    // 25000 / 10 = 2500; 0 / 8 = 0.
    check(&t, "Direct velocity", [2500.0, 0.0], None, false);
    // pgscan_direct * 100 / (direct + kswapd): 25000 * 100 / 125000 = 20; 0 / 60000 = 0.
    check(&t, "Percentage direct scans", [20.0, 0.0], None, false);
    check(&t, "Page writes by reclaim", [3000.0, 500.0], None, false);
    // nr_vmscan_write - pswpout: 3000 - 1000 = 2000; b 500 - 800 floors at 0.
    check(&t, "Page writes file", [2000.0, 0.0], None, false);
    check(&t, "Page writes anon", [1000.0, 800.0], None, false);
    check(&t, "Page reclaim immediate", [20.0, 0.0], None, false);
    check(&t, "Swap ins", [500.0, 200.0], None, false);
    check(&t, "Swap outs", [1000.0, 800.0], None, false);
    check(&t, "Refaults anon", [400.0, 100.0], None, false);
    check(&t, "Refaults file", [6000.0, 3000.0], None, false);
    // allocstall_dma32 + allocstall_normal: 10 + 30 = 40; 0.
    check(&t, "Allocation stalls", [40.0, 0.0], None, false);
    check(&t, "OOM kills", [0.0, 1.0], None, false);
}

#[test]
fn a_missing_baseline_workload_shows_values_without_percentages() {
    let t = compare::build(&[load("b"), load("a")]);
    let r = row(&t, "Amean batch");
    assert_eq!(r.values, vec![None, Some(5000.0)]);
    assert_eq!(r.pct, vec![None, None]);
    // With b as the baseline the gains flip sign: (150 - 200) / 150 = -33.33%.
    check(&t, "Amean fast", [150.0, 200.0], Some(-100.0 / 3.0), true);
    let text = compare::render_text(&t);
    assert!(
        has_line(&text, "Amean     batch                    -    5000.00"),
        "{text}"
    );
}

fn has_line(text: &str, want: &str) -> bool {
    text.lines().any(|l| l == want)
}

/// The text table's rows, exactly: label column, then one right-aligned column per run,
/// b's value followed by its % and `*` when significant.
const TEXT_LINES: &[&str] = &[
    "                                    a                      b",
    "Latency (us; Max-90 = p90)",
    "Amean     batch               5000.00         -",
    "Amean     fast                 200.00    150.00 (   25.00%)*",
    "Amean     noisy               1000.00   1050.00 (   -5.00%)",
    "Stddev    noisy               2000.00   2500.00 (  -25.00%)",
    "Max-90    fast                 300.00    250.00 (   16.67%)",
    "Max       noisy              20000.00  16000.00 (   20.00%)",
    "Throughput",
    "Ops/sec   fast                1000.00   1250.00 (   25.00%)",
    "MB/sec    noisy                 40.00     38.00 (   -5.00%)",
    "Time (s)",
    "User                             3.50      3.00",
    "System                           1.50      1.00",
    "Reclaim                          0.85      0.50",
    "Elapsed                         10.00      8.00",
    "Ops",
    "Kswapd efficiency %             80.00     90.00",
    "Kswapd velocity              10000.00   7500.00",
    "Direct efficiency %             20.00      0.00",
    "Percentage direct scans         20.00      0.00",
    "Page writes file              2000.00      0.00",
    "OOM kills                        0.00      1.00",
];

#[test]
fn text_layout() {
    let text = compare::render_text(&table());
    for want in TEXT_LINES {
        assert!(has_line(&text, want), "missing line {want:?} in\n{text}");
    }
    assert!(text.starts_with("Baseline: a."), "{text}");
    // Only fast's Amean is marked significant.
    let marked: Vec<&str> = text.lines().filter(|l| l.ends_with("%)*")).collect();
    assert_eq!(
        marked,
        ["Amean     fast                 200.00    150.00 (   25.00%)*"]
    );
}

#[test]
fn markdown_table() {
    let md = compare::render(&table(), Format::Md);
    assert!(md.contains("\n| | a | b |\n|---|---:|---:|\n"), "{md}");
    assert!(
        has_line(&md, "| **Latency (us; Max-90 = p90)** | | |"),
        "{md}"
    );
    // The significance mark is escaped so markdown does not read it as emphasis.
    assert!(
        has_line(&md, "| Amean     fast | 200.00 | 150.00 (25.00%)\\* |"),
        "{md}"
    );
    assert!(has_line(&md, "| Amean     batch | 5000.00 | - |"), "{md}");
    assert!(
        has_line(&md, "| Kswapd velocity | 10000.00 | 7500.00 |"),
        "{md}"
    );
}

fn run(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(data())
        .output()
        .expect("run reclaimsim")
}

fn stdout(o: &Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).unwrap()
}

#[test]
fn cli_text() {
    let out = stdout(&run(&["compare", "a", "b"]));
    for want in TEXT_LINES {
        assert!(has_line(&out, want), "missing line {want:?} in\n{out}");
    }
    // Absolute paths and results.json paths name the columns the same way.
    let a = data().join("a");
    let b = data().join("b/results.json");
    let out2 = stdout(&run(&[
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--format",
        "text",
    ]));
    assert_eq!(out, out2);
}

#[test]
fn cli_csv() {
    let out = stdout(&run(&["compare", "a", "b", "--format", "csv"]));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "metric,a,b,b_pct");
    // Raw numbers, no decoration; the % in its own column, empty on rows without one and
    // where b lacks the workload.
    assert!(lines.contains(&"Amean fast,200,150,25"), "{out}");
    assert!(lines.contains(&"Max-90 fast,300,250,16.666667"), "{out}");
    assert!(lines.contains(&"Amean batch,5000,,"), "{out}");
    assert!(lines.contains(&"Kswapd velocity,10000,7500,"), "{out}");
    // 12 latency + 6 throughput + 4 time + 19 ops rows, and the header.
    assert_eq!(lines.len(), 1 + 12 + 6 + 4 + 19);
}

/// `compare --format json`'s one shape (docs/cli.md, "compare's JSON"): exactly `kind`,
/// `columns`, `points` and `rows`; each row exactly `section`, `metric`, `values`,
/// `pct` and `significant`, with an entry per column in each list.
fn one_shape(v: &serde_json::Value, kind: &str) {
    let keys = |o: &serde_json::Value| {
        let mut k: Vec<String> = o.as_object().expect("an object").keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(keys(v), ["columns", "kind", "points", "rows"], "{v}");
    assert_eq!(v["kind"], kind);
    let n = v["columns"].as_array().expect("columns").len();
    if let Some(p) = v["points"].as_array() {
        assert_eq!(p.len(), n);
    } else {
        assert!(v["points"].is_null());
    }
    let rows = v["rows"].as_array().expect("rows");
    assert!(!rows.is_empty());
    for r in rows {
        assert_eq!(
            keys(r),
            ["metric", "pct", "section", "significant", "values"],
            "{r}"
        );
        assert!(r["section"].is_string() && r["metric"].is_string(), "{r}");
        for list in ["values", "pct", "significant"] {
            assert_eq!(r[list].as_array().expect("a list").len(), n, "{r}");
        }
    }
}

#[test]
fn cli_json() {
    let out = stdout(&run(&["compare", "a", "b", "--format", "json"]));
    let v: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    one_shape(&v, "mmtests");
    assert_eq!(v["columns"], serde_json::json!(["a", "b"]));
    assert_eq!(v["points"], serde_json::json!([1, 1]));
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 41);
    let fast = rows.iter().find(|r| r["metric"] == "Amean fast").unwrap();
    assert_eq!(
        fast,
        &serde_json::json!({
            "section": "latency",
            "metric": "Amean fast",
            "values": [200.0, 150.0],
            "pct": [null, 25.0],
            "significant": [false, true],
        })
    );
    let batch = rows.iter().find(|r| r["metric"] == "Amean batch").unwrap();
    assert_eq!(batch["values"], serde_json::json!([5000.0, null]));
    let vel = rows
        .iter()
        .find(|r| r["metric"] == "Kswapd velocity")
        .unwrap();
    assert_eq!(vel["section"], "ops");
    assert_eq!(vel["values"], serde_json::json!([10000.0, 7500.0]));
    assert_eq!(vel["pct"], serde_json::json!([null, null]));
}

#[test]
fn cli_three_runs() {
    let out = stdout(&run(&["compare", "a", "b", "a", "--format", "csv"]));
    assert_eq!(out.lines().next(), Some("metric,a,b,a,b_pct,a_pct"));
    assert!(out.contains("\nAmean fast,200,150,200,25,0\n"), "{out}");
}

fn fails(args: &[&str], stderr_want: &str) {
    let o = run(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert!(o.stdout.is_empty(), "{args:?}");
    assert!(err.contains(stderr_want), "{args:?}: {err}");
}

#[test]
fn cli_errors() {
    fails(
        &["compare", "a", "nonexistent"],
        "error: nonexistent: no such file or directory",
    );
    // A directory without results.json.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    fails(
        &["compare", "a", d],
        &format!(
            "error: {}: no such file or directory",
            dir.path().join("results.json").display()
        ),
    );
    // Unparsable: not JSON, then JSON missing a field (named by its path).
    let bad = dir.path().join("results.json");
    std::fs::write(&bad, "not json").unwrap();
    fails(
        &["compare", "a", d],
        &format!("error: {}: expected ident", bad.display()),
    );
    let text = std::fs::read_to_string(data().join("a/results.json")).unwrap();
    std::fs::write(&bad, text.replace("\"p90\": 300000,", "")).unwrap();
    fails(
        &["compare", "a", d],
        "workloads.fast.latency_ns: missing field `p90`",
    );
    // Fewer than two runs (without --by), --by with several, an unknown format.
    fails(&["compare", "a"], "compare needs two or more runs");
    fails(
        &["compare", "a", "b", "--by", "kernel.x"],
        "--by compares the points of one sweep directory",
    );
    fails(&["compare", "a", "b", "--format", "html"], "invalid value");
}

/// A sweep directory of four points: mode old/new × workers 1/2, where old points
/// hold fixture a's results and new points fixture b's; sweep.json lists them.
fn sweep_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut i = 0;
    let mut listed = Vec::new();
    for (mode, fixture) in [("old", "a"), ("new", "b")] {
        for workers in ["1", "2"] {
            let p = dir.path().join(format!("point-{i:03}"));
            std::fs::create_dir(&p).unwrap();
            std::fs::copy(
                data().join(fixture).join("results.json"),
                p.join("results.json"),
            )
            .unwrap();
            std::fs::write(
                p.join("point.json"),
                format!(
                    r#"{{"index": {i}, "values": {{"mode": "{mode}", "workers": "{workers}"}}}}"#
                ),
            )
            .unwrap();
            listed.push((i, mode, workers));
            i += 1;
        }
    }
    write_manifest(dir.path(), &listed);
    dir
}

fn write_manifest(dir: &std::path::Path, points: &[(usize, &str, &str)]) {
    let listed: Vec<String> = points
        .iter()
        .map(|(i, mode, workers)| {
            format!(
                r#"{{"index": {i}, "dir": "point-{i:03}", "values": {{"mode": "{mode}", "workers": "{workers}"}}}}"#
            )
        })
        .collect();
    std::fs::write(
        dir.join("sweep.json"),
        format!(
            r#"{{"keys": ["mode", "workers"], "points": [{}]}}"#,
            listed.join(", ")
        ),
    )
    .unwrap();
}

#[test]
fn compare_by_a_swept_key() {
    let dir = sweep_dir();
    let d = dir.path().to_str().unwrap();
    let out = stdout(&run(&["compare", d, "--by", "mode", "--format", "csv"]));
    let lines: Vec<&str> = out.lines().collect();
    // A column per mode in sweep order; the other swept value suffixes the workload.
    assert_eq!(lines[0], "metric,old,new,new_pct");
    assert!(lines.contains(&"Amean fast-1,200,150,25"), "{out}");
    assert!(lines.contains(&"Amean fast-2,200,150,25"), "{out}");
    // Counters and times add up over the two points of a column: pgscan_kswapd
    // 2 × 100000 and 2 × 60000 over 2 × 10 s and 2 × 8 s: velocity unchanged.
    assert!(
        lines.contains(&"Kswapd pages scanned,200000,120000,"),
        "{out}"
    );
    assert!(lines.contains(&"Kswapd velocity,10000,7500,"), "{out}");
    assert!(lines.contains(&"Elapsed,20,16,"), "{out}");
    assert!(lines.contains(&"Reclaim,1.7,1,"), "{out}");
    // JSON: the same table, each column merging two points.
    let json = stdout(&run(&["compare", d, "--by", "mode", "--format", "json"]));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    one_shape(&v, "mmtests");
    assert_eq!(v["columns"], serde_json::json!(["old", "new"]));
    assert_eq!(v["points"], serde_json::json!([2, 2]));
    // Errors: a key that is not swept; a sweep where it has one value.
    fails(
        &["compare", d, "--by", "nope"],
        "`nope` is not a swept key of this sweep",
    );
    // A smaller sweep run into the same directory: the points of the older, larger
    // one stay on disk but are not this sweep's, so they are not merged in.
    write_manifest(dir.path(), &[(0, "old", "1"), (1, "old", "2")]);
    fails(&["compare", d, "--by", "mode"], "`mode` has one value");
}

/// A copy of fixture `name`'s results.json, edited, in `dir/sub`.
fn edited_run(dir: &Path, sub: &str, name: &str, edit: impl Fn(&mut serde_json::Value)) {
    let text = std::fs::read_to_string(data().join(name).join("results.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    edit(&mut v);
    let d = dir.join(sub);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("results.json"), v.to_string()).unwrap();
}

#[test]
fn csv_and_json_names_are_data_without_layout_spaces() {
    let csv = stdout(&run(&["compare", "a", "b", "--format", "csv"]));
    // Every statistic row: one space between the statistic and the workload.
    for want in [
        "Amean fast,200,150,25",
        "Stddev noisy,2000,2500,-25",
        "Max-90 fast,300,250,16.666667",
        "Max noisy,20000,16000,20",
        "Ops/sec fast,1000,1250,25",
        "MB/sec batch,10,,",
    ] {
        assert!(csv.lines().any(|l| l == want), "no {want:?} in\n{csv}");
    }
    assert!(!csv.contains("  "), "padding in\n{csv}");
    let json = stdout(&run(&["compare", "a", "b", "--format", "json"]));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let metrics: Vec<&str> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["metric"].as_str().unwrap())
        .collect();
    assert_eq!(
        &metrics[..4],
        ["Amean batch", "Amean fast", "Amean noisy", "Stddev batch"]
    );
    assert!(metrics.iter().all(|m| !m.contains("  ")), "{metrics:?}");
    // The text table keeps mmtests' 10-column statistic.
    let text = stdout(&run(&["compare", "a", "b"]));
    assert!(has_line(&text, TEXT_LINES[3]), "{text}");
}

#[test]
fn labels_name_the_columns() {
    let args = ["compare", "a", "b", "--label", "old", "--label", "new"];
    let csv = stdout(&run(&[&args[..], &["--format", "csv"]].concat()));
    assert_eq!(csv.lines().next(), Some("metric,old,new,new_pct"));
    let json = stdout(&run(&[&args[..], &["--format", "json"]].concat()));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["columns"], serde_json::json!(["old", "new"]));
    let text = stdout(&run(&args));
    assert!(text.starts_with("Baseline: old."), "{text}");
    // The same header as TEXT_LINES[0], with old and new right-aligned where a and b were.
    assert!(
        has_line(
            &text,
            "                                  old                    new"
        ),
        "{text}"
    );
}

#[test]
fn labels_must_be_distinct_and_one_per_run() {
    fails(
        &["compare", "a", "b", "--label", "x", "--label", "x"],
        "error: --label: `x` is given twice",
    );
    fails(
        &["compare", "a", "b", "--label", "x"],
        "error: --label: 1 labels for 2 runs",
    );
    fails(
        &[
            "compare", "a", "b", "a", "--label", "x", "--label", "y", "--label", "x",
        ],
        "--label: `x` is given twice",
    );
}

#[test]
fn same_named_run_directories_get_distinct_names() {
    let dir = tempfile::tempdir().unwrap();
    edited_run(dir.path(), "p/x", "a", |_| {});
    edited_run(dir.path(), "q/x", "b", |_| {});
    let (px, qx) = (dir.path().join("p/x"), dir.path().join("q/x/results.json"));
    let (px, qx) = (px.to_str().unwrap(), qx.to_str().unwrap());
    // Both end in `x`; one more component tells them apart.
    let csv = stdout(&run(&["compare", px, qx, "--format", "csv"]));
    assert_eq!(csv.lines().next(), Some("metric,p/x,q/x,q/x_pct"));
    // With a run that does not clash, that one keeps its last component.
    let csv = stdout(&run(&["compare", px, qx, "b", "--format", "csv"]));
    assert_eq!(csv.lines().next(), Some("metric,p/x,q/x,b,q/x_pct,b_pct"));
}

#[test]
fn a_gain_that_rounds_to_zero_is_printed_as_zero() {
    let dir = tempfile::tempdir().unwrap();
    // fast's mean latency 200000.0001 ns against 200000: (200 - 200.0000001) / 200 * 100
    // = -5e-8 %; its throughput 999.99999 against 1000: -1e-6 %. Both round to 0.00.
    edited_run(dir.path(), "a2", "a", |v| {
        v["workloads"]["fast"]["latency_ns"]["mean"] = 200000.0001.into();
        v["workloads"]["fast"]["throughput"] = 999.99999.into();
    });
    let a2 = dir.path().join("a2");
    let a2 = a2.to_str().unwrap();
    let text = stdout(&run(&["compare", "a", a2]));
    assert!(!text.contains("-0.00"), "{text}");
    for stat in ["Amean     fast", "Ops/sec   fast"] {
        let line = text.lines().find(|l| l.starts_with(stat)).unwrap();
        assert!(line.ends_with("(    0.00%)"), "{line}");
    }
    let md = stdout(&run(&["compare", "a", a2, "--format", "md"]));
    assert!(
        has_line(&md, "| Amean     fast | 200.00 | 200.00 (0.00%) |"),
        "{md}"
    );
    assert!(!md.contains("-0.00"), "{md}");
    // CSV and JSON round to 6 decimals: 0, never -0.
    let csv = stdout(&run(&["compare", "a", a2, "--format", "csv"]));
    assert!(csv.lines().any(|l| l == "Amean fast,200,200,0"), "{csv}");
    let json = stdout(&run(&["compare", "a", a2, "--format", "json"]));
    assert!(!json.contains("-0.0"), "{json}");
}

#[test]
fn a_sweep_without_by_gets_a_hint() {
    let dir = sweep_dir();
    let d = dir.path().to_str().unwrap();
    // The swept keys come from the points' point.json: mode and workers.
    fails(
        &["compare", d],
        &format!("error: {d}: a sweep directory: compare its points with --by KEY, KEY one of: mode, workers"),
    );
    // Among runs too.
    fails(
        &["compare", "a", d],
        "a sweep directory: compare its points with --by KEY",
    );
    // A directory with only a sweep.csv is still recognised as a sweep (its keys are
    // sweep.json's, which it lacks).
    let only_csv = tempfile::tempdir().unwrap();
    std::fs::write(
        only_csv.path().join("sweep.csv"),
        "NR_WORKERS,kernel.reclaim_throttle,vmstat.pgscan_kswapd,psi.memory.some.total\n4,throttle,10,20\n",
    )
    .unwrap();
    fails(
        &["compare", only_csv.path().to_str().unwrap()],
        "a sweep directory: compare its points with --by KEY",
    );
    // A single run directory is not a sweep.
    fails(&["compare", "a"], "compare needs two or more runs");
    // --label names runs, not a sweep's columns.
    fails(
        &["compare", d, "--by", "mode", "--label", "x"],
        "error: --label names run directories' columns",
    );
}

#[test]
fn workloads_sort_naturally() {
    // Digits inside a name count too: w2-read before w10-read (bytewise, "w1" < "w2").
    let rename = |v: &mut serde_json::Value| {
        let w = v["workloads"].as_object_mut().unwrap();
        for (old, new) in [
            ("fast", "w10-read"),
            ("noisy", "w2-read"),
            ("batch", "w1-read"),
        ] {
            if let Some(x) = w.remove(old) {
                w.insert(new.to_string(), x);
            }
        }
    };
    let dir = tempfile::tempdir().unwrap();
    edited_run(dir.path(), "a", "a", rename);
    edited_run(dir.path(), "b", "b", rename);
    let t = compare::build(&[
        compare::load_run(&dir.path().join("a")).unwrap(),
        compare::load_run(&dir.path().join("b")).unwrap(),
    ]);
    let lat: Vec<&str> = t.sections[0].rows[..3]
        .iter()
        .map(|r| r.metric.as_str())
        .collect();
    assert_eq!(lat, ["Amean w1-read", "Amean w2-read", "Amean w10-read"]);
}

#[test]
fn the_cpu_table_sorts_tasks_naturally() {
    let (_, mut r) = load("a");
    let task = r.tasks["fast/0"].clone();
    r.tasks.clear();
    for name in ["w/10", "mmap-10/0", "w/2", "kswapd0", "mmap-2/3"] {
        r.tasks.insert(name.to_string(), task.clone());
    }
    let summary = reclaimsim::report::summary(&r);
    let order: Vec<&str> = summary
        .lines()
        .skip_while(|l| *l != "CPU time")
        .skip(2)
        .take_while(|l| !l.is_empty())
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(order, ["kswapd0", "mmap-2/3", "mmap-10/0", "w/2", "w/10"]);
}

/// `compare --by` a sweep that ran DAMON_RECLAIM against a baseline: the seed's table.
/// A program of 64 MiB read once and an 8 MiB hot set, with and without DAMON_RECLAIM
/// (no quota, cold after 1 s), on zram at 3:1: it pages the input out, so the saving
/// is above 0 and at most (1 - 1/3) × 64 / 72 = 59 % of the footprint.
#[test]
fn compare_by_prints_the_damon_reclaim_table() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("s.toml");
    std::fs::write(
        &scenario,
        r#"
[run]
duration = "20s"
stop_when_done = true
[machine]
memory = "256M"
nr_cpus = 2
[machine.swap]
type = "zram"
size = "256M"
compression_ratio = 3.0
[[workload]]
name = "prog"
kind = "phases"
[[workload.phase]]
duration = "10ms"
size = "64M"
pattern = "sequential"
write_ratio = 1.0
[[workload.phase]]
duration = "6s"
offset = "64M"
size = "8M"
[damon_reclaim]
enabled = false
min_age = 1000000
quota_ms = 0
quota_sz = 0
wmarks_high = 1000
wmarks_mid = 999
wmarks_low = 0
[[sweep.param]]
name = "damon_reclaim"
values = ["orig", "none"]
with = { "damon_reclaim.enabled" = [false, true] }
"#,
    )
    .unwrap();
    let out = dir.path().join("sweep");
    let s = run(&[
        "sweep",
        scenario.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "-q",
    ]);
    assert!(s.status.success(), "{}", String::from_utf8_lossy(&s.stderr));
    let d = out.to_str().unwrap();
    let csv = stdout(&run(&[
        "compare",
        d,
        "--by",
        "damon_reclaim",
        "--format",
        "csv",
    ]));
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "config,program,memory_saving_pct,kdamond_cpu_pct,slowdown_pct"
    );
    let f: Vec<&str> = lines[1].split(',').collect();
    assert_eq!((f[0], f[1]), ("none", ""), "{csv}");
    let saving: f64 = f[2].parse().unwrap();
    assert!(saving > 0.0 && saving <= 59.3, "{csv}");
    let cpu: f64 = f[3].parse().unwrap();
    assert!(cpu > 0.0 && cpu < 100.0, "{csv}");
    // JSON: compare's one shape, the three figures as its columns.
    let json = stdout(&run(&[
        "compare",
        d,
        "--by",
        "damon_reclaim",
        "--format",
        "json",
    ]));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    one_shape(&v, "damon_reclaim");
    assert_eq!(
        v["columns"],
        serde_json::json!(["memory_saving_pct", "kdamond_cpu_pct", "slowdown_pct"])
    );
    assert!(v["points"].is_null());
    let row = &v["rows"][0];
    assert_eq!(
        (&row["section"], &row["metric"]),
        (&"none".into(), &"mean".into())
    );
    // The CSV's two decimals.
    assert!(
        (row["values"][0].as_f64().unwrap() - saving).abs() <= 0.005,
        "{json}"
    );
    let text = stdout(&run(&["compare", d, "--by", "damon_reclaim"]));
    assert!(
        text.starts_with("DAMON_RECLAIM against orig, the mean over 1 program:"),
        "{text}"
    );
    // The mmtests table follows in text.
    assert!(text.contains("Baseline: orig."), "{text}");
}
