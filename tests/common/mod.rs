//! Shared by the integration tests: run a scenario text with the invariant checker on.

use reclaimsim::report::results::Results;
use reclaimsim::scenario;
use reclaimsim::sim::{RunOptions, Simulation};

/// Parses `text` with `--set`-style overrides and runs it, checking every invariant
/// at every sample; panics with the message on any error.
pub fn run_checked(text: &str, sets: &[&str]) -> Results {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let sc = scenario::parse_str(text, "test.toml", &sets).unwrap_or_else(|e| panic!("{e}"));
    Simulation::new(sc)
        .run(RunOptions {
            check: true,
            ..Default::default()
        })
        .unwrap_or_else(|e| panic!("{e}"))
}
