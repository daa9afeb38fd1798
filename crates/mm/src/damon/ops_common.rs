//! What both operation sets share (mm/damon/ops-common.c): the hot and cold scores,
//! and PG_idle / PG_young, the two page_ext bits of idle page tracking
//! (mm/page_idle.c) that let DAMON clear an accessed bit without hiding the access
//! from reclaim.

use super::{Attrs, Quota, Region};
use crate::page::{pg, pte, Pfn};
use crate::{Mm, SpaceKind};

/// `DAMOS_MAX_SCORE`, `DAMON_MAX_SUBSCORE`, `DAMON_MAX_AGE_IN_LOG`.
pub const DAMOS_MAX_SCORE: u32 = 99;
const DAMON_MAX_SUBSCORE: u64 = 100;
const DAMON_MAX_AGE_IN_LOG: i64 = 32;

/// `damon_hot_score`: access frequency and age, weighted, in [0, 99]. An idle region
/// grows colder with age, an accessed one hotter.
pub fn damon_hot_score(attrs: &Attrs, r: &Region, quota: &Quota) -> u32 {
    let freq_subscore = r.nr_accesses as u64 * DAMON_MAX_SUBSCORE / attrs.max_nr_accesses() as u64;
    let mut age_in_sec = r.age as u64 * attrs.aggr_us / 1_000_000;
    let mut age_in_log = 0i64;
    while age_in_log < DAMON_MAX_AGE_IN_LOG && age_in_sec > 0 {
        age_in_log += 1;
        age_in_sec >>= 1;
    }
    if freq_subscore == 0 {
        age_in_log = -age_in_log;
    }
    let age_subscore = ((age_in_log + DAMON_MAX_AGE_IN_LOG) as u64) * DAMON_MAX_SUBSCORE
        / DAMON_MAX_AGE_IN_LOG as u64
        / 2;
    let (fw, aw) = (quota.weight_nr_accesses, quota.weight_age);
    let weighted = fw * freq_subscore + aw * age_subscore;
    // No weights: every region scores 0 (no prioritisation).
    let hotness = weighted.checked_div(fw + aw).unwrap_or(weighted);
    (hotness * DAMOS_MAX_SCORE as u64 / DAMON_MAX_SUBSCORE) as u32
}

/// `damon_cold_score`.
pub fn damon_cold_score(attrs: &Attrs, r: &Region, quota: &Quota) -> u32 {
    DAMOS_MAX_SCORE - damon_hot_score(attrs, r, quota)
}

/// PG_idle and PG_young per frame: two bitmaps, zeroed allocations, so the host
/// commits only the parts whose pages DAMON sampled.
#[derive(Debug, Clone)]
pub struct PageIdle {
    idle: Vec<u64>,
    young: Vec<u64>,
}

impl PageIdle {
    pub fn new(nr_frames: usize) -> PageIdle {
        let words = nr_frames.div_ceil(64);
        PageIdle {
            idle: vec![0; words],
            young: vec![0; words],
        }
    }

    fn bit(pfn: Pfn) -> (usize, u64) {
        ((pfn / 64) as usize, 1 << (pfn % 64))
    }

    pub fn test_idle(&self, pfn: Pfn) -> bool {
        let (w, b) = Self::bit(pfn);
        self.idle[w] & b != 0
    }

    pub fn set_idle(&mut self, pfn: Pfn) {
        let (w, b) = Self::bit(pfn);
        self.idle[w] |= b;
    }

    pub fn clear_idle(&mut self, pfn: Pfn) {
        let (w, b) = Self::bit(pfn);
        self.idle[w] &= !b;
    }

    pub fn set_young(&mut self, pfn: Pfn) {
        let (w, b) = Self::bit(pfn);
        self.young[w] |= b;
    }

    pub fn test_clear_young(&mut self, pfn: Pfn) -> bool {
        let (w, b) = Self::bit(pfn);
        let was = self.young[w] & b != 0;
        self.young[w] &= !b;
        was
    }
}

impl Mm {
    /// `folio_clear_idle`: the page was used (mark_accessed, or reclaim found a
    /// young PTE).
    #[inline]
    pub fn folio_clear_idle(&mut self, pfn: Pfn) {
        if let Some(pi) = self.damon.page_idle.as_mut() {
            pi.clear_idle(pfn);
        }
    }

