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

mod common;

use common::shipped::{cut, shipped};

const GOLDEN: &str = "tests/data/golden.txt";

/// FNV-1a, 64 bits: enough to tell results apart, and no dependency.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

#[test]
fn shipped_scenarios_give_their_golden_results() {
    let mut lines = Vec::new();
    for (name, text) in shipped() {
        let text = cut(&text, "2s");
        // Config files (masim .cfg, phases programs) resolve against scenarios/.
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("scenarios")
            .join(&name);
        let sc = reclaimsim::scenario::parse_str(&text, path.to_str().unwrap(), &[])
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let r = reclaimsim::report::run(Simulation::new(sc), RunOptions::default())
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
