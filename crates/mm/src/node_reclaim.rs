//! Node reclaim (`vm.zone_reclaim_mode`): an allocation whose zone fails its
//! watermark reclaims that zone's node before it falls back to the next node of its
//! zonelist, keeping its memory local at the price of the node's page cache.
//!
//! As of v6.18: mm/page_alloc.c `get_page_from_freelist` calls `node_reclaim` for a
//! zone below its watermark when `zone_allows_reclaim` (the node within
//! `RECLAIM_DISTANCE` of the preferred zone's); mm/vmscan.c `node_reclaim` reclaims
//! only when the node's unmapped page cache exceeds `min_unmapped_ratio` or its
//! reclaimable slab `min_slab_ratio`, only for a caller that may sleep and is not
//! reclaiming already, only on the running CPU's node or a node without CPUs;
//! `__node_reclaim` runs `shrink_node` from `NODE_RECLAIM_PRIORITY` down until it
//! frees the allocation's pages. Unmapping (RECLAIM_UNMAP) and writing dirty pages
//! (RECLAIM_WRITE) are the mode's other bits; without them reclaim skips mapped and
//! dirty pages. Off (0) by default, as the kernel's.
//!
//! Not modelled: PGDAT_RECLAIM_LOCKED (the simulator runs one reclaimer at a time, so
//! no node reclaim ever finds another under way).

use super::memcontrol::PageState;
use super::page::lru;
use super::page_alloc::Gfp;
use super::trace::Tp;
use super::vmscan::ScanControl;
use super::{Current, Mm};

/// `RECLAIM_ZONE`: node reclaim is on.
pub const RECLAIM_ZONE: u32 = 1;
/// `RECLAIM_WRITE`: node reclaim writes dirty pages out.
pub const RECLAIM_WRITE: u32 = 2;
/// `RECLAIM_UNMAP`: node reclaim unmaps mapped pages (and so swaps anon).
pub const RECLAIM_UNMAP: u32 = 4;
/// The bits `vm.zone_reclaim_mode` accepts.
pub const RECLAIM_MODE_MASK: u32 = RECLAIM_ZONE | RECLAIM_WRITE | RECLAIM_UNMAP;

/// `NODE_RECLAIM_PRIORITY`: node reclaim scans 1/16 of the lists at its first pass.
pub const NODE_RECLAIM_PRIORITY: i32 = 4;

/// `RECLAIM_DISTANCE` (`node_reclaim_distance`): a zone farther than this from the
/// preferred zone's node is not reclaimed for the allocation.
pub const RECLAIM_DISTANCE: u32 = 30;

/// A node's thresholds (`pgdat->min_unmapped_pages`, `pgdat->min_slab_pages`), from
/// `vm.min_unmapped_ratio` and `vm.min_slab_ratio` of its managed pages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PgdatReclaim {
    pub min_unmapped_pages: u64,
    pub min_slab_pages: u64,
}

/// `node_reclaim`'s answer (NODE_RECLAIM_NOSCAN, _FULL, _SOME, _SUCCESS).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeReclaim {
    /// Did not scan: the caller may not sleep, is reclaiming already, or the node
    /// belongs to other CPUs.
    NoScan,
    /// Nothing worth scanning: the node's reclaimable cache and slab are within
    /// their minimums.
    Full,
    /// Scanned, and freed fewer pages than the allocation needs.
    Some,
    /// Freed at least the allocation's pages.
    Success,
}

impl Mm {
    /// `setup_min_unmapped_ratio` and `setup_min_slab_ratio`: each node's thresholds,
    /// summed over its zones as the kernel rounds them.
    pub(crate) fn setup_node_reclaim(&mut self) {
        let (unmapped, slab) = (self.cfg.min_unmapped_ratio, self.cfg.min_slab_ratio);
        for nid in 0..self.nr_nodes() {
            let mut t = PgdatReclaim::default();
            for zi in self.node_zones(nid) {
                let managed = self.zones[zi].managed_pages;
                t.min_unmapped_pages += managed * unmapped / 100;
                t.min_slab_pages += managed * slab / 100;
            }
            self.node_reclaim[nid] = t;
        }
    }

