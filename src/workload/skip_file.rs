//! Skip sampling for `file-read` workloads reading at uniform, zipf or hot/cold
//! offsets or in turn (`pattern = "uniform"`, `"zipf"`, `"hotcold"` or
//! `"sequential"`, read(), under `run.access_sampling = "skip"`), back to back or
//! paced, and for `file-write` workloads writing so and `file-read` ones loading
//! through the files' mappings (`mmap = true`).
//!
//! A read() of an item (`io_size` of one of the files) whose pages are all cached and
//! settled ([`Mm::filemap_read_settled`]: no read on record, no readahead mark,
//! `folio_mark_accessed` would change nothing) changes no state but the clock and the
//! file's `prev_pos`: it costs the syscall and the page copies as system time and is
//! one operation of that latency. So the workload keeps the items a read may change
//! (its threads share the set, as [`super::skip_kv`]'s keys), and a thread's run of
//! reads of other items is made in closed form: how many come before the next read of
//! a member is geometric with the members' share of the items, their slots pass as a
//! paced anon thread's hits do ([`Pacing::run_hits`]), and each file's `prev_pos` is
//! left where the run's last read of that file ended, drawn backwards over the run
//! (each read's file in proportion to its settled items, the first read met of a file
//! a settled item of it, uniformly). At zipf offsets the items are weighed as
//! [`super::skip_kv`]'s zipf keys are (a member by its rank's weight), at hot/cold
//! ones as a hot/cold anon set's pages are (a member by its class's chance, in a run
//! that stays in one phase of the hot set); the gap is geometric with the members'
//! share of the chance, and each read of the backward draw an item as the picker
//! draws among the settled ones. The read of a member is handed to the
//! workload's operation as a retry issued at its slot, and made as under `each`. So
//! results agree with `each` in distribution: the offsets are the same random process.
//!
//! A sequential thread reads the items in turn from its cursor (wrapping), so nothing
//! is drawn: the run before the next member in reading order is made in closed form,
//! a file at a time, each file left as its last read leaves it (`prev_pos` at its end,
//! the file's completed reads forgotten as of its start: a thread whose slice runs at
//! an earlier instant sees them so), and the member's read is left to the loop, which
//! makes it at its slot as under `each`. A member reached is looked at first and
//! dropped if settled. Results are `each`'s byte for byte.
//!
//! A `file-write` workload's write() of an item whose pages are cached and already
//! dirty changes nothing either ([`Mm::filemap_write_settled`]), while the writer's
//! dirty throttling would not look at the global state ([`Mm::dirty_ratelimit_quiet`],
//! checked per run as `skip_fio` does); a write leaves no file position and forgets
//! no completed read, so its runs leave the files as they were. So does a load
//! through a file's mapping of pages whose entries are present and young under a
//! young PMD entry (an anonymous page's settled access, [`settled`]): it costs the
//! accesses as user time and enters no kernel.
//!
//! The set follows each file's change log: every page-cache entry written, and (with
//! [`Mm::watching_folios`]) every folio whose LRU state another path changed. It
//! starts dense, not built: reads are taken one by one (as under `each`) until those
//! probed show they rarely change something ([`DenseProbe`]); it goes dense again
//! when over a quarter of the items are members.

use rand::RngCore;
use rand_pcg::Pcg64Mcg;

use crate::mm::bitmap::for_each_set_bit;
use crate::mm::lru_gen::PTRS_PER_PTE;
use crate::mm::{Mm, PMD_CHANGE};

use super::pattern::{below, Sampler};
use super::skip::{
    geometric, next_in_turn, settled, ClassLists, DenseProbe, Dist, SkipSets, ZipfWeights,
};
use super::{left_by_settled_syscall, Pacing, SliceEnd, SliceReport, Spec, Thread, Workload};

