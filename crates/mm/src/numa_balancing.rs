//! NUMA balancing in memory-tiering mode (`kernel.numa_balancing = 2`,
//! NUMA_BALANCING_MEMORY_TIERING, as of v6.18): each process's scan
//! (`task_numa_work`) makes the PTEs of its pages on slower tiers PROT_NONE
//! (`change_prot_numa`, which skips top-tier nodes when normal balancing is off) and
//! stamps each page with the scan time (`folio_xchg_access_time`); the next access
//! takes a hint fault (`do_numa_page`), and a page found hot (touched within the hot
//! threshold of its scan) is promoted to the faulting CPU's node
//! (`should_numa_migrate_memory`, `migrate_misplaced_folio`), at most
//! `numa_balancing_promote_rate_limit_MBps` a second per node
//! (`numa_promotion_rate_limit`), the threshold itself tuned to that rate
//! (`numa_promotion_adjust_threshold`). A promotion that would take the node below its
//! high watermark wakes its kswapd instead (`migrate_balanced_pgdat`), which then
//! balances to the PROMO watermark and so makes room by demoting.
//!
//! Not modelled: normal balancing (task placement, `kernel.numa_balancing = 1`),
//! the scan period's adaptation (hint faults in tiering mode are mostly remote and
//! private, which drives the kernel's period to its minimum: the scan runs every
//! `task_scan_min`), file mappings (the scan walks anonymous memory only), and the
//! scan's own CPU time.

use crate::memory_tiers::TierStat;
use crate::page::{pte, Pfn};
use crate::zone::{zone_watermark_ok, AllocFlags, WMARK_HIGH, WMARK_LOW, WMARK_MIN, ZONE_NORMAL};
use crate::{Mm, SpaceKind};

/// `MAX_SCAN_WINDOW`: the scan's most PTE updates a second, in MB.
const MAX_SCAN_WINDOW_MB: u64 = 2560;
/// `NUMA_MIGRATION_ADJUST_STEPS`: the hot threshold moves in steps of 2 × default / 16.
const NUMA_MIGRATION_ADJUST_STEPS: u64 = 16;
/// `folio_xchg_access_time` keeps the low 21 bits of the time in ms
/// (`PAGE_ACCESS_TIME_MASK` on 64-bit, LAST_CPUPID_SHIFT wide).
const PAGE_ACCESS_TIME_MASK: u32 = (1 << 21) - 1;

/// `kernel.numa_balancing` and its tunables (sysctl and
/// /sys/kernel/debug/sched/numa_balancing/).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NumaBalancingConfig {
    /// NUMA_BALANCING_MEMORY_TIERING (`kernel.numa_balancing = 2`).
    pub memory_tiering: bool,
    /// `kernel.numa_balancing_promote_rate_limit_MBps` (65536).
    pub promote_rate_limit_mbps: u64,
    /// `hot_threshold_ms` (1000).
    pub hot_threshold_ms: u64,
    /// `scan_period_min_ms` (1000) and `scan_period_max_ms` (60000: also the
    /// threshold's adjustment period).
    pub scan_period_min_ms: u64,
    pub scan_period_max_ms: u64,
    /// `scan_size_mb` (256).
    pub scan_size_mb: u64,
}

impl Default for NumaBalancingConfig {
    fn default() -> Self {
        NumaBalancingConfig {
            memory_tiering: false,
            promote_rate_limit_mbps: 65536,
            hot_threshold_ms: 1000,
            scan_period_min_ms: 1000,
            scan_period_max_ms: 60000,
            scan_size_mb: 256,
        }
    }
}

/// A node's promotion state (`pgdat->nbp_*`).
#[derive(Debug, Clone, Copy, Default)]
pub struct NodePromotion {
    /// `nbp_rl_start`, `nbp_rl_nr_cand`: the rate limit's window (ms) and the
    /// candidates at its start.
    pub rl_start_ms: u64,
    pub rl_nr_cand: u64,
    /// `nbp_th_start`, `nbp_th_nr_cand`, `nbp_threshold` (0: the default).
    pub th_start_ms: u64,
    pub th_nr_cand: u64,
    pub threshold_ms: u64,
}

