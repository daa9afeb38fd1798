//! The `reclaimsim` command: a thin layer over the library.

use clap::{Parser, Subcommand};
use reclaimsim::cache::run::CacheSize;
use reclaimsim::report::{self, outdir::OutDir};
use reclaimsim::scenario;
use reclaimsim::sim::{RunOptions, Simulation};
use reclaimsim::sweep;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

mod progress;

#[derive(Parser)]
#[command(
    name = "reclaimsim",
    version,
    about = "Deterministic simulator of Linux memory reclaim",
    long_about = "Deterministic simulator of Linux memory reclaim: describe a machine, kernel \
settings, a cgroup tree and workloads in a TOML scenario; reclaimsim runs it in virtual \
time and reports /proc/vmstat, memory.stat, PSI, tracepoints and the workloads' \
throughput and latency. Same scenario and seed, byte-identical results.\n\n\
Exit status: 0 success, 1 a run failed (an invariant, an I/O error), 2 bad input \
(scenario, flags, files), 130 interrupted."
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

/// `--lru-gen`'s format: the debugfs `lru_gen` file or `lru_gen_full`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum LruGenFormat {
    Basic,
    Full,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a scenario: print a summary, write DIR/results.json and DIR/timeseries.csv.
    Run {
        /// The scenario file (TOML).
        scenario: PathBuf,
        /// Output directory (default: out/<scenario name>). Created and locked before
        /// the run; result files of an earlier run in it are removed first.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Override run.seed (0 to 9223372036854775807: a TOML integer).
        #[arg(long, value_parser = parse_seed)]
        seed: Option<u64>,
        /// Override a scenario key, e.g. --set kernel.vm.swappiness=10 (repeatable;
        /// later ones win).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
        /// Check every invariant at every sample (slower).
        #[arg(long)]
        check: bool,
        /// Do not print the summary.
        #[arg(long, short)]
        quiet: bool,
        /// Print progress lines on stderr even when it is not a terminal (on a
        /// terminal a progress bar appears for runs longer than a second).
        #[arg(long)]
        progress: bool,
        /// Write tracepoints (comma-separated kernel event names, or `all`) to
        /// DIR/trace.txt, ftrace-style.
        #[arg(long, value_name = "EVENT,...")]
        trace: Option<String>,
        /// Most trace lines kept; later events are counted in a closing "dropped" line.
        #[arg(long, default_value_t = reclaimsim::stats::trace::DEFAULT_LIMIT)]
        trace_limit: usize,
        /// Write /sys/kernel/debug/lru_gen (`full`: lru_gen_full) at every sample to
        /// DIR/lru_gen.txt (with kernel.lru = "mglru").
        #[arg(long, value_name = "FORMAT", num_args = 0..=1, default_missing_value = "basic")]
        lru_gen: Option<LruGenFormat>,
        /// Write DAMON's monitoring results (every target's regions at every
        /// aggregation) to DIR/damon.data, the record format `damo report` reads.
        #[arg(long)]
        damon_record: bool,
        /// Write each workload thread's page accesses to DIR/accesses/NAME.txt.zst (a
        /// text trace, `PAGE r|w` per line, that a `trace` workload replays). Every
        /// access then goes through the fault path: slower, same outcomes.
        #[arg(long)]
        record_accesses: bool,
        /// Write kernel views at every sample to DIR/NAME.txt: buddyinfo,
        /// pagetypeinfo, unusable_index, extfrag_index (comma-separated, or `all`).
        #[arg(long, value_name = "NAME,...")]
        proc: Option<String>,
    },
    /// Check a scenario without running it; with a [sweep], say how many points it has
    /// and roughly how long they take.
    Validate {
        /// The scenario file (TOML).
        scenario: PathBuf,
        /// Override a scenario key (repeatable), as for `run`.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
        /// Override run.seed.
        #[arg(long, value_parser = parse_seed)]
        seed: Option<u64>,
    },
    /// Measure the simulator's speed and memory (see BENCHMARKS.md).
    Bench {
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
        /// Smaller runs (for a smoke test; the figures are noisier).
        #[arg(long)]
        quick: bool,
        /// Also the 1 TiB machine under pressure (sim_secs_per_sec_1t,
        /// peak_rss_bytes_1t): a couple of minutes and about 12 GiB of host memory.
        #[arg(long)]
        large: bool,
    },
    /// Run every point of the scenario's [sweep] (in parallel, resuming completed ones)
    /// and write DIR/sweep.csv.
    Sweep {
        /// The scenario file (TOML) with a [sweep] table.
        scenario: PathBuf,
        /// Output directory: DIR/point-NNN/ per point, DIR/sweep.json (the points),
        /// DIR/sweep.csv. Points already complete there for the same resolved
        /// scenario are kept; changed ones are rerun.
        #[arg(long)]
        out: PathBuf,
        /// Override a scenario key in every point (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
        /// Override run.seed in every point.
        #[arg(long, value_parser = parse_seed)]
        seed: Option<u64>,
        /// Points run at once (default: one per core).
        #[arg(long)]
        jobs: Option<usize>,
        /// Check every invariant at every sample of every point (slower).
        #[arg(long)]
        check: bool,
        /// Run a sweep of more than 10,000 points.
        #[arg(long)]
        yes: bool,
        /// Print neither the table nor progress lines.
        #[arg(long, short)]
        quiet: bool,
        /// Run each point as a Ray task: on the cluster at ADDRESS (`ray://HOST:PORT`
        /// or `HOST:PORT`), or on a local Ray with --jobs workers when no address is
        /// given. Needs the Python package with Ray (`pip install './python[ray]'`) in
        /// `python3` (or $RECLAIMSIM_PYTHON); same DIR layout, resume and progress.
        #[arg(long, value_name = "ADDRESS", num_args = 0..=1, default_missing_value = "local")]
        ray: Option<String>,
    },
    /// Run replacement policies alone over a trace, as a cache simulator (no time,
    /// no kernel): requests, misses and miss ratio per policy and cache size. With
    /// --json, `reclaimsim plot` draws the file as a miss ratio curve.
    Cache {
        /// The trace file (libCacheSim oracleGeneral, CSV, valgrind lackey, a damo
        /// record, or text: a key per line).
        trace: PathBuf,
        /// The policies, comma-separated (lru, fifo, clock, sieve, s3fifo, arc): each
        /// runs at every size.
        #[arg(long, value_delimiter = ',', required = true, value_name = "P[,P...]")]
        policy: Vec<String>,
        /// Cache sizes, comma-separated: bytes (4096, 64M, 1G; objects with
        /// --ignore-obj-size) or fractions of the trace's working set (0.01, 0.1).
        #[arg(long, value_delimiter = ',', required = true, value_name = "S[,S...]")]
        size: Vec<String>,
        /// The trace's format (default: from its name; `oracleGeneral`, `csv`,
        /// `lackey`, `damo` (damo's record, as --damon-record writes DIR/damon.data:
        /// DAMON's regions replayed, a 4 KiB page per request; guessed for `*.data`
        /// and `damon.data*`) or `text`).
        #[arg(long)]
        format: Option<String>,
        /// CSV columns as libCacheSim names them: `obj-id-col=2,obj-size-col=3,
        /// time-col=1,has-header=1,delimiter=tab,obj-id-is-num=0`.
        #[arg(long, value_name = "OPTIONS")]
        trace_options: Option<String>,
        /// Count every object as 1 (sizes are then object counts).
        #[arg(long)]
        ignore_obj_size: bool,
        /// Print one JSON object: `results`, a row per policy and size (policy,
        /// cache_size, requests, misses, miss_ratio, byte_miss_ratio, ...), `size_unit`
        /// (bytes or objects); with one policy also `policy` and `sizes`, its rows.
        /// `reclaimsim plot` draws the file as a miss ratio curve.
        #[arg(long)]
        json: bool,
        /// Write the output (text or JSON) to this file instead of stdout.
        #[arg(long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Draw charts of a run or sweep directory into DIR/plots/, or the miss ratio
    /// curve of a `cache --json` file into plots/ beside it as NAME-mrc (SVG and PNG).
    Plot {
        /// A run directory (results.json, timeseries.csv), a sweep directory, or a JSON
        /// file `reclaimsim cache --json` wrote (recognised by its content).
        dir: PathBuf,
    },
    /// Write one self-contained HTML page of runs and sweeps: what was run, the
    /// mmtests compare table (two or more runs), a sweep's points and seed table, and
    /// the charts as inline SVG.
    Report {
        /// Run directories (results.json, timeseries.csv) or sweep directories
        /// (sweep.json); the first run is the compare table's baseline.
        #[arg(required = true, num_args = 1.., value_name = "DIR")]
        dirs: Vec<PathBuf>,
        /// The HTML file to write (replaced whole, never left partial).
        #[arg(long, value_name = "FILE.html")]
        out: PathBuf,
        /// Name the next directory (repeatable: one per directory, in order; default:
        /// the shortest distinct suffix of each directory's path).
        #[arg(long = "label", value_name = "NAME")]
        labels: Vec<String>,
    },
    /// Internal: fill a 64 GiB machine (or, with --idle-1t, run a 1 GiB workload on a
    /// 1 TiB machine) and report peak RSS; with --pressure-1t, run big1t.toml and report
    /// its speed under reclaim and peak RSS (run by `bench`).
    #[command(hide = true)]
    BenchRss {
        #[arg(long)]
        idle_1t: bool,
        /// Run benches/scale/big1t.toml; print its speed under reclaim and peak RSS.
        #[arg(long)]
        pressure_1t: bool,
    },
    /// Compare runs mmtests-style, the first as the baseline: latency, throughput, CPU
    /// time and reclaim counters, with % gains and Welch's t-test significance.
    Compare {
        /// Run directories holding results.json (or results.json files); with --by,
        /// one sweep directory.
        #[arg(required = true, num_args = 1.., value_name = "RUN")]
        runs: Vec<PathBuf>,
        /// Compare the points of one sweep directory: a column per value of this swept
        /// key, the other swept values as row suffixes (`mmap-4`), counters summed.
        #[arg(long, value_name = "KEY")]
        by: Option<String>,
        /// Name the next run's column (repeatable: one per run, in order; default: the
        /// shortest distinct suffix of each run's path).
        #[arg(long = "label", value_name = "NAME")]
        labels: Vec<String>,
        /// Output format.
        #[arg(long, default_value = "text", value_parser = ["text", "md", "csv", "json"])]
        format: String,
    },
}

