//! File readahead (mm/readahead.c, as of v6.18): the per-file window
//! (`struct file_ra_state`), on-demand readahead (`page_cache_sync_ra` on a cache miss,
//! `page_cache_async_ra` on a page marked PG_readahead), `force_page_cache_ra` for
//! FMODE_RANDOM files, and `do_page_cache_ra` → `page_cache_ra_unbounded`, which adds
//! the missing pages of a window to the page cache, marks the first page of its
//! asynchronous part, and submits one device read per run of missing pages.
//!
//! Page cache folios are order 0 here, so `page_cache_ra_order` always takes the path
//! the kernel takes for a mapping without large folio support (`do_page_cache_ra` of
//! the whole window); `ra->order` still steps by 2 per asynchronous window, as it
//! trims the window's end to an aligned boundary.
//!
//! A page under a read is in the page cache but locked and not uptodate until the read
//! completes: [`PendingRead`] records `[first, end)` and the completion time, and a
//! reader that needs such a page waits for it (`folio_wait_locked`); reclaim skips it
//! (`folio_trylock` fails in `shrink_folio_list`).

use super::memory::FaultResult;
use super::page::{pg, pte, Pfn};
use super::page_alloc::{Gfp, GFP_HIGHUSER_MOVABLE};
use super::{Advice, Mm};
use crate::trace::Tp;
use crate::vm_event_item::Ev;

/// `struct file_ra_state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileRaState {
    /// Where the last readahead window began, its size, and how many pages at its end
    /// are the asynchronous part (the first of them carries PG_readahead).
    pub start: u64,
    pub size: u64,
    pub async_size: u64,
    /// The window's maximum: the device's read_ahead_kb, doubled by
    /// POSIX_FADV_SEQUENTIAL.
    pub ra_pages: u64,
    /// Folio order the next window asks for (steps by 2 per asynchronous window).
    pub order: u32,
    /// mmap faults that missed the page cache, less those that found it (read-around
    /// stops above `MMAP_LOTSAMISS`).
    pub mmap_miss: u32,
    /// The byte after the last read() (-1: none yet).
    pub prev_pos: i64,
}

/// `MMAP_LOTSAMISS`: more mmap misses than this and read-around gives up.
pub const MMAP_LOTSAMISS: u32 = 100;

/// `force_page_cache_ra` reads in chunks of this many pages (2 MiB).
const FORCE_CHUNK_PAGES: u64 = 512;

/// `page_cache_prev_miss` found no hole down to page 0: the file is cached from its
/// start (the kernel's ULONG_MAX).
const NO_MISS: u64 = u64::MAX;

impl FileRaState {
    /// `file_ra_state_init`: the device's window, no history.
    pub fn new(ra_pages: u32) -> FileRaState {
        FileRaState {
            start: 0,
            size: 0,
            async_size: 0,
            ra_pages: ra_pages as u64,
            order: 0,
            mmap_miss: 0,
            prev_pos: -1,
        }
    }
}

/// A device read into a file's page cache: pages `[first, end)` are locked until
/// `done_ns`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PendingRead {
    pub first: u32,
    pub end: u32,
    pub done_ns: u64,
}

/// `get_init_ra_size`: the first window for a request of `size` pages: the request
/// rounded up to a power of two, ×4 when small, ×2 when medium, else the maximum.
pub fn get_init_ra_size(size: u64, max: u64) -> u64 {
    let newsize = size.max(1).next_power_of_two();
    if newsize <= max / 32 {
        newsize * 4
    } else if newsize <= max / 4 {
        newsize * 2
    } else {
        max
    }
}

/// `get_next_ra_size`: the window after one of `cur` pages: ×4 while small, ×2 up to
/// half the maximum, then the maximum.
pub fn get_next_ra_size(cur: u64, max: u64) -> u64 {
    if cur < max / 16 {
        4 * cur
    } else if cur <= max / 2 {
        2 * cur
    } else {
        max
    }
}

/// What readahead allocates with (`readahead_gfp_mask`): __GFP_NORETRY | __GFP_NOWARN,
/// so a window gives up under pressure instead of invoking the OOM killer.
const READAHEAD_GFP: Gfp = Gfp {
    noretry: true,
    ..GFP_HIGHUSER_MOVABLE
};

impl Mm {
    /// Whether `space[idx]` holds a page cache folio (locked or not).
    #[inline]
    pub fn page_cache_present(&self, space: u32, idx: u64) -> bool {
        let s = &self.spaces[space as usize];
        idx < s.nr_pages() as u64 && pte::is_present(s.pte(idx as u32))
    }

