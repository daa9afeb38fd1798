//! Memory compaction (mm/compaction.c; kernel-reference §7): the two scanners of
//! `compact_zone` with their modes, cached positions and pageblock skip bits; whether a
//! zone is worth compacting (`compaction_suitable`); deferred compaction, the back-off
//! after a zone failed to compact for an order.
//!
//! The scanners are the linear ones of v4.x (the seed's kernels): v5.1's fast searches
//! (`fast_find_migrateblock`, `fast_isolate_freepages`) are not modelled, nor is the
//! capture of a freed page by direct compaction (the allocation takes it from the free
//! lists after the run). The allocator's side of direct compaction is in
//! `page_alloc.rs`, the kcompactd thread in `kcompactd.rs`.

pub use super::compact_status::*;
use super::page::{lru, on, pg, Pfn};
use super::vmstat::{extfrag_for_order, fill_contig_page_info, fragmentation_index};
use super::zone::{
    zone_watermark_ok, AllocFlags, Zone, MIGRATE_MOVABLE, NR_PAGE_ORDERS, PAGEBLOCK_NR_PAGES,
    PAGEBLOCK_ORDER, WMARK_LOW, WMARK_MIN,
};
use super::Mm;
use crate::trace::Tp;
use crate::vm_event_item::Ev;

/// `COMPACT_CLUSTER_MAX`: pages isolated for migration at a time.
pub const COMPACT_CLUSTER_MAX: usize = 32;

/// `COMPACTION_HPAGE_ORDER`: the order proactive compaction scores against (PMD).
pub const COMPACTION_HPAGE_ORDER: usize = 9;

/// `enum migrate_mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MigrateMode {
    /// Never blocks: skips pages that are dirty or under writeback.
    Async,
    /// Blocks on most things but not on writeback.
    SyncLight,
    /// Blocks on everything (writeback waits are not modelled: such pages fail).
    Sync,
}

impl MigrateMode {
    /// As `mm_compaction_begin` prints it.
    fn name(self) -> &'static str {
        match self {
            MigrateMode::Async => "async",
            MigrateMode::SyncLight => "sync_light",
            MigrateMode::Sync => "sync",
        }
    }
}

/// `COMPACT_MAX_DEFER_SHIFT`: at most 2^6 = 64 attempts are skipped.
pub const COMPACT_MAX_DEFER_SHIFT: u32 = 6;

/// `compact_gap`: the free pages compaction needs beyond the watermark, room for the
/// pages it migrates (twice the request: isolated sources plus their targets).
pub fn compact_gap(order: usize) -> u64 {
    2 << order
}

/// `__compaction_suitable`: enough order-0 memory free (`free_pages`) to compact into:
/// the MIN watermark (LOW for a costly order) plus `compact_gap`.
pub fn compaction_suitable_with(
    z: &Zone,
    order: usize,
    highest_zoneidx: usize,
    free_pages: u64,
) -> bool {
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
        free_pages,
    )
}

/// `__compaction_suitable` with the zone's free pages.
pub fn compaction_suitable_free(z: &Zone, order: usize, highest_zoneidx: usize) -> bool {
    compaction_suitable_with(z, order, highest_zoneidx, z.nr_free_pages)
}

/// `compaction_suitable`: `__compaction_suitable`, and for a costly order, a
/// fragmentation index above `vm.extfrag_threshold` (or -1000, the request would
/// succeed): an index in 0..=threshold says a failure would be for lack of memory,
/// which reclaim, not compaction, fixes.
/// `free_pages` is what the caller reads: the zone's counter, per-CPU drift and all
/// (`zone_page_state`).
pub fn compaction_suitable(
    z: &Zone,
    order: usize,
    highest_zoneidx: usize,
    extfrag_threshold: i64,
    free_pages: u64,
) -> bool {
    if !compaction_suitable_with(z, order, highest_zoneidx, free_pages) {
        return false;
    }
    if order > super::page_alloc::PAGE_ALLOC_COSTLY_ORDER {
        let fragindex = fragmentation_index(order, &fill_contig_page_info(&zone_nr_free(z), order));
        if (0..=extfrag_threshold).contains(&fragindex) {
            return false;
        }
    }
    true
}

fn zone_nr_free(z: &Zone) -> [u64; NR_PAGE_ORDERS] {
    std::array::from_fn(|o| z.free_area[o].nr_free)
}

/// `fragmentation_score_zone`: the percentage of the zone's free memory not in
/// blocks of `COMPACTION_HPAGE_ORDER` (0..=100).
pub fn fragmentation_score_zone(z: &Zone) -> u64 {
    extfrag_for_order(
        COMPACTION_HPAGE_ORDER,
        &fill_contig_page_info(&zone_nr_free(z), COMPACTION_HPAGE_ORDER),
    )
}