    /// `node_distance(a, b)` from the SLIT.
    pub fn node_distance(&self, a: usize, b: usize) -> u32 {
        if a == b || self.cfg.nodes.is_empty() {
            return super::LOCAL_DISTANCE;
        }
        self.cfg.nodes[a].distance[b]
    }

    /// `node_state(nid, N_CPU)`: the node has CPUs.
    pub fn node_has_cpus(&self, nid: usize) -> bool {
        self.cfg.nodes.is_empty() || !self.cfg.nodes[nid].cpus.is_empty()
    }

    /// The node's NR_FILE_PAGES: its page cache (the file LRU here).
    pub fn node_file_pages(&self, nid: usize) -> u64 {
        self.node_lru_pages(nid, lru::INACTIVE_FILE) + self.node_lru_pages(nid, lru::ACTIVE_FILE)
    }

    /// `node_unmapped_file_comps`: the node's file LRU pages not mapped by a process.
    fn node_unmapped_file_comps(&self, nid: usize) -> u64 {
        let mapped = self.node_page_state[nid][PageState::FileMapped as usize];
        self.node_file_pages(nid).saturating_sub(mapped)
    }

    /// `node_pagecache_reclaimable`: the page cache node reclaim could take under the
    /// mode: all of it (RECLAIM_UNMAP) or the unmapped part, less the dirty pages
    /// unless it may write them.
    pub fn node_pagecache_reclaimable(&self, nid: usize) -> u64 {
        let mode = self.cfg.zone_reclaim_mode;
        let reclaimable = if mode & RECLAIM_UNMAP != 0 {
            self.node_file_pages(nid)
        } else {
            self.node_unmapped_file_comps(nid)
        };
        let dirty = if mode & RECLAIM_WRITE == 0 {
            self.node_page_state[nid][PageState::FileDirty as usize]
        } else {
            0
        };
        reclaimable - dirty.min(reclaimable)
    }

    /// `node_reclaim`: whether and how node `nid` was reclaimed for an allocation of
    /// `order` with `gfp`; counts `zone_reclaim_success` or `zone_reclaim_failed` when
    /// it scanned.
    pub fn node_reclaim(&mut self, nid: usize, gfp: Gfp, order: usize) -> NodeReclaim {
        let limits = self.node_reclaim[nid];
        if self.node_pagecache_reclaimable(nid) <= limits.min_unmapped_pages
            && self.node_slab_reclaimable_pages[nid] <= limits.min_slab_pages
        {
            return NodeReclaim::Full;
        }
        // Only a caller that may sleep, not already in reclaim (PF_MEMALLOC: kswapd,
        // a direct reclaimer's own allocations).
        // (A task already due to sleep does not start one.)
        if !gfp.direct_reclaim
            || self.in_reclaim
            || matches!(self.current, Current::Kswapd(_))
            || self.blocked_until.is_some()
        {
            return NodeReclaim::NoScan;
        }
        // Only the local node, or one without CPUs of its own.
        if self.node_has_cpus(nid) && nid != self.numa_node_id() {
            return NodeReclaim::NoScan;
        }
        let nr_pages = 1u64 << order;
        let reclaimed = self.__node_reclaim(nid, gfp, order);
        self.node_reclaim_events.slept = self.blocked_until.is_some();
        if reclaimed >= nr_pages {
            self.node_reclaim_events.success += 1;
            NodeReclaim::Success
        } else {
            self.node_reclaim_events.failed += 1;
            NodeReclaim::Some
        }
    }

