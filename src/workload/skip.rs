//! Hit loops that skip the accesses which would change nothing (`run.access_sampling =
//! "skip"`).
//!
//! An access to a present page whose PTE is already young and dirty (or clean, when
//! the loop never writes) and whose PMD entry is young changes no state: it only takes
//! `costs.access` of time and counts a hit. Between two state changes a workload makes
//! thousands of them; this module draws how many (a geometric gap, from the chance
//! that one access lands on a page it would change) and handles only the accesses that
//! matter, one by one, with the exact per-access rules. The accesses are the same
//! random process as the per-access loops' (i.i.d. picks from the same distribution;
//! each picked page treated the same), but the random stream is used differently, so
//! results are equal in distribution, not byte for byte.
//!
//! Each thread keeps the set of pages in its range that an access might change (a
//! superset is safe: a page in the set that turns out settled is handled one access at
//! a time and then dropped). The set follows the space's change log
//! ([`Space::watch_changes`]): every PTE written and every PMD accessed bit cleared since
//! the thread's last slice. Sequential access needs no set: the loop reads the entries
//! in order and passes over the settled ones.

use rand::RngCore;
use rand_pcg::Pcg64Mcg;

use crate::mm::page::{pte, Pte};
use crate::mm::{lru_gen::PTRS_PER_PTE, Space, PMD_CHANGE};

use super::pattern::{below, mul_rem, Sampler, Zipf};
use super::Pacing;

/// Whether an access to a page in this state changes nothing: present, young, its
/// PMD entry young, and dirty unless the loop never writes.
#[inline(always)]
pub(super) fn settled(e: Pte, pmd_young: bool, write_u32: u32) -> bool {
    pte::hw_hit(e)
        && e & (pte::YOUNG | pte::SLOW) == pte::YOUNG
        && pmd_young
        && (write_u32 == 0 || e & pte::DIRTY != 0)
}

/// How many items in turn from `from` (of `n`, wrapping) come before the next whose
/// bit is set in `member`, if fewer than `within`; None otherwise. For the sets whose
/// items are taken in turn (`skip_file`'s, `skip_kv`'s): `within` is the most the
/// caller can take now (a slice's worth), so a scan costs no more than the run it
/// bounds, however sparse the members.
pub(super) fn next_in_turn(member: &[u64], n: u64, from: u64, within: u64) -> Option<u64> {
    let n_words = member.len();
    let w0 = (from / 64) as usize;
    let mut bits = member[w0] >> (from % 64) << (from % 64);
    // From the cursor's word on (the first round back to it), as far as `within`.
    let words = ((from % 64 + within.min(n)) / 64) as usize;
    for step in 0..=n_words.min(words + 1) {
        let w = (w0 + step) % n_words;
        if step > 0 {
            bits = member[w];
        }
        if bits != 0 {
            let i = w as u64 * 64 + bits.trailing_zeros() as u64;
            let gap = (i + n - from) % n;
            return (gap < within).then_some(gap);
        }
    }
    None
}

/// Failures before the first success of trials that succeed with probability `p`
/// (inversion of the geometric distribution); `u64::MAX` for p = 0.
pub(super) fn geometric(rng: &mut Pcg64Mcg, p: f64) -> u64 {
    if p >= 1.0 {
        return 0;
    }
    if p <= 0.0 {
        return u64::MAX;
    }
    // U in (0, 1]: ln U is finite.
    let u = ((rng.next_u64() >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64);
    let k = u.ln() / (-p).ln_1p();
    if k >= u64::MAX as f64 {
        u64::MAX
    } else {
        k as u64
    }
}

/// Above this chance that an access picks a member, the loop takes accesses one by one.
const DENSE_P_MEMBER: f64 = 1.0 / 16.0;
/// Accesses taken one by one return to skipping when fewer than one in this many
/// changed something, over a window of at least [`DENSE_PROBE_ACCESSES`].
const SPARSE_RATIO: u64 = 64;
pub(super) const DENSE_PROBE_ACCESSES: u64 = 256;
/// Before a rebuild (a read of the whole range), at least one access per this many
/// pages of it taken one by one since the last: a set that keeps turning dense again
/// is not rebuilt more often than its accesses can pay for.
pub(super) const REBUILD_PAGES_PER_ACCESS: u64 = 8;

/// While a request-level set is dense (`kv`'s keys, `file-read`'s items), the
/// requests taken one by one of which one in this many is probed.
pub(super) const DENSE_REQUEST_PROBE_EVERY: u64 = 8;
/// Such requests return to skipping when fewer than one in this many of those probed
/// changed something (a request costs far more than an access, so a sparser set
/// than [`SPARSE_RATIO`]'s pays).
const SPARSE_REQUEST_RATIO: u64 = 8;

/// Whether a request-level set (`kv`'s keys, `file-read`'s items) is dense, and while
/// it is, what the requests taken one by one (as under `each`) showed: one in
/// [`DENSE_REQUEST_PROBE_EVERY`] is probed for whether it will change something (the
/// probe only decides when to build; what the requests do is `each`'s). Once fewer
/// than one in [`SPARSE_REQUEST_RATIO`] of a window of [`DENSE_PROBE_ACCESSES`] probes
/// do, and enough requests have been taken since the last build to pay for one, the
/// set is to be built. A set starts dense, not built: a workload whose requests keep
/// changing state never pays for it.
#[derive(Debug)]
pub(super) struct DenseProbe {
    pub(super) dense: bool,
    taken: u64,
    window_taken: u64,
    window_changed: u64,
}

impl DenseProbe {
    pub(super) fn new() -> DenseProbe {
        DenseProbe {
            dense: true,
            taken: 0,
            window_taken: 0,
            window_changed: 0,
        }
    }

    /// A request taken one by one: whether it is one to probe (then tell
    /// [`DenseProbe::probed`] what it found).
    pub(super) fn take(&mut self) -> bool {
        if !self.dense {
            return false;
        }
        self.taken += 1;
        self.taken.is_multiple_of(DENSE_REQUEST_PROBE_EVERY)
    }

    /// Whether the probed request will change something; whether to build the set,
    /// over `items` (what a build reads), now.
    pub(super) fn probed(&mut self, changed: bool, items: u64) -> bool {
        self.window_taken += 1;
        self.window_changed += changed as u64;
        if self.window_taken < DENSE_PROBE_ACCESSES {
            return false;
        }
        let rare = self.window_changed * SPARSE_REQUEST_RATIO < self.window_taken;
        (self.window_taken, self.window_changed) = (0, 0);
        rare && self.taken >= items / REBUILD_PAGES_PER_ACCESS
    }

    /// The set was built: skipping.
    pub(super) fn built(&mut self) {
        self.dense = false;
        self.taken = 0;
    }

    /// Too many members: dense again, the requests' window afresh.
    pub(super) fn went_dense(&mut self) {
        self.dense = true;
        (self.window_taken, self.window_changed) = (0, 0);
    }
}

/// What a set was built for: the sampler and its range, and the write
/// probability (which decides whether clean pages count as settled).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Key {
    space: u32,
    base: u64,
    n: u64,
    write_u32: u32,
    /// The picker's [`Dist::identity`] (0 for a sequential sweep).
    dist: [u64; 4],
}

/// A thread's skipping state: the page tables its sequential sweep saw settled.
#[derive(Debug, Default)]
pub struct SkipState {
    seq: Option<Box<SeqSettled>>,
}

impl SkipState {
    /// The page tables the thread's sweep saw settled, for `key` over `nr_pmds`
    /// tables: forgotten when the sweep's key changes.
    fn seen_tables(&mut self, key: Key, nr_pmds: u64) -> &mut SeqSettled {
        if self.seq.as_ref().is_none_or(|s| s.key != key) {
            self.seq = Some(Box::new(SeqSettled {
                key,
                seen: vec![u64::MAX; nr_pmds as usize],
            }));
        }
        self.seq.as_mut().expect("made above")
    }
}

/// Sets of a workload's random pickers, shared by its threads: a set describes the
/// space, not the thread (any superset of the range's unsettled pages will do), so
/// one set serves them all, and a thread that finds a member settled takes it out
/// for every one. A few, most recently used last, for threads in different phases.
#[derive(Debug, Default)]
pub struct SkipSets {
    sets: Vec<SkipSet>,
    /// A `kv` workload's keys ([`super::skip_kv`]; made at its first run).
    pub(super) kv: Option<Box<super::skip_kv::KvSet>>,
    /// A uniform `file-read` workload's items ([`super::skip_file`]; made at its
    /// first run).
    pub(super) file: Option<Box<super::skip_file::FileSet>>,
}

/// Sets a workload keeps at once.
const MAX_SETS: usize = 4;

/// For a sequential sweep over one range: each page table's change count
/// ([`Space::hw_table_gens_mut`]) when the sweep last saw all its entries in the range
/// settled. While the count has not moved, a sweep passes over the table without
/// reading it. (The counts, not the change log: reading the log would start it for
/// this space, and the random pickers' sets follow the log's history.)
#[derive(Debug)]
struct SeqSettled {
    key: Key,
    /// Per page table from `base / PTRS_PER_PTE` on; `u64::MAX`: not seen settled.
    seen: Vec<u64>,
}

