//! Skip sampling for `kv` requests (`run.access_sampling = "skip"`): a request whose
//! value's pages are all settled (present, young, dirty if the workload sets, their
//! PMD entries young; see [`super::skip`]) changes no state. It costs `request_time`
//! and one access per page of its value, and counts as an operation with its latency.
//! A thread's run of such requests is taken here without drawing keys or touching
//! pages: how many come before the next request that may change something is a
//! geometric gap (with the members' share of the picker's probability), and each of
//! them needs only how many pages its value spans (1 or 2 for a value of 2000 bytes),
//! drawn in proportion to the settled keys of each size (uniform: their numbers;
//! zipf: their rank weights).
//! The request that may change something is handed, key drawn, to [`super::bench_kinds::Kv::op`].
//!
//! The keys that may change something are a set shared by the workload's threads,
//! kept as [`super::skip::SkipSet`] keeps pages: brought up to date from the space's
//! change log (a page written by the kernel makes the keys overlapping it members
//! again), rebuilt from the page table after a spell of requests taken one by one.
//! Uniform and zipf key pickers, back to back, paced or thinking (a batch is issued
//! as `run_slice`'s loop issues it). Hot/cold keys are two classes of equally likely
//! keys (the lists a hot/cold anon set uses, [`ClassLists`]); a run stops where the
//! hot set moves (`phase_change`), and the set for the new hot set starts dense.
//! Keys asked for in turn (`pattern = "sequential"`) need nothing drawn but each
//! request's set decision, which a run draws as the request would: the run up to the
//! next member at the cursor passes as those requests would, byte for byte.

use rand::RngCore;
use rand_pcg::Pcg64Mcg;

use crate::mm::bitmap::for_each_set_bit;
use crate::mm::{lru_gen::PTRS_PER_PTE, Mm, Space, PMD_CHANGE};

use super::bench_kinds::draw_set;
use super::pattern::{below, Sampler};
use super::skip::{
    geometric, next_in_turn, settled, ClassLists, DenseProbe, Dist, SkipSets, ZipfWeights,
};
use super::{SliceEnd, SliceReport, Spec, Thread, Workload, WorkloadStats};

