//! Workloads: what the simulated tasks do with memory, and what they report.
//!
//! - `anon`: accesses an anonymous working set by pattern; one access = one operation.
//! - `file-read`: read() (or mmap loads of) `io_size` at a time from a set of files.
//! - `file-write`: write() of `io_size` at a time over a set of files.
//! - `kv`, `fio`, `mmap-latency`, `anon-hog`, `phases`: shaped after the benchmarks
//!   reclaim changes are judged by (see [`bench_kinds`]).
//!
//! A thread runs operations back to back (or paced by `rate` / `think_time`) until its
//! slice ends or it blocks. The per-access hot path is a pattern sample, one page-table
//! read and a bit set; only a non-present page calls into [`crate::mm`].

pub mod bench_kinds;
pub mod highalloc;
pub mod masim;
pub mod pattern;
pub mod skip;
pub mod skip_file;
pub mod skip_fio;
pub mod skip_kv;
pub mod slab;
pub mod trace;

use crate::mm::fork::ForkResult;
use crate::mm::memory::FaultResult;
use crate::mm::page::pte;
use crate::mm::{Mm, SpaceKind};
use crate::scenario::{Pattern, Scenario, Workload as WorkloadCfg, WorkloadKind};
use hdrhistogram::Histogram;
use pattern::{Draw, Sampler, Zipf};
use rand::RngCore;
use rand_pcg::Pcg64Mcg;
use std::sync::Arc;

/// What a workload's operations touch, per kind.
pub enum Spec {
    Anon {
        space: u32,
        sampler: Sampler,
        write_u32: u32,
        /// `init`: the in-order writes before the pattern (a thread's `init_left`).
        init: Option<Sampler>,
    },
    File {
        write: bool,
        mmap: bool,
        spaces: Vec<u32>,
        pages_per_file: u64,
        io_pages: u32,
        sampler: Sampler,
    },
    Kv(bench_kinds::Kv),
    Fio(bench_kinds::Fio),
    MmapLatency(bench_kinds::MmapLatency),
    AnonHog(bench_kinds::AnonHog),
    Phases(bench_kinds::Phases),
    Masim(masim::Masim),
    Slab(slab::Slab),
    Highalloc(highalloc::Highalloc),
    Trace(trace::Replay),
}

/// Per-workload state and statistics.
pub struct Workload {
    pub name: String,
    pub kind: WorkloadKind,
    pub spec: Spec,
    /// Operations a client issues before waiting (kv's pipeline; 1 otherwise).
    pub batch: u32,
    /// Minimum time between batch starts (from `rate`), and idle time after each batch.
    pub interval_ns: u64,
    pub think_ns: u64,
    /// `run.access_sampling = "skip"` (None: `each`): hit loops skip accesses that
    /// change nothing, with these sets of pages an access may change, shared by the
    /// threads.
    /// Boxed: each step moves it out and back, and an `each` run should not pay for
    /// more than a pointer.
    skip_sets: Option<Box<skip::SkipSets>>,
    pub start_ns: u64,
    pub stop_ns: u64,
    /// Operations before this time are not counted (fio's ramp_time).
    pub stats_from_ns: u64,
    /// fio's `runtime` (stop_ns is at most stats_from_ns plus it) and the `stop`
    /// key's time, for a start moved by `start_after`.
    runtime_ns: Option<u64>,
    stop_key_ns: u64,
    /// `ops = N`: operations left to issue (all threads together); None: no limit.
    pub ops_left: Option<u64>,
    pub stats: WorkloadStats,
    pub killed_at: Option<u64>,
    /// phases: when every thread had finished its steps.
    pub finished_at: Option<u64>,
    pub threads_running: u32,
    /// `populate` (or `mlock`) of the mapping the workload's threads share: what its
    /// first thread's mapping call faults in (space, pages).
    pub populate: Option<(u32, u32)>,
    /// The threads after the first wait for that call to return (as a program's
    /// workers start after it has mapped its memory); the engine starts them.
    pub threads_held: bool,
    /// When the mapping call returned, for the engine to start the held threads.
    pub populated_at: Option<u64>,
    /// When its process was forked (None: not yet; its first thread forks it as it
    /// starts), and when that fork failed (ENOMEM: the workload never ran).
    pub forked_at: Option<u64>,
    pub fork_failed_at: Option<u64>,
    /// What its fork makes: a `task_struct` per thread, and kernel stacks or not.
    fork_tasks: usize,
    kernel_stacks: bool,
    /// The scenario workload this process belongs to (its index in the scenario),
    /// and which of its `processes` it is.
    pub group: usize,
    pub process: u32,
    /// A process `lifetime`: how long this incarnation lives once forked (the first
    /// staggered, see [`Workload::set_process`]), and when the workload itself stops.
    lifetime_ns: Option<u64>,
    next_life_ns: u64,
    final_stop_ns: u64,
    /// Processes forked in this slot after the first (exit-and-fork churn).
    pub respawns: u64,
}

/// An mmap with MAP_POPULATE (or MAP_LOCKED) in progress: pages `next..end` of
/// `space` are still to be faulted in.
#[derive(Debug, Clone, Copy)]
pub struct Populate {
    pub space: u32,
    pub next: u32,
    pub end: u32,
    /// The call has been entered (its syscall cost charged).
    pub entered: bool,
}

impl Populate {
    pub fn new(space: u32, pages: u32) -> Populate {
        Populate {
            space,
            next: 0,
            end: pages,
            entered: false,
        }
    }
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
    /// highalloc: the attempts that got their block.
    pub alloc_success: u64,
}

impl Default for WorkloadStats {
    fn default() -> Self {
        WorkloadStats {
            ops: 0,
            bytes: 0,
            latency: Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("histogram bounds"),
            first_op_ns: None,
            last_op_ns: 0,
            alloc_success: 0,
        }
    }
}

impl WorkloadStats {
    /// Another process's statistics added to these (one workload's processes).
    pub fn merge(&mut self, other: &WorkloadStats) {
        self.ops += other.ops;
        self.bytes += other.bytes;
        // Same bounds and precision: adding cannot fail.
        let _ = self.latency.add(&other.latency);
        self.first_op_ns = match (self.first_op_ns, other.first_op_ns) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.last_op_ns = self.last_op_ns.max(other.last_op_ns);
        self.alloc_success += other.alloc_success;
    }

    fn record(&mut self, latency_ns: u64, n: u64, bytes: u64) {
        self.latency.saturating_record_n(latency_ns.max(1), n);
        self.ops += n;
        self.bytes += bytes;
    }

    /// `n` operations from `origin` to `clock`, if they started once the statistics
    /// count (at `stats_from_ns`).
    fn record_ops(&mut self, stats_from_ns: u64, clock: u64, origin: u64, n: u64, bytes: u64) {
        if origin >= stats_from_ns {
            self.record(clock - origin, n, bytes);
            self.last_op_ns = clock;
            if self.first_op_ns.is_none() {
                self.first_op_ns = Some(origin);
            }
        }
    }
}

/// Per-thread state.
pub struct Thread {
    pub workload: usize,
    /// Index of this thread within its workload (fio job, mmap-latency worker).
    pub index: usize,
    pub rng: Pcg64Mcg,
    pub cursor: u64,
    /// Earliest start of the next batch (pacing).
    pub next_issue_ns: u64,
    /// anon `init`: in-order writes left before the pattern starts.
    pub init_left: u64,
    /// An operation waiting for I/O: when it started. The I/O brought in every page
    /// the operation needed, so it completes when the thread runs again.
    pub pending_since: Option<u64>,
    /// An operation to redo after a sleep in reclaim: (item, write, when it started).
    pub retry: Option<(u64, bool, u64)>,
    /// The current batch: when it started and operations left in it.
    pub batch_start_ns: u64,
    pub batch_left: u32,
    /// phases: the step this thread is in and accesses left in it; mmap-latency:
    /// pages of the current mapping faulted so far (in `progress`).
    pub phase: usize,
    pub phase_left: u64,
    pub progress: u64,
    /// Operations this thread completed (accesses count one each), and when the last
    /// one did: the evidence that it makes forward progress.
    pub ops: u64,
    pub last_op_ns: Option<u64>,
    /// The operation in progress is not counted in the workload's statistics (a kv
    /// fill request).
    pub unrecorded: bool,
    /// masim: the access line being run, accesses left of its batch, and each line's
    /// sequential offset (bytes) in the current phase.
    pub masim_pattern: usize,
    pub masim_left: u64,
    pub masim_offsets: Vec<u64>,
    /// phases: times the repeated steps have run to the end.
    pub loops_done: u32,
    /// slab: the thread's live objects, (time to free it, its slab), soonest first.
    pub slab_objects: std::collections::BinaryHeap<std::cmp::Reverse<(u64, u32)>>,
    /// Accesses drawn ahead by [`hit_loop_ahead`].
    pub ahead: Option<Box<Ahead>>,
    /// The pages an access may change, for `run.access_sampling = "skip"`.
    pub skip: skip::SkipState,
    /// A `kv` thread's skipping state (`skip_kv`).
    pub kv_skip: skip_kv::KvSkip,
    /// A uniform `file-read` workload's skipping state ([`skip_file`]).
    pub file_skip: skip_file::FileSkip,
    /// fio: the random pass in progress.
    pub fio_pass: Option<bench_kinds::FioPass>,
    /// A random-read fio job's skipping state (`skip_fio`).
    pub fio_skip: skip_fio::FioSkip,
    /// The read() in progress, part-way through after a sleep (see [`read_op`]).
    pub read: Option<crate::mm::filemap::ReadIter>,
    /// `--record-accesses`: where this thread's accesses are written.
    pub recorder: Option<Box<crate::trace::record::Recorder>>,
    /// A mapping call populating its mapping, until it returns.
    pub populate: Option<Populate>,
}

impl Thread {
    pub fn new(workload: usize, index: usize, rng: Pcg64Mcg, cursor: u64, start_ns: u64) -> Thread {
        Thread {
            workload,
            index,
            rng,
            cursor,
            next_issue_ns: start_ns,
            init_left: 0,
            pending_since: None,
            retry: None,
            batch_start_ns: 0,
            batch_left: 0,
            phase: 0,
            phase_left: 0,
            progress: 0,
            ops: 0,
            last_op_ns: None,
            unrecorded: false,
            masim_pattern: 0,
            masim_left: 0,
            masim_offsets: Vec::new(),
            loops_done: 0,
            slab_objects: Default::default(),
            ahead: None,
            skip: skip::SkipState::default(),
            kv_skip: skip_kv::KvSkip::default(),
            file_skip: skip_file::FileSkip::default(),
            fio_pass: None,
            fio_skip: skip_fio::FioSkip::default(),
            read: None,
            recorder: None,
            populate: None,
        }
    }
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
    /// Workload stopped, finished or was killed.
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

/// A sampler over `n` items for `pattern` (and its parameters from `cfg`).
fn sampler_for(pattern: Pattern, n: u64, cfg: &WorkloadCfg) -> Sampler {
    match pattern {
        Pattern::Sequential => Sampler::Sequential { n },
        Pattern::Uniform => Sampler::Uniform { n },
        Pattern::Zipf => Sampler::Zipf(Arc::new(Zipf::new(n, cfg.skew.unwrap_or(0.99)))),
        Pattern::Hotcold => {
            let hot_n =
                ((n as f64 * cfg.hot_fraction.unwrap_or(0.2)) as u64).clamp(1, n.max(2) - 1);
            Sampler::HotCold {
                n,
                hot_n,
                hot_prob_u32: (cfg.hot_probability.unwrap_or(0.8) * 4_294_967_295.0) as u32,
                phase_change_ns: cfg.phase_change.map(|t| t.0),
            }
        }
    }
}

/// When a workload stops: its `stop` (or the run's end), or sooner when fio's
/// `runtime` after the ramp runs out.
fn stop_at(stop_key_ns: u64, stats_from_ns: u64, runtime_ns: Option<u64>) -> u64 {
    runtime_ns.map_or(stop_key_ns, |run| stop_key_ns.min(stats_from_ns + run))
}

/// A probability as a threshold on a random u32.
pub fn prob_u32(p: f64) -> u32 {
    (p * 4_294_967_295.0) as u32
}

impl Workload {
    /// A `highalloc` workload (its results count successes).
    pub fn is_highalloc(&self) -> bool {
        matches!(self.spec, Spec::Highalloc(_))
    }

