//! The `reclaimsim` command: a thin layer over the library.

use clap::{Parser, Subcommand};
use reclaimsim::report;
use reclaimsim::scenario;
use reclaimsim::sim::{RunOptions, Simulation};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Parser)]
#[command(
    name = "reclaimsim",
    version,
    about = "Deterministic simulator of Linux memory reclaim"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a scenario: print a summary, write DIR/results.json and DIR/timeseries.csv.
    Run {
        scenario: PathBuf,
        /// Output directory (default: out/<scenario name>).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Override run.seed (0 to 9223372036854775807: a TOML integer).
        #[arg(long, value_parser = parse_seed)]
        seed: Option<u64>,
        /// Override a scenario key, e.g. --set kernel.vm.swappiness=10 (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
        /// Check every invariant at every sample (slower).
        #[arg(long)]
        check: bool,
        /// Do not print the summary.
        #[arg(long, short)]
        quiet: bool,
        /// Write tracepoints (comma-separated kernel event names, or `all`) to
        /// DIR/trace.txt, ftrace-style.
        #[arg(long, value_name = "EVENT,...")]
        trace: Option<String>,
        /// Most trace lines kept; later events are counted in a closing "dropped" line.
        #[arg(long, default_value_t = reclaimsim::stats::trace::DEFAULT_LIMIT)]
        trace_limit: usize,
    },
    /// Check a scenario without running it.
    Validate {
        scenario: PathBuf,
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
    },
    /// Measure the simulator's speed and memory (see BENCHMARKS.md).
    Bench {
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
        /// Smaller runs (for a smoke test; the figures are noisier).
        #[arg(long)]
        quick: bool,
    },
    /// Run every point of the scenario's [sweep] (in parallel, resuming completed ones)
    /// and write DIR/sweep.csv.
    Sweep {
        scenario: PathBuf,
        #[arg(long)]
        out: PathBuf,
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
        /// Points run at once (default: one per core).
        #[arg(long)]
        jobs: Option<usize>,
        #[arg(long, short)]
        quiet: bool,
    },
    /// Draw charts of a run or sweep directory into DIR/plots/ (SVG and PNG).
    Plot { dir: PathBuf },
    /// Internal: fill a 64 GiB machine and report peak RSS (run by `bench`).
    #[command(hide = true)]
    BenchRss,
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
        /// Output format.
        #[arg(long, default_value = "text", value_parser = ["text", "md", "csv", "json"])]
        format: String,
    },
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
            mut sets,
            check,
            quiet,
            trace,
            trace_limit,
        } => {
            let tracer = match trace
                .map(|t| reclaimsim::stats::trace::Tracer::parse(&t, trace_limit))
                .transpose()
            {
                Ok(t) => t,
                Err(e) => {
                    eprintln!("error: --trace: {e}");
                    return ExitCode::from(2);
                }
            };
            if let Some(s) = seed {
                sets.push(format!("run.seed={s}"));
            }
            let sc = match scenario::load(&scenario, &sets) {
                Ok(sc) => sc,
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(2);
                }
            };
            let out = out.unwrap_or_else(|| {
                PathBuf::from("out").join(
                    scenario
                        .file_stem()
                        .map(|s| s.to_os_string())
                        .unwrap_or_else(|| "run".into()),
                )
            });
            let started = Instant::now();
            let mut bar: Option<indicatif::ProgressBar> = None;
            let show = std::io::stderr().is_terminal();
            let opts = RunOptions {
                check,
                progress: Some(Box::new(move |now, end| {
                    if !show || started.elapsed().as_secs_f64() < 1.0 {
                        return;
                    }
                    let b = bar.get_or_insert_with(|| {
                        let b = indicatif::ProgressBar::new(end / 1_000_000);
                        b.set_style(
                            indicatif::ProgressStyle::with_template(
                                "{bar:40} {pos}/{len} ms simulated, {elapsed} elapsed",
                            )
                            .expect("template"),
                        );
                        b
                    });
                    b.set_position(now / 1_000_000);
                    if now >= end {
                        b.finish_and_clear();
                    }
                })),
            };
            let mut sim = Simulation::new(sc);
            if let Some(t) = tracer {
                sim.enable_trace(t);
            }
            let run = match sim.run_with_series(opts) {
                Ok(x) => x,
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(1);
                }
            };
            let results = run.results;
            let written =
                report::write_run_dir(&out, &results, &run.series).and_then(|_| match &run.trace {
                    Some(t) => report::write_atomic(&out.join("trace.txt"), t.as_bytes()),
                    None => Ok(()),
                });
            if let Err(e) = written {
                eprintln!("error: writing {}: {e}", out.display());
                return ExitCode::from(1);
            }
            if !quiet {
                print!("{}", report::summary(&results));
                println!(
                    "\nwrote {}/results.json and timeseries.csv ({:.2}s wall)",
                    out.display(),
                    started.elapsed().as_secs_f64()
                );
            }
            ExitCode::SUCCESS
        }
        Cmd::Validate { scenario, sets } => match scenario::load(&scenario, &sets) {
            Ok(sc) => {
                println!(
                    "{}: ok ({} workloads, {} actions)",
                    scenario.display(),
                    sc.workloads.len(),
                    sc.actions.len()
                );
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(2)
            }
        },
        Cmd::Bench { json, quick } => {
            let r = reclaimsim::bench::run(quick);
            if json {
                println!("{}", serde_json::to_string(&r).expect("bench serialises"));
            } else {
                print!("{}", r.text());
            }
            ExitCode::SUCCESS
        }
        Cmd::BenchRss => {
            let rss = reclaimsim::bench::fill_64g_and_measure();
            println!("{rss}");
            ExitCode::SUCCESS
        }
        Cmd::Sweep {
            scenario,
            out,
            sets,
            jobs,
            quiet,
        } => {
            let sc = match scenario::load(&scenario, &sets) {
                Ok(sc) => sc,
                Err(e) => {
                    eprintln!("error: {e}");
                    return ExitCode::from(2);
                }
            };
            if sc.sweep.is_none() {
                eprintln!(
                    "error: {}: sweep: the scenario has no [sweep] table",
                    scenario.display()
                );
                return ExitCode::from(2);
            }
            let jobs =
                jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
            match reclaimsim::sweep::run_sweep(&sc, &out, jobs) {
                Ok(o) => {
                    if !quiet {
                        print!("{}", reclaimsim::sweep::table(&o.csv));
                        if let Some(p) = &o.pivot {
                            print!("\n{}", reclaimsim::sweep::table(p));
                        }
                        println!(
                            "
{} points: {} run, {} already complete; {:.2}s wall for {:.2}s of runs; wrote {}/sweep.csv",
                            o.points,
                            o.ran,
                            o.skipped,
                            o.wall_s,
                            o.point_time_s,
                            out.display()
                        );
                    }
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::from(1)
                }
            }
        }
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
        Cmd::Compare { runs, format, by } => {
            let format = format.parse().expect("clap checked the format");
            let out = match (&by, runs.as_slice()) {
                (Some(key), [dir]) => report::compare::compare_sweep(dir, key, format),
                (Some(_), _) => {
                    eprintln!("error: --by compares the points of one sweep directory");
                    return ExitCode::from(2);
                }
                (None, [_]) => {
                    eprintln!("error: compare needs two or more runs (or one sweep and --by)");
                    return ExitCode::from(2);
                }
                (None, _) => report::compare::compare_paths(&runs, format),
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