    /// `__node_reclaim`: `shrink_node` of `nid` at NODE_RECLAIM_PRIORITY and below until
    /// the allocation's pages are free, as a memory stall of the allocating task.
    /// Returns the pages reclaimed. Stops early at a sleep (a reclaim throttle); the
    /// allocation is then retried after it.
    fn __node_reclaim(&mut self, nid: usize, gfp: Gfp, order: usize) -> u64 {
        let nr_pages = 1u64 << order;
        let mode = self.cfg.zone_reclaim_mode;
        let mut sc = ScanControl::new(nr_pages.max(32), gfp.highest_zoneidx, order);
        sc.priority = NODE_RECLAIM_PRIORITY;
        sc.may_writepage = mode & RECLAIM_WRITE != 0;
        sc.may_unmap = mode & RECLAIM_UNMAP != 0;
        sc.may_swap = true;
        sc.nid = nid;
        trace_event!(
            self,
            Tp::NodeReclaimBegin,
            "nid={nid} order={order} gfp_flags=GFP_HIGHUSER_MOVABLE"
        );
        let cpu_before = self.cpu_ns;
        // memalloc_noreclaim_save: the reclaim's own allocations use the reserves.
        let was = self.in_reclaim;
        self.in_reclaim = true;
        // The kernel tests the minimums again here, as other CPUs may have reclaimed
        // since node_reclaim did; nothing runs in between in the model.
        loop {
            self.shrink_node(&mut sc);
            if sc.nr_reclaimed >= nr_pages || self.blocked_until.is_some() {
                break;
            }
            sc.priority -= 1;
            if sc.priority < 0 {
                break;
            }
        }
        self.in_reclaim = was;
        self.stall_ns += self.cpu_ns - cpu_before;
        trace_event!(self, Tp::NodeReclaimEnd, "nr_reclaimed={}", sc.nr_reclaimed);
        sc.nr_reclaimed
    }

    /// Whether the zonelist walk's last node reclaim slept (and forget it).
    pub(crate) fn node_reclaim_slept(&mut self) -> bool {
        std::mem::take(&mut self.node_reclaim_events.slept)
    }
}

