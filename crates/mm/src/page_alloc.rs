//! The buddy allocator and the allocation paths (mm/page_alloc.c, ~v6.1;
//! kernel-reference §1.2, §1.3, §1.6, §1.7).
//!
//! Order-0 (and, from v5.13, small-order and THP) allocations and frees go through
//! the running CPU's per-CPU lists ([`crate::pcp`], `kernel.pcp` picks the era):
//! `rmqueue_pcplist` refills an empty list from the buddy in a batch
//! (`rmqueue_bulk`), `free_unref_page` returns a batch once a list is full
//! (`free_pcppages_bulk`), and `drain_all_pages` empties them before a reclaimer
//! gives up on an allocation. NR_FREE_PAGES counts the buddy's pages only.

use super::compact_status::{
    CompactResult, DEF_COMPACT_PRIORITY, INIT_COMPACT_PRIORITY, MAX_COMPACT_RETRIES,
    MIN_COMPACT_COSTLY_PRIORITY, MIN_COMPACT_PRIORITY,
};
use super::memcontrol::PageState;
use super::node_reclaim::{NodeReclaim, RECLAIM_DISTANCE};
use super::page::{on, pg, Frame, Pfn};
use super::pcp::{pindex_to_order, PcpVersion};
use super::zone::*;
use super::{Current, Mm};
use crate::trace::Tp;
use crate::vm_event_item::Ev;

/// `PAGE_ALLOC_COSTLY_ORDER`.
pub const PAGE_ALLOC_COSTLY_ORDER: usize = 3;
const _: () = assert!(super::pcp::COSTLY_ORDER == PAGE_ALLOC_COSTLY_ORDER);
/// `MAX_RECLAIM_RETRIES`.
pub const MAX_RECLAIM_RETRIES: u32 = 16;

/// The GFP bits the simulated callers differ in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gfp {
    /// `__GFP_DIRECT_RECLAIM`.
    pub direct_reclaim: bool,
    /// `__GFP_KSWAPD_RECLAIM`.
    pub kswapd_reclaim: bool,
    /// `gfp_zone()`: the highest zone the caller can use.
    pub highest_zoneidx: usize,
    pub migratetype: usize,
    /// `__GFP_HIGH` (ALLOC_HIGH): may dip to half the min watermark.
    pub high: bool,
    /// `__GFP_NORETRY`: one round of reclaim, then fail.
    pub noretry: bool,
}

/// Parses a GFP expression as the kernel spells it: `GFP_KERNEL`, `GFP_NOWAIT`,
/// `GFP_ATOMIC`, `GFP_HIGHUSER_MOVABLE`, and `__GFP_HIGH`, `__GFP_COMP`,
/// `__GFP_NORETRY`, `__GFP_KSWAPD_RECLAIM`, `__GFP_DIRECT_RECLAIM`, `__GFP_MOVABLE`,
/// `__GFP_RECLAIMABLE`, joined by `|`.
pub fn parse_gfp(s: &str) -> Result<Gfp, String> {
    let mut g = Gfp {
        direct_reclaim: false,
        kswapd_reclaim: false,
        highest_zoneidx: ZONE_NORMAL,
        migratetype: MIGRATE_UNMOVABLE,
        high: false,
        noretry: false,
    };
    for flag in s.split('|').map(str::trim) {
        match flag {
            "GFP_KERNEL" => {
                g.direct_reclaim = true;
                g.kswapd_reclaim = true;
            }
            "GFP_NOWAIT" => g.kswapd_reclaim = true,
            "GFP_ATOMIC" => {
                g.kswapd_reclaim = true;
                g.high = true;
            }
            "GFP_HIGHUSER_MOVABLE" => {
                g.direct_reclaim = true;
                g.kswapd_reclaim = true;
                g.migratetype = MIGRATE_MOVABLE;
            }
            "__GFP_HIGH" => g.high = true,
            "__GFP_COMP" => {}
            "__GFP_NORETRY" => g.noretry = true,
            "__GFP_KSWAPD_RECLAIM" => g.kswapd_reclaim = true,
            "__GFP_DIRECT_RECLAIM" => g.direct_reclaim = true,
            "__GFP_MOVABLE" => g.migratetype = MIGRATE_MOVABLE,
            "__GFP_RECLAIMABLE" => g.migratetype = MIGRATE_RECLAIMABLE,
            other => {
                return Err(format!(
                    "unknown GFP flag `{other}` (GFP_KERNEL, GFP_NOWAIT, GFP_ATOMIC, \
                     GFP_HIGHUSER_MOVABLE, __GFP_HIGH, __GFP_COMP, __GFP_NORETRY, \
                     __GFP_KSWAPD_RECLAIM, __GFP_DIRECT_RECLAIM, __GFP_MOVABLE, \
                     __GFP_RECLAIMABLE)"
                ))
            }
        }
    }
    Ok(g)
}

/// `GFP_HIGHUSER_MOVABLE`: user pages and page cache.
pub const GFP_HIGHUSER_MOVABLE: Gfp = Gfp {
    direct_reclaim: true,
    kswapd_reclaim: true,
    highest_zoneidx: ZONE_NORMAL,
    migratetype: MIGRATE_MOVABLE,
    high: false,
    noretry: false,
};

/// What a reclaim context (PF_MEMALLOC) allocates with: zsmalloc pages for zram.
/// It never reclaims (no recursion) and ignores watermarks.
pub const GFP_MEMALLOC_NOWAIT: Gfp = Gfp {
    direct_reclaim: false,
    kswapd_reclaim: false,
    highest_zoneidx: ZONE_NORMAL,
    migratetype: MIGRATE_MOVABLE,
    high: false,
    noretry: false,
};

/// Frees every page of `[start_pfn, end_pfn)` into the largest aligned blocks
/// (`memblock_free_all` → `__free_pages_core`), deferring the max-order blocks as
/// CONFIG_DEFERRED_STRUCT_PAGE_INIT does (`deferred_init_memmap`): they count as free
/// at once, but their frames are initialised only when [`deferred_grow_zone`] hands
/// one out, so the host commits frame-table memory for what a run uses. `frames`
/// starts zeroed; frames outside max-order blocks are initialised here.
pub fn init_free_area(z: &mut Zone, frames: &mut [Frame]) {
    let mut pfn = z.start_pfn as u64;
    let end = z.end_pfn as u64;
    z.deferred_start_pfn = z.end_pfn;
    z.deferred_end_pfn = z.end_pfn;
    while pfn < end {
        let mut order = MAX_PAGE_ORDER;
        while order > 0 && (!pfn.is_multiple_of(1 << order) || pfn + (1 << order) > end) {
            order -= 1;
        }
        if order == MAX_PAGE_ORDER {
            // The max-order blocks are contiguous: after the unaligned head, before
            // the short tail.
            if z.nr_deferred_blocks() == 0 {
                z.deferred_start_pfn = pfn as Pfn;
            }
            z.deferred_end_pfn = (pfn + (1 << order)) as Pfn;
            z.free_area[order].nr_free += 1;
        } else {
            init_block_frames(z, frames, pfn as Pfn, order);
            let mt = z.pageblock_migratetype(pfn as Pfn);
            add_to_free_list(z, frames, pfn as Pfn, order, mt);
        }
        z.nr_free_pages += 1 << order;
        pfn += 1 << order;
    }
}

/// `__init_single_page` for each frame of a block: empty, in this zone.
fn init_block_frames(z: &Zone, frames: &mut [Frame], pfn: Pfn, order: usize) {
    for f in &mut frames[pfn as usize..(pfn as usize + (1 << order))] {
        *f = Frame {
            zone: z.idx as u8,
            ..Frame::EMPTY
        };
    }
}

/// `PENALTY_FOR_NODE_WITH_CPUS`: a node with CPUs of its own comes after a headless
/// one at the same distance.
const PENALTY_FOR_NODE_WITH_CPUS: u64 = 1;
/// `MAX_NUMNODES` (x86-64's CONFIG_NODES_SHIFT 10): the load only breaks ties.
const MAX_NUMNODES: u64 = 1 << 10;

/// Nodes the model can have (the kernel's `MAX_NUMNODES` is 1024; 16 covers an
/// 8-socket server with a memory tier per socket), so a zonelist fits in a copyable
/// array.
pub const MAX_NUMNODES_MODELLED: usize = 16;

/// A node's fallback list: zone ids (`nid * MAX_NR_ZONES + zone type`), in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Zonelist {
    ids: [u8; MAX_NUMNODES_MODELLED * MAX_NR_ZONES],
    len: u8,
}

impl Zonelist {
    fn from_ids(ids: &[usize]) -> Zonelist {
        let mut z = Zonelist {
            ids: [0; MAX_NUMNODES_MODELLED * MAX_NR_ZONES],
            len: ids.len() as u8,
        };
        for (d, &s) in z.ids.iter_mut().zip(ids) {
            *d = s as u8;
        }
        z
    }

    /// The zone ids, first choice first.
    #[inline]
    pub fn zones(&self) -> &[u8] {
        &self.ids[..self.len as usize]
    }
}

/// `build_all_zonelists` → `build_zonelists` for each node, as v5.16+ (54d032ced983:
/// `node_load` accumulates over the nodes' lists, so nodes at the same distance take
/// turns being first): the nodes in `find_next_best_node`'s order, each node's managed
/// zones highest first (`build_zonerefs_node`). At most [`MAX_NUMNODES_MODELLED`] nodes.
pub fn build_all_zonelists(nodes: &[crate::NodeConfig], zones: &[Zone]) -> Vec<Zonelist> {
    assert!(nodes.len() <= MAX_NUMNODES_MODELLED);
    let n = nodes.len();
    let mut node_load = vec![0u64; n];
    (0..n)
        .map(|local| {
            let mut used = vec![false; n];
            let mut prev = local;
            let mut list = Vec::new();
            while let Some(node) = find_next_best_node(local, &mut used, nodes, &node_load) {
                // Penalise the first node of each new distance group.
                if nodes[local].distance[node] != nodes[local].distance[prev] {
                    node_load[node] += 1;
                }
                prev = node;
                list.extend(
                    (0..MAX_NR_ZONES)
                        .rev()
                        .map(|t| node * MAX_NR_ZONES + t)
                        .filter(|&z| zones[z].is_managed()),
                );
            }
            Zonelist::from_ids(&list)
        })
        .collect()
}

/// `find_next_best_node`: the local node first, then the nearest unused node with
/// memory; at equal distance a higher node id, a node without CPUs, and a less loaded
/// node win.
fn find_next_best_node(
    local: usize,
    used: &mut [bool],
    nodes: &[crate::NodeConfig],
    node_load: &[u64],
) -> Option<usize> {
    if !used[local] {
        used[local] = true;
        return Some(local);
    }
    let mut best: Option<(u64, usize)> = None;
    for (n, cfg) in nodes.iter().enumerate() {
        if used[n] || cfg.memory_pages == 0 {
            continue;
        }
        let mut val = u64::from(nodes[local].distance[n]) + u64::from(n < local);
        if !cfg.cpus.is_empty() {
            val += PENALTY_FOR_NODE_WITH_CPUS;
        }
        val = val * MAX_NUMNODES + node_load[n];
        if best.is_none_or(|(b, _)| val < b) {
            best = Some((val, n));
        }
    }
    let (_, n) = best?;
    used[n] = true;
    Some(n)
}

/// `deferred_grow_zone`: initialise the highest deferred max-order block and put it on
/// the movable max-order free list (already counted in `nr_free`). The highest comes
/// first because boot freed the blocks in ascending order onto the list's head, so it
/// is the one an allocation would have taken. False if none is left.
pub fn deferred_grow_zone(z: &mut Zone, frames: &mut [Frame]) -> bool {
    if z.nr_deferred_blocks() == 0 {
        return false;
    }
    let pfn = z.deferred_end_pfn - (1 << MAX_PAGE_ORDER);
    z.deferred_end_pfn = pfn;
    init_block_frames(z, frames, pfn, MAX_PAGE_ORDER);
    link_free_block(z, frames, pfn, MAX_PAGE_ORDER, DEFERRED_MT);
    true
}

