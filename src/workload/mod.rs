//! Workloads: what the simulated tasks do with memory, and what they report.
//!
//! - `anon`: accesses an anonymous working set by pattern; one access = one operation.
//! - `file-read`: read() (or mmap loads of) `io_size` at a time from a set of files.
//! - `file-write`: write() of `io_size` at a time over a set of files.
//!
//! A thread runs operations back to back (or paced by `rate` / `think_time`) until its
//! slice ends or it blocks in I/O. The per-access hot path is a pattern sample, one
//! page-table read and a bit set; only a non-present page calls into [`crate::mm`].

pub mod pattern;

use crate::mm::memory::FaultResult;
use crate::mm::page::{pg, pte};
use crate::mm::{Mm, SpaceKind};
use crate::scenario::{Pattern, Scenario, Workload as WorkloadCfg, WorkloadKind};
use hdrhistogram::Histogram;
use pattern::{Sampler, Zipf};
use rand::RngCore;
use rand_pcg::Pcg64Mcg;
use std::sync::Arc;

/// Sequential file reads get the default readahead window (read_ahead_kb = 128).
pub const DEFAULT_RA_PAGES: u32 = 32;

/// Per-workload state and statistics.
pub struct Workload {
    pub name: String,
    pub kind: WorkloadKind,
    /// Address spaces: one for anon, one per file.
    pub spaces: Vec<u32>,
    pub pages_per_file: u64,
    /// Pages per operation (file workloads).
    pub io_pages: u32,
    pub sampler: Sampler,
    /// P(write) scaled to 2^32 (anon).
    pub write_u32: u32,
    pub mmap: bool,
    pub ra_pages: u32,
    /// Minimum time between operation starts (from `rate`), and idle time after each.
    pub interval_ns: u64,
    pub think_ns: u64,
    pub start_ns: u64,
    pub stop_ns: u64,
    pub stats: WorkloadStats,
    pub killed_at: Option<u64>,
}

#[derive(Debug, Clone)]
pub struct WorkloadStats {
    pub ops: u64,
    pub bytes: u64,
    /// Operation latency in nanoseconds.
    pub latency: Histogram<u64>,
    /// When the first operation started and the last one ended.
    pub first_op_ns: Option<u64>,
    pub last_op_ns: u64,
}

impl Default for WorkloadStats {
    fn default() -> Self {
        WorkloadStats {
            ops: 0,
            bytes: 0,
            latency: Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("histogram bounds"),
            first_op_ns: None,
            last_op_ns: 0,
        }
    }
}

impl WorkloadStats {
    fn record(&mut self, latency_ns: u64, n: u64) {
        self.latency.saturating_record_n(latency_ns.max(1), n);
        self.ops += n;
    }
}

/// Per-thread state.
pub struct Thread {
    pub workload: usize,
    pub rng: Pcg64Mcg,
    pub cursor: u64,
    /// Earliest start of the next operation (pacing).
    pub next_issue_ns: u64,
    /// An operation waiting for I/O: when it started. The I/O brought in every page
    /// the operation needed, so it completes when the thread runs again.
    pub pending_since: Option<u64>,
    /// An operation to redo after a sleep in reclaim: (item, write, when it started).
    pub retry: Option<(u64, bool, u64)>,
}

/// How a slice of a worker ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SliceEnd {
    /// Used its slice; runnable again at once.
    Preempted,
    /// Idle until this time (pacing / think time).
    SleepUntil(u64),
    /// Blocked in I/O until this time.
    Blocked { until_ns: u64, memstall: bool },
    /// Workload stopped or was killed.
    Exit,
    /// A page allocation failed and nobody was OOM-killed for it.
    AllocFailed,
}

/// A stall inside a slice (reclaim, decompression of a refault), for PSI.
#[derive(Debug, Clone, Copy)]
pub struct Stall {
    pub start_ns: u64,
    pub len_ns: u64,
}

