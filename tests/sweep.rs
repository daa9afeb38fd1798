//! Sweeps: parallel points, resuming, sweep.csv's shape, and bad definitions.

use reclaimsim::scenario::{self, Scenario};
use reclaimsim::sweep::{self, SweepOptions, SweepOutcome};
use std::path::Path;

fn run_sweep(sc: &Scenario, out: &Path, jobs: usize) -> Result<SweepOutcome, sweep::SweepError> {
    sweep::run_sweep(
        sc,
        out,
        &SweepOptions {
            jobs,
            ..Default::default()
        },
    )
}

const SWEEP: &str = r#"
[run]
duration = "2s"
[machine]
memory = "512M"
nr_cpus = 2
[machine.swap]
type = "zram"
size = "1G"
[[workload]]
name = "mix"
kind = "anon"
size = "600M"
pattern = "zipf"
skew = 0.6
rate = 300000
[sweep]
metrics = ["vmstat.pswpout", "workloads.mix.throughput"]
[[sweep.param]]
key = "kernel.vm.swappiness"
values = [60, 100, 200]
[[sweep.param]]
key = "machine.swap.type"
values = ["zram", "disk"]
"#;

#[test]
fn six_points_run_in_parallel_and_resume() {
    let sc = scenario::parse_str(SWEEP, "sweep.toml", &[]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sw");
    let o = run_sweep(&sc, &out, 2).unwrap();
    assert_eq!((o.points, o.ran, o.skipped), (6, 6, 0));
    // Two workers: two points ran at once (a point takes tens of ms, far longer than
    // a worker takes to start on its first).
    assert_eq!(o.max_in_flight, Some(2));
    // One row per point, first parameter outermost; columns named by key and path.
    let lines: Vec<&str> = o.csv.lines().collect();
    assert_eq!(
        lines[0],
        "kernel.vm.swappiness,machine.swap.type,vmstat.pswpout,workloads.mix.throughput"
    );
    assert_eq!(lines.len(), 7);
    let firsts: Vec<String> = lines[1..]
        .iter()
        .map(|l| l.split(',').take(2).collect::<Vec<_>>().join(","))
        .collect();
    assert_eq!(
        firsts,
        ["60,zram", "60,disk", "100,zram", "100,disk", "200,zram", "200,disk"]
    );
    assert_eq!(
        std::fs::read_to_string(out.join("sweep.csv")).unwrap(),
        o.csv
    );
    // Swap-ins from disk block the workload, from zram they only cost a decompression:
    // at every swappiness the zram point gets more done.
    let ops = |row: usize| {
        lines[row]
            .split(',')
            .nth(3)
            .unwrap()
            .parse::<f64>()
            .unwrap()
    };
    for zram_row in [1, 3, 5] {
        assert!(ops(zram_row) > ops(zram_row + 1), "{}", lines[zram_row]);
    }

    // An interrupted sweep: a point without results.json is run again, the others are
    // kept, and the table comes out the same.
    std::fs::remove_file(out.join("point-004/results.json")).unwrap();
    let again = run_sweep(&sc, &out, 2).unwrap();
    assert_eq!((again.ran, again.skipped), (1, 5));
    assert_eq!(again.max_in_flight, Some(1));
    assert_eq!(again.csv, o.csv);
    // A changed sweep does not reuse points run with other values.
    let changed = scenario::parse_str(
        &SWEEP.replace("[60, 100, 200]", "[10, 100, 200]"),
        "sweep.toml",
        &[],
    )
    .unwrap();
    let third = run_sweep(&changed, &out, 2).unwrap();
    assert_eq!((third.ran, third.skipped), (2, 4));
}

/// The error a scenario's sweep gets: at loading, or when its metrics are checked
/// against the points' results (as every command does after loading).
fn sweep_error(text: &str) -> String {
    let e = match scenario::parse_str(text, "sweep.toml", &[]) {
        Ok(sc) => reclaimsim::sweep::check_metrics(&sc).unwrap_err(),
        Err(e) => e,
    };
    e.to_string()
}

#[test]
fn bad_sweep_definitions_name_the_key() {
    let e = sweep_error(&SWEEP.replace(
        "key = \"kernel.vm.swappiness\"",
        "key = \"kernel.vm.swapiness\"",
    ));
    assert!(
        e.contains("sweep.param[0].key")
            && e.contains("kernel.vm.swapiness")
            && e.contains("unknown key"),
        "{e}"
    );
    let e = sweep_error(&SWEEP.replace("values = [60, 100, 200]", "values = []"));
    assert!(
        e.contains("sweep.param[0].values")
            && e.contains("empty list")
            && e.contains("kernel.vm.swappiness"),
        "{e}"
    );
    let e = sweep_error(&SWEEP.replace("values = [60, 100, 200]", "values = [60, 300]"));
    assert!(
        e.contains("sweep.param[0].values[1]")
            && e.contains("kernel.vm.swappiness")
            && e.contains("0..=200"),
        "{e}"
    );
    let e = sweep_error(&SWEEP.replace("values = [\"zram\", \"disk\"]", "values = [\"zram\", 7]"));
    assert!(
        e.contains("sweep.param[1].values[1]") && e.contains("machine.swap.type"),
        "{e}"
    );
    let e = sweep_error(&SWEEP.replace("\"vmstat.pswpout\"", "\"vmstat.pswpot\""));
    assert!(
        e.contains("sweep.metrics[0]") && e.contains("pswpot"),
        "{e}"
    );
    let e = sweep_error(&SWEEP.replace(
        "\"workloads.mix.throughput\"",
        "\"workloads.nope.throughput\"",
    ));
    assert!(
        e.contains("sweep.metrics[1]") && e.contains("`workloads` has no `nope.throughput`"),
        "{e}"
    );
}

#[test]
fn sweep_command_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sweep.toml");
    std::fs::write(
        &file,
        SWEEP.replace("values = [60, 100, 200]", "values = [60]"),
    )
    .unwrap();
    let out = dir.path().join("out");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_reclaimsim"))
        .args([
            "sweep".as_ref(),
            file.as_os_str(),
            "--out".as_ref(),
            out.as_os_str(),
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("2 points: 2 run"), "{stdout}");
    assert!(out.join("point-001/results.json").is_file());
    assert!(out.join("point-001/point.json").is_file());
    // No [sweep]: a clear error, exit 2.
    std::fs::write(&file, SWEEP.split("[sweep]").next().unwrap()).unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_reclaimsim"))
        .args([
            "sweep".as_ref(),
            file.as_os_str(),
            "--out".as_ref(),
            out.as_os_str(),
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no [sweep]"));
}

#[test]
fn pivot_table_rows_columns_and_percentages() {
    // Rows by swappiness, columns by swap type, the metric pswpout; "% of zram" is
    // disk / zram × 100, recomputed here from sweep.csv (a second way to the numbers).
    let text = format!(
        "{SWEEP}\n[sweep.pivot]\nrows = \"kernel.vm.swappiness\"\ncolumns = \"machine.swap.type\"\nmetric = \"vmstat.pswpout\"\nbaseline = \"zram\"\n"
    );
    let sc = scenario::parse_str(&text, "sweep.toml", &[]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let o = run_sweep(&sc, &dir.path().join("sw"), 2).unwrap();
    let pivot = o.pivot.unwrap();
    let lines: Vec<&str> = pivot.lines().collect();
    assert_eq!(
        lines[0],
        "kernel.vm.swappiness,zram vmstat.pswpout,disk vmstat.pswpout,disk % of zram"
    );
    assert_eq!(lines.len(), 4);
    let csv: Vec<Vec<&str>> = o
        .csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    for (i, swappiness) in ["60", "100", "200"].iter().enumerate() {
        let (zram, disk) = (csv[2 * i][2], csv[2 * i + 1][2]);
        let pct = 100.0 * disk.parse::<f64>().unwrap() / zram.parse::<f64>().unwrap();
        assert_eq!(lines[i + 1], format!("{swappiness},{zram},{disk},{pct:.1}"));
    }
    // A pivot on a key that is not swept is rejected.
    let bad = text.replace(
        "rows = \"kernel.vm.swappiness\"",
        "rows = \"kernel.vm.dirty_ratio\"",
    );
    let e = scenario::parse_str(&bad, "sweep.toml", &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("sweep.pivot.rows"), "{e}");
}

#[test]
fn named_dimensions_and_linked_keys() {
    // A named dimension sets only its `with` keys, value for value.
    let text = SWEEP.replace(
        "key = \"kernel.vm.swappiness\"\nvalues = [60, 100, 200]",
        "name = \"load\"\nvalues = [1, 2, 3]\nwith = { \"workload.0.rate\" = [100000, 200000, 300000], \"kernel.vm.swappiness\" = [10, 20, 30] }",
    );
    let sc = scenario::parse_str(&text, "sweep.toml", &[]).unwrap();
    let sw = sc.sweep.clone().unwrap();
    let points = reclaimsim::sweep::points(&sw);
    assert_eq!(points.len(), 6);
    let p = reclaimsim::sweep::point_scenario(&sc, &points[3]).unwrap();
    // Point 3: load 2 (its rate and swappiness), swap type disk.
    assert_eq!(p.kernel.vm.swappiness, 20);
    assert_eq!(p.workloads[0].rate, Some(200000.0));
    assert_eq!(points[3].values[0].0, "load");
    // Errors: both key and name; neither; a name without `with`; a `with` list of the
    // wrong length; a `with` key also swept.
    let err = |t: String| sweep_error(&t);
    let e = err(text.replace("name = \"load\"", "name = \"load\"\nkey = \"run.seed\""));
    assert!(
        e.contains("sweep.param[0].name") && e.contains("not both"),
        "{e}"
    );
    let e = err(text.replace("name = \"load\"\n", ""));
    assert!(
        e.contains("sweep.param[0].key") && e.contains("needs a `key`"),
        "{e}"
    );
    let e = err(SWEEP.replace("key = \"kernel.vm.swappiness\"", "name = \"load\""));
    assert!(
        e.contains("sweep.param[0].with") && e.contains("sets nothing"),
        "{e}"
    );
    let e = err(text.replace("[10, 20, 30]", "[10, 20]"));
    assert!(
        e.contains("sweep.param[0].with.kernel.vm.swappiness") && e.contains("2 values for 3"),
        "{e}"
    );
    let e = err(text.replace(
        "\"kernel.vm.swappiness\" = [10, 20, 30]",
        "\"machine.swap.type\" = [\"zram\", \"zram\", \"disk\"]",
    ));
    assert!(e.contains("swept twice"), "{e}");
}

/// A small, fast sweep for the staleness tests: two points.
const SMALL: &str = r#"
[run]
duration = "300ms"
[machine]
memory = "128M"
nr_cpus = 1
[[workload]]
name = "mix"
kind = "anon"
size = "40M"
pattern = "uniform"
rate = 100000
[sweep]
metrics = ["workloads.mix.ops"]
[[sweep.param]]
key = "kernel.vm.swappiness"
values = [60, 100]
"#;

fn results_of(out: &Path, point: usize) -> serde_json::Value {
    let text = std::fs::read_to_string(out.join(format!("point-{point:03}/results.json"))).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn a_changed_file_or_set_reruns_the_points_it_changes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sw");
    let sc = scenario::parse_str(SMALL, "small.toml", &[]).unwrap();
    let first = run_sweep(&sc, &out, 1).unwrap();
    assert_eq!((first.ran, first.skipped), (2, 0));
    // Unchanged: both points are reused.
    let again = run_sweep(&sc, &out, 1).unwrap();
    assert_eq!((again.ran, again.skipped), (0, 2));
    // A --set that changes every point (the seed): both rerun, and the results say so.
    let seeded = scenario::parse_str(SMALL, "small.toml", &["run.seed=7".into()]).unwrap();
    let o = run_sweep(&seeded, &out, 1).unwrap();
    assert_eq!(
        (o.ran, o.skipped),
        (2, 0),
        "a --set must not reuse old points"
    );
    assert_eq!(results_of(&out, 0)["seed"], 7);
    // An edit of the file outside [sweep] (the workload's rate): both rerun.
    let edited = scenario::parse_str(
        &SMALL.replace("rate = 100000", "rate = 50000"),
        "small.toml",
        &["run.seed=7".into()],
    )
    .unwrap();
    let o = run_sweep(&edited, &out, 1).unwrap();
    assert_eq!(
        (o.ran, o.skipped),
        (2, 0),
        "an edited scenario must not reuse old points"
    );
    // Half the rate, half the operations (uniform pacing, all resident: no stalls).
    let ops = results_of(&out, 0)["workloads"]["mix"]["ops"]
        .as_f64()
        .unwrap();
    assert!((14_000.0..=16_000.0).contains(&ops), "{ops}");
}

/// Results of another build of the program are not reused: the point's recorded
/// build differs (as after a rebuild), so it runs again.
#[test]
fn a_point_run_by_another_build_is_rerun() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sw");
    let sc = scenario::parse_str(SMALL, "small.toml", &[]).unwrap();
    run_sweep(&sc, &out, 1).unwrap();
    let path = out.join("point-001/point.json");
    let mut point: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        point["provenance"]["build"].as_str().map(str::to_string),
        reclaimsim::sweep::build_id()
    );
    point["provenance"]["build"] = "another build".into();
    std::fs::write(&path, point.to_string()).unwrap();
    let o = run_sweep(&sc, &out, 1).unwrap();
    assert_eq!((o.ran, o.skipped), (1, 1));
}

#[test]
fn a_truncated_point_result_is_rerun_not_fatal() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sw");
    let sc = scenario::parse_str(SMALL, "small.toml", &[]).unwrap();
    let first = run_sweep(&sc, &out, 1).unwrap();
    let path = out.join("point-001/results.json");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, &text[..text.len() / 2]).unwrap();
    let o = run_sweep(&sc, &out, 1).unwrap();
    assert_eq!((o.ran, o.skipped), (1, 1));
    assert_eq!(o.csv, first.csv);
}