/// `fragmentation_score_wmark` (v5.9–v6.7): proactive compaction runs above the high
/// mark and stops at the low one.
pub fn fragmentation_score_wmark(proactiveness: u64, low: bool) -> u64 {
    let wmark_low = 100u64.saturating_sub(proactiveness).max(5);
    if low {
        wmark_low
    } else {
        (wmark_low + 10).min(100)
    }
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

/// A zone's compaction state (`struct zone`'s compact_* fields and the pageblock skip
/// bits of its `pageblock_flags`).
#[derive(Debug, Clone)]
pub struct ZoneCompact {
    pub defer: CompactDefer,
    /// `compact_cached_free_pfn`: where the free scanner resumes.
    pub cached_free_pfn: Pfn,
    /// `compact_cached_migrate_pfn[]`: where the migrate scanner resumes, for async \[0]
    /// and sync \[1] runs.
    pub cached_migrate_pfn: [Pfn; 2],
    /// `compact_init_migrate_pfn` / `compact_init_free_pfn`: where scanners start after
    /// the cached positions are reset.
    pub init_migrate_pfn: Pfn,
    pub init_free_pfn: Pfn,
    /// `compact_blockskip_flush`: a direct compaction's scanners met; kswapd clears
    /// the skip bits before it next sleeps.
    pub blockskip_flush: bool,
    /// PB_migrate_skip, a bit per pageblock.
    skip: Vec<u64>,
    nr_blocks: usize,
}

impl ZoneCompact {
    pub fn new(start_pfn: Pfn, end_pfn: Pfn) -> ZoneCompact {
        let nr_blocks = (end_pfn - start_pfn).div_ceil(PAGEBLOCK_NR_PAGES as u32) as usize;
        let last_block = pageblock_start_pfn(end_pfn.saturating_sub(1)).max(start_pfn);
        ZoneCompact {
            defer: CompactDefer::default(),
            cached_free_pfn: last_block,
            cached_migrate_pfn: [start_pfn; 2],
            init_migrate_pfn: start_pfn,
            init_free_pfn: last_block,
            blockskip_flush: false,
            skip: vec![0; nr_blocks.div_ceil(64)],
            nr_blocks,
        }
    }

    pub fn nr_blocks(&self) -> usize {
        self.nr_blocks
    }

    /// The skip bit of pageblock `b` (counted from the zone's start).
    pub fn skip(&self, b: usize) -> bool {
        self.skip[b / 64] >> (b % 64) & 1 != 0
    }

    fn set_skip(&mut self, b: usize) {
        self.skip[b / 64] |= 1 << (b % 64);
    }

    /// Pageblocks with the skip bit set.
    pub fn nr_skip(&self) -> u64 {
        self.skip.iter().map(|w| w.count_ones() as u64).sum()
    }

    /// Bits past the last pageblock (must stay clear).
    pub fn stray_skip_bits(&self) -> bool {
        let tail = self.nr_blocks % 64;
        tail != 0 && self.skip.last().is_some_and(|w| w >> tail != 0)
    }

    /// `reset_cached_positions`.
    fn reset_cached_positions(&mut self) {
        self.cached_migrate_pfn = [self.init_migrate_pfn; 2];
        self.cached_free_pfn = self.init_free_pfn;
    }
}

fn pageblock_start_pfn(pfn: Pfn) -> Pfn {
    pfn & !(PAGEBLOCK_NR_PAGES as Pfn - 1)
}

fn pageblock_end_pfn(pfn: Pfn) -> Pfn {
    pageblock_start_pfn(pfn) + PAGEBLOCK_NR_PAGES as Pfn
}

/// One compaction run (`struct compact_control`).
#[derive(Debug, Clone)]
pub struct CompactControl {
    pub zi: usize,
    /// `None` is the kernel's -1: compact everything (`vm.compact_memory`, proactive).
    pub order: Option<usize>,
    pub highest_zoneidx: usize,
    /// The allocation's migratetype: what a suitable free block must be.
    pub migratetype: usize,
    pub mode: MigrateMode,
    /// The watermark the allocation is checked against (`alloc_flags`).
    pub alloc_wmark: usize,
    /// `__GFP_FS`: too_many_isolated allows a GFP_NOFS caller past the limit.
    pub gfp_fs: bool,
    pub whole_zone: bool,
    pub ignore_skip_hint: bool,
    pub ignore_block_suitable: bool,
    pub direct_compaction: bool,
    pub proactive_compaction: bool,
    /// For proactive runs: `vm.compaction_proactiveness` and whether kswapd runs.
    pub proactiveness: u64,
    migrate_pfn: Pfn,
    free_pfn: Pfn,
    migratepages: Vec<Pfn>,
    freepages: Vec<Pfn>,
    pub total_migrate_scanned: u64,
    pub total_free_scanned: u64,
}

impl CompactControl {
    /// A synchronous run for `order` with the skip hints used (callers set the rest).
    pub fn new(zi: usize, order: Option<usize>) -> CompactControl {
        CompactControl {
            zi,
            order,
            highest_zoneidx: zi,
            migratetype: MIGRATE_MOVABLE,
            mode: MigrateMode::Sync,
            alloc_wmark: WMARK_MIN,
            gfp_fs: true,
            whole_zone: false,
            ignore_skip_hint: false,
            ignore_block_suitable: false,
            direct_compaction: false,
            proactive_compaction: false,
            proactiveness: 0,
            migrate_pfn: 0,
            free_pfn: 0,
            migratepages: Vec::new(),
            freepages: Vec::new(),
            total_migrate_scanned: 0,
            total_free_scanned: 0,
        }
    }

    fn sync(&self) -> bool {
        self.mode != MigrateMode::Async
    }

    /// The scanners met (compared by pageblock).
    fn scanners_met(&self) -> bool {
        self.free_pfn >> PAGEBLOCK_ORDER <= self.migrate_pfn >> PAGEBLOCK_ORDER
    }
}

/// What `isolate_migratepages` found (`isolate_migrate_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Isolate {
    /// Give up this run (too many isolated pages).
    Abort,
    /// Nothing isolated here; go on.
    None,
    /// Pages to migrate.
    Success,
}

impl Mm {
    /// `compact_zone`: from the cached positions (or the zone's ends for a whole-zone
    /// run) the migrate scanner walks up isolating movable LRU pages
    /// (`isolate_migratepages`), the free scanner walks down isolating free pages of
    /// suitable pageblocks (`isolate_freepages`), each isolated page migrates to a free
    /// one, until `compact_finished` says the order's page is there or the scanners
    /// meet. Pages that fail to migrate go back to their LRU; unused free pages go back
    /// to the buddy allocator. CPU: `scan_page` per page either scanner looks at, and
    /// each migration's cost.
    pub fn compact_zone(&mut self, cc: &mut CompactControl) -> CompactResult {
        let zi = cc.zi;
        let (start, end) = (self.zones[zi].start_pfn, self.zones[zi].end_pfn);
        if let Some(order) = cc.order {
            let r = self.compaction_suit_allocation_order(
                zi,
                order,
                cc.highest_zoneidx,
                cc.alloc_wmark,
            );
            if r != CompactResult::Continue {
                return r;
            }
            if self.zones[zi]
                .compact
                .defer
                .compaction_restarting(order as u32)
            {
                self.reset_isolation_suitable(zi);
            }
        }
        let sync = usize::from(cc.sync());
        let last_block = pageblock_start_pfn(end - 1).max(start);
        if cc.whole_zone {
            cc.migrate_pfn = start;
            cc.free_pfn = last_block;
        } else {
            let zc = &mut self.zones[zi].compact;
            cc.migrate_pfn = zc.cached_migrate_pfn[sync];
            cc.free_pfn = zc.cached_free_pfn;
            if cc.free_pfn < start || cc.free_pfn >= end {
                cc.free_pfn = last_block;
                zc.cached_free_pfn = last_block;
            }
            if cc.migrate_pfn < start || cc.migrate_pfn >= end {
                cc.migrate_pfn = start;
                zc.cached_migrate_pfn = [start; 2];
            }
            if cc.migrate_pfn <= zc.init_migrate_pfn {
                cc.whole_zone = true;
            }
        }
        trace_event!(
            self,
            Tp::CompactionBegin,
            "zone_start={start:#x} migrate_pfn={:#x} free_pfn={:#x} zone_end={end:#x}, mode={}",
            cc.migrate_pfn,
            cc.free_pfn,
            cc.mode.name()
        );
        // The pageblock migrated from last, whose freed pages wait on this CPU's
        // per-CPU lists (None: none since the last drain).
        let mut last_migrated_pfn: Option<Pfn> = None;
        let result = loop {
            let r = self.compact_finished(cc);
            if r != CompactResult::Continue && r != CompactResult::NoSuitablePage {
                break r;
            }
            match self.isolate_migratepages(cc) {
                Isolate::Abort => break CompactResult::Contended,
                Isolate::None => {}
                Isolate::Success => {
                    last_migrated_pfn = Some(pageblock_start_pfn(cc.migrate_pfn - 1).max(start));
                    // migrate_pages: ENOMEM (the free scanner found nothing) before the
                    // scanners met ends the run.
                    if !self.compact_migrate_pages(cc) && !cc.scanners_met() {
                        break CompactResult::Contended;
                    }
                }
            }
            // The migrate scanner left the cc->order block it migrated from: drain
            // this CPU's lists (lru_add_drain_cpu_zone), so the freed pages merge and
            // compact_finished sees the block.
            if let (Some(order), Some(last)) = (cc.order, last_migrated_pfn) {
                let current_block_start = cc.migrate_pfn & !((1 << order) - 1);
                if order > 0 && last < current_block_start {
                    self.drain_local_pages(zi);
                    last_migrated_pfn = None;
                }
            }
        };
        // Pages still isolated for migration go back (an aborted run).
        for p in std::mem::take(&mut cc.migratepages) {
            self.frames[p as usize].list = on::NONE;
            self.lruvec_add_folio(p);
        }
        // release_freepages: the cached free pfn only goes back, to the pageblock of
        // the highest page released.
        if let Some(&highest) = cc.freepages.iter().max() {
            let pfn = pageblock_start_pfn(highest).max(start);
            let zc = &mut self.zones[zi].compact;
            if pfn > zc.cached_free_pfn {
                zc.cached_free_pfn = pfn;
            }
        }
        // release_freepages (v6.10+: release_free_list): __free_pages, through this
        // CPU's list.
        for p in std::mem::take(&mut cc.freepages) {
            self.frames[p as usize].list = on::NONE;
            self.free_unref_or_buddy(p, 0, false);
        }
        trace_event!(self, Tp::CompactionEnd, "zone_start={start:#x} migrate_pfn={:#x} free_pfn={:#x} zone_end={end:#x}, mode={} status={}",
                cc.migrate_pfn,
                cc.free_pfn,
                cc.mode.name(),
                result.name());
        result
    }