/// The first block on a free list; an empty movable max-order list first takes the
/// next deferred block (the deferred blocks are its tail).
fn free_list_head(z: &mut Zone, frames: &mut [Frame], order: usize, mt: usize) -> Pfn {
    let head = z.free_area[order].free_list[mt].head;
    if head == super::page::NIL
        && order == MAX_PAGE_ORDER
        && mt == DEFERRED_MT
        && deferred_grow_zone(z, frames)
    {
        return z.free_area[order].free_list[mt].head;
    }
    head
}

fn add_to_free_list(z: &mut Zone, frames: &mut [Frame], pfn: Pfn, order: usize, mt: usize) {
    link_free_block(z, frames, pfn, order, mt);
    z.free_area[order].nr_free += 1;
}

/// Marks a block free (PageBuddy, its order and list) and links it at the list head.
fn link_free_block(z: &mut Zone, frames: &mut [Frame], pfn: Pfn, order: usize, mt: usize) {
    let f = &mut frames[pfn as usize];
    f.flags = pg::BUDDY;
    f.order = order as u8;
    f.list = on::BUDDY;
    f.gen = mt as u8; // the free list it is on
    z.free_area[order].free_list[mt].add_head(frames, pfn);
}

fn del_from_free_list(z: &mut Zone, frames: &mut [Frame], pfn: Pfn) {
    let (order, mt) = {
        let f = &frames[pfn as usize];
        (f.order as usize, f.gen as usize)
    };
    z.free_area[order].free_list[mt].del(frames, pfn);
    z.free_area[order].nr_free -= 1;
    let f = &mut frames[pfn as usize];
    f.flags = 0;
    f.list = on::NONE;
    f.gen = 0;
}

/// Takes the free block at `pfn` off its list, its pages counted as no longer free
/// (compaction's free scanner isolates it; `__isolate_free_page`).
pub fn take_free_block(z: &mut Zone, frames: &mut [Frame], pfn: Pfn) {
    let order = frames[pfn as usize].order as usize;
    del_from_free_list(z, frames, pfn);
    z.nr_free_pages -= 1 << order;
}

/// `expand`: split a block of order `high` down to `low`, freeing the upper halves.
fn expand(z: &mut Zone, frames: &mut [Frame], pfn: Pfn, low: usize, mut high: usize, mt: usize) {
    while high > low {
        high -= 1;
        add_to_free_list(z, frames, pfn + (1 << high), high, mt);
    }
}

/// `__rmqueue_smallest`: first non-empty list of the migratetype at or above `order`.
#[inline]
fn rmqueue_smallest(z: &mut Zone, frames: &mut [Frame], order: usize, mt: usize) -> Option<Pfn> {
    for o in order..NR_PAGE_ORDERS {
        let pfn = free_list_head(z, frames, o, mt);
        if pfn != super::page::NIL {
            del_from_free_list(z, frames, pfn);
            expand(z, frames, pfn, order, o, mt);
            return Some(pfn);
        }
    }
    None
}

/// `fallbacks[]` (kernel-reference §1.3).
const FALLBACKS: [[usize; 2]; MIGRATE_PCPTYPES] = [
    [MIGRATE_RECLAIMABLE, MIGRATE_MOVABLE],   // UNMOVABLE
    [MIGRATE_RECLAIMABLE, MIGRATE_UNMOVABLE], // MOVABLE
    [MIGRATE_UNMOVABLE, MIGRATE_MOVABLE],     // RECLAIMABLE
];

/// An allocation that fell back to another migratetype (`mm_page_alloc_extfrag`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extfrag {
    pub pfn: Pfn,
    pub alloc_order: usize,
    pub fallback_order: usize,
    pub alloc_migratetype: usize,
    pub fallback_migratetype: usize,
    /// The pageblock now belongs to the allocation's migratetype.
    pub change_ownership: bool,
}

/// `can_steal_fallback`: whether a fallback of this order may take over its whole
/// pageblock. Unmovable and reclaimable requests always may: they would pollute it
/// anyway, so better to claim it and keep the next ones together.
fn can_steal_fallback(order: usize, start_mt: usize) -> bool {
    order >= PAGEBLOCK_ORDER / 2 || start_mt == MIGRATE_RECLAIMABLE || start_mt == MIGRATE_UNMOVABLE
}

/// `find_suitable_fallback` (not only_stealable): the first fallback migratetype with
/// a free block of `order`, and whether its pageblock may be stolen.
pub(super) fn find_suitable_fallback(z: &Zone, order: usize, mt: usize) -> Option<(usize, bool)> {
    if z.free_area[order].nr_free == 0 {
        return None;
    }
    FALLBACKS[mt]
        .iter()
        .find(|&&fmt| z.free_list_nonempty(order, fmt))
        .map(|&fmt| (fmt, can_steal_fallback(order, mt)))
}

/// `move_to_free_list`: a free block onto another migratetype's list of its order.
fn move_to_free_list(z: &mut Zone, frames: &mut [Frame], pfn: Pfn, mt: usize) {
    let (order, old) = (
        frames[pfn as usize].order as usize,
        frames[pfn as usize].gen as usize,
    );
    z.free_area[order].free_list[old].del(frames, pfn);
    link_free_block(z, frames, pfn, order, mt);
}

/// `move_freepages_block`: every free block of `pfn`'s pageblock onto `mt`'s lists.
/// Returns the free pages moved and the movable pages seen (on an LRU, or zsmalloc's,
/// which can migrate); None when the pageblock's end is outside the zone.
fn move_freepages_block(
    z: &mut Zone,
    frames: &mut [Frame],
    pfn: Pfn,
    mt: usize,
) -> Option<(u64, u64)> {
    let block = pfn & !(PAGEBLOCK_NR_PAGES as Pfn - 1);
    // A pageblock that starts before the zone is walked from the page itself.
    let start = if block < z.start_pfn { pfn } else { block };
    let end = block as u64 + PAGEBLOCK_NR_PAGES - 1;
    if end >= z.end_pfn as u64 {
        return None;
    }
    let (mut moved, mut movable) = (0u64, 0u64);
    let mut p = start as u64;
    while p <= end {
        let f = &frames[p as usize];
        if f.list == on::BUDDY {
            let order = f.order as usize;
            move_to_free_list(z, frames, p as Pfn, mt);
            moved += 1 << order;
            p += 1 << order;
            continue;
        }
        let lru = f.list <= super::page::lru::UNEVICTABLE as u8 || f.list & 0xf0 == on::LRU_GEN;
        if lru || f.list == on::ZRAM {
            movable += 1;
        }
        p += 1;
    }
    Some((moved, movable))
}

/// `boost_watermark`: after a fragmenting fallback, raise the zone's watermarks by a
/// pageblock, up to `boost_factor`/10000 of the high watermark (at least a pageblock),
/// so kswapd frees a little more and later allocations find pages of their own type.
/// Not in zones of fewer than four pageblocks, nor with the factor 0. kernel-reference
/// §1.5.
pub fn boost_watermark(z: &mut Zone, boost_factor: u64) -> bool {
    if boost_factor == 0 || PAGEBLOCK_NR_PAGES * 4 > z.managed_pages {
        return false;
    }
    // mult_frac(high, factor, 10000).
    let max_boost = z.watermark[WMARK_HIGH] * boost_factor / 10_000;
    if max_boost == 0 {
        return false;
    }
    let max_boost = max_boost.max(PAGEBLOCK_NR_PAGES);
    z.watermark_boost = (z.watermark_boost + PAGEBLOCK_NR_PAGES).min(max_boost);
    true
}

/// `steal_suitable_fallback`: the fallback block `pfn` (of a `fallback_mt` list) goes to
/// the `start_mt` lists; a block of pageblock order or more takes its pageblocks along;
/// a smaller one boosts the watermarks (`boost`: `vm.watermark_boost_factor`, and
/// whether the allocation may wake kswapd, which it then does) and, when
/// `whole_block` is allowed, takes every free page of its pageblock, and the pageblock
/// itself if at least half of it is free or alike.
fn steal_suitable_fallback(
    z: &mut Zone,
    frames: &mut [Frame],
    pfn: Pfn,
    start_mt: usize,
    whole_block: bool,
    boost: (u64, bool),
) {
    let order = frames[pfn as usize].order as usize;
    let old_block_type = z.pageblock_migratetype(pfn);
    if order >= PAGEBLOCK_ORDER {
        z.set_pageblock_migratetype(pfn, 1 << order, start_mt);
        move_to_free_list(z, frames, pfn, start_mt);
        return;
    }
    if boost_watermark(z, boost.0) && boost.1 {
        z.boosted_watermark = true;
    }
    if whole_block {
        if let Some((free_pages, movable_pages)) = move_freepages_block(z, frames, pfn, start_mt) {
            if free_pages > 0 {
                let alike_pages = if start_mt == MIGRATE_MOVABLE {
                    movable_pages
                } else if old_block_type == MIGRATE_MOVABLE {
                    // The used pages that are not movable are presumed alike.
                    PAGEBLOCK_NR_PAGES.saturating_sub(free_pages + movable_pages)
                } else {
                    0
                };
                if free_pages + alike_pages >= PAGEBLOCK_NR_PAGES / 2 {
                    z.set_pageblock_migratetype(pfn, 1, start_mt);
                }
                return;
            }
        }
    }
    move_to_free_list(z, frames, pfn, start_mt);
}

/// `__rmqueue_fallback`: the requested migratetype has nothing free at `order` or
/// above. Take the largest block of a fallback type (so the pageblock taken over is
/// worth it), or, for a movable request that may not steal, the smallest (to spare
/// large blocks), and steal it for `mt`. The caller retries `__rmqueue_smallest`.
fn rmqueue_fallback(
    z: &mut Zone,
    frames: &mut [Frame],
    order: usize,
    mt: usize,
    boost: (u64, bool),
) -> Option<Extfrag> {
    let mut found = None;
    for o in (order..NR_PAGE_ORDERS).rev() {
        if let Some((fmt, can_steal)) = find_suitable_fallback(z, o, mt) {
            found = Some((o, fmt, can_steal));
            if !can_steal && mt == MIGRATE_MOVABLE && o > order {
                // find_smallest.
                found = (order..NR_PAGE_ORDERS)
                    .find_map(|o| find_suitable_fallback(z, o, mt).map(|(f, c)| (o, f, c)));
            }
            break;
        }
    }
    let (o, fmt, can_steal) = found?;
    let pfn = free_list_head(z, frames, o, fmt);
    steal_suitable_fallback(z, frames, pfn, mt, can_steal, boost);
    Some(Extfrag {
        pfn,
        alloc_order: order,
        fallback_order: o,
        alloc_migratetype: mt,
        fallback_migratetype: fmt,
        change_ownership: z.pageblock_migratetype(pfn) == mt,
    })
}

/// `__free_one_page`: merge with free buddies (same order, same zone) up to
/// MAX_PAGE_ORDER, then put the merged block on its pageblock's free list.
pub fn free_one_page(z: &mut Zone, frames: &mut [Frame], pfn: Pfn, order: usize) {
    let mut pfn = pfn;
    let mut o = order;
    while o < MAX_PAGE_ORDER {
        let buddy = pfn ^ (1 << o);
        if buddy < z.start_pfn || buddy >= z.end_pfn {
            break;
        }
        let b = &frames[buddy as usize];
        if !b.test(pg::BUDDY) || b.order as usize != o {
            break;
        }
        del_from_free_list(z, frames, buddy);
        pfn = pfn.min(buddy);
        o += 1;
    }
    let mt = z.pageblock_migratetype(pfn);
    add_to_free_list(z, frames, pfn, o, mt);
    z.nr_free_pages += 1 << order;
}

impl Mm {
    /// Frees a block back to the page allocator (`__free_pages`).
    pub fn free_pages(&mut self, pfn: Pfn, order: usize) {
        self.free_pages_hot_cold(pfn, order, false);
    }

    /// A page reclaim frees: v4.5 freed those cold (`free_hot_cold_page_list(...,
    /// true)`, to the tail of the per-CPU list); later kernels have no cold frees.
    pub fn free_reclaimed_page(&mut self, pfn: Pfn) {
        self.free_pages_hot_cold(pfn, 0, self.cfg.pcp == PcpVersion::V4_5);
    }