/// Exit status of an interrupted run or sweep (128 + SIGINT, as a shell reports it).
const EXIT_INTERRUPTED: u8 = 130;

/// Ctrl-C sets the flag the run polls; a second Ctrl-C exits at once.
fn interrupt_flag() -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    let f = flag.clone();
    let _ = ctrlc::set_handler(move || {
        if f.swap(true, Ordering::SeqCst) {
            std::process::exit(EXIT_INTERRUPTED as i32);
        }
        eprintln!(
            "\ninterrupted: finishing at the current virtual time (Ctrl-C again to quit at once)"
        );
    });
    flag
}

/// `sweep --ray`: the Python package's Ray driver (`python3 -m reclaimsim.ray_sweep`)
/// runs the points; its exit code is this command's.
fn cmd_ray_sweep(
    scenario: PathBuf,
    out: PathBuf,
    sets: Vec<String>,
    jobs: Option<usize>,
    check: bool,
    quiet: bool,
    address: String,
) -> ExitCode {
    let python = std::env::var_os("RECLAIMSIM_PYTHON").unwrap_or_else(|| "python3".into());
    let mut cmd = std::process::Command::new(&python);
    cmd.args(["-m", "reclaimsim.ray_sweep"])
        .arg(&scenario)
        .arg("--out")
        .arg(&out);
    if address != "local" {
        cmd.args(["--address", &address]);
    }
    if let Some(j) = jobs {
        cmd.args(["--num-cpus", &j.to_string()]);
    }
    for s in &sets {
        cmd.args(["--set", s]);
    }
    if check {
        cmd.arg("--check");
    }
    if quiet {
        cmd.arg("-q");
    }
    match cmd.status() {
        Ok(st) => ExitCode::from(st.code().unwrap_or(1).clamp(0, 255) as u8),
        Err(e) => fail(
            2,
            format!(
                "--ray: cannot run {} (the Python package with Ray: pip install './python[ray]'): {e}",
                python.to_string_lossy()
            ),
        ),
    }
}

