//! mlock (mm/mlock.c as reworked in v5.18: `mlock_folio`, `mlock_new_folio`,
//! `munlock_folio`; the `lru_add` and reclaim sides in mm/swap.c and mm/vmscan.c).
//!
//! An anonymous mapping is VM_LOCKED (`Space::vm_locked`) from its
//! mmap(MAP_LOCKED) on. Its pages are PG_mlocked ([`pg::MLOCKED`]) and PG_unevictable,
//! on the lruvec's LRU_UNEVICTABLE list, where no reclaim scan looks (MGLRU keeps them
//! off its generations too: `lru_gen_add_folio` declines an unevictable folio). A page
//! faulted into the mapping is mlocked on its way onto the LRU (`folio_add_lru_vma` →
//! `mlock_new_folio`); unmapping it (munmap, exit, an OOM kill's reaping) munlocks it
//! and it goes back to an evictable list just before it is freed.
//!
//! The kernel passes folios through a per-CPU `mlock_fbatch` drained by
//! `lru_add_drain`; the simulator has no per-CPU LRU batches (as for `lru_add`), so
//! each folio is handled at once, as a full batch would be.
//!
//! Counters (/proc/vmstat):
//! - `unevictable_pgs_mlocked`: a page given PG_mlocked;
//! - `unevictable_pgs_culled`: a page put on the unevictable list (from a fault, or
//!   found unevictable by reclaim);
//! - `unevictable_pgs_munlocked`: a page's PG_mlocked cleared by munlock;
//! - `unevictable_pgs_rescued`: a page moved from the unevictable list back to an
//!   evictable one;
//! - `unevictable_pgs_stranded` stays 0: it counts a munlock that finds its page off
//!   the LRU but still PG_unevictable, which takes another CPU holding the page
//!   isolated at that moment. Here reclaim, compaction and DAMON isolate pages only
//!   inside one kernel call and put them back before it returns, and munmap or exit
//!   is another call, so munlock always finds its page on the LRU;
//! - `unevictable_pgs_scanned` stays 0: only `check_move_unevictable_folios` counts
//!   it, called when a shmem segment is SHM_UNLOCKed or a mapping stops being
//!   unevictable (ramfs, drivers), none of which is modelled;
//! - `unevictable_pgs_cleared` stays 0: it counts a page freed while still
//!   PG_mlocked (truncation racing munlock, `__page_cache_release`); here every page
//!   of a locked mapping is munlocked when it is unmapped, before it is freed.
//!
//! Each page here is mapped once (no fork, no shared anonymous memory), so its
//! `mlock_count` is 1 while mlocked and the first munlock is its last: the count is
//! not kept. RLIMIT_MEMLOCK is not modelled: workloads run as root (CAP_IPC_LOCK), as
//! mmtests and most services that mlock do, so `mlock` never fails with EPERM or
//! ENOMEM for the limit; what stops a locked mapping is memory itself (the allocation
//! or the memcg charge of its faults, which ends in the OOM killer).

use super::page::{pg, Pfn};
use super::Mm;
use crate::vm_event_item::Ev;

impl Mm {
    /// `mmap_region` of a VM_LOCKED mapping (MAP_LOCKED; mlock2 with MLOCK_ONFAULT
    /// locks likewise but is not populated). Nothing of it is in memory yet, so there
    /// is no page for `mlock_vma_pages_range` to mlock: its pages are mlocked as they
    /// are faulted in.
    pub fn mmap_locked(&mut self, space: u32) {
        debug_assert_eq!(self.spaces[space as usize].nr_present, 0);
        self.spaces[space as usize].vm_locked = true;
    }

    /// `folio_evictable`: not PG_mlocked. (Unevictable mappings, ramfs and SHM_LOCK,
    /// are not modelled.)
    #[inline]
    pub fn folio_evictable(&self, pfn: Pfn) -> bool {
        !self.frames[pfn as usize].test(pg::MLOCKED)
    }

    /// NR_MLOCK of the page's zone.
    fn mod_nr_mlock(&mut self, pfn: Pfn, delta: i64) {
        let zi = self.frames[pfn as usize].zone as usize;
        let z = &mut self.zones[zi];
        z.nr_mlock = z.nr_mlock.wrapping_add_signed(delta);
    }

    /// `folio_add_lru_vma`: a page just faulted into `space` joins the LRU; in a
    /// VM_LOCKED mapping it is mlocked on the way (`mlock_new_folio`).
    pub fn folio_add_lru_vma(&mut self, pfn: Pfn, space: u32) {
        if self.spaces[space as usize].vm_locked {
            self.mlock_new_folio(pfn);
        } else {
            self.folio_add_lru(pfn);
        }
    }

