//! Refault detection with shadow entries (mm/workingset.c, ~v6.6-6.13;
//! kernel-reference §2.13).
//!
//! Evicting a page leaves a shadow entry where the page was (the file's page cache
//! slot, or the swap slot for anon) recording the lruvec's non-resident clock. When the
//! page is faulted back in, the clock's advance since then, the refault distance, is
//! the number of slots the page would have needed on top of memory to have stayed
//! resident; if the current workingset is at least that big, the page is activated.

use super::page::{lru, pg, Pfn};
use super::Mm;
use crate::vm_event_item::Ev;

/// Shadow layout in the 60-bit payload, as `pack_shadow` packs it: [memcg id: 16]
/// [node: 4][workingset: 1][eviction: 39] (NODES_SHIFT 4: the 16 nodes modelled).
pub const EVICTION_BITS: u32 = 39;
const EVICTION_MASK: u64 = (1 << EVICTION_BITS) - 1;
const WORKINGSET_SHIFT: u32 = EVICTION_BITS;
const NODE_SHIFT: u32 = EVICTION_BITS + 1;
const NODES_SHIFT: u32 = 4;
const MEMCG_SHIFT: u32 = NODE_SHIFT + NODES_SHIFT;

/// Who evicted a page, as its shadow says: the memcg and node whose lruvec's clock
/// stamped it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShadowOwner {
    pub memcg: u16,
    pub nid: u8,
}

impl ShadowOwner {
    fn bits(self) -> u64 {
        debug_assert!((self.nid as u32) < 1 << NODES_SHIFT);
        ((self.memcg as u64) << MEMCG_SHIFT) | ((self.nid as u64) << NODE_SHIFT)
    }