/// The model's NUMA balancing state: per node, per process, per slow page.
#[derive(Debug, Clone, Default)]
pub struct NumaBalancing {
    pub nodes: Vec<NodePromotion>,
    /// Per workload, where its next scan starts: (index into its anon spaces, page).
    pub scan_at: Vec<(usize, u32)>,
    /// Per page of the slower tiers (from `access_time_base`), the scan time it was
    /// stamped with (ms, `PAGE_ACCESS_TIME_MASK` bits).
    pub access_time: Vec<u32>,
    pub access_time_base: Pfn,
}

/// `zone->_watermark[WMARK_PROMO]` + boost: a step of (HIGH − LOW) above HIGH.
pub fn promo_wmark_pages(z: &crate::zone::Zone) -> u64 {
    z.wmark(WMARK_HIGH) + (z.watermark[WMARK_HIGH] - z.watermark[WMARK_LOW])
}

impl Mm {
    /// Sets up the state when memory-tiering balancing is on: the slower tiers' pages
    /// get an access-time slot each (host memory for those pages only).
    pub(crate) fn numa_balancing_init(&mut self) {
        if !self.cfg.numa_balancing.memory_tiering {
            return;
        }
        let slow: Vec<usize> = (0..self.nr_nodes())
            .filter(|&n| !self.tiers.node_is_toptier(n))
            .collect();
        let nb = &mut self.numa_balancing;
        nb.nodes = vec![NodePromotion::default(); self.node_start_pfn.len() - 1];
        nb.scan_at = vec![(0, 0); self.cfg.workloads.len()];
        if let (Some(&lo), Some(&hi)) = (slow.first(), slow.last()) {
            nb.access_time_base = self.node_start_pfn[lo];
            let len = self.node_start_pfn[hi + 1] - self.node_start_pfn[lo];
            nb.access_time = vec![0; len as usize];
        }
        self.any_marked_pte = true;
    }

    fn now_ms(&self) -> u64 {
        self.now / 1_000_000
    }

    /// `task_scan_min`: the period of workload `w`'s scan in ms: a scan window a
    /// `scan_period_min` split over the windows its RSS spans, no shorter than the
    /// `MAX_SCAN_WINDOW` rate allows.
    pub fn task_scan_min_ms(&self, w: usize) -> u64 {
        let c = &self.cfg.numa_balancing;
        let windows = (MAX_SCAN_WINDOW_MB / c.scan_size_mb.max(1)).max(1);
        let floor = 1000 / windows;
        let scan_pages = c.scan_size_mb << 8;
        let rss: u64 = self.mm_spaces[w]
            .iter()
            .map(|&s| self.spaces[s as usize].nr_present)
            .sum();
        let nr_windows = rss.div_ceil(scan_pages.max(1)).max(1);
        (c.scan_period_min_ms / nr_windows).max(floor)
    }