    /// When the read that brings `space[idx]` in completes, if it has not yet (the
    /// folio is locked and not uptodate; u64::MAX while readahead is still adding its
    /// run). Forgets reads that completed.
    pub fn read_pending_until(&mut self, space: u32, idx: u32) -> Option<u64> {
        let now = self.now;
        let s = &mut self.spaces[space as usize];
        if s.adding
            .is_some_and(|(first, end)| (first..end).contains(&idx))
        {
            return Some(u64::MAX);
        }
        let reads = &mut s.reads;
        if reads.is_empty() {
            return None;
        }
        reads.retain(|r| r.done_ns > now);
        reads
            .iter()
            .filter(|r| (r.first..r.end).contains(&idx))
            .map(|r| r.done_ns)
            .max()
    }

    /// Whether a read that brings `space[idx]` in is on record: being added, in
    /// flight, or completed and not yet forgotten (by [`Mm::read_pending_until`], as
    /// a read of the file does). Unlike that, the same at every clock: what one
    /// thread finds at its clock holds at another's.
    pub fn read_on_record(&self, space: u32, idx: u32) -> bool {
        let s = &self.spaces[space as usize];
        s.adding
            .is_some_and(|(first, end)| (first..end).contains(&idx))
            || s.reads.iter().any(|r| (r.first..r.end).contains(&idx))
    }

    /// `page_cache_prev_miss`: the first index at or below `index` with no folio,
    /// looking at most `max_scan` entries; `NO_MISS` if every page down to 0 is
    /// cached (and the scan had room to wrap), else the last index looked at.
    pub fn page_cache_prev_miss(&self, space: u32, index: u64, max_scan: u64) -> u64 {
        let mut i = index;
        for scanned in 1..=max_scan {
            if !self.page_cache_present(space, i) {
                return i;
            }
            if i == 0 {
                // The next step would wrap to ULONG_MAX, where nothing is cached.
                return if scanned < max_scan { NO_MISS } else { 0 };
            }
            if scanned < max_scan {
                i -= 1;
            }
        }
        i
    }

    /// `page_cache_next_miss`: the first index at or above `index` with no folio,
    /// looking at most `max_scan` entries; `index + max_scan` if all are cached.
    pub fn page_cache_next_miss(&self, space: u32, index: u64, max_scan: u64) -> u64 {
        (index..index + max_scan)
            .find(|&i| !self.page_cache_present(space, i))
            .unwrap_or(index + max_scan)
    }

    /// The `page_cache_sync_ra` / `page_cache_async_ra` tracepoints: the request and
    /// the file's window as it stands.
    fn trace_ra(&mut self, tp: Tp, space: u32, index: u64, req_count: u64) {
        let ra = self.spaces[space as usize].ra;
        trace_event!(
            self,
            tp,
            "ino={space:x} index={index} req_count={req_count} order={} size={} \
                 async_size={} ra_pages={} mmap_miss={} prev_pos={}",
            ra.order,
            ra.size,
            ra.async_size,
            ra.ra_pages,
            ra.mmap_miss,
            ra.prev_pos
        );
    }

    /// `ractl_max_pages`: a request bigger than the window may read up to the device's
    /// largest request.
    fn ractl_max_pages(&self, space: u32, req_size: u64) -> u64 {
        let max = self.spaces[space as usize].ra.ra_pages;
        let io = self.cfg.io_pages as u64;
        if req_size > max && io > max {
            req_size.min(io)
        } else {
            max
        }
    }