thread_local! {
    /// Requests made in closed form on this host thread ([`requests_skipped_here`]).
    static REQUESTS_SKIPPED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many `kv` requests the runs on this host thread have made without touching
/// their pages (for tests, and for anyone asking whether skipping pays).
pub fn requests_skipped_here() -> u64 {
    REQUESTS_SKIPPED.with(|c| c.get())
}

/// Above this chance that a request picks a member, requests are taken one by one.
/// Higher than for single accesses ([`super::skip`]): a request costs far more than
/// an access, so skipping pays while most requests change nothing.
const DENSE_P_MEMBER: f64 = 1.0 / 4.0;
/// The keys of a `kv` space that a request may change, by how many pages their
/// values span: `min_pages` (class 0) or one more (class 1).
#[derive(Debug)]
pub struct KvSet {
    space: u32,
    keys: u64,
    value_size: u64,
    set_u32: u32,
    /// Pages a value spans at least: ⌈value_size / 4096⌉.
    min_pages: u64,
    /// The picker's identity ([`Dist::identity`]; uniform and in turn: zeros).
    picker_id: [u64; 4],
    member: Vec<u64>,
    picks: KvPicks,
    log_pos: u64,
    /// Taking requests one by one (stale until rebuilt), and what they showed.
    probe: DenseProbe,
    /// [`Tally`]'s counts between runs (all zero).
    tally: Vec<u64>,
}

/// How the members are drawn, as the picker draws keys.
#[derive(Debug)]
enum KvPicks {
    /// Uniform keys: the members in a list per class (and each one's place in it),
    /// so one can be drawn and removed in O(1); the keys of each class, members or
    /// not.
    Uniform {
        lists: [Vec<u32>; 2],
        place: Vec<u32>,
        class_keys: [u64; 2],
    },
    /// Zipf keys: the members' rank weights ([`ZipfWeights`]); the weight of each
    /// class's keys, all of them and the members.
    Zipf {
        w: Box<ZipfWeights>,
        class_weight: [u64; 2],
        member_weight: [u64; 2],
    },
    /// Hot/cold keys: the members listed by hotness ([`ClassLists`]), and the keys
    /// and members counted by hotness (first index) and size class (second).
    HotCold {
        lists: ClassLists,
        keys: [[u64; 2]; 2],
        members: [[u64; 2]; 2],
    },
}

impl KvSet {
    /// A set not built yet: dense, so requests are taken one by one (as under
    /// `each`) until they show that most change nothing ([`dense_request`]); a
    /// workload whose requests keep changing state never pays for the set.
    fn new(space_id: u32, keys: u64, value_size: u64, set_u32: u32, dist: Dist) -> KvSet {
        let min_pages = value_size.div_ceil(4096);
        let picks = match dist {
            Dist::Uniform => KvPicks::Uniform {
                lists: [Vec::new(), Vec::new()],
                place: Vec::new(),
                class_keys: [0; 2],
            },
            Dist::Zipf(z) => KvPicks::Zipf {
                w: Box::new(ZipfWeights::new(z)),
                class_weight: [0; 2],
                member_weight: [0; 2],
            },
            // A zeroed place per key, which the host commits as the set is built.
            Dist::HotCold { .. } => KvPicks::HotCold {
                lists: ClassLists::new(keys, dist),
                keys: [[0; 2]; 2],
                members: [[0; 2]; 2],
            },
        };
        KvSet {
            space: space_id,
            keys,
            value_size,
            set_u32,
            min_pages,
            picker_id: dist.identity(),
            member: Vec::new(),
            picks,
            log_pos: 0,
            probe: DenseProbe::new(),
            tally: Vec::new(),
        }
    }

    /// Builds the set from the table (allocated the first time) and starts skipping.
    fn build(&mut self, space: &mut Space) {
        if self.member.is_empty() {
            self.member = vec![0; self.keys.div_ceil(64) as usize];
            let (value_size, min_pages) = (self.value_size, self.min_pages);
            let size_class = |k: u64| {
                let (first, last) = pages_of(k, value_size);
                (last - first + 1 > min_pages) as usize
            };
            match &mut self.picks {
                KvPicks::Uniform {
                    place, class_keys, ..
                } => {
                    *place = vec![0; self.keys as usize];
                    for k in 0..self.keys {
                        class_keys[size_class(k)] += 1;
                    }
                }
                KvPicks::HotCold { lists, keys, .. } => {
                    for k in 0..self.keys {
                        keys[lists.class(k)][size_class(k)] += 1;
                    }
                }
                KvPicks::Zipf { .. } => {}
            }
        }
        self.probe.built();
        self.rebuild(space);
    }

    /// The pages of key `k`'s value (values lie back to back from offset 0).
    fn pages(&self, k: u64) -> (u64, u64) {
        pages_of(k, self.value_size)
    }

    fn class(&self, k: u64) -> usize {
        let (first, last) = self.pages(k);
        (last - first + 1 > self.min_pages) as usize
    }

    /// Whether a request for `k` would change nothing.
    fn key_settled(&self, space: &Space, k: u64) -> bool {
        let (first, last) = self.pages(k);
        (first..=last).all(|p| {
            let idx = p as u32;
            settled(space.pte(idx), space.pmd_young(idx), self.set_u32)
        })
    }

    fn has(&self, k: u64) -> bool {
        self.member[(k / 64) as usize] >> (k % 64) & 1 != 0
    }

    fn add(&mut self, k: u64) {
        if self.has(k) {
            return;
        }
        self.member[(k / 64) as usize] |= 1 << (k % 64);
        let c = self.class(k);
        match &mut self.picks {
            KvPicks::Uniform { lists, place, .. } => {
                place[k as usize] = lists[c].len() as u32;
                lists[c].push(k as u32);
            }
            KvPicks::Zipf {
                w, member_weight, ..
            } => {
                w.add(k);
                member_weight[c] += w.item_weight(k);
            }
            KvPicks::HotCold { lists, members, .. } => {
                members[lists.class(k)][c] += 1;
                lists.add(k);
            }
        }
    }

    fn remove(&mut self, k: u64) {
        if !self.has(k) {
            return;
        }
        self.member[(k / 64) as usize] &= !(1 << (k % 64));
        let c = self.class(k);
        match &mut self.picks {
            KvPicks::Uniform { lists, place, .. } => {
                let (list, i) = (&mut lists[c], place[k as usize] as usize);
                let last = *list.last().expect("a member is listed");
                list[i] = last;
                place[last as usize] = i as u32;
                list.pop();
            }
            KvPicks::Zipf {
                w, member_weight, ..
            } => {
                w.remove(k);
                member_weight[c] -= w.item_weight(k);
            }
            KvPicks::HotCold { lists, members, .. } => {
                members[lists.class(k)][c] -= 1;
                lists.remove(k);
            }
        }
    }

    fn is_empty(&self) -> bool {
        match &self.picks {
            KvPicks::Uniform { lists, .. } => lists.iter().all(Vec::is_empty),
            KvPicks::Zipf { w, .. } => w.total() == 0,
            KvPicks::HotCold { lists, .. } => lists.is_empty(),
        }
    }

    /// The chance that a request picks a member.
    fn p_member(&self) -> f64 {
        match &self.picks {
            KvPicks::Uniform { lists, .. } => {
                (lists[0].len() + lists[1].len()) as f64 / self.keys as f64
            }
            KvPicks::Zipf { w, .. } => w.total() as f64 / w.all_weight() as f64,
            KvPicks::HotCold { lists, .. } => lists.p_member(),
        }
    }

    /// A member, drawn as the picker would draw among the members.
    fn pick(&self, rng: &mut Pcg64Mcg) -> u64 {
        match &self.picks {
            KvPicks::Uniform { lists, .. } => {
                let a = lists[0].len();
                let i = below(rng.next_u64(), (a + lists[1].len()) as u64) as usize;
                if i < a {
                    lists[0][i] as u64
                } else {
                    lists[1][i - a] as u64
                }
            }
            KvPicks::Zipf { w, .. } => w.zipf_item(w.find(below(rng.next_u64(), w.total()))),
            KvPicks::HotCold { lists, .. } => lists.pick(rng),
        }
    }

    /// What a request that changes nothing needs drawn: how many pages its value
    /// spans (a key drawn as the picker draws, from those that are not members, as
    /// far as its class goes).
    fn settled_draw(&self) -> SettledDraw {
        let (w0, w1) = match &self.picks {
            KvPicks::Uniform {
                lists, class_keys, ..
            } => (
                class_keys[0] - lists[0].len() as u64,
                class_keys[1] - lists[1].len() as u64,
            ),
            KvPicks::Zipf {
                class_weight,
                member_weight,
                ..
            } => (
                class_weight[0] - member_weight[0],
                class_weight[1] - member_weight[1],
            ),
            KvPicks::HotCold {
                lists,
                keys,
                members,
            } => {
                // Each size class's settled keys by their chances, as weights out of
                // 2^52 (a chance's precision).
                let chance = |c: usize| {
                    (0..2)
                        .map(|h| (keys[h][c] - members[h][c]) as f64 * lists.p_item(h))
                        .sum::<f64>()
                };
                let (a, b) = (chance(0), chance(1));
                if a == 0.0 || b == 0.0 {
                    ((a > 0.0) as u64, (b > 0.0) as u64)
                } else {
                    let w0 = ((a / (a + b)) * (1u64 << 52) as f64) as u64;
                    (w0, (1 << 52) - w0)
                }
            }
        };
        SettledDraw { w0, w1 }
    }

    /// Every key with an unsettled page, from the table.
    fn rebuild(&mut self, space: &mut Space) {
        self.member.fill(0);
        for k in 0..self.keys {
            if !self.key_settled(space, k) {
                self.member[(k / 64) as usize] |= 1 << (k % 64);
            }
        }
        let (value_size, min_pages) = (self.value_size, self.min_pages);
        let class = |k: u64| {
            let (first, last) = pages_of(k, value_size);
            (last - first + 1 > min_pages) as usize
        };
        let members = || for_each_set_bit(&self.member).map(|k| k as u64);
        match &mut self.picks {
            KvPicks::Uniform { lists, place, .. } => {
                lists.iter_mut().for_each(Vec::clear);
                for k in members() {
                    let c = class(k);
                    place[k as usize] = lists[c].len() as u32;
                    lists[c].push(k as u32);
                }
            }
            KvPicks::Zipf {
                w,
                class_weight,
                member_weight,
            } => {
                // The tree built in place (its weights worked out at the first build).
                w.clear();
                members().for_each(|k| w.mark(k));
                w.sum_blocks();
                if *class_weight == [0; 2] {
                    for k in 0..self.keys {
                        class_weight[class(k)] += w.item_weight(k);
                    }
                }
                *member_weight = [0; 2];
                for k in members() {
                    member_weight[class(k)] += w.item_weight(k);
                }
            }
            KvPicks::HotCold {
                lists,
                members: counts,
                ..
            } => {
                lists.clear();
                *counts = [[0; 2]; 2];
                for k in members() {
                    counts[lists.class(k)][class(k)] += 1;
                    lists.add(k);
                }
            }
        }
        self.log_pos = space.watch_changes();
    }

    /// Takes in the space's changes since the last call: the keys overlapping a page
    /// the kernel wrote that are unsettled join the set.
    fn catch_up(&mut self, space: &mut Space) {
        let end = space.watch_changes();
        let Some(changes) = space.changes_since(self.log_pos) else {
            self.rebuild(space);
            return;
        };
        let mut join = Vec::new();
        for &c in changes {
            let (lo, hi) = if c & PMD_CHANGE != 0 {
                let first = (c & !PMD_CHANGE) * PTRS_PER_PTE as u64;
                (first, first + PTRS_PER_PTE as u64)
            } else {
                (c, c + 1)
            };
            // Keys whose bytes overlap pages lo..hi.
            let k_lo = lo * 4096 / self.value_size;
            let k_hi = ((hi * 4096 - 1) / self.value_size).min(self.keys - 1);
            for k in k_lo..=k_hi {
                if !self.has(k) && !self.key_settled(space, k) {
                    join.push(k);
                }
            }
        }
        for k in join {
            self.add(k);
        }
        self.log_pos = end;
    }
}

/// The first and last pages of key `k`'s value (values lie back to back from 0).
fn pages_of(k: u64, value_size: u64) -> (u64, u64) {
    let first = k * value_size / 4096;
    (first, (k * value_size + value_size - 1) / 4096)
}

/// The settled keys' weight in each class (uniform: their numbers), for drawing a
/// settled request's class.
#[derive(Debug, Clone, Copy)]
struct SettledDraw {
    w0: u64,
    w1: u64,
}

impl SettledDraw {
    /// Whether a settled request's value spans one page more than the least.
    #[inline(always)]
    fn one_more(self, rng: &mut Pcg64Mcg) -> bool {
        if self.w1 == 0 {
            false
        } else if self.w0 == 0 {
            true
        } else {
            below(rng.next_u64(), self.w0 + self.w1) >= self.w0
        }
    }
}

/// How a run's settled requests get their values' page counts: drawn in proportion
/// to the settled keys of each size, known (a member found settled), or from the
/// keys in turn at the thread's cursor.
#[derive(Debug, Clone, Copy)]
enum Pages {
    Drawn(SettledDraw),
    Known(u64),
    InTurn,
}

/// What [`member_request`] found for the request at a gap's end.
pub(crate) enum Next {
    /// A request that changes nothing (a member found settled, now out of the set),
    /// its value spanning this many pages.
    Settled(u64),
    /// A request to take as `each` does: its key and whether it sets.
    Take(u64, bool),
}

/// A thread's skipping state for its requests: the gap of settled requests drawn and
/// not yet made, and the key of its last request handed on (dropped from the set at
/// the next call if that request left it settled).
#[derive(Debug, Default)]
pub struct KvSkip {
    /// None: to be drawn (at a run's start, after a member's request).
    gap: Option<u64>,
    pending: Option<u64>,
    /// The request handed on: its key and whether it sets.
    pub(crate) next: Option<(u64, bool)>,
}

/// The workload's set for its `kv` space, made (dense, not built: [`KvSet::new`]) if
/// it has none.
pub(crate) fn ready<'a>(
    slot: &'a mut Option<Box<KvSet>>,
    space_id: u32,
    (keys, value_size, set_u32): (u64, u64, u32),
    dist: Dist,
) -> &'a mut KvSet {
    let picker_id = dist.identity();
    let fits = slot.as_ref().is_some_and(|s| {
        (s.space, s.keys, s.value_size, s.set_u32, s.picker_id)
            == (space_id, keys, value_size, set_u32, picker_id)
    });
    if !fits {
        *slot = Some(Box::new(KvSet::new(
            space_id, keys, value_size, set_u32, dist,
        )));
    }
    slot.as_mut().expect("made above")
}

