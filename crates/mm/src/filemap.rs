//! The page cache: buffered read() and write(), and mmap faults on files
//! (mm/filemap.c `filemap_read`, `filemap_fault`, `filemap_map_pages`,
//! `generic_perform_write`, `filemap_add_folio`; mm/memory.c `do_read_fault` and
//! `do_fault_around`; kernel-reference §2.1, §2.13). Readahead is mm/readahead.rs.

use super::memcontrol::PageState;
use super::memory::FaultResult;
use super::page::{pg, pte, Pfn};
use super::page_alloc::{Gfp, GFP_HIGHUSER_MOVABLE};
use super::readahead::MMAP_LOTSAMISS;
use super::{Advice, Mm};
use crate::trace::Tp;
use crate::vm_event_item::Ev;

/// `FOLIO_BATCH_SIZE`: the folios `filemap_get_read_batch` takes at a time.
const FOLIO_BATCH_SIZE: u64 = 31;

/// A read() the kernel is part-way through (`struct kiocb` and its iterator): the
/// pages copied so far, and `ra->prev_pos` as the read found it (`last_pos`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadIter {
    pub copied: u32,
    pub prev_pos: i64,
}

impl Mm {
    /// `filemap_add_folio`: a new page for `space[index]`, allocated with `gfp` and
    /// charged, on the inactive file list (or the active one when its shadow says it
    /// is a recent refault: readahead's pages count as refaults when they are added,
    /// used or not). `None` on allocation or charge failure.
    pub(super) fn filemap_add_folio(&mut self, space: u32, index: u32, gfp: Gfp) -> Option<Pfn> {
        let old = self.spaces[space as usize].pte(index);
        let pfn = self.alloc_pages(gfp, 0)?;
        let f = &mut self.frames[pfn as usize];
        f.mapping = space;
        f.index = index;
        if !self.mem_cgroup_charge_gfp(pfn, gfp.noretry) {
            self.free_pages(pfn, 0);
            return None;
        }
        // The allocation may have reclaimed; the slot is still what it was (nothing but
        // this path fills it).
        if pte::kind(old) == pte::SHADOW {
            self.workingset_refault(pfn, pte::shadow_value(old));
        }
        self.folio_add_lru(pfn);
        let e = self.mk_pte(pfn);
        let s = &mut self.spaces[space as usize];
        *s.pte_mut(index) = e;
        s.nr_present += 1;
        Some(pfn)
    }

    /// `filemap_create_folio` → `filemap_read_folio`: readahead left `space[index]`
    /// missing (off, or out of memory); add it with the caller's rights and read it
    /// alone.
    fn filemap_create_folio(&mut self, space: u32, index: u32) -> Result<(), FaultResult> {
        if self
            .filemap_add_folio(space, index, GFP_HIGHUSER_MOVABLE)
            .is_none()
        {
            return Err(self.alloc_failure());
        }
        self.read_pages(space, index as u64, 1);
        Ok(())
    }

    /// Whether page cache page `pfn` is locked by a read still in flight.
    pub fn folio_locked_for_read(&mut self, pfn: Pfn) -> bool {
        let f = self.frames[pfn as usize];
        self.read_pending_until(f.mapping, f.index).is_some()
    }

    /// How long a reader of `space[first..end)` waits for reads in flight, and whether
    /// a page it waits for was in the working set (a refault: the wait is a memory
    /// stall, `folio_wait_bit_common`'s thrashing accounting).
    fn wait_on_reads(&mut self, space: u32, first: u32, end: u32) -> FaultResult {
        let mut until_ns = 0;
        let mut memstall = false;
        for idx in first..end {
            if let Some(done) = self.read_pending_until(space, idx) {
                until_ns = until_ns.max(done);
                let e = self.spaces[space as usize].pte(idx);
                memstall |=
                    pte::is_present(e) && self.frames[pte::pfn(e) as usize].test(pg::WORKINGSET);
            }
        }
        if until_ns > self.now {
            FaultResult::Blocked { until_ns, memstall }
        } else {
            FaultResult::Done
        }
    }

