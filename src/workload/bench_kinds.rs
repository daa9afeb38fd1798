//! Workloads shaped after the benchmarks reclaim changes are judged by.
//!
//! - [`Kv`]: memcached under memtier: values in anonymous memory, get/set requests.
//! - [`Fio`]: fio with buffered I/O (`ioengine=psync`), fio's own vocabulary.
//! - [`MmapLatency`]: mmtests' stutterp latency worker (map, fault in, unmap).
//! - [`AnonHog`]: `stress --vm-keep`, optionally growing step by step.
//! - [`Phases`]: a program whose working set changes over its run.

use super::pattern::{self, Draw, Sampler, Zipf};
use super::{
    after_hits, ahead_key, fault_in, hit_limit, hit_loop_cursor, next_ahead, populate, prob_u32,
    read_op, resolve_item, run_hit_loop, touch, Ctx, Picker, Populate, Step, Thread, WorkloadStats,
};
use crate::mm::memory::FaultResult;
use crate::mm::page::{pte, Frame};
use crate::mm::{Advice, Mm, SpaceKind};
use crate::scenario::{FioRw, Pattern, Workload as WorkloadCfg};
use rand::RngCore;
use std::sync::Arc;

/// Server CPU per request when `request_time` is not given: memcached serves a few
/// hundred thousand small requests per second per thread (~2 us each).
pub const DEFAULT_REQUEST_NS: u64 = 2_000;

/// `kv`: `keys` values of `value_size` bytes laid out back to back in one anonymous
/// mapping. A request costs `request_time` of CPU (parsing, hashing) and touches every
/// page of its value: reads for a get, writes for a set. With `pipeline` = P a client
/// sends P requests, waits for all, then thinks; a request's latency runs from when its
/// batch was sent, as memtier measures it.
pub struct Kv {
    pub space: u32,
    pub sampler: Sampler,
    pub value_size: u64,
    pub set_u32: u32,
    pub request_ns: u64,
    /// memtier's load phase: per thread, the keys it sets in order (`lo..hi`, its share
    /// of all the keys); empty without a load phase.
    pub fill: Vec<(u64, u64)>,
}

/// The page a kv value of `value_size` bytes at `key` starts in (values lie back to
/// back): what a request touches first, and what the look-ahead fetches for it.
fn first_page(key: u64, value_size: u64) -> u64 {
    key * value_size / 4096
}

impl Kv {
    pub fn new(idx: usize, cfg: &WorkloadCfg, mm: &mut Mm, sampler: Sampler) -> Kv {
        let value_size = cfg.value_size.expect("validated").0;
        let pages = (cfg.keys.expect("validated") * value_size).div_ceil(4096);
        Kv {
            space: mm.add_space(SpaceKind::Anon, cfg.name.clone(), pages, Some(idx)),
            sampler,
            value_size,
            set_u32: prob_u32(cfg.set_ratio.unwrap_or(0.1)),
            request_ns: cfg.request_time.map_or(DEFAULT_REQUEST_NS, |t| t.0),
            fill: if cfg.fill.unwrap_or(false) {
                let (keys, threads) = (cfg.keys.expect("validated"), cfg.threads.max(1) as u64);
                (0..threads)
                    .map(|i| (keys * i / threads, keys * (i + 1) / threads))
                    .collect()
            } else {
                Vec::new()
            },
        }
    }

    /// The next key this thread sets in the load phase, if it is not done: its share
    /// of the keys, in order (`t.progress` counts the keys it set).
    pub(super) fn next_fill_key(&self, t: &Thread) -> Option<u64> {
        let &(lo, hi) = self.fill.get(t.index)?;
        (lo + t.progress < hi).then(|| lo + t.progress)
    }

    /// The second stage of the key look-ahead: a key's first page-table entry, loaded
    /// since it was drawn, is read; if the page is out on swap, the swap map's entry
    /// the fault will read (a random place in a large table) starts loading.
    fn prefetch_swap_slot(&self, t: &Thread, cx: &Ctx) {
        let (Some(a), Some(sw)) = (t.ahead.as_deref(), cx.mm.swap.as_ref()) else {
            return;
        };
        let Some(k) = a.peek(super::SECOND_STAGE_AHEAD) else {
            return;
        };
        let e = cx.mm.spaces[self.space as usize].pte(first_page(k, self.value_size) as u32);
        if pte::kind(e) == pte::SWAP {
            sw.prefetch_slot(pte::slot(e));
        }
    }

