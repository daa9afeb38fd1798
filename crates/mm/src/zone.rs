//! Zones and their watermarks (`struct zone`, `__setup_per_zone_wmarks`,
//! `setup_per_zone_lowmem_reserve`, `calculate_min_free_kbytes`, `__zone_watermark_ok`).
//!
//! Follows mm/page_alloc.c around v6.1 (kernel-reference §1.4, §1.6). The simulator has
//! two zones, DMA32 and NORMAL; there is no 16 MiB DMA zone (nothing here asks for it).

use super::list::ListHead;
use super::page::lru::NR_LRU_LISTS;
use super::page::Pfn;

pub const ZONE_DMA32: usize = 0;
pub const ZONE_NORMAL: usize = 1;
pub const MAX_NR_ZONES: usize = 2;
pub const ZONE_NAMES: [&str; MAX_NR_ZONES] = ["DMA32", "Normal"];

/// `MAX_PAGE_ORDER` (10 on x86-64): the largest buddy block is 4 MiB.
pub const MAX_PAGE_ORDER: usize = 10;
pub const NR_PAGE_ORDERS: usize = MAX_PAGE_ORDER + 1;
/// x86-64 with THP: 2 MiB pageblocks.
pub const PAGEBLOCK_ORDER: usize = 9;
pub const PAGEBLOCK_NR_PAGES: u64 = 1 << PAGEBLOCK_ORDER;

pub const MIGRATE_UNMOVABLE: usize = 0;
pub const MIGRATE_MOVABLE: usize = 1;
pub const MIGRATE_RECLAIMABLE: usize = 2;
/// The migratetypes with free lists here (`MIGRATE_PCPTYPES`).
pub const MIGRATE_PCPTYPES: usize = 3;
/// The free list deferred blocks belong to: every pageblock starts movable
/// (`memmap_init_range`), and a block's type changes only once it is handed out.
pub const DEFERRED_MT: usize = MIGRATE_MOVABLE;

pub const WMARK_MIN: usize = 0;
pub const WMARK_LOW: usize = 1;
pub const WMARK_HIGH: usize = 2;

#[derive(Debug, Clone, Default)]
pub struct FreeArea {
    pub free_list: [ListHead; MIGRATE_PCPTYPES],
    /// Free blocks of this order (not pages).
    pub nr_free: u64,
}

#[derive(Debug, Clone)]
pub struct Zone {
    /// The zone's type (`zone_idx`: DMA32, NORMAL).
    pub idx: usize,
    /// Its node (`zone_to_nid`).
    pub node: usize,
    pub start_pfn: Pfn,
    /// One past the last PFN.
    pub end_pfn: Pfn,
    pub managed_pages: u64,
    pub free_area: [FreeArea; NR_PAGE_ORDERS],
    /// NR_FREE_PAGES.
    pub nr_free_pages: u64,
    /// Raw WMARK_MIN/LOW/HIGH, before the boost.
    pub watermark: [u64; 3],
    pub watermark_boost: u64,
    /// `ZONE_BOOSTED_WATERMARK`: a fallback boosted the watermarks; wake kswapd once
    /// the allocation is done.
    pub boosted_watermark: bool,
    /// `ZONE_RECLAIM_ACTIVE` (v5.14+): kswapd is reclaiming the zone; the per-CPU
    /// lists keep fewer pages meanwhile.
    pub reclaim_active: bool,
    /// `ZONE_BELOW_HIGH` (v6.7+): an allocation found the zone below its high
    /// watermark; the per-CPU lists shrink as pages are freed until it is above.
    pub below_high: bool,
    /// Pages kept back from allocations whose highest usable zone is the index.
    pub lowmem_reserve: [u64; MAX_NR_ZONES],
    /// NR_ZONE_INACTIVE_ANON .. NR_ZONE_UNEVICTABLE.
    pub lru_pages: [u64; NR_LRU_LISTS],
    /// NR_MLOCK: pages with PG_mlocked (mm/mlock.c).
    pub nr_mlock: u64,
    /// Migratetype of each pageblock of the zone, stored XOR `MIGRATE_MOVABLE` so the
    /// array starts zeroed (movable) and costs host memory only where a type changed.
    pageblock_mt: Vec<u8>,
    /// Max-order blocks whose frames are not initialised yet (deferred struct page
    /// init): `[deferred_start_pfn, deferred_end_pfn)`. They count as free, on the
    /// movable order-MAX_PAGE_ORDER free list below every block put there since boot,
    /// and are handed out from the top down when that list runs empty
    /// (`deferred_grow_zone`).
    pub deferred_start_pfn: Pfn,
    pub deferred_end_pfn: Pfn,
    /// Compaction's state: the back-off after failures, the scanners' cached
    /// positions, the pageblock skip bits (mm/compaction.rs).
    pub compact: super::compaction::ZoneCompact,
}

