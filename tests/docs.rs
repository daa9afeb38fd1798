//! The documentation is real: every scenario fragment in the README and docs/
//! validates, every scenario shipped under scenarios/ (and scenarios/full/) validates,
//! every relative link in them names a file that exists, and the README's tour runs as
//! written, command by command.

use reclaimsim::scenario;
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// README.md and every Markdown page under docs/, with their paths.
fn pages() -> Vec<(PathBuf, String)> {
    let mut out = vec![PathBuf::from(ROOT).join("README.md")];
    let mut dirs = vec![PathBuf::from(ROOT).join("docs")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|e| e == "md") {
                out.push(p);
            }
        }
    }
    out.sort();
    out.into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect()
}

#[test]
fn documented_scenario_examples_validate() {
    // Every toml block is a scenario, or workloads to drop into one.
    let mut n = 0;
    for (path, page) in pages() {
        // The file name alone: a fragment's relative paths (a trace) are the
        // repository's, as a scenario at its root would have them.
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        for block in page.split("```toml\n").skip(1) {
            let text = &block[..block.find("```").expect("closed block")];
            // Fragments get a machine, and a workload called `service` if they have none.
            let mut full = text.to_string();
            if !text.contains("[[workload]]") {
                full = format!(
                    "[[workload]]\nname = \"service\"\nkind = \"anon\"\nsize = \"1G\"\n{full}"
                );
            }
            if !text.contains("[machine]") {
                full = format!("[machine]\nmemory = \"4G\"\n{full}");
            }
            scenario::parse_str(&full, &name, &[]).unwrap_or_else(|e| panic!("{e}\n{full}"));
            n += 1;
        }
    }
    assert!(n >= 8, "{n}");
}

#[test]
fn relative_links_name_files_that_exist() {
    let mut n = 0;
    for (path, page) in pages() {
        let dir = path.parent().unwrap();
        for part in page.split("](").skip(1) {
            let target = &part[..part.find(')').unwrap_or(0)];
            if target.is_empty() || target.contains("://") || target.starts_with('#') {
                continue;
            }
            let file = target.split('#').next().unwrap();
            assert!(
                dir.join(file).exists(),
                "{}: the link `{target}` names no file",
                path.display()
            );
            n += 1;
        }
        // The project names no path outside itself.
        assert!(
            !page.contains("../shared"),
            "{}: names ../shared, which a clone does not have",
            path.display()
        );
    }
    assert!(n >= 15, "{n}");
}

/// The README's tour, run as a new user would from a checkout: each command of its
/// `sh` blocks (the binary for `reclaimsim` and `cargo run --release --`), in a
/// scratch directory beside a link to scenarios/, so out/ lands there.
#[test]
fn readme_tour_runs_as_written() {
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    let bin = env!("CARGO_BIN_EXE_reclaimsim");
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("readme-tour");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(Path::new(ROOT).join("scenarios"), dir.join("scenarios")).unwrap();
    let mut ran = Vec::new();
    for block in readme.split("```sh\n").skip(1) {
        for line in block[..block.find("```").unwrap()].lines() {
            let line = line.split(" #").next().unwrap().trim();
            let args = if let Some(rest) = line.strip_prefix("cargo run --release -- ") {
                rest
            } else if let Some(rest) = line.strip_prefix("reclaimsim ") {
                rest
            } else {
                // The test command itself, and the alias.
                assert!(
                    line.is_empty() || line == "cargo test --release" || line.starts_with("alias "),
                    "a README command the tour does not know: {line}"
                );
                continue;
            };
            let out = std::process::Command::new(bin)
                .args(args.split_whitespace())
                .current_dir(&dir)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "README: `{line}` failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
            ran.push(args.split_whitespace().next().unwrap().to_string());
        }
    }
    for cmd in ["run", "plot", "compare", "sweep", "report"] {
        assert!(
            ran.iter().any(|c| c == cmd),
            "the tour runs `{cmd}`: {ran:?}"
        );
    }
    assert!(dir.join("report.html").is_file());
    assert!(dir.join("out/memcg-low-step/pivot.csv").is_file());
}

#[test]
fn shipped_scenarios_validate() {
    // scenarios/full/ holds the seed experiments at the seeds' own sizes: validated
    // here, too big for the suite to run (docs/experiments/ give their sweeps' wall time).
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

/// docs/scenario-keys.md is what the scenario's types give (`scenario::keys_doc`):
/// a key added, renamed or re-documented without the page fails here.
#[test]
fn scenario_key_reference_is_current() {
    let want = reclaimsim::scenario::keys_doc::key_reference();
    let path = Path::new(ROOT).join("docs/scenario-keys.md");
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(&path, &want).unwrap();
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    if have != want {
        let line = have
            .lines()
            .zip(want.lines())
            .position(|(a, b)| a != b)
            .map_or(have.lines().count().min(want.lines().count()), |i| i)
            + 1;
        panic!(
            "docs/scenario-keys.md differs from the scenario's types from line {line}; \
             `UPDATE_DOCS=1 cargo test --release --test docs` rewrites it"
        );
    }
}

/// A second way to the keys: every key the shipped scenarios write, read from their
/// TOML, is a key of the reference (arrays of tables as `[]`).
#[test]
fn every_key_the_shipped_scenarios_use_is_in_the_reference() {
    let reference: std::collections::BTreeSet<String> = reclaimsim::scenario::keys_doc::tables()
        .into_iter()
        .flat_map(|t| t.keys.into_iter().map(|k| k.path))
        .collect();
    fn walk(
        v: &toml::Value,
        path: &str,
        reference: &std::collections::BTreeSet<String>,
        seen: &mut Vec<String>,
    ) {
        // A key of the reference that holds a table (a map, `with`) ends the walk.
        if reference.contains(path) {
            seen.push(path.to_string());
            return;
        }
        let join = |k: &str| {
            if path.is_empty() {
                k.to_string()
            } else {
                format!("{path}.{k}")
            }
        };
        match v {
            toml::Value::Table(t) => {
                for (k, v) in t {
                    walk(v, &join(k), reference, seen);
                }
            }
            toml::Value::Array(a) if a.iter().all(toml::Value::is_table) && !a.is_empty() => {
                for v in a {
                    walk(v, &format!("{path}[]"), reference, seen);
                }
            }
            _ => seen.push(path.to_string()),
        }
    }
    let root = Path::new(ROOT).join("scenarios");
    let mut files = Vec::new();
    // (scenarios/damon-suite/ holds `phases` programs, not scenarios.)
    for dir in [root.clone(), root.join("full")] {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|e| e == "toml") {
                files.push(p);
            }
        }
    }
    let mut n = 0;
    for f in files {
        let v: toml::Value = toml::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        let mut seen = Vec::new();
        walk(&v, "", &reference, &mut seen);
        for k in seen {
            assert!(
                reference.contains(&k),
                "{}: `{k}` is not in docs/scenario-keys.md",
                f.display()
            );
            n += 1;
        }
    }
    assert!(n > 200, "{n}");
}
