//! Anonymous page faults (mm/memory.c `do_anonymous_page`, `do_swap_page`;
//! kernel-reference §8.2).

use super::memcontrol::KmemItem;
use super::memcontrol::PageState;
use super::page::{pg, pte, Pfn};
use super::page_alloc::GFP_HIGHUSER_MOVABLE;
use super::SwapKind;
use super::{Mm, SpaceKind};
use crate::vm_event_item::Ev;

/// How a fault (or a page-cache read) ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultResult {
    /// Done; the task goes on.
    Done,
    /// Waiting for a device read until this time. `memstall`: the wait counts as a
    /// memory stall (a refault of a page that was in the working set).
    Blocked { until_ns: u64, memstall: bool },
    /// The allocation failed and the OOM killer chose the faulting task's workload.
    Killed,
    /// The allocation had to sleep in reclaim until this time; nothing was done and the
    /// operation is retried then (the kernel sleeps inside; the simulator re-enters).
    Retry { until_ns: u64 },
}

impl Mm {
    /// What a caller whose allocation returned nothing reports. A process at
    /// OOM_SCORE_ADJ_MIN that the OOM killer could not help (nothing else
    /// killable) is never killed for it: since v5.16 the fault returns VM_FAULT_OOM
    /// and `pagefault_out_of_memory` lets it be retried, here a jiffy later (the
    /// kernel retries at once and spins; a global OOM with nothing killable panics
    /// there, "System is deadlocked on memory").
    pub fn alloc_failure(&mut self) -> FaultResult {
        match self.blocked_until.take() {
            Some(until_ns) => FaultResult::Retry { until_ns },
            None if self.current_workload.is_some_and(|w| {
                !self.workload_dead[w]
                    && self.workload_oom_score_adj[w] == super::oom_kill::OOM_SCORE_ADJ_MIN
            }) =>
            {
                FaultResult::Retry {
                    until_ns: self.clock() + self.cfg.jiffy_ns(),
                }
            }
            None => FaultResult::Killed,
        }
    }
}

impl Mm {
    /// A new anonymous page for `space[vpn]`: allocated, charged, on the inactive anon
    /// list. `None` if the allocation failed.
    fn new_anon_page(&mut self, space: u32, vpn: u32) -> Option<Pfn> {
        // vma_alloc_folio: the page's offset is its interleave index.
        let pfn = self.alloc_pages_mpol(GFP_HIGHUSER_MOVABLE, 0, Some(u64::from(vpn)))?;
        let f = &mut self.frames[pfn as usize];
        f.set(pg::SWAPBACKED);
        f.mapping = space;
        f.index = vpn;
        if !self.mem_cgroup_charge(pfn) {
            self.free_pages(pfn, 0);
            return None;
        }
        Some(pfn)
    }

    /// `pte_alloc_one` for `space`, if its workload has page tables modelled: an
    /// unmovable kernel page charged to the workload's memcg (GFP_PGTABLE_USER has
    /// __GFP_ACCOUNT), kept with the space and freed when it is zapped. `Ok(false)`:
    /// not modelled, nothing allocated.
    pub(super) fn pte_alloc_one(&mut self, space: u32) -> Result<bool, FaultResult> {
        let s = &self.spaces[space as usize];
        let Some(owner) = s
            .owner
            .or(s.mapper)
            .filter(|&w| self.cfg.workloads.get(w).is_some_and(|c| c.page_tables))
        else {
            return Ok(false);
        };
        let gfp = super::page_alloc::Gfp {
            migratetype: super::zone::MIGRATE_UNMOVABLE,
            ..GFP_HIGHUSER_MOVABLE
        };
        let Some(pfn) = self.alloc_kernel_pages(gfp, 0) else {
            return Err(self.alloc_failure());
        };
        let memcg = self.workload_memcg[owner];
        if !self.memcg_kmem_charge_pages(memcg, 1, KmemItem::PageTables, false) {
            self.free_kernel_pages(pfn, 0);
            return Err(self.alloc_failure());
        }
        self.spaces[space as usize].pt_pages.push(pfn);
        Ok(true)
    }

    /// `pte_free` of one of `space`'s page-table pages, and its charge.
    pub(super) fn pte_free(&mut self, space: u32, pfn: Pfn) {
        self.free_kernel_pages(pfn, 0);
        let s = &self.spaces[space as usize];
        if let Some(w) = s.mm() {
            let memcg = self.workload_memcg[w];
            self.memcg_kmem_uncharge_pages(memcg, 1, KmemItem::PageTables);
        }
    }

    /// `pte_alloc`: a fault in a 2 MiB range whose PMD is empty gets its page table
    /// (`pte_alloc_one`), and the PMD points at it from then on, even if the page
    /// allocation that follows fails and the fault is retried.
    fn pte_alloc(&mut self, space: u32, vpn: u32) -> Result<(), FaultResult> {
        if self.spaces[space as usize].pmd_populated(vpn) {
            return Ok(());
        }
        if self.pte_alloc_one(space)? {
            self.spaces[space as usize].populate_pmd(vpn);
        }
        Ok(())
    }