/// The pages of a range that an access may change, for one sampler over it.
#[derive(Debug)]
pub struct SkipSet {
    key: Key,
    /// The space's change log position this set has taken in.
    log_pos: u64,
    /// Membership, one bit per offset in the range.
    member: Vec<u64>,
    /// Taking accesses one by one; the set is stale until rebuilt.
    dense: bool,
    /// Accesses taken one by one since the set was last built; and in the window
    /// being counted, accesses and those that changed something.
    dense_taken: u64,
    /// Builds in a row that found the set dense: the next waits 2^backoff times as
    /// many accesses.
    backoff: u32,
    window_taken: u64,
    window_changed: u64,
    picks: Picks,
}

#[derive(Debug)]
enum Picks {
    /// Uniform and hot/cold: pages equally likely within a class, the members in a
    /// list per class, so one can be drawn and removed in O(1).
    Classes(ClassLists),
    /// Zipf: the members' rank weights, summed per block of ranks in a sum tree,
    /// so a member can be drawn in proportion to its weight in O(log n) plus a block.
    Zipf(ZipfWeights),
}

/// What a random picker draws from, for [`random_loop`].
#[derive(Debug, Clone, Copy)]
pub(crate) enum Dist<'a> {
    Uniform,
    Zipf(&'a Zipf),
    /// `hot_n` pages from `hot_lo` (wrapping) picked with chance `hot_u32` / 2^32,
    /// uniformly; the rest uniformly otherwise (`Sampler::HotCold` in the phase the
    /// call starts in).
    HotCold {
        hot_lo: u64,
        hot_n: u64,
        hot_u32: u32,
    },
}

impl<'a> Dist<'a> {
    /// A random picker's chances at `now` (hot/cold: its hot set then), with the
    /// number of items they range over; None for a sweep (`Sampler::Sequential`).
    pub(crate) fn of(sampler: &'a Sampler, now: u64) -> Option<(u64, Dist<'a>)> {
        match *sampler {
            Sampler::Sequential { .. } => None,
            Sampler::Uniform { n } => Some((n, Dist::Uniform)),
            Sampler::Zipf(ref z) => Some((z.skip_params().0, Dist::Zipf(z))),
            Sampler::HotCold {
                n,
                hot_n,
                hot_prob_u32,
                phase_change_ns,
            } => Some((
                n,
                Dist::HotCold {
                    hot_lo: super::pattern::hot_lo(n, phase_change_ns, now),
                    hot_n,
                    hot_u32: hot_prob_u32,
                },
            )),
        }
    }

    /// What tells one picker from another, for a set's [`Key`].
    pub(super) fn identity(&self) -> [u64; 4] {
        match *self {
            Dist::Uniform => [0; 4],
            Dist::Zipf(z) => {
                let [a, b, c] = z.identity();
                [1, a, b, c]
            }
            Dist::HotCold {
                hot_lo,
                hot_n,
                hot_u32,
            } => [2, hot_lo, hot_n, hot_u32 as u64],
        }
    }
}

/// Members of up to two classes of equally likely pages (uniform: one; hot/cold: the
/// hot run `[hot_lo, hot_lo + hot_n)`, wrapping, and the rest), a list per class and
/// each offset's place in its list. Shared with `skip_file`'s items.
#[derive(Debug)]
pub(super) struct ClassLists {
    lists: [Vec<u32>; 2],
    place: Vec<u32>,
    /// The chance that one access picks a given page of each class.
    p_page: [f64; 2],
    hot_lo: u64,
    hot_n: u64,
    n: u64,
}

impl ClassLists {
    pub(super) fn new(n: u64, dist: Dist) -> ClassLists {
        let (hot_lo, hot_n, p_page) = match dist {
            Dist::HotCold {
                hot_lo,
                hot_n,
                hot_u32,
            } => {
                let h = hot_u32 as f64 / (1u64 << 32) as f64;
                (
                    hot_lo,
                    hot_n,
                    [h / hot_n as f64, (1.0 - h) / (n - hot_n) as f64],
                )
            }
            _ => (0, n, [1.0 / n as f64, 0.0]),
        };
        ClassLists {
            lists: [Vec::new(), Vec::new()],
            place: vec![0; n as usize],
            p_page,
            hot_lo,
            hot_n,
            n,
        }
    }

    /// The class of `o`: 0 hot (or the one class), 1 cold.
    pub(super) fn class(&self, o: u64) -> usize {
        ((o + self.n - self.hot_lo) % self.n >= self.hot_n) as usize
    }

    /// The chance that one access picks a given item of class `c`.
    pub(super) fn p_item(&self, c: usize) -> f64 {
        self.p_page[c]
    }

    pub(super) fn add(&mut self, o: u64) {
        let list = &mut self.lists[self.class(o)];
        self.place[o as usize] = list.len() as u32;
        list.push(o as u32);
    }

    pub(super) fn remove(&mut self, o: u64) {
        let (c, i) = (self.class(o), self.place[o as usize] as usize);
        let list = &mut self.lists[c];
        let last = *list.last().expect("a member is listed");
        list[i] = last;
        self.place[last as usize] = i as u32;
        list.pop();
    }

    pub(super) fn is_empty(&self) -> bool {
        self.lists.iter().all(|l| l.is_empty())
    }

    /// No member (the places are left as they are: a place is read only for a
    /// member).
    pub(super) fn clear(&mut self) {
        self.lists.iter_mut().for_each(Vec::clear);
    }

    pub(super) fn p_member(&self) -> f64 {
        let [a, b] = [self.lists[0].len() as f64, self.lists[1].len() as f64];
        if self.hot_n == self.n {
            // Uniform: one class.
            a / self.n as f64
        } else {
            a * self.p_page[0] + b * self.p_page[1]
        }
    }

    /// A member: its class in proportion to the class's members' chances (no draw
    /// when one class has none), then one of the class's uniformly.
    pub(super) fn pick(&self, rng: &mut Pcg64Mcg) -> u64 {
        let [a, b] = [self.lists[0].len(), self.lists[1].len()];
        let c = if b == 0 {
            0
        } else if a == 0 {
            1
        } else {
            let (wa, wb) = (a as f64 * self.p_page[0], b as f64 * self.p_page[1]);
            let u = (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
            (u * (wa + wb) >= wa) as usize
        };
        let list = &self.lists[c];
        list[below(rng.next_u64(), list.len() as u64) as usize] as u64
    }
}

impl SkipSet {
    fn has(&self, o: u64) -> bool {
        self.member[(o / 64) as usize] >> (o % 64) & 1 != 0
    }

    fn add(&mut self, o: u64) {
        if self.has(o) {
            return;
        }
        self.member[(o / 64) as usize] |= 1 << (o % 64);
        match &mut self.picks {
            Picks::Classes(c) => c.add(o),
            Picks::Zipf(z) => z.add(o),
        }
    }

    fn remove(&mut self, o: u64) {
        if !self.has(o) {
            return;
        }
        self.member[(o / 64) as usize] &= !(1 << (o % 64));
        match &mut self.picks {
            Picks::Classes(c) => c.remove(o),
            Picks::Zipf(z) => z.remove(o),
        }
    }

    fn is_empty(&self) -> bool {
        match &self.picks {
            Picks::Classes(c) => c.is_empty(),
            Picks::Zipf(z) => z.blocks.total() == 0,
        }
    }

    /// The chance that one access picks a member.
    fn p_member(&self) -> f64 {
        match &self.picks {
            Picks::Classes(c) => c.p_member(),
            Picks::Zipf(z) => z.blocks.total() as f64 / z.all_weight as f64,
        }
    }

    /// A member, drawn as the sampler would draw among the members.
    fn pick(&self, rng: &mut Pcg64Mcg) -> u64 {
        match &self.picks {
            Picks::Classes(c) => c.pick(rng),
            Picks::Zipf(z) => {
                let r = z.find(below(rng.next_u64(), z.blocks.total()));
                z.zipf_item(r)
            }
        }
    }

    /// Every unsettled page of the range, read from the table in order: O(pages), with
    /// the sum tree built in place rather than page by page.
    fn rebuild(&mut self, space: &Space) {
        let (base, n, wr) = (self.key.base, self.key.n, self.key.write_u32);
        let unsettled = (0..n).filter(|&o| {
            let idx = (base + o) as u32;
            !settled(space.pte(idx), space.pmd_young(idx), wr)
        });
        let member = &mut self.member;
        member.fill(0);
        match &mut self.picks {
            Picks::Classes(c) => {
                c.lists.iter_mut().for_each(Vec::clear);
                for o in unsettled {
                    member[(o / 64) as usize] |= 1 << (o % 64);
                    c.add(o);
                }
            }
            Picks::Zipf(z) => {
                z.clear();
                for o in unsettled {
                    member[(o / 64) as usize] |= 1 << (o % 64);
                    z.mark(o);
                }
                z.sum_blocks();
            }
        }
    }

