//! Dirty page-cache pages and their writeback (mm/page-writeback.c, fs/fs-writeback.c;
//! kernel-reference §5.4, §8.5).
//!
//! A file page written with write() is dirty until the flusher (one per device, here
//! one for the storage device) writes it back: periodically every
//! `dirty_writeback_centisecs` for pages older than `dirty_expire_centisecs`, and at
//! once while dirty pages exceed the background threshold. A page under writeback cannot
//! be freed; reclaim that meets one tags it PG_reclaim so that writeback completion
//! rotates it to the inactive tail. Throttling writers (balance_dirty_pages) and reclaim
//! (reclaim_throttle) belongs to a later issue.

use super::page::{pg, Pfn};
use super::Mm;
use crate::scenario::units::PAGE_SIZE;
use crate::stats::vmstat::Ev;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// `MAX_WRITEBACK_PAGES`: the flusher writes at most 4 MiB per chunk.
pub const MAX_WRITEBACK_PAGES: u64 = 1024;

#[derive(Debug, Clone, Default)]
pub struct Writeback {
    /// Pages in the order they were dirtied (with their dirtied time in ms); entries go
    /// stale when a page is cleaned or freed and are skipped then.
    dirty_fifo: VecDeque<(u32, Pfn)>,
    /// NR_FILE_DIRTY.
    pub nr_dirty: u64,
    /// NR_WRITEBACK (file and swap writes in flight).
    pub nr_writeback: u64,
    /// I/O completions: (time, sequence, pfn).
    inflight: BinaryHeap<Reverse<(u64, u64, Pfn)>>,
    seq: u64,
}

impl Writeback {
    pub fn push_inflight(&mut self, done_ns: u64, pfn: Pfn) {
        self.seq += 1;
        self.inflight.push(Reverse((done_ns, self.seq, pfn)));
        self.nr_writeback += 1;
    }

    /// When the next write completes.
    pub fn next_completion(&self) -> Option<u64> {
        self.inflight.peek().map(|Reverse((t, _, _))| *t)
    }
}

/// What the flusher does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlusherNext {
    /// More to write once the device has drained: run again at this time.
    RunAt(u64),
    /// Nothing urgent: the periodic wake-up.
    SleepUntil(u64),
}

impl Mm {
    /// `folio_mark_dirty` for a page-cache page.
    pub fn folio_mark_dirty(&mut self, pfn: Pfn) {
        let now_ms = (self.now / 1_000_000) as u32;
        let f = &mut self.frames[pfn as usize];
        if f.test(pg::DIRTY) {
            return;
        }
        f.set(pg::DIRTY);
        f.dirtied_ms = now_ms;
        self.wb.dirty_fifo.push_back((now_ms, pfn));
        self.wb.nr_dirty += 1;
        self.count(Ev::NrDirtied, 1);
        // balance_dirty_pages_ratelimited: over the background threshold, kick the
        // flusher (checked every 32 pages, the ratelimit's order of magnitude).
        if self.wb.nr_dirty.is_multiple_of(32) && self.wb.nr_dirty > self.dirty_thresholds().0 {
            self.out.push(super::Out::WakeFlusher { at: self.clock() });
        }
    }

    /// `global_dirtyable_memory`: free pages above the kernel's reserves
    /// (`totalreserve_pages`: each zone's largest lowmem reserve plus its high watermark)
    /// plus the file LRU, + 1 so that it is never 0.
    pub fn global_dirtyable_memory(&self) -> u64 {
        use super::page::lru;
        let totalreserve: u64 = self
            .zones
            .iter()
            .map(|z| {
                (z.lowmem_reserve.iter().max().copied().unwrap_or(0)
                    + z.wmark(super::zone::WMARK_HIGH))
                .min(z.managed_pages)
            })
            .sum();
        let free = self.nr_free_pages();
        free - free.min(totalreserve)
            + self.node_lru_pages(lru::INACTIVE_FILE)
            + self.node_lru_pages(lru::ACTIVE_FILE)
            + 1
    }

    /// `global_dirty_limits` → `domain_dirty_limits`: (background threshold, dirty
    /// threshold) in pages. `vm.dirty_bytes` / `vm.dirty_background_bytes` (rounded up to
    /// pages) when set, else the ratios of dirtyable memory, taken in parts per
    /// PAGE_SIZE as the kernel does; a background threshold at or above the dirty one
    /// becomes half of it. (No RT-task boost: workloads are normal tasks.)
    pub fn dirty_thresholds(&self) -> (u64, u64) {
        let avail = self.global_dirtyable_memory();
        let of_avail = |pct: u64| (pct * PAGE_SIZE / 100) * avail / PAGE_SIZE;
        let thresh = match self.cfg.dirty_bytes {
            0 => of_avail(self.cfg.dirty_ratio),
            bytes => bytes.div_ceil(PAGE_SIZE),
        }
        .min(u32::MAX as u64);
        let mut bg = match self.cfg.dirty_background_bytes {
            0 => of_avail(self.cfg.dirty_background_ratio),
            bytes => bytes.div_ceil(PAGE_SIZE),
        };
        if bg >= thresh {
            bg = thresh / 2;
        }
        (bg, thresh)
    }

