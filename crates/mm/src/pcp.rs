//! The per-CPU page lists (`struct per_cpu_pages`, mm/page_alloc.c), as three eras of
//! the kernel built them, and none at all.
//!
//! Each CPU keeps, per zone, lists of free blocks the buddy allocator has handed it:
//! an order-0 (v5.13+: small-order and THP) allocation takes from the running CPU's
//! list and refills it `batch` blocks at a time (`rmqueue_bulk`); a free goes onto the
//! list and, once the list holds `high` pages, a batch goes back to the buddy
//! (`free_pcppages_bulk`). Pages on these lists are free but not in NR_FREE_PAGES, and
//! not PageBuddy: compaction cannot use them and the buddy cannot merge them until a
//! drain returns them. The order a bulk free returns pages in, across lists and
//! CPUs, is what scatters a task's frees over pageblocks.
//!
//! This module holds the lists and the arithmetic of each era (`zone_batchsize`,
//! `zone_highsize`, `nr_pcp_high`, `nr_pcp_free`, `nr_pcp_alloc`, `decay_pcp_high`);
//! `page_alloc.rs` moves pages between them and the buddy.

use super::list::ListHead;
use super::page::{Frame, Pfn};
use super::zone::{MIGRATE_MOVABLE, MIGRATE_PCPTYPES, PAGEBLOCK_ORDER};

/// Which kernel's per-CPU page lists (`kernel.pcp`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PcpVersion {
    /// No per-CPU lists: every allocation and free goes to the buddy lists (what the
    /// simulator did before it modelled them; not a kernel).
    Off,
    /// v4.5: order-0 pages only, one list per migratetype, `batch` at most 31 (a
    /// 512 KiB cap, doubled in v4.19), `high` = 6 × `batch` (or
    /// `vm.percpu_pagelist_fraction`); pages reclaim frees are cold (the tail, the
    /// first a bulk free returns), others hot (the head).
    V4_5,
    /// v5.14 to v5.17: orders up to PAGE_ALLOC_COSTLY_ORDER and the THP order (a THP
    /// list per migratetype), `high` from the zone's low watermark split over the
    /// CPUs (or `vm.percpu_pagelist_high_fraction`), lowered to 4 × `batch` while
    /// kswapd reclaims the zone (ZONE_RECLAIM_ACTIVE), bulk frees that go round the
    /// lists and grow while a CPU only frees (`free_factor`).
    V5_14,
    /// v6.7 to today (v6.18): `high` tuned between `high_min` and `high_max` by how
    /// the CPU allocates and frees, refills that grow while it only allocates
    /// (`alloc_factor`), lowered while the zone is below its high watermark
    /// (ZONE_BELOW_HIGH), decayed every `vm.stat_interval` (`decay_pcp_high`); bulk
    /// frees empty the list freed to first (v5.18); THP lists for movable and the rest
    /// (v6.10). Not modelled: v6.7's PCPF_FREE_HIGH_BATCH (with a per-CPU cache slice
    /// over 3 × `batch`, a run of high-order frees drains only once `batch` pages
    /// wait) and v6.16's higher `free_high` threshold (`batch + high_min / 2`): both
    /// only delay the drain of order-1..3 frees, and together they moved no shipped
    /// scenario's results but trace-policies', by 16 pages on the lists.
    #[default]
    V6_7,
}

/// `PAGE_ALLOC_COSTLY_ORDER` as the lists' index space needs it (include/linux/mmzone.h).
pub(crate) const COSTLY_ORDER: usize = 3;
/// `NR_LOWORDER_PCP_LISTS`: a list per migratetype and order up to the costly one.
const NR_LOWORDER_PCP_LISTS: usize = MIGRATE_PCPTYPES * (COSTLY_ORDER + 1);
/// The lists each CPU keeps per zone, the most any era has: v5.14's THP list per
/// migratetype (`NR_PCP_THP` 1 per type); today's two (movable, the rest) use the
/// first two of them.
pub const NR_PCP_LISTS: usize = NR_LOWORDER_PCP_LISTS + MIGRATE_PCPTYPES;
/// `CONFIG_PCP_BATCH_SCALE_MAX` (its default): batches scale by at most 2^5.
pub const PCP_BATCH_SCALE_MAX: u32 = 5;
/// `MIN_PERCPU_PAGELIST_HIGH_FRACTION` (and v4's MIN_PERCPU_PAGELIST_FRACTION): the
/// smallest fraction the sysctls take, and v6.7's `high_max` fraction.
pub const MIN_PERCPU_PAGELIST_HIGH_FRACTION: u64 = 8;
/// The THP order (HPAGE_PMD_ORDER, equal to pageblock_order on x86-64).
pub const PCP_THP_ORDER: usize = PAGEBLOCK_ORDER;