    /// `task_numa_work` for workload `w`: from where its last scan stopped, chunks of
    /// `scan_size_mb` of its anonymous memory; in each, the present PTEs of pages on
    /// slower tiers become PROT_NONE (NUMA_PTE_UPDATES) and their pages are stamped
    /// with the time. A chunk with updates uses up the scan's size, any chunk its
    /// eightfold virtual budget. Returns the ms until the next scan.
    pub fn task_numa_work(&mut self, w: usize) -> u64 {
        let period = self.task_scan_min_ms(w);
        if self.workload_dead.get(w).copied().unwrap_or(true) {
            return period;
        }
        let anon: Vec<u32> = self.mm_spaces[w]
            .iter()
            .copied()
            .filter(|&s| {
                self.spaces[s as usize].kind == SpaceKind::Anon && !self.spaces[s as usize].dead
            })
            .collect();
        if anon.is_empty() {
            return period;
        }
        let chunk = (self.cfg.numa_balancing.scan_size_mb << 8).max(1) as i64;
        let (mut pages, mut virtpages) = (chunk, chunk * 8);
        let now = (self.now_ms() as u32) & PAGE_ACCESS_TIME_MASK;
        let (mut si, mut at) = self.numa_balancing.scan_at[w];
        let mut wrapped = 0;
        while pages > 0 && virtpages > 0 && wrapped < 2 {
            if si >= anon.len() {
                // The end of the address space: the next scan starts over.
                (si, at) = (0, 0);
                wrapped += 1;
                continue;
            }
            let space = anon[si];
            let n = self.spaces[space as usize].nr_pages();
            if at >= n {
                (si, at) = (si + 1, 0);
                continue;
            }
            let end = (at as u64 + chunk as u64).min(n as u64) as u32;
            let updates = self.change_prot_numa(space, at..end, now);
            let len = (end - at) as i64;
            virtpages -= len;
            if updates > 0 {
                pages -= len;
            }
            at = end;
        }
        self.numa_balancing.scan_at[w] = (si, at);
        period
    }

    /// `change_prot_numa` over pages `range` of `space`: PROT_NONE on each present
    /// entry of a page on a slower tier not already marked, its page stamped `now`.
    fn change_prot_numa(&mut self, space: u32, range: std::ops::Range<u32>, now: u32) -> u64 {
        let mut updates = 0;
        for vpn in range {
            let e = self.spaces[space as usize].pte(vpn);
            if !pte::is_present(e) || e & pte::NUMA != 0 {
                continue;
            }
            let pfn = pte::pfn(e);
            let nid = self.pfn_to_nid(pfn);
            // Normal balancing off: top-tier pages are left alone.
            if self.tiers.node_is_toptier(nid) {
                continue;
            }
            let i = (pfn - self.numa_balancing.access_time_base) as usize;
            self.numa_balancing.access_time[i] = now;
            *self.spaces[space as usize].pte_mut(vpn) |= pte::NUMA;
            let lv = self.folio_lruvec(pfn);
            self.mod_tier_stat(lv, TierStat::NumaPteUpdates, 1);
            updates += 1;
        }
        updates
    }

    /// `do_numa_page`: the hint fault of an access to `space[vpn]`, whose entry is
    /// PROT_NONE. The entry is made accessible again; a hot page on a slower tier is
    /// promoted to the faulting CPU's node.
    pub fn do_numa_page(&mut self, space: u32, vpn: u32) {
        let e = self.spaces[space as usize].pte(vpn);
        debug_assert!(pte::is_present(e) && e & pte::NUMA != 0);
        self.charge(self.cfg.costs.minor_fault_ns);
        *self.spaces[space as usize].pte_mut(vpn) &= !pte::NUMA;
        let pfn = pte::pfn(e);
        let (src, this) = (self.pfn_to_nid(pfn), self.numa_node_id());
        let lv = self.folio_lruvec(pfn);
        self.mod_tier_stat(lv, TierStat::NumaHintFaults, 1);
        if src == this {
            self.mod_tier_stat(lv, TierStat::NumaHintFaultsLocal, 1);
            return;
        }
        if !self.should_numa_migrate_memory(pfn, this) {
            return;
        }
        self.migrate_misplaced_folio(pfn, this);
    }

