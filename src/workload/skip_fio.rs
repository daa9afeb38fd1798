//! Skip sampling for fio's reads and writes (`rw = "randread"`, `"read"`,
//! `"randwrite"`, `"write"` and `"randrw"` under `run.access_sampling = "skip"`).
//!
//! A job makes its I/Os in a fixed order per pass ([`FioPass`]) that no random stream
//! draws: a permutation of the file's blocks (random), or the blocks in turn
//! (sequential). An I/O of a settled block changes no state but the clock (and, for a
//! read, the file position): it costs the syscall and the page copies as system time
//! and is one operation of that latency. A read's block is settled when its pages are
//! all cached and settled ([`Mm::filemap_read_settled`]: no read on record, no
//! readahead mark, `folio_mark_accessed` would change nothing); a write's when its
//! pages are all cached and dirty ([`Mm::filemap_write_settled`]), while the writer's
//! dirty throttling would not look at the global state ([`Mm::dirty_ratelimit_quiet`],
//! checked per run: the task's state, which only its own dirtying moves, not a
//! block's). A `randrw` job draws each I/O's kind from the thread's stream; its block
//! is settled when it is for both, and its runs draw the kinds as [`Fio::op`] would,
//! a run at a time up to its next read (whose start and block the file's state after
//! the run needs). So a job keeps the blocks an I/O
//! may change (a superset), finds where the pass in progress reaches them
//! ([`FioPass::io_of`]), makes the I/Os between them in closed form, and hands each
//! such block to [`Fio::op`], which makes its I/O as under `each`. Results are
//! `each`'s, byte for byte. (A sequential read that starts where the last ended skips
//! marking its first page, but a settled page's marking changes nothing either way; a
//! page marked PG_readahead, where async readahead starts the next window, is never
//! settled.)
//!
//! The set follows the file's change log: every page-cache entry written, and (while
//! a job watches, `Mm::watching_folios`) every folio whose state another path
//! changed: isolated for reclaim, deactivated, aged by MGLRU, its referenced bit
//! taken by DAMON, cleaned for writeback ([`Mm::folio_changed`]). A set with more
//! than a quarter of the blocks in it is dropped, the I/Os taken one by one for a
//! pass (two, four, then eight after sets found dense in a row), and then built again
//! from the page cache.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::mm::lru_gen::PTRS_PER_PTE;
use crate::mm::{Mm, PMD_CHANGE};
use crate::scenario::FioRw;

use rand::RngCore;

use super::bench_kinds::{Fio, FioPass};
use super::{left_by_settled_syscall, Pacing, SliceEnd, SliceReport, Spec, Thread, Workload};

