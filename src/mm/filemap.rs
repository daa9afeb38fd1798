//! The page cache: buffered read() and write(), and mmap faults on files
//! (mm/filemap.c `filemap_read`, `filemap_fault`, `generic_perform_write`,
//! `filemap_add_folio`; kernel-reference §2.1, §2.13).

use super::memory::FaultResult;
use super::page::{pg, pte, Pfn};
use super::page_alloc::GFP_HIGHUSER_MOVABLE;
use super::Mm;
use crate::stats::vmstat::Ev;

impl Mm {
    /// `filemap_add_folio`: a new page for `space[index]`, on the inactive file list
    /// (or the active one when its shadow says it is a recent refault).
    fn filemap_add_folio(&mut self, space: u32, index: u32) -> Option<Pfn> {
        let old = self.spaces[space as usize].pte(index);
        let pfn = self.alloc_pages(GFP_HIGHUSER_MOVABLE, 0)?;
        let f = &mut self.frames[pfn as usize];
        f.mapping = space;
        f.index = index;
        if !self.mem_cgroup_charge(pfn) {
            self.free_pages(pfn, 0);
            return None;
        }
        // The allocation may have reclaimed; the slot is still what it was (nothing but
        // this path fills it).
        if pte::kind(old) == pte::SHADOW {
            self.workingset_refault(pfn, pte::shadow_value(old));
        }
        self.folio_add_lru(pfn);
        let s = &mut self.spaces[space as usize];
        *s.pte_mut(index) = pte::present(pfn);
        s.nr_present += 1;
        Some(pfn)
    }

    /// Brings pages `[first, first + n)` plus up to `ra_pages` of readahead beyond them
    /// into the page cache with one device read. Returns the read's completion time
    /// and whether it refaulted working-set pages, or `None` on allocation failure.
    fn page_cache_read(
        &mut self,
        space: u32,
        first: u32,
        n: u32,
        ra_pages: u32,
    ) -> Result<Option<(u64, bool)>, FaultResult> {
        let len = self.spaces[space as usize].nr_pages();
        let end = (first + n + ra_pages).min(len);
        let mut nr_read = 0u64;
        let mut memstall = false;
        for idx in first..end {
            let e = self.spaces[space as usize].pte(idx);
            if pte::is_present(e) {
                // Readahead stops at the first cached page beyond the request.
                if idx >= first + n {
                    break;
                }
                continue;
            }
            let Some(pfn) = self.filemap_add_folio(space, idx) else {
                // Out of memory part-way: read what was added, then report the failure
                // (a retry after a sleep finds those pages cached).
                let failure = self.alloc_failure();
                if nr_read > 0 {
                    let done = self.storage.submit(self.now, nr_read, false);
                    if let FaultResult::Retry { until_ns } = failure {
                        return Err(FaultResult::Retry {
                            until_ns: until_ns.max(done),
                        });
                    }
                }
                return Err(failure);
            };
            memstall |= self.frames[pfn as usize].test(pg::WORKINGSET);
            nr_read += 1;
        }
        if nr_read == 0 {
            return Ok(None);
        }
        self.count(Ev::PgpgIn, nr_read * 4);
        // brd completes the read in the submitter's context: a memory copy of CPU time,
        // no sleep (a refault's copy is a memory stall).
        if let Some(copy_ns) = self.storage.synchronous_ns(nr_read, false) {
            self.charge(copy_ns);
            if memstall {
                self.stall_ns += copy_ns;
            }
            return Ok(None);
        }
        let done = self.storage.submit(self.now, nr_read, false);
        Ok(Some((done, memstall)))
    }

    /// `filemap_read`: read() of pages `[first, first + n)`. Cached pages are marked
    /// accessed (twice makes them active); missing ones are read with readahead.
    pub fn filemap_read(&mut self, space: u32, first: u32, n: u32, ra_pages: u32) -> FaultResult {
        self.charge(self.cfg.costs.syscall_ns + n as u64 * self.cfg.costs.copy_page_ns);
        let io = match self.page_cache_read(space, first, n, ra_pages) {
            Err(failure) => return failure,
            Ok(io) => io,
        };
        for idx in first..first + n {
            let e = self.spaces[space as usize].pte(idx);
            if pte::is_present(e) {
                self.folio_mark_accessed(pte::pfn(e));
            }
        }
        match io {
            None => FaultResult::Done,
            Some((until_ns, memstall)) => FaultResult::Blocked { until_ns, memstall },
        }
    }