    /// `should_numa_migrate_memory` for a page on a slower tier (`folio_use_access_time`):
    /// promote at once while the target has plenty free; else only if touched within
    /// the hot threshold of its scan, and within the rate limit.
    fn should_numa_migrate_memory(&mut self, pfn: Pfn, dst: usize) -> bool {
        if self.tiers.node_is_toptier(self.pfn_to_nid(pfn)) {
            return false;
        }
        if self.pgdat_free_space_enough(dst) {
            self.numa_balancing.nodes[dst].threshold_ms = 0;
            let root = self.mem_cgroup_lruvec(0, dst);
            self.mod_tier_stat(root, TierStat::PgpromoteCandidateNrl, 1);
            return true;
        }
        let c = self.cfg.numa_balancing;
        let def_th = c.hot_threshold_ms;
        let rate_limit = c.promote_rate_limit_mbps << 8;
        self.numa_promotion_adjust_threshold(dst, rate_limit, def_th);
        let nbp = &self.numa_balancing.nodes[dst];
        let th = if nbp.threshold_ms != 0 {
            nbp.threshold_ms
        } else {
            def_th
        };
        let i = (pfn - self.numa_balancing.access_time_base) as usize;
        let now = (self.now_ms() as u32) & PAGE_ACCESS_TIME_MASK;
        let latency = now.wrapping_sub(self.numa_balancing.access_time[i]) & PAGE_ACCESS_TIME_MASK;
        if latency as u64 >= th {
            return false;
        }
        !self.numa_promotion_rate_limit(dst, rate_limit)
    }

    /// `pgdat_free_space_enough`: some zone of `nid` has free pages above its PROMO
    /// watermark plus max(1 GiB, 1/16 of the node).
    pub fn pgdat_free_space_enough(&self, nid: usize) -> bool {
        let present: u64 = self
            .node_zones(nid)
            .map(|z| self.zones[z].managed_pages)
            .sum();
        let enough = (1u64 << 18).max(present >> 4);
        self.node_zones(nid).rev().any(|zi| {
            let z = &self.zones[zi];
            z.is_managed()
                && zone_watermark_ok(
                    z,
                    0,
                    promo_wmark_pages(z) + enough,
                    ZONE_NORMAL,
                    AllocFlags::default(),
                    z.nr_free_pages,
                )
        })
    }

    /// `numa_promotion_rate_limit`: counts the candidate (PGPROMOTE_CANDIDATE) and says
    /// whether this second's window has had `rate_limit` pages already.
    fn numa_promotion_rate_limit(&mut self, nid: usize, rate_limit: u64) -> bool {
        let now = self.now_ms();
        let root = self.mem_cgroup_lruvec(0, nid);
        self.mod_tier_stat(root, TierStat::PgpromoteCandidate, 1);
        let nr_cand = self.node_tier_stat(nid, TierStat::PgpromoteCandidate);
        let nbp = &mut self.numa_balancing.nodes[nid];
        if now - nbp.rl_start_ms > 1000 {
            nbp.rl_start_ms = now;
            nbp.rl_nr_cand = nr_cand;
        }
        nr_cand - nbp.rl_nr_cand >= rate_limit
    }

    /// `numa_promotion_adjust_threshold`: once every `scan_period_max`, lower the hot
    /// threshold a step if the candidates ran more than 10 % over the rate limit's
    /// worth, raise it a step (to twice the default at most) if 10 % under.
    fn numa_promotion_adjust_threshold(&mut self, nid: usize, rate_limit: u64, ref_th: u64) {
        let now = self.now_ms();
        let th_period = self.cfg.numa_balancing.scan_period_max_ms;
        let nr_cand = self.node_tier_stat(nid, TierStat::PgpromoteCandidate);
        let nbp = &mut self.numa_balancing.nodes[nid];
        if now - nbp.th_start_ms <= th_period {
            return;
        }
        nbp.th_start_ms = now;
        let ref_cand = rate_limit * th_period / 1000;
        let diff_cand = nr_cand - nbp.th_nr_cand;
        let unit_th = ref_th * 2 / NUMA_MIGRATION_ADJUST_STEPS;
        let mut th = if nbp.threshold_ms != 0 {
            nbp.threshold_ms
        } else {
            ref_th
        };
        if diff_cand > ref_cand * 11 / 10 {
            th = th.saturating_sub(unit_th).max(unit_th);
        } else if diff_cand < ref_cand * 9 / 10 {
            th = (th + unit_th).min(ref_th * 2);
        }
        nbp.th_nr_cand = nr_cand;
        nbp.threshold_ms = th;
    }