    /// `page_cache_sync_ra`: a read (or fault) of `req_count` pages from `index` found
    /// `space[index]` missing. Decides the window by the file's history (start of
    /// file, a sequential miss after the previous read, an oversized read; else the
    /// cached run behind `index`, or a small random read) and reads it.
    pub fn page_cache_sync_ra(
        &mut self,
        space: u32,
        index: u64,
        mut req_count: u64,
    ) -> Result<(), FaultResult> {
        let s = &self.spaces[space as usize];
        let mut forced = s.advice == Advice::Random;
        let ra = s.ra;
        self.trace_ra(Tp::PageCacheSyncRa, space, index, req_count);
        if ra.ra_pages == 0 {
            req_count = 1;
            forced = true;
        }
        if forced {
            return self.force_page_cache_ra(space, index, req_count);
        }
        let max_pages = self.ractl_max_pages(space, req_count);
        // prev_pos -1 (no read yet) shifts to a huge index: never "sequential".
        let prev_index = (ra.prev_pos as u64) >> 12;
        let (start, size, async_size) =
            if index == 0 || req_count > max_pages || index.wrapping_sub(prev_index) <= 1 {
                let size = get_init_ra_size(req_count, max_pages);
                let async_size = if size > req_count {
                    size - req_count
                } else {
                    size >> 1
                };
                (index, size, async_size)
            } else {
                // The trace a sequential stream leaves: the cached run behind index.
                let miss = self.page_cache_prev_miss(space, index - 1, max_pages);
                let mut contig = index.wrapping_sub(miss).wrapping_sub(1);
                if contig <= req_count {
                    // A small random read: as is, the state untouched.
                    return self.do_page_cache_ra(space, index, req_count, 0);
                }
                if miss == NO_MISS {
                    contig *= 2; // cached from the start: a whole-file read
                }
                (index, (contig + req_count).min(max_pages), 1)
            };
        let ra = &mut self.spaces[space as usize].ra;
        ra.start = start;
        ra.size = size;
        ra.async_size = async_size;
        ra.order = 0;
        self.do_page_cache_ra(space, start, size, async_size)
    }

    /// `page_cache_async_ra`: a reader reached `space[index]` (page `pfn`), which
    /// carries PG_readahead: push the window forward (ramping it up) before the reader
    /// runs out of pages.
    pub fn page_cache_async_ra(
        &mut self,
        space: u32,
        pfn: Pfn,
        index: u64,
        req_count: u64,
    ) -> Result<(), FaultResult> {
        let ra = self.spaces[space as usize].ra;
        if ra.ra_pages == 0 {
            return Ok(());
        }
        // The same bit is PG_reclaim on a page under writeback.
        if self.frames[pfn as usize].test(pg::WRITEBACK) {
            return Ok(());
        }
        self.trace_ra(Tp::PageCacheAsyncRa, space, index, req_count);
        self.frames[pfn as usize].clear(pg::READAHEAD);
        let max_pages = self.ractl_max_pages(space, req_count);
        let (start, mut size) = if index == ra.start + ra.size - ra.async_size {
            // The expected marker: the stream goes on.
            (
                ra.start + ra.size,
                ra.size.max(get_next_ra_size(ra.size, max_pages)),
            )
        } else {
            // A marker without matching state (interleaved streams): the cached run
            // after it stands for the old async part.
            let start = self.page_cache_next_miss(space, index + 1, max_pages);
            if start == 0 || start - index > max_pages {
                return Ok(());
            }
            (
                start,
                get_next_ra_size(start - index + req_count, max_pages),
            )
        };
        let order = ra.order + 2;
        let align = 1u64 << order.min(max_pages.trailing_zeros());
        let end = start + size;
        let aligned_end = end / align * align;
        if aligned_end > start {
            size -= end - aligned_end;
        }
        let ra = &mut self.spaces[space as usize].ra;
        ra.start = start;
        ra.size = size;
        ra.async_size = size;
        ra.order = order;
        self.do_page_cache_ra(space, start, size, size)
    }

    /// `force_page_cache_ra`: read exactly the request (FMODE_RANDOM, or readahead
    /// off), bounded by the larger of the window and the device's largest request, in
    /// 2 MiB chunks.
    pub fn force_page_cache_ra(
        &mut self,
        space: u32,
        mut index: u64,
        nr_to_read: u64,
    ) -> Result<(), FaultResult> {
        let max_pages = (self.cfg.io_pages as u64).max(self.spaces[space as usize].ra.ra_pages);
        let mut left = nr_to_read.min(max_pages);
        while left > 0 {
            let chunk = left.min(FORCE_CHUNK_PAGES);
            self.do_page_cache_ra(space, index, chunk, 0)?;
            index += chunk;
            left -= chunk;
        }
        Ok(())
    }

    /// `do_page_cache_ra`: the window cut at the end of the file.
    pub fn do_page_cache_ra(
        &mut self,
        space: u32,
        index: u64,
        nr_to_read: u64,
        lookahead: u64,
    ) -> Result<(), FaultResult> {
        let len = self.spaces[space as usize].nr_pages() as u64;
        if index >= len {
            return Ok(());
        }
        let nr = nr_to_read.min(len - index);
        self.page_cache_ra_unbounded(space, index, nr, lookahead)
    }