thread_local! {
    /// Reads (and writes) made in closed form on this host thread
    /// ([`reads_skipped_here`]).
    static READS_SKIPPED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many `file-read` reads (and `file-write` writes) the runs on this host thread
/// have made in closed form (for tests, and for anyone asking whether skipping pays).
pub fn reads_skipped_here() -> u64 {
    READS_SKIPPED.with(|c| c.get())
}

/// Above this share of the items as members, reads are taken one by one: a read
/// costs far more than an access, so skipping pays while most change nothing.
const DENSE_P_MEMBER: f64 = 1.0 / 4.0;
/// The items of a `file-read` workload's files that a read may change.
#[derive(Debug)]
pub struct FileSet {
    spaces: Vec<u32>,
    per_file_items: u64,
    io_pages: u32,
    /// What the workload's I/Os are.
    io: FileIo,
    items: u64,
    member: Vec<u64>,
    picks: FilePicks,
    /// The picker's identity ([`Dist::identity`]; hot/cold: in its phase).
    dist_id: [u64; 4],
    /// Members per file, and in all.
    file_members: Vec<u64>,
    members: u64,
    /// Each file's change log position this set has taken in.
    log_pos: Vec<u64>,
    /// Taking reads one by one (stale until built), and what they showed.
    probe: DenseProbe,
}

/// What a workload's I/Os are: read()s, write()s (`file-write`), or loads from the
/// files' mappings (`mmap = true`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FileIo {
    Read,
    Write,
    Mmap,
}

impl FileIo {
    fn of(write: bool, mmap: bool) -> FileIo {
        match (write, mmap) {
            (true, _) => FileIo::Write,
            (false, true) => FileIo::Mmap,
            (false, false) => FileIo::Read,
        }
    }
}

/// How the members are drawn, as the workload's picker draws items.
#[derive(Debug)]
enum FilePicks {
    /// Uniform or hot/cold offsets (and reads in turn): the members in a list per
    /// class of equally likely items, so one can be drawn and removed in O(1).
    Classes(ClassLists),
    /// Zipf offsets: the members' rank weights.
    Zipf(Box<ZipfWeights>),
}

impl FileSet {
    fn new(
        spaces: &[u32],
        (per_file_items, io_pages): (u64, u32),
        io: FileIo,
        dist: Dist,
    ) -> FileSet {
        let items = spaces.len() as u64 * per_file_items;
        let picks = match dist {
            Dist::Zipf(z) => FilePicks::Zipf(Box::new(ZipfWeights::new(z))),
            _ => FilePicks::Classes(ClassLists::new(items, dist)),
        };
        FileSet {
            spaces: spaces.to_vec(),
            per_file_items,
            io_pages,
            io,
            items,
            member: Vec::new(),
            picks,
            dist_id: dist.identity(),
            file_members: vec![0; spaces.len()],
            members: 0,
            log_pos: vec![0; spaces.len()],
            probe: DenseProbe::new(),
        }
    }

    /// Item `i`'s file (its index) and first page.
    fn at(&self, i: u64) -> (usize, u32) {
        let f = (i / self.per_file_items) as usize;
        (f, ((i % self.per_file_items) * self.io_pages as u64) as u32)
    }

    /// Whether a read (a write, a load of each page through the mapping) of item
    /// `i` would change nothing (the writer's dirty throttling aside, which [`run`]
    /// checks). A load changes nothing when the page's entry is present and young
    /// and its PMD entry young, as an anonymous page's access.
    fn settled(&self, mm: &Mm, i: u64) -> bool {
        let (f, first) = self.at(i);
        let (space, n) = (self.spaces[f], self.io_pages);
        match self.io {
            FileIo::Read => mm.filemap_read_settled(space, first, n),
            FileIo::Write => mm.filemap_write_settled(space, first, n),
            FileIo::Mmap => {
                let s = &mm.spaces[space as usize];
                (first..first + n).all(|p| settled(s.pte(p), s.pmd_young(p), 0))
            }
        }
    }

    fn has(&self, i: u64) -> bool {
        self.member[(i / 64) as usize] >> (i % 64) & 1 != 0
    }

    fn add(&mut self, i: u64) {
        if self.has(i) {
            return;
        }
        self.member[(i / 64) as usize] |= 1 << (i % 64);
        match &mut self.picks {
            FilePicks::Classes(c) => c.add(i),
            FilePicks::Zipf(w) => w.add(i),
        }
        let f = self.at(i).0;
        self.file_members[f] += 1;
        self.members += 1;
    }

    fn remove(&mut self, i: u64) {
        if !self.has(i) {
            return;
        }
        self.member[(i / 64) as usize] &= !(1 << (i % 64));
        match &mut self.picks {
            FilePicks::Classes(c) => c.remove(i),
            FilePicks::Zipf(w) => w.remove(i),
        }
        let f = self.at(i).0;
        self.file_members[f] -= 1;
        self.members -= 1;
    }

    /// The chance that a read picks a member.
    fn p_member(&self) -> f64 {
        match &self.picks {
            FilePicks::Classes(c) => c.p_member(),
            FilePicks::Zipf(w) => w.total() as f64 / w.all_weight() as f64,
        }
    }

