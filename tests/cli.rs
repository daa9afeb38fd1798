//! End-to-end tests of the `reclaimsim` binary: exit codes, error messages, the files a
//! run writes, determinism and overrides. Every test writes its scenarios into a fresh
//! temporary directory and runs the binary there (no terminal, no stdin), with small
//! machines and short runs so the whole file takes well under a second per test.
//!
//! Expected line numbers in error messages are counted by hand (1-based) from the
//! scenario texts below; `assert_line` double-checks the count against the text.

use serde_json::Value;
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use tempfile::TempDir;

const BIN: &str = env!("CARGO_BIN_EXE_reclaimsim");

/// Unknown sysctl on line 9 (`vm.swapiness`, a typo of `vm.swappiness`).
const UNKNOWN_KEY: &str = r#"[run]
duration = "2s"
sample_interval = "500ms"

[machine]
memory = "256M"

[kernel]
vm.swapiness = 10

[[workload]]
name = "heap"
kind = "anon"
size = "64M"
"#;

/// Size with an unknown unit on line 14, in workload[0].
const BAD_UNIT: &str = r#"[run]
duration = "2s"
sample_interval = "500ms"

[machine]
memory = "256M"

[kernel]
vm.swappiness = 10

[[workload]]
name = "heap"
kind = "anon"
size = "4X"
"#;

/// Negative size on line 19, in the second workload (workload[1]).
const NEGATIVE_SIZE: &str = r#"[run]
duration = "2s"
sample_interval = "500ms"

[machine]
memory = "256M"

[kernel]
vm.swappiness = 10

[[workload]]
name = "heap"
kind = "anon"
size = "64M"

[[workload]]
name = "cache"
kind = "anon"
size = "-1G"
"#;

/// A small run under memory pressure whose counters depend on the seed: a uniform random
/// anon working set bigger than memory, with zram swap.
const RANDOM: &str = r#"[run]
duration = "2s"
sample_interval = "500ms"

[machine]
memory = "256M"

[machine.swap]
type = "zram"
size = "512M"

[[workload]]
name = "heap"
kind = "anon"
size = "320M"
pattern = "uniform"
rate = 100000
"#;

/// Pressure on both LRUs: an anon working set bigger than memory (zram swap) and a reader
/// streaming through files, so reclaim scans anon and file pages, swaps and refaults.
const PRESSURED: &str = r#"[run]
duration = "2s"
sample_interval = "500ms"

[machine]
memory = "256M"

[machine.swap]
type = "zram"
size = "512M"

[kernel]
vm.swappiness = 100

[[workload]]
name = "heap"
kind = "anon"
size = "320M"
pattern = "zipf"
skew = 0.8
write_ratio = 0.3
rate = 100000

[[workload]]
name = "reader"
kind = "file-read"
nr_files = 4
file_size = "32M"
io_size = "64K"
pattern = "sequential"
rate = 2000
"#;

/// A temporary directory holding the scenarios and outputs of one test.
struct Sandbox {
    dir: TempDir,
}