thread_local! {
    /// I/Os made in closed form on this host thread ([`ios_skipped_here`]).
    static IOS_SKIPPED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many fio reads and writes the runs on this host thread have made in closed
/// form: the evidence, for tests and for anyone asking whether skipping pays, that a
/// run skipped (its results are `each`'s either way).
pub fn ios_skipped_here() -> u64 {
    IOS_SKIPPED.with(|c| c.get())
}

/// A job's skipping state.
#[derive(Debug, Default)]
pub struct FioSkip {
    set: Option<Box<FioSet>>,
    /// After a dense set: the reads are taken one by one up to this I/O.
    dense_until: u64,
    /// Sets found dense in a row: each doubles the passes before the next look (up to
    /// 8), so a job whose reads keep changing state pays for a build at most once
    /// every 8 passes.
    dense_streak: u32,
}

/// The blocks of a job's file that an I/O may change, and where the pass in progress
/// reaches them.
#[derive(Debug)]
struct FioSet {
    space: u32,
    blocks: u64,
    bs_pages: u32,
    /// What the job's I/Os may be: a block is settled for all of them.
    mix: Mix,
    /// One bit per block.
    member: Vec<u64>,
    members: u64,
    /// The space's change log position this set has taken in.
    log_pos: u64,
    /// The pass `ahead` is for.
    pass: u64,
    /// (I/O number, block) of the pass's reads of members at or after the cursor when
    /// they were put here; an entry whose block has since left the set is passed over.
    ahead: BinaryHeap<Reverse<(u64, u64)>>,
}

impl FioSet {
    /// Every block an I/O may change now (or, once over a quarter of them are, the
    /// set so far: dense, to be dropped); the space logs changes from here on.
    fn build(mm: &mut Mm, space: u32, blocks: u64, bs_pages: u32, mix: Mix) -> FioSet {
        mm.watching_folios = true;
        let log_pos = mm.spaces[space as usize].watch_changes();
        let mut s = FioSet {
            space,
            blocks,
            bs_pages,
            mix,
            member: vec![0; blocks.div_ceil(64) as usize],
            members: 0,
            log_pos,
            pass: u64::MAX,
            ahead: BinaryHeap::new(),
        };
        for b in 0..blocks {
            if !s.settled(mm, b) {
                s.member[(b / 64) as usize] |= 1 << (b % 64);
                s.members += 1;
                if s.dense() {
                    break;
                }
            }
        }
        s
    }

    /// Whether this job's I/O of block `b` would change nothing, whichever its mix
    /// draws (the writer's dirty throttling aside, which [`run`] checks).
    fn settled(&self, mm: &Mm, b: u64) -> bool {
        let first = (b * self.bs_pages as u64) as u32;
        (!self.mix.writes() || mm.filemap_write_settled(self.space, first, self.bs_pages))
            && (!self.mix.reads() || mm.filemap_read_settled(self.space, first, self.bs_pages))
    }

    /// Over a quarter of the blocks are members: skipping would not pay.
    fn dense(&self) -> bool {
        self.members * 4 > self.blocks
    }

    fn has(&self, b: u64) -> bool {
        self.member[(b / 64) as usize] >> (b % 64) & 1 != 0
    }

    fn remove(&mut self, b: u64) {
        self.member[(b / 64) as usize] &= !(1 << (b % 64));
        self.members -= 1;
    }

    /// `b` may change: a member, placed in the pass if its read is still to come.
    fn add(&mut self, b: u64, pass: &FioPass, cursor: u64) {
        if b >= self.blocks || self.has(b) {
            return;
        }
        self.member[(b / 64) as usize] |= 1 << (b % 64);
        self.members += 1;
        let io = pass.io_of(b);
        if io >= cursor {
            self.ahead.push(Reverse((io, b)));
        }
    }

    /// The changes logged since the last look; false if some were dropped (the set
    /// must be built again).
    fn catch_up(&mut self, mm: &Mm, pass: &FioPass, cursor: u64) -> bool {
        let space = &mm.spaces[self.space as usize];
        let Some(changes) = space.changes_since(self.log_pos) else {
            return false;
        };
        let end = space.log_end();
        let bs = self.bs_pages as u64;
        for &c in changes {
            let (first, last) = if c & PMD_CHANGE != 0 {
                let pmd = c & !PMD_CHANGE;
                let first = pmd * PTRS_PER_PTE as u64;
                (first, first + PTRS_PER_PTE as u64 - 1)
            } else {
                (c, c)
            };
            for b in first / bs..=last / bs {
                self.add(b, pass, cursor);
            }
        }
        self.log_pos = end;
        true
    }

    /// The members' reads in `pass` from `cursor` on.
    fn place(&mut self, pass: &FioPass, cursor: u64) {
        let mut v = std::mem::take(&mut self.ahead).into_vec();
        v.clear();
        for (w, &bits) in self.member.iter().enumerate() {
            let mut bits = bits;
            while bits != 0 {
                let b = w as u64 * 64 + bits.trailing_zeros() as u64;
                bits &= bits - 1;
                let io = pass.io_of(b);
                if io >= cursor {
                    v.push(Reverse((io, b)));
                }
            }
        }
        self.ahead = BinaryHeap::from(v);
        self.pass = pass.pass();
    }

    /// The next read of a member at or after `cursor` (stale entries dropped).
    fn next(&mut self, cursor: u64) -> Option<(u64, u64)> {
        while let Some(&Reverse((io, b))) = self.ahead.peek() {
            if io >= cursor && self.has(b) {
                return Some((io, b));
            }
            self.ahead.pop();
        }
        None
    }
}

/// What a job's I/Os are: reads, writes, or either (`randrw`: each I/O a read when
/// the thread's stream draws below `read_u32`, as [`Fio::op`] draws it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mix {
    Reads,
    Writes,
    Both { read_u32: u32 },
}