/// Brings the set up to date for a thread's run of requests: its last request's key
/// out if that left it settled, the space's changes in, and whether requests are to
/// be taken one by one.
pub(crate) fn start_run(s: &mut KvSet, space: &mut Space, st: &mut KvSkip) {
    // The set may have changed since the thread's last run: its gap is drawn afresh
    // (a geometric gap is memoryless, so this is the same process).
    st.gap = None;
    if s.probe.dense {
        st.pending = None;
        return;
    }
    s.catch_up(space);
    if let Some(k) = st.pending.take() {
        if s.key_settled(space, k) {
            s.remove(k);
        }
    }
    if s.p_member() > DENSE_P_MEMBER {
        s.probe.went_dense();
        // Stale until rebuilt, which rereads the table: no log to keep meanwhile.
        space.unwatch_changes();
    }
}

/// How many requests that change nothing come before the thread's next request for
/// a member (drawn when the last gap is spent: geometric, with the members' share of
/// the picker's probability); None while the set is dense (each request is `each`'s, drawn by its
/// own loop).
fn settled_ahead(s: &KvSet, st: &mut KvSkip, rng: &mut Pcg64Mcg) -> Option<u64> {
    if s.probe.dense {
        return None;
    }
    Some(*st.gap.get_or_insert_with(|| geometric(rng, s.p_member())))
}