    /// `page_cache_ra_unbounded`: allocate and add the missing pages of
    /// `[index, index + nr_to_read)`, marking the one `lookahead` pages before the end
    /// PG_readahead, and submit a read per run of new pages (`read_pages`). A page
    /// already cached ends a run. Allocation failure ends the window (the caller reads
    /// what it needs itself); a reclaim that has to sleep unwinds with `Retry` after
    /// the pages added so far are submitted.
    fn page_cache_ra_unbounded(
        &mut self,
        space: u32,
        index: u64,
        nr_to_read: u64,
        lookahead: u64,
    ) -> Result<(), FaultResult> {
        trace_event!(
            self,
            Tp::PageCacheRaUnbounded,
            "ino={space:x} index={index} nr_to_read={nr_to_read} lookahead_size={lookahead}"
        );
        let mark = (lookahead <= nr_to_read).then(|| nr_to_read - lookahead);
        let mut run_start = index;
        let mut run_len = 0u64;
        let mut failure = None;
        for i in 0..nr_to_read {
            let idx = index + i;
            if self.page_cache_present(space, idx) {
                self.read_pages(space, run_start, run_len);
                run_start = idx + 1;
                run_len = 0;
                continue;
            }
            let Some(pfn) = self.filemap_add_folio(space, idx as u32, READAHEAD_GFP) else {
                failure = self.blocked_until.take();
                break;
            };
            if Some(i) == mark {
                self.frames[pfn as usize].set(pg::READAHEAD);
            }
            run_len += 1;
            // filemap_add_folio adds the page locked: reclaim triggered by the next
            // page's allocation cannot take the run's pages before they are read.
            self.spaces[space as usize].adding = Some((run_start as u32, (idx + 1) as u32));
        }
        self.read_pages(space, run_start, run_len);
        match failure {
            Some(until_ns) => Err(FaultResult::Retry { until_ns }),
            None => Ok(()),
        }
    }