    /// `filemap_fault`: an mmap load found the page absent from the page table. A
    /// cached page is mapped (minor fault); otherwise it is read with read-around.
    pub fn filemap_fault(&mut self, space: u32, index: u32, ra_pages: u32) -> FaultResult {
        self.in_lru_fault = true;
        let r = self.do_filemap_fault(space, index, ra_pages);
        self.in_lru_fault = false;
        r
    }

    fn do_filemap_fault(&mut self, space: u32, index: u32, ra_pages: u32) -> FaultResult {
        self.count_memcg(self.current_memcg(), Ev::Pgfault, 1);
        let e = self.spaces[space as usize].pte(index);
        if pte::is_present(e) {
            self.charge(self.cfg.costs.minor_fault_ns);
            let pfn = pte::pfn(e);
            self.frames[pfn as usize].set(pg::MAPPED);
            self.spaces[space as usize].set_bits(index, pte::YOUNG);
            return FaultResult::Done;
        }
        self.charge(self.cfg.costs.major_fault_ns);
        self.count_memcg(self.current_memcg(), Ev::Pgmajfault, 1);
        let io = match self.page_cache_read(space, index, 1, ra_pages) {
            Err(failure) => return failure,
            Ok(io) => io,
        };
        let e = self.spaces[space as usize].pte(index);
        self.frames[pte::pfn(e) as usize].set(pg::MAPPED);
        self.spaces[space as usize].set_bits(index, pte::YOUNG);
        match io {
            None => FaultResult::Done,
            Some((until_ns, memstall)) => FaultResult::Blocked { until_ns, memstall },
        }
    }

    /// `generic_perform_write`: write() of whole pages `[first, first + n)`. Missing
    /// pages are allocated without reading (the write covers them); all end up dirty.
    /// The write path does not mark pages accessed. A writer over the dirty limits is
    /// paused (`balance_dirty_pages`): the write completes when the pause ends.
    pub fn filemap_write(&mut self, space: u32, first: u32, n: u32) -> FaultResult {
        self.charge(self.cfg.costs.syscall_ns + n as u64 * self.cfg.costs.copy_page_ns);
        for idx in first..first + n {
            let e = self.spaces[space as usize].pte(idx);
            let pfn = if pte::is_present(e) {
                pte::pfn(e)
            } else {
                match self.filemap_add_folio(space, idx) {
                    Some(p) => p,
                    None => return self.alloc_failure(),
                }
            };
            self.folio_mark_dirty(pfn);
        }
        // balance_dirty_pages_ratelimited: the kernel checks after each page copied;
        // here once per write(), with all its pages counted (see writeback.rs).
        match self.balance_dirty_pages_ratelimited() {
            Some(until_ns) => FaultResult::Blocked {
                until_ns,
                memstall: false,
            },
            None => FaultResult::Done,
        }
    }
}

impl Mm {
    /// `drop_pagecache_sb` → `invalidate_mapping_pages` over every file: each clean,
    /// unmapped page cache page not under writeback and not isolated is removed
    /// (leaving no shadow entry: an invalidation is not a reclaim) and freed. Returns
    /// the pages dropped. CPU: `reclaim_page` each.
    pub fn drop_pagecache(&mut self) -> u64 {
        let mut dropped = 0u64;
        for si in 0..self.spaces.len() {
            let s = &self.spaces[si];
            if s.dead || s.kind != super::SpaceKind::File {
                continue;
            }
            let n = s.written().len();
            for idx in 0..n as u32 {
                let e = self.spaces[si].pte(idx);
                if !pte::is_present(e) {
                    continue;
                }
                let pfn = pte::pfn(e);
                let f = self.frames[pfn as usize];
                let busy = pg::DIRTY | pg::WRITEBACK | pg::MAPPED | pg::UNEVICTABLE;
                if f.flags & busy != 0 || !f.test(pg::LRU) {
                    continue;
                }
                self.lruvec_del_folio(pfn);
                let s = &mut self.spaces[si];
                *s.pte_mut(idx) = pte::NONE;
                s.nr_present -= 1;
                self.free_pages(pfn, 0);
                dropped += 1;
            }
        }
        self.charge(dropped * self.cfg.costs.reclaim_page_ns);
        self.count(Ev::DropPagecache, 1);
        dropped
    }
}