    /// `filemap_read`: read() of pages `[first, first + n)`, a batch at a time as
    /// `filemap_get_pages` gets them: a missing page starts synchronous readahead (and
    /// is read alone if readahead did not bring it); `filemap_get_read_batch` takes
    /// the cached run from there, at most FOLIO_BATCH_SIZE pages, up to and including
    /// a page marked PG_readahead (which starts the next asynchronous window) or one
    /// still being read; the batch's pages are copied and marked accessed (except a
    /// first page the previous read ended in), and the loop goes on. A batch ending
    /// in a page still being read is copied up to it and the read sleeps until that
    /// page is uptodate (`filemap_update_page`): it returns `Blocked` with `iter`
    /// saying where it stopped, and the caller calls again after the sleep to go on.
    /// So a read bigger than memory charges its pages as it goes, and reclaim can take
    /// those already copied. `iter` is None for a new read(); `Done` once all `n`
    /// pages are copied.
    ///
    /// The kernel waits before copying the pages ahead of the one it waits for (its
    /// batch holds references to them, so reclaim cannot take them meanwhile); here
    /// they are copied first, which leaves them with the reader all the same.
    pub fn filemap_read(
        &mut self,
        space: u32,
        first: u32,
        n: u32,
        iter: &mut Option<ReadIter>,
    ) -> FaultResult {
        let it = match *iter {
            Some(it) => it,
            None => {
                if let Err(r) = self.vfs_open(space) {
                    return r;
                }
                self.charge(self.cfg.costs.syscall_ns);
                let it = ReadIter {
                    copied: 0,
                    prev_pos: self.spaces[space as usize].ra.prev_pos,
                };
                *iter = Some(it);
                it
            }
        };
        let last = first as u64 + n as u64;
        // The first page is not marked accessed again if the previous read ended in it.
        let skip_first = it.prev_pos > 0 && (it.prev_pos - 1) >> 12 == first as i64;
        let mut index = first as u64 + it.copied as u64;
        while index < last {
            // filemap_get_pages.
            if !self.page_cache_present(space, index) {
                if let Err(r) = self.page_cache_sync_ra(space, index, last - index) {
                    return r;
                }
                if !self.page_cache_present(space, index) {
                    if let Err(r) = self.filemap_create_folio(space, index as u32) {
                        return r;
                    }
                }
            }
            // filemap_get_read_batch: the cached run from index, ending after a page
            // not yet uptodate or one marked PG_readahead.
            let mut end = index;
            let mut locked_until = None;
            while end < last
                && end - index < FOLIO_BATCH_SIZE
                && self.page_cache_present(space, end)
            {
                let idx = end as u32;
                end += 1;
                let pfn = pte::pfn(self.spaces[space as usize].pte(idx));
                let pending = self
                    .read_pending_until(space, idx)
                    .filter(|&done| done > self.clock());
                if pending.is_some() {
                    locked_until = pending;
                    break;
                }
                if self.frames[pfn as usize].test(pg::READAHEAD) {
                    break;
                }
            }
            let tail = end - 1;
            let tail_pfn = pte::pfn(self.spaces[space as usize].pte(tail as u32));
            if self.frames[tail_pfn as usize].test(pg::READAHEAD) {
                // filemap_readahead.
                if let Err(r) = self.page_cache_async_ra(space, tail_pfn, tail, last - tail) {
                    return r;
                }
            }
            if locked_until.is_some() {
                end = tail; // the batch without the page being read
            }
            self.charge((end - index) * self.cfg.costs.copy_page_ns);
            for idx in index..end {
                // The kernel's batch holds references to its folios, so reclaim for
                // the async window cannot free them; here it may have, and the copy
                // is made all the same.
                let e = self.spaces[space as usize].pte(idx as u32);
                if pte::is_present(e) && !(skip_first && idx == first as u64) {
                    self.folio_mark_accessed(pte::pfn(e));
                }
            }
            index = end;
            if let Some(it) = iter.as_mut() {
                it.copied = (index - first as u64) as u32;
            }
            if let Some(until_ns) = locked_until {
                // folio_put_wait_locked, a memory stall if the page was in the
                // working set (a refault being read back).
                let e = self.spaces[space as usize].pte(index as u32);
                let memstall =
                    pte::is_present(e) && self.frames[pte::pfn(e) as usize].test(pg::WORKINGSET);
                return FaultResult::Blocked { until_ns, memstall };
            }
        }
        self.spaces[space as usize].ra.prev_pos = (last * 4096) as i64;
        FaultResult::Done
    }