    /// `compaction_suit_allocation_order`: Success if the allocation would pass its
    /// watermark already, Skipped if the zone is not worth compacting, else Continue.
    pub fn compaction_suit_allocation_order(
        &self,
        zi: usize,
        order: usize,
        highest_zoneidx: usize,
        wmark: usize,
    ) -> CompactResult {
        let z = &self.zones[zi];
        let free = self.zone_page_state_free(zi);
        if zone_watermark_ok(
            z,
            order,
            z.wmark(wmark),
            highest_zoneidx,
            AllocFlags::default(),
            free,
        ) {
            return CompactResult::Success;
        }
        if !compaction_suitable(z, order, highest_zoneidx, self.cfg.extfrag_threshold, free) {
            return CompactResult::Skipped;
        }
        CompactResult::Continue
    }

    /// `__reset_isolation_suitable`: every skip bit cleared and the scanners' cached
    /// positions back at the zone's ends (the kernel also looks for the first useful
    /// pageblocks from each end; here the ends themselves).
    pub fn reset_isolation_suitable(&mut self, zi: usize) {
        let zc = &mut self.zones[zi].compact;
        zc.skip.iter_mut().for_each(|w| *w = 0);
        zc.blockskip_flush = false;
        zc.reset_cached_positions();
    }

    /// `reset_isolation_suitable(pgdat)` (kswapd before it sleeps): the zones of node
    /// `nid` a direct compaction finished scanning.
    pub fn reset_isolation_suitable_node(&mut self, nid: usize) {
        for zi in self.node_zones(nid) {
            if self.zones[zi].is_managed() && self.zones[zi].compact.blockskip_flush {
                self.reset_isolation_suitable(zi);
            }
        }
    }

    fn block_index(&self, zi: usize, pfn: Pfn) -> usize {
        ((pfn - self.zones[zi].start_pfn) >> PAGEBLOCK_ORDER) as usize
    }

    /// `isolation_suitable`: the pageblock's skip bit is clear (or hints are ignored).
    fn isolation_suitable(&self, cc: &CompactControl, pfn: Pfn) -> bool {
        cc.ignore_skip_hint || !self.zones[cc.zi].compact.skip(self.block_index(cc.zi, pfn))
    }

    /// `update_cached_migrate`: the migrate scanner's restart point moves past a
    /// pageblock that yielded nothing.
    fn update_cached_migrate(&mut self, cc: &CompactControl, pfn: Pfn) {
        let pfn = pageblock_end_pfn(pfn);
        let zc = &mut self.zones[cc.zi].compact;
        if pfn > zc.cached_migrate_pfn[0] {
            zc.cached_migrate_pfn[0] = pfn;
        }
        if cc.sync() && pfn > zc.cached_migrate_pfn[1] {
            zc.cached_migrate_pfn[1] = pfn;
        }
    }

    /// `compact_finished` (`__compact_finished`).
    fn compact_finished(&mut self, cc: &CompactControl) -> CompactResult {
        let zi = cc.zi;
        if cc.scanners_met() {
            let zc = &mut self.zones[zi].compact;
            zc.reset_cached_positions();
            if cc.direct_compaction {
                zc.blockskip_flush = true;
            }
            return if cc.whole_zone {
                CompactResult::Complete
            } else {
                CompactResult::PartialSkipped
            };
        }
        if cc.proactive_compaction {
            let nid = self.zones[zi].node;
            if matches!(self.kswapd[nid].state, super::kswapd::KswapdState::Running) {
                return CompactResult::PartialSkipped;
            }
            let score = fragmentation_score_zone(&self.zones[zi]);
            return if score > fragmentation_score_wmark(cc.proactiveness, true) {
                CompactResult::Continue
            } else {
                CompactResult::Success
            };
        }
        let Some(order) = cc.order else {
            return CompactResult::Continue;
        };
        // Finish the pageblock first: the freer it is, the later the next steal.
        if !cc.migrate_pfn.is_multiple_of(PAGEBLOCK_NR_PAGES as Pfn) {
            return CompactResult::Continue;
        }
        let z = &self.zones[zi];
        for o in order..NR_PAGE_ORDERS {
            if z.free_list_nonempty(o, cc.migratetype) {
                return CompactResult::Success;
            }
            // A block another migratetype's list holds that the allocation may steal.
            if super::page_alloc::find_suitable_fallback(z, o, cc.migratetype)
                .is_some_and(|(_, can_steal)| can_steal)
            {
                return CompactResult::Success;
            }
        }
        CompactResult::NoSuitablePage
    }

