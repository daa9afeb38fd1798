//! The documentation's scenarios are real: the README's example and every scenario
//! shipped under scenarios/ (and scenarios/full/) validate.

use reclaimsim::scenario;

#[test]
fn readme_scenario_examples_validate() {
    // Every toml block in the README is a scenario, or workloads to drop into one.
    let readme = include_str!("../README.md");
    let mut n = 0;
    for block in readme.split("```toml\n").skip(1) {
        let text = &block[..block.find("```").expect("closed block")];
        // Fragments get a machine, and a workload called `service` if they have none.
        let mut full = text.to_string();
        if !text.contains("[[workload]]") {
            full =
                format!("[[workload]]\nname = \"service\"\nkind = \"anon\"\nsize = \"1G\"\n{full}");
        }
        if !text.contains("[machine]") {
            full = format!("[machine]\nmemory = \"4G\"\n{full}");
        }
        scenario::parse_str(&full, "README.md", &[]).unwrap_or_else(|e| panic!("{e}\n{full}"));
        n += 1;
    }
    assert!(n >= 2);
}

#[test]
fn shipped_scenarios_validate() {
    // scenarios/full/ holds the seed experiments at the seeds' own sizes: validated
    // here, too big for the suite to run (the README gives their sweeps' wall time).
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut n = 0;
    for (dir, least) in [(root.clone(), 1), (root.join("full"), 2)] {
        let mut here = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                scenario::load(&path, &[]).unwrap_or_else(|e| panic!("{e}"));
                here += 1;
            }
        }
        assert!(here >= least, "{here}");
        n += here;
    }
    assert!(n >= 3);
}