    pub fn new(idx: usize, cfg: &WorkloadCfg, sc: &Scenario, mm: &mut Mm) -> Workload {
        let pattern = cfg.pattern.unwrap_or(Pattern::Uniform);
        let access_ns = sc.costs.access.0.max(1);
        let stop_key_ns = cfg
            .stop
            .map_or(sc.run.duration.0, |t| t.0)
            .min(sc.run.duration.0);
        let mut runtime_ns = None;
        let mut stats_from_ns = cfg.start.0;
        let spec = match cfg.kind {
            WorkloadKind::Anon => {
                let pages = cfg.size.expect("validated").pages().max(1);
                let space = mm.add_space(SpaceKind::Anon, cfg.name.clone(), pages, Some(idx));
                if let Some(a) = cfg.advice {
                    mm.madvise(space, crate::scenario::mm_config::advice(a));
                }
                Spec::Anon {
                    space,
                    sampler: sampler_for(pattern, pages, cfg),
                    write_u32: prob_u32(cfg.write_ratio.unwrap_or(0.0)),
                    init: cfg
                        .init
                        .unwrap_or(false)
                        .then_some(Sampler::Sequential { n: pages }),
                }
            }
            WorkloadKind::FileRead | WorkloadKind::FileWrite => {
                let per_file = cfg.file_size.expect("validated").pages().max(1);
                let io_pages = cfg.io_size.map_or(1, |b| b.pages().max(1)) as u32;
                let spaces: Vec<u32> = (0..cfg.nr_files.unwrap_or(1))
                    .map(|f| {
                        mm.add_space(
                            SpaceKind::File,
                            format!("{}/file{f}", cfg.name),
                            per_file,
                            None,
                        )
                    })
                    .collect();
                let items = spaces.len() as u64 * (per_file / io_pages as u64).max(1);
                let advice = crate::scenario::mm_config::advice(cfg.advice.unwrap_or_default());
                if cfg.mmap.unwrap_or(false) {
                    // The files are mapped into this workload's mm: MGLRU's aging
                    // walks their PTEs. Advice is madvise on the mapping, but noreuse
                    // is the file's (fadvise), which the mapping inherits.
                    mm.mm_spaces[idx].extend(&spaces);
                    for &s in &spaces {
                        mm.spaces[s as usize].mapper = Some(idx);
                    }
                    if advice != crate::mm::Advice::Normal {
                        for &s in &spaces {
                            mm.madvise(s, advice);
                        }
                    }
                } else if advice != crate::mm::Advice::Normal {
                    for &s in &spaces {
                        mm.generic_fadvise(s, advice);
                    }
                }
                Spec::File {
                    write: cfg.kind == WorkloadKind::FileWrite,
                    mmap: cfg.mmap.unwrap_or(false),
                    spaces,
                    pages_per_file: per_file,
                    io_pages,
                    sampler: sampler_for(pattern, items, cfg),
                }
            }
            WorkloadKind::Kv => {
                // memtier's --test-time counts after the ramp (its warm-up).
                stats_from_ns = cfg.start.0 + cfg.ramp_time.map_or(0, |t| t.0);
                Spec::Kv(bench_kinds::Kv::new(
                    idx,
                    cfg,
                    mm,
                    sampler_for(pattern, cfg.keys.unwrap_or(1), cfg),
                ))
            }
            WorkloadKind::Fio => {
                let fio = bench_kinds::Fio::new(cfg, mm);
                stats_from_ns = cfg.start.0 + cfg.ramp_time.map_or(0, |t| t.0);
                runtime_ns = cfg.runtime.map(|r| r.0);
                Spec::Fio(fio)
            }
            WorkloadKind::MmapLatency => {
                Spec::MmapLatency(bench_kinds::MmapLatency::new(idx, cfg, mm))
            }
            WorkloadKind::AnonHog => Spec::AnonHog(bench_kinds::AnonHog::new(idx, cfg, mm)),
            WorkloadKind::Phases => Spec::Phases(bench_kinds::Phases::new(idx, cfg, mm, access_ns)),
            WorkloadKind::Masim => Spec::Masim(masim::Masim::new(idx, cfg, mm)),
            WorkloadKind::Slab => Spec::Slab(slab::Slab::new(cfg, sc, mm)),
            WorkloadKind::Highalloc => Spec::Highalloc(highalloc::Highalloc::new(cfg)),
            WorkloadKind::Trace => Spec::Trace(trace::Replay::new(idx, cfg, mm)),
        };
        let mlock = cfg.mlock.unwrap_or(false);
        // mmap-latency populates each of its mappings in its own operations.
        let populate_pages = match &spec {
            _ if !cfg.populate.unwrap_or(mlock) => None,
            Spec::Anon { space, .. } => Some((*space, mm.spaces[*space as usize].nr_pages())),
            Spec::Kv(kv) => Some((kv.space, mm.spaces[kv.space as usize].nr_pages())),
            // The region kept at the start; pages it grows into fault in as they are
            // first written (mlocked then, in a locked mapping).
            Spec::AnonHog(h) => Some((h.space, h.size_pages as u32)),
            _ => None,
        };
        if mlock {
            let spaces = match &spec {
                Spec::Anon { space, .. } => vec![*space],
                Spec::Kv(kv) => vec![kv.space],
                Spec::AnonHog(h) => vec![h.space],
                Spec::MmapLatency(m) => m.spaces.clone(),
                _ => Vec::new(),
            };
            for s in spaces {
                mm.mmap_locked(s);
            }
        }
        let batch = if cfg.kind == WorkloadKind::Kv {
            cfg.pipeline.unwrap_or(1)
        } else {
            1
        };
        let interval_ns = cfg
            .rate
            .map_or(0, |r| (1e9 * batch as f64 / r).round() as u64);
        Workload {
            name: cfg.name.clone(),
            kind: cfg.kind,
            spec,
            batch,
            interval_ns,
            think_ns: cfg.think_time.map_or(0, |t| t.0),
            skip_sets: (sc.run.access_sampling == crate::scenario::AccessSampling::Skip)
                .then(Box::default),
            start_ns: cfg.start.0,
            stop_ns: stop_at(stop_key_ns, stats_from_ns, runtime_ns),
            stats_from_ns,
            runtime_ns,
            ops_left: cfg.ops,
            stop_key_ns,
            stats: WorkloadStats::default(),
            killed_at: None,
            finished_at: None,
            threads_running: Workload::nr_threads(cfg),
            populate: populate_pages,
            threads_held: populate_pages.is_some() && Workload::nr_threads(cfg) > 1,
            populated_at: None,
            forked_at: None,
            fork_failed_at: None,
            fork_tasks: cfg.threads.max(1) as usize,
            kernel_stacks: cfg.kernel_stacks != Some(false),
            group: idx,
            process: 0,
            lifetime_ns: cfg.process_lifetime().map(|t| t.0),
            next_life_ns: 0,
            final_stop_ns: stop_at(stop_key_ns, stats_from_ns, runtime_ns),
            respawns: 0,
        }
    }

    /// This is process `process` of `nr` of scenario workload `group`: `ops` is split
    /// between the processes. With a process `lifetime`, process k first lives
    /// `lifetime`·(k+1)/`nr`, so that the exits and forks of a steady build are
    /// spread out from the start.
    pub fn set_process(&mut self, group: usize, process: u32, nr: u32) {
        self.group = group;
        self.process = process;
        // `ops` is the workload's: each process (slot) does its share.
        if let Some(n) = self.ops_left {
            let (k, nr) = (u64::from(process), u64::from(nr.max(1)));
            self.ops_left = Some(n * (k + 1) / nr - n * k / nr);
        }
        if let Some(life) = self.lifetime_ns {
            self.next_life_ns =
                (life as u128 * (process as u128 + 1) / nr.max(1) as u128).max(1) as u64;
        }
    }

    /// The fork of this incarnation succeeded at `at`: with a process lifetime, it
    /// exits when that runs out.
    fn forked(&mut self, at: u64) {
        self.forked_at = Some(at);
        if let Some(life) = self.lifetime_ns {
            self.stop_ns = self.final_stop_ns.min(at.saturating_add(self.next_life_ns));
            self.next_life_ns = life;
        }
    }

    /// Whether, its process having exited at `now`, a new one is forked in its place.
    /// Not once its work is done (`ops` spent, a `phases` program finished): a new
    /// process would find nothing to do and exit at once.
    pub fn respawns_at(&self, now: u64) -> bool {
        self.lifetime_ns.is_some()
            && self.killed_at.is_none()
            && self.fork_failed_at.is_none()
            && self.forked_at.is_some()
            && self.finished_at.is_none()
            && self.ops_left != Some(0)
            && now < self.final_stop_ns
    }

    /// A new process in this slot, forked by its first thread at `at`: the state of
    /// the one before is gone (the statistics stay, they are the workload's).
    pub fn respawn(&mut self, at: u64) {
        self.respawns += 1;
        self.forked_at = None;
        self.populated_at = None;
        self.finished_at = None;
        self.threads_running = self.fork_tasks as u32;
        self.threads_held = self.populate.is_some() && self.fork_tasks > 1;
        self.stop_ns = self.final_stop_ns;
        debug_assert!(at < self.stop_ns);
    }

    /// Thread `index` of `nr`, as its process starts (engine workload `w`, first issue
    /// at `start_ns`): sequential threads start spread over the range, `init`'s share
    /// and the mapping call as the workload has them.
    pub fn new_thread(
        &self,
        w: usize,
        index: usize,
        nr: usize,
        rng: Pcg64Mcg,
        start_ns: u64,
    ) -> Thread {
        let cursor = (self.items() * index as u64) / nr as u64;
        let mut thread = Thread::new(w, index, rng, cursor, start_ns);
        thread.init_left = self.init_accesses(index, nr);
        thread.populate = self.first_populate(index);
        thread
    }

    /// What thread `index` starts with: the first thread of a workload that
    /// populates its mapping makes the mapping call.
    pub fn first_populate(&self, index: usize) -> Option<Populate> {
        let (space, pages) = self.populate?;
        (index == 0).then(|| Populate::new(space, pages))
    }

    /// `start_after`: the workload starts at `at` instead of its `start` (later): its
    /// ramp and fio's runtime count from there; `stop` stays where it was.
    pub fn delay_start(&mut self, at: u64) {
        let shift = at.saturating_sub(self.start_ns);
        self.start_ns += shift;
        self.stats_from_ns += shift;
        self.stop_ns = stop_at(self.stop_key_ns, self.stats_from_ns, self.runtime_ns);
        self.final_stop_ns = self.stop_ns;
    }

    /// The process as the run begins (it runs from the first instant): forked
    /// before the run, charged whatever the limits say.
    pub fn fork_at_boot(&mut self, idx: usize, mm: &mut Mm) {
        mm.fork_workload(idx, self.fork_tasks, self.kernel_stacks);
        self.forked(0);
    }

    /// `init`: how many in-order writes thread `index` of `nr` does before the
    /// pattern (its share of the range, which its cursor starts at).
    pub fn init_accesses(&self, index: usize, nr: usize) -> u64 {
        match &self.spec {
            Spec::Anon { init: Some(_), .. } => {
                let n = self.items();
                n * (index as u64 + 1) / nr as u64 - n * index as u64 / nr as u64
            }
            _ => 0,
        }
    }

    /// Number of tasks this workload runs (fio: numjobs).
    pub fn nr_threads(cfg: &WorkloadCfg) -> u32 {
        if cfg.kind == WorkloadKind::Fio {
            cfg.numjobs.unwrap_or(1)
        } else {
            cfg.threads
        }
    }

    /// Items a sequential thread's cursor ranges over (to spread threads out).
    pub fn items(&self) -> u64 {
        match &self.spec {
            Spec::Anon { sampler, .. } | Spec::File { sampler, .. } => sampler.items(),
            Spec::Kv(kv) => kv.sampler.items(),
            _ => 0,
        }
    }

    /// What stopped the workload short, for the run's error (a trace that changed).
    pub fn error(&self) -> Option<&str> {
        match &self.spec {
            Spec::Trace(r) => r.error.as_deref(),
            _ => None,
        }
    }