    fn free_pages_hot_cold(&mut self, pfn: Pfn, order: usize, cold: bool) {
        if order == 0 {
            // A page freed from the swap cache (`__delete_from_swap_cache` before the
            // free) or from an unsplit THP (a zapped THP's pages go one by one here)
            // leaves its state.
            let f = self.frames[pfn as usize];
            if f.test(pg::SWAPCACHE) {
                self.mod_page_state(pfn, PageState::SwapCache, -1);
            }
            if f.order as usize == super::huge_memory::HPAGE_PMD_ORDER && f.test(pg::SWAPBACKED) {
                self.mod_page_state(pfn, PageState::AnonThps, -1);
            }
        }
        self.mem_cgroup_uncharge(pfn);
        self.free_unref_or_buddy(pfn, order, cold);
        self.vmstat.count(Ev::Pgfree, 1 << order);
    }

    /// The end of `__free_pages`: a block of an order the per-CPU lists take goes
    /// onto the running CPU's list (`free_unref_page`), any other to the buddy.
    pub fn free_unref_or_buddy(&mut self, pfn: Pfn, order: usize, cold: bool) {
        let zi = self.page_zone_id(pfn);
        if self.cfg.pcp.allowed_order(order) {
            self.free_unref_page(zi, pfn, order, cold);
        } else {
            free_one_page(&mut self.zones[zi], &mut self.frames, pfn, order);
        }
    }

    /// The running CPU's lists for zone `zi` (CPU-major, a set per zone of every node).
    fn pcp_index(&self, zi: usize) -> usize {
        self.current_cpu.min(self.cfg.nr_cpus.max(1) as usize - 1) * self.zones.len() + zi
    }

    /// `free_unref_page` → `free_unref_page_commit` (v4.5: `free_hot_cold_page`): the
    /// block goes onto its list; once the list holds `high` pages a batch goes back
    /// to the buddy, and (v6.7) a zone above its high watermark again loses
    /// ZONE_BELOW_HIGH.
    fn free_unref_page(&mut self, zi: usize, pfn: Pfn, order: usize, cold: bool) {
        let version = self.cfg.pcp;
        let mt = self.zones[zi].pageblock_migratetype(pfn);
        let pindex = version.order_to_pindex(mt, order);
        let f = &mut self.frames[pfn as usize];
        f.flags = 0;
        f.list = on::PCP;
        f.order = order as u8;
        f.gen = pindex as u8;
        let i = self.pcp_index(zi);
        let (reclaim_active, below_high) =
            (self.zones[zi].reclaim_active, self.zones[zi].below_high);
        let pcp = &mut self.pcp[i];
        let free_high = version == PcpVersion::V6_7 && pcp.note_free(order);
        pcp.add(&mut self.frames, pfn, order, pindex, cold);
        let high = pcp.nr_pcp_high(version, reclaim_active, below_high, free_high);
        if pcp.count >= high {
            let n = pcp.nr_pcp_free(version, high, free_high);
            self.free_pcppages_bulk(i, zi, n, pindex);
            let z = &self.zones[zi];
            if z.below_high
                && zone_watermark_ok(
                    z,
                    0,
                    z.wmark(WMARK_HIGH),
                    MAX_NR_ZONES - 1,
                    AllocFlags::default(),
                    self.zone_page_state_free(zi),
                )
            {
                self.zones[zi].below_high = false;
            }
        }
    }

    /// `free_pcppages_bulk`: `count` pages of list set `i` back to zone `zi`'s buddy,
    /// each from the tail of its list (the coldest). v4.5 and v5.14 go round the lists
    /// from the one after the first, taking one more page from each list for every
    /// empty list passed (`batch_free`); v6.x empties the list that was freed to
    /// first (`pindex`), then the next lists in turn.
    fn free_pcppages_bulk(&mut self, i: usize, zi: usize, count: u32, pindex: usize) {
        let version = self.cfg.pcp;
        let mut traced = self.tracing(Tp::PagePcpuDrain).then(Vec::new);
        let Mm {
            pcp, zones, frames, ..
        } = self;
        let pcp = &mut pcp[i];
        let z = &mut zones[zi];
        let mut count = i64::from(count.min(pcp.count));
        let round_robin = matches!(version, PcpVersion::V4_5 | PcpVersion::V5_14);
        let nr_lists = version.nr_lists();
        let mut p = if round_robin {
            0
        } else {
            (pindex + nr_lists - 1) % nr_lists
        };
        let mut batch_free = 0usize;
        while count > 0 {
            loop {
                batch_free += 1;
                p = (p + 1) % nr_lists;
                if !pcp.lists[p].is_empty() {
                    break;
                }
            }
            if !round_robin || batch_free == nr_lists {
                // v6.x: drain the list; the round robin: the only non-empty list.
                batch_free = usize::MAX;
            }
            let order = pindex_to_order(p);
            loop {
                let pfn = pcp.lists[p].tail;
                pcp.lists[p].del(frames, pfn);
                count -= 1 << order;
                pcp.count -= 1 << order;
                if let Some(t) = traced.as_mut() {
                    t.push((pfn, order, z.pageblock_migratetype(pfn)));
                }
                free_one_page(z, frames, pfn, order);
                batch_free -= 1;
                if count <= 0 || batch_free == 0 || pcp.lists[p].is_empty() {
                    break;
                }
            }
            if !round_robin {
                batch_free = 0;
            }
        }
        for (pfn, order, mt) in traced.into_iter().flatten() {
            trace_event!(
                self,
                Tp::PagePcpuDrain,
                "page={:#x} pfn={pfn:#x} order={order} migratetype={mt}",
                0xffff_ea00_0000_0000u64 + pfn as u64 * 64
            );
        }
    }

    /// `rmqueue_bulk`: up to `count` blocks of `order` and `mt` from the buddy onto
    /// their list of list set `i`, in the order taken (the first is the next handed
    /// out); NR_FREE_PAGES loses them. Returns how many it got.
    fn rmqueue_bulk(
        &mut self,
        i: usize,
        zi: usize,
        (order, mt): (usize, usize),
        count: u32,
        boost: (u64, bool),
    ) -> u32 {
        let pindex = self.cfg.pcp.order_to_pindex(mt, order);
        let mut n = 0;
        while n < count {
            let Some(pfn) = self.rmqueue_locked(zi, order, mt, boost) else {
                break;
            };
            let f = &mut self.frames[pfn as usize];
            f.flags = 0;
            f.list = on::PCP;
            f.order = order as u8;
            f.gen = pindex as u8;
            self.pcp[i].lists[pindex].add_tail(&mut self.frames, pfn);
            n += 1;
        }
        self.zones[zi].nr_free_pages -= u64::from(n) << order;
        self.pcp[i].count += n << order;
        n
    }

    /// `rmqueue_pcplist`: a block from the running CPU's list, refilled in a batch
    /// when empty (v5.13+ scale the batch down by the order, v6.7 sizes it with
    /// `nr_pcp_alloc`). An allocation halves the run of frees (`free_factor`,
    /// `free_count`).
    fn rmqueue_pcplist(
        &mut self,
        zi: usize,
        order: usize,
        mt: usize,
        boost: (u64, bool),
    ) -> Option<Pfn> {
        let version = self.cfg.pcp;
        let i = self.pcp_index(zi);
        let pindex = version.order_to_pindex(mt, order);
        let below_high = self.zones[zi].below_high;
        let pcp = &mut self.pcp[i];
        if version != PcpVersion::V4_5 {
            pcp.free_count >>= 1;
        }
        if pcp.lists[pindex].is_empty() {
            let batch = match version {
                PcpVersion::V6_7 => pcp.nr_pcp_alloc(order, below_high),
                PcpVersion::V5_14 if pcp.batch > 1 => (pcp.batch >> order).max(2),
                _ => pcp.batch,
            };
            self.rmqueue_bulk(i, zi, (order, mt), batch, boost);
        }
        let pcp = &mut self.pcp[i];
        let pfn = pcp.lists[pindex].pop_head(&mut self.frames)?;
        pcp.count -= 1 << order;
        Some(pfn)
    }

    /// `drain_pages_zone`: every page of list set `i` back to the buddy.
    fn drain_pages_zone(&mut self, i: usize, zi: usize) {
        let count = self.pcp[i].count;
        if count > 0 {
            self.free_pcppages_bulk(i, zi, count, 0);
        }
    }

    /// `drain_local_pages(zone)`: the running CPU's lists of zone `zi`.
    pub fn drain_local_pages(&mut self, zi: usize) {
        if self.cfg.pcp != PcpVersion::Off {
            let i = self.pcp_index(zi);
            self.drain_pages_zone(i, zi);
        }
    }

    /// `drain_all_pages(NULL)`: every CPU's lists, CPU by CPU.
    pub fn drain_all_pages(&mut self) {
        for i in 0..self.pcp.len() {
            self.drain_pages_zone(i, i % self.zones.len());
        }
    }

    /// Pages on every CPU's lists of zone `zi`.
    pub fn pcp_pages(&self, zi: usize) -> u64 {
        self.pcp
            .iter()
            .skip(zi)
            .step_by(self.zones.len())
            .map(|p| u64::from(p.count))
            .sum()
    }

    /// `zone_pcp_update` for every zone (at boot and when a watermark or the
    /// fraction sysctl changes): each CPU's `batch`, `high_min` and `high_max`; the
    /// era's switch drains the old lists first.
    pub fn setup_pcp(&mut self, old: PcpVersion) {
        if old != self.cfg.pcp {
            let cfg_pcp = std::mem::replace(&mut self.cfg.pcp, old);
            self.drain_all_pages();
            self.cfg.pcp = cfg_pcp;
        }
        let nr_cpus = self.cfg.nr_cpus.max(1);
        self.pcp
            .resize_with(nr_cpus as usize * self.zones.len(), Default::default);
        let fraction = match self.cfg.pcp {
            PcpVersion::V4_5 => self.cfg.percpu_pagelist_fraction,
            _ => self.cfg.percpu_pagelist_high_fraction,
        };
        let nr_zones = self.zones.len();
        for zi in 0..nr_zones {
            let z = &self.zones[zi];
            let (batch, high_min, high_max) = super::pcp::pageset_sizes(
                self.cfg.pcp,
                z.managed_pages,
                z.watermark[WMARK_LOW],
                nr_cpus,
                fraction,
            );
            for p in self.pcp.iter_mut().skip(zi).step_by(nr_zones) {
                p.batch = batch;
                p.high_min = high_min;
                p.high_max = high_max;
                p.high = p.high.clamp(high_min, high_max);
            }
        }
    }

    /// `refresh_cpu_vm_stats` on every CPU, every `vm.stat_interval` (1 s): v6.7's
    /// `decay_pcp_high` (`high` sinks towards `high_min` and what is above it goes back
    /// to the buddy), and every CPU's vmstat diffs folded into the zones' counters.
    pub fn vmstat_update(&mut self) {
        if self.cfg.pcp == PcpVersion::V6_7 {
            for i in 0..self.pcp.len() {
                let to_drain = self.pcp[i].decay_pcp_high();
                if to_drain > 0 {
                    self.free_pcppages_bulk(i, i % self.zones.len(), to_drain, 0);
                }
            }
        }
        self.fold_vm_stat_diffs();
    }

    /// `rmqueue`: take a block from one zone, through the running CPU's list for the
    /// orders the per-CPU lists take, else from the buddy lists.
    #[inline]
    fn rmqueue(&mut self, zi: usize, order: usize, gfp: Gfp) -> Option<Pfn> {
        let mt = gfp.migratetype;
        let boost = (self.cfg.watermark_boost_factor, gfp.kswapd_reclaim);
        let pfn = if self.cfg.pcp.allowed_order(order) {
            self.rmqueue_pcplist(zi, order, mt, boost)?
        } else {
            let pfn = self.rmqueue_locked(zi, order, mt, boost)?;
            self.zones[zi].nr_free_pages -= 1 << order;
            pfn
        };
        let f = &mut self.frames[pfn as usize];
        f.flags = 0;
        f.memcg = 0;
        f.order = order as u8;
        f.swap = u32::MAX;
        f.list = on::NONE;
        f.gen = 0;
        self.vmstat.count(
            if self.zones[zi].idx == ZONE_DMA32 {
                Ev::PgallocDma32
            } else {
                Ev::PgallocNormal
            },
            1 << order,
        );
        // A fallback boosted the watermarks: kswapd may have nothing else to wake it.
        if self.zones[zi].boosted_watermark {
            self.zones[zi].boosted_watermark = false;
            let zone_idx = self.zones[zi].idx;
            self.wakeup_kswapd(zi, 0, zone_idx, true);
        }
        Some(pfn)
    }

