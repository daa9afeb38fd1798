//! The virtual address space operations (mm/damon/vaddr.c): a workload's anonymous
//! mappings as the monitored ranges, sampling through its page table, and the
//! `pageout` and `cold` actions as madvise(MADV_PAGEOUT / MADV_COLD).
//!
//! A simulated process has no text, heap or stack, only the mappings its workload
//! makes, so the "three regions" `damon_va_three_regions` finds are its mappings, laid
//! out from [`VA_BASE`] upward with a 2 MiB guard gap between them.

use super::core::{evenly_split, Ctx, Region};
use super::damos::Scheme;
use super::{Action, Attrs, TargetConfig, DAMON_MIN_REGION};
use crate::page::{pg, pte, Pfn};
use crate::Mm;

/// Where the first mapping of every simulated process starts (the usual mmap area).
pub const VA_BASE: u64 = 0x7f00_0000_0000;
const GAP: u64 = 2 << 20;

impl Mm {
    /// Workload `w`'s mappings: (space, first address, end address).
    pub fn damon_va_layout(&self, w: usize) -> Vec<(u32, u64, u64)> {
        let mut addr = VA_BASE;
        let mut out = Vec::new();
        for &si in self.mm_spaces.get(w).map_or(&[][..], |v| v.as_slice()) {
            let len = self.spaces[si as usize].nr_pages() as u64 * DAMON_MIN_REGION;
            out.push((si, addr, addr + len));
            addr = (addr + len).div_ceil(GAP) * GAP + GAP;
        }
        out
    }

    /// `damon_va_init`: each mapping (or each configured range), evenly split so the
    /// whole comes to about `min_nr_regions`.
    pub(super) fn damon_va_init_regions(&self, t: &TargetConfig, attrs: &Attrs) -> Vec<Region> {
        let ranges: Vec<(u64, u64)> = if t.regions.is_empty() {
            t.workload
                .map(|w| {
                    self.damon_va_layout(w)
                        .into_iter()
                        .map(|(_, s, e)| (s, e))
                        .collect()
                })
                .unwrap_or_default()
        } else {
            t.regions.clone()
        };
        let total: u64 = ranges.iter().map(|(s, e)| e - s).sum();
        let sz = (total / attrs.min_nr_regions.max(1)).max(DAMON_MIN_REGION);
        ranges
            .iter()
            .filter(|(s, e)| e > s)
            .flat_map(|&(s, e)| evenly_split(s, e, (e - s) / sz))
            .collect()
    }

    /// The PTE behind a virtual address of workload `w`: (space, index).
    fn damon_va_pte(&self, layout: &[(u32, u64, u64)], addr: u64) -> Option<(u32, u32)> {
        layout
            .iter()
            .find(|&&(_, s, e)| s <= addr && addr < e)
            .map(|&(si, s, _)| (si, ((addr - s) / DAMON_MIN_REGION) as u32))
    }

    /// The present page on an LRU at a PTE (`damon_get_folio(pte_pfn(pte))`).
    fn damon_va_folio(&self, space: u32, idx: u32) -> Option<Pfn> {
        let s = &self.spaces[space as usize];
        let e = s.pte(idx);
        if s.dead || !pte::is_present(e) {
            return None;
        }
        let pfn = pte::pfn(e);
        self.frames[pfn as usize].test(pg::LRU).then_some(pfn)
    }

    /// `damon_va_prepare_access_checks`: `damon_va_mkold` at each region's random
    /// address.
    pub(super) fn damon_va_prepare_access_checks(&mut self, ctx: &mut Ctx) {
        self.charge(ctx.nr_regions() * self.cfg.costs.damon_check_ns);
        for ti in 0..ctx.targets.len() {
            let Some(w) = ctx.targets[ti].workload else {
                continue;
            };
            let layout = self.damon_va_layout(w);
            for ri in 0..ctx.targets[ti].regions.len() {
                let r = ctx.targets[ti].regions[ri];
                let addr = Self::damon_rand_addr(ctx.rng(), &r);
                ctx.targets[ti].regions[ri].sampling_addr = addr;
                if let Some((si, idx)) = self.damon_va_pte(&layout, addr) {
                    if let Some(pfn) = self.damon_va_folio(si, idx) {
                        self.damon_ptep_mkold(pfn, si, idx);
                    }
                }
            }
        }
    }

