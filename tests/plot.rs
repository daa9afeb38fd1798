//! `plot`: charts opened and checked on their SVG text: axis labels with units, tick
//! labels, legend entries, log axes, the CDF's steps; malformed inputs are errors that
//! name the file and line. Fixtures are small hand-written run and sweep directories;
//! two tests run the simulator end to end. PNGs are real PNG images.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_reclaimsim");

#[path = "common/fixtures.rs"]
mod fixtures;
use fixtures::SMALL_RUN as RUN;

// ---------------------------------------------------------------- helpers

/// One <text> element of an SVG.
#[derive(Debug, Clone)]
struct Text {
    x: f64,
    y: f64,
    anchor: String,
    size: f64,
    rotated: bool,
    dy: String,
    text: String,
}

fn attr(tag: &str, name: &str) -> String {
    let key = format!(" {name}=\"");
    tag.find(&key)
        .map(|i| {
            let rest = &tag[i + key.len()..];
            rest[..rest.find('"').unwrap()].to_string()
        })
        .unwrap_or_default()
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

fn texts(svg: &str) -> Vec<Text> {
    svg.split("<text")
        .skip(1)
        .map(|t| {
            let tag = &t[..t.find('>').unwrap()];
            let body = &t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()];
            Text {
                x: attr(tag, "x").parse().unwrap(),
                y: attr(tag, "y").parse().unwrap(),
                anchor: attr(tag, "text-anchor"),
                size: attr(tag, "font-size").parse().unwrap(),
                rotated: tag.contains("rotate("),
                dy: attr(tag, "dy"),
                text: unescape(body.trim()),
            }
        })
        .collect()
}

fn text_strings(svg: &str) -> Vec<String> {
    texts(svg).into_iter().map(|t| t.text).collect()
}

/// Tick labels of the y axis (right-aligned against it).
fn y_ticks(svg: &str) -> Vec<String> {
    texts(svg)
        .into_iter()
        .filter(|t| t.anchor == "end")
        .map(|t| t.text)
        .collect()
}

/// Tick labels of the x axis (centred under it), left to right.
fn x_ticks(svg: &str) -> Vec<Text> {
    let mut v: Vec<Text> = texts(svg)
        .into_iter()
        .filter(|t| t.anchor == "middle" && !t.rotated && t.dy == "0.76em" && t.y > 270.0)
        .collect();
    v.sort_by(|a, b| a.x.total_cmp(&b.x));
    v
}

/// The y axis description (rotated).
fn y_desc(svg: &str) -> String {
    texts(svg).into_iter().find(|t| t.rotated).unwrap().text
}

/// The x axis description (at the bottom edge).
fn x_desc(svg: &str) -> String {
    texts(svg)
        .into_iter()
        .find(|t| t.dy == "-0.5ex")
        .unwrap()
        .text
}

/// Legend lines, top to bottom (its title, if any, first).
fn legend(svg: &str) -> Vec<String> {
    texts(svg)
        .into_iter()
        .filter(|t| t.anchor == "start")
        .map(|t| t.text)
        .collect()
}

/// (stroke colour, stroke width, points) of a polyline.
type Polyline = (String, String, Vec<(f64, f64)>);