    /// A member, drawn as the picker would draw among the members (there is one).
    fn pick(&self, rng: &mut Pcg64Mcg) -> u64 {
        match &self.picks {
            FilePicks::Classes(c) => c.pick(rng),
            FilePicks::Zipf(w) => w.zipf_item(w.find(below(rng.next_u64(), w.total()))),
        }
    }

    /// The member bits, the first time.
    fn allocate(&mut self) {
        if self.member.is_empty() {
            self.member = vec![0; self.items.div_ceil(64) as usize];
        }
    }

    /// Builds the set from the page cache (allocated the first time) and starts
    /// skipping.
    fn build(&mut self, mm: &mut Mm) {
        self.allocate();
        self.probe.built();
        self.member.fill(0);
        self.file_members.fill(0);
        self.members = 0;
        for i in 0..self.items {
            if !self.settled(mm, i) {
                self.member[(i / 64) as usize] |= 1 << (i % 64);
                self.file_members[(i / self.per_file_items) as usize] += 1;
                self.members += 1;
            }
        }
        let members = for_each_set_bit(&self.member).map(|i| i as u64);
        match &mut self.picks {
            FilePicks::Classes(c) => {
                c.clear();
                members.for_each(|i| c.add(i));
            }
            FilePicks::Zipf(w) => {
                // The tree summed once, not grown an item at a time.
                w.clear();
                members.for_each(|i| w.mark(i));
                w.sum_blocks();
            }
        }
        // A folio's state decides a read's or a write's effect, not a load's.
        if self.io != FileIo::Mmap {
            mm.watching_folios = true;
        }
        for (f, &s) in self.spaces.iter().enumerate() {
            self.log_pos[f] = mm.spaces[s as usize].watch_changes();
        }
    }

    /// Takes in the files' changes since the last look: the items over a page
    /// written (or a folio another path changed) that are unsettled join the set. A
    /// log that dropped some has the set built again.
    fn catch_up(&mut self, mm: &mut Mm) {
        let mut seen = Vec::new();
        for (f, &s) in self.spaces.iter().enumerate() {
            let space = &mut mm.spaces[s as usize];
            let end = space.watch_changes();
            let Some(changes) = space.changes_since(self.log_pos[f]) else {
                self.build(mm);
                return;
            };
            let io = self.io_pages as u64;
            for &c in changes {
                let (lo, hi) = if c & PMD_CHANGE != 0 {
                    let first = (c & !PMD_CHANGE) * PTRS_PER_PTE as u64;
                    (first, first + PTRS_PER_PTE as u64 - 1)
                } else {
                    (c, c)
                };
                let last = (hi / io).min(self.per_file_items - 1);
                for j in lo / io..=last {
                    seen.push(f as u64 * self.per_file_items + j);
                }
            }
            self.log_pos[f] = end;
        }
        for i in seen {
            if !self.has(i) && !self.settled(mm, i) {
                self.add(i);
            }
        }
    }

    /// How many reads in turn from item `from` come before the next read of a
    /// member (wrapping), if fewer than `within`.
    fn next_member(&self, from: u64, within: u64) -> Option<u64> {
        next_in_turn(&self.member, self.items, from, within)
    }

    /// Item `last`'s file as a run's last read of it, started at `last_start_ns`,
    /// leaves it: `prev_pos` at its end and the file's completed reads forgotten as
    /// of its start (as every read forgets them: a thread whose slice runs at an
    /// earlier instant sees them so).
    fn leave_file_after(&self, mm: &mut Mm, last: u64, last_start_ns: u64) {
        let (f, first) = self.at(last);
        let space = self.spaces[f];
        mm.spaces[space as usize].ra.prev_pos =
            ((first as u64 + self.io_pages as u64) * 4096) as i64;
        mm.now = last_start_ns;
        mm.read_pending_until(space, first);
    }

    /// A settled item of file `f` (one that is not a member), uniformly; `f` has one.
    fn settled_item_of(&self, f: usize, rng: &mut Pcg64Mcg) -> u64 {
        debug_assert!(self.file_members[f] < self.per_file_items);
        loop {
            let i = f as u64 * self.per_file_items + below(rng.next_u64(), self.per_file_items);
            if !self.has(i) {
                return i;
            }
        }
    }