fn with_seed(mut sets: Vec<String>, seed: Option<u64>) -> Vec<String> {
    if let Some(s) = seed {
        sets.push(format!("run.seed={s}"));
    }
    sets
}

fn fail(code: u8, msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {msg}");
    ExitCode::from(code)
}

/// A `--size` of `reclaimsim cache`: `4096`, `64M`, `1G` (sizes as scenarios write
/// them) or `0.1` (a fraction of the working set, in (0, 1]).
fn parse_cache_size(s: &str) -> Result<CacheSize, String> {
    let s = s.trim();
    if s.contains('.') {
        return match s.parse::<f64>() {
            Ok(f) if f > 0.0 && f <= 1.0 => Ok(CacheSize::Fraction(f)),
            _ => Err(format!(
                "`{s}`: expected a fraction of the working set in (0, 1], or a size like 64M"
            )),
        };
    }
    match reclaimsim::units::parse_size(s) {
        Ok(0) | Err(_) => Err(format!(
            "`{s}`: expected a size like 4096, 64M or 1G (more than 0), or a fraction like 0.1"
        )),
        Ok(b) => Ok(CacheSize::Absolute(b)),
    }
}

#[allow(clippy::too_many_arguments)]
fn cmd_cache(
    trace: PathBuf,
    policies: Vec<String>,
    sizes: Vec<String>,
    format: Option<String>,
    trace_options: Option<String>,
    ignore_obj_size: bool,
    json: bool,
    output: Option<PathBuf>,
) -> ExitCode {
    use reclaimsim::cache::run;
    use reclaimsim::trace::Format;
    let mut format = match format.as_deref() {
        None => Format::guess(&trace),
        Some(f) => match Format::parse(f) {
            Some(f) => f,
            None => {
                return fail(
                    2,
                    format!(
                        "--format: unknown format `{f}` (oracleGeneral, csv, lackey, damo, text)"
                    ),
                )
            }
        },
    };
    if let Some(o) = trace_options {
        match (&mut format, reclaimsim::trace::csv::CsvOptions::parse(&o)) {
            (Format::Csv(opts), Ok(parsed)) => *opts = parsed,
            (Format::Csv(_), Err(e)) => return fail(2, format!("--trace-options: {e}")),
            _ => return fail(2, "--trace-options: only for --format csv"),
        }
    }
    let sizes: Result<Vec<_>, _> = sizes.iter().map(|s| parse_cache_size(s)).collect();
    let sizes = match sizes {
        Ok(s) => s,
        Err(e) => return fail(2, format!("--size: {e}")),
    };
    let names: Vec<&str> = policies.iter().map(|p| p.trim()).collect();
    if let Err(e) = run::policies(&names) {
        return fail(2, format!("--policy: {e}"));
    }
    let (ws, runs) = match run::run(&trace, format, &names, &sizes, ignore_obj_size) {
        Ok(x) => x,
        Err(e) => return fail(2, e),
    };
    let objects = ignore_obj_size || format.unit_sizes();
    let out = if json {
        let report = run::Report::new(&trace, ignore_obj_size, objects, ws, &runs);
        serde_json::to_string_pretty(&report).expect("plain JSON") + "\n"
    } else {
        let name = trace.file_name().map_or_else(
            || trace.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        run::format_text(&name, &runs, objects)
    };
    match output {
        None => print!("{out}"),
        Some(path) => {
            if let Err(e) = report::write_atomic(&path, out.as_bytes()) {
                return fail(1, format!("writing {}: {e}", path.display()));
            }
        }
    }
    ExitCode::SUCCESS
}

fn human_time(s: f64) -> String {
    if s >= 3600.0 {
        format!("{:.1} h", s / 3600.0)
    } else if s >= 120.0 {
        format!("{:.1} min", s / 60.0)
    } else if s >= 1.0 {
        format!("{s:.1} s")
    } else {
        "under a second".to_string()
    }
}

fn default_jobs(jobs: Option<usize>) -> usize {
    jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1)
}