    /// `too_many_isolated` (compaction's): more pages isolated on the node than half
    /// its LRU pages (an eighth for `__GFP_FS` callers). Counts what reclaimers hold.
    fn compaction_too_many_isolated(&mut self, cc: &CompactControl) -> bool {
        let nid = self.zones[cc.zi].node;
        let mut lru_pages: u64 = (0..lru::UNEVICTABLE)
            .map(|l| self.node_lru_pages(nid, l))
            .sum();
        if cc.gfp_fs {
            lru_pages >>= 3;
        }
        let now = self.clock();
        let w = &mut self.reclaim_wait;
        let isolated = w.nr_isolated(nid, now, true) + w.nr_isolated(nid, now, false);
        isolated > lru_pages / 2
    }

    /// `isolate_migratepages`: the next pageblock below the free scanner that is worth
    /// scanning (skip bit clear; for async direct compaction, of the allocation's
    /// migratetype: `suitable_migration_source`), scanned for up to
    /// COMPACT_CLUSTER_MAX pages.
    fn isolate_migratepages(&mut self, cc: &mut CompactControl) -> Isolate {
        let zi = cc.zi;
        let (start, end) = (self.zones[zi].start_pfn, self.zones[zi].end_pfn);
        let mut low_pfn = cc.migrate_pfn;
        let mut block_start = pageblock_start_pfn(low_pfn).max(start);
        let mut block_end = pageblock_end_pfn(low_pfn).min(end);
        while block_end <= cc.free_pfn && block_start < end {
            let aligned = low_pfn == block_start;
            let z = &self.zones[zi];
            // Uninitialised (deferred) memory is free max-order blocks: nothing to move.
            let deferred = block_start >= z.deferred_start_pfn && block_start < z.deferred_end_pfn;
            if deferred {
                // The kernel's migrate scanner passes over free blocks counting their
                // pages as scanned (its memory is initialised by then).
                let n = (block_end - low_pfn) as u64;
                self.charge(self.cfg.costs.scan_page_ns);
                self.count(Ev::CompactMigrateScanned, n);
                cc.total_migrate_scanned += n;
            }
            let pass_over = if deferred || (aligned && !self.isolation_suitable(cc, block_start)) {
                true
            } else if !self.suitable_migration_source(cc, block_start) {
                self.update_cached_migrate(cc, block_end);
                true
            } else {
                false
            };
            if !pass_over {
                match self.isolate_migratepages_block(cc, low_pfn, block_end) {
                    Some(pfn) => low_pfn = pfn,
                    None => return Isolate::Abort,
                }
                break;
            }
            low_pfn = block_end;
            cc.migrate_pfn = low_pfn;
            block_start = block_end;
            block_end = (block_end + PAGEBLOCK_NR_PAGES as Pfn).min(end);
        }
        cc.migrate_pfn = low_pfn;
        if cc.migratepages.is_empty() {
            Isolate::None
        } else {
            Isolate::Success
        }
    }

    /// `suitable_migration_source`: async direct compaction only empties pageblocks of
    /// the allocation's migratetype (movable requests: movable blocks).
    fn suitable_migration_source(&self, cc: &CompactControl, pfn: Pfn) -> bool {
        if cc.mode != MigrateMode::Async || !cc.direct_compaction {
            return true;
        }
        self.zones[cc.zi].pageblock_migratetype(pfn) == cc.migratetype
    }

    /// `isolate_migratepages_block` over `[low_pfn, end_pfn)`: LRU pages off their
    /// lists, until COMPACT_CLUSTER_MAX are held. Async runs pass over pages under
    /// writeback; async direct compaction gives up an order-aligned chunk at its first
    /// page that cannot move (`skip_on_failure`). A pageblock scanned to its end that
    /// yielded nothing gets its skip bit. Returns where the scan stopped, or `None` to
    /// abort (too many isolated pages).
    fn isolate_migratepages_block(
        &mut self,
        cc: &mut CompactControl,
        mut low_pfn: Pfn,
        end_pfn: Pfn,
    ) -> Option<Pfn> {
        if self.compaction_too_many_isolated(cc) {
            if cc.mode != MigrateMode::Async {
                let nid = self.zones[cc.zi].node;
                self.reclaim_throttle(nid, super::throttle::Sleep::Isolated);
            }
            return None;
        }
        let start_pfn = low_pfn;
        let skip_on_failure = cc.direct_compaction && cc.mode == MigrateMode::Async;
        let chunk = 1 << cc.order.unwrap_or(0).min(PAGEBLOCK_ORDER);
        let mut next_skip_pfn = (low_pfn | (chunk - 1)) + 1;
        let mut chunk_start = cc.migratepages.len();
        let (mut nr_scanned, mut nr_isolated) = (0u64, 0u64);
        // Pages looked at (CPU); a free block is stepped over at one look.
        let mut visited = 0u64;
        let unevictable_ok = self.cfg.compact_unevictable_allowed;
        while low_pfn < end_pfn {
            if skip_on_failure && low_pfn >= next_skip_pfn {
                // The last chunk moved whole; with pages held, go migrate them.
                if !cc.migratepages.is_empty() {
                    break;
                }
                next_skip_pfn = (low_pfn | (chunk - 1)) + 1;
                chunk_start = cc.migratepages.len();
            }
            let p = low_pfn;
            let f = self.frames[p as usize];
            nr_scanned += 1;
            visited += 1;
            if f.list == on::BUDDY && f.test(pg::BUDDY) {
                // A free block: passed over whole (and counted as scanned).
                let n = 1u64 << f.order;
                nr_scanned += n - 1;
                low_pfn += n as Pfn;
                continue;
            }
            low_pfn += 1;
            if self.page_is_thp(p) {
                // A THP: not moved here; step over the rest of it (isolate_fail).
                let end_of_thp = (p | (super::huge_memory::HPAGE_PMD_NR - 1)) + 1;
                nr_scanned += (end_of_thp - low_pfn) as u64;
                low_pfn = end_of_thp.min(end_pfn);
                if skip_on_failure {
                    nr_isolated -= self.putback_chunk(cc, chunk_start);
                    low_pfn = next_skip_pfn.min(end_pfn).max(low_pfn);
                }
                continue;
            }
            let on_lru = f.test(pg::LRU)
                && (f.list < lru::NR_LRU_LISTS as u8 || f.list & 0xf0 == on::LRU_GEN);
            let movable = on_lru
                && !(cc.mode == MigrateMode::Async && f.test(pg::WRITEBACK))
                && (unevictable_ok || !f.test(pg::UNEVICTABLE));
            if !movable {
                if skip_on_failure {
                    // isolate_fail: give the chunk's pages back, skip to its end.
                    nr_isolated -= self.putback_chunk(cc, chunk_start);
                    low_pfn = next_skip_pfn.min(end_pfn).max(low_pfn);
                }
                continue;
            }
            self.lruvec_del_folio(p);
            self.frames[p as usize].list = on::ISOLATED;
            cc.migratepages.push(p);
            nr_isolated += 1;
            if cc.migratepages.len() >= COMPACT_CLUSTER_MAX {
                break;
            }
        }
        let low_pfn = low_pfn.min(end_pfn);
        self.charge(self.cfg.costs.scan_page_ns * visited);
        if low_pfn == end_pfn && nr_isolated == 0 {
            let b = self.block_index(cc.zi, start_pfn);
            self.zones[cc.zi].compact.set_skip(b);
            self.update_cached_migrate(cc, low_pfn);
        }
        self.count(Ev::CompactMigrateScanned, nr_scanned);
        self.count(Ev::CompactIsolated, nr_isolated);
        cc.total_migrate_scanned += nr_scanned;
        trace_event!(
            self,
            Tp::CompactionIsolateMigratepages,
            "range=({start_pfn:#x} ~ {low_pfn:#x}) nr_scanned={nr_scanned} nr_taken={nr_isolated}"
        );
        Some(low_pfn)
    }

