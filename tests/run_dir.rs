//! The binary's handling of its output: the directory is probed and locked before the
//! run, no stale or partial result is left, Ctrl-C writes what was simulated, every
//! result records its provenance, and long runs and sweeps report progress.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_reclaimsim");

const SMALL: &str = r#"[run]
duration = "500ms"
sample_interval = "100ms"

[machine]
memory = "128M"
nr_cpus = 1

[[workload]]
name = "heap"
kind = "anon"
size = "32M"
pattern = "uniform"
rate = 100000
"#;

/// Simulating this takes far longer than any test may wait (an hour of virtual time of
/// a busy thread), so a test that finishes proves it stopped early.
const LONG: &str = r#"[run]
duration = "3600s"
sample_interval = "100ms"

[machine]
memory = "128M"
nr_cpus = 1

[[workload]]
name = "heap"
kind = "anon"
size = "32M"
pattern = "uniform"
"#;

fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn an_unusable_out_is_found_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("long.toml"), LONG).unwrap();
    // A file where the directory should be: creating --out fails. The hour-long
    // scenario would run for minutes if the check came after the simulation.
    std::fs::write(dir.path().join("blocker"), "").unwrap();
    let o = run(
        dir.path(),
        &["run", "long.toml", "--out", "blocker/out", "-q"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("blocker/out"), "{}", stderr(&o));
    assert!(stderr(&o).contains("cannot create the output directory"));
}