    /// `__rmqueue` under the zone lock: the smallest block of `mt`, else a fallback
    /// steal and a retry (after the steal the block is on `mt`'s lists).
    #[inline]
    fn rmqueue_locked(
        &mut self,
        zi: usize,
        order: usize,
        mt: usize,
        boost: (u64, bool),
    ) -> Option<Pfn> {
        loop {
            let z = &mut self.zones[zi];
            if let Some(pfn) = rmqueue_smallest(z, &mut self.frames, order, mt) {
                return Some(pfn);
            }
            let e = rmqueue_fallback(z, &mut self.frames, order, mt, boost)?;
            trace_event!(self, Tp::PageAllocExtfrag, "page={:#x} pfn={:#x} alloc_order={} fallback_order={} pageblock_order={} alloc_migratetype={} fallback_migratetype={} fragmenting={} change_ownership={}",
                    0xffff_ea00_0000_0000u64 + e.pfn as u64 * 64,
                    e.pfn,
                    e.alloc_order,
                    e.fallback_order,
                    PAGEBLOCK_ORDER,
                    e.alloc_migratetype,
                    e.fallback_migratetype,
                    u8::from(e.fallback_order < PAGEBLOCK_ORDER),
                    u8::from(e.change_ownership));
        }
    }

    /// `get_page_from_freelist`: walk the zonelist of the running CPU's node (its
    /// zones highest usable first, then the other nodes' by distance) and take a page
    /// from the first zone that passes the watermark.
    pub fn get_page_from_freelist(
        &mut self,
        gfp: Gfp,
        order: usize,
        wmark: usize,
        flags: AllocFlags,
    ) -> Option<Pfn> {
        if self.nr_nodes() == 1 {
            // The one node's zonelist is its managed zones, highest first; walked
            // without the list, as this is every allocation's path.
            for zi in (0..=gfp.highest_zoneidx).rev() {
                if self.zones[zi].is_managed() {
                    if let Some(pfn) = self.try_zone(zi, 0, gfp, order, wmark, flags) {
                        return Some(pfn);
                    }
                    if self.cfg.zone_reclaim_mode != 0 && self.node_reclaim_slept() {
                        return None;
                    }
                }
            }
            return None;
        }
        let (nid, nodemask) = self.alloc_nid_nodemask();
        // A copy: the walk calls into code that takes `self` whole.
        let zonelist = self.zonelists[nid];
        // ac->preferred_zoneref: the list's first usable zone (the list holds managed
        // zones only).
        let mut preferred = None;
        for &zi in zonelist.zones() {
            let zi = zi as usize;
            let z = &self.zones[zi];
            if z.idx > gfp.highest_zoneidx || nodemask >> z.node & 1 == 0 {
                continue;
            }
            let preferred = *preferred.get_or_insert(zi);
            let local = self.zones[preferred].node;
            if let Some(pfn) = self.try_zone(zi, local, gfp, order, wmark, flags) {
                self.zone_statistics(preferred, zi);
                return Some(pfn);
            }
            // Node reclaim sleeps: the allocation is retried after it.
            if self.cfg.zone_reclaim_mode != 0 && self.node_reclaim_slept() {
                return None;
            }
        }
        None
    }

    /// One zone of `get_page_from_freelist`'s walk: its watermark check (with node
    /// reclaim of a zone below it, for an allocation preferring node `local`), then
    /// `rmqueue`.
    #[inline(always)]
    fn try_zone(
        &mut self,
        zi: usize,
        local: usize,
        gfp: Gfp,
        order: usize,
        wmark: usize,
        flags: AllocFlags,
    ) -> Option<Pfn> {
        let z = &self.zones[zi];
        // v6.7: note a zone below its high watermark (ZONE_BELOW_HIGH), so frees
        // shrink the per-CPU lists; a zone above it passes outright.
        if self.cfg.pcp == PcpVersion::V6_7 && !z.below_high {
            let high = z.wmark(WMARK_HIGH);
            let free = self.zone_page_state_free(zi);
            if zone_watermark_ok(z, order, high, gfp.highest_zoneidx, flags, free) {
                return self.rmqueue(zi, order, gfp);
            }
            self.zones[zi].below_high = true;
        }
        // zone_watermark_fast: the zone's counter, per-CPU drift and all.
        let z = &self.zones[zi];
        if !flags.no_watermarks
            && !zone_watermark_ok(
                z,
                order,
                z.wmark(wmark),
                gfp.highest_zoneidx,
                flags,
                self.zone_page_state_free(zi),
            )
        {
            if self.cfg.zone_reclaim_mode == 0 {
                return None;
            }
            return self.node_reclaim_then_alloc(zi, local, gfp, order, wmark, flags);
        }
        self.rmqueue(zi, order, gfp)
    }

    /// `zone_allows_reclaim`: node reclaim of `nid` may serve an allocation preferring
    /// `local`.
    pub fn zone_allows_reclaim(&self, local: usize, nid: usize) -> bool {
        self.node_distance(local, nid) <= RECLAIM_DISTANCE
    }

    /// `get_page_from_freelist` for zone `zi` below its watermark with node reclaim
    /// on: reclaim its node if the allocation preferring node `local` may, then take
    /// a page if the zone passes the watermark now. Cold: only a run with
    /// `vm.zone_reclaim_mode` comes here.
    #[inline(never)]
    #[cold]
    fn node_reclaim_then_alloc(
        &mut self,
        zi: usize,
        local: usize,
        gfp: Gfp,
        order: usize,
        wmark: usize,
        flags: AllocFlags,
    ) -> Option<Pfn> {
        let nid = self.zones[zi].node;
        if !self.zone_allows_reclaim(local, nid) {
            return None;
        }
        match self.node_reclaim(nid, gfp, order) {
            NodeReclaim::NoScan | NodeReclaim::Full => None,
            NodeReclaim::Some | NodeReclaim::Success => {
                if self.blocked_until.is_some() {
                    return None;
                }
                let z = &self.zones[zi];
                let free = self.zone_page_state_free(zi);
                if zone_watermark_ok(z, order, z.wmark(wmark), gfp.highest_zoneidx, flags, free) {
                    self.rmqueue(zi, order, gfp)
                } else {
                    None
                }
            }
        }
    }

    /// `zone_statistics`: an allocation from zone `zi` when the zonelist preferred
    /// zone `preferred` is a hit on the preferred node or a miss there (and foreign on
    /// the preferred zone), local or other to the running CPU's node. Kept on
    /// machines of several nodes only: a one-node machine's results have no NUMA
    /// counters.
    fn zone_statistics(&mut self, preferred: usize, zi: usize) {
        let node = self.zones[zi].node;
        let hit = node == self.zones[preferred].node;
        let local = node == self.numa_node_id();
        let s = &mut self.numa_stats[zi];
        *if hit {
            &mut s.numa_hit
        } else {
            &mut s.numa_miss
        } += 1;
        *if local {
            &mut s.local_node
        } else {
            &mut s.other_node
        } += 1;
        if !hit {
            self.numa_stats[preferred].numa_foreign += 1;
        }
    }

    /// A block a kernel caller keeps (`highalloc`): allocated with `gfp`, its frames
    /// marked as held.
    pub fn alloc_kernel_pages(&mut self, gfp: Gfp, order: usize) -> Option<Pfn> {
        let pfn = self.alloc_pages(gfp, order)?;
        for f in &mut self.frames[pfn as usize..pfn as usize + (1 << order)] {
            f.list = on::KERNEL;
        }
        self.kernel_pages += 1 << order;
        Some(pfn)
    }

    /// Gives back a block [`Mm::alloc_kernel_pages`] handed out.
    pub fn free_kernel_pages(&mut self, pfn: Pfn, order: usize) {
        for f in &mut self.frames[pfn as usize..pfn as usize + (1 << order)] {
            debug_assert_eq!(f.list, on::KERNEL);
            f.list = on::NONE;
        }
        self.kernel_pages -= 1 << order;
        self.free_pages(pfn, order);
    }

    /// `alloc_pages`: an allocation in the current task's memory policy.
    pub fn alloc_pages(&mut self, gfp: Gfp, order: usize) -> Option<Pfn> {
        self.alloc_pages_mpol(gfp, order, None)
    }

    /// `alloc_pages_mpol`: the policy's node and nodemask (`ilx`: an anonymous
    /// fault's interleave index, see `mempolicy`), then `__alloc_pages`; an
    /// interleaved page on the node aimed at counts NUMA_INTERLEAVE_HIT.
    pub fn alloc_pages_mpol(&mut self, gfp: Gfp, order: usize, ilx: Option<u64>) -> Option<Pfn> {
        if self.nr_nodes() == 1 || self.task_policy_is_local() {
            // The running CPU's node and every node: what no allocation context says.
            return self.__alloc_pages(gfp, order);
        }
        let (nid, nodemask, interleave) = self.policy_node(ilx);
        let saved = self.alloc_ctx.replace((nid, nodemask));
        let page = self.__alloc_pages(gfp, order);
        self.alloc_ctx = saved;
        if let Some(pfn) = page {
            if interleave && self.pfn_to_nid(pfn) == nid {
                let zi = self.page_zone_id(pfn);
                self.numa_stats[zi].interleave_hit += 1;
            }
        }
        page
    }

    /// `__alloc_pages`: the LOW-watermark fast path, then the slow path. `None` means
    /// the allocation failed; the OOM killer may have run (and may have killed the
    /// current task).
    fn __alloc_pages(&mut self, gfp: Gfp, order: usize) -> Option<Pfn> {
        let flags = AllocFlags {
            high: gfp.high,
            ..AllocFlags::default()
        };
        if let Some(p) = self.get_page_from_freelist(gfp, order, WMARK_LOW, flags) {
            return Some(p);
        }
        if self.node_reclaim_sleeps() {
            return None;
        }
        self.alloc_pages_slowpath(gfp, order)
    }

    /// Node reclaim in the walk just made has to sleep: the allocation is retried
    /// after it (only `vm.zone_reclaim_mode` has the walk reclaim).
    #[inline]
    fn node_reclaim_sleeps(&self) -> bool {
        self.cfg.zone_reclaim_mode != 0 && self.blocked_until.is_some()
    }