    fn record(&mut self, clock: u64, origin: u64, n: u64, bytes: u64) {
        self.stats
            .record_ops(self.stats_from_ns, clock, origin, n, bytes);
    }
}

/// One step of a thread: several hits recorded in place, or one operation's outcome.
pub(crate) enum Step {
    /// Accesses that hit were done and recorded; go on.
    Hits,
    /// One operation ended so: (outcome, bytes it moved).
    Op(FaultResult, u64),
    /// The thread has nothing left to do (phases finished).
    Finished,
    /// Mid-operation at the slice's end: go on next slice (the operation is in
    /// `Thread::retry`).
    Yield,
    /// Mid-operation, asleep until `until_ns` (a fault that returned to user space
    /// through memory.high's penalty or a reclaim throttle, a read() waiting for a
    /// page being read): the operation (in `Thread::retry`) goes on from where it
    /// stopped when the thread wakes.
    Wait { until_ns: u64, memstall: bool },
}

/// What an operation function gets: the thread's clock and the slice's accounting.
pub(crate) struct Ctx<'a> {
    pub mm: &'a mut Mm,
    pub clock: u64,
    pub slice_end: u64,
    pub rep: &'a mut SliceReport,
    /// The operation is a retry of this (item, write) after a sleep.
    pub retry: Option<(u64, bool)>,
    /// `ops = N`: how many operations (hit-loop accesses) this step may still issue.
    pub ops_cap: u64,
    /// Whether the loop may run many accesses in one step (no pacing between them).
    pub unpaced: bool,
    /// Hit loops skip accesses that change nothing (`run.access_sampling = "skip"`):
    /// the workload's sets of pages an access may change.
    pub skip: Option<&'a mut skip::SkipSets>,
    /// Time the thread spends after the operation it reports (mmap-latency's munmap).
    pub deferred_ns: u64,
    /// What the hits just made cost beyond `costs.access` (pages on slow nodes), for
    /// `after_hits` to charge.
    pub slow_ns: u64,
}

impl Ctx<'_> {
    /// Runs kernel code for the current task at the thread's clock, charging its CPU
    /// time as system time and its memory stalls for PSI; advances the clock past it.
    pub fn kernel(&mut self, f: impl FnOnce(&mut Mm) -> FaultResult) -> FaultResult {
        let mm = &mut *self.mm;
        mm.now = self.clock;
        mm.cpu_ns = 0;
        mm.stall_ns = 0;
        mm.blocked_until = None;
        mm.throttled_until = None;
        let mut r = f(mm);
        // Reclaim throttled the task but the operation went through (the pages it had
        // reclaimed before sleeping sufficed): it completes after the sleep.
        if let Some(t) = mm.throttled_until.take() {
            match r {
                FaultResult::Done => {
                    r = FaultResult::Blocked {
                        until_ns: t,
                        memstall: true,
                    }
                }
                FaultResult::Blocked { until_ns, memstall } if until_ns < t => {
                    r = FaultResult::Blocked {
                        until_ns: t,
                        memstall,
                    }
                }
                _ => {}
            }
        }
        // Back to user space: settle charges over memory.high (reclaim, maybe a sleep).
        if r == FaultResult::Done {
            if let Some(until_ns) = mm.mem_cgroup_handle_over_high() {
                r = FaultResult::Blocked {
                    until_ns,
                    memstall: true,
                };
            }
        }
        self.rep.system_ns += mm.cpu_ns;
        if mm.stall_ns > 0 {
            self.rep.stalls.push(Stall {
                start_ns: self.clock,
                len_ns: mm.stall_ns.min(mm.cpu_ns),
            });
        }
        self.clock += mm.cpu_ns;
        r
    }

    /// User time: the workload's own work.
    pub fn user(&mut self, ns: u64) {
        self.clock += ns;
        self.rep.user_ns += ns;
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
    let slice_end = start_ns + slice_ns;
    let mut clock = start_ns;
    // An operation that blocked in I/O completes now.
    if let Some(since) = t.pending_since.take() {
        let bytes = op_bytes(w);
        if !t.unrecorded {
            w.record(clock, since, 1, bytes);
        }
        t.ops += 1;
        t.last_op_ns = Some(clock);
        end_of_op(w, t, clock);
    }
    let end = loop {
        if mm.workload_killed(t.workload) || clock >= w.stop_ns {
            break SliceEnd::Exit;
        }
        if w.forked_at.is_none() {
            if let Some(end) = fork_process(w, t, mm, &mut clock, slice_end, rep) {
                break end;
            }
            continue;
        }
        if t.retry.is_none()
            && t.batch_left == 0
            && t.init_left == 0
            && paced_hit_run(w, t, mm, clock, slice_end)
        {
            if let Some(end) = paced_anon_hits(w, t, mm, &mut clock, slice_end, rep) {
                break end;
            }
            // A miss: its operation is started and waits in t.retry for the fault.
        }
        if w.skip_sets.is_some() {
            if matches!(w.spec, Spec::File { .. }) && skip_file::applies(w, t, mm, clock, slice_end)
            {
                if let Some(end) = skip_file::run(w, t, mm, &mut clock, slice_end, rep) {
                    break end;
                }
                // A read that may change something waits in t.retry, issued at its
                // slot (or the set is dense and the operation draws the read).
            }
            // Settled requests (or reads) up to the next that may change something,
            // which the operation below takes (or the slice's end, or the
            // workload's): the loop's checks come first, as they would before each.
            let made = match w.spec {
                Spec::Kv(_) if skip_kv::applies(w, t, mm) => {
                    match skip_kv::run(w, t, mm, &mut clock, slice_end, rep) {
                        Ok(made) => made,
                        Err(end) => break end,
                    }
                }
                Spec::Fio(_) if skip_fio::applies(w, t) => {
                    match skip_fio::run(w, t, mm, &mut clock, slice_end, rep) {
                        Ok(made) => made,
                        Err(end) => break end,
                    }
                }
                _ => 0,
            };
            if made > 0 {
                continue;
            }
        }
        let retry = t.retry.take();
        if retry.is_none() && t.batch_left == 0 {
            // Between batches: pacing and think time.
            if t.next_issue_ns > clock {
                if t.next_issue_ns >= slice_end || t.next_issue_ns >= w.stop_ns {
                    // `stop` ends the program as `timeout`'s signal does: it leaves
                    // the sleep and exits then, not when the sleep would have ended.
                    break SliceEnd::SleepUntil(t.next_issue_ns.min(w.stop_ns));
                }
                clock = t.next_issue_ns; // a short gap: idle inside the slice
            }
        }
        if clock >= slice_end {
            t.retry = retry;
            break SliceEnd::Preempted;
        }
        // `ops = N` spent: the thread is done (a retried operation was issued).
        if retry.is_none() && w.ops_left == Some(0) {
            w.threads_running -= 1;
            if w.threads_running == 0 {
                w.finished_at = Some(clock);
            }
            break SliceEnd::Exit;
        }
        if retry.is_none() && t.batch_left == 0 {
            t.batch_start_ns = clock;
            t.batch_left = w.batch;
            if w.interval_ns > 0 {
                // Pacing is from one batch's start to the next.
                // Saturating: a tiny `rate` gives an interval near u64::MAX.
                t.next_issue_ns = t
                    .next_issue_ns
                    .max(clock.saturating_sub(w.interval_ns))
                    .saturating_add(w.interval_ns);
            }
        }
        // A retried operation's latency counts from its first attempt; a pipelined
        // request's from when its batch was sent.
        let origin = retry.map_or(
            if w.batch > 1 { t.batch_start_ns } else { clock },
            |(_, _, since)| since,
        );
        // The workload's shared sets, lent to the step (its threads run one at a time).
        // Taken and put back only when there are any: a step is the fault path's unit,
        // and `each` runs should not pay for moving them.
        let mut skip_sets = match w.skip_sets {
            Some(_) => w.skip_sets.take(),
            None => None,
        };
        let mut cx = Ctx {
            mm: &mut *mm,
            clock,
            slice_end,
            rep: &mut *rep,
            retry: retry.map(|(i, wr, _)| (i, wr)),
            ops_cap: w.ops_left.unwrap_or(u64::MAX),
            unpaced: w.interval_ns == 0 && w.think_ns == 0,
            skip: skip_sets.as_deref_mut(),
            deferred_ns: 0,
            slow_ns: 0,
        };
        let ops_before = t.ops;
        // An anonymous mapping's populating call is no operation of the workload's.
        let mapping_call = t.populate.is_some() && !matches!(w.spec, Spec::MmapLatency(_));
        let step = run_op(w, t, &mut cx, origin);
        if let Some(left) = w.ops_left.as_mut() {
            // Issued: the hits counted, and the operation the step began, however it
            // ended (done, asleep in reclaim, or part-way at the slice's end). Its
            // continuations come back as retries and are not counted again, so an
            // operation that spans slices is one operation.
            let op = matches!(step, Step::Op(..) | Step::Yield | Step::Wait { .. })
                && retry.is_none()
                && !mapping_call;
            *left = left.saturating_sub(t.ops - ops_before + op as u64);
        }
        let op_start_ns = clock;
        clock = cx.clock;
        let deferred_ns = cx.deferred_ns;
        if skip_sets.is_some() {
            put_back(&mut w.skip_sets, skip_sets);
        }
        if took_no_time(&step, op_start_ns, clock + deferred_ns) {
            // Validation makes every cost at least 1ns; should some path still do work
            // in no time, it takes 1ns here, so the loop cannot spin at one instant.
            clock += 1;
            rep.user_ns += 1;
        }
        match step {
            Step::Hits => continue,
            Step::Yield => break SliceEnd::Preempted,
            Step::Wait { until_ns, memstall } => {
                // The operation's latency still counts from its start.
                if let Some((i, wr, _)) = t.retry {
                    t.retry = Some((i, wr, origin));
                }
                break SliceEnd::Blocked {
                    until_ns: until_ns.max(clock),
                    memstall,
                };
            }
            Step::Finished => {
                w.threads_running -= 1;
                if w.threads_running == 0 {
                    w.finished_at = Some(clock);
                }
                break SliceEnd::Exit;
            }
            Step::Op(FaultResult::Done, bytes) => {
                t.retry = None;
                if !t.unrecorded {
                    w.record(clock, origin, 1, bytes);
                }
                t.ops += 1;
                t.last_op_ns = Some(clock);
                clock += deferred_ns;
                end_of_op(w, t, clock);
            }
            Step::Op(FaultResult::Retry { until_ns }, _) => {
                // Slept in reclaim: the operation (kept in t.retry) runs again later.
                if let Some((i, wr, _)) = t.retry {
                    t.retry = Some((i, wr, origin));
                }
                break SliceEnd::Blocked {
                    until_ns: until_ns.max(clock),
                    memstall: true,
                };
            }
            Step::Op(FaultResult::Blocked { until_ns, memstall }, _) => {
                t.retry = None;
                t.pending_since = Some(origin);
                break SliceEnd::Blocked { until_ns, memstall };
            }
            Step::Op(FaultResult::Killed, _) if mm.workload_killed(t.workload) => {
                break SliceEnd::Exit
            }
            Step::Op(FaultResult::Killed, _) => break SliceEnd::AllocFailed,
        }
    };
    rep.end_ns = clock;
    end
}

/// The workload starts: its first thread forks its process (`copy_process`, in that
/// thread's time as system time: the launcher's fork and the program's clones of its
/// other threads) before its first operation. None: forked, go on. A sleep in the
/// fork's reclaim blocks the thread and the fork goes on when it wakes; ENOMEM ends
/// the workload before it ran.
fn fork_process(
    w: &mut Workload,
    t: &Thread,
    mm: &mut Mm,
    clock: &mut u64,
    slice_end: u64,
    rep: &mut SliceReport,
) -> Option<SliceEnd> {
    let mut cx = Ctx {
        mm,
        clock: *clock,
        slice_end,
        rep,
        retry: None,
        ops_cap: 0,
        unpaced: false,
        skip: None,
        deferred_ns: 0,
        slow_ns: 0,
    };
    let (wi, nr, stacks) = (t.workload, w.fork_tasks, w.kernel_stacks);
    let mut fork = ForkResult::Enomem;
    let r = cx.kernel(|mm| {
        fork = mm.copy_process(wi, nr, stacks, false);
        // Only a fork that succeeded goes back to user space here (memory.high's
        // settling); the thread of one that failed never runs.
        match fork {
            ForkResult::Done => FaultResult::Done,
            ForkResult::Retry { until_ns } => FaultResult::Retry { until_ns },
            ForkResult::Enomem => FaultResult::Killed,
        }
    });
    if cx.clock == *clock {
        // Validation makes the syscall cost at least 1ns; a fork resumed after a sleep
        // that found everything at hand still takes 1ns.
        cx.clock += 1;
        cx.rep.system_ns += 1;
    }
    *clock = cx.clock;
    match (fork, r) {
        (ForkResult::Done, FaultResult::Blocked { until_ns, memstall }) => {
            w.forked(*clock);
            Some(SliceEnd::Blocked { until_ns, memstall })
        }
        (ForkResult::Done, _) => {
            w.forked(*clock);
            None
        }
        (ForkResult::Retry { until_ns }, _) => Some(SliceEnd::Blocked {
            until_ns: until_ns.max(*clock),
            memstall: true,
        }),
        (ForkResult::Enomem, _) => {
            w.fork_failed_at = Some(*clock);
            Some(SliceEnd::Exit)
        }
    }
}