/// The request at the gap's end, for a member drawn as the picker draws: taken if it may
/// change something, else dropped from the set and a settled request. The next gap
/// is drawn after it.
fn member_request(s: &mut KvSet, space: &Space, st: &mut KvSkip, rng: &mut Pcg64Mcg) -> Next {
    debug_assert!(!s.is_empty(), "with no member the gap is endless");
    st.gap = None;
    let k = s.pick(rng);
    let set = draw_set(rng, s.set_u32);
    if s.key_settled(space, k) {
        s.remove(k);
        // Drawn from the members, so its own size, not a class draw.
        let (first, last) = s.pages(k);
        return Next::Settled(last - first + 1);
    }
    st.pending = Some(k);
    Next::Take(k, set)
}

/// A request `each`'s loop drew for `key` while the set is dense, before it touches
/// the pages ([`DenseProbe`]): the set is built once such requests turn rare.
pub(crate) fn dense_request(s: &mut KvSet, space: &mut Space, key: u64) {
    if s.probe.take() {
        let changed = !s.key_settled(space, key);
        if s.probe.probed(changed, s.keys) {
            s.build(space);
        }
    }
}

/// Whether thread `t`'s next request is the skipping loop's: a `kv` workload (any
/// picker: uniform, zipf, hot/cold or in turn) under skip sampling (back to back,
/// paced or thinking), past its load phase, with no request in progress or handed
/// on, on a space whose accesses do not trap (`--record-accesses`, a research
/// policy).
pub(crate) fn applies(w: &Workload, t: &Thread, mm: &Mm) -> bool {
    let Spec::Kv(kv) = &w.spec else {
        return false;
    };
    // A dense set: the operation takes each request (and tells the set).
    let skipping = |s: &SkipSets| s.kv.as_ref().is_none_or(|kv| !kv.probe.dense);
    // A hot/cold picker with both classes (one key has no cold class).
    let two_classes = match kv.sampler {
        Sampler::HotCold { n, hot_n, .. } => hot_n > 0 && hot_n < n,
        _ => true,
    };
    w.skip_sets.as_deref().is_some_and(skipping)
        && two_classes
        && t.retry.is_none()
        && t.kv_skip.next.is_none()
        && t.populate.is_none()
        && kv.next_fill_key(t).is_none()
        && !mm.spaces[kv.space as usize].traps()
}