    /// Whether a read() of `space[idx..idx + n]` would change nothing but the clock and
    /// the file position (`workload::skip_fio` and `workload::skip_file` skip such
    /// reads): every page cached, none with a read on record ([`Mm::read_on_record`]:
    /// in flight, or completed but not yet forgotten by a read) or marked
    /// PG_readahead, and each one's [`Mm::folio_access_settled`]. Such a read is
    /// [`Mm::filemap_read`]'s syscall and `n` page copies of CPU time. Changes
    /// nothing and reads no clock: threads' slices run in event order, not in clock
    /// order, so what one finds settled must be settled at every thread's clock (a
    /// completed read is forgotten by the next read of its file, at that read's time).
    pub fn filemap_read_settled(&self, space: u32, idx: u32, n: u32) -> bool {
        if self.vfs.file(space).d_count == 0 {
            return false; // the open (vfs_open) comes first
        }
        (idx..idx + n).all(|i| {
            let e = self.spaces[space as usize].pte(i);
            pte::is_present(e)
                && !self.frames[pte::pfn(e) as usize].test(pg::READAHEAD)
                && !self.read_on_record(space, i)
                && self.folio_access_settled(pte::pfn(e))
        })
    }

    /// Whether the pages of a write() of `space[idx..idx + n]` are settled: the file
    /// open, every page cached and already dirty (`folio_mark_dirty` returns at once;
    /// the write path marks nothing accessed). While the writer's dirty throttling is
    /// also quiet ([`Mm::dirty_ratelimit_quiet`], the task's state, not the pages')
    /// such a write changes nothing but the clock (`workload::skip_fio` skips it): it
    /// is [`Mm::filemap_write`]'s syscall and `n` page copies of CPU time.
    pub fn filemap_write_settled(&self, space: u32, idx: u32, n: u32) -> bool {
        self.vfs.file(space).d_count > 0
            && (idx..idx + n).all(|i| {
                let e = self.spaces[space as usize].pte(i);
                pte::is_present(e) && self.frames[pte::pfn(e) as usize].test(pg::DIRTY)
            })
    }

    /// `do_read_fault`: an mmap load of `space[index]` found no page-table entry.
    /// Fault-around first maps the cached pages of the aligned window around it; if
    /// that mapped the page, the fault is done, else `filemap_fault`.
    pub fn do_read_fault(&mut self, space: u32, index: u32) -> FaultResult {
        if let Err(r) = self.vfs_open(space) {
            return r;
        }
        if let Err(r) = self.file_pte_alloc(space, index) {
            return r;
        }
        self.in_lru_fault = true;
        self.count_memcg(self.current_memcg(), Ev::Pgfault, 1);
        let r = if self.cfg.fault_around_pages > 1 && self.do_fault_around(space, index) {
            self.charge(self.cfg.costs.minor_fault_ns);
            FaultResult::Done
        } else {
            self.filemap_fault(space, index)
        };
        self.in_lru_fault = false;
        r
    }

    /// `pte_alloc` in `do_read_fault` (before fault-around, whose window lies within
    /// one page table): the mapper's page table over `index`'s 2 MiB range.
    fn file_pte_alloc(&mut self, space: u32, index: u32) -> Result<(), FaultResult> {
        let range = (index / super::lru_gen::PTRS_PER_PTE) as usize;
        let s = &self.spaces[space as usize];
        if s.mapper.is_none()
            || s.file_pt_map
                .get(range / 64)
                .is_some_and(|w| w >> (range % 64) & 1 != 0)
        {
            return Ok(());
        }
        if self.pte_alloc_one(space)? {
            let map = &mut self.spaces[space as usize].file_pt_map;
            if map.len() <= range / 64 {
                map.resize(range / 64 + 1, 0);
            }
            map[range / 64] |= 1 << (range % 64);
        }
        Ok(())
    }