    pub(crate) fn op(&mut self, t: &mut Thread, cx: &mut Ctx, origin: u64) -> Step {
        let fill = if cx.retry.is_none() {
            self.next_fill_key(t)
        } else {
            None
        };
        let (key, set) = match (cx.retry, fill) {
            (Some(r), _) => r,
            (None, Some(key)) => {
                t.progress += 1;
                t.unrecorded = true;
                cx.user(self.request_ns);
                (key, true)
            }
            (None, None) if t.kv_skip.next.is_some() => {
                // Drawn by the skipping loop (`skip_kv`).
                t.unrecorded = false;
                cx.user(self.request_ns);
                t.kv_skip.next.take().expect("checked")
            }
            (None, None) => {
                t.unrecorded = false;
                let set_u32 = self.set_u32;
                let set = |r: &mut rand_pcg::Pcg64Mcg| draw_set(r, set_u32);
                // Keys come from accesses drawn ahead, whose values' first page-table
                // entries are already loading (the same keys, in the same order).
                let space = &cx.mm.spaces[self.space as usize];
                let value_size = self.value_size;
                let prefetch_key = |k: u64| space.prefetch_entry(first_page(k, value_size) as u32);
                let kv_key = |picker, p| ahead_key(picker, p, 0, self.space, set_u32);
                let (rng, ahead) = (&mut t.rng, &mut t.ahead);
                let (key, set) = match &self.sampler {
                    Sampler::Zipf(z) => next_ahead(
                        rng,
                        ahead,
                        kv_key(Picker::KvZipf, z.identity()),
                        |r| z.draw(r),
                        set,
                        |d| z.prefetch(d),
                        |d| z.resolve(d),
                        prefetch_key,
                    ),
                    Sampler::Uniform { n } => {
                        let n = *n;
                        next_ahead(
                            rng,
                            ahead,
                            kv_key(Picker::KvUniform, [n, 0, 0]),
                            |r| Draw::Item(pattern::below(r.next_u64(), n)),
                            set,
                            |_| (),
                            resolve_item,
                            prefetch_key,
                        )
                    }
                    other => {
                        let key = other.next(rng, &mut t.cursor, cx.clock);
                        (key, set(rng))
                    }
                };
                self.prefetch_swap_slot(t, cx);
                if let Some(s) = cx.skip.as_deref_mut().and_then(|s| s.kv.as_deref_mut()) {
                    // Under skip sampling, while its set is dense.
                    super::skip_kv::dense_request(s, &mut cx.mm.spaces[self.space as usize], key);
                }
                cx.user(self.request_ns);
                (key, set)
            }
        };
        let first = first_page(key, self.value_size);
        let last = (key * self.value_size + self.value_size - 1) / 4096;
        for vpn in first..=last {
            // The retry redoes the whole request; pages already in are plain hits.
            let Some(step) = touch(cx, t, self.space, vpn as u32, set, origin) else {
                continue;
            };
            t.retry = Some((key, set, origin));
            if !matches!(step, Step::Op(FaultResult::Done, _)) {
                return step;
            }
        }
        Step::Op(FaultResult::Done, self.value_size)
    }
}

/// `fio`: each of `numjobs` jobs has its own file of `size`; an operation is one `bs`
/// I/O with buffered read() or write(). Sequential modes go through the file in order
/// (reads with the default readahead); random modes use fio's default random map, so
/// every block is visited once per pass (here: a random stride permutation per pass).
/// With buffered I/O the psync and libaio engines both complete each I/O before the
/// next, so `iodepth` does not add concurrency (fio behaves so on Linux).
pub struct Fio {
    pub rw: FioRw,
    pub spaces: Vec<u32>,
    pub bs_pages: u32,
    pub blocks: u64,
    pub read_u32: u32,
}