    /// A file drawn in proportion to its settled items (of `settled` in all).
    fn settled_file(&self, rng: &mut Pcg64Mcg, settled: u64) -> usize {
        let mut u = below(rng.next_u64(), settled);
        for (f, &m) in self.file_members.iter().enumerate() {
            let n = self.per_file_items - m;
            if u < n {
                return f;
            }
            u -= n;
        }
        unreachable!("u < the settled items")
    }

    /// After `n` reads of settled items: each file's `prev_pos` where its last one
    /// ended. Drawn backwards from the last read: uniform offsets, its file in
    /// proportion to the settled items, and at a file's first meeting its item,
    /// uniformly among the file's settled ones (the reads are independent, so the
    /// last read of a file is any of its settled items alike); zipf or hot/cold
    /// offsets (`weighted`: the picker, and an instant in the run's phase), each
    /// read's item as the picker draws among the settled ones (drawn again while it
    /// is a member: a quarter of the chance at most). Stops once every file with a
    /// settled item is met.
    fn leave_prev_pos(
        &self,
        mm: &mut Mm,
        rng: &mut Pcg64Mcg,
        n: u64,
        weighted: Option<(&Sampler, u64)>,
    ) -> Option<u64> {
        let settled = self.items - self.members;
        if n == 0 || settled == 0 {
            return None;
        }
        let files = self.file_members.len();
        let open = self
            .file_members
            .iter()
            .filter(|&&m| m < self.per_file_items)
            .count();
        let mut met = vec![false; files];
        let (mut left, mut last_read) = (open, None);
        for _ in 0..n {
            let (f, drawn) = match weighted {
                Some((sampler, now)) => {
                    let i = std::iter::repeat_with(|| sampler.next(rng, &mut 0, now))
                        .find(|&i| !self.has(i))
                        .expect("an endless draw");
                    (self.at(i).0, Some(i))
                }
                None if files == 1 => (0, None),
                None => (self.settled_file(rng, settled), None),
            };
            if met[f] {
                continue;
            }
            met[f] = true;
            let i = drawn.unwrap_or_else(|| self.settled_item_of(f, rng));
            last_read.get_or_insert(i);
            let (_, first) = self.at(i);
            let end_pages = first as u64 + self.io_pages as u64;
            mm.spaces[self.spaces[f] as usize].ra.prev_pos = (end_pages * 4096) as i64;
            left -= 1;
            if left == 0 {
                break;
            }
        }
        last_read
    }
}

/// A thread's skipping state: the member its last read was handed on for (dropped
/// from the set at its next run if that read left it settled).
#[derive(Debug, Default)]
pub struct FileSkip {
    pending: Option<u64>,
}

/// Whether thread `t`'s next reads are the skipping loop's: a read() `file-read`
/// workload with uniform offsets or reading in turn under skip sampling (its set not
/// dense), one read a batch, no think time and no `ops` cap, with no read in
/// progress, no access recording, and files whose accesses do not trap.
pub(crate) fn applies(w: &Workload, t: &Thread, mm: &Mm, clock: u64, slice_end: u64) -> bool {
    let Spec::File {
        spaces, sampler, ..
    } = &w.spec
    else {
        return false;
    };
    let n = match sampler {
        Sampler::Uniform { n } | Sampler::Sequential { n } => n,
        Sampler::Zipf(z) => &z.skip_params().0,
        // A hot set that stays put for the run: after its phase change, or a slice
        // that ends before it (every read issued then).
        Sampler::HotCold {
            n,
            hot_n,
            phase_change_ns,
            ..
        } => {
            let still = phase_change_ns.is_none_or(|tc| clock >= tc || slice_end <= tc);
            if *hot_n == 0 || hot_n >= n || !still {
                return false;
            }
            n
        }
    };
    let skipping = |s: &SkipSets| s.file.as_ref().is_none_or(|f| !f.probe.dense);
    w.skip_sets.as_deref().is_some_and(skipping)
        && *n <= u32::MAX as u64
        && w.batch == 1
        && w.think_ns == 0
        && w.ops_left.is_none()
        && t.retry.is_none()
        && t.pending_since.is_none()
        && t.batch_left == 0
        && t.init_left == 0
        && t.populate.is_none()
        && t.recorder.is_none()
        && (w.interval_ns > 0 || t.next_issue_ns <= clock)
        && spaces.iter().all(|&s| !mm.spaces[s as usize].traps())
}

