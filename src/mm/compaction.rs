//! Memory compaction (mm/compaction.c, ~v6.5; kernel-reference §7). So far: whether a
//! zone is worth compacting for an order (`compaction_suitable`), and deferred
//! compaction, the exponential back-off after a zone failed to compact for an order.

use super::page::{lru, on, pg, Pfn};
use super::vmstat::{fill_contig_page_info, fragmentation_index};
use super::zone::{
    zone_watermark_ok, AllocFlags, Zone, MIGRATE_MOVABLE, MIGRATE_PCPTYPES, NR_PAGE_ORDERS,
    PAGEBLOCK_NR_PAGES, WMARK_LOW, WMARK_MIN,
};
use super::Mm;
use crate::stats::vmstat::Ev;

/// `COMPACT_CLUSTER_MAX`: pages isolated for migration at a time.
pub const COMPACT_CLUSTER_MAX: usize = 32;

/// How a compaction run ended (`enum compact_result`, the cases reached here).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactResult {
    /// A free block of the requested order is there.
    Success,
    /// The scanners met: the whole zone was tried.
    Complete,
}

/// `COMPACT_MAX_DEFER_SHIFT`: at most 2^6 = 64 attempts are skipped.
pub const COMPACT_MAX_DEFER_SHIFT: u32 = 6;

/// `compact_gap`: the free pages compaction needs beyond the watermark, room for the
/// pages it migrates (twice the request: isolated sources plus their targets).
pub fn compact_gap(order: usize) -> u64 {
    2 << order
}

/// `__compaction_suitable`: enough order-0 memory free to compact into: the MIN
/// watermark (LOW for a costly order) plus `compact_gap`.
pub fn compaction_suitable_free(z: &Zone, order: usize, highest_zoneidx: usize) -> bool {
    let mark = if order > super::page_alloc::PAGE_ALLOC_COSTLY_ORDER {
        z.wmark(WMARK_LOW)
    } else {
        z.wmark(WMARK_MIN)
    };
    zone_watermark_ok(
        z,
        0,
        mark + compact_gap(order),
        highest_zoneidx,
        AllocFlags::default(),
        z.nr_free_pages,
    )
}

/// `compaction_suitable`: `__compaction_suitable`, and for a costly order, a
/// fragmentation index above `vm.extfrag_threshold` (or -1000, the request would
/// succeed): an index in 0..=threshold says a failure would be for lack of memory,
/// which reclaim, not compaction, fixes.
pub fn compaction_suitable(
    z: &Zone,
    order: usize,
    highest_zoneidx: usize,
    extfrag_threshold: i64,
) -> bool {
    if !compaction_suitable_free(z, order, highest_zoneidx) {
        return false;
    }
    if order > super::page_alloc::PAGE_ALLOC_COSTLY_ORDER {
        let nr_free: [u64; NR_PAGE_ORDERS] = std::array::from_fn(|o| z.free_area[o].nr_free);
        let fragindex = fragmentation_index(order, &fill_contig_page_info(&nr_free, order));
        if (0..=extfrag_threshold).contains(&fragindex) {
            return false;
        }
    }
    true
}

/// A zone's deferral state. All zero at boot, as in a zeroed `struct zone`: no order
/// has failed yet (`order_failed` 0 means every order is subject to deferral, which
/// with `defer_shift` 0 skips nothing).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CompactDefer {
    /// `compact_considered`: attempts since the last failure.
    pub considered: u32,
    /// `compact_defer_shift`: skip the next 2^shift attempts.
    pub defer_shift: u32,
    /// `compact_order_failed`: the lowest order that failed; smaller ones are never
    /// deferred.
    pub order_failed: u32,
}

impl CompactDefer {
    /// `defer_compaction`: compaction of `order` failed; back off further.
    pub fn defer_compaction(&mut self, order: u32) {
        self.considered = 0;
        self.defer_shift = (self.defer_shift + 1).min(COMPACT_MAX_DEFER_SHIFT);
        if order < self.order_failed {
            self.order_failed = order;
        }
    }