    /// Async direct compaction's `isolate_fail`: the pages isolated from the current
    /// order-aligned chunk (from index `from` of the list) go back to their LRU.
    /// Returns how many.
    fn putback_chunk(&mut self, cc: &mut CompactControl, from: usize) -> u64 {
        let back: Vec<Pfn> = cc.migratepages.drain(from..).collect();
        for &q in &back {
            self.frames[q as usize].list = on::NONE;
            self.lruvec_add_folio(q);
        }
        back.len() as u64
    }

    /// `migrate_pages` with `compaction_alloc`: each isolated page moves to a free
    /// page, the free scanner refilling the free list when it runs out. A page that
    /// does not move goes back to its LRU. False if the free pages ran out (ENOMEM).
    fn compact_migrate_pages(&mut self, cc: &mut CompactControl) -> bool {
        let sources = std::mem::take(&mut cc.migratepages);
        let nr = sources.len();
        let mut enough = true;
        for (i, src) in sources.into_iter().enumerate() {
            if cc.freepages.is_empty() && enough {
                self.isolate_freepages(cc, nr - i);
                enough = !cc.freepages.is_empty();
            }
            let migrated = match cc.freepages.pop() {
                Some(dst) => match self.migrate_folio(src, dst) {
                    Ok(()) => Some(dst),
                    Err(_) => {
                        cc.freepages.push(dst);
                        None
                    }
                },
                None => None,
            };
            // putback_movable_pages: the new page, or the old one that did not move.
            let back = migrated.unwrap_or(src);
            self.frames[back as usize].list = on::NONE;
            self.lruvec_add_folio(back);
        }
        // migrate_pages_batch: one flush for the batch's unmapped PTEs.
        self.try_to_unmap_flush();
        enough
    }

    /// `isolate_freepages`: from the free scanner's position down, pageblock by
    /// pageblock above the migrate scanner's block, free pages of suitable target
    /// blocks (`suitable_migration_target`, skip bit clear) until `nr_wanted` more
    /// are held. Async runs stride through a block 32 pages at a time, halving the
    /// stride's growth back to 1 once a block yields pages.
    fn isolate_freepages(&mut self, cc: &mut CompactControl, nr_wanted: usize) {
        let zi = cc.zi;
        let (start, end) = (self.zones[zi].start_pfn, self.zones[zi].end_pfn);
        let wanted = cc.freepages.len() + nr_wanted.max(1);
        let low_pfn = pageblock_end_pfn(cc.migrate_pfn);
        let mut isolate_start = cc.free_pfn;
        let mut block_start = pageblock_start_pfn(isolate_start).max(start);
        let mut block_end =
            (pageblock_start_pfn(isolate_start) + PAGEBLOCK_NR_PAGES as Pfn).min(end);
        let mut stride: Pfn = if cc.mode == MigrateMode::Async {
            COMPACT_CLUSTER_MAX as Pfn
        } else {
            1
        };
        loop {
            if block_start < low_pfn {
                break;
            }
            if self.suitable_migration_target(cc, block_start)
                && self.isolation_suitable(cc, block_start)
            {
                let nr =
                    self.isolate_freepages_block(cc, &mut isolate_start, block_end, stride, wanted);
                if isolate_start >= block_end {
                    // Exhausted: skip it next time; the free scanner restarts below.
                    let b = self.block_index(zi, block_start);
                    let zc = &mut self.zones[zi].compact;
                    zc.set_skip(b);
                    let next = block_start.saturating_sub(PAGEBLOCK_NR_PAGES as Pfn);
                    if next < zc.cached_free_pfn {
                        zc.cached_free_pfn = next;
                    }
                }
                if cc.freepages.len() >= wanted {
                    if isolate_start >= block_end {
                        isolate_start = block_start.saturating_sub(PAGEBLOCK_NR_PAGES as Pfn);
                    }
                    break;
                } else if isolate_start < block_end {
                    break; // the watermark stopped it
                }
                stride = if nr > 0 {
                    1
                } else {
                    (stride << 1).min(COMPACT_CLUSTER_MAX as Pfn)
                };
            }
            let next = block_start.saturating_sub(PAGEBLOCK_NR_PAGES as Pfn);
            isolate_start = next;
            if next == block_start {
                break;
            }
            block_end = block_start;
            block_start = next;
        }
        cc.free_pfn = isolate_start;
    }

    /// `suitable_migration_target`: not a free block of pageblock order or more (no
    /// point splitting it), and a movable pageblock unless `ignore_block_suitable`.
    fn suitable_migration_target(&self, cc: &CompactControl, pfn: Pfn) -> bool {
        let z = &self.zones[cc.zi];
        if pfn >= z.deferred_start_pfn && pfn < z.deferred_end_pfn {
            return false;
        }
        let f = &self.frames[pfn as usize];
        if f.list == on::BUDDY && f.test(pg::BUDDY) && f.order as usize >= PAGEBLOCK_ORDER {
            return false;
        }
        cc.ignore_block_suitable || z.pageblock_migratetype(pfn) == MIGRATE_MOVABLE
    }

