//! Memory compaction (mm/compaction.c, ~v6.5; kernel-reference §7). So far: whether a
//! zone is worth compacting for an order (`compaction_suitable`), and deferred
//! compaction, the exponential back-off after a zone failed to compact for an order.

use super::vmstat::{fill_contig_page_info, fragmentation_index};
use super::zone::{zone_watermark_ok, AllocFlags, Zone, NR_PAGE_ORDERS, WMARK_LOW, WMARK_MIN};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::zone::ZONE_NORMAL;

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