/// Whether a thread's operations are single paced accesses of an anon workload whose
/// sampler draws from the random stream alone (or, skipping, a sequential sweep): each
/// the loop below would run as an operation of its own ([`paced_anon_hits`] runs them
/// back to back instead).
fn paced_hit_run(w: &Workload, t: &Thread, mm: &Mm, clock: u64, slice_end: u64) -> bool {
    #[cfg(test)]
    if test_switch::PACED_RUNS_OFF.with(|off| off.get()) {
        return false;
    }
    let sampler_ok = match &w.spec {
        Spec::Anon {
            sampler: Sampler::Zipf(_) | Sampler::Uniform { .. },
            ..
        } => true,
        // Skipping, a hot/cold sampler whose hot set stays put for the run: after its
        // phase change, or a slice that ends before it (every access issued then).
        Spec::Anon {
            sampler:
                Sampler::HotCold {
                    hot_n,
                    n,
                    phase_change_ns,
                    ..
                },
            space,
            ..
        } => {
            w.skip_sets.is_some()
                && !mm.spaces[*space as usize].traps()
                && *hot_n > 0
                && hot_n < n
                && phase_change_ns.is_none_or(|tc| clock >= tc || slice_end <= tc)
        }
        // Only the skipping loop takes a sweep's runs (see `paced_anon_hits`).
        Spec::Anon {
            sampler: Sampler::Sequential { .. },
            space,
            ..
        } => w.skip_sets.is_some() && !mm.spaces[*space as usize].traps(),
        _ => false,
    };
    // A slow node's hits cost more than a slot's access: taken one op at a time.
    sampler_ok
        && mm.slow_nodes == 0
        && w.interval_ns > 0
        && w.think_ns == 0
        && w.batch == 1
        && w.ops_left.is_none()
        && !t.unrecorded
        && t.populate.is_none()
}

/// A paced thread's accesses, each at the time [`run_slice`]'s loop would issue it:
/// the thread's clock, its pacing and the start and origin of the access in progress.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Pacing {
    clock: u64,
    next_issue_ns: u64,
    interval_ns: u64,
    slice_end: u64,
    stop_ns: u64,
    access_ns: u64,
    stats_from_ns: u64,
    /// The access in progress: when it was issued (its batch start and its origin).
    issued_ns: Option<u64>,
    /// How the slice ends, once it does.
    end: Option<SliceEnd>,
    /// Hits, the clock after the last one, and those the statistics count (issued at
    /// or after `stats_from_ns`) with the first one's origin and the last one's end.
    hits: u64,
    hits_end_ns: u64,
    counted: u64,
    first_counted_ns: Option<u64>,
    last_counted_end_ns: u64,
}

impl Pacing {
    /// A thread at `clock` whose next access is due at `next_issue_ns`, none made.
    fn new(
        clock: u64,
        next_issue_ns: u64,
        interval_ns: u64,
        (slice_end, stop_ns): (u64, u64),
        access_ns: u64,
        stats_from_ns: u64,
    ) -> Pacing {
        Pacing {
            clock,
            next_issue_ns,
            interval_ns,
            slice_end,
            stop_ns,
            access_ns,
            stats_from_ns,
            issued_ns: None,
            end: None,
            hits: 0,
            hits_end_ns: 0,
            counted: 0,
            first_counted_ns: None,
            last_counted_end_ns: 0,
        }
    }

    /// Before each access, with the hits so far (one more than last time: the access
    /// before hit): `run_slice`'s loop up to an access: the workload's stop, the
    /// pacing (an idle gap inside the slice, or a sleep past it), the slice's end, then
    /// the batch's start. False (and `end` set) if the slice ends first.
    #[inline(always)]
    fn issue(&mut self, hits: u64) -> bool {
        if hits > self.hits {
            self.hit();
        }
        self.issue_next()
    }

    /// `run_slice`'s loop up to the next access (the one before it accounted for).
    #[inline(always)]
    fn issue_next(&mut self) -> bool {
        if self.clock >= self.stop_ns {
            self.end = Some(SliceEnd::Exit);
            return false;
        }
        if self.next_issue_ns > self.clock {
            if self.next_issue_ns >= self.slice_end || self.next_issue_ns >= self.stop_ns {
                self.end = Some(SliceEnd::SleepUntil(self.next_issue_ns.min(self.stop_ns)));
                return false;
            }
            self.clock = self.next_issue_ns;
        }
        if self.clock >= self.slice_end {
            self.end = Some(SliceEnd::Preempted);
            return false;
        }
        self.next_issue_ns = self
            .next_issue_ns
            .max(self.clock.saturating_sub(self.interval_ns))
            .saturating_add(self.interval_ns);
        self.issued_ns = Some(self.clock);
        true
    }

    /// Up to `g` accesses in a row, each issued ([`Pacing::issue_next`]) and hitting
    /// ([`Pacing::hit`]): how many were made before the slice ended (`end` then
    /// says how). In closed form, one stretch at a time: a thread that waits for its
    /// slots (each access shorter than the interval) issues at `next_issue_ns`, one
    /// interval apart; one that cannot keep up issues each access as the last ends,
    /// and its pacing clock becomes the later of its `interval_ns` steps and the last
    /// issue.
    fn run_hits(&mut self, g: u64) -> u64 {
        let (a, iv) = (self.access_ns, self.interval_ns);
        let horizon = self.slice_end.min(self.stop_ns);
        let mut done = 0u64;
        while done < g {
            let waiting = self.clock < self.next_issue_ns && a < iv;
            let behind = self.clock >= self.next_issue_ns && a >= iv;
            let first = self.next_issue_ns.max(self.clock);
            if !(waiting || behind) || first >= horizon || self.clock >= self.stop_ns {
                // A stretch of one: the general step (also the one that ends the call).
                if !self.issue_next() {
                    break;
                }
                self.hit();
                done += 1;
                continue;
            }
            let step = if waiting { iv } else { a };
            let room = (horizon - 1 - first) / step + 1;
            let k = room.min(g - done);
            let last = first + (k - 1) * step;
            self.next_issue_ns = if waiting {
                last + iv
            } else {
                self.next_issue_ns.saturating_add(k * iv).max(last)
            };
            self.hits_run(first, step, k);
            done += k;
        }
        done
    }

    /// `k` hits issued at `first`, `first + step`, ...: the clock, the hits and the
    /// counted ones as `k` rounds of `issue_next` and `hit` leave them.
    fn hits_run(&mut self, first: u64, step: u64, k: u64) {
        let last = first + (k - 1) * step;
        self.issued_ns = Some(last);
        self.hits += k;
        self.clock = last + self.access_ns;
        self.hits_end_ns = self.clock;
        // Those issued at or after stats_from_ns count.
        let skip = if first >= self.stats_from_ns {
            0
        } else {
            (self.stats_from_ns - first).div_ceil(step)
        };
        if skip < k {
            self.counted += k - skip;
            self.first_counted_ns.get_or_insert(first + skip * step);
            self.last_counted_end_ns = self.clock;
        }
    }

    /// The counted hits into `stats`: each an operation of `access_ns` moving `bytes`,
    /// the first one's origin and the last one's end.
    fn record_counted(&self, stats: &mut WorkloadStats, bytes: u64) {
        if self.counted > 0 {
            stats.record(self.access_ns, self.counted, self.counted * bytes);
            stats.last_op_ns = self.last_counted_end_ns;
            stats
                .first_op_ns
                .get_or_insert(self.first_counted_ns.expect("counted"));
        }
    }

    /// The access hit: it took `access_ns`, an operation of its own.
    #[inline(always)]
    fn hit(&mut self) {
        self.hits += 1;
        let origin = self.clock;
        self.clock += self.access_ns;
        self.hits_end_ns = self.clock;
        if origin >= self.stats_from_ns {
            self.counted += 1;
            self.first_counted_ns.get_or_insert(origin);
            self.last_counted_end_ns = self.clock;
        }
    }
}

/// The kernel's state as a syscall that started at `start_ns` and changed nothing
/// but the clock leaves it (what [`Ctx::kernel`] sets on entry and exit), for the
/// skip loops that make such calls in closed form.
pub(crate) fn left_by_settled_syscall(mm: &mut Mm, start_ns: u64, cpu_ns: u64) {
    mm.now = start_ns;
    mm.cpu_ns = cpu_ns;
    mm.stall_ns = 0;
    mm.blocked_until = None;
    mm.throttled_until = None;
}

/// A paced anon thread's accesses run back to back while they hit: the operations
/// `run_slice`'s loop would make one iteration each (issue at the pacing's time, one
/// access, the operation recorded), with the thread's random stream, accesses drawn
/// ahead, pacing, statistics and clock left exactly as those iterations leave them.
/// Returns how the slice ends, or None at a miss: that access's operation has been
/// issued and waits in `t.retry`, where the loop's next step takes it to the fault.
fn paced_anon_hits(
    w: &mut Workload,
    t: &mut Thread,
    mm: &mut Mm,
    clock: &mut u64,
    slice_end: u64,
    rep: &mut SliceReport,
) -> Option<SliceEnd> {
    let access_ns = mm.cfg.costs.access_ns;
    let Spec::Anon {
        space,
        sampler,
        write_u32,
        ..
    } = &w.spec
    else {
        unreachable!("paced_hit_run checked the kind");
    };
    let (space, write_u32) = (*space, *write_u32);
    let ends = (slice_end, w.stop_ns);
    let (interval_ns, stats_from_ns) = (w.interval_ns, w.stats_from_ns);
    let mut p = Pacing::new(
        *clock,
        t.next_issue_ns,
        interval_ns,
        ends,
        access_ns,
        stats_from_ns,
    );
    let s = &mut mm.spaces[space as usize];
    let skipped = match (w.skip_sets.as_mut(), sampler) {
        // `paced_hit_run` let a sweep through only to this loop, on a space that
        // does not trap.
        (Some(_), &Sampler::Sequential { n }) => {
            // The sweep's settled runs pass by their slots in closed form; each
            // other access at its slot, as the loop would issue it.
            let mut budget = skip::Budget::Paced(&mut p);
            let (rng, cursor, state) = (&mut t.rng, &mut t.cursor, &mut t.skip);
            let slow = &mut Slow::none();
            let at = (space, 0, n);
            let miss = skip::sequential(s, write_u32, rng, cursor, state, at, (&mut budget, slow));
            skip::Skipped::Ran(p.hits, miss)
        }
        (Some(sets), _) if !s.traps() => {
            // Only the accesses that can change something, each at its slot; the
            // slots of those skipped pass by in closed form.
            // A hot/cold run's phase is fixed for it (paced_hit_run checked).
            let (n, dist) =
                skip::Dist::of(sampler, *clock).expect("paced_hit_run checked the sampler");
            let mut budget = skip::Budget::Paced(&mut p);
            let at = (space, 0);
            let slow = &mut Slow::none();
            let b = (&mut budget, slow);
            match skip::random_loop(s, write_u32, &mut t.rng, sets, (n, dist), at, b) {
                Some(miss) => skip::Skipped::Ran(p.hits, miss),
                None => skip::Skipped::Dense,
            }
        }
        _ => skip::Skipped::No,
    };
    let (hits, miss) = if let skip::Skipped::Ran(hits, miss) = skipped {
        (hits, miss)
    } else {
        let table = mm.spaces[space as usize].hw_table_mut();
        let (rng, ahead) = (&mut t.rng, &mut t.ahead);
        let more = |hits| p.issue(hits);
        match (skipped, w.skip_sets.as_mut()) {
            (skip::Skipped::Dense, Some(sets)) => {
                // Taken one by one for the skipping loop, which learns what changed.
                let mut changed = 0u64;
                let seen = |(_, c): Seen| changed += c as u64;
                let at = (space, *clock);
                let (hits, miss) =
                    paced_sampler_loop(table, write_u32, rng, ahead, sampler, at, more, seen);
                let s = &mut mm.spaces[space as usize];
                skip::dense_seen(sets, s, hits, changed, miss.is_some());
                (hits, miss)
            }
            _ => {
                let at = (space, *clock);
                paced_sampler_loop(table, write_u32, rng, ahead, sampler, at, more, |_| ())
            }
        }
    };
    debug_assert_eq!(hits, p.hits);
    *clock = p.clock;
    t.next_issue_ns = p.next_issue_ns;
    rep.user_ns += hits * access_ns;
    if hits > 0 {
        t.ops += hits;
        t.last_op_ns = Some(p.hits_end_ns);
    }
    p.record_counted(&mut w.stats, 4096);
    if let Some(issued) = p.issued_ns {
        t.batch_start_ns = issued;
    }
    match miss {
        Some((vpn, write)) => {
            let issued = p.issued_ns.expect("a missing access was issued");
            t.batch_left = w.batch;
            t.retry = Some((vpn as u64, write, issued));
            None
        }
        None => Some(p.end.expect("the run ended by its pacing")),
    }
}