fn polylines(svg: &str) -> Vec<Polyline> {
    svg.split("<polyline")
        .skip(1)
        .map(|t| {
            let tag = &t[..t.find("/>").unwrap()];
            let points = attr(tag, "points")
                .split_whitespace()
                .map(|p| {
                    let (x, y) = p.split_once(',').unwrap();
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect();
            (attr(tag, "stroke"), attr(tag, "stroke-width"), points)
        })
        .collect()
}

fn reclaimsim(args: &[&std::ffi::OsStr]) -> std::process::Output {
    Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn plot(dir: &Path) -> std::process::Output {
    reclaimsim(&["plot".as_ref(), dir.as_os_str()])
}

fn plot_ok(dir: &Path) {
    let o = plot(dir);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

fn read_svg(dir: &Path, chart: &str) -> String {
    std::fs::read_to_string(dir.join("plots").join(format!("{chart}.svg"))).unwrap()
}

fn is_png(path: &Path) -> bool {
    std::fs::read(path).is_ok_and(|b| b.len() > 1000 && b.starts_with(b"\x89PNG\r\n\x1a\n"))
}

/// timeseries.csv's columns: the writer's own list, so the fixtures cannot drift.
use reclaimsim::stats::series::COLUMNS;

/// A timeseries.csv of `rows` samples, one a second from 1 s: `cell(column, row)`
/// for each column other than time (0 where it returns None); `extra` columns after.
fn timeseries(rows: usize, extra: &[&str], cell: impl Fn(&str, usize) -> Option<f64>) -> String {
    let header: Vec<&str> = COLUMNS
        .iter()
        .copied()
        .chain(extra.iter().copied())
        .collect();
    let mut s = header.join(",") + "\n";
    for r in 0..rows {
        let cells: Vec<String> = header
            .iter()
            .map(|c| match *c {
                "time_s" => format!("{}", r + 1),
                c => format!("{}", cell(c, r).unwrap_or(0.0)),
            })
            .collect();
        s += &(cells.join(",") + "\n");
    }
    s
}

/// A results.json with these workloads' latency CDFs.
fn results_json(workloads: &[(&str, Vec<(u64, f64)>)]) -> String {
    let psi_line = serde_json::json!({"avg10": 0.0, "avg60": 0.0, "avg300": 0.0, "total": 0});
    let w: serde_json::Map<String, serde_json::Value> = workloads
        .iter()
        .map(|(name, cdf)| {
            let lat = serde_json::json!({
                "mean": 0.0, "stddev": 0.0, "min": 0, "p50": 0, "p90": 0, "p99": 0, "max": 0,
                "cdf": cdf,
            });
            (
                name.to_string(),
                serde_json::json!({"ops": 1, "throughput": 1.0, "bytes_per_sec": 0.0,
                    "latency_ns": lat, "killed_at_ns": null}),
            )
        })
        .collect();
    serde_json::json!({
        "schema_version": 1, "reclaimsim_version": "test", "seed": 1, "duration_ns": 1,
        "vmstat": {}, "workloads": w, "tasks": {},
        "reclaim": {"kswapd_cpu_ns": 0, "direct_reclaim_cpu_ns": 0, "kswapd_wakeups": 0,
            "kswapd_failures": 0},
        "psi": {"memory": {"some": psi_line, "full": psi_line}},
        "swap": {"kind": "none", "total_pages": 0, "used_pages": 0, "orig_data_size": 0,
            "compr_data_size": 0, "mem_used_total": 0},
        "zones": {}, "cgroups": {}, "events": [], "actions": [],
    })
    .to_string()
}

fn run_dir(ts: &str, results: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("timeseries.csv"), ts).unwrap();
    std::fs::write(dir.join("results.json"), results).unwrap();
    (tmp, dir)
}

fn sweep_dir(csv: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("sweep");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("sweep.csv"), csv).unwrap();
    (tmp, dir)
}

fn numbers(labels: &[String]) -> Vec<f64> {
    labels.iter().map(|l| l.parse().unwrap()).collect()
}

fn no_cdf() -> String {
    results_json(&[])
}

// ---------------------------------------------------------------- end to end

#[test]
fn run_charts_of_a_simulated_run() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("s.toml");
    std::fs::write(&scenario, RUN).unwrap();
    let out = dir.path().join("run");
    let o = reclaimsim(&[
        "run".as_ref(),
        scenario.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
        "-q".as_ref(),
    ]);
    assert!(o.status.success());
    plot_ok(&out);
    let expect: [(&str, &[&str]); 4] = [
        (
            "memory",
            &[
                "Memory by type and cgroup",
                "free",
                "anon",
                "file",
                "cgroup svc",
            ],
        ),
        (
            "reclaim",
            &["Scan and steal rates", "pgscan_kswapd", "pswpout"],
        ),
        ("psi", &["Memory pressure (PSI)"]),
        ("latency", &["Latency CDF", "db", "scan"]),
    ];
    for (chart, want) in expect {
        let found = text_strings(&read_svg(&out, chart));
        for t in want {
            // a line that coincides with another says so after its name
            assert!(
                found
                    .iter()
                    .any(|f| f == t || f.starts_with(&format!("{t} ("))),
                "{chart}: no `{t}` in {found:?}"
            );
        }
        assert!(is_png(&out.join("plots").join(format!("{chart}.png"))));
    }
    // 3 s of samples: seconds on the time axis
    assert_eq!(x_desc(&read_svg(&out, "memory")), "time (s)");
}

#[test]
fn sweep_charts_of_a_simulated_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("s.toml");
    let sweep = format!(
        "{RUN}\n[sweep]\nmetrics = [\"vmstat.pswpout\"]\n[[sweep.param]]\nkey = \"kernel.vm.swappiness\"\nvalues = [60, 200]\n[[sweep.param]]\nkey = \"machine.swap.type\"\nvalues = [\"zram\", \"disk\"]\n"
    );
    std::fs::write(&scenario, sweep).unwrap();
    let out = dir.path().join("sweep");
    let o = reclaimsim(&[
        "sweep".as_ref(),
        scenario.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
        "-q".as_ref(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    plot_ok(&out);
    let svg = read_svg(&out, "sweep-vmstat_pswpout");
    let found = text_strings(&svg);
    assert!(found.contains(&"vmstat.pswpout against kernel.vm.swappiness".to_string()));
    assert_eq!(x_desc(&svg), "kernel.vm.swappiness");
    assert_eq!(legend(&svg)[0], "machine.swap.type");
    assert!(legend(&svg)[1].starts_with("zram"), "{:?}", legend(&svg));
    assert!(legend(&svg)[2].starts_with("disk"), "{:?}", legend(&svg));
    let ticks: Vec<String> = x_ticks(&svg).into_iter().map(|t| t.text).collect();
    assert_eq!(ticks, ["60", "200"]);
    assert!(is_png(&out.join("plots/sweep-vmstat_pswpout.png")));
}

// ---------------------------------------------------------------- units

#[test]
fn axes_carry_units_chosen_from_the_data_range() {
    // free peaks at 1 GiB (262144 pages), anon 512 MiB, file 256 MiB: GiB.
    // pgscan_kswapd peaks at 2,000,000 pages/s, pgsteal at 1,500,000: M pages/s.
    let ts = timeseries(4, &[], |c, r| match c {
        "nr_free_pages" => Some(262144.0 - r as f64 * 1000.0),
        "nr_inactive_anon" => Some(131072.0),
        "nr_inactive_file" => Some(65536.0),
        "pgscan_kswapd_per_s" => Some(2e6 - r as f64 * 1e5),
        "pgsteal_kswapd_per_s" => Some(1.5e6),
        _ => None,
    });
    let (_tmp, dir) = run_dir(&ts, &no_cdf());
    plot_ok(&dir);
    let memory = read_svg(&dir, "memory");
    assert_eq!(y_desc(&memory), "memory (GiB)");
    assert_eq!(x_desc(&memory), "time (s)");
    // the tick labels are GiB: the top one is at least the 1 GiB peak, below 2
    let top = numbers(&y_ticks(&memory)).into_iter().fold(0.0, f64::max);
    assert!((1.0..2.0).contains(&top), "{:?}", y_ticks(&memory));
    let reclaim = read_svg(&dir, "reclaim");
    assert_eq!(y_desc(&reclaim), "rate (M pages/s)");
    let top = numbers(&y_ticks(&reclaim)).into_iter().fold(0.0, f64::max);
    assert!((2.0..4.0).contains(&top), "{:?}", y_ticks(&reclaim));
}

#[test]
fn a_short_run_has_milliseconds_on_the_time_axis() {
    let ts = timeseries(5, &[], |c, _| (c == "nr_free_pages").then_some(1000.0))
        .lines()
        .enumerate()
        .map(|(i, l)| match i {
            0 => l.to_string(),
            // time_s 0.1 .. 0.5
            _ => format!("0.{i}{}", &l[l.find(',').unwrap()..]),
        })
        .collect::<Vec<_>>()
        .join("\n");
    let (_tmp, dir) = run_dir(&ts, &no_cdf());
    plot_ok(&dir);
    let svg = read_svg(&dir, "psi");
    assert_eq!(x_desc(&svg), "time (ms)");
    let ticks = numbers(
        &x_ticks(&svg)
            .into_iter()
            .map(|t| t.text)
            .collect::<Vec<_>>(),
    );
    assert!(
        ticks.iter().all(|t| (100.0..=500.0).contains(t)),
        "{ticks:?}"
    );
    assert!(
        ticks.contains(&100.0) && ticks.contains(&500.0),
        "{ticks:?}"
    );
}

#[test]
fn latency_axis_is_log_in_microseconds_when_latencies_are() {
    // 1 µs to 800 µs
    let cdf = vec![(1_000, 0.0), (20_000, 0.5), (800_000, 1.0)];
    let (_tmp, dir) = run_dir(
        &timeseries(2, &[], |_, _| None),
        &results_json(&[("db", cdf)]),
    );
    plot_ok(&dir);
    let svg = read_svg(&dir, "latency");
    assert_eq!(x_desc(&svg), "latency (µs, log scale)");
    let ticks: Vec<String> = x_ticks(&svg).into_iter().map(|t| t.text).collect();
    // decades of µs from 1 to past 800
    let ticks = numbers(&ticks);
    assert_eq!(ticks[0], 1.0, "{ticks:?}");
    assert!(ticks.windows(2).all(|w| w[1] == w[0] * 10.0), "{ticks:?}");
    assert!(*ticks.last().unwrap() * 10.0 > 800.0, "{ticks:?}");
}

// ---------------------------------------------------------------- tick labels fit

/// DejaVu Sans's widest digit is 0.636 em: a bound on a label's width in pixels.
fn max_width_px(t: &Text) -> f64 {
    t.text.chars().count() as f64 * 0.64 * t.size
}

#[test]
fn tick_labels_are_not_clipped() {
    // PSI between 0.0011 and 0.0014 %: long y labels; they must end right of the
    // rotated y description, which starts at x = its own x.
    let ts = timeseries(4, &[], |c, r| match c {
        "psi_some_pct" => Some(0.0011 + r as f64 * 0.0001),
        _ => None,
    });
    let (_tmp, dir) = run_dir(&ts, &no_cdf());
    plot_ok(&dir);
    let svg = read_svg(&dir, "psi");
    let desc = texts(&svg).into_iter().find(|t| t.rotated).unwrap();
    let desc_right = desc.x + desc.size * 1.2;
    let labels: Vec<Text> = texts(&svg)
        .into_iter()
        .filter(|t| t.anchor == "end")
        .collect();
    assert!(
        labels.iter().any(|t| t.text.len() >= 6),
        "long labels expected"
    );
    for t in labels {
        assert!(
            t.x - max_width_px(&t) >= desc_right,
            "`{}` ends at {} but the axis description reaches {desc_right}",
            t.text,
            t.x
        );
    }
    // A wide number at the right end of the x axis stays inside the image.
    let (_tmp2, sweep) =
        sweep_dir("machine.memory_bytes_plain,vmstat.pgscan_kswapd\n1000000000,1\n2000000000,2\n");
    plot_ok(&sweep);
    let svg = read_svg(&sweep, "sweep-vmstat_pgscan_kswapd");
    let last = x_ticks(&svg).pop().unwrap();
    assert_eq!(last.text, "2000000000");
    assert!(last.x + max_width_px(&last) / 2.0 <= 960.0, "{last:?}");
    let ticks = x_ticks(&svg);
    let first = &ticks[0];
    assert!(first.x - max_width_px(first) / 2.0 >= 0.0, "{first:?}");
}

// ---------------------------------------------------------------- sweep keys

#[test]
fn integer_sweep_keys_have_ticks_at_their_values() {
    let (_tmp, dir) =
        sweep_dir("kernel.vm.swappiness,vmstat.pgscan_kswapd\n0,5\n60,7\n100,9\n200,4\n");
    plot_ok(&dir);
    let svg = read_svg(&dir, "sweep-vmstat_pgscan_kswapd");
    let ticks: Vec<String> = x_ticks(&svg).into_iter().map(|t| t.text).collect();
    assert_eq!(ticks, ["0", "60", "100", "200"]);
    // 1, 2, 3: no half ticks between them
    let (_tmp, dir) = sweep_dir("workers,vmstat.pgscan_kswapd\n1,5\n2,7\n3,9\n");
    plot_ok(&dir);
    let svg = read_svg(&dir, "sweep-vmstat_pgscan_kswapd");
    let ticks: Vec<String> = x_ticks(&svg).into_iter().map(|t| t.text).collect();
    assert_eq!(ticks, ["1", "2", "3"]);
}

#[test]
fn many_integer_values_get_whole_number_ticks() {
    // 40 values 1..=40: too many to label each; round ticks, all whole numbers
    let rows: String = (1..=40).map(|i| format!("{i},{}\n", i * 3)).collect();
    let (_tmp, dir) = sweep_dir(&format!("workers,vmstat.pgscan_kswapd\n{rows}"));
    plot_ok(&dir);
    let svg = read_svg(&dir, "sweep-vmstat_pgscan_kswapd");
    let ticks: Vec<String> = x_ticks(&svg).into_iter().map(|t| t.text).collect();
    assert!(ticks.len() >= 3 && ticks.len() < 40, "{ticks:?}");
    assert!(ticks.iter().all(|t| t.parse::<i64>().is_ok()), "{ticks:?}");
}

#[test]
fn size_sweep_keys_are_drawn_in_bytes_units() {
    let (_tmp, dir) = sweep_dir(
        "cgroup.0.memory.low,cgroups.workload.memory.current\n553M,104857600\n316M,209715200\n0,314572800\n",
    );
    plot_ok(&dir);
    let svg = read_svg(&dir, "sweep-cgroups_workload_memory_current");
    assert_eq!(x_desc(&svg), "cgroup.0.memory.low (MiB)");
    let ticks: Vec<String> = x_ticks(&svg).into_iter().map(|t| t.text).collect();
    assert_eq!(ticks, ["0", "316", "553"]);
    // memory.current is bytes: 100..300 MiB
    assert_eq!(y_desc(&svg), "cgroups.workload.memory.current (MiB)");
}

#[test]
fn categorical_sweep_keys_are_labelled_by_value_in_sweep_order() {
    // an array value and a string with a comma: quoted cells
    let csv = "workload.0.sizes,kernel.memcg_protection,vmstat.pgscan_kswapd\n\
               \"[256, 32]\",proportional,10\n\
               \"[256, 32]\",\"a,b\",20\n\
               \"[128, 16]\",proportional,30\n\
               \"[128, 16]\",\"a,b\",40\n";
    let (_tmp, dir) = sweep_dir(csv);
    plot_ok(&dir);
    let svg = read_svg(&dir, "sweep-vmstat_pgscan_kswapd");
    let ticks: Vec<String> = x_ticks(&svg).into_iter().map(|t| t.text).collect();
    assert_eq!(ticks, ["[256, 32]", "[128, 16]"]);
    assert_eq!(x_desc(&svg), "workload.0.sizes");
    assert_eq!(
        legend(&svg),
        ["kernel.memcg_protection", "proportional", "a,b"]
    );
    // Categories have no order or distance to draw a line along: a marker per point
    // (two lines of two), none joined, each line's beside the other's at a value.
    assert!(data_lines(&svg).is_empty(), "{:?}", data_lines(&svg));
    let circles: Vec<&str> = svg.split("<circle").skip(1).collect();
    assert_eq!(circles.len(), 4, "{svg}");
    let cx = |c: &str| -> f64 {
        let v = c.split("cx=\"").nth(1).unwrap();
        v[..v.find('"').unwrap()].parse().unwrap()
    };
    let mut xs: Vec<f64> = circles.iter().map(|c| cx(c)).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    assert_eq!(xs.len(), 4, "side by side: {xs:?}");
    // a string key: categories too
    let (_tmp, dir) =
        sweep_dir("kernel.memcg_protection,vmstat.pgscan_kswapd\ncliff,3\nproportional,5\n");
    plot_ok(&dir);
    let svg = read_svg(&dir, "sweep-vmstat_pgscan_kswapd");
    let ticks: Vec<String> = x_ticks(&svg).into_iter().map(|t| t.text).collect();
    assert_eq!(ticks, ["cliff", "proportional"]);
    // names too long to sit side by side: still each value, once, in order, in rows
    // below the axis, and no empty labels left behind
    let names = [
        "proportional-scaling-of-protection",
        "cliff-at-the-low-boundary",
        "seed-by-reclaim-priority",
        "none-at-all-of-these",
        "another-long-category-name",
        "and-one-more-long-name",
    ];
    let rows: String = names.iter().map(|n| format!("{n},1\n")).collect();
    let (_tmp, dir) = sweep_dir(&format!("kernel.mode,vmstat.pgscan_kswapd\n{rows}"));
    plot_ok(&dir);
    let svg = read_svg(&dir, "sweep-vmstat_pgscan_kswapd");
    let ticks = x_ticks(&svg);
    assert_eq!(
        ticks.iter().map(|t| t.text.as_str()).collect::<Vec<_>>(),
        names
    );
    let rows: std::collections::BTreeSet<i64> = ticks.iter().map(|t| t.y as i64).collect();
    assert!(rows.len() > 1, "staggered over rows: {ticks:?}");
    assert!(texts(&svg).iter().all(|t| !t.text.is_empty()));
}

// ---------------------------------------------------------------- legends

/// Each legend entry's swatch colour, in legend order (entries without a swatch, the
/// title, are skipped).
fn legend_colours(svg: &str) -> Vec<(String, String)> {
    let swatches: Vec<(String, f64)> = polylines(svg)
        .into_iter()
        .filter(|(_, w, _)| w == "3")
        .map(|(c, _, p)| (c, p[0].1))
        .collect();
    texts(svg)
        .into_iter()
        .filter(|t| t.anchor == "start")
        .filter_map(|t| {
            swatches
                .iter()
                .find(|(_, y)| (*y - t.y).abs() < 1.0)
                .map(|(c, _)| (t.text.clone(), c.clone()))
        })
        .collect()
}

#[test]
fn many_cgroups_show_the_largest_and_other_summed() {
    // 12 cgroups of 1..=12 x 1000 pages; the 5 largest are named, 7 summed into "other"
    let names: Vec<String> = (1..=12).map(|i| format!("memory.current:cg{i}")).collect();
    let extra: Vec<&str> = names.iter().map(String::as_str).collect();
    let ts = timeseries(3, &extra, |c, _| {
        if let Some(i) = c.strip_prefix("memory.current:cg") {
            return Some(i.parse::<f64>().unwrap() * 1000.0);
        }
        (c == "nr_free_pages").then_some(20000.0)
    });
    let (_tmp, dir) = run_dir(&ts, &no_cdf());
    plot_ok(&dir);
    let svg = read_svg(&dir, "memory");
    let entries = legend(&svg);
    for i in 8..=12 {
        assert!(entries.contains(&format!("cgroup cg{i}")), "{entries:?}");
    }
    for i in 1..=7 {
        assert!(!entries.contains(&format!("cgroup cg{i}")), "{entries:?}");
    }
    assert!(
        entries.contains(&"other (7 cgroups)".to_string()),
        "{entries:?}"
    );
    // colour <-> name: each entry's colour draws exactly one line (not counting the
    // swatches, 3 px wide), at the entry's height: "other" at 1+..+7 = 28000 pages.
    let lines = polylines(&svg);
    let colours = legend_colours(&svg);
    let y_of = |colour: &str| -> f64 {
        let mut ys: Vec<f64> = lines
            .iter()
            .filter(|(c, w, _)| c == colour && w != "3")
            .map(|(_, _, p)| p[0].1)
            .collect();
        assert_eq!(ys.len(), 1, "one line of colour {colour}");
        ys.pop().unwrap()
    };
    let y = |name: &str| y_of(&colours.iter().find(|(n, _)| n == name).unwrap().1);
    let mut distinct: Vec<&String> = colours.iter().map(|(_, c)| c).collect();
    distinct.sort();
    distinct.dedup();
    assert_eq!(
        distinct.len(),
        colours.len(),
        "a colour per entry: {colours:?}"
    );
    // pixel y grows downwards: other (28000) above free (20000) above cg12 above cg8
    assert!(y("other (7 cgroups)") < y("free"));
    assert!(y("free") < y("cgroup cg12"));
    assert!(y("cgroup cg12") < y("cgroup cg8"));
    // the summed line's height against cg12's, both from the zero line: 28/12
    let zero = y("anon (all 0)");
    let ratio = (zero - y("other (7 cgroups)")) / (zero - y("cgroup cg12"));
    assert!((ratio - 28.0 / 12.0).abs() < 0.05, "{ratio}");
}

#[test]
fn many_sweep_lines_show_eight_and_other() {
    // 12 values of the second key; line k peaks at k
    let mut csv = String::from("workers,kernel.vm.swappiness,vmstat.pgscan_kswapd\n");
    for w in [1, 2] {
        for k in 1..=12 {
            csv += &format!("{w},{},{}\n", k * 10, k * 100 + w);
        }
    }
    let (_tmp, dir) = sweep_dir(&csv);
    plot_ok(&dir);
    let svg = read_svg(&dir, "sweep-vmstat_pgscan_kswapd");
    let entries = legend(&svg);
    let expect: Vec<String> = std::iter::once("kernel.vm.swappiness".to_string())
        .chain((5..=12).map(|k| format!("{}", k * 10)))
        .chain(std::iter::once("other (4 lines)".to_string()))
        .collect();
    assert_eq!(entries, expect);
}

#[test]
fn coinciding_lines_say_so() {
    let csv = "workers,kernel.memcg_protection,vmstat.pgscan_kswapd\n\
               1,cliff,5\n1,proportional,5\n2,cliff,8\n2,proportional,8\n";
    let (_tmp, dir) = sweep_dir(csv);
    plot_ok(&dir);
    let svg = read_svg(&dir, "sweep-vmstat_pgscan_kswapd");
    assert_eq!(
        legend(&svg),
        ["kernel.memcg_protection", "cliff", "proportional (= cliff)"]
    );
}

// ---------------------------------------------------------------- log axes

#[test]
fn series_orders_of_magnitude_apart_get_a_log_axis() {
    // pgscan peaks at 1,000,000 pages/s, pswpin at 100: 10^4 apart
    let ts = timeseries(4, &[], |c, r| match c {
        "pgscan_kswapd_per_s" => Some(1e6 - r as f64),
        "pswpin_per_s" => Some(100.0),
        _ => None,
    });
    let (_tmp, dir) = run_dir(&ts, &no_cdf());
    plot_ok(&dir);
    let svg = read_svg(&dir, "reclaim");
    assert!(y_desc(&svg).ends_with("log scale)"), "{}", y_desc(&svg));
    // decade ticks: each is ten times the one below
    let ticks = numbers(&y_ticks(&svg));
    assert!(ticks.len() >= 4, "{ticks:?}");
    let mut sorted = ticks.clone();
    sorted.sort_by(f64::total_cmp);
    for w in sorted.windows(2) {
        assert!((w[1] / w[0] - 10.0).abs() < 1e-6, "{ticks:?}");
    }
    // 50 apart: linear
    let ts = timeseries(4, &[], |c, _| match c {
        "pgscan_kswapd_per_s" => Some(5000.0),
        "pswpin_per_s" => Some(100.0),
        _ => None,
    });
    let (_tmp, dir) = run_dir(&ts, &no_cdf());
    plot_ok(&dir);
    let svg = read_svg(&dir, "reclaim");
    assert_eq!(y_desc(&svg), "rate (k pages/s)");
}

// ---------------------------------------------------------------- CDF and PSI

#[test]
fn latency_cdf_is_drawn_as_steps() {
    let cdf = vec![(1_000, 0.0), (2_000, 0.5), (2_000, 0.9), (8_000, 1.0)];
    let (_tmp, dir) = run_dir(
        &timeseries(2, &[], |_, _| None),
        &results_json(&[("db", cdf)]),
    );
    plot_ok(&dir);
    let svg = read_svg(&dir, "latency");
    let line = polylines(&svg)
        .into_iter()
        .find(|(c, w, _)| c != "#000000" && w == "2")
        .unwrap()
        .2;
    // a step per quantile after the first: 4 quantiles, 7 points
    assert_eq!(line.len(), 7, "{line:?}");
    for w in line.windows(2) {
        assert!(
            w[0].0 == w[1].0 || w[0].1 == w[1].1,
            "{:?} -> {:?} is not a step",
            w[0],
            w[1]
        );
    }
    // horizontal, then vertical: x never decreases, y (pixels) never increases
    assert!(line
        .windows(2)
        .all(|w| w[1].0 >= w[0].0 && w[1].1 <= w[0].1));
}

#[test]
fn psi_says_when_some_and_full_coincide() {
    let same = timeseries(3, &[], |c, r| match c {
        "psi_some_pct" | "psi_full_pct" => Some(r as f64 * 2.0),
        _ => None,
    });
    let (_tmp, dir) = run_dir(&same, &no_cdf());
    plot_ok(&dir);
    assert_eq!(legend(&read_svg(&dir, "psi")), ["some = full"]);
    let apart = timeseries(3, &[], |c, r| match c {
        "psi_some_pct" => Some(r as f64 * 2.0),
        "psi_full_pct" => Some(r as f64),
        _ => None,
    });
    let (_tmp, dir) = run_dir(&apart, &no_cdf());
    plot_ok(&dir);
    assert_eq!(legend(&read_svg(&dir, "psi")), ["some", "full"]);
}

// ---------------------------------------------------------------- bad input

fn plot_error(dir: &Path) -> String {
    let o = plot(dir);
    let stderr = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

#[test]
fn malformed_timeseries_is_an_error_naming_file_line_and_column() {
    let good = timeseries(3, &[], |_, _| None);
    let lines: Vec<&str> = good.lines().collect();
    // a missing column
    let header_without_full = lines[0].replace(",psi_full_pct", "");
    let rows: Vec<String> = lines[1..]
        .iter()
        .map(|l| l[..l.rfind(',').unwrap()].to_string())
        .collect();
    let missing = format!("{header_without_full}\n{}\n", rows.join("\n"));
    let (_tmp, dir) = run_dir(&missing, &no_cdf());
    let e = plot_error(&dir);
    assert!(e.contains("timeseries.csv:1:"), "{e}");
    assert!(e.contains("missing column `psi_full_pct`"), "{e}");
    // a row with a field too few, on line 3
    let short = format!("{}\n{}\n{}\n", lines[0], lines[1], rows[1]);
    let (_tmp, dir) = run_dir(&short, &no_cdf());
    let e = plot_error(&dir);
    assert!(e.contains("timeseries.csv:3:"), "{e}");
    assert!(e.contains("21 fields, but the header has 22"), "{e}");
    // a cell that is not a number, line 4, column nr_free_pages
    let bad = good.replacen("\n3,0,", "\n3,abc,", 1);
    let (_tmp, dir) = run_dir(&bad, &no_cdf());
    let e = plot_error(&dir);
    assert!(e.contains("timeseries.csv:4:"), "{e}");
    assert!(
        e.contains("column `nr_free_pages`: `abc` is not a number"),
        "{e}"
    );
    // empty, and not UTF-8
    let (_tmp, dir) = run_dir("", &no_cdf());
    assert!(plot_error(&dir).contains("timeseries.csv:1:"));
    let (_tmp, dir) = run_dir(&good, &no_cdf());
    let mut bytes = good.clone().into_bytes();
    bytes.extend_from_slice(b"4,\xff\xfe\n");
    std::fs::write(dir.join("timeseries.csv"), bytes).unwrap();
    assert!(plot_error(&dir).contains("timeseries.csv:5:"));
}

#[test]
fn malformed_sweep_csv_is_an_error_naming_file_line_and_column() {
    let (_tmp, dir) = sweep_dir("workers,vmstat.pgscan_kswapd\n1,5\n2,lots\n");
    let e = plot_error(&dir);
    assert!(e.contains("sweep.csv:3:"), "{e}");
    assert!(
        e.contains("column `vmstat.pgscan_kswapd`: `lots` is not a number"),
        "{e}"
    );
    let (_tmp, dir) = sweep_dir("workers,vmstat.pgscan_kswapd\n1,5\n2,6,7\n");
    let e = plot_error(&dir);
    assert!(
        e.contains("sweep.csv:3:") && e.contains("3 fields, but the header has 2"),
        "{e}"
    );
    let (_tmp, dir) = sweep_dir("vmstat.pgscan_kswapd\n5\n");
    assert!(plot_error(&dir).contains("sweep.csv:1: no swept key"));
    let (_tmp, dir) = sweep_dir("workers,threads\n1,2\n");
    assert!(plot_error(&dir).contains("sweep.csv:1: no metric column"));
    // a missing metric (empty cell) is left out, not an error
    let (_tmp, dir) = sweep_dir("workers,vmstat.pgscan_kswapd\n1,5\n2,\n");
    plot_ok(&dir);
}

#[test]
fn odd_names_in_files_are_drawn_not_fatal() {
    // control characters and markup in a cgroup name and a workload name
    let ts = timeseries(2, &["memory.current:a\u{1}<b>"], |_, _| Some(1.0));
    let cdf = vec![(1_000, 0.0), (2_000, 1.0)];
    let (_tmp, dir) = run_dir(&ts, &results_json(&[("w\u{7}&x", cdf)]));
    plot_ok(&dir);
    let entries = legend(&read_svg(&dir, "memory"));
    assert!(
        entries.iter().any(|e| e.starts_with("cgroup a\\u{1}<b>")),
        "{entries:?}"
    );
    assert_eq!(legend(&read_svg(&dir, "latency")), ["w\\u{7}&x"]);
    assert!(is_png(&dir.join("plots/memory.png")));
    assert!(is_png(&dir.join("plots/latency.png")));
    // a metric whose path would not make a file name
    let (_tmp, dir) = sweep_dir("k\u{2},cgroups.a/../b\u{1}.memory.current\nx\u{3},1\ny,2\n");
    plot_ok(&dir);
    let files: Vec<String> = std::fs::read_dir(dir.join("plots"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    assert!(
        files.contains(&"sweep-cgroups_a____b__memory_current.svg".to_string()),
        "{files:?}"
    );
}

#[test]
fn plot_of_a_directory_without_results_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let o = reclaimsim(&["plot".as_ref(), dir.path().as_os_str()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a run directory"));
}

// ---------------------------------------------------------------- miss ratio curves

/// A `reclaimsim cache --json` file with two policies at three sizes.
fn cache_json(sizes: [u64; 3], unit: &str) -> String {
    let ratios = [("lru", [0.9, 0.6, 0.3]), ("s3fifo", [0.8, 0.5, 0.2])];
    let results: Vec<serde_json::Value> = ratios
        .iter()
        .flat_map(|(policy, r)| {
            sizes.iter().zip(r).map(move |(size, ratio)| {
                serde_json::json!({"policy": policy, "cache_size": size, "requests": 10,
                    "misses": (ratio * 10.0) as u64, "request_bytes": 10, "miss_bytes": 0,
                    "miss_ratio": ratio, "byte_miss_ratio": 0.0})
            })
        })
        .collect();
    serde_json::json!({"trace": "/traces/w.oracleGeneral", "ignore_obj_size": false,
        "size_unit": unit, "working_set": null, "policies": ["lru", "s3fifo"],
        "results": results})
    .to_string()
}

fn mrc_file(text: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("w.json");
    std::fs::write(&file, text).unwrap();
    (tmp, file)
}

/// The data lines of a chart: its polylines 2 px wide (axes are 1 px, swatches 3).
fn data_lines(svg: &str) -> Vec<Polyline> {
    polylines(svg)
        .into_iter()
        .filter(|(_, w, _)| w == "2")
        .collect()
}

#[test]
fn a_cache_json_is_drawn_as_a_miss_ratio_curve() {
    let (tmp, file) = mrc_file(&cache_json([1 << 20, 2 << 20, 4 << 20], "bytes"));
    let o = plot(&file);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let svg = std::fs::read_to_string(tmp.path().join("plots/w-mrc.svg")).unwrap();
    assert!(is_png(&tmp.path().join("plots/w-mrc.png")));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("plots/w-mrc.svg"), "{stdout}");
    assert!(text_strings(&svg).contains(&"Miss ratio curve: w.oracleGeneral".to_string()));
    // A line with its three points per policy, each in its legend entry's colour.
    let lines = data_lines(&svg);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines.iter().all(|l| l.2.len() == 3));
    let entries = legend_colours(&svg);
    assert_eq!(
        entries,
        [
            ("lru".to_string(), lines[0].0.clone()),
            ("s3fifo".to_string(), lines[1].0.clone())
        ]
    );
    assert_eq!(legend(&svg), ["policy", "lru", "s3fifo"]);
    // Markers at each point.
    assert!(svg.matches("<circle").count() >= 6);
    // y: the miss ratio from 0 to 1; x: sizes 4x apart, linear, in MiB at the sizes.
    assert_eq!(y_desc(&svg), "miss ratio");
    let y = numbers(&y_ticks(&svg));
    assert_eq!((y[0], y[y.len() - 1]), (0.0, 1.0), "{y:?}");
    assert_eq!(x_desc(&svg), "cache size (MiB)");
    let ticks: Vec<String> = x_ticks(&svg).into_iter().map(|t| t.text).collect();
    assert_eq!(ticks, ["1", "2", "4"]);
    // The lower line is s3fifo's (SVG y grows downwards).
    let mean_y = |l: &Polyline| l.2.iter().map(|p| p.1).sum::<f64>() / 3.0;
    assert!(mean_y(&lines[1]) > mean_y(&lines[0]));
}

#[test]
fn cache_sizes_100x_apart_get_a_log_axis_ticked_in_binary_units() {
    let (tmp, file) = mrc_file(&cache_json([4 << 10, 1 << 20, 1 << 30], "bytes"));
    plot_ok(&file);
    let svg = std::fs::read_to_string(tmp.path().join("plots/w-mrc.svg")).unwrap();
    assert_eq!(x_desc(&svg), "cache size (log scale)");
    let ticks: Vec<String> = x_ticks(&svg).into_iter().map(|t| t.text).collect();
    for t in ["4 KiB", "1 MiB", "1 GiB"] {
        assert!(ticks.contains(&t.to_string()), "{t} in {ticks:?}");
    }
    // Equal factors, equal distances: 4 KiB to 1 MiB is 8 doublings, 1 MiB to 1 GiB 10.
    let line = &data_lines(&svg)[0].2;
    let (a, b) = (line[1].0 - line[0].0, line[2].0 - line[1].0);
    assert!((b / a - 10.0 / 8.0).abs() < 0.02, "{line:?}");
    // Objects: counted, not bytes.
    let (tmp, file) = mrc_file(&cache_json([10, 20, 40], "objects"));
    plot_ok(&file);
    let svg = std::fs::read_to_string(tmp.path().join("plots/w-mrc.svg")).unwrap();
    assert_eq!(x_desc(&svg), "cache size (objects)");
    let ticks: Vec<String> = x_ticks(&svg).into_iter().map(|t| t.text).collect();
    assert_eq!(ticks, ["10", "20", "40"]);
}

#[test]
fn a_malformed_cache_json_is_an_error_naming_the_file() {
    let (_tmp, file) = mrc_file("{\"trace\": \"t\", \"results\": [");
    let e = plot_error(&file);
    assert!(e.contains("w.json: not JSON"), "{e}");
    assert!(e.contains("line 1"), "{e}");
    let (_tmp, file) = mrc_file("{\"schema_version\": 1}");
    let e = plot_error(&file);
    assert!(
        e.contains("w.json: not a `reclaimsim cache --json` file"),
        "{e}"
    );
    let bad = cache_json([1, 2, 3], "objects").replacen(
        "\"miss_ratio\":0.9",
        "\"miss_ratio\":\"high\"",
        1,
    );
    assert!(bad.contains("\"high\""), "{bad}");
    let (_tmp, file) = mrc_file(&bad);
    let e = plot_error(&file);
    assert!(
        e.contains("w.json: results[0].miss_ratio: invalid type"),
        "{e}"
    );
}

/// `cache --json --output` then `plot`: the curve of a run, end to end.
#[test]
fn plot_draws_what_cache_wrote() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = tmp.path().join("t.txt");
    std::fs::write(&trace, "1\n2\n3\n4\n1\n2\n5\n1\n2\n3\n4\n5\n").unwrap();
    let json = tmp.path().join("mrc.json");
    let o = reclaimsim(&[
        "cache".as_ref(),
        trace.as_os_str(),
        "--policy".as_ref(),
        "lru,fifo,arc".as_ref(),
        "--size".as_ref(),
        "1,2,3,4,5".as_ref(),
        "--json".as_ref(),
        "--output".as_ref(),
        json.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.stdout.is_empty());
    plot_ok(&json);
    let svg = std::fs::read_to_string(tmp.path().join("plots/mrc-mrc.svg")).unwrap();
    assert_eq!(legend(&svg)[1..], ["lru", "fifo", "arc"]);
    assert!(text_strings(&svg).contains(&"Miss ratio curve: t.txt".to_string()));
}