    /// `compaction_deferred`: whether to skip compacting for `order` this time (each
    /// call counts as an attempt considered).
    pub fn compaction_deferred(&mut self, order: u32) -> bool {
        let defer_limit = 1u32 << self.defer_shift;
        if order < self.order_failed {
            return false;
        }
        self.considered += 1;
        if self.considered >= defer_limit {
            self.considered = defer_limit;
            return false;
        }
        true
    }

    /// `compaction_defer_reset`: compaction for `order` made progress; with an
    /// allocation success the back-off restarts from nothing.
    pub fn compaction_defer_reset(&mut self, order: u32, alloc_success: bool) {
        if alloc_success {
            self.considered = 0;
            self.defer_shift = 0;
        }
        if order >= self.order_failed {
            self.order_failed = order + 1;
        }
    }

    /// `compaction_restarting`: the back-off ran its full course for `order`; the next
    /// run starts with the pageblock skip bits cleared.
    pub fn compaction_restarting(&self, order: u32) -> bool {
        if order < self.order_failed {
            return false;
        }
        self.defer_shift == COMPACT_MAX_DEFER_SHIFT && self.considered >= 1 << self.defer_shift
    }
}

impl Mm {
    /// `compact_zone`, synchronous and whole-zone (as /proc/sys/vm/compact_memory and
    /// a full-priority direct compaction run it, skip bits not used yet): the migrate
    /// scanner walks up from the zone's start isolating LRU pages
    /// (`isolate_migratepages_block`, COMPACT_CLUSTER_MAX at a time), the free scanner
    /// walks down from its end isolating free pages (`isolate_freepages_block`), each
    /// isolated page migrates to a free one (`migrate_pages`), until a free block of
    /// `order` exists (`Some(order)`; `None` compacts everything) or the scanners
    /// meet. Pages that fail to migrate go back to their LRU; free pages left over go
    /// back to the buddy allocator (`release_freepages`). CPU: `scan_page` per page
    /// either scanner looks at, and each migration's cost.
    pub fn compact_zone(&mut self, zi: usize, order: Option<usize>) -> CompactResult {
        let (start, end) = (self.zones[zi].start_pfn, self.zones[zi].end_pfn);
        let mut migrate_pfn = start;
        // The free scanner starts at the last pageblock and takes whole pageblocks.
        let mut free_pfn = (end - 1) & !(PAGEBLOCK_NR_PAGES as Pfn - 1);
        let mut free_block_end = end;
        let mut freepages: Vec<Pfn> = Vec::new();
        let result = loop {
            if let Some(o) = order {
                if self.zone_has_free_block(zi, o) {
                    break CompactResult::Success;
                }
            }
            if migrate_pfn >= free_pfn {
                break CompactResult::Complete;
            }
            // isolate_migratepages: up to COMPACT_CLUSTER_MAX LRU pages from here,
            // without crossing into the free scanner's pageblock.
            let mut isolated = Vec::new();
            while migrate_pfn < free_pfn && isolated.len() < COMPACT_CLUSTER_MAX {
                let p = migrate_pfn;
                let f = self.frames[p as usize];
                self.charge(self.cfg.costs.scan_page_ns);
                self.count(Ev::CompactMigrateScanned, 1);
                if f.list == on::BUDDY {
                    migrate_pfn += 1 << f.order;
                    continue;
                }
                migrate_pfn += 1;
                let on_lru = f.test(pg::LRU)
                    && (f.list < lru::NR_LRU_LISTS as u8 || f.list & 0xf0 == on::LRU_GEN);
                if !on_lru || f.test(pg::WRITEBACK) || f.test(pg::UNEVICTABLE) {
                    continue;
                }
                self.lruvec_del_folio(p);
                self.frames[p as usize].list = on::ISOLATED;
                isolated.push(p);
            }
            self.count(Ev::CompactIsolated, isolated.len() as u64);
            for src in isolated {
                // isolate_freepages: refill from the next pageblocks down.
                while freepages.is_empty() && free_pfn > migrate_pfn {
                    // suitable_migration_target: only movable pageblocks take pages.
                    if self.zones[zi].pageblock_migratetype(free_pfn) == MIGRATE_MOVABLE {
                        self.isolate_freepages_block(zi, free_pfn, free_block_end, &mut freepages);
                    }
                    free_block_end = free_pfn;
                    free_pfn = free_pfn
                        .saturating_sub(PAGEBLOCK_NR_PAGES as Pfn)
                        .max(start);
                    if free_block_end == start {
                        break;
                    }
                }
                let migrated = match freepages.pop() {
                    Some(dst) => match self.migrate_folio(src, dst) {
                        Ok(()) => Some(dst),
                        Err(_) => {
                            freepages.push(dst);
                            None
                        }
                    },
                    None => None,
                };
                // putback: the new page, or the old one that did not move.
                let back = migrated.unwrap_or(src);
                self.frames[back as usize].list = on::NONE;
                self.lruvec_add_folio(back);
            }
        };
        // release_freepages.
        for p in freepages {
            self.frames[p as usize].list = on::NONE;
            super::page_alloc::free_one_page(&mut self.zones[zi], &mut self.frames, p, 0);
        }
        result
    }