    /// Takes in the space's changes since the last call: pages that may have turned
    /// unsettled join the set.
    fn catch_up(&mut self, space: &mut Space) {
        let end = space.watch_changes();
        let Some(changes) = space.changes_since(self.log_pos) else {
            self.rebuild(space);
            self.log_pos = end;
            return;
        };
        let (base, n, wr) = (self.key.base, self.key.n, self.key.write_u32);
        let mut join = Vec::new();
        for &c in changes {
            let (lo, hi) = if c & PMD_CHANGE != 0 {
                let first = (c & !PMD_CHANGE) * PTRS_PER_PTE as u64;
                (first, first + PTRS_PER_PTE as u64)
            } else {
                (c, c + 1)
            };
            for idx in lo.max(base)..hi.min(base + n) {
                if !settled(space.pte(idx as u32), space.pmd_young(idx as u32), wr) {
                    join.push(idx - base);
                }
            }
        }
        for o in join {
            self.add(o);
        }
        self.log_pos = end;
    }
}

/// Zipf rank weights for the skipping loop: rank r (0-based) weighs (r+1)^-s, in
/// fixed point so that the weights of all n ranks sum to about 2^62 (each at least
/// 1: a relative error below 2^-20 for any rank with probability above 2^-42).
///
/// Members are kept per block of [`RANK_BLOCK`] ranks: a bit per rank, and the
/// block's member weight in a [`SumTree`] over blocks. A pick descends the small tree
/// (n/64 entries, cache-resident where a tree over ranks is not: its descent was a
/// cache and TLB miss per level) and then scans one block's bits and weights in rank
/// order. The rank found for a given draw is the one a tree over ranks finds.
///
/// The first [`ZIPF_EXACT_RANKS`] ranks keep a weight each. Above them a block's
/// weights are the straight line between its first rank's weight and the next
/// block's: 8 bytes per 64 ranks, where a weight per rank was 1.5 GiB for the 1 TiB
/// machine's 768 GiB set. A block there spans 64 ranks past the 2^20th, over which
/// x^-s bends by a relative s(s+1)/8 · (64/r)² < 2^-27 for s ≤ 2: far below the
/// fixed point's own rounding.
#[derive(Debug)]
pub(super) struct ZipfWeights {
    blocks: SumTree,
    /// Member bits by rank, one word per block.
    bits: Vec<u64>,
    /// The weights of ranks below `exact_ranks`, one each; worked out at the first
    /// build, with `edges`.
    weights: Vec<u64>,
    /// The weight at rank `exact_ranks + 64·j`, for each tail block j and the end of
    /// the last.
    edges: Vec<u64>,
    /// Ranks with a weight of their own: [`ZIPF_EXACT_RANKS`], a multiple of
    /// [`RANK_BLOCK`] (smaller in tests, to reach the tail).
    exact_ranks: u64,
    all_weight: u64,
    n: u64,
    s: f64,
    stride: u64,
    inv_stride: u64,
    /// For [`mul_rem`]: ⌊(2^64 − 1) / n⌋.
    rem_m: u64,
}

/// Ranks of a [`ZipfWeights`] with a weight each; above, interpolated per block.
const ZIPF_EXACT_RANKS: u64 = 1 << 20;

impl ZipfWeights {
    pub(super) fn new(z: &Zipf) -> ZipfWeights {
        Self::with_exact_ranks(z, ZIPF_EXACT_RANKS)
    }

    fn with_exact_ranks(z: &Zipf, exact_ranks: u64) -> ZipfWeights {
        debug_assert_eq!(exact_ranks % RANK_BLOCK, 0);
        let (n, s, stride) = z.skip_params();
        ZipfWeights {
            // Filled by the set's first build.
            blocks: SumTree::from_weights(&[]),
            bits: vec![0; n.div_ceil(RANK_BLOCK) as usize],
            weights: Vec::new(),
            edges: Vec::new(),
            exact_ranks,
            all_weight: 0,
            n,
            s,
            stride,
            inv_stride: inverse_mod(stride, n),
            rem_m: u64::MAX / n.max(1),
        }
    }

    #[inline]
    pub(super) fn weight(&self, r: u64) -> u64 {
        match self.weights.get(r as usize) {
            Some(&w) => w,
            None => {
                let t = r - self.exact_ranks;
                let j = (t / RANK_BLOCK) as usize;
                lerp_weight(self.edges[j], self.edges[j + 1], t % RANK_BLOCK)
            }
        }
    }

    pub(super) fn rank(&self, item: u64) -> u64 {
        mul_rem(item, self.inv_stride, self.n, self.rem_m)
    }

    pub(super) fn zipf_item(&self, r: u64) -> u64 {
        mul_rem(r, self.stride, self.n, self.rem_m)
    }

    /// Makes `item` a member (it is not).
    pub(super) fn add(&mut self, item: u64) {
        let r = self.rank(item);
        let b = (r / RANK_BLOCK) as usize;
        debug_assert_eq!(self.bits[b] >> (r % RANK_BLOCK) & 1, 0);
        self.bits[b] |= 1 << (r % RANK_BLOCK);
        self.blocks.add(b, self.weight(r) as i64);
    }

    /// Takes `item` out of the members (it is one).
    pub(super) fn remove(&mut self, item: u64) {
        let r = self.rank(item);
        let b = (r / RANK_BLOCK) as usize;
        debug_assert_eq!(self.bits[b] >> (r % RANK_BLOCK) & 1, 1);
        self.bits[b] &= !(1 << (r % RANK_BLOCK));
        self.blocks.add(b, -(self.weight(r) as i64));
    }

    /// The member rank where the running sum of member weights in rank order passes
    /// `u` (u < the members' total).
    pub(super) fn find(&self, u: u64) -> u64 {
        let (b, u) = self.blocks.find(u);
        let first = b * RANK_BLOCK;
        let m = self.bits[b as usize];
        if first < self.exact_ranks {
            let w = &self.weights[first as usize..];
            find_in_block(m, u, |k| w[k as usize])
        } else {
            let j = ((first - self.exact_ranks) / RANK_BLOCK) as usize;
            let (a, z) = (self.edges[j], self.edges[j + 1]);
            find_in_block(m, u, |k| lerp_weight(a, z, k))
        }
        .map(|k| first + k)
        .expect("a block's member weights sum to its tree weight")
    }

    /// The members' weight.
    pub(super) fn total(&self) -> u64 {
        self.blocks.total()
    }

    /// The weight of every rank.
    pub(super) fn all_weight(&self) -> u64 {
        self.all_weight
    }

    /// No member (for a rebuild: [`ZipfWeights::mark`] the members, then
    /// [`ZipfWeights::sum_blocks`]).
    pub(super) fn clear(&mut self) {
        self.bits.fill(0);
    }

    /// `item` a member, its weight not yet in the tree.
    pub(super) fn mark(&mut self, item: u64) {
        let r = self.rank(item);
        self.bits[(r / RANK_BLOCK) as usize] |= 1 << (r % RANK_BLOCK);
    }

    /// `item`'s weight (its rank's).
    pub(super) fn item_weight(&self, item: u64) -> u64 {
        self.weight(self.rank(item))
    }

    /// The blocks' tree from the member bits (the ranks' weights worked out first, at
    /// the set's first build).
    pub(super) fn sum_blocks(&mut self) {
        if self.weights.is_empty() && self.n > 0 {
            self.work_out_weights();
        }
        self.blocks.clear(self.bits.len());
        for (b, &m) in self.bits.iter().enumerate() {
            let first = b as u64 * RANK_BLOCK;
            let mut sum = 0;
            let mut m = m;
            while m != 0 {
                sum += self.weight(first + m.trailing_zeros() as u64);
                m &= m - 1;
            }
            self.blocks.set_leaf(b, sum);
        }
        self.blocks.link();
    }