    /// `zap_page_range` over a file mapping as its mapper exits: its pages stay in
    /// the page cache, unmapped (a dirty PTE dirties its folio), and its page tables
    /// are freed.
    pub fn unmap_file_mapping(&mut self, space: u32) {
        for idx in 0..self.spaces[space as usize].written().len() as u32 {
            let e = self.spaces[space as usize].pte(idx);
            if !pte::is_present(e) {
                continue;
            }
            let pfn = pte::pfn(e);
            if !self.frames[pfn as usize].test(pg::MAPPED) {
                continue;
            }
            self.frames[pfn as usize].clear(pg::MAPPED);
            self.mod_page_state(pfn, PageState::FileMapped, -1);
            *self.spaces[space as usize].pte_mut(idx) = e & !(pte::YOUNG | pte::DIRTY);
            if e & pte::DIRTY != 0 {
                self.folio_mark_dirty(pfn);
            }
        }
        for pfn in std::mem::take(&mut self.spaces[space as usize].pt_pages) {
            self.pte_free(space, pfn);
        }
        let s = &mut self.spaces[space as usize];
        s.file_pt_map.clear();
        s.mapper = None;
    }

    /// `do_fault_around`: `filemap_map_pages` over the `fault_around_pages`-aligned
    /// window holding `index` (within the file; the window never crosses a page
    /// table). True if `index` got mapped.
    fn do_fault_around(&mut self, space: u32, index: u32) -> bool {
        let nr = self.cfg.fault_around_pages;
        let from = index / nr * nr;
        let to = (from + nr).min(self.spaces[space as usize].nr_pages());
        self.filemap_map_pages(space, from, to, index)
    }

    /// `filemap_map_pages`: map the cached, uptodate pages of `[from, to)` not marked
    /// PG_readahead (their fault must reach the async readahead) and not mapped yet;
    /// the entries are young, as x86 prefaults them. Each such page not in the working
    /// set counts as an mmap hit against `mmap_miss`. True if `target` got mapped.
    fn filemap_map_pages(&mut self, space: u32, from: u32, to: u32, target: u32) -> bool {
        trace_event!(
            self,
            Tp::FilemapMapPages,
            "ino={space:x} ofs={from} max_ofs={}",
            to - 1
        );
        let mut hits = 0u32;
        let mut mapped_target = false;
        for idx in from..to {
            let e = self.spaces[space as usize].pte(idx);
            if !pte::is_present(e) || self.read_pending_until(space, idx).is_some() {
                continue;
            }
            let pfn = pte::pfn(e);
            let f = self.frames[pfn as usize];
            if f.test(pg::READAHEAD) {
                continue;
            }
            if !f.test(pg::WORKINGSET) {
                hits += 1;
            }
            if f.test(pg::MAPPED) {
                continue;
            }
            self.frames[pfn as usize].set(pg::MAPPED);
            self.mod_page_state(pfn, PageState::FileMapped, 1);
            self.spaces[space as usize].set_bits(idx, pte::YOUNG);
            mapped_target |= idx == target;
        }
        let ra = &mut self.spaces[space as usize].ra;
        ra.mmap_miss = ra.mmap_miss.saturating_sub(hits);
        mapped_target
    }