    /// `folio_test_clear_young`: an access DAMON took the PTE's bit of, kept for
    /// reclaim.
    #[inline]
    pub fn folio_test_clear_young(&mut self, pfn: Pfn) -> bool {
        self.damon
            .page_idle
            .as_mut()
            .is_some_and(|pi| pi.test_clear_young(pfn))
    }

    /// The PTE mapping `pfn`, if one does: (space, index).
    pub(super) fn damon_pte_of(&self, pfn: Pfn) -> Option<(u32, u32)> {
        let f = &self.frames[pfn as usize];
        if !f.test(pg::LRU) {
            return None;
        }
        let s = &self.spaces[f.mapping as usize];
        let mapped = match s.kind {
            SpaceKind::Anon => {
                let e = s.pte(f.index);
                !s.dead && pte::is_present(e) && pte::pfn(e) == pfn
            }
            SpaceKind::File => f.test(pg::MAPPED),
        };
        mapped.then_some((f.mapping, f.index))
    }

    /// `damon_ptep_mkold`: clear the PTE's accessed bit, remembering it in PG_young,
    /// and set PG_idle.
    pub(super) fn damon_ptep_mkold(&mut self, pfn: Pfn, space: u32, idx: u32) {
        let e = self.spaces[space as usize].pte_mut(idx);
        let young = *e & pte::YOUNG != 0;
        *e &= !pte::YOUNG;
        let pi = self.damon.page_idle.as_mut().expect("kdamond running");
        if young {
            pi.set_young(pfn);
        }
        pi.set_idle(pfn);
    }

    /// `damon_folio_young` at a PTE: accessed since `damon_ptep_mkold` if the bit is
    /// set again or something cleared PG_idle.
    pub(super) fn damon_pte_young(&self, pfn: Pfn, space: u32, idx: u32) -> bool {
        let pi = self.damon.page_idle.as_ref().expect("kdamond running");
        self.spaces[space as usize].pte(idx) & pte::YOUNG != 0 || !pi.test_idle(pfn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attrs() -> Attrs {
        Attrs {
            sample_us: 5000,
            aggr_us: 100_000,
            ops_update_us: 0,
            min_nr_regions: 10,
            max_nr_regions: 1000,
        }
    }

    fn quota(w_nr: u64, w_age: u64) -> Quota {
        Quota {
            ms: 10,
            sz: 0,
            reset_interval_ms: 1000,
            weight_sz: 0,
            weight_nr_accesses: w_nr,
            weight_age: w_age,
            goals: Vec::new(),
        }
    }

    fn region(nr_accesses: u32, age: u32) -> Region {
        Region {
            start: 0,
            end: 4096,
            sampling_addr: 0,
            nr_accesses,
            last_nr_accesses: 0,
            age,
        }
    }

    #[test]
    fn cold_score_by_hand() {
        // kernel-reference §6.7, DAMON_RECLAIM's weights (0, 1), 100 ms aggregation.
        // Idle 120 s = 1200 intervals: log 7 (120 > 64), negated: (−7 + 32) × 100 / 32
        // / 2 = 39; × 99 / 100 = 38; cold = 61.
        let (a, q) = (attrs(), quota(0, 1));
        assert_eq!(damon_cold_score(&a, &region(0, 1200), &q), 61);
        // Idle 1 h = 36000 intervals: 3600 s, log 12: (20 × 100 / 32) / 2 = 31 → 30 → 69.
        assert_eq!(damon_cold_score(&a, &region(0, 36_000), &q), 69);
        // Accessed in every sample (20 of 20) for 10 s: log 4, positive: 36 × 100 / 32
        // / 2 = 56 → 55 → cold 44.
        assert_eq!(damon_cold_score(&a, &region(20, 100), &q), 44);
        // Frequency only (1, 0): 10 of 20 samples → 50 → 49 → cold 50.
        assert_eq!(damon_cold_score(&a, &region(10, 0), &quota(1, 0)), 50);
        // No weights: hotness 0 for everyone, so no prioritisation (all 99).
        assert_eq!(damon_cold_score(&a, &region(0, 36_000), &quota(0, 0)), 99);
        assert_eq!(damon_cold_score(&a, &region(20, 0), &quota(0, 0)), 99);
    }
}