    /// The head's weights and the tail's block edges, scaled so that all ranks'
    /// weights sum to about 2^62 (the tail's raw sum taken along the same lines).
    fn work_out_weights(&mut self) {
        let (n, s) = (self.n, self.s);
        let raw = |r: u64| ((r + 1) as f64).powf(-s);
        let head = n.min(self.exact_ranks);
        let tail_blocks = (n - head).div_ceil(RANK_BLOCK);
        let edge_rank = |j: u64| self.exact_ranks + j * RANK_BLOCK;
        let mut raw_sum: f64 = (0..head).map(raw).sum();
        for j in 0..tail_blocks {
            let (a, z) = (raw(edge_rank(j)), raw(edge_rank(j + 1)));
            let m = (n - edge_rank(j)).min(RANK_BLOCK) as f64;
            raw_sum += m * a - (a - z) * (m * (m - 1.0) / 2.0) / RANK_BLOCK as f64;
        }
        let scale = (1u64 << 62) as f64 / raw_sum;
        let fixed = |w: f64| ((w * scale) as u64).max(1);
        self.weights = (0..head).map(|r| fixed(raw(r))).collect();
        self.edges = (0..=tail_blocks)
            .map(|j| fixed(raw(edge_rank(j))))
            .collect();
        self.all_weight = (0..n).map(|r| self.weight(r)).sum();
    }
}

/// The weight k ranks into a block whose first rank weighs `a` and whose next block's
/// first weighs `z` (z ≤ a): on the line between them, rounded down.
#[inline]
fn lerp_weight(a: u64, z: u64, k: u64) -> u64 {
    a - (((a - z) as u128 * k as u128) >> RANK_BLOCK.trailing_zeros()) as u64
}

/// The member (bit k of `m`) where the running sum of member weights in bit order
/// passes `u`.
#[inline]
fn find_in_block(mut m: u64, mut u: u64, weight: impl Fn(u64) -> u64) -> Option<u64> {
    while m != 0 {
        let k = m.trailing_zeros() as u64;
        let w = weight(k);
        if u < w {
            return Some(k);
        }
        u -= w;
        m &= m - 1;
    }
    None
}

/// Ranks per block of [`ZipfWeights`]: one word of member bits.
const RANK_BLOCK: u64 = 64;

/// x with a·x ≡ 1 (mod n), for a coprime to n (n = 1: 0).
fn inverse_mod(a: u64, n: u64) -> u64 {
    if n <= 1 {
        return 0;
    }
    let (mut r0, mut r1) = (n as i128, a as i128 % n as i128);
    let (mut t0, mut t1) = (0i128, 1i128);
    while r1 != 0 {
        let q = r0 / r1;
        (r0, r1) = (r1, r0 - q * r1);
        (t0, t1) = (t1, t0 - q * t1);
    }
    debug_assert_eq!(r0, 1, "stride coprime to n");
    t0.rem_euclid(n as i128) as u64
}

/// Children per [`SumTree`] node: eight u64 sums, one cache line.
const SUM_FANOUT: usize = 8;

/// A node of a [`SumTree`] level: its children's sums, on a cache line of its own.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[repr(align(64))]
struct SumLine([u64; SUM_FANOUT]);

/// A tree of u64 weights with eight children per node: point updates, the total,
/// and the index where a running sum passes a value. A descent reads one cache line
/// per level: over the 1 TiB machine's or big64's blocks (197 k of them) that is 6
/// lines, where a Fenwick tree's descent read a node per bit of the index (18), most
/// of them misses (a fifth of big64's time under reclaim was that descent).
#[derive(Debug)]
struct SumTree {
    /// `levels[0]` holds the weights, eight to a line; each line of `levels[k + 1]`
    /// holds the sums of eight lines of `levels[k]`. The last level is one line.
    levels: Vec<Vec<SumLine>>,
    total: u64,
}

impl SumTree {
    /// The tree of `w` in O(n).
    fn from_weights(w: &[u64]) -> SumTree {
        let mut t = SumTree {
            levels: Vec::new(),
            total: 0,
        };
        t.clear(w.len());
        for (i, &x) in w.iter().enumerate() {
            t.set_leaf(i, x);
        }
        t.link();
        t
    }

    /// `n` weights of 0, in the buffers already there.
    fn clear(&mut self, n: usize) {
        let mut lines = n.div_ceil(SUM_FANOUT).max(1);
        let mut k = 0;
        loop {
            if k == self.levels.len() {
                self.levels.push(Vec::new());
            }
            let level = &mut self.levels[k];
            level.clear();
            level.resize(lines, SumLine::default());
            k += 1;
            if lines == 1 {
                break;
            }
            lines = lines.div_ceil(SUM_FANOUT);
        }
        self.levels.truncate(k);
        self.total = 0;
    }

    /// Weight `w` at `i`, before [`SumTree::link`] (on a cleared tree).
    fn set_leaf(&mut self, i: usize, w: u64) {
        self.levels[0][i / SUM_FANOUT].0[i % SUM_FANOUT] = w;
        self.total += w;
    }

    /// Makes the leaves set a tree: each line's sum into its parent's slot.
    fn link(&mut self) {
        for k in 1..self.levels.len() {
            let (below, above) = self.levels.split_at_mut(k);
            for (j, line) in below[k - 1].iter().enumerate() {
                above[0][j / SUM_FANOUT].0[j % SUM_FANOUT] = line.0.iter().sum();
            }
        }
    }

    fn total(&self) -> u64 {
        self.total
    }

    fn add(&mut self, i: usize, delta: i64) {
        self.total = self.total.wrapping_add_signed(delta);
        let mut j = i;
        for level in &mut self.levels {
            let slot = &mut level[j / SUM_FANOUT].0[j % SUM_FANOUT];
            *slot = slot.wrapping_add_signed(delta);
            j /= SUM_FANOUT;
        }
    }

    /// The smallest i whose prefix sum w[0..=i] exceeds `u` (u < total), and u less
    /// the prefix sum w[0..i].
    fn find(&self, mut u: u64) -> (u64, u64) {
        debug_assert!(u < self.total, "find {u} of {}", self.total);
        let mut line = 0usize;
        for level in self.levels.iter().rev() {
            let sums = &level[line].0;
            let mut c = 0;
            // The last child takes what is left: u < total keeps it in range.
            while c < SUM_FANOUT - 1 && u >= sums[c] {
                u -= sums[c];
                c += 1;
            }
            line = line * SUM_FANOUT + c;
        }
        (line as u64, u)
    }
}

/// What [`skip_hit_loop`] did.
pub enum Skipped {
    /// The call's accesses: hits, and the missing page that stopped them.
    Ran(u64, Option<(u32, bool)>),
    /// Nothing: most accesses matter now. The caller takes them one by one and
    /// reports them to [`dense_seen`].
    Dense,
    /// Nothing: a sampler it does not handle.
    No,
}

/// The skipping loop for `sampler` over `[base, base + n)` of `space`: the same
/// contract as `hit_loop` (up to `limit` accesses, stopping at the first one to a page
/// that is not present, which it returns with its write), for uniform, hot/cold and
/// zipf pickers and sequential sweeps.
#[allow(clippy::too_many_arguments)]
pub(crate) fn skip_hit_loop(
    space: &mut Space,
    limit: u64,
    write_u32: u32,
    rng: &mut Pcg64Mcg,
    cursor: &mut u64,
    (state, sets, slow): (&mut SkipState, &mut SkipSets, &mut super::Slow),
    sampler: &Sampler,
    (space_id, base, clock): (u32, u64, u64),
) -> Skipped {
    let (n, dist) = match sampler {
        Sampler::Sequential { n } => {
            if space.hw_table_gens_mut().is_none() {
                return Skipped::No;
            }
            let at = (space_id, base, *n);
            let (hits, miss) =
                sequential_hits(space, limit, write_u32, rng, cursor, (state, slow), at);
            return Skipped::Ran(hits, miss);
        }
        &Sampler::HotCold { n, hot_n, .. } if hot_n == 0 || hot_n >= n => return Skipped::No,
        // The phase the call starts in, as the per-access loop takes it.
        _ => Dist::of(sampler, clock).expect("a random picker"),
    };
    let mut budget = Budget::Count { limit, hits: 0 };
    let Some(miss) = random_loop(
        space,
        write_u32,
        rng,
        sets,
        (n, dist),
        (space_id, base),
        (&mut budget, slow),
    ) else {
        return Skipped::Dense;
    };
    let Budget::Count { limit, hits } = budget else {
        unreachable!("made above")
    };
    Skipped::Ran(if miss.is_none() { limit } else { hits }, miss)
}

/// How many accesses a call may make, and when: a count of back-to-back accesses, or
/// a paced thread's slots ([`Pacing`]: each access issued at its time, the call ending
/// where the thread's slice, its sleep or its stop does).
pub(crate) enum Budget<'a> {
    Count { limit: u64, hits: u64 },
    Paced(&'a mut Pacing),
}

impl Budget<'_> {
    /// `g` accesses that change nothing, each a hit: false if the call ends first
    /// (then as many as fit were made).
    #[inline]
    fn pass(&mut self, g: u64) -> bool {
        match self {
            Budget::Count { limit, hits } => {
                if g >= *limit - *hits {
                    *hits = *limit;
                    return false;
                }
                *hits += g;
                true
            }
            Budget::Paced(p) => p.run_hits(g) == g,
        }
    }

    /// Up to `g` accesses that change nothing: how many were made before the call
    /// ended (all `g` if it goes on).
    #[inline]
    fn take(&mut self, g: u64) -> u64 {
        match self {
            Budget::Count { limit, hits } => {
                let k = g.min(*limit - *hits);
                *hits += k;
                k
            }
            Budget::Paced(p) => p.run_hits(g),
        }
    }

    /// Whether the call is known to make no more accesses (a paced one learns it
    /// only by trying).
    #[inline]
    fn spent(&self) -> bool {
        match self {
            Budget::Count { limit, hits } => hits >= limit,
            Budget::Paced(_) => false,
        }
    }

    /// Whether the call makes one more access.
    #[inline]
    fn issue(&mut self) -> bool {
        match self {
            Budget::Count { limit, hits } => *hits < *limit,
            Budget::Paced(p) => p.issue_next(),
        }
    }

    /// The access issued hit.
    #[inline]
    fn hit(&mut self) {
        match self {
            Budget::Count { hits, .. } => *hits += 1,
            Budget::Paced(p) => p.hit(),
        }
    }
}