    /// `mlock_new_folio` → `__mlock_new_folio`: a new page of a VM_LOCKED mapping,
    /// not yet on the LRU, is PG_mlocked and goes straight onto the unevictable list.
    pub fn mlock_new_folio(&mut self, pfn: Pfn) {
        self.frames[pfn as usize].set(pg::MLOCKED);
        self.mod_nr_mlock(pfn, 1);
        self.count(Ev::UnevictablePgsMlocked, 1);
        self.frames[pfn as usize].set(pg::UNEVICTABLE);
        self.count(Ev::UnevictablePgsCulled, 1);
        self.lruvec_add_folio(pfn);
    }

    /// `mlock_folio` → `__mlock_folio`: a page already on the LRU (or isolated from it)
    /// found mapped by a VM_LOCKED mapping. On an evictable list it moves to the
    /// unevictable one; isolated, it only gets PG_mlocked, and whoever holds it culls
    /// it when putting it back (`folio_putback_lru`).
    pub fn mlock_folio(&mut self, pfn: Pfn) {
        if !self.frames[pfn as usize].test(pg::MLOCKED) {
            self.frames[pfn as usize].set(pg::MLOCKED);
            self.mod_nr_mlock(pfn, 1);
            self.count(Ev::UnevictablePgsMlocked, 1);
        }
        let f = self.frames[pfn as usize];
        // Off the LRU there is nothing more to do; already unevictable, the kernel
        // raises mlock_count, which is not kept (one mapping per page).
        if !f.test(pg::LRU) || f.test(pg::UNEVICTABLE) {
            return;
        }
        self.lruvec_del_folio(pfn);
        let f = &mut self.frames[pfn as usize];
        f.clear(pg::ACTIVE);
        f.set(pg::UNEVICTABLE);
        self.lruvec_add_folio(pfn);
        self.count(Ev::UnevictablePgsCulled, 1);
    }

    /// `munlock_folio` → `__munlock_folio`: a page unmapped from a VM_LOCKED mapping
    /// (its last mlock, see the module's doc) loses PG_mlocked; on the LRU it moves
    /// back to an evictable list. Off the LRU and still PG_unevictable it would be
    /// stranded there until whoever holds it puts it back (which cannot happen here,
    /// see the module's doc, but is counted as the kernel counts it).
    pub fn munlock_folio(&mut self, pfn: Pfn) {
        let f = self.frames[pfn as usize];
        let on_lru = f.test(pg::LRU);
        if f.test(pg::MLOCKED) {
            self.frames[pfn as usize].clear(pg::MLOCKED);
            self.mod_nr_mlock(pfn, -1);
            if on_lru || !f.test(pg::UNEVICTABLE) {
                self.count(Ev::UnevictablePgsMunlocked, 1);
            } else {
                self.count(Ev::UnevictablePgsStranded, 1);
            }
        }
        // folio_evictable is asked after PG_mlocked is cleared.
        if on_lru && f.test(pg::UNEVICTABLE) && self.folio_evictable(pfn) {
            self.lruvec_del_folio(pfn);
            self.frames[pfn as usize].clear(pg::UNEVICTABLE);
            self.lruvec_add_folio(pfn);
            self.count(Ev::UnevictablePgsRescued, 1);
        }
    }

    /// The evictability test of `lru_add` for an isolated page going back
    /// (`folio_putback_lru` → `folio_add_lru`): one that became unevictable while
    /// off the LRU (mlocked by reclaim's rmap walk) is culled to the unevictable list,
    /// and one no longer unevictable is rescued from it. Returns whether it changed.
    pub fn lru_add_evictability(&mut self, pfn: Pfn) -> bool {
        let evictable = self.folio_evictable(pfn);
        let f = &mut self.frames[pfn as usize];
        if evictable != f.test(pg::UNEVICTABLE) {
            return false;
        }
        if evictable {
            f.clear(pg::UNEVICTABLE);
            self.count(Ev::UnevictablePgsRescued, 1);
        } else {
            f.clear(pg::ACTIVE);
            f.set(pg::UNEVICTABLE);
            self.count(Ev::UnevictablePgsCulled, 1);
        }
        true
    }

    /// `folio_putback_lru`: an isolated page back onto the list `lru_add` chooses.
    pub fn folio_putback_lru(&mut self, pfn: Pfn) {
        self.lru_add_evictability(pfn);
        self.lruvec_add_folio(pfn);
    }

