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
use crate::stats::vmstat::Ev;

/// Shadow layout in the 60-bit payload: [memcg id: 16][workingset: 1][eviction: 40].
const EVICTION_BITS: u32 = 40;
const EVICTION_MASK: u64 = (1 << EVICTION_BITS) - 1;
const WORKINGSET_SHIFT: u32 = EVICTION_BITS;
const MEMCG_SHIFT: u32 = EVICTION_BITS + 1;

#[derive(Debug, Clone)]
pub struct Workingset {
    /// `bucket_order`: timestamps are stored in buckets of 2^order pages so that the
    /// eviction bits can span all of memory (0 unless memory exceeds 2^40 pages).
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
    pub fn pack(&self, memcg_id: u16, eviction: u64, workingset: bool) -> u64 {
        let e = (eviction >> self.bucket_order) & EVICTION_MASK;
        ((memcg_id as u64) << MEMCG_SHIFT) | ((workingset as u64) << WORKINGSET_SHIFT) | e
    }

    /// `unpack_shadow`: (memcg id, eviction timestamp, workingset bit).
    pub fn unpack(&self, shadow: u64) -> (u16, u64, bool) {
        let e = (shadow & EVICTION_MASK) << self.bucket_order;
        let ws = (shadow >> WORKINGSET_SHIFT) & 1 == 1;
        ((shadow >> MEMCG_SHIFT) as u16, e, ws)
    }

    /// The refault distance: how far the clock advanced since eviction, masked to the
    /// timestamp width as the kernel does (`& EVICTION_MASK`; the clock may wrap).
    pub fn refault_distance(&self, now_age: u64, eviction: u64) -> u64 {
        now_age.wrapping_sub(eviction) & EVICTION_MASK
    }
}

impl Mm {
    /// `workingset_age_nonresident`: tick the clock (of the lruvec and, with memcg, its
    /// ancestors).
    pub fn workingset_age_nonresident(&mut self, memcg: usize, nr_pages: u64) {
        self.lruvecs[memcg].nonresident_age += nr_pages;
    }

    /// `workingset_activation`: an activation ages the clock.
    pub fn workingset_activation(&mut self, pfn: Pfn) {
        let memcg = self.frames[pfn as usize].memcg as usize;
        self.workingset_age_nonresident(memcg, 1);
    }

    /// `workingset_eviction`: the shadow entry for a page being reclaimed on behalf of
    /// `target_memcg`. Reads the clock, then ticks it.
    pub fn workingset_eviction(&mut self, pfn: Pfn, target_memcg: usize) -> u64 {
        let eviction = self.lruvecs[target_memcg].nonresident_age;
        self.workingset_age_nonresident(target_memcg, 1);
        let ws = self.frames[pfn as usize].test(pg::WORKINGSET);
        self.workingset.pack(target_memcg as u16, eviction, ws)
    }

    /// `workingset_refault`: the new page `pfn` replaces an evicted one whose shadow was
    /// `shadow`. Activates it if the refault distance fits in the workingset.
    pub fn workingset_refault(&mut self, pfn: Pfn, shadow: u64) {
        let file = self.frames[pfn as usize].is_file_lru();
        let memcg = self.frames[pfn as usize].memcg as usize;
        let t = file as usize;
        self.count(
            if file {
                Ev::WorkingsetRefaultFile
            } else {
                Ev::WorkingsetRefaultAnon
            },
            1,
        );
        let (memcg_id, eviction, workingset) = self.workingset.unpack(shadow);
        let Some(ev_lruvec) = self.lruvecs.get(memcg_id as usize) else {
            return; // the memcg is gone: not recent
        };
        let distance = self
            .workingset
            .refault_distance(ev_lruvec.nonresident_age, eviction);
        // `workingset_test_recent`: compare with what could have been evicted instead.
        let size = |l: usize| ev_lruvec.lists[l].len;
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
        self.workingset_age_nonresident(memcg, 1);
        self.lruvecs[memcg].workingset_activate[t] += 1;
        self.count(
            if file {
                Ev::WorkingsetActivateFile
            } else {
                Ev::WorkingsetActivateAnon
            },
            1,
        );
        if workingset {
            self.frames[pfn as usize].set(pg::WORKINGSET);
            // lru_note_cost_refault: a refault of the working set costs one page of I/O.
            self.lru_note_cost(memcg, file, 1, 0);
            self.count(
                if file {
                    Ev::WorkingsetRestoreFile
                } else {
                    Ev::WorkingsetRestoreAnon
                },
                1,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_round_trip() {
        let w = Workingset::new(1 << 20);
        assert_eq!(w.bucket_order, 0);
        let s = w.pack(7, 123_456, true);
        assert_eq!(w.unpack(s), (7, 123_456, true));
        assert!(s < 1 << 60, "fits the page-table payload");
    }

    #[test]
    fn refault_distance_by_hand() {
        // A page evicted when the clock read 1000; since then 300 evictions and 200
        // activations ticked the clock to 1500: distance 500. With an active file list of
        // 600 pages (and no swap) 500 <= 600: the refault is "recent" and activates.
        let w = Workingset::new(1 << 20);
        let (_, ev, _) = w.unpack(w.pack(0, 1000, false));
        assert_eq!(w.refault_distance(1500, ev), 500);
        // Wrap-around: eviction near the top of the 40-bit clock, refault after a wrap.
        let top = (1u64 << 40) - 10;
        let (_, ev, _) = w.unpack(w.pack(0, top, false));
        assert_eq!(w.refault_distance((1u64 << 40) + 5, ev), 15);
    }

    #[test]
    fn bucket_order_for_huge_memory() {
        // 2^42 pages (16 PiB) needs 42 bits: buckets of 2^(42-40) = 4 pages.
        let w = Workingset::new(1 << 42);
        assert_eq!(w.bucket_order, 2);
        let (_, ev, _) = w.unpack(w.pack(0, 1003, false));
        assert_eq!(ev, 1000, "rounded down to its bucket");
    }
}
