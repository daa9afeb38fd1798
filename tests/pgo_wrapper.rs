//! pgo/rustc-wrapper: which compilations get the committed profile. A stand-in rustc
//! prints the arguments it was given, and the LLVM version it is told to claim.
#![cfg(unix)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A fake rustc in a fresh directory: `-vV` reports LLVM `llvm`, anything else echoes
/// its arguments one per line.
fn fake_rustc(dir: &Path, llvm: &str) -> PathBuf {
    let p = dir.join("rustc");
    let script = format!(
        "#!/bin/sh\nif [ \"$1\" = -vV ]; then echo 'rustc 1.0.0'; echo 'LLVM version: {llvm}'; exit 0; fi\nfor a in \"$@\"; do echo \"$a\"; done\n"
    );
    std::fs::write(&p, script).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

/// The arguments the wrapper hands rustc for `args`, with the fake claiming `llvm`.
fn wrapped(llvm: &str, args: &[&str]) -> Vec<String> {
    // A directory per call: tests run in parallel, and a script being run cannot be
    // rewritten (ETXTBSY).
    static CALLS: AtomicUsize = AtomicUsize::new(0);
    let n = CALLS.fetch_add(1, Ordering::Relaxed);
    let dir =
        std::env::temp_dir().join(format!("reclaimsim-pgo-wrapper-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rustc = fake_rustc(&dir, llvm);
    let wrapper = Path::new(env!("CARGO_MANIFEST_DIR")).join("pgo/rustc-wrapper");
    let out = Command::new(wrapper)
        .arg(&rustc)
        .args(args)
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

fn committed_major() -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("pgo/llvm-major");
    std::fs::read_to_string(p).unwrap().trim().to_string()
}

#[test]
fn every_workspace_crate_gets_the_profile_from_the_llvm_that_wrote_it() {
    let llvm = format!("{}.1.0", committed_major());
    let profile = Path::new(env!("CARGO_MANIFEST_DIR")).join("pgo/reclaimsim.profdata");
    assert!(profile.is_file(), "the profile is committed");
    // The hit loops run in the top crate, the code they call in the kernel model:
    // both need the profile, and the trace readers and cache policies too.
    for krate in [
        "reclaimsim",
        "reclaimsim_mm",
        "reclaimsim_trace",
        "reclaimsim_cache",
    ] {
        let args = wrapped(&llvm, &["--crate-name", krate, "src/lib.rs"]);
        assert_eq!(args[..3], ["--crate-name", krate, "src/lib.rs"]);
        assert_eq!(
            args[3..],
            [
                format!("-Cprofile-use={}", profile.display()),
                "--cfg".to_string(),
                "reclaimsim_pgo".to_string(),
            ],
            "{krate}"
        );
    }
}

#[test]
fn other_crates_another_llvm_and_instrumented_builds_pass_through() {
    let llvm = format!("{}.1.0", committed_major());
    let other = ["--crate-name", "reclaimsim_extra", "x.rs"];
    assert_eq!(wrapped(&llvm, &other), other);
    let mine = ["--crate-name", "reclaimsim", "src/lib.rs"];
    let next_major = committed_major().parse::<u32>().unwrap() + 1;
    assert_eq!(wrapped(&format!("{next_major}.0.0"), &mine), mine);
    let gen = [
        "--crate-name",
        "reclaimsim",
        "src/lib.rs",
        "-Cprofile-generate=/tmp/raw",
    ];
    assert_eq!(wrapped(&llvm, &gen), gen);
}