/// Node reclaim's /proc/vmstat events (PGSCAN_ZONE_RECLAIM_SUCCESS, _FAILED): each
/// `node_reclaim` that scanned, by whether it freed the allocation's pages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NodeReclaimEvents {
    pub success: u64,
    pub failed: u64,
    /// The last node reclaim slept (a reclaim throttle): the zonelist walk stops
    /// there and the allocation is retried after the sleep.
    slept: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page::{pg, pte, Pfn};
    use crate::page_alloc::GFP_HIGHUSER_MOVABLE;
    use crate::test_util::{config, task_mm, two_nodes};
    use crate::vm_event_item::Ev;
    use crate::zone::{AllocFlags, WMARK_LOW};
    use crate::SpaceKind;

    /// Two 64 MiB nodes, a CPU each, the task on CPU 0 (node 0), node reclaim in
    /// `mode`.
    fn mm(mode: u32) -> Mm {
        let mut cfg = config(128);
        two_nodes(&mut cfg);
        cfg.zone_reclaim_mode = mode;
        task_mm(cfg)
    }

    /// Fills node 0 with page-cache pages (mapped ones counted in NR_FILE_MAPPED,
    /// dirty ones dirtied) until it fails its low watermark.
    fn fill_node0(mm: &mut Mm, mapped: bool, dirty: bool) -> Vec<Pfn> {
        let space = mm.add_space(SpaceKind::File, "f".into(), 16384, Some(0));
        let mode = std::mem::take(&mut mm.cfg.zone_reclaim_mode);
        mm.alloc_ctx = Some((0, 1 << 0));
        let mut pfns = Vec::new();
        while let Some(pfn) =
            mm.get_page_from_freelist(GFP_HIGHUSER_MOVABLE, 0, WMARK_LOW, AllocFlags::default())
        {
            let i = pfns.len() as u32;
            let f = &mut mm.frames[pfn as usize];
            f.mapping = space;
            f.index = i;
            mm.folio_add_lru(pfn);
            // The file's page-cache entry (a file space's table is its page cache).
            let e = mm.mk_pte(pfn);
            *mm.spaces[space as usize].pte_mut(i) = e;
            mm.spaces[space as usize].nr_present += 1;
            if mapped {
                mm.frames[pfn as usize].set(pg::MAPPED);
                mm.mod_page_state(pfn, PageState::FileMapped, 1);
            }
            if dirty {
                mm.folio_mark_dirty(pfn);
            }
            pfns.push(pfn);
        }
        mm.alloc_ctx = None;
        mm.cfg.zone_reclaim_mode = mode;
        assert!(pfns.len() > 15_000, "{}", pfns.len());
        pfns
    }

    /// An allocation by the task on node 0's CPU (a page it keeps); returns the
    /// page's node.
    fn alloc_node(mm: &mut Mm) -> usize {
        let pfn = mm.alloc_kernel_pages(GFP_HIGHUSER_MOVABLE, 0).unwrap();
        mm.pfn_to_nid(pfn)
    }

    fn events(mm: &Mm) -> (u64, u64) {
        (
            mm.node_reclaim_events.success,
            mm.node_reclaim_events.failed,
        )
    }

    #[test]
    fn thresholds_are_a_percentage_of_each_nodes_pages() {
        let mm = mm(RECLAIM_ZONE);
        for nid in 0..2 {
            let managed = mm.node_managed_pages(nid);
            // Node 0's one zone (DMA32) and node 1's one zone (Normal): one rounding each.
            assert_eq!(mm.node_reclaim[nid].min_unmapped_pages, managed / 100);
            assert_eq!(mm.node_reclaim[nid].min_slab_pages, managed * 5 / 100);
            assert!(managed > 16_000);
        }
        // RECLAIM_DISTANCE is 30: a SLIT of 21 allows, 40 does not.
        assert!(mm.zone_allows_reclaim(0, 1));
        let mut cfg = config(128);
        two_nodes(&mut cfg);
        cfg.nodes[0].distance[1] = 40;
        let far = task_mm(cfg);
        assert!(!far.zone_allows_reclaim(0, 1) && far.zone_allows_reclaim(0, 0));
    }

    #[test]
    fn off_spills_to_the_next_node_and_on_reclaims_clean_cache_locally() {
        // Off: node 0 below its low watermark, so the page comes from node 1.
        let mut off = mm(0);
        fill_node0(&mut off, false, false);
        assert_eq!(alloc_node(&mut off), 1);
        assert_eq!(events(&off), (0, 0));
        assert_eq!(off.vmstat.get(Ev::PgstealDirect), 0);
        // On: node reclaim frees one batch (SWAP_CLUSTER_MAX = 32 pages: the first
        // 32 cold, clean, unmapped pages at the inactive tail; there is no anon to
        // balance against, so shrink_lruvec stops there), which lifts node 0 back
        // over its low watermark, and the page is local.
        let mut on = mm(RECLAIM_ZONE);
        fill_node0(&mut on, false, false);
        assert_eq!(alloc_node(&mut on), 0);
        assert_eq!(events(&on), (1, 0));
        assert_eq!(on.vmstat.get(Ev::PgstealDirect), 32);
        assert_eq!(on.vmstat.get(Ev::PgscanDirect), 32);
        // The next allocations are local too, until the batch is used up.
        assert_eq!(alloc_node(&mut on), 0);
        on.check_invariants().unwrap();
    }

    #[test]
    fn mapped_cache_is_left_alone_unless_the_mode_may_unmap() {
        // RECLAIM_ZONE: every file page is mapped, so the unmapped page cache (0) is
        // within min_unmapped_ratio and nothing is scanned (NODE_RECLAIM_FULL, no
        // event): the page comes from node 1.
        let mut zone = mm(RECLAIM_ZONE);
        fill_node0(&mut zone, true, false);
        assert_eq!(zone.node_pagecache_reclaimable(0), 0);
        assert_eq!(alloc_node(&mut zone), 1);
        assert_eq!(events(&zone), (0, 0));
        assert_eq!(zone.vmstat.get(Ev::PgscanDirect), 0);
        // RECLAIM_UNMAP: all of it counts, and reclaim unmaps what it takes.
        let mut unmap = mm(RECLAIM_ZONE | RECLAIM_UNMAP);
        let pfns = fill_node0(&mut unmap, true, false);
        assert_eq!(unmap.node_pagecache_reclaimable(0), pfns.len() as u64);
        assert_eq!(alloc_node(&mut unmap), 0);
        assert_eq!(events(&unmap), (1, 0));
        let space = unmap.frames[pfns[100] as usize].mapping as usize;
        let dropped = (0..pfns.len() as u32)
            .filter(|&i| !pte::is_present(unmap.spaces[space].pte(i)))
            .count();
        assert_eq!(dropped, 32);
        assert_eq!(
            unmap.node_page_state[0][PageState::FileMapped as usize],
            pfns.len() as u64 - 32
        );
        unmap.check_invariants().unwrap();
    }

    #[test]
    fn dirty_cache_counts_only_when_the_mode_may_write() {
        // RECLAIM_ZONE: dirty pages are not reclaimable for it, so nothing is scanned.
        let mut zone = mm(RECLAIM_ZONE);
        fill_node0(&mut zone, false, true);
        assert_eq!(zone.node_pagecache_reclaimable(0), 0);
        assert_eq!(alloc_node(&mut zone), 1);
        assert_eq!(events(&zone), (0, 0));
        // RECLAIM_WRITE: they count, and reclaim scans from priority 4 down to 0, but
        // only kswapd writes page cache out (shrink_folio_list): the node reclaimer
        // keeps every dirty page it meets, frees nothing, the attempt counts as
        // failed, and the page comes from node 1.
        let mut write = mm(RECLAIM_ZONE | RECLAIM_WRITE);
        let pfns = fill_node0(&mut write, false, true);
        assert_eq!(write.node_pagecache_reclaimable(0), pfns.len() as u64);
        assert_eq!(alloc_node(&mut write), 1);
        assert_eq!(events(&write), (0, 1));
        assert!(write.vmstat.get(Ev::PgscanDirect) > 0);
        assert_eq!(write.vmstat.get(Ev::PgstealDirect), 0);
        assert_eq!(write.wb.nr_writeback, 0);
        write.check_invariants().unwrap();
    }

    #[test]
    fn mglru_leaves_clean_cache_to_kswapd_unless_the_mode_writes_and_unmaps() {
        // lru_gen_shrink_node: without RECLAIM_WRITE and RECLAIM_UNMAP there is nothing
        // for it to do, so each attempt frees nothing and fails.
        let mut cfg = config(128);
        two_nodes(&mut cfg);
        crate::test_util::mglru(&mut cfg);
        cfg.zone_reclaim_mode = RECLAIM_ZONE;
        let mut mm = task_mm(cfg.clone());
        fill_node0(&mut mm, false, false);
        assert_eq!(alloc_node(&mut mm), 1);
        assert_eq!(events(&mm), (0, 1));
        assert_eq!(mm.vmstat.get(Ev::PgscanDirect), 0);
        // With both bits it evicts from the oldest generation.
        cfg.zone_reclaim_mode = RECLAIM_ZONE | RECLAIM_WRITE | RECLAIM_UNMAP;
        let mut mm = task_mm(cfg);
        fill_node0(&mut mm, false, false);
        assert_eq!(alloc_node(&mut mm), 0);
        assert_eq!(events(&mm), (1, 0));
        assert!(mm.vmstat.get(Ev::PgstealDirect) >= 32);
        mm.check_invariants().unwrap();
    }

    #[test]
    fn another_cpus_node_is_not_reclaimed_for_this_one() {
        // The task runs on CPU 1 (node 1) but its allocation prefers node 0 (a
        // policy): node 0 has CPUs of its own, so node reclaim leaves it alone
        // (NODE_RECLAIM_NOSCAN) and the page comes from node 1.
        let mut mm = mm(RECLAIM_ZONE);
        fill_node0(&mut mm, false, false);
        mm.current_cpu = 1;
        mm.alloc_ctx = Some((0, crate::mempolicy::NODE_MASK_ALL));
        let pfn = mm
            .get_page_from_freelist(GFP_HIGHUSER_MOVABLE, 0, WMARK_LOW, AllocFlags::default())
            .unwrap();
        assert_eq!(mm.pfn_to_nid(pfn), 1);
        assert_eq!(events(&mm), (0, 0));
        assert_eq!(
            mm.node_reclaim(0, GFP_HIGHUSER_MOVABLE, 0),
            NodeReclaim::NoScan
        );
    }
}
