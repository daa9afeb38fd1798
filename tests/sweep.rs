//! Sweeps: parallel points, resuming, sweep.csv's shape, and bad definitions.

use reclaimsim::scenario;
use reclaimsim::sweep::run_sweep;

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
    // Two workers: the sweep takes clearly less than its points' time end to end.
    // (Contention from other tests slows both sides alike, so the ratio holds.)
    assert!(
        o.wall_s < 0.8 * o.point_time_s,
        "wall {:.2}s for {:.2}s of points",
        o.wall_s,
        o.point_time_s
    );

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

fn sweep_error(text: &str) -> String {
    scenario::parse_str(text, "sweep.toml", &[])
        .unwrap_err()
        .to_string()
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
        e.contains("sweep.metrics[1]") && e.contains("no workload `nope`"),
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