/// Thread `t`'s requests from `clock` as [`super::run_slice`]'s loop makes them, up
/// to the first that may change something (left in `t.kv_skip.next` for
/// [`super::bench_kinds::Kv::op`]), the slice's end, the workload's stop or its
/// `ops`: each batch issued as the pacing or think time allows (waiting inside the
/// slice, or sleeping past it), each settled request taking `request_time` and an
/// access per page, an operation of its batch with its latency, as `each` makes it.
/// Returns how many it made, or the sleep that ended the slice.
pub(crate) fn run(
    w: &mut Workload,
    t: &mut Thread,
    mm: &mut Mm,
    clock: &mut u64,
    slice_end: u64,
    rep: &mut SliceReport,
) -> Result<u64, SliceEnd> {
    let Workload {
        spec: Spec::Kv(kv),
        skip_sets,
        stats,
        stats_from_ns,
        batch,
        stop_ns,
        ops_left,
        interval_ns,
        think_ns,
        ..
    } = w
    else {
        unreachable!("applies() checked the kind");
    };
    let (interval_ns, think_ns) = (*interval_ns, *think_ns);
    // Where a hot/cold picker's hot set moves, if still ahead: the run stops before
    // a request issued there (whose key the new hot set picks).
    let mut phase_end = u64::MAX;
    if let Sampler::HotCold {
        phase_change_ns: Some(tc),
        ..
    } = kv.sampler
    {
        if *clock < tc {
            phase_end = tc;
        }
    }
    let (keys, dist) = match &kv.sampler {
        Sampler::Sequential { n } => (*n, Dist::Uniform),
        picker => Dist::of(picker, *clock).expect("a random picker"),
    };
    let in_turn = matches!(kv.sampler, Sampler::Sequential { .. });
    let (space_id, value_size, set_u32) = (kv.space, kv.value_size, kv.set_u32);
    let (request_ns, batch, stats_from_ns) = (kv.request_ns, *batch, *stats_from_ns);
    let access_ns = mm.cfg.costs.access_ns;
    let space = &mut mm.spaces[space_id as usize];
    let sets = skip_sets.as_deref_mut().expect("applies() checked");
    let s = ready(&mut sets.kv, space_id, (keys, value_size, set_u32), dist);
    start_run(s, space, &mut t.kv_skip);
    let base_ns = request_ns + s.min_pages * access_ns;
    let mut tally = Tally::new(batch, std::mem::take(&mut s.tally));
    let end_ns = (*stop_ns).min(slice_end).min(phase_end);
    let mut total = 0u64;
    let mut slept = None;
    let mut at_phase = false;
    while *clock < end_ns && *ops_left != Some(0) && slept.is_none() && !at_phase {
        if phase_end < u64::MAX {
            // The next request must be issued in this slice and before the hot set
            // moves (a member handed on is issued by `run_slice` as it stands);
            // otherwise `run_slice`'s loop waits or sleeps for it and takes it.
            let issue_at = if t.batch_left == 0 {
                t.next_issue_ns.max(*clock)
            } else {
                *clock
            };
            if issue_at >= end_ns {
                break;
            }
        }
        // A run of settled requests (as many as the slice, the workload's stop and
        // its `ops` allow), or the member at the run's end.
        let (n, pages) = if in_turn {
            if s.probe.dense {
                break;
            }
            let k = t.cursor;
            // No more requests than the slice (or the workload) has room for.
            let within = (end_ns - *clock) / base_ns.max(1) + 1;
            match next_in_turn(&s.member, keys, k, within) {
                Some(0) if !s.key_settled(space, k) => {
                    // Handed on as the picker gives it: the key at the cursor, then
                    // the set decision.
                    t.cursor = (k + 1) % keys;
                    let set = draw_set(&mut t.rng, set_u32);
                    t.kv_skip.pending = Some(k);
                    t.kv_skip.next = Some((k, set));
                    break;
                }
                Some(0) => {
                    s.remove(k);
                    (1, Pages::InTurn)
                }
                gap => (gap.unwrap_or(within), Pages::InTurn),
            }
        } else {
            let Some(gap) = settled_ahead(s, &mut t.kv_skip, &mut t.rng) else {
                // Dense: the operation draws the request itself.
                break;
            };
            match gap {
                0 => match member_request(s, space, &mut t.kv_skip, &mut t.rng) {
                    Next::Settled(pages) => (1, Pages::Known(pages)),
                    Next::Take(k, set) => {
                        t.kv_skip.next = Some((k, set));
                        break;
                    }
                },
                g => (g, Pages::Drawn(s.settled_draw())),
            }
        };
        let n = n.min(ops_left.unwrap_or(u64::MAX));
        // The requests' own time: a wait for a batch's slot is idle, not user time.
        let (mut busy_ns, mut made) = (0u64, 0u64);
        while made < n && *clock < end_ns {
            if t.batch_left == 0 {
                // Between batches: the pacing or think time, as run_slice's loop.
                if t.next_issue_ns > *clock {
                    if t.next_issue_ns >= slice_end || t.next_issue_ns >= *stop_ns {
                        slept = Some(SliceEnd::SleepUntil(t.next_issue_ns.min(*stop_ns)));
                        break;
                    }
                    if t.next_issue_ns >= phase_end {
                        at_phase = true;
                        break;
                    }
                    *clock = t.next_issue_ns;
                }
                t.batch_start_ns = *clock;
                t.batch_left = batch;
                if interval_ns > 0 {
                    t.next_issue_ns = t
                        .next_issue_ns
                        .max(clock.saturating_sub(interval_ns))
                        .saturating_add(interval_ns);
                }
                tally.batch_started(*clock >= stats_from_ns, *clock);
            }
            let pages = match pages {
                Pages::Drawn(d) => s.min_pages + d.one_more(&mut t.rng) as u64,
                Pages::Known(pages) => pages,
                Pages::InTurn => {
                    // The picker's key and set decision, as it gives them (a
                    // settled key's pages are dirty if it may set: either way).
                    let k = t.cursor;
                    t.cursor = (k + 1) % keys;
                    draw_set(&mut t.rng, set_u32);
                    let (first, last) = s.pages(k);
                    last - first + 1
                }
            };
            *clock += request_ns + pages * access_ns;
            busy_ns += request_ns + pages * access_ns;
            if !tally.count(pages - s.min_pages, *clock) {
                // A batch the run did not start (its latency includes requests made
                // before), or one the statistics may not count: as run_slice records
                // it.
                stats.record_ops(stats_from_ns, *clock, t.batch_start_ns, 1, value_size);
            }
            // end_of_op: a finished batch thinks.
            t.batch_left -= 1;
            if t.batch_left == 0 && think_ns > 0 {
                t.next_issue_ns = clock.saturating_add(think_ns);
            }
            made += 1;
        }
        if let (Pages::Drawn(_), Some(g)) = (pages, t.kv_skip.gap.as_mut()) {
            *g -= made;
        }
        rep.user_ns += busy_ns;
        total += made;
        t.ops += made;
        if made > 0 {
            t.unrecorded = false;
            t.last_op_ns = Some(*clock);
        }
        if let Some(left) = ops_left.as_mut() {
            *left -= made;
        }
    }
    s.tally = tally.flush(stats, (base_ns, access_ns), value_size);
    REQUESTS_SKIPPED.with(|c| c.set(c.get() + total));
    slept.map_or(Ok(total), Err)
}