/// The skipping loop for random picker `dist` over `[base, base + n)` of space
/// `space_id`: accesses as `budget` allows, returning the first to a page that is not
/// present (not counted as a hit), with its write. None: most accesses matter now,
/// and the caller takes this call's accesses one by one with its own loop (which
/// loads what it reads ahead).
#[allow(clippy::too_many_arguments)]
pub(crate) fn random_loop(
    space: &mut Space,
    write_u32: u32,
    rng: &mut Pcg64Mcg,
    sets: &mut SkipSets,
    (n, dist): (u64, Dist),
    (space_id, base): (u32, u64),
    (budget, slow): (&mut Budget, &mut super::Slow),
) -> Option<Option<(u32, bool)>> {
    let s = ready_set(sets, space, n, dist, space_id, base, write_u32);
    if s.dense {
        // Most accesses matter (a working set being faulted back in): the caller
        // takes them one by one, drawn as under `each`, and tells [`dense_seen`] what
        // they changed.
        return None;
    }
    let (entries, pmd_young) = space.hw_table_mut();
    let wr = write_u32;
    loop {
        if budget.spent() {
            return Some(None);
        }
        let gap = if s.is_empty() {
            u64::MAX
        } else {
            geometric(rng, s.p_member())
        };
        if !budget.pass(gap) || !budget.issue() {
            return Some(None);
        }
        let o = s.pick(rng);
        match access(base + o, wr, rng, (entries, pmd_young), slow) {
            Err(miss) => return Some(Some(miss)),
            Ok((e, _)) => {
                if settled(e, true, wr) {
                    s.remove(o);
                }
            }
        }
        budget.hit();
    }
}

/// After a call [`random_loop`] left to the caller's per-access loop: its `taken`
/// accesses that hit, how many of them changed an entry, and whether it ended at a
/// missing page (an access that changes something too). Counted over windows of at
/// least DENSE_PROBE_ACCESSES accesses (a paced thread's calls are short): once
/// accesses that change something turn rare (fewer than one in SPARSE_RATIO over a
/// window), and enough have been taken since the last build to pay for reading the
/// range again, the set is rebuilt and the loop skips again.
pub(crate) fn dense_seen(
    sets: &mut SkipSets,
    space: &mut Space,
    taken: u64,
    changed: u64,
    missed: bool,
) {
    let Some(s) = sets.sets.last_mut().filter(|s| s.dense) else {
        return;
    };
    s.dense_taken += taken;
    s.window_taken += taken + missed as u64;
    s.window_changed += changed + missed as u64;
    if s.window_taken < DENSE_PROBE_ACCESSES {
        return;
    }
    let rare = s.window_changed * SPARSE_RATIO < s.window_taken;
    (s.window_taken, s.window_changed) = (0, 0);
    if rare && s.dense_taken >= (s.key.n / REBUILD_PAGES_PER_ACCESS) << s.backoff {
        s.dense_taken = 0;
        s.rebuild(space);
        s.log_pos = space.watch_changes();
        // A build that finds the set dense after all (members an access changes only
        // sometimes: clean pages a read leaves alone) doubles the accesses the next
        // must wait for, so a set that keeps turning dense costs ever less to read.
        s.dense = s.p_member() > DENSE_P_MEMBER;
        s.backoff = if s.dense {
            (s.backoff + 1).min(MAX_REBUILD_BACKOFF)
        } else {
            0
        };
    }
}

/// The most doublings of the accesses between builds that keep finding sets dense.
const MAX_REBUILD_BACKOFF: u32 = 8;

/// The workload's set for a random picker `dist` over `[base, base + n)`: made dense
/// and unbuilt if it has none, else (if not dense) brought up to date with the space's
/// changes and told whether accesses are now to be taken one by one.
fn ready_set<'a>(
    sets: &'a mut SkipSets,
    space: &mut Space,
    n: u64,
    dist: Dist,
    space_id: u32,
    base: u64,
    write_u32: u32,
) -> &'a mut SkipSet {
    let key = Key {
        space: space_id,
        base,
        n,
        write_u32,
        dist: dist.identity(),
    };
    if let Some(i) = sets.sets.iter().position(|s| s.key == key) {
        // Most recently used last; most calls find it there already, and moving a set
        // (a few hundred bytes) on every call was a tenth of a dense paced run.
        if i + 1 != sets.sets.len() {
            let s = sets.sets.remove(i);
            sets.sets.push(s);
        }
    } else {
        let picks = match dist {
            Dist::Zipf(z) => Picks::Zipf(ZipfWeights::new(z)),
            _ => Picks::Classes(ClassLists::new(n, dist)),
        };
        // Not built: it starts dense, and [`dense_seen`] builds it once accesses
        // that change something turn rare and enough were taken to pay for reading
        // the range (a range being faulted in never pays for a set it cannot use).
        let s = SkipSet {
            key,
            log_pos: 0,
            member: vec![0; n.div_ceil(64) as usize],
            dense: true,
            dense_taken: 0,
            backoff: 0,
            window_taken: 0,
            window_changed: 0,
            picks,
        };
        if sets.sets.len() == MAX_SETS {
            sets.sets.remove(0);
        }
        sets.sets.push(s);
    }
    let s = sets.sets.last_mut().expect("found or built above");
    if !s.dense {
        s.catch_up(space);
        s.dense = s.p_member() > DENSE_P_MEMBER;
        (s.window_taken, s.window_changed) = (0, 0);
    }
    s
}

/// One access to `vpn`: Err(the page and the write) if it is not present, else its
/// PTE after the access and whether the access changed anything.
#[inline(always)]
fn access(
    vpn: u64,
    write_u32: u32,
    rng: &mut Pcg64Mcg,
    (entries, pmd_young): (&mut [Pte], &mut [bool]),
    slow: &mut super::Slow,
) -> Result<(Pte, bool), (u32, bool)> {
    let vpn = vpn as usize;
    let wr = write_u32;
    let write = wr == u32::MAX || (wr != 0 && (rng.next_u64() as u32) < wr);
    let e = entries[vpn];
    if !pte::hw_hit(e) {
        return Err((vpn as u32, write));
    }
    slow.hit(e);
    Ok(super::hit_entry(entries, pmd_young, vpn, e, write))
}

/// Sequential sweeps over `[base, base + n)` of space `space_id` with the thread's
/// `cursor`, as `budget` allows: runs of settled pages are passed over without drawing
/// a write, eight entries to a test, and page tables the thread's state knows settled
/// without a look. Returns the first access to a page that is not present (issued,
/// not a hit), with its write.
pub(crate) fn sequential(
    space: &mut Space,
    write_u32: u32,
    rng: &mut Pcg64Mcg,
    cursor: &mut u64,
    state: &mut SkipState,
    (space_id, base, n): (u32, u64, u64),
    (budget, slow): (&mut Budget, &mut super::Slow),
) -> Option<(u32, bool)> {
    let per_pmd = PTRS_PER_PTE as u64;
    // Only whether the sweep writes decides what is settled.
    let key = Key {
        space: space_id,
        base,
        n,
        write_u32: write_u32.min(1),
        dist: [0; 4],
    };
    let seq = state.seen_tables(key, (base + n).div_ceil(per_pmd) - base / per_pmd);
    let (entries, pmd_young, pmd_gen) = space
        .hw_table_gens_mut()
        .expect("the caller skips trapping spaces");
    let (mask, want) = settled_mask(write_u32);
    let first_pmd = base / per_pmd;
    while !budget.spent() {
        let o = *cursor;
        let vpn = base + o;
        let pmd = (vpn / per_pmd) as usize;
        let seen = &mut seq.seen[pmd - first_pmd as usize];
        // Up to the end of this page table or the range.
        let to_end = (per_pmd - vpn % per_pmd).min(n - o);
        if *seen == pmd_gen[pmd] {
            let k = budget.take(to_end);
            *cursor = if o + k >= n { 0 } else { o + k };
            if k < to_end {
                return None;
            }
            continue;
        }
        if pmd_young[pmd] {
            let run = settled_run(&entries[vpn as usize..(vpn + to_end) as usize], mask, want);
            // Every entry of the table in the range seen settled: from its start (or
            // the range's) to its end (or the range's).
            if run == to_end && (vpn.is_multiple_of(per_pmd) || o == 0) {
                *seen = pmd_gen[pmd];
            }
            let k = budget.take(run);
            *cursor = if o + k >= n { 0 } else { o + k };
            if k < run {
                return None;
            }
            if run == to_end {
                continue;
            }
        }
        if !budget.issue() {
            return None;
        }
        let o = *cursor;
        *cursor = if o + 1 >= n { 0 } else { o + 1 };
        if let Err(miss) = access(base + o, write_u32, rng, (entries, pmd_young), slow) {
            return Some(miss);
        }
        budget.hit();
    }
    None
}

/// [`sequential`] for up to `limit` back-to-back accesses: the hits, and the missing
/// page that stopped them.
pub(crate) fn sequential_hits(
    space: &mut Space,
    limit: u64,
    write_u32: u32,
    rng: &mut Pcg64Mcg,
    cursor: &mut u64,
    (state, slow): (&mut SkipState, &mut super::Slow),
    at: (u32, u64, u64),
) -> (u64, Option<(u32, bool)>) {
    let mut budget = Budget::Count { limit, hits: 0 };
    let miss = sequential(
        space,
        write_u32,
        rng,
        cursor,
        state,
        at,
        (&mut budget, slow),
    );
    let Budget::Count { hits, .. } = budget else {
        unreachable!("made above")
    };
    (hits, miss)
}