    /// Starts writeback of a dirty page-cache page: it is under writeback from now, and
    /// its I/O goes out with the plug (`flush_plug`).
    pub fn start_file_writeback(&mut self, pfn: Pfn, for_reclaim: bool) {
        let f = &mut self.frames[pfn as usize];
        debug_assert!(f.test(pg::DIRTY) && !f.test(pg::WRITEBACK));
        f.clear(pg::DIRTY);
        f.set(pg::WRITEBACK);
        if for_reclaim {
            f.set(pg::RECLAIM);
        }
        self.wb.nr_dirty -= 1;
        self.plug.push((pfn, false));
        self.count(Ev::PgpgOut, 4);
    }

    /// `blk_finish_plug`: submit the plugged writes, one merged request per device.
    pub fn flush_plug(&mut self) {
        if self.plug.is_empty() {
            return;
        }
        let plug = std::mem::take(&mut self.plug);
        let nr_swap = plug.iter().filter(|(_, s)| *s).count() as u64;
        let nr_file = plug.len() as u64 - nr_swap;
        let now = self.now;
        let swap_done = (nr_swap > 0).then(|| {
            let dev = self
                .swap
                .as_mut()
                .and_then(|s| s.device.as_mut())
                .expect("swap writes need a swap device");
            dev.submit(now, nr_swap, true)
        });
        let file_done = (nr_file > 0).then(|| self.storage.submit(now, nr_file, true));
        for (pfn, to_swap) in plug {
            let done = if to_swap { swap_done } else { file_done };
            self.wb.push_inflight(done.expect("submitted"), pfn);
        }
    }

    /// Completes every write that has finished by `now` (`folio_end_writeback`).
    pub fn complete_io(&mut self, now: u64) {
        while let Some(&Reverse((t, _, pfn))) = self.wb.inflight.peek() {
            if t > now {
                break;
            }
            self.wb.inflight.pop();
            self.wb.nr_writeback -= 1;
            self.end_page_writeback(pfn);
        }
    }

    fn end_page_writeback(&mut self, pfn: Pfn) {
        let f = &mut self.frames[pfn as usize];
        f.clear(pg::WRITEBACK);
        if f.is_file_lru() {
            self.count(Ev::NrWritten, 1);
        }
        let f = self.frames[pfn as usize];
        if f.test(pg::ORPHAN) {
            // Its owner died while the I/O was in flight.
            self.lruvec_del_folio(pfn);
            if f.test(pg::SWAPCACHE) {
                self.swap_free(f.swap);
            }
            self.free_pages(pfn, 0);
            return;
        }
        if f.test(pg::DIRTY) && f.is_file_lru() {
            // Redirtied while under writeback: it waits for the flusher again.
            self.wb.dirty_fifo.push_back((f.dirtied_ms, pfn));
        }
        if f.test(pg::RECLAIM) {
            self.frames[pfn as usize].clear(pg::RECLAIM);
            self.folio_rotate_reclaimable(pfn);
        }
    }

    /// One round of the flusher (`wb_workfn` → `wb_do_writeback`): background writeback
    /// while over the background threshold, then expired pages, a chunk at a time.
    pub fn wb_writeback(&mut self) -> FlusherNext {
        let (bg_thresh, _) = self.dirty_thresholds();
        let expire_ms = (self.cfg.dirty_expire_ns / 1_000_000) as u32;
        let now_ms = (self.now / 1_000_000) as u32;
        let mut written = 0;
        while written < MAX_WRITEBACK_PAGES {
            let Some(&(t, pfn)) = self.wb.dirty_fifo.front() else {
                break;
            };
            let f = &self.frames[pfn as usize];
            // Stale: cleaned, freed, or redirtied later (a newer entry exists).
            if !f.test(pg::DIRTY)
                || f.test(pg::WRITEBACK)
                || f.dirtied_ms != t
                || f.test(pg::SWAPBACKED)
            {
                self.wb.dirty_fifo.pop_front();
                continue;
            }
            let expired = now_ms.saturating_sub(t) >= expire_ms;
            if !expired && self.wb.nr_dirty <= bg_thresh {
                break;
            }
            self.wb.dirty_fifo.pop_front();
            self.start_file_writeback(pfn, false);
            self.charge(self.cfg.costs.reclaim_page_ns);
            written += 1;
            // Adjacent dirty pages merge into requests of up to 256 KiB.
            if written % 64 == 0 {
                self.flush_plug();
            }
        }
        self.flush_plug();
        if written == MAX_WRITEBACK_PAGES {
            // More to do: go on once the device has worked off most of what is queued.
            let backlog = self.storage.backlog_ns(self.now);
            return FlusherNext::RunAt(self.now + backlog.max(1_000_000) / 2);
        }
        FlusherNext::SleepUntil(self.now + self.cfg.dirty_writeback_interval_ns)
    }
}