/// The accounting of one slice.
#[derive(Debug, Default)]
pub struct SliceReport {
    pub user_ns: u64,
    pub system_ns: u64,
    /// When the slice ended (start + CPU + idle gaps inside it).
    pub end_ns: u64,
    pub stalls: Vec<Stall>,
}

impl Workload {
    pub fn new(idx: usize, cfg: &WorkloadCfg, sc: &Scenario, mm: &mut Mm) -> Workload {
        let (spaces, pages_per_file, io_pages) = match cfg.kind {
            WorkloadKind::Anon => {
                let pages = cfg.size.expect("validated").pages().max(1);
                let s = mm.add_space(SpaceKind::Anon, cfg.name.clone(), pages, Some(idx));
                (vec![s], pages, 1)
            }
            WorkloadKind::FileRead | WorkloadKind::FileWrite => {
                let per_file = cfg.file_size.expect("validated").pages().max(1);
                let io = cfg.io_size.map_or(1, |b| b.pages().max(1)) as u32;
                let spaces = (0..cfg.nr_files.unwrap_or(1))
                    .map(|f| {
                        mm.add_space(
                            SpaceKind::File,
                            format!("{}/file{f}", cfg.name),
                            per_file,
                            None,
                        )
                    })
                    .collect();
                (spaces, per_file, io)
            }
        };
        let items = match cfg.kind {
            WorkloadKind::Anon => pages_per_file,
            _ => spaces.len() as u64 * (pages_per_file / io_pages as u64).max(1),
        };
        let sampler = match cfg.pattern {
            Pattern::Sequential => Sampler::Sequential { n: items },
            Pattern::Uniform => Sampler::Uniform { n: items },
            Pattern::Zipf => Sampler::Zipf(Arc::new(Zipf::new(items, cfg.skew.unwrap_or(0.99)))),
            Pattern::Hotcold => {
                let hot_n = ((items as f64 * cfg.hot_fraction.unwrap_or(0.2)) as u64)
                    .clamp(1, items.max(2) - 1);
                Sampler::HotCold {
                    n: items,
                    hot_n,
                    hot_prob_u32: (cfg.hot_probability.unwrap_or(0.8) * 4_294_967_295.0) as u32,
                    phase_change_ns: cfg.phase_change.map(|t| t.0),
                }
            }
        };
        let interval_ns = cfg.rate.map_or(0, |r| (1e9 / r).round() as u64);
        Workload {
            name: cfg.name.clone(),
            kind: cfg.kind,
            spaces,
            pages_per_file,
            io_pages,
            sampler,
            write_u32: (cfg.write_ratio.unwrap_or(0.0) * 4_294_967_295.0) as u32,
            mmap: cfg.mmap.unwrap_or(false),
            ra_pages: if cfg.pattern == Pattern::Sequential {
                DEFAULT_RA_PAGES
            } else {
                0
            },
            interval_ns,
            think_ns: cfg.think_time.map_or(0, |t| t.0),
            start_ns: cfg.start.0,
            stop_ns: cfg
                .stop
                .map_or(sc.run.duration.0, |t| t.0)
                .min(sc.run.duration.0),
            stats: WorkloadStats::default(),
            killed_at: None,
        }
    }

    /// (space, first page) of a file operation's item.
    fn file_target(&self, item: u64) -> (u32, u32) {
        let per_file_items = (self.pages_per_file / self.io_pages as u64).max(1);
        let f = (item / per_file_items) as usize;
        let first = (item % per_file_items) * self.io_pages as u64;
        (self.spaces[f], first as u32)
    }
}