    /// `for_each_zone_zonelist_nodemask`: the zone ids of node `nid`'s zonelist up to
    /// `highest_zoneidx`, within `nodemask`, first choice first (the node's zones
    /// highest first, then the other nodes' by distance).
    pub fn zonelist_zones(
        &self,
        nid: usize,
        nodemask: super::mempolicy::Nodemask,
        highest_zoneidx: usize,
    ) -> impl Iterator<Item = usize> + '_ {
        self.zonelists[nid]
            .zones()
            .iter()
            .map(|&z| z as usize)
            .filter(move |&z| {
                let z = &self.zones[z];
                z.idx <= highest_zoneidx && nodemask >> z.node & 1 == 1
            })
    }

    /// The allocation's preferred node and nodemask (`ac->preferred_zoneref`'s node,
    /// `ac->nodemask`): the policy's, or the running CPU's node and every node.
    pub fn alloc_nid_nodemask(&self) -> (usize, super::mempolicy::Nodemask) {
        self.alloc_ctx
            .unwrap_or((self.numa_node_id(), super::mempolicy::NODE_MASK_ALL))
    }

    /// The allocation's zonelist walk (`ac->zonelist` within `ac->nodemask`).
    pub fn alloc_zonelist_zones(&self, highest_zoneidx: usize) -> Vec<usize> {
        let (nid, nodemask) = self.alloc_nid_nodemask();
        self.zonelist_zones(nid, nodemask, highest_zoneidx)
            .collect()
    }

    /// `wake_all_kswapds`: each node of the zonelist, once, for its first (highest)
    /// eligible zone.
    pub(crate) fn wake_all_kswapds(&mut self, gfp: Gfp, order: usize) {
        let highest_zoneidx = gfp.highest_zoneidx;
        if self.nr_nodes() == 1 {
            // One node: its zonelist's first eligible zone, without collecting the
            // list (every allocation under pressure comes here).
            let first = self
                .zonelist_zones(0, super::mempolicy::NODE_MASK_ALL, highest_zoneidx)
                .next();
            if let Some(zi) = first {
                self.wakeup_kswapd(zi, order, highest_zoneidx, gfp.direct_reclaim);
            }
            return;
        }
        let mut last_node = None;
        for zi in self.alloc_zonelist_zones(highest_zoneidx) {
            let node = self.zones[zi].node;
            if last_node == Some(node) {
                continue;
            }
            last_node = Some(node);
            self.wakeup_kswapd(zi, order, highest_zoneidx, gfp.direct_reclaim);
        }
    }

    /// `__alloc_pages_slowpath` (kernel-reference §1.7), without compaction (a later
    /// issue) and without high-atomic reserves.
    fn alloc_pages_slowpath(&mut self, gfp: Gfp, order: usize) -> Option<Pfn> {
        let r = self.alloc_pages_slowpath_loop(gfp, order);
        if self.blocked_until.is_none() {
            if let Current::Task(t) = self.current {
                self.alloc_no_progress[t] = 0;
                self.pfmemalloc_wake_spent(t);
            }
        }
        r
    }

    fn alloc_pages_slowpath_loop(&mut self, gfp: Gfp, order: usize) -> Option<Pfn> {
        let flags = AllocFlags {
            high: gfp.high,
            ..AllocFlags::default()
        };
        if gfp.kswapd_reclaim {
            self.wake_all_kswapds(gfp, order);
        }
        if let Some(p) = self.get_page_from_freelist(gfp, order, WMARK_MIN, flags) {
            return Some(p);
        }
        if self.node_reclaim_sleeps() {
            return None;
        }
        // Reclaim contexts (PF_MEMALLOC) may use the reserves below MIN, and never
        // recurse into reclaim.
        let memalloc = matches!(self.current, Current::Kswapd(_)) || self.in_reclaim;
        if memalloc {
            return self.get_page_from_freelist(
                gfp,
                order,
                WMARK_MIN,
                AllocFlags {
                    no_watermarks: true,
                    ..flags
                },
            );
        }
        if !gfp.direct_reclaim {
            return None;
        }
        // A task that slept in reclaim and retried carries its no-progress count over.
        let task = match self.current {
            Current::Task(t) => Some(t),
            _ => None,
        };
        let mut no_progress_loops = task.map_or(0, |t| self.alloc_no_progress[t]);
        // Direct compaction: a costly or non-movable high-order request tries it
        // first (ASYNC), as enough base pages may be free; then after each reclaim.
        let costly = order > PAGE_ALLOC_COSTLY_ORDER;
        let mut compact_priority = DEF_COMPACT_PRIORITY;
        let mut compact_result = CompactResult::Skipped;
        let mut compaction_retries = 0u32;
        if order > 0 && (costly || gfp.migratetype != MIGRATE_MOVABLE) && no_progress_loops == 0 {
            let (page, r) =
                self.alloc_pages_direct_compact(gfp, order, flags, INIT_COMPACT_PRIORITY);
            if page.is_some() {
                return page;
            }
            compact_result = r;
            if costly && gfp.noretry {
                // Whole pageblocks, and compaction skipped or deferred: give up.
                if matches!(r, CompactResult::Skipped | CompactResult::Deferred) {
                    return None;
                }
                compact_priority = INIT_COMPACT_PRIORITY;
            }
            if self.blocked_until.is_some() {
                return None;
            }
        }
        // Reclaim can "progress" without freeing memory: a page swapped to zram or a
        // ramdisk gives its frame to the device's pool. The kernel's task retries while
        // kswapd and the other CPUs free memory in parallel; here, after
        // MAX_RECLAIM_RETRIES such rounds the task gives its CPU up (a reschedule) and
        // retries the allocation after the others ran, instead of looping at one time.
        let mut loops = 0u32;
        // A retry after a throttled reclaim attempt that had used up the retries goes
        // straight to the OOM decision, as the kernel does once the sleep ends.
        let mut exhausted = no_progress_loops > MAX_RECLAIM_RETRIES;
        loop {
            loops += 1;
            if gfp.kswapd_reclaim {
                self.wake_all_kswapds(gfp, order);
            }
            if let Some(p) = self.get_page_from_freelist(gfp, order, WMARK_MIN, flags) {
                return Some(p);
            }
            if self.node_reclaim_sleeps() {
                if let Some(t) = task {
                    self.alloc_no_progress[t] = no_progress_loops;
                }
                return None;
            }
            let progress = if exhausted {
                0
            } else {
                self.try_to_free_pages(order, gfp)
            };
            if progress > 0 {
                if let Some(p) = self.get_page_from_freelist(gfp, order, WMARK_MIN, flags) {
                    self.blocked_until = None;
                    return Some(p);
                }
                // Pages may sit on other CPUs' lists: drain them and try once more.
                if self.cfg.pcp != PcpVersion::Off {
                    self.drain_all_pages();
                    if let Some(p) = self.get_page_from_freelist(gfp, order, WMARK_MIN, flags) {
                        self.blocked_until = None;
                        return Some(p);
                    }
                }
            }
            if self.blocked_until.is_some() {
                // Reclaim sleeps (a full device queue, a throttle): give up this attempt;
                // the fault is retried after the sleep, with the loop count remembered.
                // A NOPROGRESS throttle ends a whole reclaim attempt that got nothing,
                // so it counts towards the retries. The other throttles sleep part-way
                // through one, which the kernel then goes on with: the retry after the
                // sleep stands for that rest, and it is what counts (counting the
                // interrupted part too made a task woken at once from WRITEBACK
                // throttles reach the OOM killer in 17 quick rounds with swap free).
                if progress == 0 && task.is_some_and(|t| self.sleeps_after_reclaim_attempt(t)) {
                    no_progress_loops += 1;
                }
                if let Some(t) = task {
                    self.alloc_no_progress[t] = no_progress_loops;
                }
                return None;
            }
            if order > 0 {
                let (page, r) =
                    self.alloc_pages_direct_compact(gfp, order, flags, compact_priority);
                if page.is_some() {
                    return page;
                }
                compact_result = r;
                if self.blocked_until.is_some() {
                    if let Some(t) = task {
                        self.alloc_no_progress[t] = no_progress_loops.max(1);
                    }
                    return None;
                }
            }
            // __GFP_NORETRY, and costly orders without __GFP_RETRY_MAYFAIL, stop here.
            if gfp.noretry || costly {
                return None;
            }
            if let (true, Some(t)) = (progress > 0 && loops >= MAX_RECLAIM_RETRIES, task) {
                self.alloc_no_progress[t] = no_progress_loops;
                self.block_until(self.clock());
                return None;
            }
            // Outside a task (a timed action's write) nothing else runs meanwhile: bound
            // the loop.
            if !exhausted
                && (task.is_some() || loops < 1000)
                && self.should_reclaim_retry(gfp, order, progress > 0, &mut no_progress_loops)
            {
                if self.blocked_until.is_some() {
                    // congestion_wait before the retry: retry after the sleep.
                    if let Some(t) = task {
                        self.alloc_no_progress[t] = no_progress_loops;
                    }
                    return None;
                }
                continue;
            }
            if progress > 0
                && self.should_compact_retry(
                    gfp,
                    order,
                    compact_result,
                    &mut compact_priority,
                    &mut compaction_retries,
                )
            {
                continue;
            }
            // __alloc_pages_may_oom: one last try at HIGH, then the OOM killer.
            if let Some(p) = self.get_page_from_freelist(gfp, order, WMARK_HIGH, flags) {
                return Some(p);
            }
            if self.node_reclaim_sleeps() {
                if let Some(t) = task {
                    self.alloc_no_progress[t] = no_progress_loops;
                }
                return None;
            }
            if order > PAGE_ALLOC_COSTLY_ORDER {
                return None;
            }
            let me = match self.current {
                Current::Task(t) => Some(t),
                _ => None,
            };
            if !self.out_of_memory() {
                return None;
            }
            // The OOM killer made progress. If it chose us, give up the allocation.
            if let (Some(_), Some(victim)) = (me, self.current_workload) {
                if self.workload_killed(victim) {
                    return None;
                }
            }
            no_progress_loops = 0;
            loops = 0;
            exhausted = false;
        }
    }

    /// `__alloc_pages_direct_compact`: `try_to_compact_pages` as a memory stall (PSI)
    /// under PF_MEMALLOC, then the allocation. A run that was not skipped counts a
    /// `compact_stall` and then `compact_success` (the zone's back-off reset and its
    /// skip-bit flush request dropped) or `compact_fail`. The kernel may capture the
    /// freed page during compaction; here it is taken from the free lists after.
    fn alloc_pages_direct_compact(
        &mut self,
        gfp: Gfp,
        order: usize,
        flags: AllocFlags,
        prio: u32,
    ) -> (Option<Pfn>, CompactResult) {
        if order == 0 {
            return (None, CompactResult::Skipped);
        }
        let cpu_before = self.cpu_ns;
        let was = self.in_reclaim;
        self.in_reclaim = true;
        let r = self.try_to_compact_pages(gfp, order, prio);
        self.in_reclaim = was;
        self.stall_ns += self.cpu_ns - cpu_before;
        if r == CompactResult::Skipped {
            return (None, r);
        }
        self.count(Ev::CompactStall, 1);
        if let Some(p) = self.get_page_from_freelist(gfp, order, WMARK_MIN, flags) {
            let zi = self.page_zone_id(p);
            self.zones[zi].compact.blockskip_flush = false;
            self.zones[zi]
                .compact
                .defer
                .compaction_defer_reset(order as u32, true);
            self.count(Ev::CompactSuccess, 1);
            return (Some(p), r);
        }
        self.count(Ev::CompactFail, 1);
        (None, r)
    }

    /// `should_compact_retry`: after reclaim made progress, retry a compaction that
    /// failed at too low a priority (raising it, down to MIN_COMPACT_PRIORITY, or
    /// MIN_COMPACT_COSTLY_PRIORITY for costly orders), one skipped for lack of memory
    /// while reclaim could give it enough, or one that made progress, up to
    /// MAX_COMPACT_RETRIES times.
    fn should_compact_retry(
        &mut self,
        gfp: Gfp,
        order: usize,
        result: CompactResult,
        priority: &mut u32,
        retries: &mut u32,
    ) -> bool {
        if order == 0 {
            return false;
        }
        if result == CompactResult::Success {
            *retries += 1;
        }
        if result.needs_reclaim() {
            return self.compaction_zonelist_suitable(gfp, order);
        }
        if !result.failed() && !result.withdrawn() {
            let max_retries = if order > PAGE_ALLOC_COSTLY_ORDER {
                MAX_COMPACT_RETRIES / 4
            } else {
                MAX_COMPACT_RETRIES
            };
            if *retries <= max_retries {
                return true;
            }
        }
        // check_priority: failed, withdrawn or out of retries; try harder if allowed.
        let min_priority = if order > PAGE_ALLOC_COSTLY_ORDER {
            MIN_COMPACT_COSTLY_PRIORITY
        } else {
            MIN_COMPACT_PRIORITY
        };
        if *priority > min_priority {
            *priority -= 1;
            *retries = 0;
            return true;
        }
        false
    }

    /// `should_reclaim_retry`: keep trying while some zone could pass the MIN watermark
    /// if all its reclaimable pages were freed, up to 16 loops without progress.
    fn should_reclaim_retry(
        &mut self,
        gfp: Gfp,
        order: usize,
        progress: bool,
        no_progress_loops: &mut u32,
    ) -> bool {
        if progress && order <= PAGE_ALLOC_COSTLY_ORDER {
            *no_progress_loops = 0;
        } else {
            *no_progress_loops += 1;
        }
        if *no_progress_loops > MAX_RECLAIM_RETRIES {
            return false;
        }
        let (nid, nodemask) = self.alloc_nid_nodemask();
        // The first zone whose MIN watermark reclaim could meet.
        let found = self
            .zonelist_zones(nid, nodemask, gfp.highest_zoneidx)
            .find_map(|zi| {
                let z = &self.zones[zi];
                let reclaimable = z.reclaimable_pages(self.can_reclaim_anon_pages(z.node));
                let available = reclaimable + z.nr_free_pages;
                zone_watermark_ok(
                    z,
                    order,
                    z.wmark(WMARK_MIN),
                    gfp.highest_zoneidx,
                    AllocFlags::default(),
                    available,
                )
                .then_some((zi, reclaimable))
            });
        let Some((zi, reclaimable)) = found else {
            return false;
        };
        // ≤ v5.15: no progress and mostly dirty or under writeback: wait for some I/O
        // before retrying (removed with the reclaim_throttle series).
        if !progress
            && self.throttle_mode == super::throttle::ReclaimThrottle::CongestionWait
            && 2 * self.wb.nr_write_pending[zi] > reclaimable
        {
            self.congestion_wait();
        }
        true
    }
}