    /// `__page_cache_release`'s last word on a page freed still PG_mlocked: the flag
    /// and NR_MLOCK go, counted as `unevictable_pgs_cleared`.
    pub fn clear_mlock_on_free(&mut self, pfn: Pfn) {
        if self.frames[pfn as usize].test(pg::MLOCKED) {
            self.frames[pfn as usize].clear(pg::MLOCKED);
            self.mod_nr_mlock(pfn, -1);
            self.count(Ev::UnevictablePgsCleared, 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::FaultResult;
    use crate::page::lru;
    use crate::page_alloc::test_pages::add_pages_of;
    use crate::test_util::{add_zram, config, mglru, task_mm};
    use crate::SpaceKind;

    fn mm(lru: &str) -> Mm {
        let mut cfg = config(64);
        add_zram(&mut cfg, 64);
        match lru {
            "mglru" => mglru(&mut cfg),
            "classic" => {}
            _ => unreachable!("{lru}"),
        }
        task_mm(cfg)
    }

    fn ev(mm: &Mm) -> [u64; 5] {
        [
            Ev::UnevictablePgsMlocked,
            Ev::UnevictablePgsCulled,
            Ev::UnevictablePgsMunlocked,
            Ev::UnevictablePgsRescued,
            Ev::UnevictablePgsStranded,
        ]
        .map(|e| mm.vmstat.get(e))
    }

    #[test]
    fn a_locked_mappings_pages_fault_onto_the_unevictable_list_and_leave_it_at_unmap() {
        // Eight faults into a VM_LOCKED mapping: mlock_new_folio mlocks each and adds
        // it to the unevictable list (no generation under MGLRU): mlocked 8, culled 8.
        // The unmap munlocks each on the LRU and moves it back to an evictable list
        // before freeing it: munlocked 8, rescued 8, nothing stranded.
        for lru in ["classic", "mglru"] {
            let mut mm = mm(lru);
            let space = mm.add_space(SpaceKind::Anon, "locked".into(), 8, Some(0));
            mm.mmap_locked(space);
            for vpn in 0..8 {
                assert_eq!(mm.handle_anon_fault(space, vpn, true), FaultResult::Done);
            }
            assert_eq!(mm.global_lru_pages(lru::UNEVICTABLE), 8, "{lru}");
            assert_eq!(mm.nr_mlock(), 8, "{lru}");
            assert_eq!(ev(&mm), [8, 8, 0, 0, 0], "{lru}");
            let evictable: u64 = lru::EVICTABLE.iter().map(|&l| mm.global_lru_pages(l)).sum();
            assert_eq!(evictable, 0, "{lru}");
            mm.check_invariants().unwrap();
            mm.zap_space(space);
            assert_eq!(mm.global_lru_pages(lru::UNEVICTABLE), 0, "{lru}");
            assert_eq!(mm.nr_mlock(), 0, "{lru}");
            assert_eq!(ev(&mm), [8, 8, 8, 8, 0], "{lru}");
            mm.check_invariants().unwrap();
        }
    }

    #[test]
    fn reclaim_culls_the_pages_of_a_locked_mapping_it_finds_evictable() {
        // 32 pages on an evictable list whose mapping is VM_LOCKED (as a page mlocked
        // while isolated would be), isolated and passed to shrink_folio_list: the rmap
        // walk mlocks each (folio_referenced_one → mlock_vma_folio), it is activated
        // without PG_active or pgactivate, and the put-back (move_folios_to_lru →
        // folio_putback_lru) culls it to the unevictable list. Nothing is swapped.
        for lru in ["classic", "mglru"] {
            let mut mm = mm(lru);
            let (space, pfns) = add_pages_of(&mut mm, SpaceKind::Anon, 32, 0, Some(0));
            mm.spaces[space as usize].vm_locked = true;
            for &pfn in &pfns {
                mm.lruvec_del_folio(pfn);
                mm.frames[pfn as usize].list = super::super::page::on::ISOLATED;
            }
            let mut sc = crate::vmscan::ScanControl::new(u64::MAX, 1, 0);
            let (freed, stat, back) = mm.shrink_folio_list(pfns, &mut sc, 0, false);
            assert_eq!((freed, stat.nr_activate), (0, [0, 0]), "{lru}");
            mm.move_folios_to_lru(&back);
            assert_eq!(mm.global_lru_pages(lru::UNEVICTABLE), 32, "{lru}");
            assert_eq!(mm.nr_mlock(), 32, "{lru}");
            assert_eq!(ev(&mm), [32, 32, 0, 0, 0], "{lru}");
            assert_eq!(mm.vmstat.get(Ev::Pswpout), 0, "{lru}");
            assert_eq!(mm.vmstat.get(Ev::Pgactivate), 0, "{lru}");
            mm.check_invariants().unwrap();
        }
    }
}