/// Runs thread `t` of workload `w` from `start_ns` for at most `slice_ns`.
pub fn run_slice(
    w: &mut Workload,
    t: &mut Thread,
    mm: &mut Mm,
    start_ns: u64,
    slice_ns: u64,
    rep: &mut SliceReport,
) -> SliceEnd {
    let mut clock = start_ns;
    let slice_end = start_ns + slice_ns;
    let access_ns = mm.cfg.costs.access_ns;
    // An operation that blocked in I/O completes now.
    if let Some(since) = t.pending_since.take() {
        w.stats.record(clock - since, 1);
        w.stats.last_op_ns = clock;
        if w.interval_ns == 0 && w.think_ns > 0 {
            t.next_issue_ns = clock + w.think_ns;
        }
    }
    let end = loop {
        if mm.workload_killed(t.workload) {
            break SliceEnd::Exit;
        }
        if clock >= w.stop_ns {
            break SliceEnd::Exit;
        }
        if t.next_issue_ns > clock {
            if t.next_issue_ns >= slice_end || t.next_issue_ns >= w.stop_ns {
                break SliceEnd::SleepUntil(t.next_issue_ns);
            }
            clock = t.next_issue_ns; // a short gap: idle inside the slice
        }
        if clock >= slice_end {
            break SliceEnd::Preempted;
        }
        let retry = t.retry.take();
        // A retried operation's latency counts from its first attempt.
        let op_start = retry.map_or(clock, |(_, _, since)| since);
        if w.stats.first_op_ns.is_none() {
            w.stats.first_op_ns = Some(op_start);
        }
        // Pacing is from one operation's start to the next.
        if w.interval_ns > 0 && retry.is_none() {
            t.next_issue_ns =
                t.next_issue_ns.max(op_start.saturating_sub(w.interval_ns)) + w.interval_ns;
        }
        let result = match w.kind {
            WorkloadKind::Anon => {
                // The hot loop: resident pages cost one access each, no kernel entry.
                let space = w.spaces[0];
                let unpaced = w.interval_ns == 0 && w.think_ns == 0;
                let limit = if unpaced {
                    ((slice_end - clock) / access_ns.max(1)).max(1)
                } else {
                    1
                };
                let entries = &mut mm.spaces[space as usize].entries;
                let (rng, cursor) = (&mut t.rng, &mut t.cursor);
                let wr = w.write_u32;
                let (hits, miss) = match (&w.sampler, retry) {
                    (_, Some((vpn, write, _))) => (0, Some((vpn as u32, write))),
                    // Monomorphised per pattern: no dispatch inside the loop.
                    (Sampler::Zipf(z), None) => {
                        hit_loop(entries, limit, wr, rng, |r| z.sample(r.next_u64()))
                    }
                    (Sampler::Uniform { n }, None) => {
                        let n = *n;
                        hit_loop(entries, limit, wr, rng, |r| pattern::below(r.next_u64(), n))
                    }
                    (other, None) => {
                        hit_loop(entries, limit, wr, rng, |r| other.next(r, cursor, clock))
                    }
                };
                if hits > 0 {
                    clock += hits * access_ns;
                    rep.user_ns += hits * access_ns;
                    w.stats.record(access_ns, hits);
                    w.stats.bytes += hits * 4096;
                    w.stats.last_op_ns = clock;
                }
                match miss {
                    None => {
                        if !unpaced && w.think_ns > 0 {
                            t.next_issue_ns = clock + w.think_ns;
                        }
                        continue;
                    }
                    Some((vpn, write)) => {
                        let op_start = retry.map_or(clock, |(_, _, since)| since);
                        t.retry = Some((vpn as u64, write, op_start));
                        let r =
                            kernel(mm, clock, rep, |mm| mm.handle_anon_fault(space, vpn, write));
                        clock = rep.end_ns;
                        clock += access_ns;
                        rep.user_ns += access_ns;
                        w.stats.bytes += 4096;
                        (r, op_start)
                    }
                }
            }
            WorkloadKind::FileRead => {
                let item =
                    retry.map_or_else(|| w.sampler.next(&mut t.rng, &mut t.cursor, clock), |r| r.0);
                t.retry = Some((item, false, op_start));
                let (space, first) = w.file_target(item);
                let n = w.io_pages;
                w.stats.bytes += n as u64 * 4096;
                if w.mmap {
                    let mut r = FaultResult::Done;
                    for idx in first..first + n {
                        let e = mm.spaces[space as usize].entries[idx as usize];
                        if pte::is_present(e) && mm.frames[pte::pfn(e) as usize].test(pg::MAPPED) {
                            mm.spaces[space as usize].entries[idx as usize] = e | pte::YOUNG;
                            clock += access_ns;
                            rep.user_ns += access_ns;
                            continue;
                        }
                        let ra = w.ra_pages;
                        r = kernel(mm, clock, rep, |mm| mm.filemap_fault(space, idx, ra));
                        clock = rep.end_ns;
                        if r != FaultResult::Done {
                            break;
                        }
                    }
                    (r, op_start)
                } else {
                    let ra = w.ra_pages;
                    let r = kernel(mm, clock, rep, |mm| mm.filemap_read(space, first, n, ra));
                    clock = rep.end_ns;
                    (r, op_start)
                }
            }
            WorkloadKind::FileWrite => {
                let item =
                    retry.map_or_else(|| w.sampler.next(&mut t.rng, &mut t.cursor, clock), |r| r.0);
                t.retry = Some((item, true, op_start));
                let (space, first) = w.file_target(item);
                let n = w.io_pages;
                w.stats.bytes += n as u64 * 4096;
                let r = kernel(mm, clock, rep, |mm| mm.filemap_write(space, first, n));
                clock = rep.end_ns;
                (r, op_start)
            }
        };
        let (r, op_start) = result;
        match r {
            FaultResult::Retry { until_ns } => {
                // Slept in reclaim: the operation (kept in t.retry) runs again later.
                break SliceEnd::Blocked {
                    until_ns: until_ns.max(clock),
                    memstall: true,
                };
            }
            FaultResult::Done => {
                t.retry = None;
                w.stats.record(clock - op_start, 1);
                w.stats.last_op_ns = clock;
                if w.interval_ns == 0 && w.think_ns > 0 {
                    t.next_issue_ns = clock + w.think_ns;
                }
            }
            FaultResult::Blocked { until_ns, memstall } => {
                t.retry = None;
                t.pending_since = Some(op_start);
                break SliceEnd::Blocked { until_ns, memstall };
            }
            FaultResult::Killed if mm.workload_killed(t.workload) => break SliceEnd::Exit,
            FaultResult::Killed => break SliceEnd::AllocFailed,
        }
    };
    rep.end_ns = clock;
    end
}