/// The latencies of a run's settled requests in the batches it started, counted per
/// place in the batch and extra pages before it (a request's latency is then
/// `(place + 1) * base_ns + extra * access_ns`), into the histogram at the run's end.
struct Tally {
    batch: usize,
    counts: Vec<u64>,
    /// The batch in progress: counted here, the place of its next request and the
    /// extra pages so far.
    on: bool,
    place: usize,
    extra: usize,
    first_origin_ns: Option<u64>,
    last_end_ns: u64,
}

impl Tally {
    /// With `buffer` for the counts (all zero), kept from an earlier run.
    fn new(batch: u32, buffer: Vec<u64>) -> Tally {
        Tally {
            batch: batch as usize,
            counts: buffer,
            on: false,
            place: 0,
            extra: 0,
            first_origin_ns: None,
            last_end_ns: 0,
        }
    }

    /// A batch starts at `start_ns` with a settled request; `counted`: the
    /// statistics count it.
    fn batch_started(&mut self, counted: bool, start_ns: u64) {
        (self.on, self.place, self.extra) = (counted, 0, 0);
        if counted {
            self.first_origin_ns.get_or_insert(start_ns);
        }
    }

    /// The next settled request, with `extra` pages over the least and ending at
    /// `end_ns`; false if its batch is not counted here.
    fn count(&mut self, extra: u64, end_ns: u64) -> bool {
        if !self.on {
            return false;
        }
        let len = self.batch * (self.batch + 1);
        if self.counts.len() != len {
            self.counts = vec![0; len];
        }
        self.extra += extra as usize;
        self.counts[self.place * (self.batch + 1) + self.extra] += 1;
        self.place += 1;
        self.last_end_ns = end_ns;
        true
    }

    /// The counts into `stats`; the buffer back, zeroed.
    fn flush(
        mut self,
        stats: &mut WorkloadStats,
        (base_ns, access_ns): (u64, u64),
        bytes: u64,
    ) -> Vec<u64> {
        let row = self.batch + 1;
        for (i, n) in self.counts.iter_mut().enumerate() {
            if *n > 0 {
                let (place, extra) = ((i / row) as u64, (i % row) as u64);
                stats.record((place + 1) * base_ns + extra * access_ns, *n, *n * bytes);
                *n = 0;
            }
        }
        if let Some(first) = self.first_origin_ns {
            stats.last_op_ns = self.last_end_ns;
            stats.first_op_ns.get_or_insert(first);
        }
        self.counts
    }
}

