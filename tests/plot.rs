//! `plot`: the charts a run and a sweep get, opened and checked for their series names
//! and axis labels; PNGs are real PNG images.

use std::path::Path;
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_reclaimsim");

const RUN: &str = r#"
[run]
duration = "3s"
sample_interval = "500ms"
[machine]
memory = "256M"
nr_cpus = 2
[machine.swap]
type = "zram"
size = "512M"
[[cgroup]]
path = "svc"
[[workload]]
name = "db"
kind = "anon"
size = "300M"
pattern = "uniform"
rate = 200000
cgroup = "svc"
[[workload]]
name = "scan"
kind = "file-read"
nr_files = 1
file_size = "100M"
io_size = "64K"
pattern = "sequential"
rate = 1000
"#;

/// The text of every <text> element of an SVG file.
fn svg_texts(path: &Path) -> Vec<String> {
    let s = std::fs::read_to_string(path).unwrap();
    s.split("<text")
        .skip(1)
        .map(|t| {
            let body = &t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()];
            body.trim().to_string()
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

fn is_png(path: &Path) -> bool {
    std::fs::read(path).is_ok_and(|b| b.len() > 1000 && b.starts_with(b"\x89PNG\r\n\x1a\n"))
}

#[test]
fn run_charts_have_their_series_and_axes() {
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
    let o = reclaimsim(&["plot".as_ref(), out.as_os_str()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let expect: [(&str, &[&str]); 4] = [
        (
            "memory",
            &[
                "Memory by type and cgroup",
                "time (s)",
                "MiB",
                "free",
                "anon",
                "file",
                "zram pool",
                "cgroup svc",
            ],
        ),
        (
            "reclaim",
            &[
                "Scan and steal rates",
                "time (s)",
                "pages/s",
                "pgscan_kswapd",
                "pgsteal_kswapd",
                "pswpout",
            ],
        ),
        (
            "psi",
            &["Memory pressure (PSI)", "% of time stalled", "some", "full"],
        ),
        (
            "latency",
            &[
                "Latency CDF",
                "latency (us)",
                "fraction of operations",
                "db",
                "scan",
            ],
        ),
    ];
    for (chart, texts) in expect {
        let svg = out.join("plots").join(format!("{chart}.svg"));
        let found = svg_texts(&svg);
        for t in texts {
            assert!(
                found.iter().any(|f| f == t),
                "{chart}: no `{t}` in {found:?}"
            );
        }
        assert!(
            is_png(&out.join("plots").join(format!("{chart}.png"))),
            "{chart}.png"
        );
    }
}

#[test]
fn sweep_charts_have_a_line_per_variant() {
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
    let o = reclaimsim(&["plot".as_ref(), out.as_os_str()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let svg = out.join("plots/sweep-vmstat_pswpout.svg");
    let found = svg_texts(&svg);
    for t in [
        "vmstat.pswpout against kernel.vm.swappiness",
        "kernel.vm.swappiness",
        "vmstat.pswpout",
        "machine.swap.type=zram",
        "machine.swap.type=disk",
    ] {
        assert!(found.iter().any(|f| f == t), "no `{t}` in {found:?}");
    }
    assert!(is_png(&out.join("plots/sweep-vmstat_pswpout.png")));
}

#[test]
fn plot_of_a_directory_without_results_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let o = reclaimsim(&["plot".as_ref(), dir.path().as_os_str()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a run directory"));
}