/// A masim access line whose stride passes a page (each access another page) over
/// `region_bytes` of space `space_id`, for up to `limit` back-to-back accesses, as
/// `each`'s loop makes them: from the offset last accessed, the next is `stride` on,
/// or 0 once that passes the region's end. The line's accesses that find their entry
/// settled are counted without a change (their entries checked in the line's order,
/// a check per access counted), and a page table whose entries on the line the
/// thread saw settled since its last change passes in closed form without a look.
/// masim starts each line at 0, so the line's pages are the same every pass (the
/// multiples of `stride` below the region's end). Returns the hits and the first
/// access to a page that is not present (issued, not a hit), with its write.
pub(crate) fn strided_hits(
    space: &mut Space,
    limit: u64,
    write_u32: u32,
    rng: &mut Pcg64Mcg,
    offset: &mut u64,
    (state, slow): (&mut SkipState, &mut super::Slow),
    (space_id, region_bytes, stride): (u32, u64, u64),
) -> (u64, Option<(u32, bool)>) {
    const PAGE_BYTES: u64 = 4096;
    let table_bytes = PTRS_PER_PTE as u64 * PAGE_BYTES;
    let key = Key {
        space: space_id,
        base: 0,
        n: region_bytes.div_ceil(PAGE_BYTES),
        write_u32: write_u32.min(1),
        dist: [stride, 0, 0, 0],
    };
    let seq = state.seen_tables(key, region_bytes.div_ceil(table_bytes));
    let (entries, pmd_young, pmd_gen) = space
        .hw_table_gens_mut()
        .expect("the caller skips trapping spaces");
    let (mask, want) = settled_mask(write_u32);
    let mut hits = 0u64;
    while hits < limit {
        let o = match *offset + stride {
            next if next >= region_bytes => 0,
            next => next,
        };
        let pmd = (o / table_bytes) as usize;
        let table_start = pmd as u64 * table_bytes;
        // The line's accesses from o that stay in this page table (and the region).
        let in_table = ((table_start + table_bytes).min(region_bytes) - 1 - o) / stride + 1;
        let todo = in_table.min(limit - hits);
        let run = if seq.seen[pmd] == pmd_gen[pmd] {
            todo
        } else if pmd_young[pmd] {
            let run = (0..todo)
                .take_while(|j| entries[((o + j * stride) / PAGE_BYTES) as usize] & mask == want)
                .count() as u64;
            // All of the line's entries in the table, from its first one on, settled.
            if run == in_table && o - table_start < stride {
                seq.seen[pmd] = pmd_gen[pmd];
            }
            run
        } else {
            0
        };
        if run > 0 {
            hits += run;
            *offset = o + (run - 1) * stride;
            continue;
        }
        *offset = o;
        match access(o / PAGE_BYTES, write_u32, rng, (entries, pmd_young), slow) {
            Err(miss) => return (hits, Some(miss)),
            Ok(_) => hits += 1,
        }
    }
    (hits, None)
}

/// An entry an access that writes (`write_u32` not 0) or reads leaves as it is:
/// `e & mask == want` (present and young, dirty for a write, on no slow node and not
/// a NUMA hint).
fn settled_mask(write_u32: u32) -> (Pte, Pte) {
    let dirty = if write_u32 == 0 { 0 } else { pte::DIRTY };
    (
        pte::TYPE_MASK | pte::SLOW | pte::NUMA | pte::YOUNG | dirty,
        pte::PRESENT | pte::YOUNG | dirty,
    )
}