    /// `read_pages`: one device read of the `n` pages from `first` (added locked);
    /// they stay locked until it completes. On a ramdisk the copy is done at once, in
    /// the submitter's time (a memory stall for pages of the working set), and they
    /// are uptodate on return.
    pub fn read_pages(&mut self, space: u32, first: u64, n: u64) {
        self.spaces[space as usize].adding = None;
        if n == 0 {
            return;
        }
        self.count(Ev::PgpgIn, n * 4);
        if let Some(copy_ns) = self.storage.synchronous_ns(n, false) {
            self.charge(copy_ns);
            let workingset = (first..first + n).any(|i| {
                let e = self.spaces[space as usize].pte(i as u32);
                pte::is_present(e) && self.frames[pte::pfn(e) as usize].test(pg::WORKINGSET)
            });
            if workingset {
                self.stall_ns += copy_ns;
            }
            return;
        }
        let done_ns = self.storage.submit(self.now, n, false);
        self.spaces[space as usize].reads.push(PendingRead {
            first: first as u32,
            end: (first + n) as u32,
            done_ns,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::{config, task_mm};
    use crate::SpaceKind;

    /// A 256 MiB machine (NVMe storage, read_ahead_kb `ra_kb`) with one task and a
    /// file of `pages` pages.
    fn file_mm(ra_kb: u64, pages: u64) -> (Mm, u32) {
        let mut mm = task_mm(crate::Config {
            ra_pages: (ra_kb / 4) as u32,
            ..config(256)
        });
        let space = mm.add_space(SpaceKind::File, "f".into(), pages, None);
        (mm, space)
    }

    fn cached(mm: &Mm, space: u32) -> Vec<u64> {
        (0..mm.spaces[space as usize].nr_pages() as u64)
            .filter(|&i| mm.page_cache_present(space, i))
            .collect()
    }

    fn marked(mm: &Mm, space: u32) -> Vec<u64> {
        cached(mm, space)
            .into_iter()
            .filter(|&i| {
                let e = mm.spaces[space as usize].pte(i as u32);
                mm.frames[pte::pfn(e) as usize].test(pg::READAHEAD)
            })
            .collect()
    }

    /// (start, size, async_size) of the file's window.
    fn window(mm: &Mm, space: u32) -> (u64, u64, u64) {
        let ra = mm.spaces[space as usize].ra;
        (ra.start, ra.size, ra.async_size)
    }

    /// read() of `n` pages from `first` to its end, sleeping (time moved on) as it
    /// asks; returns its first call's outcome.
    fn read(mm: &mut Mm, space: u32, first: u32, n: u32) -> FaultResult {
        let mut iter = None;
        let first_call = mm.filemap_read(space, first, n, &mut iter);
        let mut r = first_call;
        while let FaultResult::Blocked { until_ns, .. } = r {
            mm.now = mm.now.max(until_ns);
            r = mm.filemap_read(space, first, n, &mut iter);
        }
        assert_eq!(r, FaultResult::Done);
        first_call
    }

    /// `filemap_read_settled` against what a read does. Pages 0 and 2 read in turn
    /// (a read ending in the page the next starts in would not mark it again), no
    /// readahead: a read that is settled leaves the folio as it was, and page 0's read
    /// is settled from the one after the last that changes it: classic, after three
    /// (PG_referenced; activation, which clears it; PG_referenced again), MGLRU after
    /// five (PG_referenced, the 2-bit counter to 1, 2 and 3, then PG_workingset).
    #[test]
    fn a_read_is_settled_once_marking_it_accessed_changes_nothing() {
        for (mglru, changing_reads) in [(false, 3), (true, 5)] {
            let mut cfg = crate::Config {
                ra_pages: 0,
                ..config(256)
            };
            if mglru {
                crate::test_util::mglru(&mut cfg);
            }
            let mut mm = task_mm(cfg);
            let space = mm.add_space(SpaceKind::File, "f".into(), 16, None);
            let mut first_settled = None;
            for k in 0..8 {
                let settled = mm.filemap_read_settled(space, 0, 1);
                let before = mm.page_cache_present(space, 0).then(|| {
                    let e = mm.spaces[space as usize].pte(0);
                    (e, mm.frames[pte::pfn(e) as usize])
                });
                read_page(&mut mm, space, 0);
                let e = mm.spaces[space as usize].pte(0);
                let after = (e, mm.frames[pte::pfn(e) as usize]);
                if settled {
                    let (e0, f0) = before.expect("a settled page is cached");
                    assert_eq!(
                        (e0, f0.flags, f0.gen),
                        (after.0, after.1.flags, after.1.gen)
                    );
                    first_settled.get_or_insert(k);
                } else {
                    assert!(
                        first_settled.is_none(),
                        "mglru {mglru}: read {k} unsettled again"
                    );
                }
                read_page(&mut mm, space, 2);
            }
            assert_eq!(first_settled, Some(changing_reads), "mglru {mglru}");
        }
    }

    /// A folio deactivated by someone other than its reader is logged for a reader
    /// that follows the file (and only then): its next read changes it again.
    #[test]
    fn a_folio_deactivated_elsewhere_is_logged_for_a_watching_reader() {
        let mut mm = task_mm(crate::Config {
            ra_pages: 0,
            ..config(256)
        });
        let space = mm.add_space(SpaceKind::File, "f".into(), 16, None);
        for _ in 0..3 {
            read_page(&mut mm, space, 5);
            read_page(&mut mm, space, 9);
        }
        assert!(mm.filemap_read_settled(space, 5, 1));
        let pfn = |mm: &Mm, i: u32| pte::pfn(mm.spaces[space as usize].pte(i));
        let from = mm.spaces[space as usize].watch_changes();
        let p9 = pfn(&mm, 9);
        mm.folio_deactivate(p9);
        assert_eq!(mm.spaces[space as usize].changes_since(from), Some(&[][..]));
        mm.watching_folios = true;
        let p5 = pfn(&mm, 5);
        mm.folio_deactivate(p5);
        assert_eq!(
            mm.spaces[space as usize].changes_since(from),
            Some(&[5u64][..])
        );
        assert!(!mm.filemap_read_settled(space, 5, 1));
    }

    /// Reads page `idx` with read(), then lets every read in flight complete.
    fn read_page(mm: &mut Mm, space: u32, idx: u32) -> FaultResult {
        let r = read(mm, space, idx, 1);
        mm.now += 1_000_000_000;
        r
    }

    #[test]
    fn a_sequential_read_ramps_the_window_up_to_read_ahead_kb() {
        // read_ahead_kb = 128: ra_pages 32. Worked by hand from page_cache_sync_ra and
        // page_cache_async_ra (v6.18): the first read at page 0 gets
        // get_init_ra_size(1, 32) = 4 pages with async_size 4 - 1 = 3, the marker on
        // page 4 - 3 = 1. Each marker reached moves the window on (start += size),
        // sizes ramp ×2 (×4 below max/16), and ra->order (+2 per window) aligns the
        // window's end to 2^min(order, 5) pages, trimming it where that leaves room.
        let (mut mm, f) = file_mm(128, 1024);
        assert!(matches!(
            read_page(&mut mm, f, 0),
            FaultResult::Blocked { .. }
        ));
        assert_eq!(window(&mm, f), (0, 4, 3));
        assert_eq!(cached(&mm, f), (0..4).collect::<Vec<_>>());
        assert_eq!(marked(&mm, f), vec![1]);
        // (marker, window after it): order 2 → align 4: [4, 12) untrimmed; order 4 →
        // align 16: 16 pages from 12 end at 28, trimmed to 16; order 6 (align 32):
        // [16, 24); [24, 40) → [24, 32); [32, 48); [48, 80) → [48, 64); then
        // read_ahead_kb's 32 pages, aligned.
        let steps = [
            (1, (4, 8, 8)),
            (4, (12, 4, 4)),
            (12, (16, 8, 8)),
            (16, (24, 8, 8)),
            (24, (32, 16, 16)),
            (32, (48, 16, 16)),
            (48, (64, 32, 32)),
            (64, (96, 32, 32)),
            (96, (128, 32, 32)),
        ];
        let mut next = 1u32;
        for (marker, win) in steps {
            // The pages before the marker are cached: reading them starts nothing.
            while next < marker {
                let before = window(&mm, f);
                assert_eq!(
                    read_page(&mut mm, f, next),
                    FaultResult::Done,
                    "page {next}"
                );
                assert_eq!(window(&mm, f), before, "page {next}");
                next += 1;
            }
            // The marker: the next window goes out asynchronously; this read waits
            // for nothing (its own page was read long ago).
            assert_eq!(marked(&mm, f), vec![marker as u64], "before page {marker}");
            assert_eq!(read_page(&mut mm, f, marker), FaultResult::Done);
            assert_eq!(window(&mm, f), win, "after the marker at {marker}");
            assert_eq!(
                marked(&mm, f),
                vec![win.0],
                "window {win:?}: marker at its start"
            );
            assert_eq!(
                cached(&mm, f),
                (0..win.0 + win.1).collect::<Vec<_>>(),
                "after page {marker}"
            );
            next = marker + 1;
        }
    }

    #[test]
    fn a_random_read_far_from_the_last_one_reads_just_the_request() {
        let (mut mm, f) = file_mm(128, 1024);
        read_page(&mut mm, f, 0);
        // Page 500: no sequential history (the previous read ended at 1), nothing
        // cached behind it: a small random read, the window untouched.
        read_page(&mut mm, f, 500);
        assert_eq!(window(&mm, f), (0, 4, 3));
        assert_eq!(cached(&mm, f), vec![0, 1, 2, 3, 500]);
        // Page 510 with 509 not cached: contig 0 ≤ req 1, again just the page. (502
        // would count as sequential: the last read ended at 501, and a one-page gap
        // from there still passes index - prev_index <= 1.)
        read_page(&mut mm, f, 510);
        assert_eq!(cached(&mm, f), vec![0, 1, 2, 3, 500, 510]);
        // Page 4 right after the cached run 0..4: contig 4 > 1, the trace of a stream,
        // and cached from the file's start, so doubled: start 4, size
        // min(2 × 4 + 1, 32) = 9, async 1 (marker on page 12).
        read_page(&mut mm, f, 4);
        assert_eq!(window(&mm, f), (4, 9, 1));
        let want: Vec<u64> = (0..13).chain([500, 510]).collect();
        assert_eq!(cached(&mm, f), want);
        assert_eq!(marked(&mm, f), vec![1, 12]);
    }

    #[test]
    fn fadvise_random_reads_exactly_the_request_and_sequential_doubles_the_window() {
        let (mut mm, f) = file_mm(128, 1024);
        mm.generic_fadvise(f, Advice::Random);
        read_page(&mut mm, f, 0);
        read_page(&mut mm, f, 1);
        assert_eq!(cached(&mm, f), vec![0, 1]);
        assert!(marked(&mm, f).is_empty());
        // An 8-page read under FMODE_RANDOM: those 8 pages, no more.
        read(&mut mm, f, 10, 8);
        assert_eq!(
            cached(&mm, f),
            [0, 1].into_iter().chain(10..18).collect::<Vec<_>>()
        );

        let (mut mm, f) = file_mm(128, 1024);
        mm.generic_fadvise(f, Advice::Sequential);
        assert_eq!(mm.spaces[f as usize].ra.ra_pages, 64);
        // A 16-page read at 0: get_init_ra_size(16, 64) = 16 ≤ 64/4 → 32 pages,
        // async 32 - 16 = 16 (marker at page 16).
        read(&mut mm, f, 0, 16);
        assert_eq!(window(&mm, f), (0, 32, 16));
        assert_eq!(marked(&mm, f), vec![16]);
    }

    /// A read() longer than a readahead window goes through the page cache a batch
    /// at a time and sleeps where it meets a page still being read (filemap_read,
    /// filemap_get_pages, v6.18). 640 pages from 0 with read_ahead_kb = 128 (32
    /// pages) and max_sectors_kb = 1280 (io_pages 320): the request exceeds the
    /// window, so ractl_max_pages allows min(640, 320) = 320 and get_init_ra_size
    /// gives the maximum, 320 pages, async 320 >> 1 = 160 (not bigger than the
    /// request): [0, 320) marked at 160. Page 0 is being read: the read sleeps
    /// before copying anything. Woken, it copies batches of 31 up to the marker,
    /// whose batch sends the next window (expected index 0 + 320 - 160: start 320,
    /// get_next_ra_size(320, 320) = 320 pages, all async, marked at 320), then the
    /// rest of the first window, and meets page 320, marked and still being read: the
    /// next window [640, 960) goes out and the read sleeps with 320 pages copied.
    /// Woken again, it copies the last 320 and is done, every page marked accessed.
    #[test]
    fn a_long_read_goes_a_batch_at_a_time_and_sleeps_on_pages_being_read() {
        let (mut mm, f) = file_mm(128, 1024);
        let mut iter = None;
        let r = mm.filemap_read(f, 0, 640, &mut iter);
        let FaultResult::Blocked { until_ns, .. } = r else {
            panic!("{r:?}")
        };
        assert_eq!(iter.map(|i| i.copied), Some(0));
        assert_eq!(window(&mm, f), (0, 320, 160));
        assert_eq!(cached(&mm, f), (0..320).collect::<Vec<_>>());
        assert_eq!(marked(&mm, f), vec![160]);
        mm.now = until_ns;
        let r = mm.filemap_read(f, 0, 640, &mut iter);
        let FaultResult::Blocked { until_ns, .. } = r else {
            panic!("{r:?}")
        };
        assert_eq!(iter.map(|i| i.copied), Some(320));
        assert_eq!(window(&mm, f), (640, 320, 320));
        assert_eq!(cached(&mm, f), (0..960).collect::<Vec<_>>());
        assert_eq!(marked(&mm, f), vec![640]);
        mm.now = until_ns;
        assert_eq!(mm.filemap_read(f, 0, 640, &mut iter), FaultResult::Done);
        assert_eq!(iter.map(|i| i.copied), Some(640));
        let referenced = (0..960u32)
            .filter(|&i| {
                let e = mm.spaces[f as usize].pte(i);
                mm.frames[pte::pfn(e) as usize].test(pg::REFERENCED)
            })
            .count();
        assert_eq!(referenced, 640);
        assert_eq!(mm.spaces[f as usize].ra.prev_pos, 640 * 4096);
    }

    #[test]
    fn readahead_off_reads_one_page_at_a_time() {
        let (mut mm, f) = file_mm(0, 64);
        read_page(&mut mm, f, 0);
        read_page(&mut mm, f, 1);
        assert_eq!(cached(&mm, f), vec![0, 1]);
        // A 4-page read: ra_pages 0 forces req_count to 1 per missing page.
        read(&mut mm, f, 8, 4);
        assert_eq!(cached(&mm, f), vec![0, 1, 8, 9, 10, 11]);
    }

    #[test]
    fn an_mmap_fault_reads_around_it_and_fault_around_maps_the_neighbours() {
        let (mut mm, f) = file_mm(128, 1024);
        // A major fault at 100 with no history: mmap_miss 1, read-around from
        // 100 - 32/2 = 84, 32 pages, async 32/4 = 8: marker at 84 + 24 = 108.
        let r = mm.do_read_fault(f, 100);
        assert!(matches!(r, FaultResult::Blocked { .. }), "{r:?}");
        assert_eq!(mm.vmstat.get(Ev::Pgmajfault), 1);
        assert_eq!(window(&mm, f), (84, 32, 8));
        assert_eq!(cached(&mm, f), (84..116).collect::<Vec<_>>());
        assert_eq!(marked(&mm, f), vec![108]);
        assert_eq!(mm.spaces[f as usize].ra.mmap_miss, 1);
        // While the read is in flight, a fault at 101 cannot map it (locked): it
        // finds the page cached (a minor fault) and waits for the same read.
        let r = mm.do_read_fault(f, 101);
        assert!(matches!(r, FaultResult::Blocked { .. }), "{r:?}");
        assert_eq!(mm.vmstat.get(Ev::Pgmajfault), 1);
        assert_eq!(mm.spaces[f as usize].ra.mmap_miss, 0, "a cache hit counts");
        mm.now += 1_000_000_000;
        // A fault at 102 once the read is done: fault-around maps the uptodate pages
        // of [96, 112) except the marker 108 (100 and 101 are mapped already).
        assert_eq!(mm.do_read_fault(f, 102), FaultResult::Done);
        let mapped: Vec<u64> = cached(&mm, f)
            .into_iter()
            .filter(|&i| {
                let e = mm.spaces[f as usize].pte(i as u32);
                mm.frames[pte::pfn(e) as usize].test(pg::MAPPED)
            })
            .collect();
        let want: Vec<u64> = (96..112).filter(|&i| i != 108).collect();
        assert_eq!(mapped, want);
        assert_eq!(mm.vmstat.get(Ev::Pgfault), 3);
        // The marker's fault is minor and sends the next window: expected index
        // 84 + 32 - 8 = 108, so start 116, size 2 × 32 capped at 32, order 2.
        assert_eq!(mm.do_read_fault(f, 108), FaultResult::Done);
        assert_eq!(window(&mm, f), (116, 32, 32));
        assert_eq!(mm.vmstat.get(Ev::Pgmajfault), 1);
    }

    #[test]
    fn madvise_random_faults_read_one_page_and_sequential_the_stream() {
        let (mut mm, f) = file_mm(128, 1024);
        mm.madvise(f, Advice::Random);
        mm.do_read_fault(f, 100);
        mm.now += 1_000_000_000;
        mm.do_read_fault(f, 101);
        assert_eq!(cached(&mm, f), vec![100, 101]);
        assert_eq!(mm.vmstat.get(Ev::Pgmajfault), 2);

        // VM_SEQ_READ: page_cache_sync_ra with req_count ra_pages = 32. At page 0:
        // get_init_ra_size(32, 32) = 32, async_size 32 >> 1 = 16 (marker on 16).
        let (mut mm, f) = file_mm(128, 1024);
        mm.madvise(f, Advice::Sequential);
        mm.do_read_fault(f, 0);
        assert_eq!(window(&mm, f), (0, 32, 16));
        assert_eq!(cached(&mm, f), (0..32).collect::<Vec<_>>());
        assert_eq!(marked(&mm, f), vec![16]);
        // At page 100 with nothing cached behind it: no stream yet, just the 32
        // pages asked for, the state untouched, no marker.
        mm.do_read_fault(f, 100);
        assert_eq!(window(&mm, f), (0, 32, 16));
        assert_eq!(cached(&mm, f), (0..32).chain(100..132).collect::<Vec<_>>());
        assert_eq!(marked(&mm, f), vec![16]);
    }

    #[test]
    fn init_and_next_sizes_follow_the_kernel_comment() {
        // readahead.c: "for 128k (32 page) max ra: 1-2 page = 16k, 3-4 page 32k,
        // 5-8 page = 64k, > 8 page = 128k initial".
        let max = 32;
        assert_eq!(get_init_ra_size(1, max), 4);
        assert_eq!(get_init_ra_size(2, max), 4);
        assert_eq!(get_init_ra_size(3, max), 8);
        assert_eq!(get_init_ra_size(4, max), 8);
        assert_eq!(get_init_ra_size(5, max), 16);
        assert_eq!(get_init_ra_size(8, max), 16);
        assert_eq!(get_init_ra_size(9, max), 32);
        assert_eq!(get_init_ra_size(100, max), 32);
        // Ramp-up: ×4 below max/16, ×2 up to max/2, then max.
        assert_eq!(get_next_ra_size(1, max), 4);
        assert_eq!(get_next_ra_size(2, max), 4);
        assert_eq!(get_next_ra_size(4, max), 8);
        assert_eq!(get_next_ra_size(8, max), 16);
        assert_eq!(get_next_ra_size(16, max), 32);
        assert_eq!(get_next_ra_size(17, max), 32);
        assert_eq!(get_next_ra_size(32, max), 32);
    }
}