    /// `migrate_misplaced_folio` (with `migrate_misplaced_folio_prepare`): unless
    /// `dst` would fall below its high watermark (then its kswapd is woken and the
    /// page stays), isolate the page, move it to a page of `dst` taken without
    /// reclaim (`alloc_misplaced_dst_folio`), and count the promotion.
    fn migrate_misplaced_folio(&mut self, pfn: Pfn, dst: usize) {
        if !self.migrate_balanced_pgdat(dst, 1) {
            let top = self
                .node_zones(dst)
                .rev()
                .find(|&z| self.zones[z].is_managed());
            if let Some(zi) = top {
                self.wakeup_kswapd(zi, 0, ZONE_NORMAL, false);
            }
            return;
        }
        let f = self.frames[pfn as usize];
        if !f.test(crate::page::pg::LRU) || f.list == crate::page::on::ISOLATED {
            return;
        }
        let Some(new) = self.alloc_misplaced_dst_folio(dst) else {
            return;
        };
        self.lruvec_del_folio(pfn);
        self.frames[pfn as usize].list = crate::page::on::ISOLATED;
        let src_toptier = self.tiers.node_is_toptier(self.pfn_to_nid(pfn));
        let back = match self.migrate_folio(pfn, new) {
            Ok(()) => {
                let lv = self.folio_lruvec(new);
                if !src_toptier {
                    self.mod_tier_stat(lv, TierStat::PgpromoteSuccess, 1);
                }
                self.mod_tier_stat(lv, TierStat::NumaPagesMigrated, 1);
                new
            }
            Err(_) => {
                self.free_pages(new, 0);
                pfn
            }
        };
        self.frames[back as usize].list = crate::page::on::NONE;
        self.lruvec_add_folio(back);
        self.try_to_unmap_flush();
    }

    /// `migrate_balanced_pgdat`: some zone of `nid` stays above its high watermark
    /// after `nr` more pages.
    fn migrate_balanced_pgdat(&self, nid: usize, nr: u64) -> bool {
        self.node_zones(nid).rev().any(|zi| {
            let z = &self.zones[zi];
            z.is_managed()
                && zone_watermark_ok(
                    z,
                    0,
                    z.wmark(WMARK_HIGH) + nr,
                    ZONE_NORMAL,
                    AllocFlags::default(),
                    z.nr_free_pages,
                )
        })
    }

