//! Memory compaction (mm/compaction.c, ~v6.1; kernel-reference §7). So far: deferred
//! compaction, the exponential back-off after a zone failed to compact for an order.

/// `COMPACT_MAX_DEFER_SHIFT`: at most 2^6 = 64 attempts are skipped.
pub const COMPACT_MAX_DEFER_SHIFT: u32 = 6;

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
