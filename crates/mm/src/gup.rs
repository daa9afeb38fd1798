//! Populating a mapping (mm/gup.c `__mm_populate` → `populate_vma_page_range` →
//! `__get_user_pages`): mmap with MAP_POPULATE or MAP_LOCKED faults the pages in
//! inside the call, with no user access.

use super::memory::FaultResult;
use super::page::pte;
use super::Mm;

impl Mm {
    /// One page of `populate_vma_page_range`: `__get_user_pages` with FOLL_TOUCH, and
    /// FOLL_WRITE for a private writable mapping (to break COW: every anonymous
    /// mapping here), so a missing page takes a write fault (`faultin_page` →
    /// `handle_mm_fault`, counted in pgfault as any fault) and `follow_page_pte`'s
    /// FOLL_TOUCH then marks the folio accessed (`folio_mark_accessed`). A present
    /// page is only followed: the caller skips it (a THP's fault brought its 512
    /// pages, whose `follow_page_mask` steps over the rest of the PMD).
    pub fn populate_page(&mut self, space: u32, vpn: u32) -> FaultResult {
        let r = self.handle_anon_fault(space, vpn, true);
        if r != FaultResult::Done {
            return r;
        }
        let e = self.spaces[space as usize].pte(vpn);
        if pte::is_present(e) {
            self.folio_mark_accessed(pte::pfn(e));
        }
        FaultResult::Done
    }
}
