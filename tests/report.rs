//! `reclaimsim report`: one self-contained HTML page of two runs (one recorded with
//! --damon-record) and a sweep, checked on its text and then in a real browser.
//!
//! The browser check loads the page in headless Chromium inside 400 px and 1600 px
//! frames, with a collector of console errors installed before the page's own script,
//! and reads back what the browser rendered: every chart's box and drawn marks, its
//! legend's names, every table's rows (the expected counts worked out here from the
//! inputs' results.json and sweep.json, not from the page), a header click's sort, and
//! whether the page fits 400 px without scrolling sideways. It keeps screenshots under
//! target/tmp/report-artifacts/. Without Chromium it says so and skips that part
//! (`.ci/run` installs Debian's chromium package).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_reclaimsim");

#[path = "common/fixtures.rs"]
mod fixtures;

/// The small run, 4 s instead of 3 and watched by a kdamond (for --damon-record).
fn run_text() -> String {
    let damon = r#"
[[damon.kdamonds]]
state = "on"
[[damon.kdamonds.contexts]]
operations = "vaddr"
[[damon.kdamonds.contexts.targets]]
pid_target = "db"
[[damon.kdamonds.contexts.schemes]]
action = "stat"
"#;
    format!(
        "{}{damon}",
        fixtures::SMALL_RUN.replace("duration = \"3s\"", "duration = \"4s\"")
    )
}

const SWEEP: &str = r#"
[sweep]
metrics = ["vmstat.pgscan_kswapd", "workloads.db.throughput"]
[[sweep.param]]
key = "kernel.lru"
values = ["classic", "mglru"]
[[sweep.param]]
key = "workload.0.rate"
values = [100000, 200000]
"#;

fn reclaimsim(args: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .args(args)
        .output()
        .expect("run reclaimsim")
}

