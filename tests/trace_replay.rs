//! The `trace` workload: replays of recorded accesses, objects split into pages,
//! pacing by timestamps and looping, determinism, bad traces.

use reclaimsim::scenario;
use reclaimsim::sim::{RunOptions, Simulation};
use reclaimsim::trace::oracle::{self, Record};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_reclaimsim");

/// Runs the scenario file with the invariant checker on; the results as JSON.
fn run_file(path: &Path) -> Value {
    let sc = scenario::load(path, &[]).unwrap_or_else(|e| panic!("{e}"));
    let r = reclaimsim::report::run(
        Simulation::new(sc),
        RunOptions {
            check: true,
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    serde_json::to_value(&r).unwrap()
}

fn counters(r: &Value, names: &[&str]) -> Vec<(String, u64)> {
    names
        .iter()
        .map(|n| (n.to_string(), r["vmstat"][n].as_u64().unwrap_or(0)))
        .collect()
}

const MACHINE: &str = r#"
[run]
duration = "2s"
seed = 3
sample_interval = "500ms"

[machine]
memory = "1G"
nr_cpus = 2

[machine.swap]
type = "zram"
size = "1G"

[[cgroup]]
path = "app"
memory.max = "48M"
"#;

/// Runs `workload` (a `[[workload]]` table) with --record-accesses through the CLI,
/// then replays its recording as a trace workload with `replay_keys`; both runs'
/// fault and reclaim counters.
fn record_then_replay(workload: &str, replay_keys: &str, name: &str) -> (Value, Value) {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("rec.toml");
    std::fs::write(&rec, format!("{MACHINE}\n{workload}")).unwrap();
    let out = dir.path().join("out");
    let st = Command::new(BIN)
        .args(["run", "-q", "--record-accesses", "--out"])
        .arg(&out)
        .arg(&rec)
        .status()
        .unwrap();
    assert!(st.success());
    let recorded = out.join("accesses").join(format!("{name}.txt.zst"));
    assert!(recorded.exists(), "{}", recorded.display());
    let original: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let replay = dir.path().join("replay.toml");
    std::fs::write(
        &replay,
        format!(
            "{MACHINE}\n[[workload]]\nname = \"{name}\"\nkind = \"trace\"\ncgroup = \"app\"\n\
             trace = \"out/accesses/{name}.txt.zst\"\n{replay_keys}\n"
        ),
    )
    .unwrap();
    (original, run_file(&replay))
}

const FAULTS: [&str; 6] = [
    "pgfault",
    "pgmajfault",
    "pswpin",
    "pswpout",
    "workingset_refault_anon",
    "workingset_refault_file",
];

/// A zipf service over twice its memcg's limit, unpaced: the replay of its recorded
/// accesses faults, swaps and refaults exactly as it did (same pages in the same
/// order at the same cost per access, so the same reclaim decisions).
#[test]
fn recorded_anon_accesses_replay_to_the_same_faults() {
    let w = r#"[[workload]]
name = "svc"
kind = "anon"
size = "96M"
pattern = "zipf"
skew = 0.9
write_ratio = 0.3
cgroup = "app"
"#;
    let (orig, rep) = record_then_replay(w, "", "svc");
    let (a, b) = (counters(&orig, &FAULTS), counters(&rep, &FAULTS));
    assert!(a[1].1 > 1000, "the limit makes it refault: {a:?}");
    assert_eq!(a, b);
    assert_eq!(
        orig["workloads"]["svc"]["ops"],
        rep["workloads"]["svc"]["ops"]
    );
}

/// Buffered reads of files larger than the limit, replayed as read()s of a file's page
/// cache: the same major faults... of the page cache (refaults, readahead).
#[test]
fn recorded_file_reads_replay_through_the_page_cache() {
    let w = r#"[[workload]]
name = "rd"
kind = "file-read"
nr_files = 1
file_size = "80M"
io_size = "4K"
pattern = "uniform"
cgroup = "app"
"#;
    let (orig, rep) = record_then_replay(w, "backing = \"file\"", "rd");
    let names = [
        "pgpgin",
        "workingset_refault_file",
        "pgsteal_direct",
        "pgscan_direct",
    ];
    let (a, b) = (counters(&orig, &names), counters(&rep, &names));
    assert!(a[1].1 > 100, "{a:?}");
    assert_eq!(a, b);
}

fn write_oracle(path: &Path, recs: &[(u32, u64, u32)]) {
    let recs: Vec<Record> = recs
        .iter()
        .map(|&(clock_time, obj_id, obj_size)| Record {
            clock_time,
            obj_id,
            obj_size,
            next_access_vtime: -1,
        })
        .collect();
    let mut f = std::fs::File::create(path).unwrap();
    oracle::write(&mut f, &recs).unwrap();
}

fn trace_scenario(dir: &Path, keys: &str, duration: &str) -> std::path::PathBuf {
    let p = dir.join("s.toml");
    std::fs::write(
        &p,
        format!(
            "[run]\nduration = \"{duration}\"\nsample_interval = \"1s\"\n[machine]\n\
             memory = \"1G\"\nnr_cpus = 1\n[[workload]]\nname = \"t\"\nkind = \"trace\"\n{keys}\n"
        ),
    )
    .unwrap();
    p
}

/// Objects take ceil(size / 4 KiB) pages: a 10000-byte object faults 3 pages in, a
/// 4096-byte and a 1-byte one a page each; their second requests hit.
#[test]
fn objects_are_split_into_pages() {
    let dir = tempfile::tempdir().unwrap();
    write_oracle(
        &dir.path().join("t.oracleGeneral"),
        &[
            (0, 7, 10000),
            (0, 8, 4096),
            (0, 9, 1),
            (0, 7, 10000),
            (0, 9, 1),
            (0, 8, 4096),
        ],
    );
    let s = trace_scenario(
        dir.path(),
        "trace = \"t.oracleGeneral\"\nkernel_stacks = false",
        "1s",
    );
    let r = run_file(&s);
    assert_eq!(r["vmstat"]["pgfault"], 5);
    assert_eq!(r["workloads"]["t"]["ops"], 6);
    // With sizes ignored each object is one page.
    let s = trace_scenario(
        dir.path(),
        "trace = \"t.oracleGeneral\"\nignore_obj_size = true",
        "1s",
    );
    assert_eq!(run_file(&s)["vmstat"]["pgfault"], 3);
}

/// Timestamps 0, 0, 1 and 3 s: the last request starts 3 s in. Looping, the passes
/// follow each other a span (3 s + one unit) apart: in 10 s, passes at 0, 4 and 8 s
/// issue 4 + 4 + 3 requests (the third pass's 11 s one is past the end). With
/// time_unit = 100ms a pass spans 0.4 s: 25 passes of 4 in 10 s.
#[test]
fn timestamps_pace_the_requests_and_loops_follow_the_span() {
    let dir = tempfile::tempdir().unwrap();
    write_oracle(
        &dir.path().join("t.oracleGeneral"),
        &[
            (100, 1, 4096),
            (100, 2, 4096),
            (101, 3, 4096),
            (103, 1, 4096),
        ],
    );
    let base = "trace = \"t.oracleGeneral\"\npacing = \"timestamps\"";
    let r = run_file(&trace_scenario(dir.path(), base, "10s"));
    let w = &r["workloads"]["t"];
    assert_eq!(w["ops"], 4);
    let runtime_ns = w["runtime_ns"].as_u64().unwrap();
    assert!(
        (3_000_000_000..3_001_000_000).contains(&runtime_ns),
        "{runtime_ns}"
    );
    let r = run_file(&trace_scenario(
        dir.path(),
        &format!("{base}\nloop = true"),
        "10s",
    ));
    assert_eq!(r["workloads"]["t"]["ops"], 11);
    let r = run_file(&trace_scenario(
        dir.path(),
        &format!("{base}\nloop = true\ntime_unit = \"100ms\""),
        "10s",
    ));
    assert_eq!(r["workloads"]["t"]["ops"], 100);
}

/// Sparse lackey addresses replay packed by 2 MiB range; two replays are the same
/// to the byte.
#[test]
fn lackey_replays_and_replays_are_deterministic() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for i in 0..3000u64 {
        let addr = if i % 3 == 0 { 0x7ff000000000 } else { 0x400000 } + (i * 7919 % 1024) * 4096;
        text.push_str(&format!(" L {addr:x},8\n"));
        if i % 5 == 0 {
            text.push_str(&format!(" S {:x},4\n", addr + 8));
        }
    }
    std::fs::write(dir.path().join("t.lackey"), text).unwrap();
    let s = trace_scenario(
        dir.path(),
        "trace = \"t.lackey\"\ntrace_format = \"lackey\"",
        "1s",
    );
    let (a, b) = (run_file(&s), run_file(&s));
    assert_eq!(a.to_string(), b.to_string());
    // Distinct pages: 1024 offsets, in two ranges of addresses.
    let pages: std::collections::BTreeSet<u64> = (0..3000u64)
        .map(|i| (i % 3 == 0) as u64 * (1 << 40) + i * 7919 % 1024)
        .collect();
    assert_eq!(a["vmstat"]["pgfault"].as_u64().unwrap(), pages.len() as u64);
}

/// A malformed record stops the load with the file, line or byte, and what was
/// expected; a trace without times cannot be paced by them; one that changes under
/// the run stops it with the workload's error.
#[test]
fn bad_traces_are_refused_with_where() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.txt"), "1\n2 r\nxyz\n").unwrap();
    let s = trace_scenario(dir.path(), "trace = \"t.txt\"", "1s");
    let e = scenario::load(&s, &[]).unwrap_err().to_string();
    // The scenario's `trace` key (line 10 of s.toml), then the trace file's line.
    let at = |rest: &str| {
        format!(
            "{}:10: workload[0].trace: {}{rest}",
            s.display(),
            dir.path().display()
        )
    };
    assert!(
        e.starts_with(&at("/t.txt:3: `xyz`: expected a page number")),
        "{e}"
    );
    let mut b = Vec::new();
    oracle::write(
        &mut b,
        &[Record {
            clock_time: 0,
            obj_id: 1,
            obj_size: 1,
            next_access_vtime: -1,
        }],
    )
    .unwrap();
    b.extend_from_slice(&[1, 2, 3]);
    std::fs::write(dir.path().join("t.oracleGeneral"), b).unwrap();
    let e = scenario::load(
        &trace_scenario(dir.path(), "trace = \"t.oracleGeneral\"", "1s"),
        &[],
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.starts_with(&at("/t.oracleGeneral: byte 24: truncated record")),
        "{e}"
    );
    std::fs::write(dir.path().join("t.txt"), "1\n2\n").unwrap();
    let s = trace_scenario(
        dir.path(),
        "trace = \"t.txt\"\npacing = \"timestamps\"",
        "1s",
    );
    let e = scenario::load(&s, &[]).unwrap_err().to_string();
    assert!(
        e.starts_with(&format!(
            "{}:11: workload[0].pacing: this trace has no timestamps",
            s.display()
        )),
        "{e}"
    );
    let s = trace_scenario(dir.path(), "trace = \"missing.txt\"", "1s");
    let e = scenario::load(&s, &[]).unwrap_err().to_string();
    assert!(e.contains("workload[0].trace: cannot read"), "{e}");
    // Loaded, then changed: the run stops with the workload's error.
    let s = trace_scenario(dir.path(), "trace = \"t.txt\"", "1s");
    let sc = scenario::load(&s, &[]).unwrap();
    std::fs::write(dir.path().join("t.txt"), "1\n99999999\n").unwrap();
    let e = reclaimsim::report::run(Simulation::new(sc), RunOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("workload t") && e.contains("the file changed since"),
        "{e}"
    );
}