#[cfg(test)]
mod tests {
    use super::super::skip::{DENSE_PROBE_ACCESSES, DENSE_REQUEST_PROBE_EVERY};
    use super::*;
    use crate::mm::page::pte;
    use crate::mm::SpaceKind;
    use crate::rng::task_rng;
    use crate::workload::pattern::Zipf;

    const KEYS: u64 = 1000;
    const VALUE: u64 = 2000;

    /// A kv space of KEYS values of VALUE bytes, every page present, young and
    /// dirty (so every PMD entry is young too).
    fn settled_kv() -> (crate::mm::Mm, u32) {
        let mut mm = crate::mm::Mm::new(crate::mm::Config::new(64 << 8));
        let pages = (KEYS * VALUE).div_ceil(4096);
        let si = mm.add_space(SpaceKind::Anon, "kv".into(), pages, None);
        let s = &mut mm.spaces[si as usize];
        for i in 0..pages as u32 {
            *s.pte_mut(i) = pte::present(i) | pte::YOUNG | pte::DIRTY;
            s.set_bits(i, pte::YOUNG);
        }
        (mm, si)
    }

    /// The keys whose bytes overlap page `p`, from the byte ranges themselves.
    fn keys_on(p: u64) -> Vec<u64> {
        (0..KEYS)
            .filter(|k| k * VALUE < (p + 1) * 4096 && (k + 1) * VALUE > p * 4096)
            .collect()
    }

    fn members(s: &KvSet) -> Vec<u64> {
        (0..KEYS).filter(|&k| s.has(k)).collect()
    }

    #[test]
    fn the_kernel_s_writes_make_exactly_the_keys_on_those_pages_members() {
        let (mut mm, si) = settled_kv();
        let mut slot = None;
        let mut st = KvSkip::default();
        let s = ready(&mut slot, si, (KEYS, VALUE, 1), Dist::Uniform);
        // A new set is not built: requests are taken one by one until those probed
        // show that they change nothing (every page settled here), a window of
        // DENSE_PROBE_ACCESSES probes at one request in DENSE_REQUEST_PROBE_EVERY.
        assert!(s.probe.dense);
        let space = &mut mm.spaces[si as usize];
        for i in 0..DENSE_PROBE_ACCESSES * DENSE_REQUEST_PROBE_EVERY {
            dense_request(s, space, i % KEYS);
        }
        assert!(
            !s.probe.dense,
            "built once the requests were seen to change nothing"
        );
        assert!(members(s).is_empty(), "every page settled: no member");
        // A young bit cleared (page 7), a page swapped out (page 100: its entry is
        // no longer present), a page cleaned (page 200: a set would dirty it), and a
        // page table's accessed bit cleared (pages 0..512 all under it).
        let space = &mut mm.spaces[si as usize];
        *space.pte_mut(7) &= !pte::YOUNG;
        *space.pte_mut(100) = pte::NONE;
        *space.pte_mut(200) &= !pte::DIRTY;
        let mut want: Vec<u64> = [7, 100, 200].iter().flat_map(|&p| keys_on(p)).collect();
        want.sort();
        want.dedup();
        start_run(s, space, &mut st);
        assert_eq!(members(s), want);
        assert!(!s.probe.dense, "{} of {KEYS} keys: sparse", want.len());
        // Pages 0..489 (all of them) lie under the first page table.
        assert!(space.pmd_test_and_clear_young(0));
        start_run(s, space, &mut st);
        assert_eq!(members(s), (0..KEYS).collect::<Vec<_>>());
        assert!(s.probe.dense, "every key a member: taken one by one");

        // Reads only (no sets): a clean page is settled, so page 200's keys are not
        // members of a set for gets alone.
        let (mut mm, si) = settled_kv();
        let space = &mut mm.spaces[si as usize];
        *space.pte_mut(200) &= !pte::DIRTY;
        let mut slot = None;
        let s = ready(&mut slot, si, (KEYS, VALUE, 0), Dist::Uniform);
        s.build(space);
        assert!(members(s).is_empty());
        *space.pte_mut(300) &= !pte::YOUNG;
        start_run(s, space, &mut st);
        assert_eq!(members(s), keys_on(300));
    }