/// The picker's chances at `now` (hot/cold: its phase then), and what the backward
/// draw of `prev_pos` draws its reads with (None: uniform offsets, which it counts).
fn chances(sampler: &Sampler, now: u64) -> (Dist<'_>, Option<(&Sampler, u64)>) {
    match Dist::of(sampler, now) {
        Some((_, Dist::Uniform)) | None => (Dist::Uniform, None),
        Some((_, d)) => (d, Some((sampler, now))),
    }
}

/// The workload's set, made (dense, not built) if it has none or one for other files.
fn ready<'a>(
    slot: &'a mut Option<Box<FileSet>>,
    spaces: &[u32],
    (per_file_items, io_pages): (u64, u32),
    io: FileIo,
    dist: Dist,
) -> &'a mut FileSet {
    let fits = slot.as_ref().is_some_and(|s| {
        s.spaces == spaces
            && (s.per_file_items, s.io_pages, s.io) == (per_file_items, io_pages, io)
            && s.dist_id == dist.identity()
    });
    if !fits {
        let set = FileSet::new(spaces, (per_file_items, io_pages), io, dist);
        *slot = Some(Box::new(set));
    }
    slot.as_mut().expect("made above")
}

/// A read `each`'s loop drew for `item` while the set is dense, before it is made
/// ([`DenseProbe`]): the set is built once such reads turn rare.
pub(crate) fn dense_read(s: &mut FileSet, mm: &mut Mm, item: u64) {
    if s.probe.take() {
        let changed = !s.settled(mm, item);
        if s.probe.probed(changed, s.items) {
            s.build(mm);
        }
    }
}

/// Thread `t`'s reads (or a `file-write` workload's writes, or loads through the
/// mappings) from `clock` as
/// [`super::run_slice`]'s loop makes them, at their slots, up to the first read of a
/// member (uniform: handed on in `t.retry`, issued at its slot; in turn: not yet
/// issued; None is returned and the loop makes it), or the end of the slice, of a
/// sleep past it or of the workload (returned). None too when the set is dense, or a
/// writer's dirty throttling may look at the global state: the loop draws and makes
/// each I/O.
pub(crate) fn run(
    w: &mut Workload,
    t: &mut Thread,
    mm: &mut Mm,
    clock: &mut u64,
    slice_end: u64,
    rep: &mut SliceReport,
) -> Option<SliceEnd> {
    let Workload {
        spec:
            Spec::File {
                spaces,
                pages_per_file,
                io_pages,
                sampler,
                write,
                mmap,
                ..
            },
        skip_sets,
        stats,
        ..
    } = w
    else {
        unreachable!("applies() checked the kind");
    };
    let (io_pages, write, io) = (*io_pages, *write, FileIo::of(*write, *mmap));
    if write && !mm.dirty_ratelimit_quiet() {
        // The next write looks at the global dirty state whatever it writes. Only
        // the writer's own dirtying moves its counts, and a settled write dirties
        // nothing, so they hold over a run.
        return None;
    }
    let per_file_items = (*pages_per_file / io_pages as u64).max(1);
    // A syscall and its copies in the kernel, or a load a page in user space.
    let costs = &mm.cfg.costs;
    let op_ns = match io {
        FileIo::Mmap => io_pages as u64 * costs.access_ns,
        _ => costs.syscall_ns + io_pages as u64 * costs.copy_page_ns,
    };
    let bytes = io_pages as u64 * 4096;
    let sets = skip_sets.as_deref_mut().expect("applies() checked");
    let sampler: &Sampler = sampler;
    // Hot/cold: in the run's phase, which applies() checked it stays in.
    let (dist, weighted) = chances(sampler, *clock);
    let s = ready(&mut sets.file, spaces, (per_file_items, io_pages), io, dist);
    if io != FileIo::Mmap {
        // (A load enters no kernel.)
        mm.now = *clock;
    }
    if s.probe.dense {
        return None;
    }
    s.catch_up(mm);
    if let Some(i) = t.file_skip.pending.take() {
        if s.settled(mm, i) {
            s.remove(i);
        }
    }
    if s.p_member() > DENSE_P_MEMBER {
        // Stale until built again, which reads the page cache: no logs meanwhile.
        s.probe.went_dense();
        for &sp in &s.spaces {
            mm.spaces[sp as usize].unwatch_changes();
        }
        return None;
    }
    let (interval_ns, stop_ns, stats_from_ns) = (w.interval_ns, w.stop_ns, w.stats_from_ns);
    let ends = (slice_end, stop_ns);
    let mut p = Pacing::new(
        *clock,
        t.next_issue_ns,
        interval_ns,
        ends,
        op_ns,
        stats_from_ns,
    );
    let handed = if let Sampler::Sequential { .. } = sampler {
        in_turn(s, mm, &mut p, &mut t.cursor);
        false
    } else {
        // The gap of reads of settled items before the next of a member (geometric:
        // the process is memoryless, so a run that ends part-way draws afresh next
        // time).
        let gap = if s.members == 0 {
            u64::MAX
        } else {
            geometric(&mut t.rng, s.p_member())
        };
        let made = p.run_hits(gap);
        // A write or a load leaves neither the file position nor completed reads.
        let last = (io == FileIo::Read)
            .then(|| s.leave_prev_pos(mm, &mut t.rng, made, weighted))
            .flatten();
        if let Some(last) = last {
            // The run's last read (its `prev_pos` already so): its file's completed
            // reads forgotten as of it.
            s.leave_file_after(mm, last, p.hits_end_ns - op_ns);
        }
        made == gap && p.issue_next()
    };
    if handed {
        let i = s.pick(&mut t.rng);
        t.file_skip.pending = Some(i);
        t.batch_left = w.batch;
        // The read starts afresh (`read_op` resets it only for a new operation).
        t.read = None;
        t.retry = Some((i, write, p.issued_ns.expect("issued")));
    }
    *clock = p.clock;
    if interval_ns > 0 {
        t.next_issue_ns = p.next_issue_ns;
    }
    if io == FileIo::Mmap {
        rep.user_ns += p.hits * op_ns;
    } else {
        rep.system_ns += p.hits * op_ns;
    }
    READS_SKIPPED.with(|c| c.set(c.get() + p.hits));
    if p.hits > 0 {
        t.ops += p.hits;
        t.last_op_ns = Some(p.hits_end_ns);
        if io != FileIo::Mmap {
            // What the last syscall left behind: the kernel's state at its entry and
            // exit (a read's file was left by `leave_file_after`).
            left_by_settled_syscall(mm, p.hits_end_ns - op_ns, op_ns);
        }
    }
    p.record_counted(stats, bytes);
    if let Some(issued) = p.issued_ns {
        t.batch_start_ns = issued;
    }
    if handed {
        None
    } else {
        // Uniform: the run ended by its pacing. In turn: that, or at a member's read.
        p.end
    }
}

