//! The direction of dependency, at two levels. Between the workspace's crates, read
//! from `cargo metadata`: the kernel model and the trace formats depend on no crate of
//! the workspace, the cache policies on the trace formats alone, the top crate on the
//! three (the compiler then refuses any import against that). Inside the top crate,
//! between its top-level modules, read from the `crate::` paths in src/ (comments
//! aside): an import against the pinned direction fails here with the two modules and
//! the line that names the upper one.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// Each workspace package and the workspace packages it depends on (any kind:
/// normal, build or dev).
fn crate_edges() -> BTreeMap<String, Vec<String>> {
    let out = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let packages = meta["packages"].as_array().unwrap();
    let names: Vec<&str> = packages
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    packages
        .iter()
        .map(|p| {
            let mut deps: Vec<String> = p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d["name"].as_str().unwrap())
                .filter(|d| names.contains(d))
                .map(String::from)
                .collect();
            deps.sort();
            deps.dedup();
            (p["name"].as_str().unwrap().to_string(), deps)
        })
        .collect()
}

/// The workspace's crates, bottom up, and the crates each may depend on.
const CRATES: &[(&str, &[&str])] = &[
    ("reclaimsim-mm", &[]),
    ("reclaimsim-trace", &[]),
    ("reclaimsim-cache", &["reclaimsim-trace"]),
    (
        "reclaimsim",
        &["reclaimsim-mm", "reclaimsim-trace", "reclaimsim-cache"],
    ),
    ("reclaimsim-python", &["reclaimsim"]),
];

#[test]
fn crates_depend_only_downward() {
    let edges = crate_edges();
    let mut bad = Vec::new();
    for (krate, deps) in &edges {
        let Some((_, allowed)) = CRATES.iter().find(|(c, _)| c == krate) else {
            bad.push(format!(
                "{krate} is a workspace crate tests/layering.rs does not place"
            ));
            continue;
        };
        for d in deps {
            if !allowed.contains(&d.as_str()) {
                bad.push(format!(
                    "{krate} depends on {d}: an upward or sideways edge ({krate} may depend on {allowed:?})"
                ));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    // Not vacuous: the four crates are there, with the edges they must have.
    assert_eq!(edges["reclaimsim-cache"], ["reclaimsim-trace"]);
    assert_eq!(
        edges["reclaimsim"],
        ["reclaimsim-cache", "reclaimsim-mm", "reclaimsim-trace"]
    );
}

/// The kernel model names nothing of the workspace in its sources either (a path
/// dependency can be added back in one line; these names would show it first).
#[test]
fn the_kernel_model_names_no_other_crate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/mm");
    let mut stack = vec![root.clone()];
    let mut bad = Vec::new();
    let mut files = 0;
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let is_source = p.extension().is_some_and(|x| x == "rs" || x == "toml");
            if !is_source {
                continue;
            }
            files += 1;
            let text = std::fs::read_to_string(&p).unwrap();
            for (n, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                for name in ["reclaimsim::", "reclaimsim_trace", "reclaimsim_cache"] {
                    if code.contains(name) || code.contains(&name.replace('_', "-")) {
                        bad.push(format!("{}:{}: {}", p.display(), n + 1, line.trim()));
                    }
                }
            }
        }
    }
    assert!(files > 30, "read {files} files of crates/mm");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Each top-level module (src/NAME.rs or src/NAME/) and, per module it names, the first
/// place it does so (file:line).
fn edges() -> BTreeMap<String, BTreeMap<String, String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut files = Vec::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    files.sort();
    for f in files {
        let rel = f.strip_prefix(&src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let module = first.trim_end_matches(".rs").to_string();
        let text = std::fs::read_to_string(&f).unwrap();
        for (n, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            for (i, _) in line.match_indices("crate::") {
                // `reclaimsim::` paths (main.rs, the binary) are outside the library.
                if i > 0 && line[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
                    continue;
                }
                let name: String = line[i + 7..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() && name != module && name != "self" {
                    out.entry(module.clone())
                        .or_default()
                        .entry(name)
                        .or_insert_with(|| format!("src/{}:{}", rel.display(), n + 1));
                }
            }
        }
    }
    out
}

/// The crates below the top crate, under the names it re-exports them as, and the
/// items of the crate root: anything may use them.
const BELOW: &[&str] = &["mm", "trace", "cache", "hint", "rng", "BUILT_WITH_PROFILE"];

/// The top crate's modules, bottom up: each may import only those before it (and
/// [`BELOW`]). The engine (`sim`) measures and `report` turns that into results; the
/// results schema (`report::results`) sits below the sweeps and plots that ask it,
/// and sweep metrics are checked by `sweep`, above the engine whose results define
/// them.
const LAYERS: &[&str] = &[
    "units",
    "stats",
    "scenario",
    "workload",
    "sim",
    "host_memory",
    "report",
    "sweep",
    "fuzz",
    "bench",
];

#[test]
fn modules_import_only_downward() {
    let edges = edges();
    let mut bad = Vec::new();
    for (module, imports) in &edges {
        let Some(level) = LAYERS.iter().position(|m| m == module) else {
            bad.push(format!(
                "src/{module}: a top-level module tests/layering.rs does not place in LAYERS"
            ));
            continue;
        };
        for (to, at) in imports {
            if BELOW.contains(&to.as_str()) {
                continue;
            }
            match LAYERS.iter().position(|m| m == to) {
                Some(l) if l < level => {}
                Some(_) => bad.push(format!(
                    "{module} imports {to} ({at}): an upward edge ({to} is above {module} in LAYERS)"
                )),
                None => bad.push(format!(
                    "{module} imports {to} ({at}): {to} is not a module tests/layering.rs places"
                )),
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn the_edges_are_read_from_the_sources() {
    // Not vacuous: the reader finds the edges the engine really has.
    let edges = edges();
    assert!(edges["sim"].contains_key("mm"), "{:?}", edges["sim"]);
    assert!(
        edges["scenario"].contains_key("cache"),
        "{:?}",
        edges["scenario"]
    );
    assert!(edges["stats"].contains_key("mm"), "{:?}", edges["stats"]);
}