    /// Requests drawn against a fixed set (the ones handed on are not made, so its
    /// members stay unsettled), with a picker giving key k chance `p_key(k)`: each
    /// request is for a member with chance the members' sum, a member handed on is
    /// each member in proportion to its chance, and a settled request's value spans
    /// two pages as often as the settled keys' chances say. Worked out from the keys'
    /// byte ranges and `p_key`, each count within 4.5 standard deviations of its
    /// expectation.
    fn requests_are_drawn_as_the_picker_draws(dist: Dist, p_key: impl Fn(u64) -> f64) {
        let (mut mm, si) = settled_kv();
        let space = &mut mm.spaces[si as usize];
        // Members: the keys on every eighth page from page 3 (unsettled: not young).
        let mut unsettled = Vec::new();
        for p in (3..(KEYS * VALUE).div_ceil(4096)).step_by(8) {
            *space.pte_mut(p as u32) &= !pte::YOUNG;
            unsettled.extend(keys_on(p));
        }
        unsettled.sort();
        unsettled.dedup();
        let two_pages = |k: u64| (k * VALUE) / 4096 != (k * VALUE + VALUE - 1) / 4096;
        let settled_keys: Vec<u64> = (0..KEYS).filter(|k| !unsettled.contains(k)).collect();
        let settled_p: f64 = settled_keys.iter().map(|&k| p_key(k)).sum();
        let settled_two: f64 = settled_keys
            .iter()
            .filter(|&&k| two_pages(k))
            .map(|&k| p_key(k))
            .sum();
        let q_two = settled_two / settled_p;
        let p_member: f64 = unsettled.iter().map(|&k| p_key(k)).sum();

        let mut slot = None;
        let mut st = KvSkip::default();
        let s = ready(&mut slot, si, (KEYS, VALUE, 1), dist);
        s.build(space);
        start_run(s, space, &mut st);
        assert_eq!(members(s), unsettled);
        let mut rng = task_rng(7, "kv");
        const N: u64 = 400_000;
        let (mut taken, mut settled, mut settled_two_n) = (0u64, 0u64, 0u64);
        let mut per_key = vec![0u64; KEYS as usize];
        let mut left = N;
        while left > 0 {
            // As `run` draws them: a gap of settled requests, then a member's.
            let gap = settled_ahead(s, &mut st, &mut rng).expect("sparse");
            let n = gap.min(left);
            let draw = s.settled_draw();
            for _ in 0..n {
                settled += 1;
                settled_two_n += draw.one_more(&mut rng) as u64;
            }
            *st.gap.as_mut().expect("drawn") -= n;
            left -= n;
            if left == 0 {
                break;
            }
            match member_request(s, space, &mut st, &mut rng) {
                Next::Take(k, _) => {
                    taken += 1;
                    per_key[k as usize] += 1;
                }
                Next::Settled(_) => unreachable!("every member is unsettled"),
            }
            left -= 1;
        }
        let within = |count: f64, n: f64, p: f64, what: &str| {
            let (mean, sd) = (n * p, (n * p * (1.0 - p)).sqrt());
            assert!(
                (count - mean).abs() <= 4.5 * sd,
                "{what}: {count} against {mean:.0} ± {sd:.0}"
            );
        };
        within(taken as f64, N as f64, p_member, "requests for members");
        within(
            settled_two_n as f64,
            settled as f64,
            q_two,
            "settled two-page values",
        );
        // Each member handed on in proportion to its chance: chi-square over the
        // members, against its mean (members - 1) and standard deviation
        // sqrt(2 (members - 1)).
        let m = unsettled.len() as f64;
        let chi2: f64 = unsettled
            .iter()
            .map(|&k| {
                let e = taken as f64 * p_key(k) / p_member;
                (per_key[k as usize] as f64 - e).powi(2) / e
            })
            .sum();
        assert!(
            chi2 <= (m - 1.0) + 4.5 * (2.0 * (m - 1.0)).sqrt(),
            "members not drawn as the picker draws: chi2 {chi2:.1} over {m} members"
        );
        assert!(settled_keys.iter().all(|&k| per_key[k as usize] == 0));
    }

    #[test]
    fn requests_are_drawn_as_uniform_keys_are() {
        requests_are_drawn_as_the_picker_draws(Dist::Uniform, |_| 1.0 / KEYS as f64);
    }

    /// Hot/cold keys (a tenth of them, from the middle and wrapping past the last key
    /// in the second case, take 90 % of the requests): a hot key's chance is 0.9 over
    /// the hot keys, a cold one's 0.1 over the rest.
    #[test]
    fn requests_are_drawn_as_hot_cold_keys_are() {
        let hot_n = KEYS / 10;
        let hot_u32 = (0.9 * (1u64 << 32) as f64) as u32;
        let h = hot_u32 as f64 / (1u64 << 32) as f64;
        for hot_lo in [KEYS / 2, KEYS - hot_n / 2] {
            let hot = |k: u64| (k + KEYS - hot_lo) % KEYS < hot_n;
            let p_key = |k: u64| {
                if hot(k) {
                    h / hot_n as f64
                } else {
                    (1.0 - h) / (KEYS - hot_n) as f64
                }
            };
            let dist = Dist::HotCold {
                hot_lo,
                hot_n,
                hot_u32,
            };
            requests_are_drawn_as_the_picker_draws(dist, p_key);
        }
    }

    /// Zipf keys (0.9, 1.2): key k's chance is its rank's (rank + 1)^-s over the
    /// harmonic sum, its rank the one whose item the sampler maps to k.
    #[test]
    fn requests_are_drawn_as_zipf_keys_are() {
        for skew in [0.9, 1.2] {
            let z = Zipf::new(KEYS, skew);
            let mut rank_of = vec![0u64; KEYS as usize];
            for r in 0..KEYS {
                rank_of[z.item_of_rank(r) as usize] = r;
            }
            let h: f64 = (1..=KEYS).map(|r| (r as f64).powf(-skew)).sum();
            let p_key = |k: u64| ((rank_of[k as usize] + 1) as f64).powf(-skew) / h;
            requests_are_drawn_as_the_picker_draws(Dist::Zipf(&z), p_key);
        }
    }
}