/// [`paced_loop`] for a paced anon thread's zipf or uniform sampler over `space` (or,
/// skipping, its hot/cold one, in the phase of the run starting at `clock`).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn paced_sampler_loop(
    table: (&mut [crate::mm::page::Pte], &mut [bool]),
    write_u32: u32,
    rng: &mut Pcg64Mcg,
    ahead: &mut Option<Box<Ahead>>,
    sampler: &Sampler,
    (space, clock): (u32, u64),
    more: impl FnMut(u64) -> bool,
    seen: impl FnMut(Seen),
) -> (u64, Option<(u32, bool)>) {
    match sampler {
        Sampler::Zipf(z) => {
            let key = ahead_key(Picker::Zipf, z.identity(), 0, space, write_u32);
            let (draw, prefetch, resolve) = (
                |r: &mut Pcg64Mcg| z.draw(r),
                |d| z.prefetch(d),
                |d| z.resolve(d),
            );
            let sampler = (draw, prefetch, resolve);
            paced_loop(table, write_u32, rng, ahead, key, sampler, more, seen)
        }
        Sampler::Uniform { n } => {
            let n = *n;
            let key = ahead_key(Picker::Uniform, [n, 0, 0], 0, space, write_u32);
            let draw = |r: &mut Pcg64Mcg| Draw::Item(pattern::below(r.next_u64(), n));
            let sampler = (draw, |_| (), resolve_item);
            paced_loop(table, write_u32, rng, ahead, key, sampler, more, seen)
        }
        &Sampler::HotCold {
            n,
            hot_n,
            hot_prob_u32,
            phase_change_ns,
        } => {
            // Sampler::next's draw, in the run's phase (the key holds it, so items
            // drawn ahead in another phase are not used).
            let base = pattern::hot_lo(n, phase_change_ns, clock);
            let p = [n, hot_n << 32 | hot_prob_u32 as u64, base];
            let key = ahead_key(Picker::HotCold, p, 0, space, write_u32);
            let draw = |r: &mut Pcg64Mcg| {
                let w = r.next_u64();
                Draw::Item(pattern::hotcold_item(w, n, hot_n, hot_prob_u32, base))
            };
            let sampler = (draw, |_| (), resolve_item);
            paced_loop(table, write_u32, rng, ahead, key, sampler, more, seen)
        }
        _ => unreachable!("paced_hit_run checked the sampler"),
    }
}

/// [`hit_loop_ahead_with`] for a paced run (the look-ahead of a paced thread).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn paced_loop(
    table: (&mut [crate::mm::page::Pte], &mut [bool]),
    write_u32: u32,
    rng: &mut Pcg64Mcg,
    ahead: &mut Option<Box<Ahead>>,
    key: AheadKey,
    sampler: (
        impl Fn(&mut Pcg64Mcg) -> Draw,
        impl Fn(Draw),
        impl Fn(Draw) -> u64,
    ),
    more: impl FnMut(u64) -> bool,
    seen: impl FnMut(Seen),
) -> (u64, Option<(u32, bool)>) {
    hit_loop_ahead_with(
        table,
        (PACED_LOOKAHEAD, u64::MAX),
        write_u32,
        rng,
        ahead,
        key,
        sampler,
        more,
        seen,
    )
}
/// Whether a step that did work (hits, or an operation that completed) ended at the
/// instant it began.
fn took_no_time(step: &Step, start_ns: u64, end_ns: u64) -> bool {
    end_ns <= start_ns && matches!(step, Step::Hits | Step::Op(FaultResult::Done, _))
}

/// Bytes one operation moves (for a completion after I/O).
fn op_bytes(w: &Workload) -> u64 {
    match &w.spec {
        Spec::File { io_pages, .. } => *io_pages as u64 * 4096,
        Spec::Fio(f) => f.bs_pages as u64 * 4096,
        Spec::Kv(kv) => kv.value_size,
        Spec::MmapLatency(m) => m.pages as u64 * 4096,
        _ => 4096,
    }
}

/// An operation finished: count it against its batch; a finished batch thinks.
fn end_of_op(w: &Workload, t: &mut Thread, clock: u64) {
    t.batch_left = t.batch_left.saturating_sub(1);
    if t.batch_left == 0 && w.think_ns > 0 {
        t.next_issue_ns = clock.saturating_add(w.think_ns);
    }
}

/// Puts the workload's skip sets back in their slot, which was emptied to lend them
/// (so there is nothing to drop: skipping the drop glue's call keeps each step cheap).
fn put_back(slot: &mut Option<Box<skip::SkipSets>>, sets: Option<Box<skip::SkipSets>>) {
    debug_assert!(slot.is_none());
    std::mem::forget(std::mem::replace(slot, sets));
}

/// Dispatches one step to the workload's kind.
fn run_op(w: &mut Workload, t: &mut Thread, cx: &mut Ctx, origin: u64) -> Step {
    if t.populate.is_some() && !matches!(w.spec, Spec::MmapLatency(_)) {
        if let Some(step) = populate(cx, t, origin) {
            return step;
        }
        // The mapping call returned. It is not an operation of the workload's
        // statistics (nor of `ops`): the thread goes on with its first one.
        t.populate = None;
        w.populated_at = Some(cx.clock);
        return Step::Hits;
    }
    let access_ns = cx.mm.cfg.costs.access_ns;
    let stats_from = w.stats_from_ns;
    let start_ns = w.start_ns;
    let Workload { spec, stats, .. } = w;
    match spec {
        Spec::Anon {
            space,
            sampler,
            write_u32,
            init,
        } => {
            let space = *space;
            if let Some((vpn, write)) = cx.retry {
                return fault_in(cx, t, space, vpn as u32, write, origin);
            }
            if let (Some(init), true) = (init, t.init_left > 0) {
                // The thread's share of the range, in order, every access a write.
                let limit = hit_limit(cx, access_ns, t.init_left);
                let (hits, miss) = run_hit_loop(cx, t, init, space, 0, limit, u32::MAX);
                t.init_left -= (hits + miss.is_some() as u64).min(t.init_left);
                return after_hits(
                    stats, stats_from, cx, t, space, hits, miss, access_ns, origin,
                );
            }
            let limit = hit_limit(cx, access_ns, u64::MAX);
            let (hits, miss) = run_hit_loop(cx, t, sampler, space, 0, limit, *write_u32);
            after_hits(
                stats, stats_from, cx, t, space, hits, miss, access_ns, origin,
            )
        }
        Spec::File {
            write,
            mmap,
            spaces,
            pages_per_file,
            io_pages,
            sampler,
        } => {
            let item = cx.retry.map_or_else(
                || {
                    let item = sampler.next(&mut t.rng, &mut t.cursor, cx.clock);
                    if let Some(s) = cx.skip.as_deref_mut().and_then(|s| s.file.as_deref_mut()) {
                        // Under skip sampling, while its set is dense.
                        skip_file::dense_read(s, cx.mm, item);
                    }
                    item
                },
                |r| r.0,
            );
            let write = *write;
            t.retry = Some((item, write, origin));
            let per_file_items = (*pages_per_file / *io_pages as u64).max(1);
            let space = spaces[(item / per_file_items) as usize];
            let first = ((item % per_file_items) * *io_pages as u64) as u32;
            let (n, mmap) = (*io_pages, *mmap);
            if write {
                let r = cx.kernel(|mm| mm.filemap_write(space, first, n));
                if !matches!(r, FaultResult::Retry { .. } | FaultResult::Killed) {
                    record_pages(t, space, first, n, write);
                }
                Step::Op(r, n as u64 * 4096)
            } else if mmap {
                Step::Op(mmap_read(cx, t, space, first, n), n as u64 * 4096)
            } else {
                read_op(cx, t, space, first, n, true)
            }
        }
        Spec::Kv(kv) => kv.op(t, cx, origin),
        Spec::Fio(f) => f.op(t, cx, origin),
        Spec::MmapLatency(m) => m.op(t, cx, origin),
        Spec::AnonHog(h) => h.op(stats, stats_from, start_ns, t, cx, origin),
        Spec::Phases(p) => p.op(stats, stats_from, t, cx, origin),
        Spec::Masim(m) => m.op(stats, stats_from, t, cx, origin),
        Spec::Slab(s) => s.op(t, cx, origin),
        Spec::Highalloc(h) => h.op(stats, t, cx, origin),
        Spec::Trace(r) => r.op(t, cx, origin),
    }
}

/// How many accesses the hot loop may do in one step: up to the slice's end when
/// unpaced (capped by `cap`), else one (pacing applies per access).
pub(crate) fn hit_limit(cx: &Ctx, access_ns: u64, cap: u64) -> u64 {
    if cx.unpaced {
        let cap = cap.min(cx.ops_cap);
        ((cx.slice_end.saturating_sub(cx.clock)) / access_ns.max(1)).clamp(1, cap.max(1))
    } else {
        1
    }
}

/// After the hot loop: unpaced hits are recorded in bulk (each took one access); a
/// paced single hit is an operation of its own; a miss goes to the fault handler.
#[allow(clippy::too_many_arguments)]
pub(crate) fn after_hits(
    stats: &mut WorkloadStats,
    stats_from: u64,
    cx: &mut Ctx,
    t: &mut Thread,
    space: u32,
    hits: u64,
    miss: Option<(u32, bool)>,
    access_ns: u64,
    origin: u64,
) -> Step {
    if !cx.unpaced && hits == 1 {
        let slow_ns = std::mem::take(&mut cx.slow_ns);
        cx.user(access_ns + slow_ns);
        return Step::Op(FaultResult::Done, 4096);
    }
    let slow_ns = std::mem::take(&mut cx.slow_ns);
    if hits > 0 {
        let start = cx.clock;
        cx.user(hits * access_ns + slow_ns);
        t.ops += hits;
        t.last_op_ns = Some(cx.clock);
        if start >= stats_from {
            // The slow nodes' part spread over the run's hits.
            stats.record(access_ns + slow_ns / hits, hits, hits * 4096);
            stats.last_op_ns = cx.clock;
            stats.first_op_ns.get_or_insert(start);
        }
    }
    match miss {
        None => Step::Hits,
        Some((vpn, write)) => {
            let origin = if hits > 0 { cx.clock } else { origin };
            fault_in(cx, t, space, vpn, write, origin)
        }
    }
}

/// The mapping call of `t.populate` (mmap with MAP_POPULATE or MAP_LOCKED:
/// `__mm_populate`): every page not yet present faulted in by the kernel
/// ([`Mm::populate_page`]), with no user access; the call's entry costs a syscall.
/// None once it has returned (`t.populate` says so until the caller clears it); else
/// the step it stopped at: the slice's end, a sleep in reclaim (the call goes on
/// after it: `t.retry` holds its place), or an OOM kill.
pub(crate) fn populate(cx: &mut Ctx, t: &mut Thread, origin: u64) -> Option<Step> {
    let mut p = t.populate?;
    if !p.entered {
        p.entered = true;
        cx.kernel(|mm| {
            mm.charge(mm.cfg.costs.syscall_ns);
            FaultResult::Done
        });
    }
    let stopped = loop {
        if p.next >= p.end {
            break None;
        }
        if cx.clock >= cx.slice_end {
            t.retry = Some((0, true, origin));
            break Some(Step::Yield);
        }
        let (space, vpn) = (p.space, p.next);
        if pte::is_present(cx.mm.spaces[space as usize].pte(vpn)) {
            p.next += 1;
            continue;
        }
        match cx.kernel(|mm| mm.populate_page(space, vpn)) {
            FaultResult::Done => p.next += 1,
            FaultResult::Retry { until_ns } => {
                t.retry = Some((0, true, origin));
                break Some(Step::Op(FaultResult::Retry { until_ns }, 0));
            }
            // A missing anonymous page blocks only in reclaim (a throttle, or the
            // memory.high delay on the way out): the page is in and the call goes on
            // after the sleep, as after a retry.
            FaultResult::Blocked { until_ns, .. } => {
                p.next += 1;
                t.retry = Some((0, true, origin));
                break Some(Step::Op(FaultResult::Retry { until_ns }, 0));
            }
            FaultResult::Killed => break Some(Step::Op(FaultResult::Killed, 0)),
        }
    };
    t.populate = Some(p);
    if stopped.is_none() {
        t.retry = None;
    }
    stopped
}

