//! Shared by the integration tests: run a scenario text with the invariant checker on.

pub mod shipped;

use reclaimsim::report::results::Results;
use reclaimsim::scenario;
use reclaimsim::sim::{RunOptions, Simulation};

/// Parses `text` with `--set`-style overrides and runs it, checking every invariant
/// at every sample; panics with the message on any error.
#[allow(dead_code)] // golden.rs uses only `shipped`
pub fn run_checked(text: &str, sets: &[&str]) -> Results {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let sc = scenario::parse_str(text, "test.toml", &sets).unwrap_or_else(|e| panic!("{e}"));
    reclaimsim::report::run(
        Simulation::new(sc),
        RunOptions {
            check: true,
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

/// As [`run_checked`] (no overrides), also returning timeseries.csv's text.
#[allow(dead_code)] // not every test file that shares this module samples
pub fn run_checked_csv(text: &str) -> (Results, String) {
    let out = run_checked_series(text, &[]);
    let csv = out.series.to_csv();
    (out.results, csv)
}

/// As [`run_checked`], with the timeseries.
#[allow(dead_code)] // not every test file that shares this module samples
pub fn run_checked_series(text: &str, sets: &[&str]) -> reclaimsim::report::Run {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let sc = scenario::parse_str(text, "test.toml", &sets).unwrap_or_else(|e| panic!("{e}"));
    reclaimsim::report::run_with_series(
        Simulation::new(sc),
        RunOptions {
            check: true,
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("{e}"))
}
