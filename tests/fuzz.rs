//! CI's share of the fuzz harness (src/fuzz.rs): a fixed number of generated cases from
//! a fixed seed, each run by the binary with `--check`. Every case must end in a whole
//! result or a message naming a key: no panic, hang, abort, invariant failure or
//! unbounded memory. `cargo run --release --example fuzz -- --minutes N` runs longer.

use reclaimsim::fuzz::{self, Corpus, Generator, Limits};
use std::path::Path;

const CASES: u64 = 150;

#[test]
fn generated_inputs_never_panic_hang_or_abort() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let corpus = Corpus::load(&root.join("scenarios")).unwrap();
    let mut g = Generator::new(corpus, 20261122);
    let scratch = tempfile::tempdir().unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_reclaimsim"));
    let mut failures = Vec::new();
    for _ in 0..CASES {
        let case = g.next_case();
        if let Err(f) = fuzz::run_case(bin, &scratch.path().join("w"), &case, &Limits::default()) {
            let saved = fuzz::save_failure(&scratch.path().join("failures"), &f);
            failures.push(format!(
                "case {} ({}): {}\n  sets: {:?}\n  stderr: {}\n  scenario:\n{}\n  ({saved:?})",
                case.id,
                case.kind,
                f.why,
                case.sets,
                f.stderr.lines().take(3).collect::<Vec<_>>().join(" | "),
                case.text
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {CASES} cases failed:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