#[allow(clippy::too_many_arguments)]
fn cmd_run(
    scenario: PathBuf,
    out: Option<PathBuf>,
    seed: Option<u64>,
    sets: Vec<String>,
    check: bool,
    quiet: bool,
    show_progress: bool,
    trace: Option<String>,
    trace_limit: usize,
    lru_gen: Option<LruGenFormat>,
    damon_record: bool,
    record_accesses: bool,
    proc: Option<String>,
) -> ExitCode {
    let proc_files = match proc.as_deref().map(parse_proc_files).transpose() {
        Ok(p) => p.unwrap_or_default(),
        Err(e) => return fail(2, format!("--proc: {e}")),
    };
    let tracer = match trace
        .map(|t| reclaimsim::stats::trace::Tracer::parse(&t, trace_limit))
        .transpose()
    {
        Ok(t) => t,
        Err(e) => return fail(2, format!("--trace: {e}")),
    };
    let sets = with_seed(sets, seed);
    let sc = match load_scenario(&scenario, &sets) {
        Ok(sc) => sc,
        Err(e) => return fail(2, e),
    };
    if let Err(e) = reclaimsim::host_memory::check_file(&sc, &scenario, &sets) {
        return fail(2, e);
    }
    if damon_record {
        let kdamonds = reclaimsim::scenario::mm_config::damon_configs(&sc);
        if kdamonds.is_empty() {
            return fail(
                2,
                format!(
                    "--damon-record: {} runs no kdamond (no [[damon.kdamonds]], no [damon_reclaim])",
                    scenario.display()
                ),
            );
        }
        // Configured but off, and no timed action turns one on: the run goes ahead,
        // but its record will hold no snapshot.
        let turned_on = sc
            .actions
            .iter()
            .any(|a| a.set.as_deref().is_some_and(|k| k.starts_with("damon")));
        if !kdamonds.iter().any(|k| k.on) && !turned_on {
            eprintln!(
                "warning: --damon-record: no kdamond of {} is on ([damon_reclaim] enabled = \
                 false, every [[damon.kdamonds]] state \"off\") and no action turns one on: \
                 damon.data will hold no snapshot (--set damon_reclaim.enabled=true, or a \
                 kdamond's state = \"on\")",
                scenario.display()
            );
        }
    }
    let out = out.unwrap_or_else(|| {
        PathBuf::from("out").join(
            scenario
                .file_stem()
                .map(|s| s.to_os_string())
                .unwrap_or_else(|| "run".into()),
        )
    });
    // The output directory is made, probed and locked before anything is simulated.
    let dir = match OutDir::acquire(&out, &format!("run {}", scenario.display())) {
        Ok(d) => d,
        Err(e) => return fail(2, e),
    };
    let accesses_dir = out.join("accesses");
    let cleared =
        dir.clear(&report::RUN_FILES)
            .and_then(|_| match std::fs::remove_dir_all(&accesses_dir) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
                _ => Ok(()),
            });
    if let Err(e) = cleared {
        return fail(
            2,
            format!("{}: removing an earlier run's results: {e}", out.display()),
        );
    }
    let started = Instant::now();
    let mut bar = progress::RunProgress::new(show_progress);
    let interrupt = interrupt_flag();
    let opts = RunOptions {
        check,
        progress: Some(Box::new(move |now, end| bar.update(now, end))),
        interrupt: Some(interrupt),
        lru_gen: lru_gen.map(|f| f == LruGenFormat::Full),
        proc_files,
    };
    let mut sim = Simulation::new(sc);
    if let Some(t) = tracer {
        sim.enable_trace(t);
    }
    if damon_record {
        sim.enable_damon_record();
    }
    if record_accesses {
        let made = std::fs::create_dir_all(&accesses_dir).map_err(|e| e.to_string());
        if let Err(e) = made.and_then(|_| sim.enable_record_accesses(&accesses_dir)) {
            return fail(2, format!("--record-accesses: {e}"));
        }
    }
    let run = match report::run_with_series(sim, opts) {
        Ok(x) => x,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&accesses_dir);
            return fail(1, e);
        }
    };
    let results = run.results;
    let written = report::write_run_dir(&out, &results, &run.series)
        .and_then(|_| match &run.trace {
            Some(t) => report::write_atomic(&out.join("trace.txt"), t.as_bytes()),
            None => Ok(()),
        })
        .and_then(|_| match &run.lru_gen {
            Some(t) => report::write_atomic(&out.join("lru_gen.txt"), t.as_bytes()),
            None => Ok(()),
        })
        .and_then(|_| {
            run.proc_files.iter().try_for_each(|(f, text)| {
                report::write_atomic(&out.join(format!("{}.txt", f.name())), text.as_bytes())
            })
        })
        .and_then(|_| match &run.damon_record {
            Some(r) => {
                report::write_atomic(&out.join("damon.data"), &report::damon_record::encode(r))
            }
            None => Ok(()),
        });
    if let Err(e) = written {
        let _ = dir.clear(&report::RUN_FILES);
        let _ = std::fs::remove_dir_all(&accesses_dir);
        return fail(1, format!("writing {}: {e}", out.display()));
    }
    if !quiet {
        print!("{}", report::summary(&results));
        println!(
            "\nwrote {}/results.json and timeseries.csv ({:.2}s wall)",
            out.display(),
            started.elapsed().as_secs_f64()
        );
        for (path, n) in &run.recorded {
            println!("recorded {n} accesses to {}", path.display());
        }
    }
    if results.interrupted {
        eprintln!(
            "interrupted at {:.3} s of virtual time: {}/results.json says \"interrupted\": true",
            results.duration_ns as f64 / 1e9,
            out.display()
        );
        return ExitCode::from(EXIT_INTERRUPTED);
    }
    ExitCode::SUCCESS
}