impl Fio {
    pub fn new(cfg: &WorkloadCfg, mm: &mut Mm) -> Fio {
        let pages = cfg.size.expect("validated").pages();
        let bs_pages = cfg.bs.map_or(1, |b| b.pages()) as u32;
        let spaces: Vec<u32> = (0..cfg.numjobs.unwrap_or(1))
            .map(|j| mm.add_space(SpaceKind::File, format!("{}/job{j}", cfg.name), pages, None))
            .collect();
        // fio's fadvise_hint=1 (its default): FADV_RANDOM for random I/O, else
        // FADV_SEQUENTIAL; `advice` overrides it ("normal" is fadvise_hint=0).
        let rw = cfg.rw.expect("validated");
        let random = matches!(rw, FioRw::Randread | FioRw::Randwrite | FioRw::Randrw);
        let advice = cfg.advice.map_or(
            if random {
                Advice::Random
            } else {
                Advice::Sequential
            },
            crate::scenario::mm_config::advice,
        );
        for &s in &spaces {
            mm.generic_fadvise(s, advice);
        }
        Fio {
            rw: cfg.rw.expect("validated"),
            spaces,
            bs_pages,
            blocks: (pages / bs_pages as u64).max(1),
            read_u32: prob_u32(cfg.rwmixread.unwrap_or(50) as f64 / 100.0),
        }
    }

    /// The `i`-th block of the job's sequence: in order, or a per-pass permutation
    /// (which `t.fio_pass` keeps for the pass in progress).
    #[inline]
    pub(crate) fn block(&self, t: &mut Thread, i: u64, random: bool) -> u64 {
        if !random {
            return i % self.blocks;
        }
        let cached = t.fio_pass.filter(|p| p.blocks == self.blocks);
        if let Some(b) = cached.and_then(|p| p.block(i)) {
            return b;
        }
        let pass = i / self.blocks;
        let h = crate::rng::fnv1a64(&format!("{}/{pass}", t.index));
        let p = FioPass::new(self.blocks, pass, h);
        t.fio_pass = Some(p);
        p.block(i).expect("an I/O of the pass just made")
    }

    /// The pass holding the job's `i`-th I/O, kept in `t.fio_pass` (`skip_fio`): the
    /// random permutation, or for a sequential job the blocks in order.
    pub(crate) fn pass_at(&self, t: &mut Thread, i: u64) -> FioPass {
        if matches!(self.rw, FioRw::Read | FioRw::Write) {
            let p = FioPass::sequential(self.blocks, i / self.blocks);
            t.fio_pass = Some(p);
            return p;
        }
        self.block(t, i, true);
        t.fio_pass.expect("block() keeps the pass")
    }

    /// Starts loading what a random job's coming I/Os will read: the page-cache entry
    /// of the block `2 * FIO_AHEAD` on, the frame of the one `FIO_AHEAD` on (its entry
    /// loaded by an earlier call). The sequence is fixed, so this changes nothing but
    /// the host's caches; it stays within the pass in progress.
    fn prefetch_ahead(&self, t: &Thread, space: &crate::mm::Space, frames: &[Frame]) {
        let Some(p) = t.fio_pass.filter(|p| p.blocks == self.blocks) else {
            return;
        };
        if let Some(b) = p.block(t.cursor + 2 * FIO_AHEAD) {
            space.prefetch_entry((b * self.bs_pages as u64) as u32);
        }
        if let Some(b) = p.block(t.cursor + FIO_AHEAD) {
            let e = space.pte((b * self.bs_pages as u64) as u32);
            if pte::is_present(e) {
                crate::hint::prefetch(&frames[pte::pfn(e) as usize]);
            }
        }
    }