/// An access that found its page absent: the fault, then the access itself. The
/// access is remembered for a retry should the fault have to sleep.
pub(crate) fn fault_in(
    cx: &mut Ctx,
    t: &mut Thread,
    space: u32,
    vpn: u32,
    write: bool,
    origin: u64,
) -> Step {
    // A hit the space's trap sent here, or one on a page the hit loops leave to this
    // path (a slow node's, or one marked for a NUMA hint fault).
    if ((cx.mm.any_trap && cx.mm.spaces[space as usize].traps()) || cx.mm.any_marked_pte)
        && access_if_present(cx, t, space, vpn, write)
    {
        return Step::Op(FaultResult::Done, 4096);
    }
    t.retry = Some((vpn as u64, write, origin));
    let r = cx.kernel(|mm| mm.handle_anon_fault(space, vpn, write));
    if !matches!(r, FaultResult::Retry { .. } | FaultResult::Killed) {
        record(t, space, vpn, write);
    }
    cx.user(cx.mm.cfg.costs.access_ns);
    Step::Op(r, 4096)
}

/// A load or store outside the hit loops that finds its page present: what the MMU
/// does (and a research policy hears), the recording, the access's time. False if
/// the page is not there.
fn access_if_present(cx: &mut Ctx, t: &mut Thread, space: u32, vpn: u32, write: bool) -> bool {
    if cx.mm.any_marked_pte {
        // NUMA balancing made it PROT_NONE: the hint fault first.
        let e = cx.mm.spaces[space as usize].pte(vpn);
        if pte::is_present(e) && e & pte::NUMA != 0 {
            cx.kernel(|mm| {
                mm.do_numa_page(space, vpn);
                FaultResult::Done
            });
        }
    }
    if !cx.mm.access_present(space, vpn, write) {
        return false;
    }
    record(t, space, vpn, write);
    // A slow node's page costs its latency (the page may have moved in the access).
    let extra = if cx.mm.any_marked_pte {
        let e = cx.mm.spaces[space as usize].pte(vpn);
        cx.mm.access_extra_ns(pte::pfn(e))
    } else {
        0
    };
    cx.user(cx.mm.cfg.costs.access_ns + extra);
    true
}

/// One load or store of a page outside the hit loops: a present page is a plain
/// access (None); an absent one faults ([`fault_in`]: its step).
pub(crate) fn touch(
    cx: &mut Ctx,
    t: &mut Thread,
    space: u32,
    vpn: u32,
    write: bool,
    origin: u64,
) -> Option<Step> {
    if access_if_present(cx, t, space, vpn, write) {
        None
    } else {
        Some(fault_in(cx, t, space, vpn, write, origin))
    }
}

/// `--record-accesses`: one access of the thread's.
#[inline]
fn record(t: &mut Thread, space: u32, vpn: u32, write: bool) {
    if let Some(r) = t.recorder.as_mut() {
        r.push(space, vpn, write);
    }
}

/// `--record-accesses`: a read() or write() of `n` pages from `first`.
pub(crate) fn record_pages(t: &mut Thread, space: u32, first: u32, n: u32, write: bool) {
    if let Some(r) = t.recorder.as_mut() {
        for vpn in first..first + n {
            r.push(space, vpn, write);
        }
    }
}

/// A read() of `n` pages from `first` of `space` (`filemap_read`): a new one unless
/// the operation is a retry. One that has to wait part-way (a batch's page still
/// being read) leaves the thread asleep and goes on from where it stopped when the
/// thread wakes; a read that completes is an operation's outcome. With `record`, a
/// read is recorded (`--record-accesses`) once, when it has entered the kernel.
pub(crate) fn read_op(
    cx: &mut Ctx,
    t: &mut Thread,
    space: u32,
    first: u32,
    n: u32,
    record: bool,
) -> Step {
    if cx.retry.is_none() {
        t.read = None;
    }
    let entered = t.read.is_some();
    let read = &mut t.read;
    let r = cx.kernel(|mm| mm.filemap_read(space, first, n, read));
    if record && !entered && t.read.is_some() && r != FaultResult::Killed {
        record_pages(t, space, first, n, false);
    }
    match r {
        FaultResult::Blocked { until_ns, memstall } if t.read.is_some_and(|it| it.copied < n) => {
            Step::Wait { until_ns, memstall }
        }
        r => Step::Op(r, n as u64 * 4096),
    }
}

/// Loads through an mmap of a file: mapped pages are plain accesses, others fault.
fn mmap_read(cx: &mut Ctx, t: &mut Thread, space: u32, first: u32, n: u32) -> FaultResult {
    for idx in first..first + n {
        if access_if_present(cx, t, space, idx, false) {
            continue;
        }
        let r = cx.kernel(|mm| mm.do_read_fault(space, idx));
        if r != FaultResult::Done {
            return r;
        }
        record(t, space, idx, false);
    }
    FaultResult::Done
}

/// How far [`hit_loop_ahead`] runs ahead of the access it applies: it draws an access
/// `2 * LOOKAHEAD` ahead (prefetching a zipf sample's alias bucket) and looks up its
/// page `LOOKAHEAD` ahead (prefetching the page-table entry).
const LOOKAHEAD: u64 = 16;
/// How far ahead a ring's second stage reads an entry the first stage fetched (its
/// swap slot, say): half the look-ahead, so the entry has arrived by then.
pub(crate) const SECOND_STAGE_AHEAD: u64 = LOOKAHEAD / 2;
const RING: usize = 2 * LOOKAHEAD as usize;
/// [`LOOKAHEAD`] for a thread that makes one access a call (paced): big64's 16
/// paced zipf threads ran 13 s at 16, 15.7 s at 1, 11.7 s at 2, 10.6–11.2 s at 4 and
/// 11.8 s at 8 (its first 16 simulated seconds).
const PACED_LOOKAHEAD: u64 = 4;

/// What identifies a thread's draws: the picker ([`Picker`] and its parameters: a
/// zipf's identity, a range), the item offset it adds, the space and the write
/// probability. Accesses drawn ahead are used only by a call with the same key: a key
/// says everything the draws depend on, so no freed and reused object can alias one.
pub(crate) type AheadKey = [u64; 6];

/// `a == b` without the library call the array comparison becomes: a paced thread
/// compares its ring's key once per access.
#[inline(always)]
fn same_key(a: &AheadKey, b: &AheadKey) -> bool {
    a.iter().zip(b).fold(true, |same, (x, y)| same & (x == y))
}

/// The kinds of picker a ring serves (an [`AheadKey`]'s first word). The kv ones draw
/// their set decision even at probability 1, unlike the hit loops' write decision.
#[derive(Clone, Copy)]
#[repr(u64)]
pub(crate) enum Picker {
    Zipf = 1,
    Uniform = 2,
    MasimRandom = 3,
    KvZipf = 4,
    KvUniform = 5,
    HotCold = 6,
}

/// The key of a ring for `picker` with parameters `p`, offset `base`, in `space`, with
/// write (or set) probability `write_u32`.
pub(crate) fn ahead_key(
    picker: Picker,
    p: [u64; 3],
    base: u64,
    space: u32,
    write_u32: u32,
) -> AheadKey {
    [
        picker as u64,
        p[0],
        p[1],
        p[2],
        base,
        (space as u64) << 32 | write_u32 as u64,
    ]
}

/// A thread's accesses drawn ahead by [`hit_loop_ahead`], kept from one call to the
/// next: a paced thread makes one access per operation, and its next accesses are
/// already drawn (and their cache lines loading) when it runs again.
pub struct Ahead {
    key: AheadKey,
    /// The thread's random stream as the ring expects to find it: just after the last
    /// access applied. If anything else drew from the stream, the ring is stale.
    base: Pcg64Mcg,
    /// The stream after the last access drawn.
    cursor: Pcg64Mcg,
    /// Per slot: the draw, its page once resolved, whether it writes, and the stream
    /// just after its draws.
    ring: [(Draw, u64, bool, Pcg64Mcg); RING],
    /// Accesses applied, resolved and drawn since the ring was made (slot = count %
    /// RING); applied <= resolved <= drawn <= applied + RING.
    applied: u64,
    resolved: u64,
    drawn: u64,
    /// Hits since the last miss: how far ahead it is worth drawing.
    streak: u64,
}

impl Ahead {
    fn new(key: AheadKey, rng: &Pcg64Mcg) -> Box<Ahead> {
        Box::new(Ahead {
            key,
            base: rng.clone(),
            cursor: rng.clone(),
            ring: std::array::from_fn(|_| (Draw::Item(0), 0, false, rng.clone())),
            applied: 0,
            resolved: 0,
            drawn: 0,
            streak: 0,
        })
    }

    /// The thread's ring if it was drawn from `rng` as it is now, with `key`; else a
    /// fresh one.
    fn get<'a>(ahead: &'a mut Option<Box<Ahead>>, key: AheadKey, rng: &Pcg64Mcg) -> &'a mut Ahead {
        if !ahead
            .as_ref()
            .is_some_and(|a| same_key(&a.key, &key) && a.base == *rng)
        {
            *ahead = Some(Ahead::new(key, rng));
        }
        ahead.as_mut().expect("just made")
    }

    /// Draws until `depth` accesses wait (`draw`, then `write`'s draws; `prefetch`
    /// starts loading what resolving will read), then resolves those `lookahead` ahead
    /// and at least the next one (`prefetch_item` starts loading what applying it
    /// will read).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn fill(
        &mut self,
        depth: u64,
        lookahead: u64,
        draw: impl Fn(&mut Pcg64Mcg) -> Draw,
        write: impl Fn(&mut Pcg64Mcg) -> bool,
        prefetch: impl Fn(Draw),
        resolve: impl Fn(Draw) -> u64,
        prefetch_item: impl Fn(u64),
    ) {
        while self.drawn - self.applied < depth {
            let d = draw(&mut self.cursor);
            let w = write(&mut self.cursor);
            prefetch(d);
            self.ring[self.drawn as usize % RING] = (d, 0, w, self.cursor.clone());
            self.drawn += 1;
        }
        while self.resolved < self.drawn
            && (self.drawn - self.resolved > lookahead || self.resolved == self.applied)
        {
            let slot = &mut self.ring[self.resolved as usize % RING];
            slot.1 = resolve(slot.0);
            prefetch_item(slot.1);
            self.resolved += 1;
        }
    }

    /// The item of the access `k` after the next one to take, if already resolved
    /// (for a second stage of prefetching: what its entry, loaded since, points to).
    #[inline]
    pub(crate) fn peek(&self, k: u64) -> Option<u64> {
        let i = self.applied + k;
        (i < self.resolved).then(|| self.ring[i as usize % RING].1)
    }

    /// The next access, (item, write): resolved by [`Ahead::fill`].
    #[inline(always)]
    fn take(&mut self) -> (u64, bool) {
        let (_, item, write, _) = self.ring[self.applied as usize % RING];
        self.applied += 1;
        (item, write)
    }

    /// Leaves `rng` just after the draws of the last access taken.
    fn settle(&mut self, rng: &mut Pcg64Mcg) {
        if self.applied > 0 {
            *rng = self.ring[(self.applied - 1) as usize % RING].3.clone();
            self.base = rng.clone();
        }
    }
}