#[test]
fn a_smaller_sweep_lists_only_its_points() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sw");
    let big = scenario::parse_str(
        &SMALL.replace("values = [60, 100]", "values = [60, 100, 140, 180]"),
        "small.toml",
        &[],
    )
    .unwrap();
    run_sweep(&big, &out, 1).unwrap();
    let small = scenario::parse_str(SMALL, "small.toml", &[]).unwrap();
    let o = run_sweep(&small, &out, 1).unwrap();
    assert_eq!(o.points, 2);
    // point-002 and point-003 are the old sweep's: reported, not listed.
    assert_eq!(o.stale_dirs, 2);
    let listed = sweep::listed_points(&out).unwrap();
    let dirs: Vec<String> = listed
        .iter()
        .map(|p| p.dir.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(dirs, ["point-000", "point-001"]);
    assert_eq!(o.csv.lines().count(), 3);
}

#[test]
fn swept_values_with_commas_make_valid_csv_and_a_table() {
    // An array key and a dimension name holding a comma: sweep.csv quotes them and
    // the printed table keeps each in one column (it used to panic).
    let text = SMALL.replace(
        "key = \"kernel.vm.swappiness\"\nvalues = [60, 100]",
        "key = \"kernel.vm.lowmem_reserve_ratio\"\nvalues = [[256, 256, 32], [256, 128, 16]]\n[[sweep.param]]\nname = \"a,b\"\nvalues = [\"x,y\"]\nwith = { \"run.seed\" = [3] }",
    );
    let sc = scenario::parse_str(&text, "small.toml", &[]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let o = run_sweep(&sc, &dir.path().join("sw"), 1).unwrap();
    let rows: Vec<Vec<String>> = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(o.csv.as_bytes())
        .records()
        .map(|r| r.unwrap().iter().map(str::to_string).collect())
        .collect();
    assert_eq!(
        rows[0],
        ["kernel.vm.lowmem_reserve_ratio", "a,b", "workloads.mix.ops"]
    );
    assert_eq!(rows[1][0], "[256, 256, 32]");
    assert_eq!(rows[2][1], "x,y");
    assert!(rows.iter().all(|r| r.len() == 3));
    let table = sweep::table(&o.csv);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 3);
    assert!(
        lines[1].contains("[256, 256, 32]") && lines[1].contains("x,y"),
        "{table}"
    );
    // Aligned: every row as wide as the header.
    assert!(lines.iter().all(|l| l.len() == lines[0].len()), "{table}");
}

