//! The cache simulator against libCacheSim (PyPI `libcachesim`, pinned, in a
//! throw-away venv): on generated traces (zipf, a scan, a loop, and zipf with
//! object sizes) every policy both have gives the same number of misses at every
//! cache size, exactly. The policies' definitions follow libCacheSim 0.3.5's sources
//! (crates/cache/src/*.rs say where they differ: S3-FIFO on caches under 10 objects).

use reclaimsim::cache::run::zipf_keys as zipf;
use reclaimsim::trace::oracle::{write, Record};
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_reclaimsim");
const LIBCACHESIM: &str = "libcachesim==0.3.5";

/// Our policy names beside libCacheSim's class names.
const POLICIES: [(&str, &str); 6] = [
    ("lru", "LRU"),
    ("fifo", "FIFO"),
    ("clock", "Clock"),
    ("sieve", "Sieve"),
    ("s3fifo", "S3FIFO"),
    ("arc", "ARC"),
];

fn write_trace(path: &Path, ids: &[u64], size: impl Fn(u64) -> u32) {
    let recs: Vec<Record> = ids
        .iter()
        .enumerate()
        .map(|(i, &id)| Record {
            clock_time: i as u32,
            obj_id: id,
            obj_size: size(id),
            next_access_vtime: -1,
        })
        .collect();
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    write(&mut f, &recs).unwrap();
}

/// A command's stdout, after checking that it succeeded.
fn ok(out: std::process::Output) -> Vec<u8> {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// `reclaimsim cache TRACE --policy P --size S,... --json EXTRA...`'s JSON.
fn cache_json(trace: &Path, policy: &str, sizes: &[u64], extra: &[&str]) -> serde_json::Value {
    let list: Vec<String> = sizes.iter().map(u64::to_string).collect();
    let out = Command::new(BIN)
        .arg("cache")
        .arg(trace)
        .args(["--policy", policy, "--json", "--size", &list.join(",")])
        .args(extra)
        .output()
        .unwrap();
    serde_json::from_slice(&ok(out)).unwrap()
}

/// Our misses per size.
fn ours(trace: &Path, policy: &str, sizes: &[u64]) -> Vec<u64> {
    cache_json(trace, policy, sizes, &[])["sizes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["misses"].as_u64().unwrap())
        .collect()
}

const SCRIPT: &str = r#"
import json, sys
import libcachesim as lcs
runs = json.loads(sys.argv[1])
out = []
for trace, cls, sizes in runs:
    row = []
    for size in sizes:
        reader = lcs.TraceReader(trace, lcs.TraceType.ORACLE_GENERAL_TRACE)
        cache = getattr(lcs, cls)(size)
        mr, _ = cache.process_trace(reader)
        row.append(mr)
    out.append(row)
print(json.dumps(out))
"#;

fn venv_python(dir: &Path) -> PathBuf {
    let venv = dir.join("venv");
    let out = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .output()
        .expect("python3 runs (CI installs it)");
    assert!(
        out.status.success(),
        "python3 -m venv (python3-venv, which CI installs): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Command::new(venv.join("bin/pip"))
        .args([
            "install",
            "--quiet",
            "--disable-pip-version-check",
            LIBCACHESIM,
        ])
        .output()
        .expect("pip runs");
    assert!(
        out.status.success(),
        "pip install {LIBCACHESIM}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    venv.join("bin/python")
}

#[test]
fn miss_counts_equal_libcachesims() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // (name, ids, sizes or unit, cache sizes)
    let zipf_ids = zipf(5000, 50_000, 1.0, 42);
    let scan: Vec<u64> = (0..20_000).chain(0..20_000).collect();
    let looped: Vec<u64> = (0..50).flat_map(|_| 0..600u64).collect();
    let traces: Vec<(&str, Vec<u64>, bool, Vec<u64>)> = vec![
        ("zipf", zipf_ids.clone(), false, vec![50, 500, 2000]),
        ("scan", scan, false, vec![50, 5000]),
        ("loop", looped, false, vec![20, 500, 700]),
        ("sized", zipf_ids, true, vec![10_000, 200_000, 2_000_000]),
    ];
    let mut runs = Vec::new();
    let mut want = Vec::new();
    for (name, ids, sized, sizes) in &traces {
        let path = dir.join(format!("{name}.oracleGeneral"));
        // Sized: a fixed size per object, 1 to 4000 bytes.
        write_trace(&path, ids, |id| {
            if *sized {
                1 + (id.wrapping_mul(7919) % 4000) as u32
            } else {
                1
            }
        });
        for (ours_name, theirs) in POLICIES {
            runs.push(serde_json::json!([
                path.display().to_string(),
                theirs,
                sizes
            ]));
            want.push((
                name.to_string(),
                ours_name,
                path.clone(),
                sizes.clone(),
                ids.len(),
            ));
        }
    }
    let python = venv_python(dir);
    let out = Command::new(&python)
        .args(["-c", SCRIPT])
        .arg(serde_json::to_string(&runs).unwrap())
        .output()
        .unwrap();
    let ratios: Vec<Vec<f64>> = serde_json::from_slice(&ok(out)).unwrap();
    for ((name, policy, path, sizes, n), theirs) in want.into_iter().zip(ratios) {
        let theirs: Vec<u64> = theirs
            .iter()
            .map(|mr| (mr * n as f64).round() as u64)
            .collect();
        assert_eq!(
            ours(&path, policy, &sizes),
            theirs,
            "{policy} on {name} at {sizes:?}"
        );
    }

    // The CSV reader against libCacheSim's: a zipf trace with sizes as `ts,key,size`
    // rows (a header, and a size-0 row every 1000, which both skip), LRU at 200 000.
    let csv = dir.join("sized.csv");
    let mut text = String::from("ts,key,size\n");
    let mut n = 0u64;
    for (i, id) in zipf(5000, 20_000, 1.0, 7).into_iter().enumerate() {
        let size = if i % 1000 == 999 {
            0
        } else {
            1 + id * 7919 % 4000
        };
        n += u64::from(size > 0);
        text += &format!("{i},{id},{size}\n");
    }
    std::fs::write(&csv, text).unwrap();
    let script = r#"
import sys, libcachesim as lcs
p = lcs.ReaderInitParam(has_header=True, has_header_set=True)
p.time_field = 1; p.obj_id_field = 2; p.obj_size_field = 3
r = lcs.TraceReader(sys.argv[1], lcs.TraceType.CSV_TRACE, p)
mr, _ = lcs.LRU(200000).process_trace(r)
print(mr)
"#;
    let out = Command::new(&python)
        .args(["-c", script])
        .arg(&csv)
        .output()
        .unwrap();
    let mr: f64 = String::from_utf8_lossy(&ok(out)).trim().parse().unwrap();
    let opts = [
        "--trace-options",
        "time-col=1,obj-id-col=2,obj-size-col=3,has-header=1",
    ];
    let v = cache_json(&csv, "lru", &[200_000], &opts);
    assert_eq!(v["sizes"][0]["requests"].as_u64(), Some(n));
    assert_eq!(
        v["sizes"][0]["misses"].as_u64(),
        Some((mr * n as f64).round() as u64)
    );
}