    /// `isolate_freepages_block` from `*pfn` to `end`: free buddy blocks off their
    /// lists, split into isolated order-0 pages, until `wanted` are held. Taking a
    /// block must leave the zone above MIN + its size (`__isolate_free_page`).
    /// Returns the pages isolated; `*pfn` says where it stopped.
    fn isolate_freepages_block(
        &mut self,
        cc: &mut CompactControl,
        pfn: &mut Pfn,
        end: Pfn,
        stride: Pfn,
        wanted: usize,
    ) -> u64 {
        let zi = cc.zi;
        let from = *pfn;
        let mut p = *pfn;
        let (mut nr_scanned, mut total, mut visited) = (0u64, 0u64, 0u64);
        while p < end {
            nr_scanned += 1;
            visited += 1;
            let f = self.frames[p as usize];
            if !(f.list == on::BUDDY && f.test(pg::BUDDY)) {
                p += stride;
                continue;
            }
            let order = f.order as usize;
            let z = &self.zones[zi];
            let mark = z.watermark[WMARK_MIN] + (1 << order);
            let free = self.zone_page_state_free(zi);
            if !zone_watermark_ok(z, 0, mark, 0, AllocFlags::default(), free) {
                break;
            }
            super::page_alloc::take_free_block(&mut self.zones[zi], &mut self.frames, p);
            for q in p..p + (1 << order) {
                self.frames[q as usize].list = on::ISOLATED;
                cc.freepages.push(q);
            }
            total += 1 << order;
            nr_scanned += (1 << order) - 1;
            if cc.freepages.len() >= wanted {
                p += 1 << order;
                break;
            }
            p += (1 << order) - 1 + stride;
        }
        let p = p.min(end);
        *pfn = p;
        self.charge(self.cfg.costs.scan_page_ns * visited);
        self.count(Ev::CompactFreeScanned, nr_scanned);
        self.count(Ev::CompactIsolated, total);
        cc.total_free_scanned += nr_scanned;
        trace_event!(
            self,
            Tp::CompactionIsolateFreepages,
            "range=({from:#x} ~ {p:#x}) nr_scanned={nr_scanned} nr_taken={total}"
        );
        total
    }

    /// Whether zone `zi` has a free block of at least `order` on any list.
    pub fn zone_has_free_block(&self, zi: usize, order: usize) -> bool {
        let z = &self.zones[zi];
        (order..NR_PAGE_ORDERS)
            .any(|o| (0..super::zone::MIGRATE_PCPTYPES).any(|mt| z.free_list_nonempty(o, mt)))
    }

    /// `try_to_compact_pages`: direct compaction for an allocation, each eligible zone
    /// from the highest: deferred zones are passed over (unless at
    /// MIN_COMPACT_PRIORITY); ASYNC at INIT_COMPACT_PRIORITY, SYNC_LIGHT otherwise,
    /// and at MIN_COMPACT_PRIORITY the whole zone with hints and block types ignored.
    /// A success stops it (`compaction_defer_reset` without an allocation yet); a
    /// synchronous run over the zone without the page defers the zone. Returns the
    /// best result over the zones.
    pub fn try_to_compact_pages(
        &mut self,
        gfp: super::page_alloc::Gfp,
        order: usize,
        prio: u32,
    ) -> CompactResult {
        trace_event!(
            self,
            Tp::CompactionTryToCompactPages,
            "order={order} gfp_mask=GFP_KERNEL priority={prio}"
        );
        let mut rc = CompactResult::Skipped;
        // The zonelist: the preferred node's zones highest first, then the others'.
        for zi in self.alloc_zonelist_zones(gfp.highest_zoneidx) {
            if !self.zones[zi].is_managed() {
                continue;
            }
            if prio > MIN_COMPACT_PRIORITY
                && self.zones[zi]
                    .compact
                    .defer
                    .compaction_deferred(order as u32)
            {
                self.trace_defer(Tp::CompactionDeferred, zi, order);
                rc = rc.max(CompactResult::Deferred);
                continue;
            }
            let mut cc = CompactControl::new(zi, Some(order));
            cc.mode = if prio == COMPACT_PRIO_ASYNC {
                MigrateMode::Async
            } else {
                MigrateMode::SyncLight
            };
            cc.highest_zoneidx = gfp.highest_zoneidx;
            cc.migratetype = gfp.migratetype;
            cc.direct_compaction = true;
            let full = prio == MIN_COMPACT_PRIORITY;
            cc.whole_zone = full;
            cc.ignore_skip_hint = full;
            cc.ignore_block_suitable = full;
            let status = self.compact_zone(&mut cc);
            rc = rc.max(status);
            if status == CompactResult::Success {
                self.zones[zi]
                    .compact
                    .defer
                    .compaction_defer_reset(order as u32, false);
                self.trace_defer(Tp::CompactionDeferReset, zi, order);
                break;
            }
            if prio != COMPACT_PRIO_ASYNC
                && matches!(
                    status,
                    CompactResult::Complete | CompactResult::PartialSkipped
                )
            {
                self.defer_compaction(zi, order);
            }
            if self.blocked_until.is_some() {
                break;
            }
        }
        rc
    }

    /// `defer_compaction` on zone `zi`, with its tracepoint.
    pub fn defer_compaction(&mut self, zi: usize, order: usize) {
        self.zones[zi].compact.defer.defer_compaction(order as u32);
        self.trace_defer(Tp::CompactionDeferCompaction, zi, order);
    }

    /// The `mm_compaction_defer_template` tracepoints.
    fn trace_defer(&mut self, tp: Tp, zi: usize, order: usize) {
        let d = self.zones[zi].compact.defer;
        let (name, node) = (self.zones[zi].name(), self.zones[zi].node);
        trace_event!(
            self,
            tp,
            "node={node} zone={name:<8} order={order} order_failed={} consider={} limit={}",
            d.order_failed,
            d.considered,
            1u32 << d.defer_shift
        );
    }

    /// `compaction_zonelist_suitable`: some eligible zone would be worth compacting
    /// if reclaim freed a share of its reclaimable pages (1/order of them).
    pub fn compaction_zonelist_suitable(&self, gfp: super::page_alloc::Gfp, order: usize) -> bool {
        self.alloc_zonelist_zones(gfp.highest_zoneidx)
            .into_iter()
            .any(|zi| {
                let z = &self.zones[zi];
                let anon = self.can_reclaim_anon_pages(z.node);
                z.is_managed() && {
                    let available =
                        z.reclaimable_pages(anon) / order.max(1) as u64 + z.nr_free_pages;
                    compaction_suitable_with(z, order, gfp.highest_zoneidx, available)
                }
            })
    }