fn ok(args: &[&str]) {
    let out = reclaimsim(args);
    assert!(
        out.status.success(),
        "reclaimsim {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Two runs and a sweep under `root`: a (DAMON recorded), b (another seed), sw.
fn inputs(root: &Path) -> [PathBuf; 3] {
    let _ = std::fs::remove_dir_all(root);
    std::fs::create_dir_all(root).unwrap();
    let run = root.join("run.toml");
    std::fs::write(&run, run_text()).unwrap();
    let sweep = root.join("sweep.toml");
    std::fs::write(&sweep, format!("{}{SWEEP}", run_text())).unwrap();
    let [a, b, sw] = ["a", "b", "sw"].map(|d| root.join(d));
    let s = |p: &Path| p.to_str().unwrap().to_string();
    ok(&["run", &s(&run), "-q", "--damon-record", "--out", &s(&a)]);
    ok(&["run", &s(&run), "-q", "--seed", "7", "--out", &s(&b)]);
    ok(&["sweep", &s(&sweep), "-q", "--out", &s(&sw)]);
    [a, b, sw]
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn nonzero_vmstat(run: &Path) -> usize {
    json(&run.join("results.json"))["vmstat"]
        .as_object()
        .unwrap()
        .values()
        .filter(|v| v.as_u64() != Some(0))
        .count()
}

#[test]
fn report_is_self_contained_deterministic_and_renders_in_a_browser() {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("report-test");
    let [a, b, sw] = inputs(&root);
    let page_path = root.join("report.html");
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let args = |out: &Path| {
        vec![
            "report".to_string(),
            s(&a),
            s(&b),
            s(&sw),
            "--out".into(),
            s(out),
        ]
    };
    let argv = args(&page_path);
    ok(&argv.iter().map(String::as_str).collect::<Vec<_>>());
    let page = std::fs::read_to_string(&page_path).unwrap();

    // Self-contained: nothing fetched from anywhere.
    for needle in ["src=", "href=\"http", "url(", "@import", "<link", "<img"] {
        assert!(
            !page.contains(needle),
            "the page refers outside itself: {needle}"
        );
    }
    assert!(page.starts_with("<!DOCTYPE html>"));
    // What was run: both scenarios' text, the seeds, the swept keys.
    assert!(
        page.contains("pid_target = &quot;db&quot;"),
        "scenario text"
    );
    assert!(page.contains("<dt>Seed</dt><dd>7</dd>"));
    assert!(page.contains("<code>kernel.lru</code>, <code>workload.0.rate</code>"));

    // Deterministic: the same inputs give the same bytes.
    let again = root.join("again.html");
    let argv = args(&again);
    ok(&argv.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(std::fs::read(&again).unwrap(), page.as_bytes());

    // Four charts per run, the DAMON-recorded run's working-set size and its heatmaps,
    // and a sweep chart per metric.
    let heatmaps = page.matches("class=\"chart heatmap\"").count();
    assert!(heatmaps >= 1, "the recorded run has a heatmap");
    let figures = page.matches("<figure class=\"chart").count();
    assert_eq!(figures, 4 + 1 + heatmaps + 4 + 2);
    assert_eq!(page.matches("<svg").count(), figures);

    browser_check(&root, &page_path, &page, [&a, &b, &sw]);
}

#[test]
fn bad_inputs_name_the_path_and_write_nothing() {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("report-bad");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("empty")).unwrap();
    std::fs::create_dir_all(root.join("broken")).unwrap();
    std::fs::write(root.join("broken/results.json"), "{\"seed\": 1}").unwrap();
    let out = root.join("r.html");
    // A directory with nothing to report, and a results.json that is not one: each
    // message names the path.
    for (dir, named) in [
        ("empty", "empty: not a run directory"),
        ("broken", "broken/results.json"),
    ] {
        let o = reclaimsim(&[
            "report",
            root.join(dir).to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(2), "{dir}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(named), "the message names the path: {err}");
        assert!(!out.exists(), "no page is written");
    }
}

/// An interrupted sweep leaves points without results.json (and no sweep.csv):
/// `report`, `compare --by` and `plot` each say the sweep is unfinished, name a
/// missing point and how to finish it, exit 2 and write nothing.
#[test]
fn an_unfinished_sweep_is_named_not_read() {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("report-unfinished");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let sweep = root.join("sweep.toml");
    let text = fixtures::SMALL_RUN.replace("duration = \"3s\"", "duration = \"500ms\"");
    let params = "[sweep]\nmetrics = [\"vmstat.pgscan_kswapd\"]\n\
                  [[sweep.param]]\nkey = \"kernel.lru\"\nvalues = [\"classic\", \"mglru\"]\n\
                  [[sweep.param]]\nkey = \"run.seed\"\nvalues = [1, 2]\n";
    std::fs::write(&sweep, format!("{text}{params}")).unwrap();
    let sw = root.join("sw");
    let s = |p: &Path| p.to_str().unwrap().to_string();
    ok(&["sweep", &s(&sweep), "-q", "--out", &s(&sw)]);
    // What an interrupt leaves: a point that never ran, one stopped part-way (its
    // directory empty), and no table of the whole.
    let points = json(&sw.join("sweep.json"))["points"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(points.len(), 4);
    let dir_of = |i: usize| sw.join(points[i]["dir"].as_str().unwrap());
    std::fs::remove_dir_all(dir_of(1)).unwrap();
    for f in std::fs::read_dir(dir_of(2)).unwrap() {
        std::fs::remove_file(f.unwrap().path()).unwrap();
    }
    std::fs::remove_file(sw.join("sweep.csv")).unwrap();
    let page = root.join("r.html");
    let missing = dir_of(1).file_name().unwrap().to_str().unwrap().to_string();
    for args in [
        vec!["report".to_string(), s(&sw), "--out".into(), s(&page)],
        vec!["compare".into(), s(&sw), "--by".into(), "kernel.lru".into()],
        vec!["plot".into(), s(&sw)],
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = reclaimsim(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        for said in [
            "sweep is unfinished: 2 of 4 points",
            missing.as_str(),
            "reclaimsim sweep` again",
        ] {
            assert!(err.contains(said), "{args:?} says {said:?}: {err}");
        }
        assert!(
            err.contains(&s(&sw)),
            "the message names the directory: {err}"
        );
    }
    assert!(!page.exists(), "no page is written");
    assert!(!sw.join("plots").exists(), "no charts are drawn");
}

fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("RECLAIMSIM_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser", "google-chrome"] {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

/// Headless Chromium with its network and background services off (the machine has
/// no network), and a fresh profile.
fn headless(chrome: &Path, profile: &Path, extra: &[&str]) -> std::process::Output {
    let _ = std::fs::remove_dir_all(profile);
    let mut args = vec![
        "--headless".to_string(),
        "--no-sandbox".into(),
        "--disable-gpu".into(),
        "--disable-quic".into(),
        "--no-first-run".into(),
        "--disable-background-networking".into(),
        "--disable-component-update".into(),
        "--disable-sync".into(),
        "--hide-scrollbars".into(),
        "--enable-logging=stderr".into(),
        "--v=0".into(),
        format!("--user-data-dir={}", profile.display()),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    Command::new("timeout")
        .arg("120")
        .arg(chrome)
        .args(&args)
        .output()
        .expect("run chromium")
}

/// Runs in the harness page once both frames have loaded: what each rendered.
const CHECK: &str = r#"
function inspect(id) {
  var w = document.getElementById(id).contentWindow, d = w.document;
  var charts = Array.prototype.map.call(d.querySelectorAll("figure.chart"), function (f) {
    var svg = f.querySelector("svg"), box = svg.getBoundingClientRect(), marks = 0;
    svg.querySelectorAll("polyline, path").forEach(function (e) {
      if (e.getTotalLength() > 0) marks++;
    });
    svg.querySelectorAll("circle").forEach(function (e) { if (e.r.baseVal.value > 0) marks++; });
    var cells = 0;
    svg.querySelectorAll("rect").forEach(function (e) {
      var b = e.getBBox(); if (b.width > 0 && b.height > 0) cells++;
    });
    var text = svg.textContent;
    var names = (f.getAttribute("data-names") || "").split("\u001f").filter(Boolean);
    return {
      heatmap: f.classList.contains("heatmap"),
      series: parseInt(f.getAttribute("data-series"), 10),
      width: box.width, height: box.height, marks: marks, cells: cells,
      missing: names.filter(function (n) { return text.indexOf(n) < 0; })
    };
  });
  var tables = Array.prototype.map.call(d.querySelectorAll("table"), function (t) {
    var rows = 0;
    t.querySelectorAll("tbody.rows").forEach(function (b) { rows += b.rows.length; });
    return { cls: t.className, rows: rows, width: t.getBoundingClientRect().width };
  });
  return {
    errors: w.__errors, viewport: w.innerWidth,
    scrollWidth: d.documentElement.scrollWidth, charts: charts, tables: tables
  };
}
function sorted(id) {
  var d = document.getElementById(id).contentWindow.document;
  var t = d.querySelector("table.vmstat"), th = t.querySelectorAll("thead th")[1];
  th.click();
  var up = Array.prototype.map.call(t.querySelectorAll("tbody.rows tr"), function (r) {
    return parseFloat(r.children[1].getAttribute("data-v"));
  });
  th.click();
  var down = Array.prototype.map.call(t.querySelectorAll("tbody.rows tr"), function (r) {
    return parseFloat(r.children[1].getAttribute("data-v"));
  });
  return { up: up, down: down };
}
window.addEventListener("load", function () {
  var out = { narrow: inspect("narrow"), wide: inspect("wide"), sort: sorted("wide") };
  document.getElementById("check").textContent = JSON.stringify(out);
});
"#;

/// Installed before the page's own script: console errors and uncaught exceptions.
const COLLECT: &str = r#"<script>window.__errors = [];
window.addEventListener("error", function (e) { window.__errors.push(String(e.message)); });
(function () { var ce = console.error; console.error = function () {
  window.__errors.push(Array.prototype.join.call(arguments, " ")); ce.apply(console, arguments); }; })();
</script>"#;

fn attr_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('"', "&quot;")
}

fn browser_check(root: &Path, page_path: &Path, page: &str, runs: [&Path; 3]) {
    let Some(chrome) = chromium() else {
        eprintln!(
            "skipping the browser check of `reclaimsim report`: no chromium on PATH \
             (apt-get install chromium, as .ci/run does; or set RECLAIMSIM_CHROMIUM)"
        );
        return;
    };
    let instrumented = page.replacen("<head>", &format!("<head>\n{COLLECT}"), 1);
    let frame = attr_escape(&instrumented);
    let harness = format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"></head><body style=\"margin:0\">\
         <iframe id=\"narrow\" style=\"width:400px;height:900px;border:0\" srcdoc=\"{frame}\"></iframe>\
         <iframe id=\"wide\" style=\"width:1600px;height:900px;border:0\" srcdoc=\"{frame}\"></iframe>\
         <pre id=\"check\"></pre><script>{CHECK}</script></body></html>"
    );
    let harness_path = root.join("harness.html");
    std::fs::write(&harness_path, &harness).unwrap();
    let url = format!("file://{}", harness_path.display());
    let out = headless(
        &chrome,
        &root.join("profile"),
        &[
            "--window-size=2100,1000",
            "--virtual-time-budget=10000",
            "--dump-dom",
            &url,
        ],
    );
    let dom = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("Uncaught"),
        "the page threw in the browser:\n{stderr}"
    );
    let start = dom.find("<pre id=\"check\">").expect("the harness ran") + 16;
    let end = start + dom[start..].find("</pre>").unwrap();
    let text = dom[start..end]
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    let check: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("the check's output `{text}`: {e}\n{stderr}"));

    // Expected table rows, from the inputs themselves.
    let [a, b, sw] = runs;
    let points = json(&sw.join("sweep.json"))["points"]
        .as_array()
        .unwrap()
        .len();
    let workloads = json(&a.join("results.json"))["workloads"]
        .as_object()
        .unwrap()
        .len();
    for view in ["narrow", "wide"] {
        let v = &check[view];
        assert_eq!(v["errors"], serde_json::json!([]), "{view}: console errors");
        let charts = v["charts"].as_array().unwrap();
        assert_eq!(charts.len(), page.matches("<figure class=\"chart").count());
        for (i, c) in charts.iter().enumerate() {
            let series = c["series"].as_u64().unwrap();
            assert!(series >= 1, "{view} chart {i} draws nothing: {c}");
            assert!(
                c["width"].as_f64().unwrap() > 100.0,
                "{view} chart {i}: {c}"
            );
            assert!(
                c["height"].as_f64().unwrap() > 50.0,
                "{view} chart {i}: {c}"
            );
            if c["heatmap"] == true {
                assert!(c["cells"].as_u64().unwrap() > 10, "{view} heatmap {i}: {c}");
            } else {
                assert!(
                    c["marks"].as_u64().unwrap() >= series,
                    "{view} chart {i} drew fewer marks than series: {c}"
                );
                assert_eq!(
                    c["missing"],
                    serde_json::json!([]),
                    "{view} chart {i} legend"
                );
            }
        }
        let tables = v["tables"].as_array().unwrap();
        let rows_of = |cls: &str| -> Vec<u64> {
            tables
                .iter()
                .filter(|t| t["cls"].as_str().unwrap().split(' ').any(|c| c == cls))
                .map(|t| t["rows"].as_u64().unwrap())
                .collect()
        };
        assert_eq!(
            rows_of("vmstat"),
            [nonzero_vmstat(a) as u64, nonzero_vmstat(b) as u64],
            "{view}"
        );
        assert_eq!(rows_of("workloads"), [workloads as u64; 2], "{view}");
        assert_eq!(
            rows_of("csv"),
            [points as u64],
            "{view}: the sweep's points"
        );
        // The runs' compare table, and the sweep's by its first key.
        let mm = rows_of("kind-mmtests");
        assert_eq!(mm.len(), 2, "{view}");
        assert!(mm.iter().all(|&n| n > 20), "{view}: {mm:?}");
    }
    // 400 px: nothing wider than the frame but inside a table's own scroller.
    let narrow = &check["narrow"];
    assert!(
        narrow["scrollWidth"].as_f64().unwrap() <= narrow["viewport"].as_f64().unwrap(),
        "the page scrolls sideways at 400 px: {narrow}"
    );
    for c in narrow["charts"].as_array().unwrap() {
        assert!(c["width"].as_f64().unwrap() <= 400.0, "{c}");
    }
    // A header click sorts by value, again the other way.
    let up: Vec<f64> = serde_json::from_value(check["sort"]["up"].clone()).unwrap();
    let down: Vec<f64> = serde_json::from_value(check["sort"]["down"].clone()).unwrap();
    assert!(up.windows(2).all(|w| w[0] <= w[1]), "{up:?}");
    assert!(down.windows(2).all(|w| w[0] >= w[1]), "{down:?}");
    assert_eq!(up.len(), nonzero_vmstat(a));

    // Screenshots, kept as the test's artifacts.
    let artifacts = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("report-artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    for (name, width, url) in [
        (
            "report-1600.png",
            1600,
            format!("file://{}", page_path.display()),
        ),
        ("report-harness.png", 2100, url.clone()),
    ] {
        let shot = artifacts.join(name);
        let _ = std::fs::remove_file(&shot);
        let out = headless(
            &chrome,
            &root.join("profile"),
            &[
                &format!("--window-size={width},4000"),
                &format!("--screenshot={}", shot.display()),
                &url,
            ],
        );
        let png = std::fs::read(&shot).unwrap_or_else(|e| {
            panic!(
                "{}: {e}\n{}",
                shot.display(),
                String::from_utf8_lossy(&out.stderr)
            )
        });
        assert!(png.starts_with(b"\x89PNG") && png.len() > 10_000, "{name}");
        eprintln!("screenshot: {}", shot.display());
    }
}