/// Loads a scenario as every command does: parsed and validated, and its sweep metrics
/// checked against the results the points report.
fn load_scenario(
    path: &std::path::Path,
    sets: &[String],
) -> Result<reclaimsim::scenario::Scenario, scenario::ScenarioError> {
    let sc = scenario::load(path, sets)?;
    sweep::check_metrics(&sc)?;
    Ok(sc)
}

fn cmd_validate(scenario: PathBuf, sets: Vec<String>, seed: Option<u64>) -> ExitCode {
    let sets = with_seed(sets, seed);
    let sc = match load_scenario(&scenario, &sets) {
        Ok(sc) => sc,
        Err(e) => return fail(2, e),
    };
    let fits = match sc.sweep {
        Some(_) => sweep::check_host_memory(&sc, &scenario, &sets),
        None => reclaimsim::host_memory::check_file(&sc, &scenario, &sets),
    };
    if let Err(e) = fits {
        return fail(2, e);
    }
    println!(
        "{}: ok ({} workloads, {} actions)",
        scenario.display(),
        sc.workloads.len(),
        sc.actions.len()
    );
    if sc.sweep.is_some() {
        let jobs = default_jobs(None);
        let e = sweep::estimate(&sc, jobs, 0.5);
        println!(
            "sweep: {} points, {} of virtual time in all; roughly {} of wall time on {jobs} jobs here (from a short probe of the first point)",
            e.points,
            human_time(e.simulated_ns as f64 / 1e9),
            human_time(e.wall_s),
        );
    }
    ExitCode::SUCCESS
}