/// Pages put on lists by hand for the unit tests: an LRU of file or anon pages, and
/// the checkerboard of free pages compaction is tested on.
#[cfg(test)]
pub(crate) mod test_pages {
    use super::{take_free_block, GFP_HIGHUSER_MOVABLE};
    use crate::page::{on, pg, pte, Pfn};
    use crate::test_util::{config, task_mm};
    use crate::zone::{PAGEBLOCK_NR_PAGES, ZONE_DMA32};
    use crate::{Config, Mm, SpaceKind};

    /// `n` pages of `kind` (with page `flags`) on the LRU of the root memcg, present in
    /// a new space's table (PTEs not young). A file space's table is its page cache, so
    /// its pages are cached but, without PG_mapped, mapped by no one.
    pub fn add_pages(mm: &mut Mm, kind: SpaceKind, n: u32, flags: u16) -> (u32, Vec<Pfn>) {
        add_pages_of(mm, kind, n, flags, None)
    }

    /// [`add_pages`] in a space of workload `owner` (an anon space joins its mm, which
    /// MGLRU's walk visits), charged to its memcg.
    pub fn add_pages_of(
        mm: &mut Mm,
        kind: SpaceKind,
        n: u32,
        flags: u16,
        owner: Option<usize>,
    ) -> (u32, Vec<Pfn>) {
        let memcg = owner.map_or(0, |w| mm.workload_memcg[w]);
        let space = mm.add_space(kind, "s".into(), n as u64, owner);
        let mut pfns = Vec::new();
        for i in 0..n {
            let pfn = mm.alloc_pages(GFP_HIGHUSER_MOVABLE, 0).unwrap();
            let f = &mut mm.frames[pfn as usize];
            f.mapping = space;
            f.index = i;
            f.set(flags);
            f.memcg = memcg as u16;
            if kind == SpaceKind::Anon {
                f.set(pg::SWAPBACKED);
            }
            mm.folio_add_lru(pfn);
            let e = mm.mk_pte(pfn);
            *mm.spaces[space as usize].pte_mut(i) = e;
            mm.spaces[space as usize].nr_present += 1;
            pfns.push(pfn);
        }
        (space, pfns)
    }

    /// A 256 MiB machine filled with clean file pages, then every page at an even PFN
    /// dropped: 32768 free pages, none with a free buddy.
    pub fn checkerboard() -> (Mm, usize) {
        let (mm, zi, _, _) = checkerboard_with(config(256));
        (mm, zi)
    }

    /// [`checkerboard`] of a 256 MiB `cfg`; also returns the file space and its pages
    /// (index order).
    pub fn checkerboard_with(cfg: Config) -> (Mm, usize, u32, Vec<Pfn>) {
        let mut mm = task_mm(cfg);
        let zi = ZONE_DMA32;
        mm.zones[zi].watermark = [0; 3];
        // Laid out page by page in the buddy; the per-CPU lists come on after.
        let version = std::mem::replace(&mut mm.cfg.pcp, super::PcpVersion::Off);
        let n = mm.nr_free_pages() as u32;
        let (space, pfns) = add_pages(&mut mm, SpaceKind::File, n, 0);
        assert_eq!(mm.nr_free_pages(), 0);
        for (idx, &p) in pfns.iter().enumerate() {
            if p % 2 == 0 {
                mm.lruvec_del_folio(p);
                *mm.spaces[space as usize].pte_mut(idx as u32) = pte::NONE;
                mm.spaces[space as usize].nr_present -= 1;
                mm.frames[p as usize].flags = 0;
                mm.frames[p as usize].list = on::NONE;
                mm.free_pages(p, 0);
            }
        }
        mm.cfg.pcp = version;
        assert_eq!(mm.nr_free_pages(), n as u64 / 2);
        assert!(!mm.zone_has_free_block(zi, 1));
        (mm, zi, space, pfns)
    }