impl Zone {
    pub fn new(idx: usize, start_pfn: Pfn, end_pfn: Pfn) -> Zone {
        let nr_blocks = (end_pfn - start_pfn).div_ceil(PAGEBLOCK_NR_PAGES as u32) as usize;
        Zone {
            idx,
            node: 0,
            start_pfn,
            end_pfn,
            managed_pages: (end_pfn - start_pfn) as u64,
            free_area: Default::default(),
            nr_free_pages: 0,
            watermark: [0; 3],
            watermark_boost: 0,
            boosted_watermark: false,
            reclaim_active: false,
            below_high: false,
            lowmem_reserve: [0; MAX_NR_ZONES],
            lru_pages: [0; NR_LRU_LISTS],
            nr_mlock: 0,
            pageblock_mt: vec![0; nr_blocks],
            deferred_start_pfn: start_pfn,
            deferred_end_pfn: start_pfn,
            compact: super::compaction::ZoneCompact::new(start_pfn, end_pfn),
        }
    }

    /// The zone on node `nid` instead of node 0.
    pub fn on_node(mut self, nid: usize) -> Zone {
        self.node = nid;
        self
    }

    pub fn name(&self) -> &'static str {
        ZONE_NAMES[self.idx]
    }

    pub fn is_managed(&self) -> bool {
        self.managed_pages > 0
    }

    /// `wmark_pages()`: the watermark plus any boost.
    pub fn wmark(&self, w: usize) -> u64 {
        self.watermark[w] + self.watermark_boost
    }

    pub fn pageblock_migratetype(&self, pfn: Pfn) -> usize {
        (self.pageblock_mt[((pfn - self.start_pfn) >> PAGEBLOCK_ORDER) as usize]
            ^ MIGRATE_MOVABLE as u8) as usize
    }

    /// `set_pageblock_migratetype` for every pageblock of `[pfn, pfn + nr_pages)`.
    pub fn set_pageblock_migratetype(&mut self, pfn: Pfn, nr_pages: u64, mt: usize) {
        let first = ((pfn - self.start_pfn) >> PAGEBLOCK_ORDER) as usize;
        let n = (nr_pages >> PAGEBLOCK_ORDER).max(1) as usize;
        for b in &mut self.pageblock_mt[first..first + n] {
            *b = (mt ^ MIGRATE_MOVABLE) as u8;
        }
    }

    /// Max-order blocks still awaiting initialisation.
    pub fn nr_deferred_blocks(&self) -> u64 {
        ((self.deferred_end_pfn - self.deferred_start_pfn) >> MAX_PAGE_ORDER) as u64
    }

    /// The PFN ranges whose frames have been initialised (all but the deferred blocks).
    pub fn initialised_ranges(&self) -> [std::ops::Range<Pfn>; 2] {
        [
            self.start_pfn..self.deferred_start_pfn,
            self.deferred_end_pfn..self.end_pfn,
        ]
    }

    /// Whether the free list of `order` and `mt` holds a block, counting the deferred
    /// blocks as the tail of the movable max-order list.
    pub fn free_list_nonempty(&self, order: usize, mt: usize) -> bool {
        !self.free_area[order].free_list[mt].is_empty()
            || (order == MAX_PAGE_ORDER && mt == DEFERRED_MT && self.nr_deferred_blocks() > 0)
    }

    /// `zone_reclaimable_pages()`: the file LRU, plus anon when it can be swapped.
    /// Newest kernels fall back to the free pages when both are empty.
    pub fn reclaimable_pages(&self, can_reclaim_anon: bool) -> u64 {
        use super::page::lru::*;
        let mut n = self.lru_pages[INACTIVE_FILE] + self.lru_pages[ACTIVE_FILE];
        if can_reclaim_anon {
            n += self.lru_pages[INACTIVE_ANON] + self.lru_pages[ACTIVE_ANON];
        }
        if n == 0 {
            self.nr_free_pages
        } else {
            n
        }
    }
}

