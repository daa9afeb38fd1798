//! Progress on stderr for the command line: a bar on a terminal, plain lines otherwise
//! (CI logs, `nohup`), so a long run or sweep is never silent.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::Instant;

fn secs(s: f64) -> String {
    if s >= 120.0 {
        format!("{:.1} min", s / 60.0)
    } else {
        format!("{s:.1} s")
    }
}

/// Progress of one run through virtual time.
pub struct RunProgress {
    started: Instant,
    bar: Option<indicatif::ProgressBar>,
    terminal: bool,
    /// Print lines when not on a terminal (`--progress`).
    lines: bool,
    last_line: Option<Instant>,
}

impl RunProgress {
    pub fn new(lines: bool) -> RunProgress {
        RunProgress {
            started: Instant::now(),
            bar: None,
            terminal: std::io::stderr().is_terminal(),
            lines,
            last_line: None,
        }
    }

    /// Called with the virtual time reached and the virtual end.
    pub fn update(&mut self, now_ns: u64, end_ns: u64) {
        let wall_s = self.started.elapsed().as_secs_f64();
        if self.terminal {
            if wall_s < 1.0 && now_ns < end_ns {
                return;
            }
            let b = self.bar.get_or_insert_with(|| {
                let b = indicatif::ProgressBar::new(end_ns / 1_000_000);
                if let Ok(style) = indicatif::ProgressStyle::with_template(
                    "{bar:40} {pos}/{len} ms simulated, {elapsed} elapsed, ETA {eta}",
                ) {
                    b.set_style(style);
                }
                b
            });
            b.set_position(now_ns / 1_000_000);
            if now_ns >= end_ns {
                b.finish_and_clear();
            }
        } else if self.lines {
            // At most one line every 2 s of wall time, and the last one.
            let due = self
                .last_line
                .is_none_or(|t| t.elapsed().as_secs_f64() >= 2.0);
            if !due && now_ns < end_ns {
                return;
            }
            self.last_line = Some(Instant::now());
            let frac = now_ns as f64 / end_ns.max(1) as f64;
            let left = if frac > 0.0 {
                format!(", about {} left", secs(wall_s * (1.0 - frac) / frac))
            } else {
                String::new()
            };
            eprintln!(
                "progress: {:.3} of {:.3} s simulated ({:.0}%), {} wall{left}",
                now_ns as f64 / 1e9,
                end_ns as f64 / 1e9,
                100.0 * frac,
                secs(wall_s),
            );
        }
    }
}

/// Progress of a sweep: points done and running, with an ETA.
pub struct SweepProgress {
    started: Instant,
    jobs: usize,
    quiet: bool,
    terminal: bool,
    bar: Mutex<Option<indicatif::ProgressBar>>,
}

impl SweepProgress {
    pub fn new(jobs: usize, quiet: bool) -> SweepProgress {
        SweepProgress {
            started: Instant::now(),
            jobs,
            quiet,
            terminal: std::io::stderr().is_terminal(),
            bar: Mutex::new(None),
        }
    }

    /// The sweep knows which points it must run.
    pub fn plan(&self, points: usize, to_run: usize) {
        if self.terminal && to_run > 0 {
            let b = indicatif::ProgressBar::new(to_run as u64);
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "{bar:40} {pos}/{len} points, {msg}, {elapsed} elapsed, ETA {eta}",
            ) {
                b.set_style(style);
            }
            b.set_message(format!("{} running", self.jobs.min(to_run)));
            *self.bar.lock().unwrap_or_else(|e| e.into_inner()) = Some(b);
        } else if !self.quiet {
            eprintln!(
                "sweep: {points} points, {} already complete, {to_run} to run on {} jobs",
                points - to_run,
                self.jobs
            );
        }
    }

    pub fn point_done(&self, d: &reclaimsim::sweep::PointDone) {
        let bar = self.bar.lock().unwrap_or_else(|e| e.into_inner());
        let left = d.to_run - d.done;
        let running = left.min(self.jobs);
        if let Some(b) = bar.as_ref() {
            b.set_position(d.done as u64);
            b.set_message(format!("{running} running"));
            if left == 0 {
                b.finish_and_clear();
            }
        } else if !self.quiet {
            let wall_s = self.started.elapsed().as_secs_f64();
            let eta = wall_s / d.done as f64 * left as f64;
            eprintln!(
                "point {:03} done in {} ({}): {} of {} run, {running} running, about {} left",
                d.index,
                secs(d.wall_s),
                d.label,
                d.done,
                d.to_run,
                secs(eta)
            );
        }
    }
}