impl Mix {
    fn of(f: &Fio) -> Mix {
        match f.rw {
            FioRw::Randread | FioRw::Read => Mix::Reads,
            FioRw::Randwrite | FioRw::Write => Mix::Writes,
            FioRw::Randrw => Mix::Both {
                read_u32: f.read_u32,
            },
        }
    }

    fn reads(self) -> bool {
        self != Mix::Writes
    }

    fn writes(self) -> bool {
        self != Mix::Reads
    }
}

/// Whether thread `t`'s next I/Os are the skipping loop's: a fio job under skip
/// sampling, back to back or paced (`rate`; no think time), with no I/O in progress,
/// and not in a pass after a dense set.
pub(crate) fn applies(w: &Workload, t: &Thread) -> bool {
    let Spec::Fio(_) = &w.spec else {
        return false;
    };
    w.skip_sets.is_some()
        && w.batch == 1
        && w.think_ns == 0
        && t.retry.is_none()
        && t.populate.is_none()
        && !t.unrecorded
        && t.cursor >= t.fio_skip.dense_until
}

/// Thread `t`'s I/Os from `clock` as [`super::run_slice`]'s loop makes them (each
/// issued at its slot if the job is paced), up to the first of a block that may
/// change something (left for [`Fio::op`]), the workload's `ops`, or the slice's end.
/// Returns how many it made, or how the slice ended (the pacing's sleep past it, the
/// slice's end, the workload's stop).
#[inline(never)]
pub(crate) fn run(
    w: &mut Workload,
    t: &mut Thread,
    mm: &mut Mm,
    clock: &mut u64,
    slice_end: u64,
    rep: &mut SliceReport,
) -> Result<u64, SliceEnd> {
    let Workload {
        spec: Spec::Fio(f),
        stats,
        stats_from_ns,
        stop_ns,
        ops_left,
        interval_ns,
        ..
    } = w
    else {
        unreachable!("applies() checked the kind");
    };
    let end_ns = (*stop_ns).min(slice_end);
    if *clock >= end_ns || *ops_left == Some(0) {
        return Ok(0);
    }
    let mix = Mix::of(f);
    if mix.writes() && !mm.dirty_ratelimit_quiet() {
        // The next write looks at the global dirty state whatever it writes: taken
        // as under `each`. Only the writer's own dirtying moves its counts, so they
        // stay as they are over the writes made here.
        return Ok(0);
    }
    let (space, blocks, bs_pages) = (f.spaces[t.index], f.blocks, f.bs_pages);
    let op_ns = mm.cfg.costs.syscall_ns + bs_pages as u64 * mm.cfg.costs.copy_page_ns;
    let bytes = bs_pages as u64 * 4096;
    // The pass at the cursor, kept in t.fio_pass.
    let mut pass = f.pass_at(t, t.cursor);
    mm.now = *clock;
    let kept = t.fio_skip.set.take().and_then(|mut s| {
        let whole = s.catch_up(mm, &pass, t.cursor);
        whole.then_some(s)
    });
    let mut set = match kept {
        Some(s) => s,
        None => Box::new(FioSet::build(mm, space, blocks, bs_pages, mix)),
    };
    if set.dense() {
        // Dense: the I/Os one by one to the end of this pass and 2^streak − 1 more;
        // the log is not needed meanwhile.
        mm.spaces[space as usize].unwatch_changes();
        let st = &mut t.fio_skip;
        let passes = 1u64 << st.dense_streak.min(3);
        st.dense_streak += 1;
        st.dense_until = (pass.pass() + passes) * blocks;
        return Ok(0);
    }
    t.fio_skip.dense_streak = 0;
    if set.pass != pass.pass() {
        set.place(&pass, t.cursor);
    }
    // run_slice's loop in closed form: each I/O issued as the pacing allows (back to
    // back: as the last ends), one operation of `op_ns`, the ramp respected.
    let ends = (slice_end, *stop_ns);
    let mut p = Pacing::new(
        *clock,
        t.next_issue_ns,
        *interval_ns,
        ends,
        op_ns,
        *stats_from_ns,
    );
    let mut end = None;
    // The last read made here: its start and its I/O number.
    let mut last_read = None;
    while p.clock < end_ns && *ops_left != Some(0) {
        let pass_end = (pass.pass() + 1) * blocks;
        if t.cursor == pass_end {
            pass = f.pass_at(t, t.cursor);
            set.place(&pass, t.cursor);
            continue;
        }
        let n = match set.next(t.cursor) {
            Some((io, b)) if io == t.cursor => {
                // A block that may have changed, reached next: look at it now
                // (nothing changes it before its I/O, later in this slice if paced,
                // or in a later one after the log is caught up).
                if !set.settled(mm, b) {
                    break;
                }
                set.remove(b);
                1
            }
            Some((io, _)) => io - t.cursor,
            None => pass_end - t.cursor,
        };
        let n = n.min(ops_left.unwrap_or(u64::MAX));
        // `randrw`: the I/Os up to its next read, each one's kind drawn as
        // `Fio::op` draws it (the stream put back to what those made consumed).
        let (n, ends_in_read, drawn_from) = match mix {
            Mix::Reads => (n, true, None),
            Mix::Writes => (n, false, None),
            Mix::Both { read_u32 } => {
                let from = t.rng.clone();
                let (mut c, mut read) = (0, false);
                while c < n && !read {
                    read = (t.rng.next_u64() as u32) < read_u32;
                    c += 1;
                }
                (c, read, Some(from))
            }
        };
        let k = p.run_hits(n);
        if k < n {
            if let Some(from) = drawn_from {
                t.rng = from;
                (0..k).for_each(|_| _ = t.rng.next_u64());
            }
        }
        // A run cut short made only writes, but for a read job.
        if k > 0
            && (if k == n {
                ends_in_read
            } else {
                mix == Mix::Reads
            })
        {
            last_read = Some((p.hits_end_ns - op_ns, t.cursor + k - 1));
        }
        t.cursor += k;
        if let Some(left) = ops_left.as_mut() {
            *left -= k;
        }
        if k < n {
            end = Some(p.end.expect("a run cut short ends the slice"));
            break;
        }
    }
    let made = p.hits;
    *clock = p.clock;
    if *interval_ns > 0 {
        t.next_issue_ns = p.next_issue_ns;
    }
    if made > 0 {
        rep.system_ns += made * op_ns;
        t.ops += made;
        t.last_op_ns = Some(p.hits_end_ns);
        // What the last read left behind: completed reads forgotten as of its start,
        // and the file position (a write changes neither). (Its `t.read` is not: the
        // next read resets it unread.) Then what the last I/O left: the kernel's
        // state at its entry and exit, and the batch it was.
        if let Some((start_ns, io)) = last_read {
            // (In the pass in progress unless writes have since entered the next.)
            let block = if pass.pass() == io / blocks {
                pass.block_of(io)
            } else {
                f.pass_at(t, io).block_of(io)
            };
            mm.now = start_ns;
            mm.read_pending_until(space, (block * bs_pages as u64) as u32);
            mm.spaces[space as usize].ra.prev_pos = ((block + 1) * bs_pages as u64 * 4096) as i64;
        }
        let last_start = p.hits_end_ns - op_ns;
        left_by_settled_syscall(mm, last_start, op_ns);
        t.batch_start_ns = last_start;
        t.batch_left = 0;
    }
    p.record_counted(stats, bytes);
    t.fio_skip.set = Some(set);
    IOS_SKIPPED.with(|c| c.set(c.get() + made));
    end.map_or(Ok(made), Err)
}