#[test]
fn a_locked_out_is_refused_naming_the_holder() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("small.toml"), SMALL).unwrap();
    let out = dir.path().join("o");
    let held = reclaimsim::report::outdir::OutDir::acquire(&out, "sweep other.toml").unwrap();
    let o = run(dir.path(), &["run", "small.toml", "--out", "o", "-q"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("in use by another reclaimsim"), "{e}");
    assert!(e.contains("sweep other.toml"), "{e}");
    assert!(!out.join("results.json").exists());
    drop(held);
    let o = run(dir.path(), &["run", "small.toml", "--out", "o", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn a_new_run_leaves_no_file_of_an_older_one() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("small.toml"), SMALL).unwrap();
    let o = run(
        dir.path(),
        &["run", "small.toml", "--out", "o", "-q", "--trace", "all"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(dir.path().join("o/trace.txt").is_file());
    // Without --trace, the older run's trace.txt would describe another run.
    let o = run(dir.path(), &["run", "small.toml", "--out", "o", "-q"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!dir.path().join("o/trace.txt").exists());
    // A run that fails (bad --trace) before it starts leaves the directory alone; one
    // whose scenario is bad never touches it either.
    std::fs::write(dir.path().join("bad.toml"), SMALL.replace("128M", "128Q")).unwrap();
    let o = run(dir.path(), &["run", "bad.toml", "--out", "o", "-q"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(dir.path().join("o/results.json").is_file());
}

#[test]
fn ctrl_c_writes_what_was_simulated() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("long.toml"), LONG).unwrap();
    let mut child = Command::new(BIN)
        .args(["run", "long.toml", "--out", "o", "-q", "--progress"])
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the first progress line: the run is under way.
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut err, &mut line).unwrap();
    assert!(line.starts_with("progress:"), "{line}");
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no exit after SIGINT"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
    assert_eq!(status.code(), Some(130), "{rest}");
    let r = json(&dir.path().join("o/results.json"));
    assert_eq!(r["interrupted"], true);
    let reached = r["duration_ns"].as_u64().unwrap();
    assert!(reached > 0 && reached < 3_600_000_000_000, "{reached}");
    // The timeseries stops where the results do.
    let csv = std::fs::read_to_string(dir.path().join("o/timeseries.csv")).unwrap();
    let last_t: f64 = csv
        .lines()
        .last()
        .unwrap()
        .split(',')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    // timeseries.csv gives seconds to the millisecond.
    assert!(
        (last_t - reached as f64 / 1e9).abs() < 1e-3,
        "{last_t} vs {reached}"
    );
    assert!(rest.contains("interrupted"), "{rest}");
}

#[test]
fn results_and_points_record_their_provenance() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("small.toml"), SMALL).unwrap();
    let o = run(
        dir.path(),
        &[
            "run",
            "small.toml",
            "--out",
            "o",
            "-q",
            "--set",
            "kernel.vm.swappiness=10",
            "--seed",
            "9",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let p = &json(&dir.path().join("o/results.json"))["provenance"];
    assert_eq!(p["scenario_file"], "small.toml");
    assert_eq!(p["scenario_text"], SMALL);
    assert_eq!(
        p["sets"],
        serde_json::json!(["kernel.vm.swappiness=10", "run.seed=9"])
    );
    assert_eq!(p["seed"], 9);
    assert_eq!(p["reclaimsim_version"], env!("CARGO_PKG_VERSION"));
    let hash = p["scenario_hash"].as_str().unwrap().to_string();
    assert_eq!(hash.len(), 64);
    // The same resolved scenario reached another way (the key in the file) hashes
    // the same; another value does not.
    let same = SMALL.replace(
        "[[workload]]",
        "[kernel]\nvm.swappiness = 10\n\n[[workload]]",
    );
    std::fs::write(dir.path().join("same.toml"), same).unwrap();
    let o = run(
        dir.path(),
        &["run", "same.toml", "--out", "o2", "-q", "--seed", "9"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let p2 = &json(&dir.path().join("o2/results.json"))["provenance"];
    assert_eq!(p2["scenario_hash"], hash.as_str());
    let o = run(
        dir.path(),
        &["run", "same.toml", "--out", "o3", "-q", "--seed", "10"],
    );
    assert!(o.status.success());
    let p3 = &json(&dir.path().join("o3/results.json"))["provenance"];
    assert_ne!(p3["scenario_hash"], hash.as_str());

    // A sweep point records the point's values as sets after the command line's.
    let sweep = format!(
        "{SMALL}\n[sweep]\nmetrics = [\"workloads.heap.ops\"]\n[[sweep.param]]\nkey = \"kernel.vm.swappiness\"\nvalues = [20, 30]\n"
    );
    std::fs::write(dir.path().join("sweep.toml"), sweep).unwrap();
    let o = run(
        dir.path(),
        &[
            "sweep",
            "sweep.toml",
            "--out",
            "sw",
            "-q",
            "--seed",
            "4",
            "--check",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let point = json(&dir.path().join("sw/point-001/point.json"));
    let pp = &point["provenance"];
    assert_eq!(
        pp["sets"],
        serde_json::json!(["run.seed=4", "kernel.vm.swappiness=30"])
    );
    assert_eq!(pp["seed"], 4);
    let r = json(&dir.path().join("sw/point-001/results.json"));
    assert_eq!(r["provenance"]["scenario_hash"], pp["scenario_hash"]);
    assert_eq!(r["seed"], 4);
}

#[test]
fn progress_lines_without_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("small.toml"), SMALL).unwrap();
    // `run --progress`: at least the closing line, at 100%.
    let o = run(
        dir.path(),
        &["run", "small.toml", "--out", "o", "-q", "--progress"],
    );
    assert!(o.status.success());
    let e = stderr(&o);
    assert!(
        e.lines()
            .any(|l| l.starts_with("progress: 0.500 of 0.500 s simulated (100%)")),
        "{e}"
    );
    // `sweep`: the plan, then one line per finished point.
    let sweep = format!(
        "{SMALL}\n[sweep]\nmetrics = [\"workloads.heap.ops\"]\n[[sweep.param]]\nkey = \"kernel.vm.swappiness\"\nvalues = [20, 30, 40]\n"
    );
    std::fs::write(dir.path().join("sweep.toml"), sweep).unwrap();
    let o = run(
        dir.path(),
        &["sweep", "sweep.toml", "--out", "sw", "--jobs", "1"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("sweep: 3 points"), "{e}");
    assert!(e.contains("0 already complete, 3 to run"), "{e}");
    let done: Vec<&str> = e.lines().filter(|l| l.starts_with("point ")).collect();
    assert_eq!(done.len(), 3, "{e}");
    assert!(done[2].contains("3 of 3 run"), "{e}");
    assert!(done[0].contains("kernel.vm.swappiness=20"), "{e}");
    // `validate` states the points and an estimate.
    let o = run(dir.path(), &["validate", "sweep.toml"]);
    assert!(o.status.success());
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("sweep: 3 points"), "{out}");
    assert!(out.contains("1.5 s of virtual time"), "{out}");
}

#[test]
fn a_sweep_of_more_than_ten_thousand_points_asks_for_yes() {
    let dir = tempfile::tempdir().unwrap();
    let values: Vec<String> = (0..=200).map(|v| v.to_string()).collect();
    let sweep = format!(
        "{SMALL}\n[sweep]\nmetrics = [\"workloads.heap.ops\"]\n[[sweep.param]]\nkey = \"kernel.vm.swappiness\"\nvalues = [{}]\n[[sweep.param]]\nkey = \"run.seed\"\nvalues = [{}]\n",
        values.join(", "),
        (1..=50).map(|v| v.to_string()).collect::<Vec<_>>().join(", ")
    );
    std::fs::write(dir.path().join("big.toml"), sweep).unwrap();
    let o = run(dir.path(), &["sweep", "big.toml", "--out", "sw", "-q"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("10050 points") && e.contains("--yes"), "{e}");
    assert!(!dir.path().join("sw").exists());
}

#[test]
fn a_sample_interval_below_a_millisecond_is_rejected() {
    // Found by the fuzz harness: 1us samples of a 4 GiB machine under --check walked
    // every frame a million times a second of virtual time, and never finished.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("s.toml"),
        SMALL.replace("sample_interval = \"100ms\"", "sample_interval = \"1us\""),
    )
    .unwrap();
    let o = run(
        dir.path(),
        &["run", "s.toml", "--out", "o", "-q", "--check"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("s.toml:3: run.sample_interval: must be at least 1ms, got 1us"),
        "{}",
        stderr(&o)
    );
}
