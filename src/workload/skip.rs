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

use super::pattern::{below, Sampler, Zipf};

/// Whether an access to a page in this state changes nothing: present, young, its
/// PMD entry young, and dirty unless the loop never writes.
#[inline(always)]
fn settled(e: Pte, pmd_young: bool, write_u32: u32) -> bool {
    pte::is_present(e)
        && e & pte::YOUNG != 0
        && pmd_young
        && (write_u32 == 0 || e & pte::DIRTY != 0)
}

/// Failures before the first success of trials that succeed with probability `p`
/// (inversion of the geometric distribution); `u64::MAX` for p = 0.
fn geometric(rng: &mut Pcg64Mcg, p: f64) -> u64 {
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
/// changed something, over a call of at least [`DENSE_PROBE_ACCESSES`].
const SPARSE_RATIO: u64 = 64;
const DENSE_PROBE_ACCESSES: u64 = 256;

/// What a thread's set was built for: the sampler and its range, and the write
/// probability (which decides whether clean pages count as settled).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Key {
    space: u32,
    base: u64,
    n: u64,
    write_u32: u32,
    /// 0 uniform; a zipf's identity otherwise.
    zipf: [u64; 3],
}

/// A thread's skipping state: the set of its random sampler, and the page tables its
/// sequential sweep saw settled (kept apart, so a program that alternates the two
/// rebuilds neither).
#[derive(Debug, Default)]
pub struct SkipState {
    set: Option<Box<SkipSet>>,
    seq: Option<Box<SeqSettled>>,
}

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

/// A thread's pages that an access may change, for one sampler over one range.
#[derive(Debug)]
pub struct SkipSet {
    key: Key,
    /// The space's change log position this set has taken in.
    log_pos: u64,
    /// Membership, one bit per offset in the range.
    member: Vec<u64>,
    /// Taking accesses one by one; the set is stale until rebuilt.
    dense: bool,
    picks: Picks,
}