/// Touches pages picked by `pick` until `limit` accesses or the first non-present page.
/// Returns the number of hits and the missing (page, write) if one stopped the loop.
#[inline(always)]
fn hit_loop(
    entries: &mut [crate::mm::page::Pte],
    limit: u64,
    write_u32: u32,
    rng: &mut Pcg64Mcg,
    mut pick: impl FnMut(&mut Pcg64Mcg) -> u64,
) -> (u64, Option<(u32, bool)>) {
    let mut hits = 0u64;
    while hits < limit {
        let vpn = pick(rng) as usize;
        let write = write_u32 != 0 && (rng.next_u64() as u32) < write_u32;
        let e = entries[vpn];
        if pte::is_present(e) {
            entries[vpn] = e | pte::YOUNG | if write { pte::DIRTY } else { 0 };
            hits += 1;
        } else {
            return (hits, Some((vpn as u32, write)));
        }
    }
    (hits, None)
}

/// Runs kernel code for the current task at `clock`, charging its CPU time as system
/// time and its memory stalls for PSI. Leaves the time it ended in `rep.end_ns`.
fn kernel(
    mm: &mut Mm,
    clock: u64,
    rep: &mut SliceReport,
    f: impl FnOnce(&mut Mm) -> FaultResult,
) -> FaultResult {
    mm.now = clock;
    mm.cpu_ns = 0;
    mm.stall_ns = 0;
    mm.blocked_until = None;
    let r = f(mm);
    rep.system_ns += mm.cpu_ns;
    if mm.stall_ns > 0 {
        rep.stalls.push(Stall {
            start_ns: clock,
            len_ns: mm.stall_ns.min(mm.cpu_ns),
        });
    }
    rep.end_ns = clock + mm.cpu_ns;
    r
}
