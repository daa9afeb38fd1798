//! The Python package (python/): built with maturin into a throw-away venv with pandas,
//! pytest, Ray and matplotlib from PyPI, then its pytest suite (python/tests: the API
//! against the CLI, sweeps on a local two-worker Ray cluster, the examples) run
//! against this build's CLI. The native module builds into target/python (its own cargo target directory,
//! so the nested cargo never waits on this one's lock; incremental between runs).

use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_reclaimsim");

/// Runs `cmd` to success; its standard output.
fn run(cmd: &mut Command, what: &str) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// PATH with `dir` first.
fn path_with(dir: &Path) -> std::ffi::OsString {
    let mut paths = vec![dir.to_path_buf()];
    paths.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(paths).expect("paths without separators")
}

#[test]
fn the_python_package_passes_its_tests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let venv = dir.path().join("venv");
    run(
        Command::new("python3").args(["-m", "venv"]).arg(&venv),
        "python3 -m venv",
    );
    let pip = venv.join("bin/pip");
    run(
        Command::new(&pip).args([
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "maturin>=1.5,<2",
            "pandas>=2",
            "pytest>=7",
            "ray>=2.9",
            "matplotlib>=3.7",
        ]),
        "pip install maturin pandas pytest ray matplotlib",
    );
    // Without build isolation: the maturin just installed builds it.
    run(
        Command::new(&pip)
            .args([
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--no-build-isolation",
            ])
            .arg(root.join("python"))
            .env("CARGO_TARGET_DIR", root.join("target/python"))
            // maturin's build hook runs the `maturin` next to it by PATH.
            .env("PATH", path_with(&venv.join("bin"))),
        "pip install ./python",
    );
    // -rsxX lists any test skipped or expected to fail, with its reason: each is a
    // test that did not run, and fails this one (a broken `import ray` must not turn
    // into skips).
    let out = run(
        Command::new(venv.join("bin/python"))
            .args(["-m", "pytest", "-q", "-rsxX", "-p", "no:cacheprovider"])
            .arg(root.join("python/tests"))
            .env("RECLAIMSIM_BIN", BIN)
            .env("RECLAIMSIM_ROOT", root)
            .current_dir(root),
        "pytest python/tests",
    );
    let summary = out
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    for word in ["skipped", "xfailed", "xpassed", "deselected"] {
        assert!(
            !summary.contains(word),
            "pytest python/tests: tests that did not run ({summary}):\n{out}"
        );
    }
    assert!(summary.contains(" passed"), "{out}");
}