/// `PCPF_PREV_FREE_HIGH_ORDER`: the last free was of an order in 1..=3.
const PCPF_PREV_FREE_HIGH_ORDER: u8 = 1 << 0;

impl PcpVersion {
    /// `pcp_allowed_order`: which orders go through the lists.
    pub fn allowed_order(self, order: usize) -> bool {
        match self {
            PcpVersion::Off => false,
            PcpVersion::V4_5 => order == 0,
            PcpVersion::V5_14 | PcpVersion::V6_7 => order <= COSTLY_ORDER || order == PCP_THP_ORDER,
        }
    }

    /// The lists a bulk free goes round (`NR_PCP_LISTS` of the era).
    pub fn nr_lists(self) -> usize {
        match self {
            PcpVersion::Off | PcpVersion::V4_5 => MIGRATE_PCPTYPES,
            PcpVersion::V5_14 => NR_PCP_LISTS,
            PcpVersion::V6_7 => NR_LOWORDER_PCP_LISTS + 2,
        }
    }

    /// `order_to_pindex`: the list of a migratetype and an (allowed) order.
    pub fn order_to_pindex(self, mt: usize, order: usize) -> usize {
        if order <= COSTLY_ORDER {
            MIGRATE_PCPTYPES * order + mt
        } else if self == PcpVersion::V5_14 {
            NR_LOWORDER_PCP_LISTS + mt
        } else {
            NR_LOWORDER_PCP_LISTS + usize::from(mt == MIGRATE_MOVABLE)
        }
    }
}

/// `pindex_to_order`.
pub fn pindex_to_order(pindex: usize) -> usize {
    if pindex >= NR_LOWORDER_PCP_LISTS {
        PCP_THP_ORDER
    } else {
        pindex / MIGRATE_PCPTYPES
    }
}

/// `rounddown_pow_of_two`.
fn rounddown_pow_of_two(x: u64) -> u64 {
    if x == 0 {
        0
    } else {
        1 << (63 - x.leading_zeros())
    }
}

/// `zone_batchsize`: about a thousandth of the zone, at most 512 KiB (v4.5; 1 MiB
/// from v4.19, "mm, page_alloc: double zone's batchsize"), a quarter of that,
/// clamped to 2^n - 1 (a power of two was found to alias badly in caches).
pub fn zone_batchsize(managed_pages: u64, version: PcpVersion) -> u32 {
    let cap_pages = match version {
        PcpVersion::V4_5 => (512 << 10) / 4096,
        _ => (1 << 20) / 4096,
    };
    let batch = ((managed_pages / 1024).min(cap_pages) / 4).max(1);
    (rounddown_pow_of_two(batch + batch / 2) - 1) as u32
}

/// `zone_highsize` (v5.14+): the zone's low watermark (or a fraction of the zone)
/// split over the node's CPUs, at least 4 × `batch`.
pub fn zone_highsize(
    low_wmark: u64,
    managed_pages: u64,
    batch: u32,
    nr_cpus: u64,
    fraction: u64,
) -> u32 {
    let total_pages = managed_pages.checked_div(fraction).unwrap_or(low_wmark);
    let high = total_pages / nr_cpus.max(1);
    high.max(u64::from(batch) << 2) as u32
}