    /// `alloc_misplaced_dst_folio`: a page of `nid` only (`__GFP_THISNODE`), without
    /// reclaim or kswapd, without reserves.
    fn alloc_misplaced_dst_folio(&mut self, nid: usize) -> Option<Pfn> {
        let gfp = crate::page_alloc::Gfp {
            direct_reclaim: false,
            kswapd_reclaim: false,
            highest_zoneidx: ZONE_NORMAL,
            migratetype: crate::zone::MIGRATE_MOVABLE,
            high: false,
            noretry: true,
        };
        let saved = self.alloc_ctx.replace((nid, 1 << nid));
        let flags = AllocFlags::default();
        let page = self
            .get_page_from_freelist(gfp, 0, WMARK_LOW, flags)
            .or_else(|| self.get_page_from_freelist(gfp, 0, WMARK_MIN, flags));
        self.alloc_ctx = saved;
        page
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page_alloc::test_pages::add_pages_of;
    use crate::test_util::{config, task_mm};
    use crate::Current;

    /// Two 64 MiB nodes: node 0 DRAM with both CPUs, node 1 CPU-less CXL. Memory
    /// tiering balancing on, the default knobs but `rate_mbps`. Workload 0's 512 anon
    /// pages are bound to node 1 (its space is returned), allocated from CPU 0.
    fn tiered(rate_mbps: u64) -> (Mm, u32) {
        let mut cfg = config(128);
        crate::test_util::dram_and_cxl(&mut cfg);
        cfg.numa_balancing.memory_tiering = true;
        cfg.numa_balancing.promote_rate_limit_mbps = rate_mbps;
        cfg.workloads[0].mempolicy = crate::mempolicy::Mempolicy::Bind { nodes: 0b10 };
        let mut mm = task_mm(cfg);
        mm.current_cpu = 0;
        mm.current_workload = Some(0);
        let (space, _) = add_pages_of(&mut mm, SpaceKind::Anon, 512, 0, Some(0));
        mm.current = Current::Task(0);
        (mm, space)
    }

    /// The rate limit by hand: 1 MB/s is 256 pages a second. In the first window
    /// (the clock starts it at 0) the 256th candidate of the second finds 256 counted
    /// since the window opened and is refused, so 255 pass; past a second, the next
    /// candidate opens a window counting from itself, and 256 pass.
    #[test]
    fn promotion_rate_limit_over_a_window() {
        let (mut mm, _) = tiered(1);
        let passes = |mm: &mut Mm, at_ms: u64| {
            mm.now = at_ms * 1_000_000;
            (0..1000)
                .filter(|_| !mm.numa_promotion_rate_limit(0, 256))
                .count()
        };
        assert_eq!(passes(&mut mm, 500), 255);
        assert_eq!(passes(&mut mm, 900), 0);
        assert_eq!(passes(&mut mm, 1600), 256);
        assert_eq!(mm.node_tier_stat(0, TierStat::PgpromoteCandidate), 3000);
    }

    /// A scan at 2 s marks every page (all on node 1: NUMA_PTE_UPDATES 512); a
    /// touch 10 ms later is a hint fault from CPU 0 whose page is hot (10 < 1000 ms)
    /// and is promoted to node 0: its PTE points at a node-0 page, unmarked. A touch
    /// 1.5 s after the scan finds its page cold: the fault restores the entry and the
    /// page stays.
    #[test]
    fn a_hot_hint_fault_promotes_a_cold_one_does_not() {
        let (mut mm, space) = tiered(65536);
        mm.now = 2_000_000_000;
        mm.task_numa_work(0);
        let s = &mm.spaces[space as usize];
        assert!((0..512).all(|i| s.pte(i) & pte::NUMA != 0));
        assert_eq!(mm.node_tier_stat(1, TierStat::NumaPteUpdates), 512);
        mm.now += 10_000_000;
        mm.do_numa_page(space, 7);
        let e = mm.spaces[space as usize].pte(7);
        assert_eq!((mm.pfn_to_nid(pte::pfn(e)), e & pte::NUMA), (0, 0));
        assert_eq!(e & pte::SLOW, 0);
        assert_eq!(mm.node_tier_stat(0, TierStat::PgpromoteSuccess), 1);
        assert_eq!(mm.node_tier_stat(1, TierStat::NumaHintFaults), 1);
        mm.now += 1_490_000_000;
        mm.do_numa_page(space, 8);
        let e = mm.spaces[space as usize].pte(8);
        assert_eq!((mm.pfn_to_nid(pte::pfn(e)), e & pte::NUMA), (1, 0));
        assert_ne!(e & pte::SLOW, 0);
        assert_eq!(mm.node_tier_stat(0, TierStat::PgpromoteSuccess), 1);
        mm.check_invariants().unwrap();
    }

    /// `task_scan_min`: 256 MB windows at 2560 MB/s at most, so never under 100 ms;
    /// 512 pages are one window: every `scan_period_min` (1000 ms).
    #[test]
    fn scan_period_by_hand() {
        let (mm, _) = tiered(65536);
        assert_eq!(mm.task_scan_min_ms(0), 1000);
    }
}
