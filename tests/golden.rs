//! Golden results: every shipped scenario (scenarios/*.toml, without its sweep), cut
//! to a short run, must produce byte-identical results.json across changes that are
//! meant to be behaviour-neutral (speed work, refactors). A deliberate behaviour change
//! updates the hashes:
//!
//!     UPDATE_GOLDEN=1 cargo test --release --test golden
//!
//! and says why in its commit (a new crate version changes them too: results.json
//! records it).

use reclaimsim::sim::{RunOptions, Simulation};

const GOLDEN: &str = "tests/data/golden.txt";
/// Simulated time each scenario is cut to.
const CUT_NS: u64 = 2_000_000_000;

/// FNV-1a, 64 bits: enough to tell results apart, and no dependency.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

fn parse_ns(v: &toml::Value) -> Option<u64> {
    let s = v.as_str()?;
    let (num, unit) = s.split_at(s.find(|c: char| c.is_ascii_alphabetic())?);
    let n: f64 = num.trim().parse().ok()?;
    let scale = match unit {
        "ns" => 1.0,
        "us" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => return None,
    };
    Some((n * scale) as u64)
}

/// The scenario cut to `CUT_NS`: no sweep; what would start or happen later (a
/// workload's `start`, a timed action) is moved to the middle of the cut run.
fn cut(text: &str) -> String {
    let mut v: toml::Table = text.parse().expect("a shipped scenario parses");
    v.remove("sweep");
    let run = v
        .entry("run")
        .or_insert(toml::Value::Table(Default::default()))
        .as_table_mut()
        .unwrap();
    run.insert("duration".into(), toml::Value::String("2s".into()));
    run.remove("stop_when_done");
    let middle = toml::Value::String("1s".into());
    for (list, key) in [("workload", "start"), ("action", "at")] {
        if let Some(items) = v.get_mut(list).and_then(|w| w.as_array_mut()) {
            for item in items {
                let t = item.as_table_mut().unwrap();
                if t.get(key).and_then(parse_ns).is_some_and(|ns| ns >= CUT_NS) {
                    t.insert(key.into(), middle.clone());
                }
            }
        }
    }
    toml::to_string(&v).unwrap()
}

fn shipped() -> Vec<(String, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect()
}

#[test]
fn shipped_scenarios_give_their_golden_results() {
    let mut lines = Vec::new();
    for (name, text) in shipped() {
        let text = cut(&text);
        // Config files (masim .cfg, phases programs) resolve against scenarios/.
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("scenarios")
            .join(&name);
        let sc = reclaimsim::scenario::parse_str(&text, path.to_str().unwrap(), &[])
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let r = Simulation::new(sc)
            .run(RunOptions::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut r = r;
        // The path differs between checkouts; the hash is of what the run did.
        r.provenance.scenario_file = name.clone();
        let json = reclaimsim::report::results_json(&r);
        lines.push(format!("{name} {:016x}", fnv1a(json.as_bytes())));
    }
    let got = lines.join("\n") + "\n";
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(GOLDEN, &got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(GOLDEN).unwrap_or_default();
    assert_eq!(
        got, want,
        "results changed; if that is meant, run UPDATE_GOLDEN=1 cargo test --release --test golden"
    );
}