#[derive(Debug)]
enum Picks {
    /// Uniform: the members in a list (an offset's place in `place`), so one can be
    /// drawn uniformly and removed in O(1).
    Uniform { list: Vec<u32>, place: Vec<u32> },
    /// Zipf: each member's rank weight in a Fenwick tree over ranks, so one can be
    /// drawn in proportion to its weight in O(log n).
    Zipf(ZipfWeights),
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
            Picks::Uniform { list, place } => {
                place[o as usize] = list.len() as u32;
                list.push(o as u32);
            }
            Picks::Zipf(z) => z.add(o),
        }
    }

    fn remove(&mut self, o: u64) {
        if !self.has(o) {
            return;
        }
        self.member[(o / 64) as usize] &= !(1 << (o % 64));
        match &mut self.picks {
            Picks::Uniform { list, place } => {
                let i = place[o as usize] as usize;
                let last = *list.last().expect("a member is listed");
                list[i] = last;
                place[last as usize] = i as u32;
                list.pop();
            }
            Picks::Zipf(z) => z.remove(o),
        }
    }

    fn is_empty(&self) -> bool {
        match &self.picks {
            Picks::Uniform { list, .. } => list.is_empty(),
            Picks::Zipf(z) => z.fen.total() == 0,
        }
    }

    /// The chance that one access picks a member.
    fn p_member(&self) -> f64 {
        match &self.picks {
            Picks::Uniform { list, .. } => list.len() as f64 / self.key.n as f64,
            Picks::Zipf(z) => z.fen.total() as f64 / z.all_weight as f64,
        }
    }

    /// A member, drawn as the sampler would draw among the members.
    fn pick(&self, rng: &mut Pcg64Mcg) -> u64 {
        match &self.picks {
            Picks::Uniform { list, .. } => {
                list[below(rng.next_u64(), list.len() as u64) as usize] as u64
            }
            Picks::Zipf(z) => {
                let r = z.fen.find(below(rng.next_u64(), z.fen.total()));
                z.zipf_item(r)
            }
        }
    }

    /// Every unsettled page of the range, read from the table: O(pages), with the
    /// Fenwick tree built in place rather than page by page.
    fn rebuild(&mut self, space: &Space) {
        let (base, n, wr) = (self.key.base, self.key.n, self.key.write_u32);
        let unsettled: Vec<u64> = (0..n)
            .filter(|&o| {
                let idx = (base + o) as u32;
                !settled(space.pte(idx), space.pmd_young(idx), wr)
            })
            .collect();
        self.member.iter_mut().for_each(|w| *w = 0);
        for &o in &unsettled {
            self.member[(o / 64) as usize] |= 1 << (o % 64);
        }
        match &mut self.picks {
            Picks::Uniform { list, place } => {
                list.clear();
                for &o in &unsettled {
                    place[o as usize] = list.len() as u32;
                    list.push(o as u32);
                }
            }
            Picks::Zipf(z) => {
                let mut weights = vec![0u64; n as usize];
                for &o in &unsettled {
                    let r = z.rank(o);
                    weights[r as usize] = z.weight(r);
                }
                z.fen = Fenwick::from_weights(&weights);
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
/// fixed point so that the weights of all n ranks sum to at most 2^62 (each at least
/// 1: a relative error below 2^-20 for any rank with probability above 2^-42).
#[derive(Debug)]
struct ZipfWeights {
    fen: Fenwick,
    all_weight: u64,
    scale: f64,
    s: f64,
    n: u64,
    stride: u64,
    inv_stride: u64,
}

impl ZipfWeights {
    fn new(z: &Zipf) -> ZipfWeights {
        let (n, s, stride) = z.skip_params();
        let raw_total: f64 = (0..n).map(|r| ((r + 1) as f64).powf(-s)).sum();
        let scale = (1u64 << 62) as f64 / raw_total;
        let mut w = ZipfWeights {
            // Filled by the set's first rebuild.
            fen: Fenwick::from_weights(&[]),
            all_weight: 0,
            scale,
            s,
            n,
            stride,
            inv_stride: inverse_mod(stride, n),
        };
        w.all_weight = (0..n).map(|r| w.weight(r)).sum();
        w
    }

    fn weight(&self, r: u64) -> u64 {
        ((((r + 1) as f64).powf(-self.s) * self.scale) as u64).max(1)
    }

    fn rank(&self, item: u64) -> u64 {
        (item as u128 * self.inv_stride as u128 % self.n as u128) as u64
    }

    fn zipf_item(&self, r: u64) -> u64 {
        (r as u128 * self.stride as u128 % self.n as u128) as u64
    }

    fn add(&mut self, item: u64) {
        let r = self.rank(item);
        self.fen.add(r as usize, self.weight(r) as i64);
    }

    fn remove(&mut self, item: u64) {
        let r = self.rank(item);
        self.fen.add(r as usize, -(self.weight(r) as i64));
    }
}

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

/// A Fenwick (binary indexed) tree of u64 weights: point updates, the total, and the
/// index where a running sum passes a value.
#[derive(Debug)]
struct Fenwick {
    tree: Vec<u64>,
    total: u64,
}

impl Fenwick {
    /// The tree of `w` in O(n): each node adds itself into its parent.
    fn from_weights(w: &[u64]) -> Fenwick {
        let mut tree = vec![0u64; w.len() + 1];
        tree[1..].copy_from_slice(w);
        for i in 1..tree.len() {
            let parent = i + (i & i.wrapping_neg());
            if parent < tree.len() {
                tree[parent] += tree[i];
            }
        }
        Fenwick {
            tree,
            total: w.iter().sum(),
        }
    }

    fn total(&self) -> u64 {
        self.total
    }

    fn add(&mut self, i: usize, delta: i64) {
        self.total = self.total.wrapping_add_signed(delta);
        let mut k = i + 1;
        while k < self.tree.len() {
            self.tree[k] = self.tree[k].wrapping_add_signed(delta);
            k += k & k.wrapping_neg();
        }
    }

    /// The smallest i whose prefix sum w[0..=i] exceeds `u` (u < total).
    fn find(&self, mut u: u64) -> u64 {
        let n = self.tree.len() - 1;
        let mut pos = 0usize;
        let mut step = n.next_power_of_two();
        while step > 0 {
            let next = pos + step;
            if next <= n && self.tree[next] <= u {
                pos = next;
                u -= self.tree[next];
            }
            step >>= 1;
        }
        pos as u64
    }
}

/// The skipping loop for `sampler` over `[base, base + n)` of `space`: the same
/// contract as `hit_loop` (up to `limit` accesses, stopping at the first one to a page
/// that is not present, which it returns with its write), for uniform and zipf
/// pickers and sequential sweeps. None for a sampler it does not handle.
#[allow(clippy::too_many_arguments)]
pub fn skip_hit_loop(
    space: &mut Space,
    limit: u64,
    write_u32: u32,
    rng: &mut Pcg64Mcg,
    cursor: &mut u64,
    state: &mut SkipState,
    sampler: &Sampler,
    space_id: u32,
    base: u64,
) -> Option<(u64, Option<(u32, bool)>)> {
    let (n, zipf) = match sampler {
        Sampler::Sequential { n } => {
            let per_pmd = PTRS_PER_PTE as u64;
            // Only whether the sweep writes decides what is settled.
            let key = Key {
                space: space_id,
                base,
                n: *n,
                write_u32: write_u32.min(1),
                zipf: [0; 3],
            };
            space.hw_table_gens_mut()?;
            if state.seq.as_ref().is_none_or(|s| s.key != key) {
                let nr_pmds = (base + n).div_ceil(per_pmd) - base / per_pmd;
                state.seq = Some(Box::new(SeqSettled {
                    key,
                    seen: vec![u64::MAX; nr_pmds as usize],
                }));
            }
            let seq = state.seq.as_mut().expect("made above");
            return Some(sequential(
                space, limit, write_u32, rng, cursor, seq, *n, base,
            ));
        }
        Sampler::Uniform { n } => (*n, None),
        Sampler::Zipf(z) => (z.skip_params().0, Some(z)),
        Sampler::HotCold { .. } => return None,
    };
    let key = Key {
        space: space_id,
        base,
        n,
        write_u32,
        zipf: zipf.map_or([0; 3], |z| z.identity()),
    };
    let set = &mut state.set;
    if set.as_ref().is_none_or(|s| s.key != key) {
        let picks = match zipf {
            None => Picks::Uniform {
                list: Vec::new(),
                place: vec![0; n as usize],
            },
            Some(z) => Picks::Zipf(ZipfWeights::new(z)),
        };
        let mut s = SkipSet {
            key,
            log_pos: 0,
            member: vec![0; n.div_ceil(64) as usize],
            dense: false,
            picks,
        };
        s.rebuild(space);
        s.log_pos = space.watch_changes();
        *set = Some(Box::new(s));
    }
    let s = set.as_mut().expect("built above");
    if !s.dense {
        s.catch_up(space);
        s.dense = s.p_member() > DENSE_P_MEMBER;
    }
    let (entries, pmd_young) = space.hw_table_mut();
    let wr = write_u32;
    let access = |o: u64, rng: &mut Pcg64Mcg, entries: &mut [Pte], pmd_young: &mut [bool]| {
        let vpn = (base + o) as usize;
        let write = wr == u32::MAX || (wr != 0 && (rng.next_u64() as u32) < wr);
        let e = entries[vpn];
        if !pte::is_present(e) {
            return Err((vpn as u32, write));
        }
        let new = e | pte::YOUNG | if write { pte::DIRTY } else { 0 };
        entries[vpn] = new;
        let pmd = &mut pmd_young[vpn / PTRS_PER_PTE as usize];
        let changed = new != e || !*pmd;
        *pmd = true;
        Ok((new, changed))
    };
    let mut hits = 0u64;
    if s.dense {
        // Most accesses matter (a working set being faulted back in): each in turn,
        // drawn as the per-access loop draws them, and no set kept up to date; it is
        // rebuilt once accesses that change something turn rare again.
        let mut changed = 0u64;
        while hits < limit {
            let o = match zipf {
                None => below(rng.next_u64(), n),
                Some(z) => z.sample(rng),
            };
            match access(o, rng, entries, pmd_young) {
                Err(miss) => return Some((hits, Some(miss))),
                Ok((_, c)) => changed += c as u64,
            }
            hits += 1;
        }
        if hits >= DENSE_PROBE_ACCESSES && changed * SPARSE_RATIO < hits {
            s.dense = false;
            s.rebuild(space);
            s.log_pos = space.watch_changes();
        }
        return Some((hits, None));
    }
    while hits < limit {
        if s.is_empty() {
            return Some((limit, None));
        }
        let gap = geometric(rng, s.p_member());
        if gap >= limit - hits {
            return Some((limit, None));
        }
        hits += gap;
        let o = s.pick(rng);
        match access(o, rng, entries, pmd_young) {
            Err(miss) => return Some((hits, Some(miss))),
            Ok((e, _)) => {
                if settled(e, true, wr) {
                    s.remove(o);
                }
            }
        }
        hits += 1;
    }
    Some((hits, None))
}

/// Sequential sweeps: runs of settled pages are passed over without drawing a write,
/// eight entries to a test, and page tables `seq` knows settled without a look.
#[allow(clippy::too_many_arguments)]
fn sequential(
    space: &mut Space,
    limit: u64,
    write_u32: u32,
    rng: &mut Pcg64Mcg,
    cursor: &mut u64,
    seq: &mut SeqSettled,
    n: u64,
    base: u64,
) -> (u64, Option<(u32, bool)>) {
    let (entries, pmd_young, pmd_gen) = space
        .hw_table_gens_mut()
        .expect("the caller skips trapping spaces");
    let dirty = if write_u32 == 0 { 0 } else { pte::DIRTY };
    let (mask, want) = (
        pte::TYPE_MASK | pte::YOUNG | dirty,
        pte::PRESENT | pte::YOUNG | dirty,
    );
    let per_pmd = PTRS_PER_PTE as u64;
    let first_pmd = base / per_pmd;
    let mut hits = 0u64;
    while hits < limit {
        let o = *cursor;
        let vpn = base + o;
        let pmd = (vpn / per_pmd) as usize;
        let seen = &mut seq.seen[pmd - first_pmd as usize];
        // Up to the end of this page table, the range or the limit.
        let to_end = (per_pmd - vpn % per_pmd).min(n - o);
        let len = to_end.min(limit - hits);
        if *seen == pmd_gen[pmd] {
            hits += len;
            *cursor = if o + len >= n { 0 } else { o + len };
            continue;
        }
        if pmd_young[pmd] {
            let run = settled_run(&entries[vpn as usize..(vpn + len) as usize], mask, want);
            hits += run;
            *cursor = if o + run >= n { 0 } else { o + run };
            if run == len {
                // Every entry of the table in the range seen settled: from its start
                // (or the range's) to its end (or the range's).
                let from_start = vpn.is_multiple_of(per_pmd) || o == 0;
                if from_start && len == to_end {
                    *seen = pmd_gen[pmd];
                }
                continue;
            }
        }
        let o = *cursor;
        *cursor = if o + 1 >= n { 0 } else { o + 1 };
        let vpn = (base + o) as usize;
        let write =
            write_u32 == u32::MAX || (write_u32 != 0 && (rng.next_u64() as u32) < write_u32);
        let e = entries[vpn];
        if !pte::is_present(e) {
            return (hits, Some((vpn as u32, write)));
        }
        entries[vpn] = e | pte::YOUNG | if write { pte::DIRTY } else { 0 };
        crate::mm::mark_pmd_young(pmd_young, vpn as u32);
        hits += 1;
    }
    (hits, None)
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

    /// The chance that `limit` accesses by `sampler` touch `page` at least once,
    /// worked out from the sampler's distribution: 1 - (1 - p)^limit.
    fn p_touched(p_page: f64, limit: u64) -> f64 {
        1.0 - (1.0 - p_page).powi(limit as i32)
    }

    /// Pages made old (as DAMON's mkold does) come back young as often as the
    /// sampler's distribution says, whichever pages the skipping loop passes over:
    /// the frequency over many rounds against the exact chance, within 5 sigma.
    fn old_pages_come_back_young(sampler: Sampler, p_page: impl Fn(u64) -> f64, write_u32: u32) {
        let (mut mm, si) = settled_space(N);
        let mut rng = task_rng(3, "skip");
        let (mut cursor, mut set) = (0u64, SkipState::default());
        let watched = [0u64, 1, 7, 100, 311, 511];
        let (rounds, limit) = (20_000u64, 300u64);
        let mut young = [0u64; 6];
        let mut dense_rounds = 0;
        for round in 0..rounds {
            for &o in &watched {
                *mm.spaces[si as usize].pte_mut(o as u32) &= !pte::YOUNG;
            }
            // Now and then a burst of old pages (a quarter of the range), so the loop
            // goes over to taking accesses one by one and, once they settle, back.
            if round % 100 < 3 {
                for o in (0..N as u32).filter(|o| o % 4 == 2) {
                    *mm.spaces[si as usize].pte_mut(o) &= !pte::YOUNG;
                }
            }
            let s = &mut mm.spaces[si as usize];
            let (hits, miss) = skip_hit_loop(
                s,
                limit,
                write_u32,
                &mut rng,
                &mut cursor,
                &mut set,
                &sampler,
                si,
                0,
            )
            .unwrap();
            assert_eq!((hits, miss), (limit, None), "every page is present");
            dense_rounds += set.set.as_ref().unwrap().dense as u64;
            for (k, &o) in watched.iter().enumerate() {
                young[k] += (mm.spaces[si as usize].pte(o as u32) & pte::YOUNG != 0) as u64;
            }
        }
        assert!(
            dense_rounds > rounds / 100 && dense_rounds < rounds / 2,
            "both ways of taking accesses used: {dense_rounds} rounds of {rounds} dense"
        );
        for (k, &o) in watched.iter().enumerate() {
            let want = p_touched(p_page(o), limit);
            let got = young[k] as f64 / rounds as f64;
            let sigma = (want * (1.0 - want) / rounds as f64).sqrt().max(1e-4);
            assert!(
                (got - want).abs() < 5.0 * sigma,
                "page {o}: young after {got:.4} of rounds, want {want:.4}"
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
            let (mut mm, si) = settled_space(PAGES);
            {
                let s = &mut mm.spaces[si as usize];
                for i in (0..PAGES as u32).filter(|i| i % 37 == 5) {
                    *s.pte_mut(i) = pte::NONE;
                }
                for i in (0..PAGES as u32).filter(|i| i % 29 == 3) {
                    *s.pte_mut(i) &= !pte::YOUNG;
                }
                for i in (0..PAGES as u32).filter(|i| i % 23 == 7) {
                    *s.pte_mut(i) &= !pte::DIRTY;
                }
                // The middle page table's PMD entry old.
                s.pmd_test_and_clear_young(1);
            }
            let mut exact = mm.spaces[si as usize].clone();
            let (base, n) = (300u64, 900u64);
            let sampler = Sampler::Sequential { n };
            let (mut ra, mut rb) = (task_rng(1, "a"), task_rng(1, "a"));
            let (mut ca, mut cb, mut set) = (0u64, 0u64, SkipState::default());
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
                    &mut set,
                    &sampler,
                    si,
                    base,
                )
                .unwrap();
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

    #[test]
    fn fenwick_finds_by_weight_and_inverse_is_inverse() {
        let mut f = Fenwick::from_weights(&[0; 10]);
        for (i, w) in [(0, 3i64), (4, 5), (9, 2)] {
            f.add(i, w);
        }
        let found: Vec<u64> = (0..10).map(|u| f.find(u)).collect();
        assert_eq!(found, [0, 0, 0, 4, 4, 4, 4, 4, 9, 9]);
        f.add(4, -5);
        assert_eq!((f.total(), f.find(3)), (5, 9));
        let w: Vec<u64> = (0..37u64).map(|i| i * i % 11).collect();
        let mut g = Fenwick::from_weights(&vec![0; w.len()]);
        for (i, &x) in w.iter().enumerate() {
            g.add(i, x as i64);
        }
        let h = Fenwick::from_weights(&w);
        assert_eq!((&g.tree, g.total), (&h.tree, h.total));
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