#[allow(clippy::too_many_arguments)]
fn cmd_sweep(
    scenario: PathBuf,
    out: PathBuf,
    sets: Vec<String>,
    seed: Option<u64>,
    jobs: Option<usize>,
    check: bool,
    yes: bool,
    quiet: bool,
    ray: Option<String>,
) -> ExitCode {
    let sets = with_seed(sets, seed);
    let sc = match load_scenario(&scenario, &sets) {
        Ok(sc) => sc,
        Err(e) => return fail(2, e),
    };
    let Some(points) = sweep::size(&sc) else {
        return fail(
            2,
            format!(
                "{}: sweep: the scenario has no [sweep] table",
                scenario.display()
            ),
        );
    };
    if points > sweep::CONFIRM_POINTS && !yes {
        return fail(2, sweep::SweepError::TooMany { points });
    }
    if let Err(e) = sweep::check_host_memory(&sc, &scenario, &sets) {
        return fail(2, e);
    }
    // Checked as for a local sweep; Ray's driver runs the points.
    if let Some(address) = ray {
        return cmd_ray_sweep(scenario, out, sets, jobs, check, quiet, address);
    }
    let jobs = default_jobs(jobs);
    if !quiet {
        let e = sweep::estimate(&sc, jobs, 0.5);
        eprintln!(
            "sweep: {} points, {} of virtual time in all; roughly {} of wall time on {jobs} jobs (from a short probe)",
            e.points,
            human_time(e.simulated_ns as f64 / 1e9),
            human_time(e.wall_s),
        );
    }
    let progress = Arc::new(progress::SweepProgress::new(jobs, quiet));
    let (plan, done) = (progress.clone(), progress.clone());
    let opts = sweep::SweepOptions {
        jobs,
        check,
        yes,
        interrupt: Some(interrupt_flag()),
        on_plan: Some(Box::new(move |n, to_run| plan.plan(n, to_run))),
        on_point: Some(Box::new(move |d| done.point_done(d))),
    };
    match sweep::run_sweep(&sc, &out, &opts) {
        Ok(o) => {
            if !quiet {
                print!("{}", sweep::table(&o.csv));
                if let Some(p) = &o.pivot {
                    print!("\n{}", sweep::table(p));
                }
                let at_once = o
                    .max_in_flight
                    .map_or(String::new(), |n| format!(", at most {n} at once"));
                println!(
                    "\n{} points: {} run, {} already complete; {:.2}s wall for {:.2}s of runs{at_once}; wrote {}/sweep.csv",
                    o.points,
                    o.ran,
                    o.skipped,
                    o.wall_s,
                    o.point_time_s,
                    out.display()
                );
                if o.stale_dirs > 0 {
                    println!(
                        "({} point directories in {} are not this sweep's: ignored)",
                        o.stale_dirs,
                        out.display()
                    );
                }
            }
            ExitCode::SUCCESS
        }
        Err(e @ sweep::SweepError::Interrupted { .. }) => {
            eprintln!("{e}");
            ExitCode::from(EXIT_INTERRUPTED)
        }
        Err(e) => fail(if e.is_input_error() { 2 } else { 1 }, e),
    }
}

