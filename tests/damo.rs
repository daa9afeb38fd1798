//! `--damon-record` writes a file the damo tool (PyPI `damo`, pinned) reads: its
//! `report access`, `report wss` and `report heatmap` run on a simulated masim
//! "stairs" run, and what they print is what the stairs config says (by hand: ten
//! 10 MB regions, all touched for 10 s, then one at a time for 5 s each, in address
//! order). damo is installed into a throw-away venv with python3 -m venv.

use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_reclaimsim");
const DAMO: &str = "damo==3.4.3";

fn ok(what: &str, out: Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{what}: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// ANSI colour escapes out (damo colours its heatmap characters).
fn plain(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Runs scenarios/masim-stairs.toml with `--damon-record` into `dir`; the record.
fn record_stairs(dir: &Path, extra: &[&str]) -> std::path::PathBuf {
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/masim-stairs.toml");
    ok(
        "reclaimsim run --damon-record",
        Command::new(BIN)
            .arg("run")
            .arg(&scenario)
            .arg("--out")
            .arg(dir)
            .args(["--damon-record", "-q"])
            .args(extra)
            .output()
            .unwrap(),
    );
    dir.join("damon.data")
}

fn install_damo(venv: &Path) -> std::path::PathBuf {
    ok(
        "python3 -m venv",
        Command::new("python3")
            .args(["-m", "venv"])
            .arg(venv)
            .output()
            .expect("python3 runs (CI installs it)"),
    );
    ok(
        "pip install damo",
        Command::new(venv.join("bin/pip"))
            .args(["install", "--quiet", "--disable-pip-version-check", DAMO])
            .output()
            .expect("pip runs"),
    );
    venv.join("bin/damo")
}

#[test]
fn damo_reports_on_a_recorded_masim_stairs_run() {
    let tmp = tempfile::tempdir().unwrap();
    let record = record_stairs(&tmp.path().join("run"), &[]);
    let damo = install_damo(&tmp.path().join("venv"));
    // damo reads $HOME at start-up and pages long output through less unless told
    // to print once.
    let home = std::env::var("HOME").unwrap_or_else(|_| tmp.path().display().to_string());
    let damo_report = |args: &[&str]| {
        let out = Command::new(&damo)
            .arg("report")
            .args(args)
            .arg("--input")
            .arg(&record)
            .env("HOME", &home)
            .output()
            .expect("damo runs");
        plain(&ok(&format!("damo report {args:?}"), out))
    };

    // access: the monitoring intervals (5 ms, 100 ms) and snapshots of the ten regions.
    let access = damo_report(&["access", "--repeat", "0", "1"]);
    assert!(
        access.contains("intervals: sample 5 ms aggr 100 ms"),
        "{}",
        &access[..access.len().min(2000)]
    );
    assert!(
        access.matches("snapshot time:").count() > 500,
        "one per 100 ms"
    );

    // wss: after the 10 s warm-up one 10 MB region (9.537 MiB) is hot at a time, so
    // the median working set is that region; the largest is all ten (95.4 MiB).
    let wss = damo_report(&["wss", "--exclude_samples", "0"]);
    let mib_at = |pct: &str| -> f64 {
        let line = wss
            .lines()
            .find(|l| l.split_whitespace().next() == Some(pct))
            .unwrap_or_else(|| panic!("no {pct}th percentile in\n{wss}"));
        let mut w = line.split_whitespace();
        w.next();
        let v: f64 = w.next().unwrap().parse().unwrap();
        assert_eq!(w.next(), Some("MiB"), "{line}");
        v
    };
    let p50 = mib_at("50");
    assert!((8.5..=11.0).contains(&p50), "median WSS {p50} MiB\n{wss}");
    let p100 = mib_at("100");
    assert!(
        (80.0..=100.0).contains(&p100),
        "largest WSS {p100} MiB\n{wss}"
    );

    // heatmap, every contiguous range (each masim region is a mapping of its own):
    // 12 rows of 5 s, and region i's map is hottest in row 2 + i (its phase runs from
    // 10 + 5i s to 15 + 5i s).
    let heat = damo_report(&["heatmap", "--draw_range", "all", "--resol", "12", "10"]);
    let maps: Vec<Vec<&str>> = heat
        .split("# resolution")
        .filter(|m| m.contains("# x-axis"))
        .map(|m| {
            m.lines()
                .filter(|l| !l.is_empty() && l.chars().all(|c| c.is_ascii_digit()))
                .collect()
        })
        .collect();
    assert_eq!(maps.len(), 10, "{heat}");
    for (i, rows) in maps.iter().enumerate() {
        assert_eq!(rows.len(), 12, "map {i}: {rows:?}");
        let hottest = rows
            .iter()
            .enumerate()
            .max_by_key(|(_, r)| r.bytes().map(|b| (b - b'0') as u32).sum::<u32>())
            .unwrap()
            .0;
        assert_eq!(hottest, 2 + i, "region {i}'s hot phase: {rows:?}");
    }
}

/// The same run writes the same record, byte for byte; a scenario without a kdamond
/// is refused before anything runs; one whose kdamonds are all off is warned.
#[test]
fn damon_records_are_deterministic_and_need_a_kdamond() {
    let tmp = tempfile::tempdir().unwrap();
    let record = |name: &str| {
        let file = record_stairs(&tmp.path().join(name), &["--set", "run.duration=12s"]);
        std::fs::read(file).unwrap()
    };
    let a = record("a");
    assert!(a.len() > 100);
    assert_eq!(a, record("b"));

    let quickstart = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/quickstart.toml");
    let out = Command::new(BIN)
        .arg("run")
        .arg(&quickstart)
        .arg("--out")
        .arg(tmp.path().join("q"))
        .arg("--damon-record")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("runs no kdamond"), "{err}");
    assert!(!tmp.path().join("q").join("results.json").exists());

    // DAMON_RECLAIM configured but off, as damon-reclaim.toml ships: the run goes on,
    // saying on stderr that the record will be empty; turned on, no warning.
    let damon_reclaim = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/damon-reclaim.toml");
    let run = |sets: &[&str]| {
        Command::new(BIN)
            .arg("run")
            .arg(&damon_reclaim)
            .args(["--damon-record", "-q", "--set", "run.duration=1s"])
            .args(sets.iter().flat_map(|s| ["--set", s]))
            .arg("--out")
            .arg(tmp.path().join("d"))
            .output()
            .unwrap()
    };
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning: --damon-record: no kdamond")
            && err.contains("damon.data will hold no snapshot"),
        "{err}"
    );
    let out = run(&["damon_reclaim.enabled=true"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("warning"));
}
