//! The direction of dependency between the crate's top-level modules, read from the
//! `crate::` paths in src/ (comments aside). Issue 36 splits the crate into a
//! workspace whose compiler keeps the layering; until then this pins the edges
//! already made one-way, so an import against them fails here with the two modules
//! and the line that names the upper one.

use std::collections::BTreeMap;
use std::path::Path;

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

/// The modules each of these may import (any other is an upward or sideways edge).
const ALLOWED: &[(&str, &[&str])] = &[
    ("units", &[]),
    ("hint", &[]),
    ("rng", &[]),
    // Trace formats: readers and writers of plain types.
    ("trace", &[]),
    // Replacement policies and the cache simulator over trace requests.
    ("cache", &["trace", "hint", "units"]),
];

/// What the kernel model (mm, its VFS caches included) must never import: everything
/// above it. It is built from its own `mm::Config`, never the scenario's types.
const KERNEL_MODEL_NEVER: &[&str] = &[
    "scenario",
    "cache",
    "trace",
    "report",
    "sweep",
    "bench",
    "workload",
    "sim",
    "host_memory",
    "stats",
];

/// Edges that must not exist, where the module has others still to move (issue 36).
const FORBIDDEN: &[(&str, &[&str])] = &[
    ("mm", KERNEL_MODEL_NEVER),
    ("sim", &["sweep", "bench"]),
    ("workload", &["sweep", "bench", "report"]),
];

#[test]
fn modules_import_only_downward() {
    let edges = edges();
    let mut bad = Vec::new();
    for (module, allowed) in ALLOWED {
        for (to, at) in edges.get(*module).into_iter().flatten() {
            if !allowed.contains(&to.as_str()) {
                bad.push(format!(
                    "{module} imports {to} ({at}): {module} may import only {allowed:?}"
                ));
            }
        }
    }
    for (module, forbidden) in FORBIDDEN {
        for (to, at) in edges.get(*module).into_iter().flatten() {
            if forbidden.contains(&to.as_str()) {
                bad.push(format!("{module} imports {to} ({at}): an upward edge"));
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
    assert!(edges["cache"].contains_key("trace"), "{:?}", edges["cache"]);
    assert!(edges["stats"].contains_key("mm"), "{:?}", edges["stats"]);
}