/// [`hit_loop`] for pickers that depend on the random stream alone (`Fn`: no cursor to
/// advance), with the host's memory-level parallelism: the cache misses of upcoming
/// accesses (alias bucket, page-table entry) overlap instead of coming one after
/// another. `draw` makes an access's random draws, `resolve` turns them into its page
/// (reading the table `prefetch` started loading). Accesses are still applied one at
/// a time, in order, each reading its entry only after the ones before it wrote
/// theirs, so the outcome is [`hit_loop`]'s exactly: the thread's stream `rng` is left
/// just after the draws of the last access applied (hit or miss), and the accesses
/// drawn beyond it wait in `ahead` for the next call, which uses them only if `rng`
/// and `key` are still what they were (else it draws afresh). The distance ahead grows
/// with the run of hits, so a thread that faults often draws little in vain.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn hit_loop_ahead(
    table: (&mut [crate::mm::page::Pte], &mut [bool]),
    limit: u64,
    write_u32: u32,
    rng: &mut Pcg64Mcg,
    ahead: &mut Option<Box<Ahead>>,
    key: AheadKey,
    draw: impl Fn(&mut Pcg64Mcg) -> Draw,
    prefetch: impl Fn(Draw),
    resolve: impl Fn(Draw) -> u64,
    seen: impl FnMut(Seen),
) -> (u64, Option<(u32, bool)>) {
    // A limit of one is a paced call (or an unpaced one at its slice's end): a paced
    // thread makes one access a call, and a whole round of the other tasks runs
    // between its calls, so what was loaded sixteen calls ahead is out of the cache
    // again by its use.
    let lookahead = if limit == 1 {
        PACED_LOOKAHEAD
    } else {
        LOOKAHEAD
    };
    hit_loop_ahead_with(
        table,
        (lookahead, limit),
        write_u32,
        rng,
        ahead,
        key,
        (draw, prefetch, resolve),
        |_| true,
        seen,
    )
}

/// [`hit_loop_ahead`]'s loop: at most `limit` accesses, and before each one
/// `more(hits so far)` says whether to make it (a paced run learns there that the
/// access before hit).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn hit_loop_ahead_with(
    (entries, pmd_young): (&mut [crate::mm::page::Pte], &mut [bool]),
    (lookahead, limit): (u64, u64),
    write_u32: u32,
    rng: &mut Pcg64Mcg,
    ahead: &mut Option<Box<Ahead>>,
    key: AheadKey,
    (draw, prefetch, resolve): (
        impl Fn(&mut Pcg64Mcg) -> Draw,
        impl Fn(Draw),
        impl Fn(Draw) -> u64,
    ),
    mut more: impl FnMut(u64) -> bool,
    mut seen: impl FnMut(Seen),
) -> (u64, Option<(u32, bool)>) {
    let a = Ahead::get(ahead, key, rng);
    let write = |r: &mut Pcg64Mcg| {
        write_u32 == u32::MAX || (write_u32 != 0 && (r.next_u64() as u32) < write_u32)
    };
    let mut hits = 0u64;
    let miss = loop {
        if hits == limit || !more(hits) {
            break None;
        }
        let depth = (a.streak + 1).min(2 * lookahead);
        let prefetch_entry = |vpn: u64| pattern::prefetch(&entries[vpn as usize]);
        a.fill(
            depth,
            lookahead,
            &draw,
            write,
            &prefetch,
            &resolve,
            prefetch_entry,
        );
        let (vpn, write) = a.take();
        let e = entries[vpn as usize];
        if pte::hw_hit(e) {
            // Whether the access changed anything, for the skipping loop while it leaves
            // accesses to this one (compiled away where `seen` ignores it).
            seen((e, hit_entry(entries, pmd_young, vpn as usize, e, write).1));
            hits += 1;
            a.streak += 1;
        } else {
            a.streak = 0;
            break Some((vpn as u32, write));
        }
    };
    a.settle(rng);
    (hits, miss)
}

/// The next (item, write) of a thread's random stream, for an operation that does
/// more than touch one page (a kv request): taken from the accesses `ahead`, drawn
/// [`RING`] ahead so that `prefetch_item` has started loading what the operation will
/// read. `rng` is left where drawing the two directly would have left it.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn next_ahead(
    rng: &mut Pcg64Mcg,
    ahead: &mut Option<Box<Ahead>>,
    key: AheadKey,
    draw: impl Fn(&mut Pcg64Mcg) -> Draw,
    write: impl Fn(&mut Pcg64Mcg) -> bool,
    prefetch: impl Fn(Draw),
    resolve: impl Fn(Draw) -> u64,
    prefetch_item: impl Fn(u64),
) -> (u64, bool) {
    let a = Ahead::get(ahead, key, rng);
    a.fill(
        RING as u64,
        LOOKAHEAD,
        draw,
        write,
        prefetch,
        resolve,
        prefetch_item,
    );
    let next = a.take();
    a.settle(rng);
    next
}

/// Up to `limit` accesses by `sampler` over the space from `base`: the skipping loop
/// under `run.access_sampling = "skip"` for an unpaced workload whose sampler it
/// handles (a paced one makes one access a call: nothing to skip), else
/// [`sampler_hit_loop`].
pub(crate) fn run_hit_loop(
    cx: &mut Ctx,
    t: &mut Thread,
    sampler: &Sampler,
    space: u32,
    base: u64,
    limit: u64,
    write_u32: u32,
) -> (u64, Option<(u32, bool)>) {
    let clock = cx.clock;
    let (cpu_node, nr_nodes) = (cx.mm.numa_node_id(), cx.mm.nr_nodes());
    let mut slow = Slow::new(&cx.mm.access_extra, cpu_node, nr_nodes);
    let s = &mut cx.mm.spaces[space as usize];
    let mut dense = false;
    if let (Some(sets), true, false) = (cx.skip.as_deref_mut(), cx.unpaced, s.traps()) {
        let (rng, cursor, st) = (&mut t.rng, &mut t.cursor, &mut t.skip);
        // A slow node's page is never settled: each access to it is taken, and
        // charged.
        let state = (st, sets, &mut slow);
        let at = (space, base, clock);
        match skip::skip_hit_loop(s, limit, write_u32, rng, cursor, state, sampler, at) {
            skip::Skipped::Ran(hits, miss) => {
                cx.slow_ns += slow.ns;
                return (hits, miss);
            }
            skip::Skipped::Dense => dense = true,
            skip::Skipped::No => {}
        }
    }
    let table = s.hw_table_mut();
    let (wr, args) = (write_u32, (space, base, clock));
    match cx.skip.as_deref_mut() {
        Some(sets) if dense => {
            // Taken one by one for the skipping loop, which learns what they changed.
            let mut changed = 0u64;
            let seen = |(e, c): Seen| {
                changed += c as u64;
                slow.hit(e);
            };
            let (hits, miss) = sampler_hit_loop(table, limit, wr, t, sampler, args, seen);
            cx.slow_ns += slow.ns;
            skip::dense_seen(sets, s, hits, changed, miss.is_some());
            (hits, miss)
        }
        // Without slow nodes, the loop without the per-hit test.
        _ if cx.mm.slow_nodes == 0 => sampler_hit_loop(table, limit, wr, t, sampler, args, |_| ()),
        _ => {
            let seen = |(e, _): Seen| slow.hit(e);
            let r = sampler_hit_loop(table, limit, wr, t, sampler, args, seen);
            cx.slow_ns += slow.ns;
            r
        }
    }
}

/// The hit loop for a workload's `sampler` over pages `base..` of `space`: pipelined
/// ([`hit_loop_ahead`]) where the sampler depends on the random stream alone,
/// [`hit_loop`] for the others (a sequential cursor, the hot/cold phase clock). Each
/// tells `seen` whether a hit changed its entry.
/// Monomorphised per pattern: no dispatch inside the loop.
#[inline(always)]
pub(crate) fn sampler_hit_loop(
    table: (&mut [crate::mm::page::Pte], &mut [bool]),
    limit: u64,
    write_u32: u32,
    t: &mut Thread,
    sampler: &Sampler,
    (space, base, clock): (u32, u64, u64),
    seen: impl FnMut(Seen),
) -> (u64, Option<(u32, bool)>) {
    let (rng, cursor, ahead) = (&mut t.rng, &mut t.cursor, &mut t.ahead);
    match sampler {
        Sampler::Zipf(z) => hit_loop_ahead(
            table,
            limit,
            write_u32,
            rng,
            ahead,
            ahead_key(Picker::Zipf, z.identity(), base, space, write_u32),
            |r| z.draw(r),
            |d| z.prefetch(d),
            |d| base + z.resolve(d),
            seen,
        ),
        Sampler::Uniform { n } => {
            let n = *n;
            let pick = |r: &mut Pcg64Mcg| Draw::Item(base + pattern::below(r.next_u64(), n));
            let key = ahead_key(Picker::Uniform, [n, 0, 0], base, space, write_u32);
            let (wr, resolve) = (write_u32, resolve_item);
            hit_loop_ahead(
                table,
                limit,
                wr,
                rng,
                ahead,
                key,
                pick,
                |_| (),
                resolve,
                seen,
            )
        }
        other => hit_loop_seen(
            table,
            limit,
            write_u32,
            rng,
            |r| base + other.next(r, cursor, clock),
            seen,
        ),
    }
}

/// The page of a draw that is its page already (no table to read).
#[inline(always)]
pub(crate) fn resolve_item(d: Draw) -> u64 {
    match d {
        Draw::Item(i) => i,
        Draw::Alias(_) => unreachable!("a picker without a table draws items"),
    }
}

/// Touches pages picked by `pick` until `limit` accesses or the first non-present page.
/// Returns the number of hits and the missing (page, write) if one stopped the loop.
#[cfg(test)]
#[inline(always)]
pub(crate) fn hit_loop(
    table: (&mut [crate::mm::page::Pte], &mut [bool]),
    limit: u64,
    write_u32: u32,
    rng: &mut Pcg64Mcg,
    pick: impl FnMut(&mut Pcg64Mcg) -> u64,
) -> (u64, Option<(u32, bool)>) {
    hit_loop_seen(table, limit, write_u32, rng, pick, |_| ())
}

/// What a hit loop tells its `seen` of each hit: the entry it found, and whether
/// the access changed it.
pub(crate) type Seen = (crate::mm::page::Pte, bool);

/// The extra cost of hits on slow nodes' pages (`pte::SLOW`), from the running CPU's
/// node: the hit loops' callers sum it through their `seen` and hand it to
/// [`after_hits`] (in `Ctx::slow_ns`).
pub(crate) struct Slow<'a> {
    /// Per page node, the ns beyond `costs.access` (empty: no slow node).
    extra: &'a [u64],
    pub ns: u64,
}

impl<'a> Slow<'a> {
    /// The row of `mm`'s access costs for CPU node `cpu_node` (read off before the
    /// caller borrows the spaces).
    pub fn new(access_extra: &'a [u64], cpu_node: usize, nr_nodes: usize) -> Slow<'a> {
        let extra = if access_extra.is_empty() {
            &[][..]
        } else {
            &access_extra[cpu_node * nr_nodes..(cpu_node + 1) * nr_nodes]
        };
        Slow { extra, ns: 0 }
    }

    /// No slow node (a caller whose pages are never `SLOW`).
    pub fn none() -> Slow<'static> {
        Slow { extra: &[], ns: 0 }
    }

    #[inline(always)]
    pub fn hit(&mut self, e: crate::mm::page::Pte) {
        if e & pte::SLOW != 0 {
            self.ns += self.extra[pte::slow_nid(e)];
        }
    }

    /// `n` hits on entry `e`.
    #[inline(always)]
    pub fn hit_n(&mut self, e: crate::mm::page::Pte, n: u64) {
        if e & pte::SLOW != 0 {
            self.ns += n * self.extra[pte::slow_nid(e)];
        }
    }
}

/// A hit on present entry `e` at `vpn`: the PTE made young (and dirty for a write)
/// and its PMD entry young, as the hardware's access does. The new entry, and whether
/// the access changed either.
#[inline(always)]
pub(crate) fn hit_entry(
    entries: &mut [crate::mm::page::Pte],
    pmd_young: &mut [bool],
    vpn: usize,
    e: crate::mm::page::Pte,
    write: bool,
) -> (crate::mm::page::Pte, bool) {
    let new = e | pte::YOUNG | if write { pte::DIRTY } else { 0 };
    entries[vpn] = new;
    let pmd = &mut pmd_young[vpn / crate::mm::lru_gen::PTRS_PER_PTE as usize];
    let changed = new != e || !*pmd;
    *pmd = true;
    (new, changed)
}

/// [`hit_loop`], telling `seen` whether each hit changed its entry (for the skipping
/// loop while it leaves accesses to this one; compiled away where `seen` ignores it).
#[inline(always)]
pub(crate) fn hit_loop_seen(
    (entries, pmd_young): (&mut [crate::mm::page::Pte], &mut [bool]),
    limit: u64,
    write_u32: u32,
    rng: &mut Pcg64Mcg,
    mut pick: impl FnMut(&mut Pcg64Mcg) -> u64,
    mut seen: impl FnMut(Seen),
) -> (u64, Option<(u32, bool)>) {
    let mut hits = 0u64;
    while hits < limit {
        let vpn = pick(rng) as usize;
        let write =
            write_u32 == u32::MAX || (write_u32 != 0 && (rng.next_u64() as u32) < write_u32);
        let e = entries[vpn];
        if pte::hw_hit(e) {
            seen((e, hit_entry(entries, pmd_young, vpn, e, write).1));
            hits += 1;
        } else {
            return (hits, Some((vpn as u32, write)));
        }
    }
    (hits, None)
}