/// `calculate_min_free_kbytes`: 4·√(lowmem KiB), clamped to 128..=262144 KiB.
pub fn calculate_min_free_kbytes(lowmem_pages: u64) -> u64 {
    let lowmem_kbytes = lowmem_pages * 4;
    int_sqrt(lowmem_kbytes * 16).clamp(128, 262_144)
}

/// `int_sqrt`: floor of the square root.
pub fn int_sqrt(x: u64) -> u64 {
    if x < 2 {
        return x;
    }
    let mut r = (x as f64).sqrt() as u64;
    while r * r > x {
        r -= 1;
    }
    while (r + 1) * (r + 1) <= x {
        r += 1;
    }
    r
}

/// `__setup_per_zone_wmarks`: split `pages_min` over the zones by size, then space
/// LOW and HIGH `max(min/4, managed × scale_factor / 10000)` apart.
pub fn setup_per_zone_wmarks(
    zones: &mut [Zone],
    min_free_kbytes: u64,
    watermark_scale_factor: u64,
) {
    let pages_min = min_free_kbytes >> 2; // PAGE_SHIFT - 10
    let lowmem_pages: u64 = zones.iter().map(|z| z.managed_pages).sum();
    for z in zones.iter_mut() {
        if lowmem_pages == 0 {
            break;
        }
        let tmp = pages_min * z.managed_pages / lowmem_pages;
        z.watermark[WMARK_MIN] = tmp;
        let delta = (tmp >> 2).max(z.managed_pages * watermark_scale_factor / 10_000);
        z.watermark[WMARK_LOW] = tmp + delta;
        z.watermark[WMARK_HIGH] = tmp + 2 * delta;
        z.watermark_boost = 0;
    }
}

/// `setup_per_zone_lowmem_reserve`: zone i keeps back, from allocations that could have
/// used zone j > i of the same node, the managed pages of zones i+1..=j divided by zone
/// i's ratio. `ratio[i]` is the ratio for zone type i (DMA32, NORMAL); `zones` holds
/// each node's zones in order of type, node after node.
pub fn setup_per_zone_lowmem_reserve(zones: &mut [Zone], ratio: &[u32; MAX_NR_ZONES]) {
    for i in 0..zones.len() {
        let mut managed_above = 0u64;
        let (node, t) = (zones[i].node, zones[i].idx);
        zones[i].lowmem_reserve = [0; MAX_NR_ZONES];
        for j in i + 1..zones.len() {
            if zones[j].node != node {
                break;
            }
            managed_above += zones[j].managed_pages;
            let upper = zones[j].idx;
            zones[i].lowmem_reserve[upper] = if ratio[t] == 0 || zones[i].managed_pages == 0 {
                0
            } else {
                managed_above / ratio[t] as u64
            };
        }
    }
}

/// Allocation rights that lower the watermark (`ALLOC_*`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AllocFlags {
    /// `ALLOC_HIGH` (`__GFP_HIGH`): min −= min/2.
    pub high: bool,
    /// `ALLOC_HARDER` (atomic / RT): min −= min/4.
    pub harder: bool,
    /// `ALLOC_NO_WATERMARKS` (PF_MEMALLOC): no check at all.
    pub no_watermarks: bool,
}

