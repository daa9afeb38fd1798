//! The shipped scenarios (scenarios/*.toml), and each cut to a short run.
#![allow(dead_code)] // not every test file that shares this module uses all of it

/// A TOML string holding a time (`5s`, `1500ms`), in ns.
fn parse_ns(v: &toml::Value) -> Option<u64> {
    reclaimsim::units::parse_time(v.as_str()?).ok()
}

/// The scenario cut to `duration`: no sweep; what would start or
/// happen later (a workload's `start`, a timed action) is moved to the middle of the
/// cut run.
pub fn cut(text: &str, duration: &str) -> String {
    let mut v: toml::Table = text.parse().expect("a shipped scenario parses");
    v.remove("sweep");
    let run = v
        .entry("run")
        .or_insert(toml::Value::Table(Default::default()))
        .as_table_mut()
        .unwrap();
    let cut_ns = parse_ns(&toml::Value::String(duration.into())).expect("a duration");
    run.insert("duration".into(), toml::Value::String(duration.into()));
    run.remove("stop_when_done");
    // As a person would write it (results record the scenario's text).
    let middle_ms = cut_ns / 2_000_000;
    let middle = toml::Value::String(if middle_ms.is_multiple_of(1000) {
        format!("{}s", middle_ms / 1000)
    } else {
        format!("{middle_ms}ms")
    });
    for (list, key) in [("workload", "start"), ("action", "at")] {
        if let Some(items) = v.get_mut(list).and_then(|w| w.as_array_mut()) {
            for item in items {
                let t = item.as_table_mut().unwrap();
                if t.get(key).and_then(parse_ns).is_some_and(|ns| ns >= cut_ns) {
                    t.insert(key.into(), middle.clone());
                }
            }
        }
    }
    toml::to_string(&v).unwrap()
}

/// The scenario as shipped, less its sweep.
pub fn without_sweep(text: &str) -> String {
    let mut v: toml::Table = text.parse().expect("a shipped scenario parses");
    v.remove("sweep");
    toml::to_string(&v).unwrap()
}

pub fn shipped() -> Vec<(String, String)> {
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