    /// `isolate_freepages_block` over `[from, to)`: every free buddy block there comes
    /// off its list, split into isolated order-0 pages.
    fn isolate_freepages_block(&mut self, zi: usize, from: Pfn, to: Pfn, out: &mut Vec<Pfn>) {
        let mut p = from;
        while p < to {
            let f = self.frames[p as usize];
            self.charge(self.cfg.costs.scan_page_ns);
            self.count(Ev::CompactFreeScanned, 1);
            if f.list != on::BUDDY {
                p += 1;
                continue;
            }
            let order = f.order as usize;
            super::page_alloc::take_free_block(&mut self.zones[zi], &mut self.frames, p);
            for q in p..p + (1 << order) {
                self.frames[q as usize].list = on::ISOLATED;
                out.push(q);
            }
            self.count(Ev::CompactIsolated, 1 << order);
            p += 1 << order;
        }
    }

    /// Whether zone `zi` has a free block of at least `order` (`compact_finished`'s
    /// test, any migratetype here).
    fn zone_has_free_block(&self, zi: usize, order: usize) -> bool {
        let z = &self.zones[zi];
        (order..NR_PAGE_ORDERS).any(|o| (0..MIGRATE_PCPTYPES).any(|mt| z.free_list_nonempty(o, mt)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::zone::{ZONE_DMA32, ZONE_NORMAL};

    /// A zone of 8192 pages with watermarks MIN 100, LOW 125, HIGH 150 and the given
    /// free blocks (nr_free per order).
    fn zone(blocks: &[(usize, u64)]) -> Zone {
        let mut z = Zone::new(ZONE_NORMAL, 0, 8192);
        z.watermark = [100, 125, 150];
        for &(o, n) in blocks {
            z.free_area[o].nr_free = n;
            z.nr_free_pages += n << o;
        }
        z
    }

    /// A 256 MiB machine filled with clean file pages, then every page at an even PFN
    /// dropped: 32768 free pages, none with a free buddy.
    fn checkerboard() -> (Mm, usize) {
        use crate::mm::test_util::{add_pages, task_mm};
        let mut mm = task_mm(
            "[machine]\nmemory = \"256M\"\n\
             [[workload]]\nname = \"w\"\nkind = \"anon\"\nsize = \"4K\"\n",
        );
        let zi = ZONE_DMA32;
        mm.zones[zi].watermark = [0; 3];
        let n = mm.nr_free_pages() as u32;
        let (space, pfns) = add_pages(&mut mm, crate::mm::SpaceKind::File, n, 0);
        assert_eq!(mm.nr_free_pages(), 0);
        for (idx, &p) in pfns.iter().enumerate() {
            if p % 2 == 0 {
                mm.lruvec_del_folio(p);
                *mm.spaces[space as usize].pte_mut(idx as u32) = crate::mm::page::pte::NONE;
                mm.spaces[space as usize].nr_present -= 1;
                mm.frames[p as usize].flags = 0;
                mm.frames[p as usize].list = on::NONE;
                mm.free_pages(p, 0);
            }
        }
        assert_eq!(mm.nr_free_pages(), n as u64 / 2);
        assert!(!mm.zone_has_free_block(zi, 1));
        (mm, zi)
    }

    #[test]
    fn compaction_makes_an_order_9_block_from_scattered_free_pages() {
        let (mut mm, zi) = checkerboard();
        let free = mm.nr_free_pages();
        // The migrate scanner empties the first pageblock: its 256 file pages (odd
        // PFNs) move into free pages at the top, 32 at a time; then [0, 512) is free
        // and merges into an order-9 block.
        assert_eq!(mm.compact_zone(zi, Some(9)), CompactResult::Success);
        assert_eq!(mm.vmstat.get(Ev::PgmigrateSuccess), 256);
        assert!(mm.zone_has_free_block(zi, 9));
        assert!(mm.frames[0].test(pg::BUDDY) && mm.frames[0].order == 9);
        assert_eq!(
            mm.nr_free_pages(),
            free,
            "migration moves pages, frees none"
        );
        mm.check_invariants().unwrap();
    }

    #[test]
    fn an_unmovable_page_in_every_pageblock_defeats_compaction() {
        let (mut mm, zi) = checkerboard();
        // Pin each pageblock with a kernel page (its first free page): no pageblock can
        // be emptied, so the scanners meet without an order-9 block.
        let (start, end) = (mm.zones[zi].start_pfn, mm.zones[zi].end_pfn);
        let mut block = start;
        while block < end {
            let p = (block..end)
                .find(|&p| mm.frames[p as usize].list == on::BUDDY)
                .unwrap();
            crate::mm::page_alloc::take_free_block(&mut mm.zones[zi], &mut mm.frames, p);
            mm.frames[p as usize].list = on::KERNEL;
            mm.kernel_pages += 1;
            block += PAGEBLOCK_NR_PAGES as Pfn;
        }
        mm.check_invariants().unwrap();
        assert_eq!(mm.compact_zone(zi, Some(9)), CompactResult::Complete);
        assert!(!mm.zone_has_free_block(zi, 9));
        assert!(mm.vmstat.get(Ev::PgmigrateSuccess) > 0);
        mm.check_invariants().unwrap();
    }

    #[test]
    fn suitability_by_hand() {
        // Order 9 (costly): LOW 125 + gap 1024 = 1149 needed (free strictly above).
        // 1100 order-0 pages: too little to compact into.
        let z = zone(&[(0, 1100)]);
        assert!(!compaction_suitable_free(&z, 9, ZONE_NORMAL));
        // 2000 order-0 pages: enough; fragmentation index for order 9: 1000 - (1000 +
        // 2000·1000/512) / 2000 = 1000 - (1000 + 3906) / 2000 = 1000 - 2 = 998 > 500:
        // fragmentation, compact.
        let z = zone(&[(0, 2000)]);
        assert!(compaction_suitable(&z, 9, ZONE_NORMAL, 500));
        // 1200 pages in 3 order-8 blocks + 432 order-0: index = 1000 - (1000 + 1200·
        // 1000/512) / 435 = 1000 - (1000 + 2343) / 435 = 1000 - 7 = 993: still
        // fragmentation. With few large blocks only: 5 order-8 blocks (1280 pages),
        // 1000 - (1000 + 2500) / 5 = 300 <= 500: lack of memory, not suitable.
        let z = zone(&[(8, 3), (0, 432)]);
        assert!(compaction_suitable(&z, 9, ZONE_NORMAL, 500));
        let z = zone(&[(8, 5)]);
        assert!(compaction_suitable_free(&z, 9, ZONE_NORMAL));
        assert!(!compaction_suitable(&z, 9, ZONE_NORMAL, 500));
        assert!(compaction_suitable(&z, 9, ZONE_NORMAL, 299));
        // A request that would succeed (index -1000) stays suitable.
        let z = zone(&[(9, 3)]);
        assert!(compaction_suitable(&z, 9, ZONE_NORMAL, 1000));
        // Order 3 (not costly): MIN 100 + gap 16 = 116; no index test.
        let z = zone(&[(0, 117)]);
        assert!(compaction_suitable(&z, 3, ZONE_NORMAL, 1000));
        let z = zone(&[(0, 116)]);
        assert!(!compaction_suitable(&z, 3, ZONE_NORMAL, 1000));
    }

    /// How many of `n` attempts at `order` go ahead.
    fn attempts(d: &mut CompactDefer, order: u32, n: u32) -> u32 {
        (0..n).filter(|_| !d.compaction_deferred(order)).count() as u32
    }

    #[test]
    fn a_fresh_zone_defers_nothing() {
        let mut d = CompactDefer::default();
        assert_eq!(attempts(&mut d, 9, 10), 10);
        assert!(!d.compaction_restarting(9));
    }

    #[test]
    fn each_failure_doubles_the_back_off_up_to_64() {
        let mut d = CompactDefer::default();
        // First failure at order 9: shift 1, order_failed 0 stays (9 > 0). Attempt 1 is
        // skipped (considered 1 < 2), attempt 2 goes ahead (2 >= 2).
        d.defer_compaction(9);
        assert_eq!((d.considered, d.defer_shift, d.order_failed), (0, 1, 0));
        assert!(d.compaction_deferred(9));
        assert!(!d.compaction_deferred(9));
        // From then on every attempt goes ahead until the next failure (considered is
        // held at the limit).
        assert_eq!(attempts(&mut d, 9, 3), 3);
        // Failures 2..=8: shift 2, 3, ... capped at 6; after each, 2^shift - 1 skipped.
        for (failure, shift) in (2..=8).zip([2, 3, 4, 5, 6, 6, 6]) {
            d.defer_compaction(9);
            assert_eq!(d.defer_shift, shift, "failure {failure}");
            let limit = 1u32 << shift;
            assert_eq!(attempts(&mut d, 9, limit - 1), 0, "failure {failure}");
            assert_eq!(attempts(&mut d, 9, 1), 1, "failure {failure}");
        }
        // Full course at shift 6: the next run restarts with skip bits cleared.
        assert!(d.compaction_restarting(9));
    }

    #[test]
    fn orders_below_the_lowest_failure_are_never_deferred() {
        let mut d = CompactDefer::default();
        // A success at order 4 raises order_failed to 5; a failure at order 9 leaves it.
        d.compaction_defer_reset(4, false);
        assert_eq!(d.order_failed, 5);
        d.defer_compaction(9);
        d.defer_compaction(9);
        assert_eq!(attempts(&mut d, 3, 5), 5, "order 3 < 5");
        assert_eq!(attempts(&mut d, 9, 3), 0, "order 9: 3 of 4 skipped");
        // A failure at order 3 lowers it: now order 3 backs off too (shift 3).
        d.defer_compaction(3);
        assert_eq!((d.order_failed, d.defer_shift), (3, 3));
        assert_eq!(attempts(&mut d, 3, 7), 0);
        assert!(!d.compaction_restarting(2));
    }

    #[test]
    fn an_allocation_success_resets_the_back_off() {
        let mut d = CompactDefer::default();
        for _ in 0..4 {
            d.defer_compaction(9);
        }
        d.compaction_defer_reset(9, true);
        assert_eq!((d.considered, d.defer_shift, d.order_failed), (0, 0, 10));
        assert_eq!(attempts(&mut d, 9, 5), 5);
        // Progress without an allocation keeps the shift.
        d.defer_compaction(9);
        d.compaction_defer_reset(9, false);
        assert_eq!(d.defer_shift, 1);
    }
}
