//! The documentation's scenarios are real: the README's example and every scenario
//! shipped under scenarios/ validate.

use reclaimsim::scenario;

#[test]
fn readme_example_scenario_validates() {
    let readme = include_str!("../README.md");
    let start = readme.find("```toml\n").expect("README has a toml block") + "```toml\n".len();
    let end = start + readme[start..].find("```").expect("closed block");
    scenario::parse_str(&readme[start..end], "README.md", &[]).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn shipped_scenarios_validate() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            scenario::load(&path, &[]).unwrap_or_else(|e| panic!("{e}"));
            n += 1;
        }
    }
    assert!(n >= 1);
}