    /// `damon_va_check_accesses`. Returns the highest nr_accesses.
    pub(super) fn damon_va_check_accesses(&mut self, ctx: &mut Ctx) -> u32 {
        self.charge(ctx.nr_regions() * self.cfg.costs.damon_check_ns);
        let mut max_nr_accesses = 0;
        for t in &mut ctx.targets {
            let layout = t
                .workload
                .map(|w| self.damon_va_layout(w))
                .unwrap_or_default();
            for r in &mut t.regions {
                let young = self
                    .damon_va_pte(&layout, r.sampling_addr)
                    .and_then(|(si, idx)| self.damon_va_folio(si, idx).map(|p| (p, si, idx)))
                    .is_some_and(|(pfn, si, idx)| self.damon_pte_young(pfn, si, idx));
                if young {
                    r.nr_accesses += 1;
                }
                max_nr_accesses = max_nr_accesses.max(r.nr_accesses);
            }
        }
        max_nr_accesses
    }

    /// `damon_va_apply_scheme`: madvise on the region (`damos_madvise`), which
    /// counts the whole region as applied when the call succeeds.
    pub(super) fn damon_va_apply_scheme(
        &mut self,
        workload: Option<usize>,
        r: &Region,
        s: &Scheme,
    ) -> u64 {
        let Some(w) = workload else {
            return 0;
        };
        if self.workload_dead[w] {
            return 0;
        }
        match s.cfg.action {
            Action::Pageout => self.madvise_cold_or_pageout(w, r, true),
            Action::Cold => self.madvise_cold_or_pageout(w, r, false),
            // Rejected at load time for vaddr (the model's vaddr is v6.5's).
            Action::LruPrio
            | Action::LruDeprio
            | Action::MigrateHot
            | Action::MigrateCold
            | Action::Stat => return 0,
        }
        r.size()
    }

    /// `madvise_cold_or_pageout_pte_range` over a region: each present page on an LRU
    /// is made old (PTE, PG_referenced, PG_young); MADV_COLD deactivates it,
    /// MADV_PAGEOUT isolates it for `reclaim_pages`.
    fn madvise_cold_or_pageout(&mut self, w: usize, r: &Region, pageout: bool) {
        let layout = self.damon_va_layout(w);
        let mut list = Vec::new();
        let mut aged = 0u64;
        for &(si, s, e) in &layout {
            let (lo, hi) = (r.start.max(s), r.end.min(e));
            if lo >= hi {
                continue;
            }
            let (first, last) = ((lo - s) / DAMON_MIN_REGION, (hi - s) / DAMON_MIN_REGION);
            // The page-table walk per PTE (swap and none entries cost no more); each
            // present page is then a scan_page.
            self.charge((last - first) * self.cfg.costs.walk_pte_ns);
            for idx in first as u32..last as u32 {
                let Some(pfn) = self.damon_va_folio(si, idx) else {
                    continue;
                };
                self.charge(self.cfg.costs.scan_page_ns);
                aged += 1;
                *self.spaces[si as usize].pte_mut(idx) &= !pte::YOUNG;
                self.folio_changed(pfn);
                self.frames[pfn as usize].clear(pg::REFERENCED);
                self.folio_test_clear_young(pfn);
                if !pageout {
                    if self.frames[pfn as usize].test(pg::ACTIVE) {
                        self.frames[pfn as usize].set(pg::WORKINGSET);
                    }
                    self.folio_deactivate(pfn);
                    continue;
                }
                if self.frames[pfn as usize].test(pg::UNEVICTABLE) {
                    continue;
                }
                self.lruvec_del_folio(pfn);
                self.frames[pfn as usize].list = crate::page::on::ISOLATED;
                list.push(pfn);
            }
        }
        // tlb_finish_mmu: the aged PTEs were cleared and rewritten under an mmu_gather
        // (tlb_remove_tlb_entry), flushed over the range.
        if aged > 0 {
            self.flush_tlb_mm_range(w, aged);
        }
        self.reclaim_pages(list);
    }
}