/// `__zone_watermark_ok`: order-0 free pages must exceed the mark plus the lowmem
/// reserve; a high-order request also needs one free block of at least its order.
pub fn zone_watermark_ok(
    z: &Zone,
    order: usize,
    mark: u64,
    highest_zoneidx: usize,
    flags: AllocFlags,
    free_pages: u64,
) -> bool {
    let free = free_pages as i64 - ((1i64 << order) - 1);
    let mut min = mark as i64;
    if flags.high {
        min -= min / 2;
    }
    if flags.harder {
        min -= min / 4;
    }
    if free <= min + z.lowmem_reserve[highest_zoneidx] as i64 {
        return false;
    }
    if order == 0 {
        return true;
    }
    (order..NR_PAGE_ORDERS).any(|o| {
        z.free_area[o].nr_free > 0 && (0..MIGRATE_PCPTYPES).any(|mt| z.free_list_nonempty(o, mt))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_free_kbytes_reference_points() {
        // kernel-reference §1.4: 16 MiB→512 KiB, 64 MiB→1024, 1 GiB→4096, 4 GiB→8192,
        // 16 GiB→16384. E.g. 4 GiB = 4194304 KiB; 4·√4194304 = 4·2048 = 8192.
        let pages = |bytes: u64| bytes / 4096;
        assert_eq!(calculate_min_free_kbytes(pages(16 << 20)), 512);
        assert_eq!(calculate_min_free_kbytes(pages(64 << 20)), 1024);
        assert_eq!(calculate_min_free_kbytes(pages(1 << 30)), 4096);
        assert_eq!(calculate_min_free_kbytes(pages(4 << 30)), 8192);
        assert_eq!(calculate_min_free_kbytes(pages(16 << 30)), 16384);
        // The clamp: 1 TiB would give 4·√(2^30) = 131072 (inside), 64 TiB exceeds 262144.
        assert_eq!(calculate_min_free_kbytes(pages(64 << 40)), 262_144);
        assert_eq!(calculate_min_free_kbytes(pages(1 << 20)), 128);
    }

    #[test]
    fn watermarks_single_16g_zone() {
        // kernel-reference §1.4 worked example: one 16 GiB zone, min_free_kbytes 16384.
        // pages_min = 16384/4 = 4096. managed = 4194304 pages.
        // delta = max(4096/4 = 1024, 4194304·10/10000 = 4194) = 4194.
        // MIN 4096, LOW 4096+4194 = 8290, HIGH 8290+4194 = 12484.
        let mut zones = vec![Zone::new(ZONE_NORMAL, 0, 4_194_304)];
        setup_per_zone_wmarks(&mut zones, 16384, 10);
        assert_eq!(zones[0].watermark, [4096, 8290, 12484]);
    }

    #[test]
    fn watermarks_split_over_two_zones() {
        // 4 GiB: DMA32 3 GiB (786432 pages) + NORMAL 1 GiB (262144 pages),
        // min_free_kbytes 8192 → pages_min 2048.
        // DMA32: min = 2048·786432/1048576 = 1536; delta = max(384, 786) = 786;
        //        low = 2322, high = 3108.
        // NORMAL: min = 2048·262144/1048576 = 512; delta = max(128, 262) = 262;
        //        low = 774, high = 1036.
        let mut zones = vec![
            Zone::new(ZONE_DMA32, 0, 786_432),
            Zone::new(ZONE_NORMAL, 786_432, 1_048_576),
        ];
        setup_per_zone_wmarks(&mut zones, 8192, 10);
        assert_eq!(zones[0].watermark, [1536, 2322, 3108]);
        assert_eq!(zones[1].watermark, [512, 774, 1036]);
        // watermark_scale_factor 100 (1%): DMA32 delta = max(384, 7864) = 7864.
        setup_per_zone_wmarks(&mut zones, 8192, 100);
        assert_eq!(zones[0].watermark, [1536, 9400, 17264]);
    }

    #[test]
    fn lowmem_reserve_16g_over_3g() {
        // kernel-reference §1.4: NORMAL 16 GiB above DMA32 3 GiB, DMA32 ratio 256:
        // DMA32 keeps 4194304/256 = 16384 pages (64 MiB) from NORMAL-capable allocations.
        let mut zones = vec![
            Zone::new(ZONE_DMA32, 0, 786_432),
            Zone::new(ZONE_NORMAL, 786_432, 786_432 + 4_194_304),
        ];
        setup_per_zone_lowmem_reserve(&mut zones, &[256, 32]);
        assert_eq!(zones[0].lowmem_reserve, [0, 16384]);
        assert_eq!(zones[1].lowmem_reserve, [0, 0]);
    }

    #[test]
    fn watermark_test_boundaries() {
        let mut z = Zone::new(ZONE_DMA32, 0, 1024);
        z.lowmem_reserve = [0, 100];
        let none = AllocFlags::default();
        // free must be strictly above mark + reserve.
        assert!(!zone_watermark_ok(&z, 0, 50, ZONE_DMA32, none, 50));
        assert!(zone_watermark_ok(&z, 0, 50, ZONE_DMA32, none, 51));
        assert!(!zone_watermark_ok(&z, 0, 50, ZONE_NORMAL, none, 150));
        assert!(zone_watermark_ok(&z, 0, 50, ZONE_NORMAL, none, 151));
        // ALLOC_HIGH halves the mark: 50 → 25.
        let high = AllocFlags { high: true, ..none };
        assert!(zone_watermark_ok(&z, 0, 50, ZONE_DMA32, high, 26));
        // Order 2 subtracts 3 pages, and needs a free block of order >= 2: none here.
        assert!(!zone_watermark_ok(&z, 2, 50, ZONE_DMA32, none, 60));
    }
}