/// `--proc`: view names, comma-separated, or `all`.
fn parse_proc_files(s: &str) -> Result<Vec<reclaimsim::mm::vmstat::ProcFile>, String> {
    use reclaimsim::mm::vmstat::ProcFile;
    if s.trim() == "all" {
        return Ok(ProcFile::ALL.to_vec());
    }
    let mut out = Vec::new();
    for name in s.split(',').map(str::trim) {
        let f = ProcFile::parse(name).ok_or_else(|| {
            let names: Vec<&str> = ProcFile::ALL.iter().map(|f| f.name()).collect();
            format!(
                "unknown view `{name}` (one of: {}, or all)",
                names.join(", ")
            )
        })?;
        if !out.contains(&f) {
            out.push(f);
        }
    }
    Ok(out)
}

/// `--seed`: run.seed is a TOML integer in the file, so at most i64::MAX here too.
fn parse_seed(s: &str) -> Result<u64, String> {
    let too_large = || format!("must be at most {}", i64::MAX);
    match s.parse::<u64>() {
        Ok(v) if v <= i64::MAX as u64 => Ok(v),
        Ok(_) => Err(too_large()),
        Err(_) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => Err(too_large()),
        Err(e) => Err(e.to_string()),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.cmd {
        Cmd::Run {
            scenario,
            out,
            seed,
            sets,
            check,
            quiet,
            progress,
            trace,
            trace_limit,
            lru_gen,
            damon_record,
            record_accesses,
            proc,
        } => cmd_run(
            scenario,
            out,
            seed,
            sets,
            check,
            quiet,
            progress,
            trace,
            trace_limit,
            lru_gen,
            damon_record,
            record_accesses,
            proc,
        ),
        Cmd::Validate {
            scenario,
            sets,
            seed,
        } => cmd_validate(scenario, sets, seed),
        Cmd::Bench { json, quick, large } => {
            let r = reclaimsim::bench::run(quick, large);
            if json {
                println!("{}", r.json());
            } else {
                print!("{}", r.text());
            }
            ExitCode::SUCCESS
        }
        Cmd::BenchRss {
            pressure_1t: true, ..
        } => {
            let (speed, rss) = reclaimsim::bench::pressure_1t_and_measure();
            println!("{speed} {rss}");
            ExitCode::SUCCESS
        }
        Cmd::BenchRss { idle_1t, .. } => {
            let rss = if idle_1t {
                reclaimsim::bench::idle_1t_and_measure()
            } else {
                reclaimsim::bench::fill_64g_and_measure()
            };
            println!("{rss}");
            ExitCode::SUCCESS
        }
        Cmd::Sweep {
            scenario,
            out,
            sets,
            seed,
            jobs,
            check,
            yes,
            quiet,
            ray,
        } => cmd_sweep(scenario, out, sets, seed, jobs, check, yes, quiet, ray),
        Cmd::Cache {
            trace,
            policy,
            size,
            format,
            trace_options,
            ignore_obj_size,
            json,
            output,
        } => cmd_cache(
            trace,
            policy,
            size,
            format,
            trace_options,
            ignore_obj_size,
            json,
            output,
        ),
        Cmd::Plot { dir } => match report::plot::plot_dir(&dir) {
            Ok(files) => {
                for f in files {
                    println!("wrote {}", f.display());
                }
                ExitCode::SUCCESS
            }
            Err(e @ report::plot::PlotError::Draw { .. }) => {
                eprintln!("error: {e}");
                ExitCode::from(1)
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(2)
            }
        },
        Cmd::Report { dirs, out, labels } => match report::html::build(&dirs, &labels) {
            Ok(page) => match report::write_atomic(&out, page.as_bytes()) {
                Ok(()) => {
                    println!("wrote {}", out.display());
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("error: {}: {e}", out.display());
                    ExitCode::from(1)
                }
            },
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(2)
            }
        },
        Cmd::Compare {
            runs,
            format,
            by,
            labels,
        } => {
            use report::compare::{self, CompareError};
            let format = format.parse().expect("clap checked the format");
            let out = match (&by, runs.as_slice()) {
                (Some(_), _) if !labels.is_empty() => {
                    eprintln!(
                        "error: --label names run directories' columns; with --by the columns are the key's values"
                    );
                    return ExitCode::from(2);
                }
                (Some(key), [dir]) => compare::compare_sweep(dir, key, format).map_err(Into::into),
                (Some(_), _) => {
                    eprintln!("error: --by compares the points of one sweep directory");
                    return ExitCode::from(2);
                }
                (None, [dir]) => match compare::sweep_keys(dir) {
                    Some(keys) => Err(CompareError::SweepNeedsBy {
                        dir: dir.clone(),
                        keys,
                    }),
                    None => {
                        eprintln!("error: compare needs two or more runs (or one sweep and --by)");
                        return ExitCode::from(2);
                    }
                },
                (None, _) => compare::compare_paths(&runs, &labels, format),
            };
            match out {
                Ok(out) => {
                    print!("{out}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::from(2)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cache_sizes_parse_as_bytes_or_fractions() {
        assert_eq!(parse_cache_size("4096"), Ok(CacheSize::Absolute(4096)));
        assert_eq!(parse_cache_size("64M"), Ok(CacheSize::Absolute(64 << 20)));
        assert_eq!(parse_cache_size("0.1"), Ok(CacheSize::Fraction(0.1)));
        assert!(parse_cache_size("1.5").is_err());
        assert!(parse_cache_size("0").is_err());
        assert!(parse_cache_size("lots").is_err());
    }

    #[test]
    fn help_describes_every_argument_and_flag() {
        let cli = Cli::command();
        for sub in cli.get_subcommands().filter(|s| !s.is_hide_set()) {
            assert!(
                sub.get_about().is_some(),
                "`{}` has no description",
                sub.get_name()
            );
            for arg in sub.get_arguments().filter(|a| !a.is_hide_set()) {
                let id = arg.get_id().as_str();
                if id == "help" || id == "version" {
                    continue;
                }
                assert!(
                    arg.get_help()
                        .is_some_and(|h| !h.to_string().trim().is_empty()),
                    "`{} {id}` has no help text",
                    sub.get_name()
                );
            }
        }
    }
}