    /// `compact_node` (`vm.compact_memory`, a write of 1): every zone, whole, in
    /// MIGRATE_SYNC, ignoring the skip hints; the skip bits are cleared first (the
    /// third way they are reset, beside kswapd's sleep and `compaction_restarting`).
    /// Returns the pages migrated.
    pub fn compact_node(&mut self) -> u64 {
        let before = self.vmstat.get(Ev::PgmigrateSuccess);
        for zi in 0..self.zones.len() {
            if !self.zones[zi].is_managed() {
                continue;
            }
            self.reset_isolation_suitable(zi);
            let mut cc = CompactControl::new(zi, None);
            cc.whole_zone = true;
            cc.ignore_skip_hint = true;
            self.compact_zone(&mut cc);
        }
        self.vmstat.get(Ev::PgmigrateSuccess) - before
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page_alloc::test_pages::{checkerboard, pin_every_pageblock};
    use crate::zone::ZONE_NORMAL;

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
    fn compaction_makes_an_order_9_block_from_scattered_free_pages() {
        let (mut mm, zi) = checkerboard();
        let free = mm.nr_free_pages();
        // The migrate scanner empties the first pageblock: its 256 file pages (odd
        // PFNs) move into free pages at the top, 32 at a time; then [0, 512) is free
        // and merges into an order-9 block.
        assert_eq!(
            mm.compact_zone(&mut CompactControl::new(zi, Some(9))),
            CompactResult::Success
        );
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
        pin_every_pageblock(&mut mm, zi);
        mm.check_invariants().unwrap();
        assert_eq!(
            mm.compact_zone(&mut CompactControl::new(zi, Some(9))),
            CompactResult::Complete
        );
        assert!(!mm.zone_has_free_block(zi, 9));
        assert!(mm.vmstat.get(Ev::PgmigrateSuccess) > 0);
        mm.check_invariants().unwrap();
    }

    #[test]
    fn the_free_scanner_marks_the_blocks_it_exhausts_and_the_next_run_resumes() {
        let (mut mm, zi) = checkerboard();
        let top = mm.zones[zi].end_pfn - PAGEBLOCK_NR_PAGES as Pfn;
        assert_eq!(
            mm.compact_zone(&mut CompactControl::new(zi, Some(9))),
            CompactResult::Success
        );
        // 256 pages moved into the top pageblock's 256 free pages, 32 at a time; the
        // free scanner stopped at its last free page, one short of the block's end,
        // so the block is not marked and the cached position stays on it. The migrate
        // scanner's block yielded pages: unmarked, its cached position at the start.
        let zc = &mm.zones[zi].compact;
        assert_eq!(zc.nr_skip(), 0);
        assert_eq!(zc.cached_free_pfn, top);
        assert_eq!(zc.cached_migrate_pfn, [0, 0]);
        assert!((top..top + 512).all(|p| mm.frames[p as usize].list != on::BUDDY));
        // A second run for order 10 resumes there. The free scanner finds the top block
        // full: scanned to its end, it gets the skip bit, and the pages of block 1 go
        // into the block below it. The migrate scanner found only a free block in block
        // 0: marked too. Block 1 emptied, [0, 1024) merges.
        let mut cc = CompactControl::new(zi, Some(10));
        assert_eq!(mm.compact_zone(&mut cc), CompactResult::Success);
        assert_eq!(mm.vmstat.get(Ev::PgmigrateSuccess), 512);
        assert!(mm.frames[0].test(pg::BUDDY) && mm.frames[0].order == 10);
        let zc = &mm.zones[zi].compact;
        assert!(zc.skip(0) && zc.skip(zc.nr_blocks() - 1));
        assert_eq!(zc.nr_skip(), 2);
        assert_eq!(zc.cached_free_pfn, top - PAGEBLOCK_NR_PAGES as Pfn);
        mm.check_invariants().unwrap();
    }

    #[test]
    fn async_direct_compaction_only_empties_blocks_of_the_request_type() {
        let run = |mode: MigrateMode| {
            let (mut mm, zi) = checkerboard();
            mm.zones[zi].set_pageblock_migratetype(
                0,
                PAGEBLOCK_NR_PAGES,
                crate::zone::MIGRATE_UNMOVABLE,
            );
            let mut cc = CompactControl::new(zi, Some(9));
            cc.mode = mode;
            cc.direct_compaction = true;
            assert_eq!(mm.compact_zone(&mut cc), CompactResult::Success);
            mm.check_invariants().unwrap();
            // Where the order-9 block came from: the first pageblock emptied.
            (0..mm.zones[zi].end_pfn)
                .step_by(512)
                .find(|&p| {
                    mm.frames[p as usize].test(pg::BUDDY) && mm.frames[p as usize].order == 9
                })
                .unwrap()
        };
        // The unmovable block 0 is passed over by an async run, emptied by a sync one.
        assert_eq!(run(MigrateMode::Async), 512);
        assert_eq!(run(MigrateMode::SyncLight), 0);
    }

    /// The pinned checkerboard after a compaction run that used the skip hints: the
    /// free scanner marked the blocks it exhausted.
    fn marked() -> (Mm, usize) {
        let (mut mm, zi) = checkerboard();
        pin_every_pageblock(&mut mm, zi);
        assert_eq!(
            mm.compact_zone(&mut CompactControl::new(zi, Some(9))),
            CompactResult::Complete
        );
        assert!(mm.zones[zi].compact.nr_skip() > 0);
        (mm, zi)
    }

    #[test]
    fn skip_bits_are_reset_three_ways() {
        // 1. kswapd going to sleep clears them when a direct compaction's scanners met.
        let (mut mm, zi) = marked();
        let marked_blocks = mm.zones[zi].compact.nr_skip();
        assert!(
            !mm.zones[zi].compact.blockskip_flush,
            "not a direct compaction"
        );
        mm.reset_isolation_suitable_node(0);
        assert_eq!(
            mm.zones[zi].compact.nr_skip(),
            marked_blocks,
            "no flush requested"
        );
        let mut cc = CompactControl::new(zi, Some(9));
        cc.direct_compaction = true;
        assert_eq!(mm.compact_zone(&mut cc), CompactResult::Complete);
        assert!(mm.zones[zi].compact.blockskip_flush);
        mm.check_invariants().unwrap();
        mm.reset_isolation_suitable_node(0);
        assert_eq!(mm.zones[zi].compact.nr_skip(), 0);
        assert!(!mm.zones[zi].compact.blockskip_flush);

        // 2. A run after the full deferral course (compaction_restarting) clears them
        // first: its free scanner looks at the marked blocks again, which the same run
        // without the restart passes over.
        let free_scanned = |restarting: bool| {
            let (mut mm, zi) = marked();
            if restarting {
                for _ in 0..COMPACT_MAX_DEFER_SHIFT {
                    mm.zones[zi].compact.defer.defer_compaction(9);
                }
                while mm.zones[zi].compact.defer.compaction_deferred(9) {}
                assert!(mm.zones[zi].compact.defer.compaction_restarting(9));
            }
            let before = mm.vmstat.get(Ev::CompactFreeScanned);
            mm.compact_zone(&mut CompactControl::new(zi, Some(9)));
            mm.check_invariants().unwrap();
            mm.vmstat.get(Ev::CompactFreeScanned) - before
        };
        // Every block with free pages was emptied and marked by the first run: the
        // plain run's free scanner looks at nothing.
        assert_eq!(free_scanned(false), 0);
        assert!(free_scanned(true) > 0);

        // 3. vm.compact_memory resets each zone before compacting it whole: the
        // pending flush request is gone (only __reset_isolation_suitable clears it;
        // this run is not a direct compaction, so it sets none), and the bits left
        // are the ones its own whole-zone run set.
        let (mut mm, zi) = marked();
        mm.zones[zi].compact.blockskip_flush = true;
        mm.compact_node();
        let zc = &mm.zones[zi].compact;
        assert!(!zc.blockskip_flush);
        assert!(zc.nr_skip() > 0, "the run sets its own");
        mm.check_invariants().unwrap();
    }

    #[test]
    fn compaction_moves_multi_gen_lru_pages() {
        let (mut mm, zi, space, pfns) = {
            let mut cfg = crate::test_util::config(256);
            crate::test_util::mglru(&mut cfg);
            crate::page_alloc::test_pages::checkerboard_with(cfg)
        };
        assert!(mm.lru_gen_enabled());
        for &p in &pfns {
            if p % 8 == 1 {
                mm.folio_mark_accessed(p); // a reference in the folio's tier bits
            }
        }
        // Each page of block 0 by its file index: (generation, flags, list).
        let state = |mm: &Mm, idx: u32| {
            let e = mm.spaces[space as usize].pte(idx);
            let f = mm.frames[crate::page::pte::pfn(e) as usize];
            (f.gen, f.flags, f.list)
        };
        let moved: Vec<u32> = (0..pfns.len() as u32)
            .filter(|&i| pfns[i as usize] < 512 && pfns[i as usize] % 2 == 1)
            .collect();
        assert_eq!(moved.len(), 256);
        let before: Vec<_> = moved.iter().map(|&i| state(&mm, i)).collect();
        assert!(
            before.iter().any(|b| b.1 != before[0].1),
            "some pages were referenced"
        );
        assert_eq!(
            mm.compact_zone(&mut CompactControl::new(zi, Some(9))),
            CompactResult::Success
        );
        assert_eq!(mm.vmstat.get(Ev::PgmigrateSuccess), 256);
        for (&i, b) in moved.iter().zip(&before) {
            let e = mm.spaces[space as usize].pte(i);
            assert!(crate::page::pte::pfn(e) >= 512, "index {i} moved");
            assert_eq!(state(&mm, i), *b, "index {i}");
            assert_eq!(b.2 & 0xf0, on::LRU_GEN);
        }
        mm.check_invariants().unwrap();
    }

    #[test]
    fn direct_compaction_backs_off_after_failures_and_resumes_after_the_cycle() {
        let (mut mm, zi) = checkerboard();
        pin_every_pageblock(&mut mm, zi);
        let gfp = crate::page_alloc::GFP_HIGHUSER_MOVABLE;
        // Attempt n at DEF_COMPACT_PRIORITY (sync-light): the first runs and fails
        // (the scanners meet: defer, shift 1); then of each 2^shift attempts only the
        // last runs, each failure doubling the back-off: runs at 1, 3, 7, 15.
        let mut ran = Vec::new();
        for n in 1..=16 {
            let r = mm.try_to_compact_pages(gfp, 9, DEF_COMPACT_PRIORITY);
            if r == CompactResult::Deferred {
                continue;
            }
            assert_eq!(r, CompactResult::Complete, "attempt {n}");
            ran.push(n);
        }
        assert_eq!(ran, [1, 3, 7, 15]);
        assert_eq!(mm.zones[zi].compact.defer.defer_shift, 4);
        // MIN_COMPACT_PRIORITY ignores the back-off (and does not defer further).
        assert_eq!(
            mm.try_to_compact_pages(gfp, 9, MIN_COMPACT_PRIORITY),
            CompactResult::Complete
        );
        // Async runs never defer a zone.
        let shift = mm.zones[zi].compact.defer.defer_shift;
        for _ in 0..40 {
            mm.try_to_compact_pages(gfp, 9, COMPACT_PRIO_ASYNC);
        }
        assert_eq!(mm.zones[zi].compact.defer.defer_shift, shift);
        // A success resets it: unpin the pageblocks and compact again.
        for p in 0..mm.zones[zi].end_pfn {
            if mm.frames[p as usize].list == on::KERNEL {
                mm.frames[p as usize].list = on::NONE;
                mm.kernel_pages -= 1;
                mm.free_pages(p, 0);
            }
        }
        // The unpinned pages wait on this CPU's list; a drain merges them.
        mm.drain_all_pages();
        mm.zones[zi].compact.defer = CompactDefer::default();
        mm.defer_compaction(zi, 9);
        assert!(mm.zones[zi].compact.defer.compaction_deferred(9));
        assert_eq!(
            mm.try_to_compact_pages(gfp, 9, DEF_COMPACT_PRIORITY),
            CompactResult::Success
        );
        assert_eq!(mm.zones[zi].compact.defer.order_failed, 10);
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
        assert!(compaction_suitable(
            &z,
            9,
            ZONE_NORMAL,
            500,
            z.nr_free_pages
        ));
        // 1200 pages in 3 order-8 blocks + 432 order-0: index = 1000 - (1000 + 1200·
        // 1000/512) / 435 = 1000 - (1000 + 2343) / 435 = 1000 - 7 = 993: still
        // fragmentation. With few large blocks only: 5 order-8 blocks (1280 pages),
        // 1000 - (1000 + 2500) / 5 = 300 <= 500: lack of memory, not suitable.
        let z = zone(&[(8, 3), (0, 432)]);
        assert!(compaction_suitable(
            &z,
            9,
            ZONE_NORMAL,
            500,
            z.nr_free_pages
        ));
        let z = zone(&[(8, 5)]);
        assert!(compaction_suitable_free(&z, 9, ZONE_NORMAL));
        assert!(!compaction_suitable(
            &z,
            9,
            ZONE_NORMAL,
            500,
            z.nr_free_pages
        ));
        assert!(compaction_suitable(
            &z,
            9,
            ZONE_NORMAL,
            299,
            z.nr_free_pages
        ));
        // A request that would succeed (index -1000) stays suitable.
        let z = zone(&[(9, 3)]);
        assert!(compaction_suitable(
            &z,
            9,
            ZONE_NORMAL,
            1000,
            z.nr_free_pages
        ));
        // Order 3 (not costly): MIN 100 + gap 16 = 116; no index test.
        let z = zone(&[(0, 117)]);
        assert!(compaction_suitable(
            &z,
            3,
            ZONE_NORMAL,
            1000,
            z.nr_free_pages
        ));
        let z = zone(&[(0, 116)]);
        assert!(!compaction_suitable(
            &z,
            3,
            ZONE_NORMAL,
            1000,
            z.nr_free_pages
        ));
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