    fn of(shadow: u64) -> ShadowOwner {
        ShadowOwner {
            memcg: (shadow >> MEMCG_SHIFT) as u16,
            nid: ((shadow >> NODE_SHIFT) & ((1 << NODES_SHIFT) - 1)) as u8,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Workingset {
    /// `bucket_order`: timestamps are stored in buckets of 2^order pages so that the
    /// eviction bits can span all of memory (0 unless memory exceeds 2^39 pages).
    pub bucket_order: u32,
}

impl Workingset {
    /// `workingset_init`: enough timestamp bits for all of memory.
    pub fn new(total_pages: u64) -> Workingset {
        let max_order = 64 - total_pages.saturating_sub(1).leading_zeros();
        Workingset {
            bucket_order: max_order.saturating_sub(EVICTION_BITS),
        }
    }

    /// `pack_shadow`.
    pub fn pack(&self, owner: ShadowOwner, eviction: u64, workingset: bool) -> u64 {
        let e = (eviction >> self.bucket_order) & EVICTION_MASK;
        owner.bits() | ((workingset as u64) << WORKINGSET_SHIFT) | e
    }

    /// `pack_shadow` of an MGLRU token (no bucket shift: the token is a generation
    /// number and tier, not a clock).
    pub fn pack_token(&self, owner: ShadowOwner, token: u64, workingset: bool) -> u64 {
        owner.bits() | ((workingset as u64) << WORKINGSET_SHIFT) | (token & EVICTION_MASK)
    }

    /// The MGLRU token of a shadow: (owner, token, workingset bit).
    pub fn unpack_token(&self, shadow: u64) -> (ShadowOwner, u64, bool) {
        (
            ShadowOwner::of(shadow),
            shadow & EVICTION_MASK,
            (shadow >> WORKINGSET_SHIFT) & 1 == 1,
        )
    }

    /// `unpack_shadow`: (owner, eviction timestamp, workingset bit).
    pub fn unpack(&self, shadow: u64) -> (ShadowOwner, u64, bool) {
        let e = (shadow & EVICTION_MASK) << self.bucket_order;
        let ws = (shadow >> WORKINGSET_SHIFT) & 1 == 1;
        (ShadowOwner::of(shadow), e, ws)
    }

    /// The refault distance: how far the clock advanced since eviction, masked to the
    /// timestamp width as the kernel does (`& EVICTION_MASK`; the clock may wrap).
    pub fn refault_distance(&self, now_age: u64, eviction: u64) -> u64 {
        now_age.wrapping_sub(eviction) & EVICTION_MASK
    }
}

impl Mm {
    /// `workingset_age_nonresident`: tick the clock (of lruvec `lv` and, with memcg,
    /// its ancestors' on the same node).
    pub fn workingset_age_nonresident(&mut self, lv: usize, nr_pages: u64) {
        let mut m = Some(lv);
        while let Some(c) = m {
            self.lruvecs[c].nonresident_age += nr_pages;
            m = self.parent_lruvec(c);
        }
    }

    /// The lruvec a shadow's owner names, if it still exists.
    pub fn shadow_lruvec(&self, owner: ShadowOwner) -> Option<usize> {
        let (memcg, nid) = (owner.memcg as usize, owner.nid as usize);
        (memcg < self.memcg.cgs.len() && nid < self.nr_nodes())
            .then(|| self.mem_cgroup_lruvec(memcg, nid))
    }

    /// One event of a workingset counter pair, the anon or the file one
    /// (`WORKINGSET_*_BASE + type`).
    pub(super) fn count_memcg_type(&mut self, memcg: usize, file: bool, anon: Ev, file_ev: Ev) {
        self.count_memcg(memcg, if file { file_ev } else { anon }, 1);
    }

    /// `workingset_activation`: an activation ages the clock.
    pub fn workingset_activation(&mut self, pfn: Pfn) {
        let lv = self.folio_lruvec(pfn);
        self.workingset_age_nonresident(lv, 1);
    }

    /// `workingset_eviction`: the shadow entry for a page being reclaimed on behalf of
    /// `target_memcg`: the clock of that memcg's lruvec on the page's node. Reads the
    /// clock, then ticks it.
    pub fn workingset_eviction(&mut self, pfn: Pfn, target_memcg: usize) -> u64 {
        if self.lru_gen_enabled() {
            return self.lru_gen_eviction(pfn);
        }
        let nid = self.pfn_to_nid(pfn);
        let lv = self.mem_cgroup_lruvec(target_memcg, nid);
        let eviction = self.lruvecs[lv].nonresident_age;
        self.workingset_age_nonresident(lv, 1);
        let ws = self.frames[pfn as usize].test(pg::WORKINGSET);
        let owner = ShadowOwner {
            memcg: target_memcg as u16,
            nid: nid as u8,
        };
        self.workingset.pack(owner, eviction, ws)
    }

    /// `workingset_refault`: the new page `pfn` replaces an evicted one whose shadow was
    /// `shadow`. Activates it if the refault distance fits in the workingset.
    pub fn workingset_refault(&mut self, pfn: Pfn, shadow: u64) {
        if self.lru_gen_enabled() {
            self.lru_gen_refault(pfn, shadow);
            return;
        }
        let file = self.frames[pfn as usize].is_file_lru();
        let memcg = self.frames[pfn as usize].memcg as usize;
        let lv = self.folio_lruvec(pfn);
        let t = file as usize;
        self.count_memcg_type(
            memcg,
            file,
            Ev::WorkingsetRefaultAnon,
            Ev::WorkingsetRefaultFile,
        );
        let (owner, eviction, workingset) = self.workingset.unpack(shadow);
        let Some(ev_lv) = self.shadow_lruvec(owner) else {
            return; // the memcg is gone: not recent
        };
        let distance = self
            .workingset
            .refault_distance(self.lruvecs[ev_lv].nonresident_age, eviction);
        // `workingset_test_recent`: compare with what could have been evicted instead.
        self.mem_cgroup_flush_stats_ratelimited(owner.memcg as usize);
        let size = |l: usize| self.lruvec_page_state(ev_lv, l);
        let mut ws_size = size(lru::ACTIVE_FILE);
        if !file {
            ws_size += size(lru::INACTIVE_FILE);
        }
        if self.can_reclaim_anon() {
            ws_size += size(lru::ACTIVE_ANON);
            if file {
                ws_size += size(lru::INACTIVE_ANON);
            }
        }
        if distance > ws_size {
            return;
        }
        self.frames[pfn as usize].set(pg::ACTIVE);
        self.workingset_age_nonresident(lv, 1);
        let mut m = Some(lv);
        while let Some(c) = m {
            let v = &mut self.lruvecs[c];
            v.workingset_activate[t] += 1;
            v.stats_updates += 1;
            m = self.parent_lruvec(c);
        }
        self.count_memcg_type(
            memcg,
            file,
            Ev::WorkingsetActivateAnon,
            Ev::WorkingsetActivateFile,
        );
        if workingset {
            self.frames[pfn as usize].set(pg::WORKINGSET);
            // lru_note_cost_refault: a refault of the working set costs one page of I/O.
            self.lru_note_cost(lv, file, 1, 0);
            self.count_memcg_type(
                memcg,
                file,
                Ev::WorkingsetRestoreAnon,
                Ev::WorkingsetRestoreFile,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Mm;

    const ROOT: ShadowOwner = ShadowOwner { memcg: 0, nid: 0 };

    #[test]
    fn pack_round_trip() {
        let w = Workingset::new(1 << 20);
        assert_eq!(w.bucket_order, 0);
        let owner = ShadowOwner { memcg: 7, nid: 15 };
        let s = w.pack(owner, 123_456, true);
        assert_eq!(w.unpack(s), (owner, 123_456, true));
        let owner = ShadowOwner {
            memcg: u16::MAX,
            nid: 3,
        };
        let s = w.pack(owner, (1 << 39) - 1, false);
        assert_eq!(w.unpack(s), (owner, (1 << 39) - 1, false));
        assert!(s < 1 << 60, "fits the page-table payload");
    }

    #[test]
    fn refault_distance_by_hand() {
        // A page evicted when the clock read 1000; since then 300 evictions and 200
        // activations ticked the clock to 1500: distance 500. With an active file list of
        // 600 pages (and no swap) 500 <= 600: the refault is "recent" and activates.
        let w = Workingset::new(1 << 20);
        let (_, ev, _) = w.unpack(w.pack(ROOT, 1000, false));
        assert_eq!(w.refault_distance(1500, ev), 500);
        // Wrap-around: eviction near the top of the 39-bit clock, refault after a wrap.
        let top = (1u64 << 39) - 10;
        let (_, ev, _) = w.unpack(w.pack(ROOT, top, false));
        assert_eq!(w.refault_distance((1u64 << 39) + 5, ev), 15);
    }

    /// A 64 MiB machine (no swap) with `active` pages on the active file list and
    /// `inactive` on the inactive file list.
    fn mm_with_file_lists(active: u32, inactive: u32) -> (Mm, u32) {
        let mut mm = crate::test_util::task_mm(crate::test_util::config(64));
        let space = mm.add_space(crate::SpaceKind::File, "f".into(), 1024, None);
        for i in 0..active + inactive {
            let pfn = mm
                .alloc_pages(crate::page_alloc::GFP_HIGHUSER_MOVABLE, 0)
                .unwrap();
            let f = &mut mm.frames[pfn as usize];
            f.mapping = space;
            f.index = i;
            if i < active {
                f.set(pg::ACTIVE);
            }
            mm.folio_add_lru(pfn);
        }
        let pfn = mm
            .alloc_pages(crate::page_alloc::GFP_HIGHUSER_MOVABLE, 0)
            .unwrap();
        mm.frames[pfn as usize].mapping = space;
        mm.frames[pfn as usize].index = 1000;
        // After a periodic flush: workingset_test_recent reads the flushed sizes.
        mm.do_flush_stats(0);
        (mm, pfn)
    }

    #[test]
    fn file_refault_activates_when_distance_fits_the_workingset() {
        // No swap, so the workingset of a file refault is active_file only: 50 pages.
        // The clock reads 1000 now; an eviction at 960 is 40 pages ago: 40 <= 50 →
        // activate, tick the clock to 1001, count workingset_activate_file.
        let (mut mm, pfn) = mm_with_file_lists(50, 30);
        mm.lruvecs[0].nonresident_age = 1000;
        let shadow = mm.workingset.pack(ROOT, 960, false);
        mm.workingset_refault(pfn, shadow);
        assert!(mm.frames[pfn as usize].test(pg::ACTIVE));
        assert!(!mm.frames[pfn as usize].test(pg::WORKINGSET));
        assert_eq!(mm.lruvecs[0].nonresident_age, 1001);
        assert_eq!(mm.vmstat.get(Ev::WorkingsetRefaultFile), 1);
        assert_eq!(mm.vmstat.get(Ev::WorkingsetActivateFile), 1);
        assert_eq!(mm.vmstat.get(Ev::WorkingsetRestoreFile), 0);
    }

    #[test]
    fn file_refault_beyond_the_workingset_stays_inactive() {
        // Eviction at 940: distance 60 > 50 active file pages (the 30 inactive ones do
        // not count for a file refault): not recent, no activation, clock unchanged.
        let (mut mm, pfn) = mm_with_file_lists(50, 30);
        mm.lruvecs[0].nonresident_age = 1000;
        let shadow = mm.workingset.pack(ROOT, 940, false);
        mm.workingset_refault(pfn, shadow);
        assert!(!mm.frames[pfn as usize].test(pg::ACTIVE));
        assert_eq!(mm.lruvecs[0].nonresident_age, 1000);
        assert_eq!(mm.vmstat.get(Ev::WorkingsetRefaultFile), 1);
        assert_eq!(mm.vmstat.get(Ev::WorkingsetActivateFile), 0);
    }

    #[test]
    fn refault_of_a_working_set_page_is_a_restore() {
        // The shadow's workingset bit (the page had been active): PG_workingset on the
        // new page, workingset_restore_file, and lru_note_cost_refault charges one page
        // of I/O (32 units) to the file side. 32 exceeds a quarter of the 80 LRU pages
        // (20), so lru_note_cost's decay halves it: 16.
        let (mut mm, pfn) = mm_with_file_lists(50, 30);
        mm.lruvecs[0].nonresident_age = 1000;
        let shadow = mm.workingset.pack(ROOT, 990, true);
        mm.workingset_refault(pfn, shadow);
        assert!(mm.frames[pfn as usize].test(pg::ACTIVE | pg::WORKINGSET));
        assert_eq!(mm.vmstat.get(Ev::WorkingsetRestoreFile), 1);
        assert_eq!(mm.lruvecs[0].file_cost, 16);
    }

    #[test]
    fn bucket_order_for_huge_memory() {
        // 2^42 pages (16 PiB) needs 42 bits: buckets of 2^(42-39) = 8 pages.
        let w = Workingset::new(1 << 42);
        assert_eq!(w.bucket_order, 3);
        let (_, ev, _) = w.unpack(w.pack(ROOT, 1003, false));
        assert_eq!(ev, 1000, "rounded down to its bucket");
    }
}