/// [`hit_loop`] for a cursor that walks pages `0..active` in order and wraps (the
/// anon hog): a run of present entries is touched at once, one page-table page at a
/// time, when every access writes or none does (no random draw per access); else
/// the plain loop. The cursor ends past the last page touched, or past the missing
/// one, as the plain loop leaves it.
#[inline(always)]
pub(crate) fn hit_loop_cursor(
    (entries, pmd_young): (&mut [crate::mm::page::Pte], &mut [bool]),
    limit: u64,
    write_u32: u32,
    rng: &mut Pcg64Mcg,
    cursor: &mut u64,
    active: u64,
    mut seen: impl FnMut(Seen),
) -> (u64, Option<(u32, bool)>) {
    if write_u32 != 0 && write_u32 != u32::MAX {
        let pick = |_: &mut Pcg64Mcg| {
            let v = if *cursor >= active { 0 } else { *cursor };
            *cursor = v + 1;
            v
        };
        return hit_loop_seen((entries, pmd_young), limit, write_u32, rng, pick, seen);
    }
    let write = write_u32 == u32::MAX;
    let bits = pte::YOUNG | if write { pte::DIRTY } else { 0 };
    let ptrs = crate::mm::lru_gen::PTRS_PER_PTE as u64;
    let mut hits = 0u64;
    while hits < limit {
        let v = if *cursor >= active { 0 } else { *cursor };
        let end = active.min(v + (limit - hits)).min((v / ptrs + 1) * ptrs);
        let run = &mut entries[v as usize..end as usize];
        let present = run
            .iter()
            .position(|&e| !pte::hw_hit(e))
            .unwrap_or(run.len());
        for e in &mut run[..present] {
            seen((*e, true));
            *e |= bits;
        }
        if present > 0 {
            crate::mm::mark_pmd_young(pmd_young, v as u32);
        }
        hits += present as u64;
        *cursor = v + present as u64;
        if present < run.len() {
            *cursor += 1;
            return (hits, Some(((v + present as u64) as u32, write)));
        }
    }
    (hits, None)
}

/// A switch the engine's tests turn (one thread each).
#[cfg(test)]
pub(crate) mod test_switch {
    thread_local! {
        /// Makes paced threads take `run_slice`'s loop one access at a time.
        pub(crate) static PACED_RUNS_OFF: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::task_rng;

    /// `Pacing::run_hits`'s closed form against the rounds of `issue_next` and `hit`
    /// it stands for, over threads that wait for their slots, that cannot keep up,
    /// that are behind or ahead of their pacing clock, and calls that end by the
    /// slice, the stop or the count, with the statistics' start anywhere.
    #[test]
    fn paced_runs_of_hits_are_the_rounds() {
        let mut r = crate::rng::task_rng(9, "pacing");
        let mut pick = |n: u64| r.next_u64() % n;
        for case in 0..20_000 {
            let clock = 1_000_000 + pick(50_000);
            let stop_ns = if case % 3 == 0 {
                clock + pick(300_000)
            } else {
                u64::MAX
            };
            let mut p = Pacing::new(
                clock,
                clock - 20_000 + pick(40_000),
                1 + pick(3_000),
                (clock + pick(300_000), stop_ns),
                1 + pick(3_000),
                clock - 100_000 + pick(400_000),
            );
            p.hits = pick(5);
            let g = pick(400);
            let (mut fast, mut slow) = (p.clone(), p);
            let made = fast.run_hits(g);
            let mut rounds = 0;
            while rounds < g && slow.issue_next() {
                slow.hit();
                rounds += 1;
            }
            assert_eq!(made, rounds, "case {case}");
            assert_eq!(fast, slow, "case {case}, {g} hits");
        }
    }

    /// Requests drawn ahead are the requests drawn one at a time: the same (key, set)
    /// sequence and the same stream after each, also when something else draws from
    /// the stream between requests or the picker changes.
    #[test]
    fn next_ahead_is_drawing_in_turn() {
        let zipf = Zipf::with_table_ranks(1 << 12, 0.99, 1 << 8);
        for set_u32 in [0u32, u32::MAX / 10, u32::MAX] {
            let set = |r: &mut Pcg64Mcg| bench_kinds::draw_set(r, set_u32);
            let (mut ra, mut rb) = (task_rng(2, "kv"), task_rng(2, "kv"));
            let mut ahead = None;
            for i in 0..20_000u64 {
                if i % 97 == 5 {
                    assert_eq!(ra.next_u64(), rb.next_u64());
                }
                let uniform = i % 1000 >= 700;
                let want = if uniform {
                    let k = pattern::below(ra.next_u64(), 777);
                    (k, set(&mut ra))
                } else {
                    let k = zipf.sample(&mut ra);
                    (k, set(&mut ra))
                };
                let got = if uniform {
                    next_ahead(
                        &mut rb,
                        &mut ahead,
                        ahead_key(Picker::KvUniform, [777, 0, 0], 0, 0, set_u32),
                        |r| Draw::Item(pattern::below(r.next_u64(), 777)),
                        set,
                        |_| (),
                        resolve_item,
                        |_| (),
                    )
                } else {
                    next_ahead(
                        &mut rb,
                        &mut ahead,
                        ahead_key(Picker::KvZipf, zipf.identity(), 0, 0, set_u32),
                        |r| zipf.draw(r),
                        set,
                        |d| zipf.prefetch(d),
                        |d| zipf.resolve(d),
                        |_| (),
                    )
                };
                assert_eq!(want, got, "request {i}");
                assert!(ra == rb, "stream after request {i}");
            }
        }
    }

    /// The pipelined loop is the plain loop: over tables with holes of every density,
    /// limits long and short, zipf (with a tail) and uniform pickers, both give the same
    /// hits, the same miss, the same table and PMD bits, and leave the random stream at
    /// the same place, call after call (each call starting where the last one stopped,
    /// the missing page then made present as a fault would; now and then something
    /// else draws from the stream between calls, or the key changes, which must make
    /// the accesses drawn ahead stale).
    /// The hog's run-at-once loop against the plain one with the hog's cursor: the
    /// same hits, misses, table, PMD bits, cursor and stream, call after call (the
    /// missing page made present as a fault would), across wraps and page-table pages.
    #[test]
    fn hit_loop_cursor_is_hit_loop() {
        let n = 3000u64; // not a multiple of 512: the last page-table page is partial
        for hole_per_mille in [0u64, 2, 100, 900] {
            for write_u32 in [0u32, u32::MAX, u32::MAX / 2] {
                for (active, limit) in [(n, 1u64), (n, 700), (1234, 5000), (600, 100_000)] {
                    let mut fill = task_rng(hole_per_mille, "fill");
                    let table: Vec<crate::mm::page::Pte> = (0..n)
                        .map(|i| {
                            if fill.next_u64() % 1000 < hole_per_mille {
                                pte::NONE
                            } else {
                                pte::present(i as u32)
                            }
                        })
                        .collect();
                    let (mut ta, mut tb) = (table.clone(), table);
                    let pmds = n.div_ceil(512) as usize;
                    let (mut pa, mut pb) = (vec![false; pmds], vec![false; pmds]);
                    let (mut ra, mut rb) = (task_rng(2, "a"), task_rng(2, "a"));
                    let (mut ca, mut cb) = (0u64, 0u64);
                    for call in 0..60 {
                        let got = hit_loop_cursor(
                            (&mut ta, &mut pa),
                            limit,
                            write_u32,
                            &mut ra,
                            &mut ca,
                            active,
                            |_| (),
                        );
                        let want = hit_loop((&mut tb, &mut pb), limit, write_u32, &mut rb, |_| {
                            let v = if cb >= active { 0 } else { cb };
                            cb = v + 1;
                            v
                        });
                        let case = format!(
                            "holes {hole_per_mille} w {write_u32} {active}/{limit} call {call}"
                        );
                        assert_eq!(got, want, "{case}");
                        assert_eq!(ca, cb, "{case}");
                        assert!(ta == tb && pa == pb, "{case}");
                        assert_eq!(ra.next_u64(), rb.next_u64(), "{case}");
                        if let Some((vpn, _)) = got.1 {
                            ta[vpn as usize] = pte::present(vpn);
                            tb[vpn as usize] = pte::present(vpn);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn hit_loop_ahead_is_hit_loop() {
        let n = 1u64 << 14;
        // A small alias table so the tail (rejection-inversion) is exercised too.
        let zipf = Zipf::with_table_ranks(n, 0.9, 1 << 10);
        for hole_per_mille in [0u64, 1, 30, 500, 990] {
            for limit in [1u64, 3, 17, 1000, 100_000] {
                for (write_u32, uniform) in [(0u32, false), (u32::MAX / 3, true), (u32::MAX, false)]
                {
                    let mut fill = task_rng(hole_per_mille, "fill");
                    let table: Vec<crate::mm::page::Pte> = (0..n)
                        .map(|i| {
                            if (fill.next_u64() % 1000) < hole_per_mille {
                                pte::NONE
                            } else {
                                pte::present(i as u32)
                            }
                        })
                        .collect();
                    let (mut ta, mut tb) = (table.clone(), table);
                    let pmds = (n / 512) as usize;
                    let (mut pa, mut pb) = (vec![false; pmds], vec![false; pmds]);
                    let (mut ra, mut rb) = (task_rng(1, "a"), task_rng(1, "a"));
                    let mut ahead = None;
                    let mut total = 0;
                    for call in 0..200u64 {
                        if call % 7 == 3 {
                            assert_eq!(ra.next_u64(), rb.next_u64());
                        }
                        // Two phases' worth of keys: the same picker at two offsets.
                        let base = if call % 11 < 6 { 0 } else { 1 };
                        let picker = if uniform {
                            Picker::Uniform
                        } else {
                            Picker::Zipf
                        };
                        let key = ahead_key(picker, [0, 0, 0], base, 0, write_u32);
                        let m = n - base;
                        let uniform_pick =
                            |r: &mut Pcg64Mcg| base + pattern::below(r.next_u64(), m);
                        let zipf_pick = |r: &mut Pcg64Mcg| (base + zipf.sample(r)) % n;
                        let uniform_draw = |r: &mut Pcg64Mcg| Draw::Item(uniform_pick(r));
                        let zipf_resolve = |d| (base + zipf.resolve(d)) % n;
                        // (plain picker; draw, prefetch, resolve) of the same picker.
                        type Pick<'a> = &'a dyn Fn(&mut Pcg64Mcg) -> u64;
                        type DrawFn<'a> = &'a dyn Fn(&mut Pcg64Mcg) -> Draw;
                        type PrefetchFn<'a> = &'a dyn Fn(Draw);
                        type ResolveFn<'a> = &'a dyn Fn(Draw) -> u64;
                        let (pick, draw, prefetch, resolve): (Pick, DrawFn, PrefetchFn, ResolveFn) =
                            if uniform {
                                (&uniform_pick, &uniform_draw, &|_| (), &resolve_item)
                            } else {
                                (
                                    &zipf_pick,
                                    &|r| zipf.draw(r),
                                    &|d| zipf.prefetch(d),
                                    &zipf_resolve,
                                )
                            };
                        let a = hit_loop((&mut ta, &mut pa), limit, write_u32, &mut ra, pick);
                        let b = hit_loop_ahead(
                            (&mut tb, &mut pb),
                            limit,
                            write_u32,
                            &mut rb,
                            &mut ahead,
                            key,
                            draw,
                            prefetch,
                            resolve,
                            |_| (),
                        );
                        assert_eq!(a, b, "holes {hole_per_mille}‰ limit {limit} call {call}");
                        total += a.0;
                        if let Some((vpn, _)) = a.1 {
                            ta[vpn as usize] = pte::present(vpn);
                            tb[vpn as usize] = pte::present(vpn);
                        }
                        if total > 200_000 {
                            break;
                        }
                    }
                    assert!(ta == tb && pa == pb);
                    assert_eq!(ra.next_u64(), rb.next_u64());
                    assert!(total > 0 || hole_per_mille > 900);
                }
            }
        }
    }
}