/// How many entries from the start of `entries` are settled (`e & mask == want`).
#[inline]
fn settled_run(entries: &[Pte], mask: u64, want: u64) -> u64 {
    let mut i = 0;
    for c in entries.chunks_exact(8) {
        if !c.iter().fold(true, |all, &e| all & (e & mask == want)) {
            break;
        }
        i += 8;
    }
    while i < entries.len() && entries[i] & mask == want {
        i += 1;
    }
    i as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::SpaceKind;
    use crate::rng::task_rng;
    use rand::SeedableRng;
    use std::sync::Arc;

    const N: u64 = 512;

    /// A space of `n` present, young and dirty pages (so every PMD entry is young).
    fn settled_space(n: u64) -> (crate::mm::Mm, u32) {
        let mut mm = crate::mm::Mm::new(crate::mm::Config::new(64 << 8));
        let si = mm.add_space(SpaceKind::Anon, "t".into(), n, None);
        let s = &mut mm.spaces[si as usize];
        for i in 0..n as u32 {
            *s.pte_mut(i) = pte::present(i) | pte::YOUNG | pte::DIRTY;
            s.set_bits(i, pte::YOUNG);
        }
        (mm, si)
    }

    /// [`settled_space`] with holes (every 37th page from 5), old entries (29th from
    /// 3), clean ones (23rd from 7) and the middle page table's PMD entry old.
    fn mixed_space(n: u64) -> (crate::mm::Mm, u32) {
        let (mut mm, si) = settled_space(n);
        let s = &mut mm.spaces[si as usize];
        for i in (0..n as u32).filter(|i| i % 37 == 5) {
            *s.pte_mut(i) = pte::NONE;
        }
        for i in (0..n as u32).filter(|i| i % 29 == 3) {
            *s.pte_mut(i) &= !pte::YOUNG;
        }
        for i in (0..n as u32).filter(|i| i % 23 == 7) {
            *s.pte_mut(i) &= !pte::DIRTY;
        }
        s.pmd_test_and_clear_young(1);
        (mm, si)
    }

    /// The chance that `limit` accesses by `sampler` touch `page` at least once,
    /// worked out from the sampler's distribution: 1 - (1 - p)^limit.
    fn p_touched(p_page: f64, limit: u64) -> f64 {
        1.0 - (1.0 - p_page).powi(limit as i32)
    }

    /// A paced thread's slots for one round: 300 accesses, one every 1000 ns (each
    /// taking 100 ns) from `start`, the slice ending just after the last.
    fn paced_round(start: u64) -> Pacing {
        Pacing::new(start, start, 1_000, (start + 299_001, u64::MAX), 100, 0)
    }

    /// One round of `limit` accesses: back to back (`skip_hit_loop`) or paced
    /// (`random_loop` with [`paced_round`]'s slots), and where the skipping loop
    /// leaves a dense call to its caller, the caller's loop: one access a draw.
    #[allow(clippy::too_many_arguments)]
    fn one_round(
        mm: &mut crate::mm::Mm,
        si: u32,
        sampler: &Sampler,
        (limit, paced, round): (u64, bool, u64),
        write_u32: u32,
        rng: &mut Pcg64Mcg,
        st: &mut SkipState,
        sets: &mut SkipSets,
    ) -> (u64, Option<(u32, bool)>) {
        // The caller's loop for a dense call (one access a draw while `more`), with
        // what it changed reported to the set: its hits and the missing page.
        let per_access = |mm: &mut crate::mm::Mm,
                          rng: &mut Pcg64Mcg,
                          sets: &mut SkipSets,
                          more: &mut dyn FnMut() -> bool,
                          hit: &mut dyn FnMut()| {
            let (entries, pmd_young) = mm.spaces[si as usize].hw_table_mut();
            let (mut taken, mut changed, mut miss) = (0, 0, None);
            while more() {
                let o = sampler.next(rng, &mut 0, 0);
                match access(
                    o,
                    write_u32,
                    rng,
                    (entries, pmd_young),
                    &mut crate::workload::Slow::none(),
                ) {
                    Err(m) => {
                        miss = Some(m);
                        break;
                    }
                    Ok((_, c)) => changed += c as u64,
                }
                hit();
                taken += 1;
            }
            let s = &mut mm.spaces[si as usize];
            dense_seen(sets, s, taken, changed, miss.is_some());
            (taken, miss)
        };
        if !paced {
            let s = &mut mm.spaces[si as usize];
            let at = (si, 0, 0);
            let slow = &mut crate::workload::Slow::none();
            return match skip_hit_loop(
                s,
                limit,
                write_u32,
                rng,
                &mut 0,
                (st, sets, slow),
                sampler,
                at,
            ) {
                Skipped::Ran(hits, miss) => (hits, miss),
                Skipped::Dense => {
                    let taken = std::cell::Cell::new(0u64);
                    let more = &mut || taken.get() < limit;
                    per_access(mm, rng, sets, more, &mut || taken.set(taken.get() + 1))
                }
                Skipped::No => unreachable!(),
            };
        }
        let (n, dist) = match sampler {
            Sampler::Uniform { n } => (*n, Dist::Uniform),
            Sampler::Zipf(z) => (z.skip_params().0, Dist::Zipf(z)),
            _ => unreachable!(),
        };
        let mut p = paced_round(round * 1_000_000);
        let s = &mut mm.spaces[si as usize];
        let mut budget = Budget::Paced(&mut p);
        let slow = &mut crate::workload::Slow::none();
        let r = random_loop(
            s,
            write_u32,
            rng,
            sets,
            (n, dist),
            (si, 0),
            (&mut budget, slow),
        );
        let miss = r.unwrap_or_else(|| {
            let p = std::cell::RefCell::new(&mut p);
            let more = &mut || p.borrow_mut().issue_next();
            per_access(mm, rng, sets, more, &mut || p.borrow_mut().hit()).1
        });
        // The slot after the last lies past the slice: the thread sleeps until it.
        let next_slot = crate::workload::SliceEnd::SleepUntil(round * 1_000_000 + 300_000);
        assert!(miss.is_some() || p.end == Some(next_slot));
        (p.hits, miss)
    }

    /// Pages made old (as DAMON's mkold does) come back young as often as the
    /// sampler's distribution says, whichever pages the skipping loop passes over:
    /// the frequency over many rounds against the exact chance, within 5 sigma; for
    /// back-to-back accesses and for a paced thread's slots.
    fn old_pages_come_back_young(sampler: Sampler, p_page: impl Fn(u64) -> f64, write_u32: u32) {
        old_pages_come_back_young_in(sampler.clone(), &p_page, write_u32, false);
        // Paced threads skip with uniform and zipf pickers only.
        if !matches!(sampler, Sampler::HotCold { .. }) {
            old_pages_come_back_young_in(sampler, &p_page, write_u32, true);
        }
    }

    fn old_pages_come_back_young_in(
        sampler: Sampler,
        p_page: impl Fn(u64) -> f64,
        write_u32: u32,
        paced: bool,
    ) {
        let (mut mm, si) = settled_space(N);
        let mut rng = task_rng(3, "skip");
        let (mut st, mut sets) = (SkipState::default(), SkipSets::default());
        let watched = [0u64, 1, 7, 100, 311, 511];
        let (rounds, limit) = (20_000u64, 300u64);
        let mut young = [0u64; 6];
        let (mut dense_rounds, mut back_to_sparse, mut was_dense) = (0, 0, false);
        for round in 0..rounds {
            for &o in &watched {
                *mm.spaces[si as usize].pte_mut(o as u32) &= !pte::YOUNG;
            }
            // Now and then a burst of old pages (a quarter of the range), so the loop
            // goes over to taking accesses one by one and, once they settle, back.
            if round % 400 < 3 {
                for o in (0..N as u32).filter(|o| o % 4 == 2) {
                    *mm.spaces[si as usize].pte_mut(o) &= !pte::YOUNG;
                }
            }
            let (hits, miss) = one_round(
                &mut mm,
                si,
                &sampler,
                (limit, paced, round),
                write_u32,
                &mut rng,
                &mut st,
                &mut sets,
            );
            assert_eq!((hits, miss), (limit, None), "every page is present");
            let dense = sets.sets.last().unwrap().dense;
            dense_rounds += dense as u64;
            back_to_sparse += (was_dense && !dense) as u64;
            was_dense = dense;
            for (k, &o) in watched.iter().enumerate() {
                young[k] += (mm.spaces[si as usize].pte(o as u32) & pte::YOUNG != 0) as u64;
            }
        }
        assert!(
            dense_rounds > rounds / 200 && dense_rounds < rounds * 19 / 20 && back_to_sparse >= 10,
            "both ways of taking accesses used (paced {paced}): {dense_rounds} rounds of \
             {rounds} dense, {back_to_sparse} returns to skipping"
        );
        for (k, &o) in watched.iter().enumerate() {
            let want = p_touched(p_page(o), limit);
            let got = young[k] as f64 / rounds as f64;
            let sigma = (want * (1.0 - want) / rounds as f64).sqrt().max(1e-4);
            assert!(
                (got - want).abs() < 5.0 * sigma,
                "page {o} (paced {paced}): young after {got:.4} of rounds, want {want:.4}"
            );
        }
    }

    #[test]
    fn uniform_skips_only_what_changes_nothing() {
        let p = |_: u64| 1.0 / N as f64;
        old_pages_come_back_young(Sampler::Uniform { n: N }, p, 0);
        old_pages_come_back_young(Sampler::Uniform { n: N }, p, u32::MAX / 10);
    }

    #[test]
    fn hotcold_skips_only_what_changes_nothing() {
        // 128 hot pages of 512 get 80 % of the accesses: from the start of the range,
        // and (after the phase change, which a call at time 0 is past) from its middle.
        let hot_u32 = (0.8 * 4_294_967_295.0) as u32;
        let h = hot_u32 as f64 / 4_294_967_296.0;
        for (phase_change_ns, hot_lo) in [(None, 0u64), (Some(0), N / 2)] {
            let sampler = Sampler::HotCold {
                n: N,
                hot_n: 128,
                hot_prob_u32: hot_u32,
                phase_change_ns,
            };
            let p = move |o: u64| {
                if (o + N - hot_lo) % N < 128 {
                    h / 128.0
                } else {
                    (1.0 - h) / 384.0
                }
            };
            old_pages_come_back_young(sampler.clone(), p, 0);
            old_pages_come_back_young(sampler, p, u32::MAX / 10);
        }
    }

    #[test]
    fn zipf_skips_only_what_changes_nothing() {
        let z = Arc::new(Zipf::new(N, 0.9));
        let h: f64 = (1..=N).map(|k| (k as f64).powf(-0.9)).sum();
        let (_, _, stride) = z.skip_params();
        // Page o is rank r with o = r·stride mod N.
        let rank_of = move |o: u64| (0..N).find(|&r| r * stride % N == o).unwrap();
        let p = move |o: u64| ((rank_of(o) + 1) as f64).powf(-0.9) / h;
        old_pages_come_back_young(Sampler::Zipf(z.clone()), p, 0);
        old_pages_come_back_young(Sampler::Zipf(z), p, u32::MAX / 10);
    }

    /// Without write draws (never or always writing) a sequential sweep that passes
    /// over settled pages is the per-access sweep exactly: the same hits, the same
    /// stop at the same missing page, the same cursor and table, over holes, old
    /// entries, clean entries, an old PMD entry, a range that starts mid-table and
    /// wraps, limits short and long, and a table taken away and made anew (the page
    /// tables the sweep saw settled are forgotten with it).
    #[test]
    fn sequential_skips_are_the_sweep() {
        const PAGES: u64 = 1300;
        for write_u32 in [0, u32::MAX] {
            let (mut mm, si) = mixed_space(PAGES);
            let mut exact = mm.spaces[si as usize].clone();
            let (base, n) = (300u64, 900u64);
            let sampler = Sampler::Sequential { n };
            let (mut ra, mut rb) = (task_rng(1, "a"), task_rng(1, "a"));
            let (mut ca, mut cb) = (0u64, 0u64);
            let (mut st, mut sets) = (SkipState::default(), SkipSets::default());
            let mut lr = task_rng(5, "limits");
            for call in 0..3000 {
                // Mostly short calls (stops at every place), now and then a long one.
                let limit = if call % 50 == 0 {
                    2000
                } else {
                    1 + lr.next_u64() % 40
                };
                // Half-way, right after a long sweep saw the tables settled, the
                // table is taken away (the process exits, and a new one faults the
                // range in again, below).
                if call == 1501 {
                    for s in [&mut mm.spaces[si as usize], &mut exact] {
                        let _ = s.take_table();
                    }
                }
                // Between slices others age the tables (MGLRU's walk, DAMON's mkold).
                if call % 5 == 0 {
                    let (pmd, page) = ((call / 5 % 3) as u32, (lr.next_u64() % PAGES) as u32);
                    for s in [&mut mm.spaces[si as usize], &mut exact] {
                        s.pmd_test_and_clear_young(pmd);
                        *s.pte_mut(page) &= !pte::YOUNG;
                    }
                }
                let got = skip_hit_loop(
                    &mut mm.spaces[si as usize],
                    limit,
                    write_u32,
                    &mut ra,
                    &mut ca,
                    (&mut st, &mut sets, &mut crate::workload::Slow::none()),
                    &sampler,
                    (si, base, 0),
                );
                let Skipped::Ran(hits, miss) = got else {
                    unreachable!("sequential sweeps skip")
                };
                let got = (hits, miss);
                let want = crate::workload::hit_loop(
                    exact.hw_table_mut(),
                    limit,
                    write_u32,
                    &mut rb,
                    |r| base + sampler.next(r, &mut cb, 0),
                );
                assert_eq!(got, want, "limit {limit}");
                assert_eq!(ca, cb);
                let (a, b) = (mm.spaces[si as usize].hw_table_mut(), exact.hw_table_mut());
                assert_eq!((&*a.0, &*a.1), (&*b.0, &*b.1), "limit {limit}");
                if let Some((vpn, _)) = got.1 {
                    // The fault handler maps the page; both go on.
                    for s in [&mut mm.spaces[si as usize], &mut exact] {
                        *s.pte_mut(vpn) = pte::present(vpn) | pte::YOUNG;
                    }
                }
            }
        }
    }

    /// masim lines whose stride passes a page, `strided_hits` against the per-access
    /// loop `each` runs (masim's offset step): the same hits, miss, offset, entries
    /// and PMD bits and slow cost, call after call, with pages missing, old, clean
    /// or on a slow node, others aging the tables between calls, limits that end
    /// runs part-way, strides that divide a page table and that do not, and a
    /// region ending inside a page.
    #[test]
    fn a_line_striding_past_pages_runs_as_the_per_access_loop() {
        const PAGES: u64 = 1300;
        let region_bytes = (PAGES - 1) * 4096 + 1000;
        let extra = [0u64, 70];
        for stride in [4097u64, 5000, 8192, 3 * 4096 + 1, 2 << 20, (2 << 20) + 4096] {
            for write_u32 in [0, u32::MAX] {
                let (mut mm, si) = mixed_space(PAGES);
                let s = &mut mm.spaces[si as usize];
                for i in (0..PAGES as u32).filter(|i| i % 41 == 9) {
                    *s.pte_mut(i) |= pte::SLOW | 1 << pte::NID_SHIFT;
                }
                let mut exact = mm.spaces[si as usize].clone();
                let (mut ra, mut rb) = (task_rng(1, "a"), task_rng(1, "a"));
                let (mut oa, mut ob) = (0u64, 0u64);
                let mut st = SkipState::default();
                let mut lr = task_rng(5, "limits");
                for call in 0..1500 {
                    let limit = if call % 50 == 0 {
                        3000
                    } else {
                        1 + lr.next_u64() % 40
                    };
                    if call % 7 == 0 {
                        let (pmd, page) = ((call / 7 % 3) as u32, (lr.next_u64() % PAGES) as u32);
                        for s in [&mut mm.spaces[si as usize], &mut exact] {
                            s.pmd_test_and_clear_young(pmd);
                            *s.pte_mut(page) &= !pte::YOUNG;
                        }
                    }
                    let mut slow_a = crate::workload::Slow::new(&extra, 0, 2);
                    let got = strided_hits(
                        &mut mm.spaces[si as usize],
                        limit,
                        write_u32,
                        &mut ra,
                        &mut oa,
                        (&mut st, &mut slow_a),
                        (si, region_bytes, stride),
                    );
                    let mut slow_b = crate::workload::Slow::new(&extra, 0, 2);
                    let pick = |_: &mut Pcg64Mcg| {
                        ob += stride;
                        if ob >= region_bytes {
                            ob = 0;
                        }
                        ob / 4096
                    };
                    let want = crate::workload::hit_loop_seen(
                        exact.hw_table_mut(),
                        limit,
                        write_u32,
                        &mut rb,
                        pick,
                        |(e, _)| slow_b.hit(e),
                    );
                    let at = format!("stride {stride} write {write_u32} call {call}");
                    assert_eq!(got, want, "{at}");
                    assert_eq!((oa, slow_a.ns), (ob, slow_b.ns), "{at}");
                    let (a, b) = (mm.spaces[si as usize].hw_table_mut(), exact.hw_table_mut());
                    assert_eq!((&*a.0, &*a.1), (&*b.0, &*b.1), "{at}");
                    if let Some((vpn, _)) = got.1 {
                        for s in [&mut mm.spaces[si as usize], &mut exact] {
                            *s.pte_mut(vpn) = pte::present(vpn) | pte::YOUNG;
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn zipf_blocks_find_the_rank_a_running_sum_over_ranks_finds() {
        let z = Zipf::with_table_ranks(1000, 0.9, 16);
        // Ranks from 128 up are the interpolated tail.
        for exact_ranks in [ZIPF_EXACT_RANKS, 128] {
            zipf_blocks_find(ZipfWeights::with_exact_ranks(&z, exact_ranks));
        }
    }

    /// The interpolated tail's weights against (r+1)^-s worked out per rank: the ratio
    /// to rank 0's weight, within the fixed point's rounding; all ranks sum to all_weight.
    #[test]
    fn zipf_tail_weights_follow_the_power_law() {
        let n = 3 * ZIPF_EXACT_RANKS + 37;
        for s in [0.5, 0.99, 1.5] {
            let z = Zipf::with_table_ranks(n, s, 16);
            let mut zw = ZipfWeights::new(&z);
            zw.sum_blocks();
            let w0 = zw.weight(0) as f64;
            let mut rng = Pcg64Mcg::seed_from_u64(3);
            let ranks = (0..4000).map(|_| below(rng.next_u64(), n));
            for r in ranks.chain([ZIPF_EXACT_RANKS - 1, ZIPF_EXACT_RANKS, n - 1]) {
                let want = ((r + 1) as f64).powf(-s);
                let got = zw.weight(r) as f64 / w0;
                let rel = (got - want).abs() / want;
                assert!(rel < 1e-6, "s {s} rank {r}: {got} against {want}");
            }
            let sum: u64 = (0..n).map(|r| zw.weight(r)).sum();
            assert_eq!(zw.all_weight(), sum);
            let top = (1u64 << 62) as f64;
            assert!((sum as f64 - top).abs() < top * 1e-6, "s {s}: sum {sum}");
        }
    }

    fn zipf_blocks_find(mut zw: ZipfWeights) {
        zw.sum_blocks();
        let mut rng = Pcg64Mcg::seed_from_u64(7);
        let mut member = vec![false; 1000];
        for round in 0..6 {
            // Members come and go; every third round the tree is summed afresh.
            for _ in 0..300 {
                let item = below(rng.next_u64(), 1000);
                let r = zw.rank(item) as usize;
                if member[r] {
                    zw.remove(item);
                } else {
                    zw.add(item);
                }
                member[r] = !member[r];
            }
            if round % 3 == 2 {
                zw.sum_blocks();
            }
            // The reference: member weights in rank order, summed one by one.
            let mut ends = Vec::new();
            let mut sum = 0u64;
            for (r, _) in member.iter().enumerate().filter(|(_, m)| **m) {
                sum += zw.weight(r as u64);
                ends.push((sum, r as u64));
            }
            assert_eq!(zw.blocks.total(), sum);
            for _ in 0..2000 {
                let u = below(rng.next_u64(), sum);
                let want = ends.iter().find(|(end, _)| u < *end).expect("u < sum").1;
                assert_eq!(zw.find(u), want, "u {u}");
            }
            // The edges of each member's interval.
            for w in ends.windows(2) {
                assert_eq!(zw.find(w[0].0), w[1].1);
                assert_eq!(zw.find(w[0].0 - 1), w[0].1);
            }
        }
    }

    #[test]
    fn sum_tree_finds_by_weight_and_inverse_is_inverse() {
        let mut f = SumTree::from_weights(&[0; 10]);
        for (i, w) in [(0, 3i64), (4, 5), (9, 2)] {
            f.add(i, w);
        }
        let found: Vec<(u64, u64)> = (0..10).map(|u| f.find(u)).collect();
        let rem = [0, 1, 2, 0, 1, 2, 3, 4, 0, 1];
        assert_eq!(
            found,
            [0, 0, 0, 4, 4, 4, 4, 4, 9, 9]
                .into_iter()
                .zip(rem)
                .collect::<Vec<_>>()
        );
        f.add(4, -5);
        assert_eq!((f.total(), f.find(3)), (5, (9, 0)));
        // Built by adds or from the weights, the same tree; and every find is a
        // linear scan's answer, for sizes around each level's edge (many zeros, so
        // that whole lines and subtrees weigh nothing).
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(5);
        for n in [1usize, 7, 8, 9, 63, 64, 65, 511, 513, 4097, 40_000] {
            let w: Vec<u64> = (0..n)
                .map(|_| {
                    if rng.gen_bool(0.6) {
                        0
                    } else {
                        rng.gen_range(1..1000)
                    }
                })
                .collect();
            let mut g = SumTree::from_weights(&vec![0; n]);
            for (i, &x) in w.iter().enumerate() {
                g.add(i, x as i64);
            }
            let h = SumTree::from_weights(&w);
            assert_eq!((&g.levels, g.total), (&h.levels, h.total), "n {n}");
            assert_eq!(h.levels.last().map(Vec::len), Some(1));
            let total: u64 = w.iter().sum();
            if total == 0 {
                continue;
            }
            for _ in 0..500 {
                let u = rng.gen_range(0..total);
                let (mut i, mut left) = (0, u);
                while left >= w[i] {
                    left -= w[i];
                    i += 1;
                }
                assert_eq!(h.find(u), (i as u64, left), "n {n} u {u}");
            }
            // A tree cleared to a smaller size in the same buffers finds as a new one.
            g.clear(n / 3 + 1);
            assert_eq!(g.levels, SumTree::from_weights(&vec![0; n / 3 + 1]).levels);
        }
        // The strides zipf samplers use: a·x ≡ 1 (mod n), and the rank of each item is
        // the rank it was scattered from.
        for n in [2u64, 7, 1000, 393_216, 12_582_912] {
            let (_, _, a) = Zipf::with_table_ranks(n, 0.9, 16).skip_params();
            let x = inverse_mod(a, n);
            assert_eq!(a as u128 * x as u128 % n as u128, 1, "n {n}");
        }
        assert_eq!(inverse_mod(1, 1), 0);
    }
}