    /// `filemap_fault`: the page is cached (a minor fault; `do_async_mmap_readahead`
    /// may push the window on from a marked page) or not (a major fault;
    /// `do_sync_mmap_readahead`: the sequential window under MADV_SEQUENTIAL, none
    /// under MADV_RANDOM, else read-around centred on the fault unless the file's
    /// mmap misses outnumber its hits by MMAP_LOTSAMISS). The fault waits for the
    /// page's read, then maps it.
    pub fn filemap_fault(&mut self, space: u32, index: u32) -> FaultResult {
        trace_event!(self, Tp::FilemapFault, "ino={space:x} ofs={index}");
        let advice = self.spaces[space as usize].advice;
        let ra_pages = self.spaces[space as usize].ra.ra_pages;
        let readahead = advice != Advice::Random && ra_pages > 0;
        let e = self.spaces[space as usize].pte(index);
        if pte::is_present(e) {
            self.charge(self.cfg.costs.minor_fault_ns);
            // The fault holds a reference to the page: reclaim during the async
            // window's allocations cannot free it. Here: mapped first.
            let wait = self.wait_on_reads(space, index, index + 1);
            let pfn = pte::pfn(e);
            self.map_file_page(space, index, pfn);
            if readahead {
                let ra = &mut self.spaces[space as usize].ra;
                ra.mmap_miss = ra.mmap_miss.saturating_sub(1);
                if self.frames[pfn as usize].test(pg::READAHEAD) {
                    if let Err(r) = self.page_cache_async_ra(space, pfn, index as u64, ra_pages) {
                        return r;
                    }
                }
            }
            return wait;
        }
        self.charge(self.cfg.costs.major_fault_ns);
        self.count_memcg(self.current_memcg(), Ev::Pgmajfault, 1);
        if readahead {
            if let Err(r) = self.do_sync_mmap_readahead(space, index, advice) {
                return r;
            }
        }
        // Readahead adds its pages locked: the page is there unless readahead was off
        // or could not allocate it.
        if !self.page_cache_present(space, index as u64) {
            if let Err(r) = self.filemap_create_folio(space, index) {
                return r;
            }
        }
        let wait = self.wait_on_reads(space, index, index + 1);
        let pfn = pte::pfn(self.spaces[space as usize].pte(index));
        self.map_file_page(space, index, pfn);
        wait
    }

    /// The fault's page-table entry for `space[index]` (young: the access follows).
    fn map_file_page(&mut self, space: u32, index: u32, pfn: Pfn) {
        if !self.frames[pfn as usize].test(pg::MAPPED) {
            self.mod_page_state(pfn, PageState::FileMapped, 1);
        }
        self.frames[pfn as usize].set(pg::MAPPED);
        self.spaces[space as usize].set_bits(index, pte::YOUNG);
    }

    /// `do_sync_mmap_readahead` for a mapping with readahead on (not MADV_RANDOM).
    fn do_sync_mmap_readahead(
        &mut self,
        space: u32,
        index: u32,
        advice: Advice,
    ) -> Result<(), FaultResult> {
        let ra = &mut self.spaces[space as usize].ra;
        let ra_pages = ra.ra_pages;
        if advice == Advice::Sequential {
            return self.page_cache_sync_ra(space, index as u64, ra_pages);
        }
        if ra.mmap_miss < MMAP_LOTSAMISS * 10 {
            ra.mmap_miss += 1;
        }
        if ra.mmap_miss > MMAP_LOTSAMISS {
            return Ok(());
        }
        // Read-around: the window centred on the fault, its last quarter asynchronous.
        ra.start = (index as u64).saturating_sub(ra_pages / 2);
        ra.size = ra_pages;
        ra.async_size = ra_pages / 4;
        ra.order = 0;
        let (start, size, async_size) = (ra.start, ra.size, ra.async_size);
        self.do_page_cache_ra(space, start, size, async_size)
    }

    /// `generic_perform_write`: write() of whole pages `[first, first + n)`. Missing
    /// pages are allocated without reading (the write covers them); all end up dirty.
    /// The write path does not mark pages accessed. A writer over the dirty limits is
    /// paused (`balance_dirty_pages`): the write completes when the pause ends.
    pub fn filemap_write(&mut self, space: u32, first: u32, n: u32) -> FaultResult {
        if let Err(r) = self.vfs_open(space) {
            return r;
        }
        self.charge(self.cfg.costs.syscall_ns + n as u64 * self.cfg.costs.copy_page_ns);
        for idx in first..first + n {
            let e = self.spaces[space as usize].pte(idx);
            let pfn = if pte::is_present(e) {
                pte::pfn(e)
            } else {
                match self.filemap_add_folio(space, idx, GFP_HIGHUSER_MOVABLE) {
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
            self.inode_mapping_shrunk(si as u32);
        }
        self.charge(dropped * self.cfg.costs.reclaim_page_ns);
        self.count(Ev::DropPagecache, 1);
        dropped
    }
}