/// The sizes a zone's lists get (`zone_set_pageset_high_and_batch`, v4's
/// `pageset_set_batch` / `pageset_set_high`): (batch, high_min, high_max).
/// `fraction` is the era's sysctl (`vm.percpu_pagelist_fraction` for v4.5,
/// `vm.percpu_pagelist_high_fraction` after), 0 when unset.
pub fn pageset_sizes(
    version: PcpVersion,
    managed_pages: u64,
    low_wmark: u64,
    nr_cpus: u64,
    fraction: u64,
) -> (u32, u32, u32) {
    let batch = zone_batchsize(managed_pages, version).max(1);
    match version {
        PcpVersion::Off => (1, 0, 0),
        PcpVersion::V4_5 => {
            match managed_pages.checked_div(fraction) {
                None => (batch, 6 * batch, 6 * batch),
                Some(high) => {
                    // pageset_set_high: a quarter of high, at most PAGE_SHIFT × 8.
                    let high = high as u32;
                    let batch = (high / 4).clamp(1, 12 * 8);
                    (batch, high, high)
                }
            }
        }
        PcpVersion::V5_14 => {
            let high = zone_highsize(low_wmark, managed_pages, batch, nr_cpus, fraction);
            (batch, high, high)
        }
        PcpVersion::V6_7 => {
            if fraction != 0 {
                // Tuned by hand: no auto-tuning.
                let high = zone_highsize(low_wmark, managed_pages, batch, nr_cpus, fraction);
                (batch, high, high)
            } else {
                let min = zone_highsize(low_wmark, managed_pages, batch, nr_cpus, 0);
                let max = zone_highsize(
                    low_wmark,
                    managed_pages,
                    batch,
                    nr_cpus,
                    MIN_PERCPU_PAGELIST_HIGH_FRACTION,
                );
                (batch, min, max)
            }
        }
    }
}

/// One CPU's lists for one zone (`struct per_cpu_pages`).
#[derive(Debug, Clone, Default)]
pub struct PerCpuPages {
    pub lists: [ListHead; NR_PCP_LISTS],
    /// Pages on the lists (a block of order n counts 2^n).
    pub count: u32,
    pub high: u32,
    pub high_min: u32,
    pub high_max: u32,
    pub batch: u32,
    /// v5.14's `free_factor` (a shift), v6.7's `free_count` (pages freed in a row).
    pub free_count: u32,
    /// v6.7's `alloc_factor`: refills double while the CPU only allocates.
    pub alloc_factor: u32,
    pub flags: u8,
}

impl PerCpuPages {
    /// Puts a block on list `pindex`: a hot page at the head (the next allocation
    /// takes it), a cold one at the tail (the next bulk free returns it).
    pub fn add(&mut self, frames: &mut [Frame], pfn: Pfn, order: usize, pindex: usize, cold: bool) {
        if cold {
            self.lists[pindex].add_tail(frames, pfn);
        } else {
            self.lists[pindex].add_head(frames, pfn);
        }
        self.count += 1 << order;
    }

    /// `nr_pcp_high`: the count at which a free returns a batch, and the tuning of
    /// `high` that goes with it. `reclaim_active` and `below_high` are the zone's
    /// ZONE_RECLAIM_ACTIVE and ZONE_BELOW_HIGH; `free_high` a run of high-order frees.
    pub fn nr_pcp_high(
        &mut self,
        version: PcpVersion,
        reclaim_active: bool,
        below_high: bool,
        free_high: bool,
    ) -> u32 {
        let batch = self.batch;
        match version {
            PcpVersion::Off => 0,
            PcpVersion::V4_5 => self.high,
            PcpVersion::V5_14 => {
                if self.high == 0 || !reclaim_active {
                    self.high
                } else {
                    (batch << 2).min(self.high)
                }
            }
            PcpVersion::V6_7 => {
                let high = self.high.clamp(self.high_min, self.high_max);
                self.high = high;
                if high == 0 {
                    return 0;
                }
                if free_high {
                    self.high = high
                        .saturating_sub(batch << PCP_BATCH_SCALE_MAX)
                        .max(self.high_min);
                    return 0;
                }
                if reclaim_active {
                    let free_count = self.free_count.max(batch);
                    self.high = high.saturating_sub(free_count).max(self.high_min);
                    return (batch << 2).min(self.high);
                }
                if self.high_min == self.high_max {
                    return high;
                }
                if below_high {
                    let free_count = self.free_count.max(batch);
                    self.high = high.saturating_sub(free_count).max(self.high_min);
                    return self.count.max(self.high_min);
                }
                if self.count >= high {
                    let need_high = self.free_count + batch;
                    if self.high < need_high {
                        self.high = need_high.clamp(self.high_min, self.high_max);
                    }
                }
                high
            }
        }
    }

