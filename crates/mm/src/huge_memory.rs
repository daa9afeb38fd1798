//! Transparent huge pages for anonymous memory (mm/huge_memory.c): the THP fault
//! (`do_huge_pmd_anonymous_page`) with the allocation flags the defrag mode gives
//! (`vma_thp_gfp_mask`), the fallback to base pages, and `split_huge_page` when
//! reclaim takes a page of one.
//!
//! A THP here is 512 contiguous frames mapped by one PMD's worth of PTEs, each frame
//! on the LRU as a base page would be, marked as a member by `Frame::order` = 9 (an
//! LRU page's order is otherwise 0). Reclaim splits it when it picks any of its pages
//! (anon THPs are split before swap-out when swap cannot take them whole, as with
//! zram; `thp_split_page`), and compaction's migrate scanner steps over it. What a
//! THP saves in TLB misses is not modelled.

use super::memcontrol::PageState;
use super::page::{pg, pte, Frame, Pfn};
use super::page_alloc::Gfp;
use super::Mm;
use crate::vm_event_item::Ev;

/// `/sys/kernel/mm/transparent_hugepage/enabled`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ThpEnabled {
    Always,
    Madvise,
    #[default]
    Never,
}

/// `/sys/kernel/mm/transparent_hugepage/defrag`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ThpDefrag {
    Always,
    Defer,
    DeferMadvise,
    #[default]
    Madvise,
    Never,
}

/// `HPAGE_PMD_ORDER` on x86-64.
pub const HPAGE_PMD_ORDER: usize = 9;
pub const HPAGE_PMD_NR: u32 = 1 << HPAGE_PMD_ORDER;

/// `vma_thp_gfp_mask`: `GFP_TRANSHUGE_LIGHT` (no reclaim, no warnings, movable,
/// compound) plus what the defrag mode allows.
pub fn vma_thp_gfp_mask(defrag: ThpDefrag, madvised: bool) -> Gfp {
    let light = Gfp {
        direct_reclaim: false,
        kswapd_reclaim: false,
        ..super::page_alloc::GFP_HIGHUSER_MOVABLE
    };
    match defrag {
        // GFP_TRANSHUGE, and __GFP_NORETRY unless madvised.
        ThpDefrag::Always => Gfp {
            direct_reclaim: true,
            noretry: !madvised,
            ..light
        },
        ThpDefrag::Defer => Gfp {
            kswapd_reclaim: true,
            ..light
        },
        ThpDefrag::DeferMadvise => Gfp {
            direct_reclaim: madvised,
            kswapd_reclaim: !madvised,
            ..light
        },
        ThpDefrag::Madvise => Gfp {
            direct_reclaim: madvised,
            ..light
        },
        ThpDefrag::Never => light,
    }
}

impl Mm {
    /// Whether a fault in `space` may map a THP (`thp_vma_allowable_order`): anonymous
    /// memory of a workload, THP enabled for it; `Some(madvised)` if so.
    fn thp_allowed(&self, space: u32) -> Option<bool> {
        let s = &self.spaces[space as usize];
        if s.kind != super::SpaceKind::Anon {
            return None;
        }
        let madvised = s
            .owner
            .and_then(|w| self.cfg.workloads.get(w).map(|c| c.madvise_hugepage))
            .unwrap_or(false);
        match self.cfg.thp_enabled {
            ThpEnabled::Always => Some(madvised),
            ThpEnabled::Madvise if madvised => Some(true),
            _ => None,
        }
    }

