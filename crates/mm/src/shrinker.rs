//! Slab shrinking (mm/shrinker.c, `drop_slab` from mm/vmscan.c; kernel-reference
//! §2.4 step 4): after reclaim scans a memcg's LRU it asks the shrinkers to give back
//! objects in proportion to the scan priority. The one shrinker here is the
//! superblock's (`crate::fs`), memcg- and NUMA-aware: the reclaimed node's dentries
//! and inodes of each memcg, with their own deferred work.

use super::Mm;
use crate::fs::{DEFAULT_SEEKS, SB_SHRINK_BATCH};
use crate::trace::Tp;
use crate::vm_event_item::Ev;

/// What one `do_shrink_slab` call plans (hand-checkable; the tracepoint shows it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShrinkPlan {
    /// `freeable`: the shrinker's `count_objects`.
    pub freeable: u64,
    /// New work at this priority: `(freeable >> priority) · 4 / seeks`.
    pub delta: u64,
    /// `nr >> priority` of the deferred work, plus delta, at most twice freeable.
    pub total_scan: u64,
}

/// `do_shrink_slab`'s arithmetic (v5.13+, "mm: vmscan: use per memcg nr_deferred of
/// shrinker" and Yang Shi's deferred-work fix): deferred work `nr` counts in
/// proportion to the priority, and the scan is capped at twice what is freeable.
pub fn shrink_plan(freeable: u64, nr_deferred: u64, priority: i32) -> ShrinkPlan {
    let shift = priority.clamp(0, 63) as u32;
    let delta = (freeable >> shift) * 4 / DEFAULT_SEEKS;
    let total_scan = ((nr_deferred >> shift) + delta).min(2 * freeable);
    ShrinkPlan {
        freeable,
        delta,
        total_scan,
    }
}

impl Mm {
    /// `shrink_slab` for `memcg` on node `nid` at `priority` (`shrink_slab_memcg` for
    /// a non-root memcg: only its own objects). Returns the objects freed; the pages
    /// their slabs gave back are the caller's to count (`reclaim_state`).
    pub fn shrink_slab(&mut self, memcg: usize, nid: usize, priority: i32) -> u64 {
        if memcg != 0 && !self.cfg.memcg_kmem {
            // No per-memcg lists without kmem accounting: the objects are all on the
            // root's, shrunk when reclaim visits the root.
            return 0;
        }
        self.do_shrink_slab(memcg, nid, priority)
    }

    /// `do_shrink_slab`: count, plan, scan in batches of `batch` (or everything when
    /// the plan covers the whole cache), and carry what was not scanned to the next
    /// call (`nr_deferred`, at most twice freeable).
    fn do_shrink_slab(&mut self, memcg: usize, nid: usize, priority: i32) -> u64 {
        let freeable = self.super_cache_count(memcg, nid);
        if freeable == 0 {
            return 0;
        }
        let li = self.sb_lru_index(memcg, nid);
        let nr = std::mem::take(&mut self.vfs.lru[li].nr_deferred);
        let plan = shrink_plan(freeable, nr, priority);
        trace_event!(
            self,
            Tp::ShrinkSlabStart,
            "super_cache_scan: nid: {nid} memcg: {memcg} objects to shrink {nr} cache items \
                 {freeable} delta {} total_scan {} priority {priority}",
            plan.delta,
            plan.total_scan
        );
        let (mut total_scan, mut scanned, mut freed) = (plan.total_scan, 0, 0);
        while total_scan >= SB_SHRINK_BATCH || total_scan >= freeable {
            let nr_to_scan = SB_SHRINK_BATCH.min(total_scan);
            freed += self.super_cache_scan(memcg, nid, nr_to_scan);
            self.count(Ev::SlabsScanned, nr_to_scan);
            total_scan -= nr_to_scan;
            scanned += nr_to_scan;
            if nr_to_scan == 0 {
                break;
            }
        }
        let next_deferred = (nr + plan.delta).saturating_sub(scanned).min(2 * freeable);
        self.vfs.lru[li].nr_deferred = next_deferred;
        trace_event!(
            self,
            Tp::ShrinkSlabEnd,
            "super_cache_scan: nid: {nid} unused scan count {nr} new scan count \
                 {next_deferred} total_scan {total_scan} last shrinker return val {freed}"
        );
        freed
    }

    /// `drop_slab` (vm.drop_caches bit 1): `shrink_slab` at priority 0 over every
    /// node and memcg (`drop_slab_node`), round after round while a round frees more
    /// than `2 << shift` (the shift growing each round). Returns the objects freed.
    pub fn drop_slab(&mut self) -> u64 {
        self.count(Ev::DropSlab, 1);
        let mut total = 0;
        let mut shift = 0;
        loop {
            let mut freed = 0;
            for nid in 0..self.nr_nodes() {
                for memcg in self.memcg.subtree(0) {
                    freed += self.shrink_slab(memcg, nid, 0);
                }
            }
            total += freed;
            if (freed >> shift) <= 1 {
                break;
            }
            shift += 1;
        }
        total
    }

    /// `shrink_node_memcgs` / `shrink_one` after a memcg's LRU scan: `shrink_slab` on
    /// the scan's node at its priority; the slab pages it gave back count as reclaimed in global
    /// reclaim (`reclaim_state->reclaimed`, `flush_reclaim_state`), not in limit
    /// reclaim (whose target's usage drops by the uncharge anyway).
    pub fn shrink_slab_after_lruvec(&mut self, memcg: usize, sc: &mut super::vmscan::ScanControl) {
        let pages_before = self.slab_pages[0] + self.slab_pages[1];
        if self.shrink_slab(memcg, sc.nid, sc.priority) > 0 && sc.target == 0 {
            let pages_after = self.slab_pages[0] + self.slab_pages[1];
            sc.nr_reclaimed += pages_before.saturating_sub(pages_after);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_scales_with_priority_and_caps_at_twice_freeable() {
        // 100_000 objects at DEF_PRIORITY 12: 100_000 >> 12 = 24, · 4 / 2 = 48.
        assert_eq!(
            shrink_plan(100_000, 0, 12),
            ShrinkPlan {
                freeable: 100_000,
                delta: 48,
                total_scan: 48
            }
        );
        // Deferred 10_000 at priority 2: 2_500 of it, + (25_000 · 4 / 2) = 52_500.
        assert_eq!(shrink_plan(100_000, 10_000, 2).total_scan, 52_500);
        // Priority 0 (drop_slab): 2 · freeable, the cap.
        assert_eq!(shrink_plan(1_000, 5_000, 0).total_scan, 2_000);
        // Fewer objects than 2^priority: no new work.
        assert_eq!(shrink_plan(4_095, 0, 12).total_scan, 0);
    }
}