    /// `nr_pcp_free`: how many pages a free that reached `high` returns.
    pub fn nr_pcp_free(&mut self, version: PcpVersion, high: u32, free_high: bool) -> u32 {
        let batch = self.batch;
        match version {
            PcpVersion::Off => 0,
            PcpVersion::V4_5 => batch,
            PcpVersion::V5_14 => {
                if high < batch {
                    return 1;
                }
                let (min_nr_free, max_nr_free) = (batch, high - batch);
                // Double the batch for each free in a row without an allocation.
                let scaled = u64::from(batch) << self.free_count.min(31);
                if scaled < u64::from(max_nr_free) {
                    self.free_count += 1;
                }
                scaled.clamp(
                    u64::from(min_nr_free),
                    u64::from(max_nr_free.max(min_nr_free)),
                ) as u32
            }
            PcpVersion::V6_7 => {
                if free_high {
                    return self.count.min(batch << PCP_BATCH_SCALE_MAX);
                }
                if high < batch {
                    return 1;
                }
                let (min_nr_free, max_nr_free) = (batch, high - batch);
                self.free_count
                    .clamp(min_nr_free, max_nr_free.max(min_nr_free))
            }
        }
    }

    /// `nr_pcp_alloc` (v6.7): how many blocks a refill of an empty list takes.
    pub fn nr_pcp_alloc(&mut self, order: usize, below_high: bool) -> u32 {
        let base_batch = self.batch;
        let mut high = self.high.clamp(self.high_min, self.high_max);
        self.high = high;
        if high < base_batch {
            return 1;
        }
        let mut batch = if order > 0 {
            base_batch
        } else {
            base_batch << self.alloc_factor
        };
        // With a larger high the CPU could have kept the pages: grow it.
        if self.high_min != self.high_max && !below_high {
            high = (high + batch).min(self.high_max);
            self.high = high;
        }
        if order == 0 {
            let max_nr_alloc = high.saturating_sub(self.count + base_batch).max(base_batch);
            if batch <= max_nr_alloc && self.alloc_factor < PCP_BATCH_SCALE_MAX {
                self.alloc_factor += 1;
            }
            batch = batch.min(max_nr_alloc);
        }
        if batch > 1 {
            batch = (batch >> order).max(2);
        }
        batch
    }

    /// v6.7's free-side bookkeeping in `free_unref_page_commit`: whether this free of
    /// `order` is part of a run of high-order frees to return at once (`free_high`),
    /// and the count of pages freed in a row.
    pub fn note_free(&mut self, order: usize) -> bool {
        self.alloc_factor >>= 1;
        let batch = self.batch;
        let mut free_high = false;
        if order > 0 && order <= COSTLY_ORDER {
            free_high = self.free_count >= batch && self.flags & PCPF_PREV_FREE_HIGH_ORDER != 0;
            self.flags |= PCPF_PREV_FREE_HIGH_ORDER;
        } else {
            self.flags &= !PCPF_PREV_FREE_HIGH_ORDER;
        }
        if self.free_count < batch << PCP_BATCH_SCALE_MAX {
            self.free_count += 1 << order;
        }
        free_high
    }