#[test]
fn every_metric_path_is_checked_against_the_results_schema() {
    let text = SMALL.replace(
        "[[workload]]",
        "[[cgroup]]\npath = \"app.slice\"\n[[workload]]\ncgroup = \"app.slice\"",
    );
    let with_metric = |m: &str| {
        text.replace(
            "metrics = [\"workloads.mix.ops\"]",
            &format!("metrics = [\"workloads.mix.ops\", \"{m}\"]"),
        )
    };
    // Paths a results.json has: each key level, dotted cgroup paths, optional numbers.
    for ok in [
        "workloads.mix.latency_ns.p99",
        "cgroups.app.slice.memory.current",
        "cgroups.app.slice.memory.stat.pgscan",
        "cgroups.app.slice.memory.pressure.some.avg10",
        "tasks.mix/0.user_ns",
        "tasks.kswapd0.system_ns",
        "workloads.mix.killed_at_ns",
        "reclaim_throttle.VMSCAN_THROTTLE_WRITEBACK.count",
        "zones.DMA32.free",
    ] {
        scenario::parse_str(&with_metric(ok), "small.toml", &[])
            .unwrap_or_else(|e| panic!("{ok}: {e}"));
    }
    // The issue's list: each rejected before anything runs, naming the metric's key
    // and what is there instead.
    for (bad, says) in [
        (
            "workloads.mix.nosuchfield",
            "`workloads.mix` has no `nosuchfield`",
        ),
        (
            "cgroups.nope.memory.current",
            "`cgroups` has no `nope.memory.current`",
        ),
        ("psi.memory.bogus", "`psi.memory` has no `bogus`"),
        ("reclaim.nothing", "`reclaim` has no `nothing`"),
        ("tasks.ghost/0.user_ns", "`tasks` has no `ghost/0.user_ns`"),
        ("psi.memory.some", "is a table, not a number"),
        ("workloads.mix.latency_ns.cdf", "is not a number"),
        ("swap.kind", "is not a number"),
        ("nothing.at.all", "results.json has no `nothing`"),
    ] {
        let e = sweep_error(&with_metric(bad));
        assert!(e.contains("small.toml") || e.contains("sweep.toml"), "{e}");
        assert!(
            e.contains("sweep.metrics[1]") && e.contains(says),
            "{bad}: {e}"
        );
    }
}

#[test]
fn task_metrics_may_exist_in_only_some_points() {
    // Sweeping the thread count: `mix/3` exists only where threads = 4.
    let text = SMALL
        .replace("rate = 100000", "rate = 100000\nthreads = 1")
        .replace(
            "key = \"kernel.vm.swappiness\"\nvalues = [60, 100]",
            "key = \"workload.0.threads\"\nvalues = [1, 4]",
        )
        .replace(
            "metrics = [\"workloads.mix.ops\"]",
            "metrics = [\"tasks.mix/3.user_ns\"]",
        );
    scenario::parse_str(&text, "small.toml", &[]).unwrap();
    let e = sweep_error(&text.replace("mix/3", "mix/4"));
    assert!(e.contains("`tasks` has no `mix/4.user_ns`"), "{e}");
}