    /// `handle_mm_fault` on an anonymous mapping: the access to `space[vpn]` found no
    /// present page.
    /// A user load or store of a space that traps every access ([`super::Space::set_trap`])
    /// whose page is present (for a file, mapped): what the MMU does on a hit, the
    /// PTE's (and PMD's) accessed bit and on a store the dirty bit; a research
    /// replacement policy hears of it. False when the page is not there: a real fault.
    pub fn access_present(&mut self, space: u32, vpn: u32, write: bool) -> bool {
        let s = &self.spaces[space as usize];
        let e = s.pte(vpn);
        if !pte::is_present(e)
            || (s.kind == SpaceKind::File && !self.frames[pte::pfn(e) as usize].test(pg::MAPPED))
        {
            return false;
        }
        let bits = pte::YOUNG | if write { pte::DIRTY } else { 0 };
        self.spaces[space as usize].set_bits(vpn, bits);
        if self.cfg.lru_policy.is_some() {
            self.policy_access(pte::pfn(e));
        }
        true
    }

    pub fn handle_anon_fault(&mut self, space: u32, vpn: u32, write: bool) -> FaultResult {
        self.in_lru_fault = true;
        let r = self.do_anon_fault(space, vpn, write);
        self.in_lru_fault = false;
        r
    }

    fn do_anon_fault(&mut self, space: u32, vpn: u32, write: bool) -> FaultResult {
        self.count_memcg(self.current_memcg(), Ev::Pgfault, 1);
        let e = self.spaces[space as usize].pte(vpn);
        let bits = pte::YOUNG | if write { pte::DIRTY } else { 0 };
        match pte::kind(e) {
            pte::PRESENT => {
                self.spaces[space as usize].set_bits(vpn, bits);
                FaultResult::Done
            }
            pte::SWAP => self.do_swap_page(space, vpn, pte::slot(e), write),
            _ => {
                // A THP where allowed and the PMD is empty, else a page table and
                // do_anonymous_page: zero-fill.
                if let Some(r) = self.do_huge_pmd_anonymous_page(space, vpn, write) {
                    return r;
                }
                if let Err(r) = self.pte_alloc(space, vpn) {
                    return r;
                }
                self.charge(self.cfg.costs.minor_fault_ns);
                let Some(pfn) = self.new_anon_page(space, vpn) else {
                    return self.alloc_failure();
                };
                self.folio_add_lru_vma(pfn, space);
                let e = self.mk_pte(pfn) | bits;
                let s = &mut self.spaces[space as usize];
                s.install_accessed(vpn, e);
                s.nr_present += 1;
                FaultResult::Done
            }
        }
    }

    /// `do_swap_page`: swap-cache hit (minor) or a read from the swap device (major).
    fn do_swap_page(&mut self, space: u32, vpn: u32, slot: u32, write: bool) -> FaultResult {
        let bits = pte::YOUNG | if write { pte::DIRTY } else { 0 };
        let sw = self
            .swap
            .as_ref()
            .expect("swap entry without a swap device");
        if let Some(pfn) = sw.lookup_swap_cache(slot) {
            // Still in the swap cache (written out but not yet reclaimed, or read ahead).
            self.charge(self.cfg.costs.minor_fault_ns);
            if self.frames[pfn as usize].test_clear(pg::READAHEAD) {
                self.count(Ev::SwapRaHit, 1);
            }
            let e = self.mk_pte(pfn) | bits;
            let s = &mut self.spaces[space as usize];
            s.install_accessed(vpn, e);
            s.nr_present += 1;
            s.nr_swap -= 1;
            // folio_add_anon_rmap_ptes → mlock_vma_folio. (A locked mapping's pages
            // are never swapped out here, so this does not happen, but costs a test.)
            if self.spaces[space as usize].vm_locked {
                self.mlock_folio(pfn);
            }
            self.try_free_swap_after_fault(pfn, write);
            return FaultResult::Done;
        }
        sw.prefetch_for_free(slot);
        let kind = sw.kind;
        let shadow = pte::kind(sw.slot(slot)) == pte::SHADOW;
        let shadow_value = pte::shadow_value(sw.slot(slot));
        self.charge(self.cfg.costs.major_fault_ns);
        let Some(pfn) = self.new_anon_page(space, vpn) else {
            return self.alloc_failure();
        };
        // The allocation may have reclaimed, but nothing else owns this slot: it is as
        // it was.
        self.count_memcg(self.current_memcg(), Ev::Pgmajfault, 1);
        // swap_read_folio: count_memcg_folio_events, the memcg the page is charged to.
        self.count_memcg(self.frames[pfn as usize].memcg as usize, Ev::Pswpin, 1);
        self.count(Ev::PgpgIn, 4);
        if shadow {
            self.workingset_refault(pfn, shadow_value);
        }
        let memstall = self.frames[pfn as usize].test(pg::WORKINGSET);
        self.folio_add_lru_vma(pfn, space);
        let e = self.mk_pte(pfn) | bits;
        let s = &mut self.spaces[space as usize];
        s.install_accessed(vpn, e);
        s.nr_present += 1;
        s.nr_swap -= 1;
        match kind {
            SwapKind::Zram | SwapKind::Ramdisk => {
                // SWP_SYNCHRONOUS_IO: bypass the swap cache, decompress (zram) or copy
                // (brd) in place, and drop the slot (the only copy is now in memory).
                let ns = if kind == SwapKind::Zram {
                    self.cfg.costs.decompress_ns
                } else {
                    self.cfg.costs.copy_page_ns
                };
                self.charge(ns);
                if memstall {
                    self.stall_ns += ns;
                }
                self.swap_free(slot);
                FaultResult::Done
            }
            _ => {
                let f = &mut self.frames[pfn as usize];
                f.set(pg::SWAPCACHE);
                f.swap = slot;
                self.mod_page_state(pfn, PageState::SwapCache, 1);
                self.swap.as_mut().unwrap().mark_swapcache(slot, pfn);
                let nr_ra = self.swap_vma_readahead(space, vpn);
                let now = self.now;
                let dev = self.swap.as_mut().unwrap().device.as_mut().unwrap();
                let done = dev.submit(now, 1 + nr_ra, false);
                self.try_free_swap_after_fault(pfn, write);
                FaultResult::Blocked {
                    until_ns: done,
                    memstall,
                }
            }
        }
    }