    /// `decay_pcp_high` (v6.7, every `vm.stat_interval`): lower `high` by an eighth
    /// towards `high_min`; returns how many pages to drain to meet it.
    pub fn decay_pcp_high(&mut self) -> u32 {
        let batch = self.batch;
        if self.high > self.high_min {
            self.high = self
                .count
                .saturating_sub(batch << PCP_BATCH_SCALE_MAX)
                .max(self.high - (self.high >> 3))
                .max(self.high_min);
        }
        self.count.saturating_sub(self.high)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 256; // pages

    /// zone_batchsize by hand. v4.5, a 2 GiB zone: 524288 / 1024 = 512 pages is over the
    /// 512 KiB cap (128 pages); 128 / 4 = 32; rounddown_pow_of_two(32 + 16) = 32; 31.
    /// v5.14+: the cap is 256 pages; 256 / 4 = 64; rounddown(96) = 64; 63. A 64 MiB
    /// zone: 16384 / 1024 = 16; 4; rounddown(6) = 4; 3 (both eras). A 1 MiB zone: 0 →
    /// at least 1; rounddown(1) = 1; 0 (the caller makes it 1).
    #[test]
    fn batch_from_the_zone_size_per_era() {
        assert_eq!(zone_batchsize(2048 * MIB, PcpVersion::V4_5), 31);
        assert_eq!(zone_batchsize(2048 * MIB, PcpVersion::V5_14), 63);
        assert_eq!(zone_batchsize(2048 * MIB, PcpVersion::V6_7), 63);
        assert_eq!(zone_batchsize(64 * MIB, PcpVersion::V4_5), 3);
        assert_eq!(zone_batchsize(64 * MIB, PcpVersion::V6_7), 3);
        // 256 MiB: 65536 / 1024 = 64 (under both caps); 16; rounddown(24) = 16; 15.
        assert_eq!(zone_batchsize(256 * MIB, PcpVersion::V4_5), 15);
        assert_eq!(zone_batchsize(MIB, PcpVersion::V4_5), 0);
    }

    /// v4.5: high = 6 × batch = 186 for a 2 GiB zone. With percpu_pagelist_fraction 8:
    /// high = 524288 / 8 = 65536, batch = high / 4 = 16384 capped at PAGE_SHIFT × 8 = 96.
    #[test]
    fn v4_high_is_six_batches_or_the_fraction() {
        assert_eq!(
            pageset_sizes(PcpVersion::V4_5, 2048 * MIB, 0, 4, 0),
            (31, 186, 186)
        );
        assert_eq!(
            pageset_sizes(PcpVersion::V4_5, 2048 * MIB, 0, 4, 8),
            (96, 65536, 65536)
        );
        // 100 pages / 8 = 12 high; 12 / 4 = 3.
        assert_eq!(pageset_sizes(PcpVersion::V4_5, 100, 0, 1, 8), (3, 12, 12));
    }

    /// v5.14: a 2 GiB zone's low watermark (1448 min + max(362, 524) = 1972 pages, see
    /// zone.rs) over 4 CPUs is 493, above 4 × 63 = 252. Over 16 CPUs it would be 123:
    /// 252 wins. v6.7: high_min the same, high_max = 524288 / 8 / 4 = 16384.
    #[test]
    fn high_from_the_low_watermark_split_over_cpus() {
        assert_eq!(
            pageset_sizes(PcpVersion::V5_14, 2048 * MIB, 1972, 4, 0),
            (63, 493, 493)
        );
        assert_eq!(
            pageset_sizes(PcpVersion::V5_14, 2048 * MIB, 1972, 16, 0),
            (63, 252, 252)
        );
        assert_eq!(
            pageset_sizes(PcpVersion::V6_7, 2048 * MIB, 1972, 4, 0),
            (63, 493, 16384)
        );
        // The sysctl fixes high: 524288 / 64 / 4 = 2048, and turns tuning off.
        assert_eq!(
            pageset_sizes(PcpVersion::V6_7, 2048 * MIB, 1972, 4, 64),
            (63, 2048, 2048)
        );
    }

    #[test]
    fn list_index_per_order_and_type() {
        // MIGRATE_UNMOVABLE 0, MOVABLE 1, RECLAIMABLE 2: order 0 is lists 0..3, order 3
        // lists 9..12; today's THP lists are 12 (not movable) and 13 (movable),
        // v5.14's 12, 13 and 14 by type.
        let v = PcpVersion::V6_7;
        assert_eq!(v.order_to_pindex(1, 0), 1);
        assert_eq!(v.order_to_pindex(2, 3), 11);
        assert_eq!(v.order_to_pindex(0, 9), 12);
        assert_eq!(v.order_to_pindex(2, 9), 12);
        assert_eq!(v.order_to_pindex(1, 9), 13);
        assert_eq!(PcpVersion::V5_14.order_to_pindex(2, 9), 14);
        assert_eq!(PcpVersion::V5_14.order_to_pindex(0, 9), 12);
        assert_eq!(NR_PCP_LISTS, 15);
        assert_eq!(v.nr_lists(), 14);
        assert_eq!(PcpVersion::V4_5.nr_lists(), 3);
        for p in 0..NR_PCP_LISTS {
            let o = pindex_to_order(p);
            assert!(o <= 3 || o == 9);
        }
        assert!(!PcpVersion::V4_5.allowed_order(1));
        assert!(PcpVersion::V5_14.allowed_order(3));
        assert!(!PcpVersion::V6_7.allowed_order(4));
        assert!(PcpVersion::V6_7.allowed_order(9));
        assert!(!PcpVersion::Off.allowed_order(0));
    }

    /// v6.7's refill: batch 63, high_min 493, high_max 16384, an empty list. The first
    /// refill takes 63 << 0 = 63 (high grows to 493 + 63 = 556; max_nr_alloc =
    /// 556 - 0 - 63 = 493 ≥ 63, so alloc_factor becomes 1); the next takes 126 (high
    /// 556 + 126 = 682), then 252. A free halves alloc_factor.
    #[test]
    fn refills_double_while_the_cpu_only_allocates() {
        let mut p = PerCpuPages {
            batch: 63,
            high: 493,
            high_min: 493,
            high_max: 16384,
            ..Default::default()
        };
        assert_eq!(p.nr_pcp_alloc(0, false), 63);
        assert_eq!((p.high, p.alloc_factor), (556, 1));
        assert_eq!(p.nr_pcp_alloc(0, false), 126);
        assert_eq!((p.high, p.alloc_factor), (682, 2));
        assert_eq!(p.nr_pcp_alloc(0, false), 252);
        p.note_free(0);
        assert_eq!(p.alloc_factor, 1);
        // An order-2 refill: 63 >> 2 = 15 blocks; order 9: max(63 >> 9, 2) = 2.
        assert_eq!(p.nr_pcp_alloc(2, false), 15);
        assert_eq!(p.nr_pcp_alloc(9, false), 2);
    }

    /// v6.7's free side: a free that fills the list to high returns free_count pages
    /// (at least batch, leaving batch); under reclaim at most 4 × batch stay.
    #[test]
    fn frees_return_what_was_freed_in_a_row() {
        let mut p = PerCpuPages {
            batch: 63,
            high: 493,
            high_min: 493,
            high_max: 493,
            count: 493,
            free_count: 300,
            ..Default::default()
        };
        let high = p.nr_pcp_high(PcpVersion::V6_7, false, false, false);
        assert_eq!(high, 493);
        assert_eq!(p.nr_pcp_free(PcpVersion::V6_7, high, false), 300);
        // Reclaim active: high = max(493 - 300, 493) = 493, the limit min(252, 493).
        assert_eq!(p.nr_pcp_high(PcpVersion::V6_7, true, false, false), 252);
        // v5.14 under reclaim: min(4 × 63, 493).
        let mut q = PerCpuPages {
            batch: 63,
            high: 493,
            ..Default::default()
        };
        assert_eq!(q.nr_pcp_high(PcpVersion::V5_14, true, false, false), 252);
        // v5.14's batch doubles per free in a row: 63, 126, 252, then capped at
        // high - batch = 430.
        assert_eq!(q.nr_pcp_free(PcpVersion::V5_14, 493, false), 63);
        assert_eq!(q.nr_pcp_free(PcpVersion::V5_14, 493, false), 126);
        assert_eq!(q.nr_pcp_free(PcpVersion::V5_14, 493, false), 252);
        assert_eq!(q.nr_pcp_free(PcpVersion::V5_14, 493, false), 430);
    }

    /// decay_pcp_high: high 1000 over high_min 493 with 900 pages: max(900 - 2016 → 0,
    /// 1000 - 125 = 875, 493) = 875; drain 900 - 875 = 25.
    #[test]
    fn high_decays_by_an_eighth() {
        let mut p = PerCpuPages {
            batch: 63,
            high: 1000,
            high_min: 493,
            high_max: 16384,
            count: 900,
            ..Default::default()
        };
        assert_eq!(p.decay_pcp_high(), 25);
        assert_eq!(p.high, 875);
    }
}