    pub(crate) fn op(&mut self, t: &mut Thread, cx: &mut Ctx, origin: u64) -> Step {
        let space = self.spaces[t.index];
        let (block, write) = match cx.retry {
            Some(r) => r,
            None => {
                let (random, write) = match self.rw {
                    FioRw::Read => (false, false),
                    FioRw::Write => (false, true),
                    FioRw::Randread => (true, false),
                    FioRw::Randwrite => (true, true),
                    FioRw::Randrw => (true, (t.rng.next_u64() as u32) >= self.read_u32),
                };
                let b = self.block(t, t.cursor, random);
                t.cursor += 1;
                if random {
                    self.prefetch_ahead(t, &cx.mm.spaces[space as usize], &cx.mm.frames);
                }
                (b, write)
            }
        };
        t.retry = Some((block, write, origin));
        let first = (block * self.bs_pages as u64) as u32;
        let n = self.bs_pages;
        if write {
            Step::Op(
                cx.kernel(|mm| mm.filemap_write(space, first, n)),
                n as u64 * 4096,
            )
        } else {
            read_op(cx, t, space, first, n, false)
        }
    }
}

/// A `kv` request's set decision: a set with chance `set_u32` / 2^32, drawn from the
/// thread's stream only if the workload sets at all (memtier's `--ratio`). Every
/// path that makes or skips a request draws it here, so the stream stays the same.
#[inline]
pub(crate) fn draw_set(rng: &mut rand_pcg::Pcg64Mcg, set_u32: u32) -> bool {
    set_u32 != 0 && (rng.next_u64() as u32) < set_u32
}

/// A random fio job's pass over its blocks: pass `pass` visits block
/// (h + j · stride) mod blocks at its j-th I/O, h and the stride (coprime with
/// `blocks`) hashed from the thread and the pass. Kept per thread so that an I/O costs
/// a multiply and a Barrett reduction, not four 64-bit divisions (three more for
/// each look-ahead).
#[derive(Debug, Clone, Copy)]
pub struct FioPass {
    blocks: u64,
    pass: u64,
    /// h mod blocks.
    offset: u64,
    stride: u64,
    /// ⌊(2^64 − 1) / blocks⌋, for the reduction.
    rem_m: u64,
    /// stride⁻¹ mod blocks: which I/O of the pass reads a block (`skip_fio`).
    inv_stride: u64,
}

impl FioPass {
    fn new(blocks: u64, pass: u64, h: u64) -> FioPass {
        let stride = coprime_stride(blocks, h);
        FioPass {
            blocks,
            pass,
            offset: h % blocks,
            stride,
            rem_m: u64::MAX / blocks,
            inv_stride: inverse_mod(stride, blocks),
        }
    }

    /// A sequential job's pass `pass`: block j at its j-th I/O.
    fn sequential(blocks: u64, pass: u64) -> FioPass {
        FioPass {
            blocks,
            pass,
            offset: 0,
            stride: 1,
            rem_m: u64::MAX / blocks,
            inv_stride: 1 % blocks,
        }
    }

    /// Which pass this is (its I/Os are `pass * blocks ..` the next pass's first).
    pub(crate) fn pass(&self) -> u64 {
        self.pass
    }

    /// The job's I/O number at which this pass reads block `b` (< blocks): the
    /// inverse of [`FioPass::block`].
    pub(crate) fn io_of(&self, b: u64) -> u64 {
        let d = if b >= self.offset {
            b - self.offset
        } else {
            b + self.blocks - self.offset
        };
        let j = (d as u128 * self.inv_stride as u128 % self.blocks as u128) as u64;
        self.pass * self.blocks + j
    }

    /// The block this pass's I/O `i` reads (`i` in the pass).
    pub(crate) fn block_of(&self, i: u64) -> u64 {
        self.block(i).expect("an I/O of this pass")
    }

    /// The block of the job's `i`-th I/O, if that I/O is in this pass.
    #[inline]
    fn block(&self, i: u64) -> Option<u64> {
        let j = i.checked_sub(self.pass * self.blocks)?;
        if j >= self.blocks {
            return None;
        }
        let r = self.offset + pattern::mul_rem(j, self.stride, self.blocks, self.rem_m);
        Some(if r >= self.blocks { r - self.blocks } else { r })
    }
}

/// How many I/Os ahead a random fio job prefetches (see [`Fio::prefetch_ahead`]).
const FIO_AHEAD: u64 = 4;