    /// Pins each pageblock of the checkerboard with a kernel page (its first free
    /// page): no pageblock can be emptied.
    pub fn pin_every_pageblock(mm: &mut Mm, zi: usize) {
        let (start, end) = (mm.zones[zi].start_pfn, mm.zones[zi].end_pfn);
        let mut block = start;
        while block < end {
            let p = (block..end)
                .find(|&p| mm.frames[p as usize].list == on::BUDDY)
                .unwrap();
            take_free_block(&mut mm.zones[zi], &mut mm.frames, p);
            mm.frames[p as usize].list = on::KERNEL;
            mm.kernel_pages += 1;
            block += PAGEBLOCK_NR_PAGES as Pfn;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zone_with(pages: u32) -> (Zone, Vec<Frame>) {
        let mut z = Zone::new(ZONE_NORMAL, 0, pages);
        let mut frames: Vec<Frame> = bytemuck::zeroed_vec(pages as usize);
        init_free_area(&mut z, &mut frames);
        (z, frames)
    }

    #[test]
    fn init_uses_largest_aligned_blocks() {
        // 1024 + 512 + 4 + 1 pages: one order-10, one order-9, one order-2, one order-0.
        let (z, _) = zone_with(1541);
        assert_eq!(z.nr_free_pages, 1541);
        assert_eq!(z.free_area[10].nr_free, 1);
        assert_eq!(z.free_area[9].nr_free, 1);
        assert_eq!(z.free_area[2].nr_free, 1);
        assert_eq!(z.free_area[0].nr_free, 1);
    }

    #[test]
    fn deferred_blocks_count_free_and_are_initialised_top_down() {
        // 4 max-order blocks plus a 3-page tail: boot freed 0, 1024, 2048, 3072 onto the
        // list head in that order, so allocations take 3072 first, then 2048.
        let (mut z, mut frames) = zone_with(4096 + 3);
        assert_eq!(z.nr_free_pages, 4099);
        assert_eq!(z.free_area[10].nr_free, 4);
        assert_eq!(z.nr_deferred_blocks(), 4);
        assert!(z.free_area[10].free_list[MIGRATE_MOVABLE].is_empty());
        assert!(zone_watermark_ok(
            &z,
            10,
            0,
            ZONE_NORMAL,
            AllocFlags::default(),
            4099
        ));
        // The tail (orders 1 and 0) is initialised at boot and used first by order 0.
        assert_eq!(
            rmqueue_smallest(&mut z, &mut frames, 0, MIGRATE_MOVABLE),
            Some(4098)
        );
        assert_eq!(
            rmqueue_smallest(&mut z, &mut frames, 1, MIGRATE_MOVABLE),
            Some(4096)
        );
        assert_eq!(
            rmqueue_smallest(&mut z, &mut frames, 10, MIGRATE_MOVABLE),
            Some(3072)
        );
        assert_eq!(
            rmqueue_smallest(&mut z, &mut frames, 0, MIGRATE_MOVABLE),
            Some(2048)
        );
        assert_eq!(z.nr_deferred_blocks(), 2);
        assert_eq!(z.free_area[10].nr_free, 2);
        // Blocks still deferred were never written: their frames are all zero bytes.
        // (An initialised frame has NIL links and list NONE.)
        assert!(frames[..2048]
            .iter()
            .all(|f| f.prev == 0 && f.next == 0 && f.mapping == 0 && f.list == 0));
        assert!(frames[2048..3072]
            .iter()
            .all(|f| f.zone == ZONE_NORMAL as u8));
    }

    #[test]
    fn split_and_merge_round_trip() {
        let (mut z, mut frames) = zone_with(1024);
        let p = rmqueue_smallest(&mut z, &mut frames, 0, MIGRATE_MOVABLE).unwrap();
        assert_eq!(p, 0);
        // Splitting 1024 down to 1 leaves one free block at each order 0..=9.
        for o in 0..10 {
            assert_eq!(z.free_area[o].nr_free, 1, "order {o}");
        }
        assert_eq!(z.free_area[10].nr_free, 0);
        // Freeing it merges all the way back to one order-10 block.
        z.nr_free_pages -= 1;
        free_one_page(&mut z, &mut frames, p, 0);
        assert_eq!(z.nr_free_pages, 1024);
        assert_eq!(z.free_area[10].nr_free, 1);
    }
    /// __rmqueue: the smallest block of `mt`, else a fallback steal and a retry.
    fn alloc(
        z: &mut Zone,
        frames: &mut [Frame],
        order: usize,
        mt: usize,
    ) -> (Pfn, Option<Extfrag>) {
        let mut event = None;
        loop {
            if let Some(p) = rmqueue_smallest(z, frames, order, mt) {
                z.nr_free_pages -= 1 << order;
                return (p, event);
            }
            event = Some(rmqueue_fallback(z, frames, order, mt, (0, false)).expect("memory left"));
        }
    }

    /// Allocates `n` single pages of `mt`, each marked as `list` (an LRU index, or
    /// on::NONE for a kernel page).
    fn fill(z: &mut Zone, frames: &mut [Frame], n: usize, mt: usize, list: u8) -> Vec<Pfn> {
        (0..n)
            .map(|_| {
                let (p, _) = alloc(z, frames, 0, mt);
                frames[p as usize].list = list;
                p
            })
            .collect()
    }

    fn free_pages_of(z: &Zone, mt: usize) -> u64 {
        (0..NR_PAGE_ORDERS)
            .map(|o| z.free_area[o].free_list[mt].len << o)
            .sum()
    }

    #[test]
    fn fallback_takes_the_largest_block_and_whole_pageblocks_at_pageblock_order() {
        // One order-10 movable block (two pageblocks). An unmovable page falls back to
        // it (largest first), and at order >= pageblock_order both pageblocks change
        // hands; the split-off remainder lands on the unmovable lists.
        let (mut z, mut frames) = zone_with(1024 + 512);
        let (p, e) = alloc(&mut z, &mut frames, 0, MIGRATE_UNMOVABLE);
        let e = e.expect("a fallback");
        assert_eq!(
            (e.fallback_order, e.fallback_migratetype),
            (10, MIGRATE_MOVABLE)
        );
        assert!(e.change_ownership);
        assert!((0..1024).contains(&p));
        assert_eq!(z.pageblock_migratetype(0), MIGRATE_UNMOVABLE);
        assert_eq!(z.pageblock_migratetype(512), MIGRATE_UNMOVABLE);
        assert_eq!(z.pageblock_migratetype(1024), MIGRATE_MOVABLE);
        assert_eq!(free_pages_of(&z, MIGRATE_UNMOVABLE), 1023);
        assert_eq!(free_pages_of(&z, MIGRATE_MOVABLE), 512);
        // The next unmovable page comes from its own lists: no fallback.
        assert_eq!(alloc(&mut z, &mut frames, 0, MIGRATE_UNMOVABLE).1, None);
    }

    #[test]
    fn boost_watermark_by_hand() {
        // 4096 pages (8 pageblocks), HIGH 1000, factor 15000: max_boost = 1500; each
        // boost adds a pageblock: 512, 1024, 1500, 1500.
        let mut z = Zone::new(ZONE_NORMAL, 0, 4096);
        z.watermark[WMARK_HIGH] = 1000;
        for want in [512, 1024, 1500, 1500] {
            assert!(boost_watermark(&mut z, 15_000));
            assert_eq!(z.watermark_boost, want);
        }
        // HIGH 100: max_boost 150, raised to a pageblock.
        z.watermark_boost = 0;
        z.watermark[WMARK_HIGH] = 100;
        assert!(boost_watermark(&mut z, 15_000));
        assert!(boost_watermark(&mut z, 15_000));
        assert_eq!(z.watermark_boost, 512);
        // No boost: factor 0, HIGH 0 (max_boost 0), fewer than 4 pageblocks.
        assert!(!boost_watermark(&mut z, 0));
        z.watermark[WMARK_HIGH] = 0;
        assert!(!boost_watermark(&mut z, 15_000));
        let mut small = Zone::new(ZONE_NORMAL, 0, 2047);
        small.watermark[WMARK_HIGH] = 1000;
        assert!(!boost_watermark(&mut small, 15_000));
    }

    #[test]
    fn fallback_order_prefers_reclaimable_for_unmovable() {
        // 1536 pages: an order-10 block (pageblocks 0, 1) and an order-9 one (2). A
        // reclaimable page takes the order-10 block and both its pageblocks.
        let (mut z, mut frames) = zone_with(512 * 3);
        alloc(&mut z, &mut frames, 0, MIGRATE_RECLAIMABLE);
        assert_eq!(z.pageblock_migratetype(512), MIGRATE_RECLAIMABLE);
        // An unmovable request finds order-9 blocks of both other types (reclaimable
        // 512..1024, movable 1024..1536) and takes the reclaimable one: UNMOVABLE
        // tries RECLAIMABLE before MOVABLE.
        let (_, e) = alloc(&mut z, &mut frames, 0, MIGRATE_UNMOVABLE);
        let e = e.unwrap();
        assert_eq!(
            (e.fallback_order, e.fallback_migratetype),
            (9, MIGRATE_RECLAIMABLE)
        );
        assert_eq!(e.pfn, 512);
        assert_eq!(z.pageblock_migratetype(1024), MIGRATE_MOVABLE);
    }

    /// One pageblock (512 pages) of which `used` single movable-type pages are
    /// allocated and marked `list`; then an unmovable order-0 request.
    fn steal_from_partly_used_block(used: usize, list: u8) -> (Zone, Extfrag) {
        let (mut z, mut frames) = zone_with(512);
        fill(&mut z, &mut frames, used, MIGRATE_MOVABLE, list);
        let (_, e) = alloc(&mut z, &mut frames, 0, MIGRATE_UNMOVABLE);
        (z, e.expect("a fallback"))
    }

    #[test]
    fn a_small_steal_claims_the_pageblock_only_when_half_is_free_or_alike() {
        let lru = super::super::page::lru::INACTIVE_ANON as u8;
        // 300 LRU pages used, 212 free: free + alike (212 + 0; LRU pages are movable,
        // not alike an unmovable request) < 256: the free pages move to the unmovable
        // lists but the pageblock stays movable.
        let (z, e) = steal_from_partly_used_block(300, lru);
        assert!(e.fallback_order < PAGEBLOCK_ORDER);
        assert!(!e.change_ownership);
        assert_eq!(z.pageblock_migratetype(0), MIGRATE_MOVABLE);
        assert_eq!(free_pages_of(&z, MIGRATE_UNMOVABLE), 211);
        assert_eq!(free_pages_of(&z, MIGRATE_MOVABLE), 0);
        // 200 LRU pages used, 312 free: 312 >= 256, claimed.
        let (z, e) = steal_from_partly_used_block(200, lru);
        assert!(e.change_ownership);
        assert_eq!(z.pageblock_migratetype(0), MIGRATE_UNMOVABLE);
        // 300 pages used by the kernel (not on an LRU, not movable): alike = 512 -
        // (212 + 0) = 300, 212 + 300 >= 256: claimed.
        let (z, e) = steal_from_partly_used_block(300, on::NONE);
        assert!(e.change_ownership);
        assert_eq!(z.pageblock_migratetype(0), MIGRATE_UNMOVABLE);
    }

    #[test]
    fn a_movable_request_that_may_not_steal_takes_the_smallest_fallback_block() {
        // One pageblock turned unmovable by an unmovable page (page 0), then unmovable
        // blocks of orders 8..=4 taken from its own lists: free are one block each of
        // orders 0..=3 (pages 1, 2-3, 4-7, 8-15), all unmovable.
        let (mut z, mut frames) = zone_with(512);
        let (p, e) = alloc(&mut z, &mut frames, 0, MIGRATE_UNMOVABLE);
        assert!(e.unwrap().change_ownership);
        assert_eq!(p, 0);
        for o in (4..=8).rev() {
            assert_eq!(alloc(&mut z, &mut frames, o, MIGRATE_UNMOVABLE).1, None);
        }
        assert_eq!(free_pages_of(&z, MIGRATE_UNMOVABLE), 15);
        // A movable order-0 request: the largest fallback block is order 3 (< 4: may
        // not steal), so it takes the smallest, order 0 (page 1), and not the block.
        let (q, e) = alloc(&mut z, &mut frames, 0, MIGRATE_MOVABLE);
        let e = e.unwrap();
        assert_eq!((q, e.fallback_order), (1, 0));
        assert!(!e.change_ownership);
        // An order-2 movable request: the smallest fallback of order >= 2, pages 4-7.
        let (q, e) = alloc(&mut z, &mut frames, 2, MIGRATE_MOVABLE);
        assert_eq!((q, e.unwrap().fallback_order), (4, 2));
        assert_eq!(z.pageblock_migratetype(0), MIGRATE_UNMOVABLE);
        assert_eq!(free_pages_of(&z, MIGRATE_UNMOVABLE), 10);
    }
}

#[cfg(test)]
mod compact_retry_tests {
    use super::*;
    use crate::compact_status::{COMPACT_PRIO_ASYNC, COMPACT_PRIO_SYNC_LIGHT};
    use crate::test_util::task_mm;

    fn mm() -> Mm {
        task_mm(crate::test_util::config(256))
    }

    #[test]
    fn should_compact_retry_raises_the_priority_then_gives_up() {
        let mut mm = mm();
        let gfp = GFP_HIGHUSER_MOVABLE;
        let (mut prio, mut retries) = (DEF_COMPACT_PRIORITY, 0);
        // Order 2 failed at sync-light (Complete): retry at sync-full, counter reset.
        assert!(mm.should_compact_retry(gfp, 2, CompactResult::Complete, &mut prio, &mut retries));
        assert_eq!((prio, retries), (MIN_COMPACT_PRIORITY, 0));
        // Failed at the highest priority: give up.
        assert!(!mm.should_compact_retry(gfp, 2, CompactResult::Complete, &mut prio, &mut retries));
        // Withdrawn (deferred) at async: a higher priority next.
        let mut prio = COMPACT_PRIO_ASYNC;
        assert!(mm.should_compact_retry(gfp, 2, CompactResult::Deferred, &mut prio, &mut retries));
        assert_eq!(prio, COMPACT_PRIO_SYNC_LIGHT);
        // Progress (Success) without the page: up to 16 retries for order 2, then the
        // priority goes up; for a costly order 16 / 4 = 4, and the floor is sync-light.
        let (mut prio, mut retries) = (DEF_COMPACT_PRIORITY, 0);
        for n in 1..=16 {
            assert!(mm.should_compact_retry(
                gfp,
                2,
                CompactResult::Success,
                &mut prio,
                &mut retries
            ));
            assert_eq!((prio, retries), (DEF_COMPACT_PRIORITY, n));
        }
        assert!(mm.should_compact_retry(gfp, 2, CompactResult::Success, &mut prio, &mut retries));
        assert_eq!((prio, retries), (MIN_COMPACT_PRIORITY, 0));
        let (mut prio, mut retries) = (DEF_COMPACT_PRIORITY, 0);
        for _ in 1..=4 {
            assert!(mm.should_compact_retry(
                gfp,
                9,
                CompactResult::Success,
                &mut prio,
                &mut retries
            ));
        }
        assert!(!mm.should_compact_retry(gfp, 9, CompactResult::Success, &mut prio, &mut retries));
        assert!(!mm.should_compact_retry(gfp, 0, CompactResult::Complete, &mut prio, &mut retries));
        // Skipped for lack of free memory: retry while reclaim could make the zone
        // suitable. A fresh 256 MiB machine has plenty free: yes.
        assert!(mm.should_compact_retry(gfp, 2, CompactResult::Skipped, &mut prio, &mut retries));
    }
}

/// The per-CPU lists as the allocator uses them, worked by hand per era.
#[cfg(test)]
mod pcp_tests {
    use super::*;
    use crate::test_util::{config, task_mm};
    use crate::trace::Tracer;

    fn mm_of(version: PcpVersion) -> Mm {
        let mut cfg = config(64);
        cfg.pcp = version;
        task_mm(cfg)
    }

    /// A fresh zone, one order-0 movable allocation: `rmqueue_bulk` takes a batch
    /// (v6.7: 63, v4.5: a 64 MiB zone's 3) from the buddy, splitting the lowest
    /// max-order block from its bottom, so the list holds ascending PFNs from its
    /// head; the caller gets the first, the next allocation the second without
    /// touching the buddy. NR_FREE_PAGES has lost the whole batch.
    #[test]
    fn a_refill_takes_a_batch_and_hands_out_ascending_pages() {
        for (version, batch) in [(PcpVersion::V6_7, 3), (PcpVersion::V4_5, 3)] {
            let mut mm = mm_of(version);
            // 64 MiB: zone_batchsize = 16384 / 1024 / 4 = 4, rounddown(6) - 1 = 3.
            assert_eq!(mm.pcp[ZONE_DMA32].batch, batch, "{version:?}");
            let free = mm.nr_free_pages();
            let p = mm.alloc_kernel_pages(GFP_HIGHUSER_MOVABLE, 0).unwrap();
            assert_eq!(mm.nr_free_pages(), free - u64::from(batch));
            assert_eq!(mm.pcp_pages(ZONE_DMA32), u64::from(batch) - 1);
            let q = mm.alloc_kernel_pages(GFP_HIGHUSER_MOVABLE, 0).unwrap();
            assert_eq!(q, p + 1);
            assert_eq!(mm.nr_free_pages(), free - u64::from(batch));
            mm.check_invariants().unwrap();
        }
    }

    /// Free 5 pages of a movable pageblock (m1..m5), 2 of an unmovable one (u1, u2)
    /// and 1 of a reclaimable one (r1), in that order, hot: each list's tail is its
    /// first-freed page. A bulk free of 6 from the movable list then returns:
    /// - v4.5 (round robin over 3 lists from MOVABLE, one more page per empty list
    ///   passed): m1, r1, u1, m2, then (reclaimable empty: 2 from unmovable, which
    ///   runs dry after) u2, then m3.
    /// - v5.14 (the same over 15 lists: after r1, 12 empty lists make the batch 13):
    ///   m1, r1, u1, u2 (empty, 11 left over), m2, m3.
    /// - v6.7 (the freed list first, to empty, then on): m1..m5, r1.
    #[test]
    fn a_bulk_free_returns_pages_in_the_eras_order() {
        for (version, want) in [
            (PcpVersion::V4_5, ["m1", "r1", "u1", "m2", "u2", "m3"]),
            (PcpVersion::V5_14, ["m1", "r1", "u1", "u2", "m2", "m3"]),
            (PcpVersion::V6_7, ["m1", "m2", "m3", "m4", "m5", "r1"]),
        ] {
            let mut mm = mm_of(PcpVersion::Off);
            // Three pageblocks' worth, straight from the buddy.
            let pfns: Vec<Pfn> = (0..3 * PAGEBLOCK_NR_PAGES)
                .map(|_| mm.alloc_kernel_pages(GFP_HIGHUSER_MOVABLE, 0).unwrap())
                .collect();
            let mut blocks: Vec<Pfn> = pfns.iter().map(|p| p & !511).collect();
            blocks.sort_unstable();
            blocks.dedup();
            let zi = mm.frames[pfns[0] as usize].zone as usize;
            let page = |b: usize, k: u32| blocks[b] + 2 * k;
            mm.zones[zi].set_pageblock_migratetype(blocks[1], 512, MIGRATE_UNMOVABLE);
            mm.zones[zi].set_pageblock_migratetype(blocks[2], 512, MIGRATE_RECLAIMABLE);
            mm.cfg.pcp = version;
            mm.setup_pcp(version);
            for p in &mut mm.pcp {
                (p.high_min, p.high_max, p.high) = (10_000, 10_000, 10_000);
            }
            let mut name = std::collections::HashMap::new();
            for (b, tag, n) in [(0, "m", 5), (1, "u", 2), (2, "r", 1)] {
                for k in 0..n {
                    name.insert(page(b, k), format!("{tag}{}", k + 1));
                    mm.free_kernel_pages(page(b, k), 0);
                }
            }
            assert_eq!(mm.pcp_pages(zi), 8);
            mm.trace = Some(Tracer::parse("mm_page_pcpu_drain", 100).unwrap());
            let i = mm.pcp_index(zi);
            mm.free_pcppages_bulk(i, zi, 6, version.order_to_pindex(MIGRATE_MOVABLE, 0));
            let out = mm.trace.take().unwrap().finish();
            let got: Vec<String> = out
                .lines()
                .filter_map(|l| l.split("pfn=0x").nth(1))
                .map(|f| {
                    let pfn = u32::from_str_radix(f.split(' ').next().unwrap(), 16).unwrap();
                    name[&pfn].clone()
                })
                .collect();
            assert_eq!(got, want, "{version:?}");
            assert_eq!(mm.pcp_pages(zi), 2);
            mm.check_invariants().unwrap();
        }
    }

    /// v4.5 frees a reclaimed page cold (to the tail): a bulk free returns it before
    /// pages freed hot earlier; v6.7 has no cold frees.
    #[test]
    fn v4_5_returns_reclaimed_pages_first() {
        for (version, first) in [(PcpVersion::V4_5, "reclaimed"), (PcpVersion::V6_7, "hot")] {
            let mut mm = mm_of(PcpVersion::Off);
            let a = mm.alloc_kernel_pages(GFP_HIGHUSER_MOVABLE, 0).unwrap();
            let b = mm.alloc_kernel_pages(GFP_HIGHUSER_MOVABLE, 0).unwrap();
            mm.cfg.pcp = version;
            mm.setup_pcp(version);
            mm.free_kernel_pages(a, 0);
            mm.frames[b as usize].list = on::NONE;
            mm.kernel_pages -= 1;
            mm.free_reclaimed_page(b);
            let zi = mm.frames[a as usize].zone as usize;
            let i = mm.pcp_index(zi);
            mm.trace = Some(Tracer::parse("mm_page_pcpu_drain", 100).unwrap());
            mm.free_pcppages_bulk(i, zi, 1, version.order_to_pindex(MIGRATE_MOVABLE, 0));
            let out = mm.trace.take().unwrap().finish();
            let drained = if out.contains(&format!("pfn={b:#x} ")) {
                "reclaimed"
            } else {
                assert!(out.contains(&format!("pfn={a:#x} ")));
                "hot"
            };
            assert_eq!(drained, first, "{version:?}");
        }
    }

    /// A free that fills the list to `high` returns a batch (v4.5: `batch` = 3 of a
    /// 64 MiB zone, high 18), and drain_all_pages empties every CPU's lists.
    #[test]
    fn a_full_list_returns_a_batch_and_a_drain_empties_all() {
        let mut cfg = config(64);
        cfg.pcp = PcpVersion::V4_5;
        cfg.nr_cpus = 2;
        let mut mm = task_mm(cfg);
        let pages: Vec<Pfn> = (0..40)
            .map(|_| mm.alloc_kernel_pages(GFP_HIGHUSER_MOVABLE, 0).unwrap())
            .collect();
        // 40 allocations in refills of 3: 14 refills (42 pages), 2 left on the list.
        assert_eq!(mm.pcp_pages(ZONE_DMA32), 2);
        // 16 frees: the list reaches 18 = high, returns 3 (15 left), then 16, 17.
        for &p in &pages[..18] {
            mm.free_kernel_pages(p, 0);
        }
        assert_eq!(mm.pcp_pages(ZONE_DMA32), 17);
        // The other CPU frees 10.
        mm.current_cpu = 1;
        for &p in &pages[18..28] {
            mm.free_kernel_pages(p, 0);
        }
        assert_eq!(mm.pcp_pages(ZONE_DMA32), 27);
        let free = mm.nr_free_pages();
        mm.drain_all_pages();
        assert_eq!(mm.pcp_pages(ZONE_DMA32), 0);
        assert_eq!(mm.nr_free_pages(), free + 27);
        mm.check_invariants().unwrap();
    }
}

/// Nodes: the zonelists `build_all_zonelists` makes from a SLIT, and where an
/// allocation lands on a machine of two nodes.
#[cfg(test)]
mod numa_tests {
    use super::*;
    use crate::test_util::{config, node, task_mm};
    use crate::LOCAL_DISTANCE;

    /// The nodes of each node's zonelist, in order (each node once).
    fn node_orders(mm: &Mm) -> Vec<Vec<usize>> {
        mm.zonelists
            .iter()
            .map(|zl| {
                let mut order: Vec<usize> = Vec::new();
                for &z in zl.zones() {
                    let nid = mm.zones[z as usize].node;
                    if order.last() != Some(&nid) {
                        order.push(nid);
                    }
                }
                order
            })
            .collect()
    }

    /// The four-node table of 54d032ced983's message (two pairs 12 apart, the pairs
    /// 32 apart). Its fallback lists are the ones the commit sets out to build: with
    /// the node load accumulated, nodes 0 and 1 take turns as the first remote pair
    /// member (node 3's list was 3 2 0 1 before it).
    #[test]
    fn zonelists_of_the_commits_four_node_table() {
        let mut cfg = config(256);
        cfg.nr_cpus = 4;
        let d = [
            [10, 12, 32, 32],
            [12, 10, 32, 32],
            [32, 32, 10, 12],
            [32, 32, 12, 10],
        ];
        cfg.nodes = (0..4).map(|n| node(16384, &[n as u32], &d[n])).collect();
        let mm = Mm::new(cfg);
        assert_eq!(
            node_orders(&mm),
            vec![
                vec![0, 1, 2, 3],
                vec![1, 0, 3, 2],
                vec![2, 3, 0, 1],
                vec![3, 2, 1, 0]
            ]
        );
        // Node 0's 64 MiB is all below 4 GiB (DMA32); the others are Normal: node 0's
        // list names its DMA32 zone (id 0), the others their Normal zone (id 2n + 1).
        assert_eq!(mm.zonelists[1].zones(), &[3, 0, 7, 5]);
    }

    /// At equal distance a node without CPUs (CXL memory) comes before one with CPUs;
    /// a lower node id pays one more.
    #[test]
    fn zonelists_prefer_a_headless_node_at_equal_distance() {
        let mut cfg = config(256);
        cfg.nr_cpus = 2;
        cfg.nodes = vec![
            node(32768, &[0], &[10, 21, 21]),
            node(16384, &[1], &[21, 10, 21]),
            node(16384, &[], &[21, 21, 10]),
        ];
        let mm = Mm::new(cfg);
        // Node 0: node 1 scores 21 + 1 (CPUs), node 2 21. Node 1: node 0 scores 21 + 1
        // (lower id) + 1 (CPUs), node 2 21. Node 2: nodes 0 and 1 both score 21 + 1
        // + 1 with no load (only node 2 was loaded, as the others' first remote
        // node), and the first found, node 0, wins the tie.
        assert_eq!(
            node_orders(&mm),
            vec![vec![0, 2, 1], vec![1, 2, 0], vec![2, 0, 1]]
        );
    }

    /// Two nodes of 64 MiB, a CPU each. A task on node 1's CPU gets node 1's pages
    /// (numa_hit, local_node there) until node 1 is at its low watermark, then node
    /// 0's (numa_miss and other_node on node 0's zone, numa_foreign on node 1's),
    /// without waking kswapd: the fast path spills to the remote node first.
    #[test]
    fn an_allocation_spills_to_the_remote_node_before_kswapd() {
        let mut cfg = config(128);
        cfg.nr_cpus = 2;
        cfg.pcp = PcpVersion::Off;
        cfg.nodes = vec![
            node(16384, &[0], &[LOCAL_DISTANCE, 20]),
            node(16384, &[1], &[20, LOCAL_DISTANCE]),
        ];
        let mut mm = task_mm(cfg);
        // min_free_kbytes = int_sqrt(131072 KiB × 16) = 1448 → pages_min 362; node 1's
        // Normal zone (id 3) has half the memory: min 181, low 181 + max(181 / 4,
        // 16384 × 10 / 10000) = 226.
        assert_eq!(mm.zones[3].watermark[WMARK_LOW], 226);
        // Node 0's 64 MiB is DMA32 (id 0); no lowmem reserve bars it (node 0 has no
        // Normal zone above it).
        assert_eq!(mm.zones[0].lowmem_reserve, [0, 0]);
        mm.set_current_cpu(1);
        assert_eq!(mm.numa_node_id(), 1);
        let mut on_node = [0u64; 2];
        let mut first_remote_free = None;
        for _ in 0..20_000 {
            // Held as a kernel caller's, so the checker accounts for each.
            let pfn = mm.alloc_kernel_pages(GFP_HIGHUSER_MOVABLE, 0).unwrap();
            let nid = mm.pfn_to_nid(pfn);
            assert_eq!(nid, usize::from(pfn >= 16384));
            if nid == 0 && first_remote_free.is_none() {
                first_remote_free = Some(mm.zones[3].nr_free_pages);
            }
            // Once the allocations spill, they stay on node 0 (nothing frees).
            assert!(nid == 0 || first_remote_free.is_none());
            on_node[nid] += 1;
        }
        // The spill starts at node 1's low watermark, give or take the two CPUs'
        // vmstat drift (threshold 2 × fls(2) × (1 + fls(0)) = 4 each).
        let free = first_remote_free.expect("node 1 ran out of pages above its low mark");
        assert!((226 - 8..=226 + 8).contains(&free), "{free}");
        assert_eq!(on_node[1], 16384 - free);
        let s = |z: usize| mm.numa_stats[z];
        assert_eq!((s(3).numa_hit, s(3).local_node), (on_node[1], on_node[1]));
        assert_eq!((s(3).numa_miss, s(3).other_node), (0, 0));
        assert_eq!(s(3).numa_foreign, on_node[0]);
        assert_eq!((s(0).numa_miss, s(0).other_node), (on_node[0], on_node[0]));
        assert_eq!(
            (s(0).numa_hit, s(0).local_node, s(0).numa_foreign),
            (0, 0, 0)
        );
        assert!(!mm
            .out
            .iter()
            .any(|o| matches!(o, crate::Out::WakeKswapd { .. })));
        // The frames know their zone's type; the node is where their PFN lies.
        assert_eq!(mm.page_zone_id(16384), 3);
        assert_eq!(mm.page_zone_id(0), 0);
        mm.check_invariants().unwrap();
    }

    /// The per-CPU lists are per zone of every node: pages node 1's CPU frees go onto
    /// its list of node 1's zone, and a drain returns each to its own node's buddy.
    #[test]
    fn per_cpu_lists_keep_each_nodes_pages() {
        let mut cfg = config(128);
        cfg.nr_cpus = 2;
        cfg.nodes = vec![
            node(16384, &[0], &[LOCAL_DISTANCE, 20]),
            node(16384, &[1], &[20, LOCAL_DISTANCE]),
        ];
        let mut mm = task_mm(cfg);
        let free_before = [mm.zones[0].nr_free_pages, mm.zones[3].nr_free_pages];
        mm.set_current_cpu(1);
        let pages: Vec<Pfn> = (0..3000)
            .map(|_| mm.alloc_pages(GFP_HIGHUSER_MOVABLE, 0).unwrap())
            .collect();
        assert!(pages.iter().all(|&p| mm.pfn_to_nid(p) == 1));
        for &p in &pages {
            mm.free_pages(p, 0);
        }
        // CPU 1's list set of zone id 3 (node 1's Normal) holds what it kept.
        assert!(mm.pcp_pages(3) > 0);
        assert_eq!(mm.pcp_pages(0), 0);
        mm.check_invariants().unwrap();
        mm.drain_all_pages();
        assert_eq!(mm.pcp_pages(3), 0);
        assert_eq!(
            [mm.zones[0].nr_free_pages, mm.zones[3].nr_free_pages],
            free_before
        );
        mm.check_invariants().unwrap();
    }
}