/// A thread reading in turn from `cursor`: runs of settled items up to the next
/// member's read (left to the loop; a member reached and found settled is dropped
/// and the run goes on) or the slice's end.
fn in_turn(s: &mut FileSet, mm: &mut Mm, p: &mut Pacing, cursor: &mut u64) {
    loop {
        // No more reads than the slice (or the workload) has room for, back to back.
        let horizon = p.slice_end.min(p.stop_ns);
        let within = horizon.saturating_sub(p.clock) / p.access_ns.max(1) + 1;
        let gap = s.next_member(*cursor, within).unwrap_or(within);
        if gap == 0 {
            // Looked at now: nothing changes it before its read, later in this slice
            // (a paced one) or in a later one after the logs are caught up.
            if s.settled(mm, *cursor) {
                s.remove(*cursor);
                continue;
            }
            return;
        }
        // A run stays in the cursor's file (one file may wrap to its start): each
        // file read is then left as its last read leaves it, at that read's time
        // (a write leaves nothing).
        let n = if s.spaces.len() > 1 {
            gap.min(s.per_file_items - *cursor % s.per_file_items)
        } else {
            gap
        };
        let k = p.run_hits(n);
        if k > 0 {
            let last = (*cursor + (k - 1) % s.items) % s.items;
            if s.io == FileIo::Read {
                s.leave_file_after(mm, last, p.hits_end_ns - p.access_ns);
            }
            *cursor = (*cursor + k % s.items) % s.items;
        }
        if k < n {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::SpaceKind;
    use crate::rng::task_rng;
    use std::collections::HashMap;

    /// Three files of four items (of two pages), items 1, 2 (file 0) and 9 (file 2)
    /// members: file 0 has two settled items, files 1 and 2 four and three. Its
    /// picker `sampler`'s, over the 12 items.
    fn set_and_mm(sampler: &Sampler) -> (FileSet, Mm) {
        let mut mm = Mm::new(crate::mm::Config::new(64 << 8));
        let spaces: Vec<u32> = (0..3)
            .map(|f| mm.add_space(SpaceKind::File, format!("f{f}"), 8, None))
            .collect();
        let mut s = FileSet::new(&spaces, (4, 2), FileIo::Read, chances(sampler, 0).0);
        s.allocate();
        if let FilePicks::Zipf(w) = &mut s.picks {
            // The ranks' weights worked out, no member yet.
            w.sum_blocks();
        }
        for i in [1, 2, 9] {
            s.add(i);
        }
        (s, mm)
    }

    /// The reads in turn before the next member's: forward within a word, across
    /// words, and around the end to the first members.
    #[test]
    fn next_member_counts_reads_in_turn_wrapping() {
        let mut mm = Mm::new(crate::mm::Config::new(64 << 8));
        let spaces: Vec<u32> = (0..2)
            .map(|f| mm.add_space(SpaceKind::File, format!("f{f}"), 100, None))
            .collect();
        let mut s = FileSet::new(&spaces, (100, 1), FileIo::Read, Dist::Uniform);
        s.allocate();
        assert_eq!(s.next_member(17, u64::MAX), None);
        for i in [5, 70, 130] {
            s.add(i);
        }
        let want = [
            (0, 5),
            (5, 0),
            (6, 64),
            (70, 0),
            (71, 59),
            (131, 74),
            (199, 6),
        ];
        for (from, gap) in want {
            assert_eq!(s.next_member(from, u64::MAX), Some(gap), "from {from}");
            // Looking no further than the member: not found; one further: found.
            assert_eq!(s.next_member(from, gap), None, "from {from}, within {gap}");
            assert_eq!(s.next_member(from, gap + 1), Some(gap), "from {from}");
        }
    }

    /// Each file's `prev_pos` (None: untouched) after `n` reads of settled items.
    type Outcome = [Option<i64>; 3];

    /// The outcomes of `n` independent reads, each a settled item with a chance in
    /// proportion to `weight` (the picker's chance of it), by enumerating every
    /// sequence of them: each file's last read's end, in bytes.
    fn exact(s: &FileSet, n: u32, weight: impl Fn(u64) -> f64) -> HashMap<Outcome, f64> {
        let settled: Vec<u64> = (0..12).filter(|&i| !s.has(i)).collect();
        let sum: f64 = settled.iter().map(|&i| weight(i)).sum();
        let k = settled.len();
        let mut out = HashMap::new();
        for mut code in 0..k.pow(n) {
            let (mut o, mut p): (Outcome, f64) = ([None; 3], 1.0);
            for _ in 0..n {
                let i = settled[code % k];
                code /= k;
                p *= weight(i) / sum;
                o[(i / 4) as usize] = Some(((i % 4 + 1) * 2 * 4096) as i64);
            }
            *out.entry(o).or_insert(0.0) += p;
        }
        out
    }

    /// `leave_prev_pos` draws the files' last reads backwards; over many trials its
    /// outcomes match the exact enumeration of forward sequences (chi-square within
    /// 4.5 standard deviations of its mean), for runs of 1, 2 and 4 reads, and it
    /// names the run's last read. Uniform offsets.
    #[test]
    fn prev_pos_is_where_each_file_s_last_read_ended() {
        prev_pos_after_runs(&Sampler::Uniform { n: 12 }, |_| 1.0);
    }

    /// The same for zipf offsets (0.9 and 1.2): item i's chance is its rank's
    /// (rank + 1)^-s, its rank the one the sampler maps to i; the set's share of
    /// the picker's chance is the members' sum of them.
    #[test]
    fn prev_pos_is_where_each_file_s_last_zipf_read_ended() {
        for skew in [0.9, 1.2] {
            let z = super::super::pattern::Zipf::new(12, skew);
            let mut rank_of = [0u64; 12];
            for r in 0..12 {
                rank_of[z.item_of_rank(r) as usize] = r;
            }
            let weight = |i: u64| ((rank_of[i as usize] + 1) as f64).powf(-skew);
            let zipf = Sampler::Zipf(std::sync::Arc::new(z));
            let (s, _) = set_and_mm(&zipf);
            let all: f64 = (0..12).map(weight).sum();
            let members: f64 = [1, 2, 9].iter().map(|&i| weight(i)).sum();
            assert!((s.p_member() - members / all).abs() < 1e-9);
            prev_pos_after_runs(&zipf, weight);
        }
    }

    /// The same for hot/cold offsets: items 0..3 hot (members 1 and 2 among them),
    /// picked with chance 0.8, the cold ones with 0.2; each item uniformly within
    /// its class.
    #[test]
    fn prev_pos_is_where_each_file_s_last_hot_or_cold_read_ended() {
        let hotcold = Sampler::HotCold {
            n: 12,
            hot_n: 3,
            hot_prob_u32: super::super::prob_u32(0.8),
            phase_change_ns: None,
        };
        let weight = |i: u64| if i < 3 { 0.8 / 3.0 } else { 0.2 / 9.0 };
        let (s, _) = set_and_mm(&hotcold);
        let members = 2.0 * 0.8 / 3.0 + 0.2 / 9.0;
        assert!((s.p_member() - members).abs() < 1e-6);
        prev_pos_after_runs(&hotcold, weight);
    }

    fn prev_pos_after_runs(sampler: &Sampler, weight: impl Fn(u64) -> f64 + Copy) {
        let (s, mut mm) = set_and_mm(sampler);
        let weighted = chances(sampler, 0).1;
        let mut rng = task_rng(3, "file");
        const N: u64 = 200_000;
        for n in [1u32, 2, 4] {
            let want = exact(&s, n, weight);
            let mut got: HashMap<Outcome, u64> = HashMap::new();
            for _ in 0..N {
                for &sp in &s.spaces {
                    mm.spaces[sp as usize].ra.prev_pos = -1;
                }
                let last = s
                    .leave_prev_pos(&mut mm, &mut rng, n as u64, weighted)
                    .expect("a read");
                let o: Outcome = std::array::from_fn(|f| {
                    let p = mm.spaces[s.spaces[f] as usize].ra.prev_pos;
                    (p >= 0).then_some(p)
                });
                let (lf, lfirst) = s.at(last);
                assert_eq!(o[lf], Some(((lfirst as u64 + 2) * 4096) as i64));
                *got.entry(o).or_insert(0) += 1;
            }
            assert!(
                got.keys().all(|o| want.contains_key(o)),
                "n {n}: impossible outcome"
            );
            let chi2: f64 = want
                .iter()
                .map(|(o, p)| {
                    let e = p * N as f64;
                    let c = *got.get(o).unwrap_or(&0) as f64;
                    (c - e).powi(2) / e
                })
                .sum();
            let df = (want.len() - 1) as f64;
            assert!(
                chi2 <= df + 4.5 * (2.0 * df).sqrt(),
                "n {n}: chi2 {chi2:.1} over {} outcomes",
                want.len()
            );
        }
    }

    /// Members come from the page cache: an item is one unless all its pages are
    /// cached and settled; a logged change brings an item back only if it is not
    /// settled then.
    #[test]
    fn the_set_is_the_items_a_read_may_change() {
        use crate::mm::page::{pg, pte};
        let (_, mut mm) = set_and_mm(&Sampler::Uniform { n: 12 });
        let spaces: Vec<u32> = (0..3).collect();
        let mut s = FileSet::new(&spaces, (4, 2), FileIo::Read, Dist::Uniform);
        // Nothing cached (and no file open): every item may change.
        s.build(&mut mm);
        assert_eq!((s.members, s.file_members.clone()), (12, vec![4, 4, 4]));
        // Item 1 of file 2 (pages 2, 3) read until settled (the classic LRU: its
        // folios referenced and active).
        let mut reads = 0;
        while !mm.filemap_read_settled(2, 2, 2) {
            let mut it = None;
            loop {
                match mm.filemap_read(2, 2, 2, &mut it) {
                    crate::mm::memory::FaultResult::Done => break,
                    crate::mm::memory::FaultResult::Blocked { until_ns, .. } => mm.now = until_ns,
                    r => panic!("{r:?}"),
                }
            }
            mm.now += 1_000_000;
            reads += 1;
            assert!(reads < 10, "settled after a few reads");
        }
        s.build(&mut mm);
        assert!(!s.has(9) && s.has(8) && s.has(10));
        assert_eq!(s.file_members, vec![4, 4, 3]);
        // A change logged to page 3 that leaves it settled: item 9 stays out.
        mm.spaces[2].log_folio_change(3);
        s.catch_up(&mut mm);
        assert!(!s.has(9));
        // Page 3's folio no longer referenced (as reclaim's scan leaves it): back in.
        let pfn = pte::pfn(mm.spaces[2].pte(3));
        mm.frames[pfn as usize].clear(pg::REFERENCED);
        mm.spaces[2].log_folio_change(3);
        s.catch_up(&mut mm);
        assert!(s.has(9));
        assert_eq!(s.file_members, vec![4, 4, 4]);
    }
}
