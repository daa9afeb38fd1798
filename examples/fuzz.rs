//! `cargo run --release --example fuzz -- [--minutes N | --cases N] [--seed S]
//! [--jobs J] [--failures DIR] [--bin PATH]`: runs generated inputs through the
//! reclaimsim binary (built first, in release, unless --bin names one) and reports every case that panicked, hung, aborted, broke
//! an invariant, took too much memory or was rejected without naming a key. Failing
//! cases are saved under DIR (default fuzz-failures/) to reproduce with
//! `reclaimsim run DIR/case-N/case.toml --set ...`. Exits 1 if any case failed.

use reclaimsim::fuzz::{self, Corpus, Generator, Limits};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

struct Args {
    minutes: Option<f64>,
    cases: Option<u64>,
    seed: u64,
    jobs: usize,
    failures: PathBuf,
    bin: Option<PathBuf>,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        minutes: None,
        cases: None,
        seed: 1,
        jobs: 1,
        failures: PathBuf::from("fuzz-failures"),
        bin: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = |name: &str| it.next().ok_or(format!("{name} needs a value"));
        match flag.as_str() {
            "--minutes" => {
                a.minutes = Some(
                    value("--minutes")?
                        .parse()
                        .map_err(|e| format!("--minutes: {e}"))?,
                )
            }
            "--cases" => {
                a.cases = Some(
                    value("--cases")?
                        .parse()
                        .map_err(|e| format!("--cases: {e}"))?,
                )
            }
            "--seed" => {
                a.seed = value("--seed")?
                    .parse()
                    .map_err(|e| format!("--seed: {e}"))?
            }
            "--jobs" => {
                a.jobs = value("--jobs")?
                    .parse()
                    .map_err(|e| format!("--jobs: {e}"))?
            }
            "--failures" => a.failures = PathBuf::from(value("--failures")?),
            "--bin" => a.bin = Some(PathBuf::from(value("--bin")?)),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    if a.minutes.is_none() && a.cases.is_none() {
        a.cases = Some(200);
    }
    Ok(a)
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e}\nusage: fuzz [--minutes N | --cases N] [--seed S] [--jobs J] [--failures DIR] [--bin PATH]");
            std::process::exit(2);
        }
    };
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    // The binary under test: as given (a copy a long run keeps while the tree is
    // rebuilt), or built as cargo builds it for `run`.
    let bin = match args.bin.clone() {
        Some(b) => b,
        None => {
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let built = std::process::Command::new(cargo)
                .args(["build", "--release", "--bin", "reclaimsim"])
                .current_dir(&root)
                .status();
            if !built.is_ok_and(|s| s.success()) {
                eprintln!("error: building the reclaimsim binary failed");
                std::process::exit(1);
            }
            let target = std::env::var("CARGO_TARGET_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|_| root.join("target"));
            target.join("release/reclaimsim")
        }
    };
    let corpus = match Corpus::load(&root.join("scenarios")) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: scenarios/: {e}");
            std::process::exit(1);
        }
    };
    let generator = Arc::new(Mutex::new(Generator::new(corpus, args.seed)));
    let deadline = args
        .minutes
        .map(|m| Instant::now() + Duration::from_secs_f64(m * 60.0));
    let started = Instant::now();
    let ran = Arc::new(AtomicU64::new(0));
    let failed = Arc::new(AtomicU64::new(0));
    let completed = Arc::new(AtomicU64::new(0));
    let scratch = std::env::temp_dir().join(format!("reclaimsim-fuzz-{}", std::process::id()));
    let workers: Vec<_> = (0..args.jobs.max(1))
        .map(|j| {
            let (generator, ran, failed) = (generator.clone(), ran.clone(), failed.clone());
            let completed = completed.clone();
            let (bin, failures, work) = (
                bin.clone(),
                args.failures.clone(),
                scratch.join(j.to_string()),
            );
            let cases = args.cases;
            std::thread::spawn(move || loop {
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    break;
                }
                let case = {
                    let mut g = generator.lock().unwrap_or_else(|e| e.into_inner());
                    if cases.is_some_and(|n| ran.load(Ordering::SeqCst) >= n) {
                        break;
                    }
                    ran.fetch_add(1, Ordering::SeqCst);
                    g.next_case()
                };
                let outcome = fuzz::run_case(&bin, &work, &case, &Limits::default());
                if matches!(outcome, Ok(fuzz::Pass::Ran)) {
                    completed.fetch_add(1, Ordering::SeqCst);
                }
                if let Err(f) = outcome {
                    failed.fetch_add(1, Ordering::SeqCst);
                    let saved = fuzz::save_failure(&failures, &f)
                        .map(|p| p.display().to_string())
                        .unwrap_or_else(|e| format!("(not saved: {e})"));
                    eprintln!(
                        "FAIL case {} ({}): {} -> {saved}",
                        case.id, case.kind, f.why
                    );
                }
                let n = ran.load(Ordering::SeqCst);
                if n % 100 == 0 {
                    eprintln!(
                        "{n} cases, {} failed, {:.0} s",
                        failed.load(Ordering::SeqCst),
                        started.elapsed().as_secs_f64()
                    );
                }
            })
        })
        .collect();
    for w in workers {
        let _ = w.join();
    }
    let _ = std::fs::remove_dir_all(&scratch);
    let (n, f) = (ran.load(Ordering::SeqCst), failed.load(Ordering::SeqCst));
    println!(
        "{} passed, {f} failed ({} ran to the end, {} rejected with a message; {:.1} min, seed {})",
        n - f,
        completed.load(Ordering::SeqCst),
        n - f - completed.load(Ordering::SeqCst),
        started.elapsed().as_secs_f64() / 60.0,
        args.seed
    );
    if f > 0 {
        std::process::exit(1);
    }
}