    /// `do_huge_pmd_anonymous_page` for a fault at `space[vpn]`: if THP is allowed,
    /// the 2 MiB-aligned range around `vpn` lies inside the space and its PMD is
    /// empty (no page table yet), allocate an order-9 block with the defrag mode's
    /// flags, charge and map all of it (the faulting page young, and dirty on a
    /// write). `None`: not a THP fault, or the allocation or the charge failed
    /// (`thp_fault_fallback`), and the caller maps a base page. `Some(Retry)`: the
    /// allocation slept in reclaim.
    pub fn do_huge_pmd_anonymous_page(
        &mut self,
        space: u32,
        vpn: u32,
        write: bool,
    ) -> Option<super::memory::FaultResult> {
        let madvised = self.thp_allowed(space)?;
        let base = vpn & !(HPAGE_PMD_NR - 1);
        let s = &self.spaces[space as usize];
        if base + HPAGE_PMD_NR > s.nr_pages() || s.pmd_populated(base) {
            return None;
        }
        let gfp = vma_thp_gfp_mask(self.cfg.thp_defrag, madvised);
        // The interleave index counts huge pages: the offset over 512.
        let ilx = Some(u64::from(base) >> HPAGE_PMD_ORDER);
        let Some(head) = self.alloc_pages_mpol(gfp, HPAGE_PMD_ORDER, ilx) else {
            if let Some(until_ns) = self.blocked_until.take() {
                return Some(super::memory::FaultResult::Retry { until_ns });
            }
            self.count(Ev::ThpFaultFallback, 1);
            return None;
        };
        // The page table deposited with the THP (pgtable_trans_huge_deposit), for its
        // split; without it the fault fails (VM_FAULT_OOM).
        let deposited = match self.pte_alloc_one(space) {
            Ok(d) => d,
            Err(r) => {
                self.free_pages(head, HPAGE_PMD_ORDER);
                return Some(r);
            }
        };
        let zone = self.frames[head as usize].zone;
        for i in 0..HPAGE_PMD_NR {
            let f = &mut self.frames[(head + i) as usize];
            *f = Frame {
                zone,
                mapping: space,
                index: base + i,
                order: HPAGE_PMD_ORDER as u8,
                ..Frame::EMPTY
            };
            f.set(pg::SWAPBACKED);
        }
        // mem_cgroup_charge of the folio: one charge of all its pages, which reclaims
        // but never OOM-kills for it (a costly order).
        if !self.mem_cgroup_charge_folio(head, HPAGE_PMD_NR as u64) {
            for j in 0..HPAGE_PMD_NR {
                self.frames[(head + j) as usize].order = 0;
            }
            self.free_pages(head, HPAGE_PMD_ORDER);
            // The deposited table becomes the base pages' page table.
            if deposited {
                self.spaces[space as usize].populate_pmd(vpn);
            }
            self.count(Ev::ThpFaultFallbackCharge, 1);
            self.count(Ev::ThpFaultFallback, 1);
            return None;
        }
        // The exception, then clearing 2 MiB (about half a page copy per page).
        self.charge(
            self.cfg.costs.minor_fault_ns + HPAGE_PMD_NR as u64 * self.cfg.costs.copy_page_ns / 2,
        );
        let bits = pte::YOUNG | if write { pte::DIRTY } else { 0 };
        for i in 0..HPAGE_PMD_NR {
            self.folio_add_lru_vma(head + i, space);
            let e = self.mk_pte(head + i) | if base + i == vpn { bits } else { pte::YOUNG };
            self.spaces[space as usize].install_accessed(base + i, e);
        }
        self.spaces[space as usize].nr_present += HPAGE_PMD_NR as u64;
        self.mod_page_state(head, PageState::AnonThps, HPAGE_PMD_NR as i64);
        // count_memcg_event_mm: the faulting mm's memcg, which the THP is charged to.
        self.count_memcg(
            self.frames[head as usize].memcg as usize,
            Ev::ThpFaultAlloc,
            1,
        );
        Some(super::memory::FaultResult::Done)
    }

    /// Whether the LRU page `pfn` belongs to an unsplit THP.
    pub fn page_is_thp(&self, pfn: Pfn) -> bool {
        use super::page::{lru, on};
        let f = &self.frames[pfn as usize];
        let lru_or_isolated = f.list < lru::NR_LRU_LISTS as u8
            || f.list & 0xf0 == on::LRU_GEN
            || f.list == on::ISOLATED;
        f.order as usize == HPAGE_PMD_ORDER && f.test(pg::SWAPBACKED) && lru_or_isolated
    }

    /// `split_huge_page` of the THP holding `pfn`: its 512 pages become base pages,
    /// where they are on the LRU.
    pub fn split_huge_page(&mut self, pfn: Pfn) {
        let base = pfn & !(HPAGE_PMD_NR - 1);
        self.mod_page_state(base, PageState::AnonThps, -(HPAGE_PMD_NR as i64));
        for p in base..base + HPAGE_PMD_NR {
            self.frames[p as usize].order = 0;
        }
        self.count(Ev::ThpSplitPage, 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defrag_modes_give_the_kernels_flags() {
        use ThpDefrag::*;
        let f = |d, m| {
            let g = vma_thp_gfp_mask(d, m);
            (g.direct_reclaim, g.kswapd_reclaim, g.noretry)
        };
        assert_eq!(f(Always, false), (true, false, true));
        assert_eq!(f(Always, true), (true, false, false));
        assert_eq!(f(Defer, false), (false, true, false));
        assert_eq!(f(Defer, true), (false, true, false));
        assert_eq!(f(DeferMadvise, false), (false, true, false));
        assert_eq!(f(DeferMadvise, true), (true, false, false));
        assert_eq!(f(Madvise, false), (false, false, false));
        assert_eq!(f(Madvise, true), (true, false, false));
        assert_eq!(f(Never, true), (false, false, false));
    }
}