    /// `swap_vma_readahead`, simplified to a fixed window: the other swapped-out pages
    /// of the aligned 2^page-cluster window around the fault are read into the swap
    /// cache (unmapped, inactive) in the same I/O. Returns how many.
    fn swap_vma_readahead(&mut self, space: u32, vpn: u32) -> u64 {
        let win = 1u32 << self.cfg.page_cluster;
        if win <= 1 {
            return 0;
        }
        let start = vpn & !(win - 1);
        let end = (start + win).min(self.spaces[space as usize].nr_pages());
        let mut n = 0;
        for i in start..end {
            let e = self.spaces[space as usize].pte(i);
            if i == vpn || pte::kind(e) != pte::SWAP {
                continue;
            }
            let slot = pte::slot(e);
            let sw = self.swap.as_ref().unwrap();
            if sw.lookup_swap_cache(slot).is_some() {
                continue;
            }
            let shadow = sw.slot(slot);
            // Readahead never reclaims for itself (but node reclaim may, and then gives
            // up rather than sleeps): skip it when memory is tight.
            let Some(pfn) = self.get_page_from_freelist(
                GFP_HIGHUSER_MOVABLE,
                0,
                super::zone::WMARK_LOW,
                super::zone::AllocFlags::default(),
            ) else {
                if self.cfg.zone_reclaim_mode != 0 {
                    self.blocked_until = None;
                }
                break;
            };
            let f = &mut self.frames[pfn as usize];
            f.set(pg::SWAPBACKED | pg::READAHEAD);
            f.mapping = space;
            f.index = i;
            f.swap = slot;
            if !self.mem_cgroup_charge(pfn) {
                self.free_pages(pfn, 0);
                self.blocked_until = None; // readahead gives up rather than sleeps
                break;
            }
            // In the swap cache once charged: counted on the memcg it was charged to.
            self.frames[pfn as usize].set(pg::SWAPCACHE);
            self.mod_page_state(pfn, PageState::SwapCache, 1);
            if pte::kind(shadow) == pte::SHADOW {
                self.workingset_refault(pfn, pte::shadow_value(shadow));
            }
            self.folio_add_lru(pfn);
            self.swap.as_mut().unwrap().mark_swapcache(slot, pfn);
            self.count_memcg(self.frames[pfn as usize].memcg as usize, Ev::Pswpin, 1);
            n += 1;
        }
        self.count(Ev::SwapRa, n);
        self.count(Ev::PgpgIn, 4 * n);
        n
    }

    /// After swap-in: a write makes the swap copy stale, a filling device wants its
    /// slots back, and an mlocked page will not be swapped out again
    /// (`should_try_to_free_swap`).
    fn try_free_swap_after_fault(&mut self, pfn: Pfn, write: bool) {
        let f = &self.frames[pfn as usize];
        if f.test(pg::SWAPCACHE)
            && !f.test(pg::WRITEBACK)
            && (write || f.test(pg::MLOCKED) || self.vm_swap_full())
        {
            self.folio_free_swap(pfn);
        }
    }
}