impl Sandbox {
    fn new() -> Sandbox {
        Sandbox {
            dir: tempfile::tempdir().expect("create temp dir"),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Writes a scenario file and returns its (absolute) path.
    fn scenario(&self, name: &str, text: &str) -> PathBuf {
        let p = self.path(name);
        std::fs::write(&p, text).expect("write scenario");
        p
    }

    /// Runs the binary in the sandbox directory with no stdin.
    fn run<I, S>(&self, args: I) -> Output
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        Command::new(BIN)
            .args(args)
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .output()
            .expect("run reclaimsim")
    }

    /// `run SCENARIO --out OUT` plus `extra`.
    fn run_scenario(&self, scenario: &Path, out: &Path, extra: &[&str]) -> Output {
        let mut args: Vec<&OsStr> = vec![
            "run".as_ref(),
            scenario.as_os_str(),
            "--out".as_ref(),
            out.as_os_str(),
        ];
        args.extend(extra.iter().map(|s| OsStr::new(*s)));
        self.run(&args)
    }

    /// `run SCENARIO --out OUT --check` plus `extra`; asserts success. The invariant
    /// checker is on for every run in the tests.
    fn run_ok(&self, scenario: &Path, out: &Path, extra: &[&str]) -> Output {
        let mut extra = extra.to_vec();
        extra.push("--check");
        let o = self.run_scenario(scenario, out, &extra);
        assert_success(&o);
        o
    }
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn assert_success(o: &Output) {
    assert!(
        o.status.success(),
        "expected success, got {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        stdout(o),
        stderr(o)
    );
}

/// Checks a rejected input: exit code 2, nothing on stdout claiming success, and no
/// results.json in `out`. Returns stderr.
fn assert_rejected(o: &Output, out: &Path) -> String {
    let (so, se) = (stdout(o), stderr(o));
    assert_eq!(
        o.status.code(),
        Some(2),
        "expected exit code 2\nstdout:\n{so}\nstderr:\n{se}"
    );
    for claim in ["wrote", ": ok", "results.json"] {
        assert!(!so.contains(claim), "stdout claims success: {so:?}");
    }
    assert!(se.starts_with("error: "), "stderr: {se:?}");
    assert!(
        !out.join("results.json").exists(),
        "results.json written despite the error"
    );
    assert!(
        !out.join("timeseries.csv").exists(),
        "timeseries.csv written despite the error"
    );
    se
}

/// Guards the hand-counted line numbers: line `line` (1-based) of `text` holds `needle`.
fn assert_line(text: &str, line: usize, needle: &str) {
    let l = text.lines().nth(line - 1).unwrap_or("");
    assert!(l.contains(needle), "line {line} is {l:?}, not {needle:?}");
}

/// The `error: FILE:LINE: KEY: ` prefix of a scenario error.
fn prefix(file: &Path, line: usize, key: &str) -> String {
    format!("error: {}:{line}: {key}: ", file.display())
}

/// The `error: --set RAW: KEY: ` prefix of an error in a `--set` flag (it has no line).
fn set_prefix(raw: &str, key: &str) -> String {
    format!("error: --set {raw}: {key}: ")
}

fn read_json(path: &Path) -> Value {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("parse {}: {e}", path.display()))
}

fn vmstat(results: &Value) -> BTreeMap<String, u64> {
    results["vmstat"]
        .as_object()
        .expect("vmstat is an object")
        .iter()
        .map(|(k, v)| (k.clone(), v.as_u64().expect("vmstat values are integers")))
        .collect()
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

// ---------------------------------------------------------------------------------------
// 1. Bad input
// ---------------------------------------------------------------------------------------

#[test]
fn unknown_key_names_file_line_and_key() {
    let sb = Sandbox::new();
    assert_line(UNKNOWN_KEY, 9, "vm.swapiness");
    let file = sb.scenario("typo.toml", UNKNOWN_KEY);
    let out = sb.path("out");
    let o = sb.run_scenario(&file, &out, &[]);
    let se = assert_rejected(&o, &out);
    let want = prefix(&file, 9, "kernel.vm.swapiness");
    assert!(se.contains(&want), "want {want:?} in {se:?}");
    assert!(se.contains("unknown key"), "{se}");
    assert!(se.contains("swappiness"), "no suggestion in {se}");
}

#[test]
fn bad_unit_names_file_line_and_key() {
    let sb = Sandbox::new();
    assert_line(BAD_UNIT, 14, "4X");
    let file = sb.scenario("unit.toml", BAD_UNIT);
    let out = sb.path("out");
    let o = sb.run_scenario(&file, &out, &[]);
    let se = assert_rejected(&o, &out);
    let want = prefix(&file, 14, "workload[0].size");
    assert!(se.contains(&want), "want {want:?} in {se:?}");
    assert!(se.contains("4X"), "{se}");
}

#[test]
fn negative_size_names_file_line_and_key() {
    let sb = Sandbox::new();
    assert_line(NEGATIVE_SIZE, 19, "-1G");
    let file = sb.scenario("negative.toml", NEGATIVE_SIZE);
    let out = sb.path("out");
    let o = sb.run_scenario(&file, &out, &[]);
    let se = assert_rejected(&o, &out);
    let want = prefix(&file, 19, "workload[1].size");
    assert!(se.contains(&want), "want {want:?} in {se:?}");
    assert!(se.contains("negative"), "{se}");
}

#[test]
fn missing_scenario_file_names_the_path() {
    let sb = Sandbox::new();
    let file = sb.path("does-not-exist.toml");
    let out = sb.path("out");
    let o = sb.run_scenario(&file, &out, &[]);
    let se = assert_rejected(&o, &out);
    assert!(se.contains(&file.display().to_string()), "{se}");
    assert!(
        !out.exists(),
        "output directory created for a missing scenario"
    );
}

#[test]
fn set_with_unknown_key_is_rejected() {
    let sb = Sandbox::new();
    let file = sb.scenario("random.toml", RANDOM);
    let out = sb.path("out");
    let o = sb.run_scenario(&file, &out, &["--set", "kernel.vm.swapiness=10"]);
    let se = assert_rejected(&o, &out);
    // A --set problem has no line in the file: the message names the flag instead.
    let want = set_prefix("kernel.vm.swapiness=10", "kernel.vm.swapiness");
    assert!(se.contains(&want), "want {want:?} in {se:?}");
    assert!(se.contains("unknown key"), "{se}");
    assert!(!se.contains(":0:"), "{se}");
}

#[test]
fn set_without_equals_is_rejected() {
    let sb = Sandbox::new();
    let file = sb.scenario("random.toml", RANDOM);
    let out = sb.path("out");
    let o = sb.run_scenario(&file, &out, &["--set", "kernel.vm.swappiness"]);
    let se = assert_rejected(&o, &out);
    let want = "error: --set kernel.vm.swappiness: expected KEY=VALUE";
    assert!(se.contains(want), "want {want:?} in {se:?}");
}

#[test]
fn set_with_value_of_wrong_type_is_rejected() {
    let sb = Sandbox::new();
    let file = sb.scenario("random.toml", RANDOM);
    let out = sb.path("out");
    let o = sb.run_scenario(&file, &out, &["--set", "kernel.vm.swappiness=lots"]);
    let se = assert_rejected(&o, &out);
    let want = set_prefix("kernel.vm.swappiness=lots", "kernel.vm.swappiness");
    assert!(se.contains(&want), "want {want:?} in {se:?}");
    assert!(
        se.contains("expected a non-negative integer, got a string (\"lots\")"),
        "{se}"
    );
}

#[test]
fn validate_rejects_a_bad_file() {
    let sb = Sandbox::new();
    let file = sb.scenario("typo.toml", UNKNOWN_KEY);
    let o = sb.run(["validate".as_ref(), file.as_os_str()]);
    // validate writes nothing; the default output directory must not appear either.
    let se = assert_rejected(&o, &sb.path("out").join("typo"));
    let want = prefix(&file, 9, "kernel.vm.swapiness");
    assert!(se.contains(&want), "want {want:?} in {se:?}");
}

#[test]
fn validate_rejects_a_bad_set() {
    let sb = Sandbox::new();
    let file = sb.scenario("random.toml", RANDOM);
    let o = sb.run([
        "validate".as_ref(),
        file.as_os_str(),
        "--set".as_ref(),
        "kernel.vm.swappiness=300".as_ref(),
    ]);
    let se = assert_rejected(&o, &sb.path("out").join("random"));
    let want = set_prefix("kernel.vm.swappiness=300", "kernel.vm.swappiness");
    assert!(se.contains(&want), "want {want:?} in {se:?}");
}

#[test]
fn validate_accepts_a_good_file() {
    let sb = Sandbox::new();
    let file = sb.scenario("pressured.toml", PRESSURED);
    let o = sb.run(["validate".as_ref(), file.as_os_str()]);
    assert_success(&o);
    assert_eq!(o.status.code(), Some(0));
    let so = stdout(&o);
    assert!(so.contains("ok"), "{so}");
    assert!(so.contains(&file.display().to_string()), "{so}");
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
    assert!(
        !sb.path("out").exists(),
        "validate wrote an output directory"
    );
}

// ---------------------------------------------------------------------------------------
// 2. A normal run and its files
// ---------------------------------------------------------------------------------------

#[test]
fn run_writes_results_and_timeseries() {
    let sb = Sandbox::new();
    let file = sb.scenario("pressured.toml", PRESSURED);
    let out = sb.path("out");
    let o = sb.run_ok(&file, &out, &["-q"]);
    assert!(stdout(&o).is_empty(), "-q printed: {}", stdout(&o));

    let r = read_json(&out.join("results.json"));
    for key in ["vmstat", "workloads", "tasks", "psi", "cgroups"] {
        assert!(r.get(key).is_some(), "results.json lacks `{key}`");
    }
    let vm = vmstat(&r);
    for key in ["pgscan_kswapd", "pswpout", "workingset_refault_file"] {
        assert!(vm.contains_key(key), "vmstat lacks `{key}`");
    }
    for name in ["heap", "reader"] {
        let w = &r["workloads"][name];
        assert!(
            w.is_object(),
            "workload `{name}` missing from {}",
            r["workloads"]
        );
        assert!(w["ops"].as_u64().unwrap() > 0, "{name}: no ops");
        let lat = &w["latency_ns"];
        for stat in ["mean", "stddev", "p50", "p90", "p99", "max"] {
            assert!(
                lat[stat].is_number(),
                "{name}: latency_ns.{stat} missing: {lat}"
            );
        }
        let (p50, p99, max) = (
            lat["p50"].as_u64().unwrap(),
            lat["p99"].as_u64().unwrap(),
            lat["max"].as_u64().unwrap(),
        );
        assert!(p50 > 0 && p50 <= p99 && p99 <= max, "{name}: {lat}");
    }

    let csv = String::from_utf8(read(&out.join("timeseries.csv"))).unwrap();
    let mut lines = csv.lines();
    let header = lines.next().expect("header");
    assert!(header.starts_with("time_s,nr_free_pages"), "{header}");
    let ncols = header.split(',').count();
    let rows: Vec<&str> = lines.collect();
    // 2 s sampled every 500 ms: rows at 0.5, 1, 1.5 and 2 s.
    assert_eq!(rows.len(), 4, "{csv}");
    for (i, row) in rows.iter().enumerate() {
        let cells: Vec<&str> = row.split(',').collect();
        assert_eq!(cells.len(), ncols, "row {i}: {row}");
        let t: f64 = cells[0].parse().unwrap();
        assert!((t - 0.5 * (i + 1) as f64).abs() < 1e-9, "row {i}: {row}");
    }

    // Only the two files and the directory's lock; no temporary files
    // (".name.pid.tmp") left behind.
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != ".reclaimsim.lock")
        .collect();
    names.sort();
    assert!(
        names.iter().all(|n| !n.starts_with('.')),
        "leftover temp files: {names:?}"
    );
    assert_eq!(names, ["results.json", "timeseries.csv"]);
}

// ---------------------------------------------------------------------------------------
// 3. Determinism
// ---------------------------------------------------------------------------------------

fn outputs(out: &Path) -> (Vec<u8>, Vec<u8>) {
    (
        read(&out.join("results.json")),
        read(&out.join("timeseries.csv")),
    )
}

#[test]
fn same_scenario_gives_identical_files() {
    let sb = Sandbox::new();
    let file = sb.scenario("random.toml", RANDOM);
    let (a, b) = (sb.path("a"), sb.path("b"));
    sb.run_ok(&file, &a, &["-q"]);
    sb.run_ok(&file, &b, &["-q"]);
    let (ra, ta) = outputs(&a);
    let (rb, tb) = outputs(&b);
    assert!(ra == rb, "results.json differs between identical runs");
    assert!(ta == tb, "timeseries.csv differs between identical runs");
}

#[test]
fn seed_flag_is_deterministic_and_matters() {
    let sb = Sandbox::new();
    let file = sb.scenario("random.toml", RANDOM);
    let (a, b, c) = (sb.path("seed7a"), sb.path("seed7b"), sb.path("seed8"));
    sb.run_ok(&file, &a, &["-q", "--seed", "7"]);
    sb.run_ok(&file, &b, &["-q", "--seed", "7"]);
    sb.run_ok(&file, &c, &["-q", "--seed", "8"]);

    let (ra, ta) = outputs(&a);
    let (rb, tb) = outputs(&b);
    assert!(ra == rb, "results.json differs between two --seed 7 runs");
    assert!(ta == tb, "timeseries.csv differs between two --seed 7 runs");

    let (r7, r8) = (
        read_json(&a.join("results.json")),
        read_json(&c.join("results.json")),
    );
    assert_eq!(r7["seed"].as_u64(), Some(7));
    assert_eq!(r8["seed"].as_u64(), Some(8));
    // Not just the seed field: the simulated behaviour itself must change.
    let (v7, v8) = (vmstat(&r7), vmstat(&r8));
    assert!(
        v7["pgscan_kswapd"] > 0,
        "no reclaim, so the seed cannot show"
    );
    assert_ne!(v7, v8, "vmstat identical for --seed 7 and --seed 8");
    let (_, t8) = outputs(&c);
    assert!(
        ta != t8,
        "timeseries.csv identical for --seed 7 and --seed 8"
    );
}

// ---------------------------------------------------------------------------------------
// 4. --set overrides and the summary
// ---------------------------------------------------------------------------------------

#[test]
fn set_swappiness_changes_the_run_and_summary_is_printed() {
    let sb = Sandbox::new();
    let file = sb.scenario("pressured.toml", PRESSURED);
    let (base, zero) = (sb.path("default"), sb.path("swappiness0"));
    sb.run_ok(&file, &base, &["-q"]);
    let o = sb.run_ok(&file, &zero, &["--set", "kernel.vm.swappiness=0"]);

    let so = stdout(&o);
    assert!(
        so.contains("pgscan_kswapd"),
        "summary lacks pgscan_kswapd:\n{so}"
    );
    assert!(
        so.contains("results.json"),
        "summary lacks the output note:\n{so}"
    );

    let v_base = vmstat(&read_json(&base.join("results.json")));
    let v_zero = vmstat(&read_json(&zero.join("results.json")));
    assert_ne!(
        v_base, v_zero,
        "--set kernel.vm.swappiness=0 changed nothing"
    );
    assert!(v_base["pswpout"] > 0, "default run did not swap");
}

// ---------------------------------------------------------------------------------------
// 5. --check
// ---------------------------------------------------------------------------------------

#[test]
fn check_passes_on_a_pressured_scenario() {
    let sb = Sandbox::new();
    let file = sb.scenario("pressured.toml", PRESSURED);
    let out = sb.path("out");
    let o = sb.run_ok(&file, &out, &["-q"]);
    assert_eq!(o.status.code(), Some(0));
    // The invariants were checked under real pressure: reclaim, swap and refaults happened.
    let vm = vmstat(&read_json(&out.join("results.json")));
    for key in ["pgscan_kswapd", "pswpout", "workingset_refault_file"] {
        assert!(vm[key] > 0, "{key} is 0: the scenario is not pressured");
    }
}

// ---------------------------------------------------------------------------------------
// 5. Inputs that used to hang or mislead (issue 9)
// ---------------------------------------------------------------------------------------

/// Runs the binary with `args`, killing it after `limit`: a hang fails the test.
fn run_with_timeout(sb: &Sandbox, args: &[&str], limit: std::time::Duration) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .current_dir(sb.dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run reclaimsim");
    let started = std::time::Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("reclaimsim {args:?} still running after {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

#[test]
fn zero_access_cost_is_rejected_not_a_hang() {
    // The reproduction from the issue: stutterp with free accesses looped forever at
    // one virtual instant once the hog's memory was resident.
    let sb = Sandbox::new();
    let stutterp = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/stutterp.toml");
    let out = sb.path("out");
    let args = [
        "run",
        stutterp,
        "-q",
        "--out",
        out.to_str().unwrap(),
        "--set",
        "costs.access=0",
    ];
    let o = run_with_timeout(&sb, &args, std::time::Duration::from_secs(30));
    let se = assert_rejected(&o, &out);
    assert_eq!(
        se.trim_end(),
        "error: --set costs.access=0: costs.access: must be > 0: every access takes \
         virtual time (1ns is the least)"
    );
}

#[test]
fn seed_above_the_largest_toml_integer_is_rejected() {
    // run.seed is a TOML integer (i64) in the file; --seed has the same range.
    let sb = Sandbox::new();
    let file = sb.scenario("random.toml", RANDOM);
    let out = sb.path("out");
    let o = sb.run_scenario(&file, &out, &["-q", "--seed", "9223372036854775808"]);
    let se = assert_rejected(&o, &out);
    assert!(se.contains("--seed"), "{se}");
    assert!(se.contains("must be at most 9223372036854775807"), "{se}");
    assert!(!se.contains("expected u64"), "{se}");
    // The largest is accepted and reaches results.json unchanged.
    let ok = sb.path("max");
    sb.run_ok(&file, &ok, &["-q", "--seed", "9223372036854775807"]);
    let r = read_json(&ok.join("results.json"));
    assert_eq!(r["seed"].as_u64(), Some(9_223_372_036_854_775_807));
}

/// Belady's trace, 12 requests over 5 keys: `cache` with two policies at two sizes.
/// By hand (keys newest first for LRU, oldest first for FIFO):
/// - 2 slots: no key comes back within two requests, so every request misses for
///   both policies: 12.
/// - LRU, 4 slots: 1 2 3 4 miss [4321]; 1 2 hit [2143]; 5 misses, evicts 3 [5214];
///   1 2 hit [2154]; 3 misses, evicts 4 [3215]; 4 evicts 5 [4321]; 5 evicts 1: 8.
/// - FIFO, 4 slots: 1 2 3 4 miss (1234); 1 2 hit; 5 evicts 1 (2345); 1 evicts 2; 2
///   evicts 3; 3 evicts 4; 4 evicts 5 (1234); 5 evicts 1: 4 + 6 = 10.
#[test]
fn cache_runs_each_policy_at_each_size() {
    let sb = Sandbox::new();
    std::fs::write(sb.path("t.txt"), "1\n2\n3\n4\n1\n2\n5\n1\n2\n3\n4\n5\n").unwrap();
    let o = sb.run([
        "cache", "t.txt", "--policy", "lru,fifo", "--size", "2,4", "--json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["trace"], "t.txt");
    assert_eq!(v["size_unit"], "objects");
    assert_eq!(v["policies"], serde_json::json!(["lru", "fifo"]));
    let got: Vec<(String, u64, u64, u64)> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["policy"].as_str().unwrap().to_string(),
                r["cache_size"].as_u64().unwrap(),
                r["requests"].as_u64().unwrap(),
                r["misses"].as_u64().unwrap(),
            )
        })
        .collect();
    let want = [
        ("lru", 2, 12, 12),
        ("lru", 4, 12, 8),
        ("fifo", 2, 12, 12),
        ("fifo", 4, 12, 10),
    ];
    let want: Vec<(String, u64, u64, u64)> = want
        .iter()
        .map(|&(p, s, r, m)| (p.to_string(), s, r, m))
        .collect();
    assert_eq!(got, want);
    assert_eq!(v["results"][3]["miss_ratio"].as_f64(), Some(10.0 / 12.0));
    // Several policies: no single `policy`/`sizes`; one policy keeps them.
    assert!(v.get("policy").is_none() && v.get("sizes").is_none());
    let o = sb.run([
        "cache", "t.txt", "--policy", "fifo", "--size", "4", "--json",
    ]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["policy"], "fifo");
    assert_eq!(v["sizes"][0]["misses"], 10);
    // Text: a block per policy.
    let o = sb.run(["cache", "t.txt", "--policy", "lru,fifo", "--size", "2,4"]);
    let text = String::from_utf8(o.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5, "{text}");
    assert!(
        lines[1].contains("t.txt lru cache size  4 objects") && lines[1].contains("(8 misses)")
    );
    assert!(lines[2].is_empty());
    assert!(
        lines[4].contains("t.txt fifo cache size  4 objects") && lines[4].contains("(10 misses)")
    );
    // A bad name in the list.
    let o = sb.run(["cache", "t.txt", "--policy", "lru,nope", "--size", "2"]);
    assert_eq!(o.status.code(), Some(2));
    let se = String::from_utf8_lossy(&o.stderr);
    assert!(
        se.contains("--policy: unknown policy `nope` (known: lru, fifo"),
        "{se}"
    );
}