/// A stride in 1..n coprime with n, picked by `h`.
fn coprime_stride(n: u64, h: u64) -> u64 {
    if n <= 2 {
        return 1;
    }
    let mut s = 1 + (h >> 16) % (n - 1);
    while gcd(s, n) != 1 {
        s = 1 + s % (n - 1);
    }
    s
}

/// a⁻¹ mod n for a coprime with n (0 when n is 1), by the extended Euclidean algorithm.
fn inverse_mod(a: u64, n: u64) -> u64 {
    let (mut r0, mut r1) = (n as i128, (a % n) as i128);
    let (mut t0, mut t1) = (0i128, 1i128);
    while r1 != 0 {
        let q = r0 / r1;
        (r0, r1) = (r1, r0 - q * r1);
        (t0, t1) = (t1, t0 - q * t1);
    }
    t0.rem_euclid(n as i128) as u64
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// `mmap-latency`: each thread maps `size` of fresh anonymous memory, writes it 4 KiB
/// at a time (one zero-fill fault per page) and unmaps it. One operation per mapping;
/// its latency is the time to fault the mapping in, as stutterp's worker reports.
/// With `populate` (or `mlock`) the mmap call faults the pages in and the writes hit.
pub struct MmapLatency {
    pub spaces: Vec<u32>,
    pub pages: u32,
    pub populate: bool,
}

impl MmapLatency {
    pub fn new(idx: usize, cfg: &WorkloadCfg, mm: &mut Mm) -> MmapLatency {
        let pages = cfg.size.expect("validated").pages() as u32;
        let spaces = (0..cfg.threads)
            .map(|i| {
                mm.add_space(
                    SpaceKind::Anon,
                    format!("{}/{i}", cfg.name),
                    pages as u64,
                    Some(idx),
                )
            })
            .collect();
        let populate = cfg.populate.unwrap_or(cfg.mlock.unwrap_or(false));
        MmapLatency {
            spaces,
            pages,
            populate,
        }
    }

    pub(crate) fn op(&mut self, t: &mut Thread, cx: &mut Ctx, origin: u64) -> Step {
        let space = self.spaces[t.index];
        if self.populate {
            // mmap(MAP_POPULATE), or the rest of it (`t.populate` is this mapping's
            // call until the munmap).
            t.populate.get_or_insert(Populate::new(space, self.pages));
            if let Some(step) = populate(cx, t, origin) {
                return step;
            }
        }
        while t.progress < self.pages as u64 {
            if cx.clock >= cx.slice_end {
                t.retry = Some((0, true, origin));
                return Step::Yield;
            }
            let vpn = t.progress as u32;
            // Populated, the writes hit (unless reclaim took a page since).
            let step = if self.populate {
                touch(cx, t, space, vpn, true, origin)
            } else {
                Some(fault_in(cx, t, space, vpn, true, origin))
            };
            match step {
                None | Some(Step::Op(FaultResult::Done, _)) => t.progress += 1,
                // The fault is done, and its return to user space sleeps
                // (`mem_cgroup_handle_over_high`'s penalty, a reclaim throttle that
                // let the allocation through): the program's next store is after it.
                Some(Step::Op(FaultResult::Blocked { until_ns, memstall }, _)) => {
                    t.progress += 1;
                    t.retry = Some((0, true, origin));
                    return Step::Wait { until_ns, memstall };
                }
                // Not done (asleep in reclaim before the page came, or killed): the
                // same page again.
                Some(step) => {
                    t.retry = Some((0, true, origin));
                    return step;
                }
            }
        }
        // munmap: the latency is the fault-in; the unmap's cost is the task's all the
        // same.
        let end_of_faults = cx.clock;
        cx.kernel(|mm| {
            mm.zap_space(space);
            FaultResult::Done
        });
        t.progress = 0;
        t.populate = None;
        t.retry = None;
        let unmap_ns = cx.clock - end_of_faults;
        cx.clock = end_of_faults;
        // Report the op at the end of the faults, then let the unmap's time pass.
        let step = Step::Op(FaultResult::Done, self.pages as u64 * 4096);
        cx.deferred_ns += unmap_ns;
        step
    }
}

/// `anon-hog`: keeps `size` of anonymous memory and writes it page after page, again
/// and again (`stress --vm-keep`); with `grow_by` the region grows by that much every
/// `grow_every` up to `max_size`.
pub struct AnonHog {
    pub space: u32,
    pub size_pages: u64,
    pub max_pages: u64,
    pub grow_by_pages: u64,
    pub grow_every_ns: u64,
    pub write_u32: u32,
}

impl AnonHog {
    pub fn new(idx: usize, cfg: &WorkloadCfg, mm: &mut Mm) -> AnonHog {
        let size_pages = cfg.size.expect("validated").pages().max(1);
        let max_pages = cfg
            .max_size
            .map_or(size_pages, |m| m.pages())
            .max(size_pages);
        AnonHog {
            space: mm.add_space(SpaceKind::Anon, cfg.name.clone(), max_pages, Some(idx)),
            size_pages,
            max_pages,
            grow_by_pages: cfg.grow_by.map_or(0, |b| b.pages()),
            grow_every_ns: cfg.grow_every.map_or(u64::MAX, |t| t.0.max(1)),
            write_u32: prob_u32(cfg.write_ratio.unwrap_or(1.0)),
        }
    }

    /// Pages in use at `now`.
    pub fn active_pages(&self, start_ns: u64, now: u64) -> u64 {
        let steps = now.saturating_sub(start_ns) / self.grow_every_ns;
        (self.size_pages + self.grow_by_pages.saturating_mul(steps)).min(self.max_pages)
    }

    // Kept out of run_slice: inlined there, its hit loop ran slower (stutterp's hogs).
    #[inline(never)]
    pub(crate) fn op(
        &mut self,
        stats: &mut WorkloadStats,
        stats_from: u64,
        start_ns: u64,
        t: &mut Thread,
        cx: &mut Ctx,
        origin: u64,
    ) -> Step {
        if let Some((vpn, write)) = cx.retry {
            return fault_in(cx, t, self.space, vpn as u32, write, origin);
        }
        let access_ns = cx.mm.cfg.costs.access_ns;
        let active = self.active_pages(start_ns, cx.clock);
        let limit = hit_limit(cx, access_ns, u64::MAX);
        let (cpu_node, nr_nodes) = (cx.mm.numa_node_id(), cx.mm.nr_nodes());
        let mut slow = super::Slow::new(&cx.mm.access_extra, cpu_node, nr_nodes);
        let any_slow = cx.mm.slow_nodes != 0;
        let wr = self.write_u32;
        let traps = cx.mm.spaces[self.space as usize].traps();
        // Skipping, a sweep that writes every page or none, over a region that grows
        // no more, is a sequential sweep: its settled runs, and page tables seen
        // settled, pass without a look, access for access as below. (The cursor here
        // stays past the end until the next call wraps it, so a region that grows
        // next goes on into the new pages: kept to the loop below.)
        let exact = wr == 0 || wr == u32::MAX;
        if cx.skip.is_some() && cx.unpaced && exact && active == self.max_pages && !traps {
            let s = &mut cx.mm.spaces[self.space as usize];
            let mut cursor = if t.cursor >= active { 0 } else { t.cursor };
            let state = (&mut t.skip, &mut slow);
            let at = (self.space, 0, active);
            let (hits, miss) =
                super::skip::sequential_hits(s, limit, wr, &mut t.rng, &mut cursor, state, at);
            t.cursor = cursor;
            cx.slow_ns += slow.ns;
            return after_hits(
                stats, stats_from, cx, t, self.space, hits, miss, access_ns, origin,
            );
        }
        let entries = cx.mm.spaces[self.space as usize].hw_table_mut();
        let (rng, cursor) = (&mut t.rng, &mut t.cursor);
        // Without slow nodes, the run's bits set without a test per entry.
        let (hits, miss) = if any_slow {
            let seen = |(e, _): super::Seen| slow.hit(e);
            hit_loop_cursor(entries, limit, wr, rng, cursor, active, seen)
        } else {
            hit_loop_cursor(entries, limit, wr, rng, cursor, active, |_| ())
        };
        cx.slow_ns += slow.ns;
        after_hits(
            stats, stats_from, cx, t, self.space, hits, miss, access_ns, origin,
        )
    }
}

/// One step of [`Phases`]: so many accesses over `sampler.items()` pages from page
/// `base`.
pub struct PhaseStep {
    pub accesses: u64,
    pub base: u64,
    pub sampler: Sampler,
    pub write_u32: u32,
}

/// `phases`: every thread runs the steps in order, the ones from `repeat_from` on
/// `repeat` times; the workload's runtime is when the last thread has done all of them.
pub struct Phases {
    pub space: u32,
    pub steps: Vec<PhaseStep>,
    pub repeat: u32,
    pub repeat_from: usize,
}

impl Phases {
    pub fn new(idx: usize, cfg: &WorkloadCfg, mm: &mut Mm, access_ns: u64) -> Phases {
        let (phases, repeat, repeat_from) = cfg.phase_program();
        let max_pages = phases
            .iter()
            .map(|p| (p.offset.0 + p.size.0).div_ceil(4096))
            .max()
            .unwrap_or(1)
            .max(1);
        // A hotcold step with a phase change is two steps here: the accesses before
        // it with the hot set at the range's start, the rest with it in the middle.
        let mut steps = Vec::new();
        let mut first_step = Vec::new();
        for p in phases {
            first_step.push(steps.len());
            let n = p.size.pages().max(1);
            let accesses = (p.duration.0 / access_ns).max(1);
            let step = |accesses: u64, sampler: Sampler| PhaseStep {
                accesses,
                base: p.offset.0 / 4096,
                sampler,
                write_u32: prob_u32(p.write_ratio.unwrap_or(0.0)),
            };
            match p.pattern {
                Pattern::Sequential => steps.push(step(accesses, Sampler::Sequential { n })),
                Pattern::Zipf => steps.push(step(
                    accesses,
                    Sampler::Zipf(Arc::new(Zipf::new(n, p.skew.unwrap_or(0.99)))),
                )),
                Pattern::Hotcold => {
                    let hot = |moved: bool| Sampler::HotCold {
                        n,
                        hot_n: ((n as f64 * p.hot_fraction.unwrap_or(0.2)) as u64)
                            .clamp(1, n.max(2) - 1),
                        hot_prob_u32: prob_u32(p.hot_probability.unwrap_or(0.8)),
                        // Time 0 has passed: moved from the start.
                        phase_change_ns: moved.then_some(0),
                    };
                    match p.phase_change.filter(|&k| k > 0 && k < accesses) {
                        Some(k) => {
                            steps.push(step(k, hot(false)));
                            steps.push(step(accesses - k, hot(true)));
                        }
                        None => steps.push(step(accesses, hot(p.phase_change == Some(0)))),
                    }
                }
                Pattern::Uniform => steps.push(step(accesses, Sampler::Uniform { n })),
            }
        }
        let repeat_from = first_step.get(repeat_from as usize).copied().unwrap_or(0) as u32;
        Phases {
            space: mm.add_space(SpaceKind::Anon, cfg.name.clone(), max_pages, Some(idx)),
            steps,
            repeat: repeat.max(1),
            repeat_from: repeat_from as usize,
        }
    }

    pub(crate) fn op(
        &mut self,
        stats: &mut WorkloadStats,
        stats_from: u64,
        t: &mut Thread,
        cx: &mut Ctx,
        origin: u64,
    ) -> Step {
        if t.progress == 0 {
            // Entering step t.phase; past the last, go round again from repeat_from.
            if t.phase == self.steps.len() && t.loops_done + 1 < self.repeat {
                t.loops_done += 1;
                t.phase = self.repeat_from;
            }
            match self.steps.get(t.phase) {
                None => return Step::Finished,
                Some(s) => {
                    t.phase_left = s.accesses;
                    t.progress = 1;
                    t.cursor = 0;
                }
            }
        }
        let step = &self.steps[t.phase];
        let step_done = |t: &mut Thread, n: u64| {
            t.phase_left -= n.min(t.phase_left);
            if t.phase_left == 0 {
                t.phase += 1;
                t.progress = 0;
            }
        };
        if let Some((vpn, write)) = cx.retry {
            let s = fault_in(cx, t, self.space, vpn as u32, write, origin);
            if matches!(s, Step::Op(FaultResult::Done, _)) {
                step_done(t, 1);
            }
            return s;
        }
        let access_ns = cx.mm.cfg.costs.access_ns;
        let limit = hit_limit(cx, access_ns, t.phase_left);
        let (wr, space, base) = (step.write_u32, self.space, step.base);
        let (hits, miss) = run_hit_loop(cx, t, &step.sampler, space, base, limit, wr);
        step_done(t, hits);
        let s = after_hits(
            stats, stats_from, cx, t, self.space, hits, miss, access_ns, origin,
        );
        if miss.is_some() && matches!(s, Step::Op(FaultResult::Done, _)) {
            step_done(t, 1);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `io_of` undoes `block`: each block of a pass is read at exactly the I/O it
    /// names, and the inverse stride times the stride is 1 mod blocks.
    #[test]
    fn io_of_finds_the_io_that_reads_each_block() {
        for (blocks, h) in [(1u64, 7u64), (2, 3), (97, 12_345), (51_200, u64::MAX - 5)] {
            for pass in [0u64, 3] {
                let p = FioPass::new(blocks, pass, h);
                assert_eq!(
                    (p.stride as u128 * p.inv_stride as u128 % blocks as u128) as u64,
                    1 % blocks
                );
                let first = pass * blocks;
                for i in first..first + blocks.min(5000) {
                    assert_eq!(p.io_of(p.block_of(i)), i, "blocks {blocks} i {i}");
                }
            }
        }
    }

    /// A sequential job's pass reads block j at its j-th I/O, as `Fio::block`'s
    /// `i % blocks` does, and `io_of` finds it there.
    #[test]
    fn a_sequential_pass_reads_the_blocks_in_turn() {
        for blocks in [1u64, 2, 97, 1 << 33] {
            for pass in [0u64, 4] {
                let p = FioPass::sequential(blocks, pass);
                let first = pass * blocks;
                for i in (first..first + blocks.min(300)).chain([first + blocks - 1]) {
                    assert_eq!(p.block(i), Some(i % blocks), "blocks {blocks} i {i}");
                    assert_eq!(p.io_of(i % blocks), i, "blocks {blocks} i {i}");
                }
                assert_eq!(p.block(first + blocks), None);
            }
        }
    }

    /// A pass's blocks are (h mod blocks + (i mod blocks) · stride) mod blocks, in
    /// 128-bit arithmetic, for I/Os in the pass, and none outside it; a pass is a
    /// permutation of the blocks.
    #[test]
    fn fio_pass_is_the_permutation_by_division() {
        for (blocks, h) in [
            (1u64, 7u64),
            (2, 3),
            (97, 12_345),
            (51_200, u64::MAX - 5),
            (1 << 33, 99),
        ] {
            let stride = coprime_stride(blocks, h);
            for pass in [0u64, 1, 5] {
                let p = FioPass::new(blocks, pass, h);
                let first = pass * blocks;
                let n = blocks.min(3000);
                for i in (first..first + n).chain(first + blocks - n..first + blocks) {
                    let want = ((h % blocks) as u128 + (i % blocks) as u128 * stride as u128)
                        % blocks as u128;
                    assert_eq!(p.block(i), Some(want as u64), "blocks {blocks} i {i}");
                }
                assert_eq!(p.block(first + blocks), None);
                if first > 0 {
                    assert_eq!(p.block(first - 1), None);
                }
            }
            if blocks <= 51_200 {
                let p = FioPass::new(blocks, 0, h);
                let mut seen = vec![false; blocks as usize];
                for i in 0..blocks {
                    let b = p.block(i).expect("in the pass") as usize;
                    assert!(!seen[b], "block {b} twice");
                    seen[b] = true;
                }
            }
        }
    }
}
