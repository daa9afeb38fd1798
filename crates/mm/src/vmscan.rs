//! Classic two-list LRU reclaim (mm/vmscan.c, base version ~v6.13-6.15;
//! kernel-reference §2.2-§2.11, §2.16).
//!
//! `shrink_node` is resumable: [`NodeScan`] carries the state of `shrink_lruvec`'s
//! proportional loop so kswapd can stop after a slice of CPU time and go on in its next
//! slice, interleaving with the allocating tasks as the real one does on another CPU.
//! Direct reclaim runs it to completion in one call.

use super::memcontrol::PageState;
use super::memory_tiers::TierStat;
use super::page::{lru, on, pg, pte, Pfn};
use super::page_alloc::Gfp;
use super::throttle::ReclaimThrottle;
use super::throttle::Sleep;
use super::zone::{int_sqrt, zone_watermark_ok, AllocFlags, WMARK_HIGH, WMARK_MIN};
use super::{Current, Mm, SpaceKind};
use crate::trace::{reclaim_flags, Tp};
use crate::vm_event_item::Ev;

pub const DEF_PRIORITY: i32 = 12;
pub const SWAP_CLUSTER_MAX: u64 = 32;
/// `SWAP_CLUSTER_MAX_SKIPPED` (kernel-reference Appendix A, UNVERIFIED value).
pub const SWAP_CLUSTER_MAX_SKIPPED: u64 = SWAP_CLUSTER_MAX << 10;
pub const DEACTIVATE_ANON: u8 = 1;
pub const DEACTIVATE_FILE: u8 = 2;

/// Per-pass tallies of what reclaim found at the inactive tails (`sc->nr`).
#[derive(Debug, Clone, Copy, Default)]
pub struct ReclaimTallies {
    pub dirty: u64,
    pub unqueued_dirty: u64,
    pub congested: u64,
    pub writeback: u64,
    pub immediate: u64,
    pub file_taken: u64,
    pub taken: u64,
}

/// `struct scan_control`: one reclaim invocation's parameters and progress.
#[derive(Debug, Clone)]
pub struct ScanControl {
    pub nr_to_reclaim: u64,
    pub reclaim_idx: usize,
    pub order: usize,
    pub priority: i32,
    pub may_writepage: bool,
    pub may_unmap: bool,
    pub may_swap: bool,
    pub may_deactivate: u8,
    pub force_deactivate: bool,
    pub skipped_deactivate: bool,
    pub cache_trim_mode: bool,
    pub cache_trim_mode_failed: bool,
    pub no_cache_trim_mode: bool,
    pub file_is_tiny: bool,
    pub memcg_full_walk: bool,
    /// The reclaim target's memcg (0, the root, for global reclaim).
    pub target: usize,
    /// The node `shrink_node` works on (its `pgdat` argument): the lruvecs it
    /// shrinks are the memcgs' on this node.
    pub nid: usize,
    /// Second pass: reclaim memcgs below memory.low too.
    pub memcg_low_reclaim: bool,
    /// A memcg was spared for memory.low: a low-reclaim pass is owed.
    pub memcg_low_skipped: bool,
    /// memory.reclaim's: its scans and steals count as pgscan_proactive and
    /// pgsteal_proactive.
    pub proactive: bool,
    /// `sc->no_demotion`: `reclaim_pages` (MADV_PAGEOUT, DAMOS pageout) frees pages
    /// rather than move them to a slower tier.
    pub no_demotion: bool,
    pub anon_cost: u64,
    pub file_cost: u64,
    pub nr_scanned: u64,
    pub nr_reclaimed: u64,
    pub nr: ReclaimTallies,
    /// MGLRU, the seed (v6.1): kswapd may skip ageing while eviction finds cold
    /// pages without it (`memcgs_need_aging`); `nr_reclaimed` at `lru_gen_age_node`.
    pub memcgs_need_aging: bool,
    pub last_reclaimed: u64,
}

impl ScanControl {
    pub fn new(nr_to_reclaim: u64, reclaim_idx: usize, order: usize) -> ScanControl {
        ScanControl {
            nr_to_reclaim,
            reclaim_idx,
            order,
            priority: DEF_PRIORITY,
            may_writepage: true,
            may_unmap: true,
            may_swap: true,
            may_deactivate: 0,
            force_deactivate: false,
            skipped_deactivate: false,
            cache_trim_mode: false,
            cache_trim_mode_failed: false,
            no_cache_trim_mode: false,
            file_is_tiny: false,
            memcg_full_walk: false,
            target: 0,
            nid: 0,
            memcg_low_reclaim: false,
            memcg_low_skipped: false,
            proactive: false,
            no_demotion: false,
            anon_cost: 0,
            file_cost: 0,
            nr_scanned: 0,
            nr_reclaimed: 0,
            nr: ReclaimTallies::default(),
            memcgs_need_aging: false,
            last_reclaimed: 0,
        }
    }
}

/// How `get_scan_count` balances anon against file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanBalance {
    Equal,
    Fract,
    Anon,
    File,
}

/// Inputs of `get_scan_count` that come from outside the lruvec.
#[derive(Debug, Clone, Copy)]
pub struct ScanCountInput {
    pub swappiness: u64,
    pub may_swap: bool,
    pub can_reclaim_anon: bool,
    pub priority: i32,
    pub file_is_tiny: bool,
    pub cache_trim_mode: bool,
    pub anon_cost: u64,
    pub file_cost: u64,
    /// Reclaim on behalf of a memcg limit (or memory.reclaim), not the node.
    pub cgroup_reclaim: bool,
    /// `lruvec_lru_size` of each evictable list up to reclaim_idx.
    pub sizes: [u64; 4],
}

/// `get_scan_count`: how many pages to scan on each evictable list (indexed by LRU).
/// A pure function so the unit tests can pin it by hand.
pub fn get_scan_count(i: &ScanCountInput) -> ([u64; 4], ScanBalance) {
    // No swap, or cgroup reclaim at swappiness 0: file only.
    let balance = if !i.may_swap || !i.can_reclaim_anon || (i.cgroup_reclaim && i.swappiness == 0) {
        ScanBalance::File
    } else if i.priority == 0 && i.swappiness > 0 {
        ScanBalance::Equal
    } else if i.file_is_tiny {
        ScanBalance::Anon
    } else if i.cache_trim_mode {
        ScanBalance::File
    } else {
        ScanBalance::Fract
    };
    // Cost model (v5.8+): each side gets at least a third of the pressure.
    let total_cost = i.anon_cost + i.file_cost;
    let anon_cost = total_cost + i.anon_cost;
    let file_cost = total_cost + i.file_cost;
    let total_cost = anon_cost + file_cost;
    let ap = i.swappiness * (total_cost + 1) / (anon_cost + 1);
    let fp = (200 - i.swappiness) * (total_cost + 1) / (file_cost + 1);
    let fraction = [ap, fp];
    let denominator = ap + fp;

    let mut nr = [0u64; 4];
    for l in lru::EVICTABLE {
        let file = l & lru::FILE != 0;
        let size = i.sizes[l];
        // No memcg protection yet: scan = size (memcg issue adds the proportional part).
        let scan = size >> i.priority;
        nr[l] = match balance {
            ScanBalance::Equal => scan,
            ScanBalance::Fract => (scan * fraction[file as usize])
                .checked_div(denominator)
                .unwrap_or(0),
            ScanBalance::File => {
                if file {
                    scan
                } else {
                    0
                }
            }
            ScanBalance::Anon => {
                if file {
                    0
                } else {
                    scan
                }
            }
        };
    }
    (nr, balance)
}

/// How memory.min/low protection scales the scan of a memcg above its protection
/// (`kernel.memcg_protection`; kernel-reference §3.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProtectionMode {
    /// Before "mm, memcg: proportional memory.{low,min} reclaim": a memcg above its
    /// protection is scanned in full (protected ones are skipped): a cliff.
    Cliff,
    /// The seed patch's own first formula: scan ∝ overage, clamped to [32, size].
    Seed,
    /// Today's: `size − size × protection / (cgroup_size + 1)`, at least 32, with low
    /// used only outside the low-reclaim pass (and then a retry pass is owed).
    Proportional,
}

/// The protection part of `get_scan_count` for one list: what is left of `size` (before
/// the `>> priority` shift) for a memcg using `usage` with effective (`min`, `low`).
/// Returns the scan and whether low protection was applied (`memcg_low_skipped`).
pub fn protected_scan(
    mode: ProtectionMode,
    size: u64,
    usage: u64,
    min: u64,
    low: u64,
    memcg_low_reclaim: bool,
) -> (u64, bool) {
    if min == 0 && low == 0 {
        return (size, false);
    }
    match mode {
        ProtectionMode::Cliff => (size, false),
        ProtectionMode::Seed => {
            let protection = min.max(low);
            let cgroup_size = usage;
            let baseline = if memcg_low_reclaim { 0 } else { size };
            let scan = (size as u128 * cgroup_size as u128 / protection as u128) as u64;
            (
                scan.saturating_sub(baseline)
                    .clamp(SWAP_CLUSTER_MAX.min(size), size),
                false,
            )
        }
        ProtectionMode::Proportional => {
            let use_low = !memcg_low_reclaim && low > min;
            let protection = if use_low { low } else { min };
            let cgroup_size = usage.max(protection);
            let scan =
                size - (size as u128 * protection as u128 / (cgroup_size as u128 + 1)) as u64;
            (scan.max(SWAP_CLUSTER_MAX), use_low)
        }
    }
}

/// `inactive_is_low`: the inactive list is below `1/ratio` of the active one, with
/// ratio = √(10 × GiB of this type), 1 below 1 GiB.
pub fn inactive_is_low(inactive: u64, active: u64) -> bool {
    let gb = (inactive + active) >> (30 - 12);
    let ratio = if gb > 0 { int_sqrt(10 * gb) } else { 1 };
    inactive * ratio < active
}

/// The resumable state of one `shrink_lruvec` call (its proportional loop).
#[derive(Debug, Clone)]
pub struct LruvecScan {
    /// The lruvec it shrinks (`Mm::mem_cgroup_lruvec`).
    pub lv: usize,
    nr: [u64; 4],
    targets: [u64; 4],
    nr_reclaimed: u64,
    proportional_reclaim: bool,
}

/// The resumable state of one `shrink_node` call.
#[derive(Debug, Clone)]
pub struct NodeScan {
    lruvec: Option<LruvecScan>,
    /// MGLRU: the lruvec being shrunk by `lru_gen_shrink_lruvec`.
    gen_lruvec: Option<super::lru_gen::LruvecWork>,
    /// MGLRU global reclaim with the memcg LRU: `lru_gen_shrink_node` instead.
    gen_node: Option<super::lru_gen::GenScan>,
    nr_reclaimed_before: u64,
    /// memcgs still to visit in this walk, their lruvecs on `sc.nid`.
    memcgs: Vec<usize>,
}

/// What `folio_check_references` decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FolioRef {
    Reclaim,
    ReclaimClean,
    Keep,
    Activate,
}

/// Per-call result of `shrink_folio_list` (`struct reclaim_stat`).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct ReclaimStat {
    pub nr_dirty: u64,
    pub nr_unqueued_dirty: u64,
    pub nr_congested: u64,
    pub nr_writeback: u64,
    pub nr_immediate: u64,
    pub nr_pageout: u64,
    /// Pages sent back to the active list, by type (0 anon, 1 file).
    pub nr_activate: [u64; 2],
    /// Referenced once: kept on the inactive list for another trip.
    pub nr_ref_keep: u64,
    /// Migrated to a slower tier (counted as reclaimed too).
    pub nr_demoted: u64,
}

impl Mm {
    /// `lruvec_lru_size` for each evictable list.
    fn lru_sizes(&self, lv: usize, reclaim_idx: usize) -> [u64; 4] {
        let v = &self.lruvecs[lv];
        [0, 1, 2, 3].map(|l| v.lru_size(l, reclaim_idx))
    }

    /// `inactive_is_low(lruvec, inactive_lru)` on the lruvec's whole lists.
    pub fn lruvec_inactive_is_low(&self, lv: usize, inactive_lru: usize) -> bool {
        inactive_is_low(
            self.lruvec_page_state(lv, inactive_lru),
            self.lruvec_page_state(lv, inactive_lru + lru::ACTIVE),
        )
    }

    /// `prepare_scan_control` (kernel-reference §2.5): from the target memcg's lruvec
    /// on node `sc.nid`, and the node's own counters.
    pub fn prepare_scan_control(&mut self, sc: &mut ScanControl) {
        // The statistics need not be exact here: flushed at most a cycle late.
        self.mem_cgroup_flush_stats_ratelimited(sc.target);
        let target = self.mem_cgroup_lruvec(sc.target, sc.nid);
        let activate = self.lruvec_workingset_activate(target);
        let v = &self.lruvecs[target];
        sc.anon_cost = v.anon_cost;
        sc.file_cost = v.file_cost;
        if !sc.force_deactivate {
            let mut may = 0;
            if activate[0] != v.refaults[0]
                || self.lruvec_inactive_is_low(target, lru::INACTIVE_ANON)
            {
                may |= DEACTIVATE_ANON;
            }
            if activate[1] != v.refaults[1]
                || self.lruvec_inactive_is_low(target, lru::INACTIVE_FILE)
            {
                may |= DEACTIVATE_FILE;
            }
            sc.may_deactivate = may;
        } else {
            sc.may_deactivate = DEACTIVATE_ANON | DEACTIVATE_FILE;
        }
        let inactive_file = self.lruvec_page_state(target, lru::INACTIVE_FILE);
        sc.cache_trim_mode = (inactive_file >> sc.priority) > 0
            && sc.may_deactivate & DEACTIVATE_FILE == 0
            && !sc.no_cache_trim_mode;
        // Global reclaim: is the node's file LRU nearly exhausted?
        let nid = sc.nid;
        let free = self.node_free_pages(nid);
        let file = self.node_lru_pages(nid, lru::ACTIVE_FILE)
            + self.node_lru_pages(nid, lru::INACTIVE_FILE);
        let total_high_wmark: u64 = self.zones[self.node_zones(nid)]
            .iter()
            .filter(|z| z.is_managed())
            .map(|z| z.wmark(WMARK_HIGH))
            .sum();
        let anon = self.node_lru_pages(nid, lru::INACTIVE_ANON);
        sc.file_is_tiny = sc.target == 0
            && file + free <= total_high_wmark
            && sc.may_deactivate & DEACTIVATE_ANON == 0
            && (anon >> sc.priority) > 0;
    }

    /// `snapshot_refaults(target_memcg, pgdat)`: remember the activation counters of
    /// `memcg`'s lruvec on node `nid` for the next `prepare_scan_control`.
    pub fn snapshot_refaults(&mut self, memcg: usize, nid: usize) {
        let lv = self.mem_cgroup_lruvec(memcg, nid);
        self.lruvecs[lv].refaults = self.lruvec_workingset_activate(lv);
    }

    fn scan_count_for(&self, lv: usize, sc: &mut ScanControl) -> [u64; 4] {
        let mut sizes = self.lru_sizes(lv, sc.reclaim_idx);
        let memcg = self.lruvec_memcg(lv);
        // memory.min/low: what is left of each list before the priority shift.
        let (min, low) = self.mem_cgroup_protection(sc.target, memcg);
        let usage = self.memcg.counters.c[memcg].usage;
        for size in sizes.iter_mut() {
            let (scan, low_used) = protected_scan(
                self.protection_mode,
                *size,
                usage,
                min,
                low,
                sc.memcg_low_reclaim,
            );
            // As the kernel: the 32-page floor may exceed a small list.
            *size = scan;
            sc.memcg_low_skipped |= low_used;
        }
        let input = ScanCountInput {
            swappiness: self.cfg.swappiness,
            may_swap: sc.may_swap,
            can_reclaim_anon: self.mem_cgroup_get_nr_swap_pages(memcg) > 0
                || self.can_demote(self.lruvec_pgdat(lv), sc.no_demotion),
            priority: sc.priority,
            file_is_tiny: sc.file_is_tiny,
            cache_trim_mode: sc.cache_trim_mode,
            anon_cost: sc.anon_cost,
            file_cost: sc.file_cost,
            cgroup_reclaim: sc.target != 0,
            sizes,
        };
        get_scan_count(&input).0
    }

    /// Starts `shrink_lruvec`: `get_scan_count` and the loop's targets.
    fn shrink_lruvec_begin(&self, lv: usize, sc: &mut ScanControl) -> LruvecScan {
        let nr = self.scan_count_for(lv, sc);
        LruvecScan {
            lv,
            nr,
            targets: nr,
            nr_reclaimed: 0,
            // Global direct reclaim at DEF_PRIORITY does a full batch: kswapd is
            // evidently not keeping up.
            proportional_reclaim: sc.target == 0
                && !self.is_kswapd()
                && sc.priority == DEF_PRIORITY,
        }
    }

    /// Runs `shrink_lruvec`'s loop until it ends (true) or `cpu_ns` passes `budget_ns`
    /// (false; call again to go on).
    fn shrink_lruvec_step(
        &mut self,
        s: &mut LruvecScan,
        sc: &mut ScanControl,
        budget_ns: u64,
    ) -> bool {
        let nr_to_reclaim = sc.nr_to_reclaim;
        while s.nr[lru::INACTIVE_ANON] > 0
            || s.nr[lru::ACTIVE_FILE] > 0
            || s.nr[lru::INACTIVE_FILE] > 0
        {
            if self.shrink_lruvec_only_skips(s, sc, budget_ns) {
                break;
            }
            for l in lru::EVICTABLE {
                if s.nr[l] > 0 {
                    let chunk = s.nr[l].min(SWAP_CLUSTER_MAX);
                    s.nr[l] -= chunk;
                    s.nr_reclaimed += self.shrink_list(l, chunk, s.lv, sc);
                }
            }
            if s.nr_reclaimed >= nr_to_reclaim && !s.proportional_reclaim {
                // Goal reached: scale the remaining scan so the overall scan stays
                // proportional to the targets, stopping the smaller side.
                let nr_file = s.nr[lru::INACTIVE_FILE] + s.nr[lru::ACTIVE_FILE];
                let nr_anon = s.nr[lru::INACTIVE_ANON] + s.nr[lru::ACTIVE_ANON];
                if nr_file == 0 || nr_anon == 0 {
                    break;
                }
                let (stop, percentage) = if nr_file > nr_anon {
                    let t = s.targets[lru::INACTIVE_ANON] + s.targets[lru::ACTIVE_ANON] + 1;
                    (0, nr_anon * 100 / t)
                } else {
                    let t = s.targets[lru::INACTIVE_FILE] + s.targets[lru::ACTIVE_FILE] + 1;
                    (lru::FILE, nr_file * 100 / t)
                };
                s.nr[stop] = 0;
                s.nr[stop + lru::ACTIVE] = 0;
                let other = if stop == lru::FILE { 0 } else { lru::FILE };
                for l in [other, other + lru::ACTIVE] {
                    let scanned = s.targets[l] - s.nr[l];
                    let n = s.targets[l] * (100 - percentage) / 100;
                    s.nr[l] = n - n.min(scanned);
                }
                s.proportional_reclaim = true;
            }
            // Out of CPU budget, or the reclaimer has to sleep (a full device queue).
            if self.cpu_ns >= budget_ns || self.blocked_until.is_some() {
                return false;
            }
        }
        sc.nr_reclaimed += s.nr_reclaimed;
        // Keep the anon active/inactive balance even when no anon was scanned.
        let nid = self.lruvec_pgdat(s.lv);
        if self.can_reclaim_anon_pages(nid) && self.lruvec_inactive_is_low(s.lv, lru::INACTIVE_ANON)
        {
            self.shrink_active_list(SWAP_CLUSTER_MAX, lru::ACTIVE_ANON, s.lv, sc);
        }
        true
    }

    /// The rest of `shrink_lruvec`'s loop at once when every round left would only skip
    /// active lists whose deactivation is off: the inactive lists' targets are spent,
    /// and such a round changes nothing but the targets and `skipped_deactivate` (the
    /// goal check and the budget see the same values each round, so neither can end
    /// the loop early). The kernel walks those rounds SWAP_CLUSTER_MAX at a time; at
    /// low priority the active file target is the whole list, tens of thousands of
    /// empty rounds per call. Returns whether it ran them (the loop is over).
    fn shrink_lruvec_only_skips(
        &self,
        s: &mut LruvecScan,
        sc: &mut ScanControl,
        budget_ns: u64,
    ) -> bool {
        let only_skips = s.nr[lru::INACTIVE_ANON] == 0
            && s.nr[lru::INACTIVE_FILE] == 0
            && sc.may_deactivate & DEACTIVATE_FILE == 0
            && (s.nr[lru::ACTIVE_ANON] == 0 || sc.may_deactivate & DEACTIVATE_ANON == 0);
        let goal_check_fires = s.nr_reclaimed >= sc.nr_to_reclaim && !s.proportional_reclaim;
        let budget_stops = self.cpu_ns >= budget_ns || self.blocked_until.is_some();
        if !only_skips || goal_check_fires || budget_stops {
            return false;
        }
        // The loop runs while the active file target lasts, each round taking a chunk
        // off each active target.
        let rounds = s.nr[lru::ACTIVE_FILE].div_ceil(SWAP_CLUSTER_MAX);
        s.nr[lru::ACTIVE_ANON] = s.nr[lru::ACTIVE_ANON].saturating_sub(rounds * SWAP_CLUSTER_MAX);
        s.nr[lru::ACTIVE_FILE] = 0;
        sc.skipped_deactivate = true;
        true
    }

    /// `shrink_list`.
    fn shrink_list(&mut self, l: usize, nr_to_scan: u64, lv: usize, sc: &mut ScanControl) -> u64 {
        if l & lru::ACTIVE != 0 {
            let bit = if l & lru::FILE != 0 {
                DEACTIVATE_FILE
            } else {
                DEACTIVATE_ANON
            };
            if sc.may_deactivate & bit != 0 {
                self.shrink_active_list(nr_to_scan, l, lv, sc);
            } else {
                sc.skipped_deactivate = true;
            }
            return 0;
        }
        self.shrink_inactive_list(nr_to_scan, l, lv, sc)
    }

    /// A cleared list of pages for a batch, from the ones earlier batches gave back
    /// (reclaim isolates and shrinks a batch at a time: no allocation each).
    pub(super) fn take_pfn_vec(&mut self, capacity: usize) -> Vec<Pfn> {
        let mut v = self.pfn_vecs.pop().unwrap_or_default();
        v.clear();
        v.reserve(capacity);
        v
    }

    /// Gives a batch's list back for the next (a few are kept).
    pub(super) fn give_pfn_vec(&mut self, v: Vec<Pfn>) {
        if self.pfn_vecs.len() < 4 {
            self.pfn_vecs.push(v);
        }
    }

    /// `isolate_lru_folios`: take up to `nr_to_scan` eligible pages off the tail of `l`.
    /// Returns (isolated pages, pages walked including skipped ones).
    fn isolate_lru_folios(
        &mut self,
        nr_to_scan: u64,
        l: usize,
        lv: usize,
        sc: &ScanControl,
    ) -> (Vec<Pfn>, u64) {
        let mut taken = self.take_pfn_vec(nr_to_scan as usize);
        let mut skipped: Vec<Pfn> = Vec::new();
        let mut rotate: Vec<Pfn> = Vec::new();
        let mut scan = 0u64;
        let mut total_scan = 0u64;
        let mut nr_zone_taken = [0u64; super::zone::MAX_NR_ZONES];
        if self.cfg.lru_policy.is_some() {
            // A research policy names the victims (mm::lru_policy).
            while scan < nr_to_scan && (skipped.len() as u64) < SWAP_CLUSTER_MAX_SKIPPED {
                let file = l & lru::FILE != 0;
                let p = self.lruvecs[lv].policy.as_mut();
                let Some(pfn) = p.and_then(|p| p.evict(file)) else {
                    break;
                };
                self.lruvec_del_folio(pfn);
                total_scan += 1;
                if self.frames[pfn as usize].zone as usize > sc.reclaim_idx {
                    skipped.push(pfn);
                    continue;
                }
                scan += 1;
                if !sc.may_unmap && self.folio_mapped(pfn) {
                    rotate.push(pfn);
                    continue;
                }
                self.frames[pfn as usize].list = on::ISOLATED;
                taken.push(pfn);
            }
        } else {
            // The tail of the list: its pages are off it one by one (PG_lru cleared),
            // the list's sizes updated once below, per zone, as update_lru_sizes does.
            let (memcg, nid) = (self.lruvec_memcg(lv), self.lruvec_pgdat(lv));
            let node_pfns = self.node_start_pfn[nid]..self.node_start_pfn[nid + 1];
            let (frames, spaces) = (&mut self.frames, &self.spaces);
            let list = &mut self.lruvecs[lv].lists[l];
            let fetched = list.prefetch_tail(frames, nr_to_scan.min(64) as usize);
            while scan < nr_to_scan && (skipped.len() as u64) < SWAP_CLUSTER_MAX_SKIPPED {
                let pfn = list.pop_tail(frames);
                if pfn == super::page::NIL {
                    break;
                }
                total_scan += 1;
                if total_scan as usize + super::list::WALK_PREFETCH_AHEAD > fetched {
                    list.prefetch_walk(frames);
                }
                let f = &mut frames[pfn as usize];
                debug_assert_eq!((f.list as usize, f.memcg as usize), (l, memcg));
                debug_assert!(node_pfns.contains(&pfn), "pfn {pfn} on node {nid}'s lruvec");
                f.clear(pg::LRU);
                f.list = on::NONE;
                let zi = f.zone as usize;
                nr_zone_taken[zi] += 1;
                if zi > sc.reclaim_idx {
                    skipped.push(pfn);
                    continue;
                }
                scan += 1;
                if !sc.may_unmap && folio_mapped_in(frames, spaces, pfn) {
                    rotate.push(pfn);
                    continue;
                }
                frames[pfn as usize].list = on::ISOLATED;
                taken.push(pfn);
            }
        }
        if self.watching_folios {
            // shrink_folio_list and shrink_active_list decide their flags from here.
            for &pfn in &taken {
                self.folio_changed(pfn);
            }
        }
        // update_lru_sizes: the pages taken off the list, per zone, once per batch.
        for (zi, &n) in nr_zone_taken.iter().enumerate() {
            if n > 0 {
                self.update_lru_size(lv, l, zi, -(n as i64));
            }
        }
        // Skipped and unisolatable pages go back to the head of the list.
        for pfn in skipped.iter().rev().chain(rotate.iter().rev()) {
            self.lruvec_add_folio(*pfn);
        }
        for pfn in &skipped {
            let z = self.frames[*pfn as usize].zone as usize;
            self.count(
                if z == 0 {
                    Ev::PgskipDma32
                } else {
                    Ev::PgskipNormal
                },
                1,
            );
        }
        self.charge(total_scan * self.cfg.costs.scan_page_ns);
        (taken, total_scan)
    }

    /// Whether a page is mapped into a page table (`folio_mapped`).
    pub fn folio_mapped(&self, pfn: Pfn) -> bool {
        folio_mapped_in(&self.frames, &self.spaces, pfn)
    }

    /// `folio_referenced`: count and clear the young bits of the PTEs mapping the page.
    /// A mapped folio costs an rmap walk to reach its PTE; an unmapped one (mapcount
    /// 0) returns at once. `folio_referenced_one` also clears PG_idle on a reference
    /// and counts PG_young, the access DAMON took the PTE's bit of.
    fn folio_referenced(&mut self, pfn: Pfn) -> u32 {
        let f = self.frames[pfn as usize];
        let s = &self.spaces[f.mapping as usize];
        // invalid_folio_referenced_vma: a mapping without recency (MADV_RANDOM,
        // MADV_SEQUENTIAL, FMODE_NOREUSE; v6.3+) is skipped, its accessed bits
        // neither read nor cleared.
        if s.dead || !s.vma_has_recency() || !self.folio_mapped(pfn) {
            return 0;
        }
        self.charge(self.cfg.costs.rmap_walk_ns);
        let mut referenced = if self.lru_gen_enabled() {
            self.lru_gen_look_around(pfn) as u32
        } else {
            let s = &mut self.spaces[f.mapping as usize];
            let e = s.pte_mut(f.index);
            if pte::is_present(*e) && pte::pfn(*e) == pfn && *e & pte::YOUNG != 0 {
                *e &= !pte::YOUNG;
                1
            } else {
                0
            }
        };
        if self.damon.page_idle.is_some() {
            if referenced > 0 {
                self.folio_clear_idle(pfn);
            }
            if self.folio_test_clear_young(pfn) {
                referenced += 1;
            }
        }
        referenced
    }

    /// `shrink_active_list` (kernel-reference §2.9): deactivate from the active tail.
    /// Referenced pages are kept active only if they are executable file pages, which
    /// the simulated workloads do not map.
    pub fn shrink_active_list(
        &mut self,
        nr_to_scan: u64,
        l: usize,
        lv: usize,
        sc: &mut ScanControl,
    ) {
        let (taken, nr_scanned) = self.isolate_lru_folios(nr_to_scan, l, lv, sc);
        let memcg = self.lruvec_memcg(lv);
        self.count_reclaim(sc.target, memcg, Ev::Pgrefill, nr_scanned);
        let mut nr_deactivate = 0;
        for &pfn in &taken {
            if !self.folio_evictable(pfn) {
                self.folio_putback_lru(pfn);
                continue;
            }
            // The young bits are harvested (and cleared) even though only VM_EXEC file
            // pages would be kept active for them.
            let _ = self.folio_referenced(pfn);
            let f = &mut self.frames[pfn as usize];
            f.clear(pg::ACTIVE);
            f.set(pg::WORKINGSET);
            nr_deactivate += 1;
        }
        let nr_taken = taken.len();
        let mut taken = taken;
        taken.retain(|&pfn| self.frames[pfn as usize].list == on::ISOLATED);
        self.move_folios_to_lru(&taken);
        self.give_pfn_vec(taken);
        self.count_memcg(memcg, Ev::Pgdeactivate, nr_deactivate);
        let (file, priority) = (l & lru::FILE != 0, sc.priority);
        trace_event!(self, Tp::LruShrinkActive, "nid={} nr_taken={nr_taken} nr_active=0 nr_deactivated={nr_deactivate} nr_referenced=0 priority={priority} flags={}",
                sc.nid, reclaim_flags(file));
    }

    /// `shrink_inactive_list` (kernel-reference §2.10).
    fn shrink_inactive_list(
        &mut self,
        nr_to_scan: u64,
        l: usize,
        lv: usize,
        sc: &mut ScanControl,
    ) -> u64 {
        let file = l & lru::FILE != 0;
        let memcg = self.lruvec_memcg(lv);
        let nid = self.lruvec_pgdat(lv);
        if self.too_many_isolated(nid, file) {
            // Parallel reclaimers hold too much off the LRU: wait a bit, then give up
            // this call (the sleep ends the reclaim here; it resumes after it).
            if self.throttle_mode == ReclaimThrottle::CongestionWait {
                self.msleep_too_many_isolated();
            } else {
                self.reclaim_throttle(nid, Sleep::Isolated);
            }
            return 0;
        }
        let isolated_at = self.clock();
        let (taken, nr_scanned) = self.isolate_lru_folios(nr_to_scan, l, lv, sc);
        let item = self.reclaimer_item(sc, Ev::PgscanKswapd);
        self.count_reclaimer(sc, memcg, item, nr_scanned);
        self.count(
            if file { Ev::PgscanFile } else { Ev::PgscanAnon },
            nr_scanned,
        );
        if taken.is_empty() {
            return 0;
        }
        let nr_taken = taken.len() as u64;
        let (nr_reclaimed, stat, survivors) = self.shrink_folio_list(taken, sc, sc.target, false);
        // NR_ISOLATED_*: the batch was off the LRU while shrink_folio_list ran.
        let now = self.clock();
        self.reclaim_wait
            .note_isolated(sc.nid, isolated_at, now, nr_taken, file);
        // move_folios_to_lru: activated pages age the non-resident clock.
        for &pfn in &survivors {
            self.frames[pfn as usize].list = on::NONE;
        }
        self.move_folios_to_lru(&survivors);
        let activated = survivors
            .iter()
            .filter(|&&pfn| self.frames[pfn as usize].test(pg::ACTIVE))
            .count() as u64;
        if activated > 0 {
            self.workingset_age_nonresident(lv, activated);
        }
        self.give_pfn_vec(survivors);
        let demote = self.demote_item(sc);
        self.mod_tier_stat(lv, demote, stat.nr_demoted);
        self.count_steal(sc, memcg, file, nr_reclaimed);
        self.lru_note_cost(lv, file, stat.nr_pageout, nr_scanned - nr_reclaimed);
        // Every isolated page dirty and not queued: the flushers are behind.
        if stat.nr_unqueued_dirty == nr_taken {
            self.wakeup_flusher_threads();
        }
        sc.nr.dirty += stat.nr_dirty;
        sc.nr.congested += stat.nr_congested;
        sc.nr.unqueued_dirty += stat.nr_unqueued_dirty;
        sc.nr.writeback += stat.nr_writeback;
        sc.nr.immediate += stat.nr_immediate;
        sc.nr.taken += nr_taken;
        if file {
            sc.nr.file_taken += nr_taken;
        }
        self.trace_shrink_inactive(nr_scanned, nr_reclaimed, &stat, sc, file);
        nr_reclaimed
    }

    /// `can_demote`: demotion is enabled, the caller allows it, and node `nid` has a
    /// slower tier below it (`node_get_allowed_targets`; no cpusets here to narrow it).
    pub fn can_demote(&self, nid: usize, no_demotion: bool) -> bool {
        self.cfg.demotion_enabled && !no_demotion && self.tiers.node_get_allowed_targets(nid) != 0
    }

    /// `can_reclaim_anon_pages(NULL, nid, NULL)`: swap space is left, or node `nid`'s
    /// anon pages can be demoted.
    pub fn can_reclaim_anon_pages(&self, nid: usize) -> bool {
        self.can_reclaim_anon() || self.can_demote(nid, false)
    }

    /// `next_demotion_node`: one of `nid`'s preferred targets, at random when several
    /// are equally near (`node_random`); None at the bottom tier.
    pub fn next_demotion_node(&mut self, nid: usize) -> Option<usize> {
        let preferred = self.tiers.preferred[nid];
        match preferred.count_ones() {
            0 => None,
            1 => Some(preferred.trailing_zeros() as usize),
            n => {
                use rand::RngCore;
                let pick = (self.demotion_rng.next_u32() % n) as usize;
                (0..64).filter(|&j| preferred >> j & 1 == 1).nth(pick)
            }
        }
    }

    /// `demote_folio_list`: migrate the isolated folios to node `nid`'s demotion
    /// target (`migrate_pages` with `alloc_migrate_folio`, MIGRATE_ASYNC,
    /// MR_DEMOTION), each new page onto its lruvec there. Returns the number moved
    /// and the folios that were not (still isolated).
    fn demote_folio_list(&mut self, list: Vec<Pfn>, nid: usize) -> (u64, Vec<Pfn>) {
        let Some(target) = self.next_demotion_node(nid) else {
            return (0, list);
        };
        let allowed = self.tiers.node_get_allowed_targets(nid);
        let mut failed = Vec::new();
        let mut nr_demoted = 0;
        for pfn in list {
            let Some(dst) = self.alloc_migrate_folio(target, allowed) else {
                failed.push(pfn);
                continue;
            };
            match self.migrate_folio(pfn, dst) {
                Ok(()) => {
                    self.frames[dst as usize].list = on::NONE;
                    self.lruvec_add_folio(dst);
                    nr_demoted += 1;
                }
                Err(_) => {
                    self.free_pages(dst, 0);
                    failed.push(pfn);
                }
            }
        }
        (nr_demoted, failed)
    }

    /// `alloc_migrate_folio` (v6.11's name for `alloc_demote_folio`; DAMOS migrate
    /// uses it too, with no `allowed`): a page on `target` first (`__GFP_THISNODE`),
    /// then on any node of `allowed`; with `GFP_NOWAIT`-style flags: no direct reclaim, no
    /// reserves (`__GFP_NOMEMALLOC`, even from kswapd), but a target below its low
    /// watermark wakes its kswapd, which reclaims (demotes, swaps) there.
    pub(crate) fn alloc_migrate_folio(
        &mut self,
        target: usize,
        allowed: super::mempolicy::Nodemask,
    ) -> Option<Pfn> {
        let gfp = Gfp {
            direct_reclaim: false,
            kswapd_reclaim: true,
            highest_zoneidx: super::zone::ZONE_NORMAL,
            migratetype: super::zone::MIGRATE_MOVABLE,
            high: false,
            noretry: true,
        };
        for nodemask in [1 << target, allowed] {
            let saved = self.alloc_ctx.replace((target, nodemask));
            let flags = AllocFlags::default();
            let mut page = self.get_page_from_freelist(gfp, 0, super::zone::WMARK_LOW, flags);
            if page.is_none() {
                self.wake_all_kswapds(gfp, 0);
                page = self.get_page_from_freelist(gfp, 0, WMARK_MIN, flags);
            }
            self.alloc_ctx = saved;
            if page.is_some() {
                return page;
            }
        }
        None
    }

    /// Which `pgdemote_*` counts `sc`'s demotions (`reclaimer_offset`).
    pub(super) fn demote_item(&self, sc: &ScanControl) -> TierStat {
        if self.is_kswapd() {
            TierStat::PgdemoteKswapd
        } else if sc.proactive {
            TierStat::PgdemoteProactive
        } else {
            TierStat::PgdemoteDirect
        }
    }

    /// `mod_lruvec_state` of a tiering counter (kept on machines of several nodes).
    pub fn mod_tier_stat(&mut self, lv: usize, item: TierStat, n: u64) {
        if let Some(s) = self.tier_stats.get_mut(lv) {
            s[item as usize] += n;
        }
    }

    /// A tiering counter of node `nid` (its lruvecs summed: nodeN/vmstat).
    pub fn node_tier_stat(&self, nid: usize, item: TierStat) -> u64 {
        (0..self.memcg.cgs.len())
            .filter_map(|m| self.tier_stats.get(self.mem_cgroup_lruvec(m, nid)))
            .map(|s| s[item as usize])
            .sum()
    }

    /// A tiering counter of `memcg`'s subtree on every node (memory.stat).
    pub fn memcg_tier_stat(&self, memcg: usize, item: TierStat) -> u64 {
        self.memcg
            .subtree(memcg)
            .into_iter()
            .flat_map(|m| self.memcg_lruvecs(m).collect::<Vec<_>>())
            .filter_map(|lv| self.tier_stats.get(lv))
            .map(|s| s[item as usize])
            .sum()
    }

    /// `reclaimer_offset`: which of a reclaim counter's kswapd, direct and proactive
    /// (memory.reclaim's) variants `sc`'s reclaimer counts in (no khugepaged here).
    /// `kswapd` is the PgscanKswapd or PgstealKswapd item.
    pub(super) fn reclaimer_item(&self, sc: &ScanControl, kswapd: Ev) -> Ev {
        match (kswapd, self.is_kswapd(), sc.proactive) {
            (_, true, _) => kswapd,
            (Ev::PgscanKswapd, false, true) => Ev::PgscanProactive,
            (Ev::PgscanKswapd, false, false) => Ev::PgscanDirect,
            (_, false, true) => Ev::PgstealProactive,
            (_, false, false) => Ev::PgstealDirect,
        }
    }

    /// A reclaim event of `sc`'s: memory.stat always, /proc/vmstat unless it is
    /// cgroup reclaim (`cgroup_reclaim`: a target memcg, which memory.reclaim always
    /// has, the root's included).
    pub(super) fn count_reclaimer(&mut self, sc: &ScanControl, memcg: usize, e: Ev, n: u64) {
        if sc.target == 0 && !sc.proactive {
            self.vmstat.count(e, n);
        }
        self.memcg.cgs[memcg].stat.count(e, n);
    }

    /// `pgsteal_{kswapd,direct,proactive}` (memory.stat always, vmstat for global
    /// reclaim) and `pgsteal_{anon,file}`.
    pub(super) fn count_steal(&mut self, sc: &ScanControl, memcg: usize, file: bool, n: u64) {
        let item = self.reclaimer_item(sc, Ev::PgstealKswapd);
        self.count_reclaimer(sc, memcg, item, n);
        self.count(
            if file {
                Ev::PgstealFile
            } else {
                Ev::PgstealAnon
            },
            n,
        );
    }

    /// The `mm_vmscan_lru_shrink_inactive` tracepoint.
    pub(super) fn trace_shrink_inactive(
        &mut self,
        nr_scanned: u64,
        nr_reclaimed: u64,
        stat: &ReclaimStat,
        sc: &ScanControl,
        file: bool,
    ) {
        let (nid, priority) = (sc.nid, sc.priority);
        trace_event!(self, Tp::LruShrinkInactive, "nid={nid} nr_scanned={nr_scanned} nr_reclaimed={nr_reclaimed} nr_dirty={} nr_writeback={} nr_congested={} nr_immediate={} nr_activate_anon={} nr_activate_file={} nr_ref_keep={} nr_unmap_fail=0 priority={priority} flags={}",
                stat.nr_dirty,
                stat.nr_writeback,
                stat.nr_congested,
                stat.nr_immediate,
                stat.nr_activate[0],
                stat.nr_activate[1],
                stat.nr_ref_keep,
                reclaim_flags(file));
    }

    /// `folio_check_references` (classic rules, kernel-reference §2.10 step 6).
    fn folio_check_references(&mut self, pfn: Pfn) -> FolioRef {
        // folio_referenced_one in a VM_LOCKED mapping: "restore the mlock which got
        // missed" (mlock_vma_folio) and stop the walk; the folio, now PG_mlocked, is
        // activated and culled to the unevictable list as it is put back. Every page
        // of a locked mapping here is mlocked when it is faulted in and never left on
        // an evictable list, so reclaim should not meet one; this is the kernel's
        // answer if it does.
        let f = self.frames[pfn as usize];
        if self
            .spaces
            .get(f.mapping as usize)
            .is_some_and(|s| s.vm_locked && !s.dead)
            && self.folio_mapped(pfn)
        {
            self.charge(self.cfg.costs.rmap_walk_ns);
            self.mlock_folio(pfn);
            return FolioRef::Activate;
        }
        if self.cfg.lru_policy.is_some() {
            // The research policy chose this page; its accesses are the policy's.
            return FolioRef::Reclaim;
        }
        let referenced_ptes = self.folio_referenced(pfn);
        if self.lru_gen_enabled() {
            // MGLRU (kernel-reference §4.5): no young PTE → reclaim; else the first
            // sighting keeps it, a second activates it.
            if referenced_ptes == 0 {
                return FolioRef::Reclaim;
            }
            return if self.lru_gen_set_refs(pfn) {
                FolioRef::Activate
            } else {
                FolioRef::Keep
            };
        }
        let f = &mut self.frames[pfn as usize];
        let referenced_folio = f.test_clear(pg::REFERENCED);
        if referenced_ptes > 0 {
            f.set(pg::REFERENCED);
            if referenced_folio || referenced_ptes > 1 {
                return FolioRef::Activate;
            }
            return FolioRef::Keep;
        }
        if referenced_folio && f.is_file_lru() {
            return FolioRef::ReclaimClean;
        }
        FolioRef::Reclaim
    }

    /// `shrink_folio_list` (kernel-reference §2.10): decide each isolated page's fate.
    /// Returns (reclaimed, stats, pages to put back).
    pub(super) fn shrink_folio_list(
        &mut self,
        list: Vec<Pfn>,
        sc: &mut ScanControl,
        target_memcg: usize,
        ignore_references: bool,
    ) -> (u64, ReclaimStat, Vec<Pfn>) {
        let mut stat = ReclaimStat::default();
        let mut nr_reclaimed = 0;
        let mut ret = self.take_pfn_vec(list.len());
        let kswapd = self.is_kswapd();
        let mut demote = Vec::new();
        let do_demote_pass = self.can_demote(sc.nid, sc.no_demotion);
        // Each page's entry (its PTE, or its page-cache slot) is read by
        // folio_referenced or __remove_mapping, anywhere in its table: fetch the
        // batch's at once (the frames are in cache since isolation).
        for &pfn in &list {
            let f = &self.frames[pfn as usize];
            if let Some(s) = self.spaces.get(f.mapping as usize) {
                s.prefetch_entry(f.index);
            }
        }
        let pass = Pass {
            target_memcg,
            ignore_references,
            kswapd,
            demote: do_demote_pass,
        };
        for &pfn in &list {
            sc.nr_scanned += 1;
            if self.page_is_thp(pfn) {
                self.split_huge_page(pfn);
            }
            match self.reclaim_one(pfn, sc, pass, &mut stat) {
                Fate::Demote => demote.push(pfn),
                fate => nr_reclaimed += self.folio_fate(pfn, fate, &mut stat, &mut ret),
            }
        }
        if !demote.is_empty() {
            let (nr_demoted, failed) = self.demote_folio_list(demote, sc.nid);
            nr_reclaimed += nr_demoted;
            stat.nr_demoted += nr_demoted;
            // What could not move is reclaimed as if demotion were off, unless this
            // is proactive reclaim (no real pressure: keep the LRU order).
            let pass = Pass {
                demote: false,
                ..pass
            };
            for pfn in failed {
                if sc.proactive {
                    ret.push(pfn);
                    continue;
                }
                sc.nr_scanned += 1;
                let fate = self.reclaim_one(pfn, sc, pass, &mut stat);
                nr_reclaimed += self.folio_fate(pfn, fate, &mut stat, &mut ret);
            }
        }
        // The unmaps' deferred TLB flush, before the pages are reused.
        self.try_to_unmap_flush();
        // The batch's writes leave as one plugged, merged request per device.
        self.flush_plug();
        self.charge(nr_reclaimed * self.cfg.costs.reclaim_page_ns);
        self.give_pfn_vec(list);
        (nr_reclaimed, stat, ret)
    }

    /// A folio's end in `shrink_folio_list`: freed (1 returned), activated or kept
    /// (onto `ret`).
    #[inline(always)]
    fn folio_fate(
        &mut self,
        pfn: Pfn,
        fate: Fate,
        stat: &mut ReclaimStat,
        ret: &mut Vec<Pfn>,
    ) -> u64 {
        match fate {
            Fate::Freed => return 1,
            Fate::Activate => {
                if self.folio_evictable(pfn) {
                    let file = self.frames[pfn as usize].is_file_lru() as usize;
                    stat.nr_activate[file] += 1;
                }
                self.activate_locked(pfn);
                ret.push(pfn);
            }
            Fate::Keep | Fate::Demote => ret.push(pfn),
        }
        0
    }

    fn activate_locked(&mut self, pfn: Pfn) {
        let f = self.frames[pfn as usize];
        // Not a candidate for swapping: give the swap slot back if swap is filling up
        // (or the page is mlocked: it will not be swapped) and no page table still
        // points at it.
        if f.test(pg::SWAPCACHE)
            && !f.test(pg::WRITEBACK)
            && (self.vm_swap_full() || f.test(pg::MLOCKED))
            && self.anon_pte_maps(pfn)
        {
            self.folio_free_swap(pfn);
        }
        // An mlocked page is not activated: it goes to the unevictable list.
        if f.test(pg::MLOCKED) {
            return;
        }
        self.frames[pfn as usize].set(pg::ACTIVE);
        let memcg = f.memcg as usize;
        self.count_memcg(memcg, Ev::Pgactivate, 1);
    }

    /// True if the anon page's PTE is present and points at it.
    fn anon_pte_maps(&self, pfn: Pfn) -> bool {
        anon_pte_maps_in(&self.frames, &self.spaces, pfn)
    }

    /// One page through `shrink_folio_list` (inlined: the batch's hot loop).
    #[inline(always)]
    fn reclaim_one(
        &mut self,
        pfn: Pfn,
        sc: &mut ScanControl,
        pass: Pass,
        stat: &mut ReclaimStat,
    ) -> Fate {
        let Pass {
            target_memcg,
            ignore_references,
            kswapd,
            demote,
        } = pass;
        let f = self.frames[pfn as usize];
        if f.test(pg::ORPHAN) {
            return Fate::Keep;
        }
        // folio_trylock fails on a page cache page still being read in.
        if !f.test(pg::SWAPBACKED) && self.folio_locked_for_read(pfn) {
            return Fate::Keep;
        }
        if !self.folio_evictable(pfn) {
            return Fate::Activate;
        }
        let file = f.is_file_lru();
        // Dirty/writeback bookkeeping, file pages only: anon is written by reclaim.
        if file {
            let dirty = f.test(pg::DIRTY);
            let writeback = f.test(pg::WRITEBACK);
            if dirty || writeback {
                stat.nr_dirty += 1;
            }
            if dirty && !writeback {
                stat.nr_unqueued_dirty += 1;
            }
            if writeback && f.test(pg::RECLAIM) {
                stat.nr_congested += 1;
            }
        }
        if f.test(pg::WRITEBACK) {
            // Case 1: kswapd meets a page it already tagged, on a node flagged as
            // stuck in writeback: count it and move on.
            if kswapd && f.test(pg::RECLAIM) && self.kswapd[sc.nid].pgdat_writeback {
                stat.nr_immediate += 1;
                return Fate::Activate;
            }
            // Case 2: tag it for immediate reclaim when the I/O ends.
            self.frames[pfn as usize].set(pg::RECLAIM);
            stat.nr_writeback += 1;
            return Fate::Activate;
        }
        let references = if ignore_references {
            FolioRef::Reclaim
        } else {
            self.folio_check_references(pfn)
        };
        match references {
            FolioRef::Activate => return Fate::Activate,
            FolioRef::Keep => {
                stat.nr_ref_keep += 1;
                return Fate::Keep;
            }
            FolioRef::Reclaim | FolioRef::ReclaimClean => {}
        }
        // Before reclaiming it, try to move it to a slower tier.
        if demote {
            return Fate::Demote;
        }
        // Anon page without a swap slot: add_to_swap.
        if !file && !f.test(pg::SWAPCACHE) && !self.add_to_swap(pfn) {
            return Fate::Activate;
        }
        // try_to_unmap: the PTE's dirty bit moves to the page.
        if self.folio_mapped(pfn) {
            self.try_to_unmap(pfn);
        }
        let f = self.frames[pfn as usize];
        if f.test(pg::DIRTY) {
            if file && (!kswapd || !f.test(pg::RECLAIM) || !self.kswapd[sc.nid].pgdat_dirty) {
                // Only kswapd writes file pages, and only on a second encounter while
                // the node is flagged dirty; otherwise reclaim it when written back.
                self.count(Ev::NrVmscanImmediateReclaim, 1);
                self.frames[pfn as usize].set(pg::RECLAIM);
                return Fate::Activate;
            }
            if references == FolioRef::ReclaimClean || !sc.may_writepage {
                return Fate::Keep;
            }
            self.try_to_unmap_flush_dirty();
            match self.pageout(pfn) {
                PageOut::Keep => return Fate::Keep,
                PageOut::Activate => return Fate::Activate,
                PageOut::Async => {
                    stat.nr_pageout += 1;
                    return Fate::Keep;
                }
                PageOut::Done => stat.nr_pageout += 1,
            }
        }
        // __remove_mapping: leave a shadow entry, drop the page.
        let shadow = self.workingset_eviction(pfn, target_memcg);
        self.remove_mapping(pfn, shadow);
        self.free_reclaimed_page(pfn);
        Fate::Freed
    }

    /// `try_to_unmap`: replace the PTE (anon: with the swap entry; file: drop it),
    /// reached through an rmap walk.
    fn try_to_unmap(&mut self, pfn: Pfn) {
        self.charge(self.cfg.costs.rmap_walk_ns);
        let f = self.frames[pfn as usize];
        let s = &mut self.spaces[f.mapping as usize];
        let e = s.pte(f.index);
        let dirty = e & pte::DIRTY != 0;
        match s.kind {
            SpaceKind::Anon => {
                *s.pte_mut(f.index) = pte::swap(f.swap);
                s.nr_present -= 1;
                s.nr_swap += 1;
                if let Some(sw) = self.swap.as_mut() {
                    sw.mark_swapcache(f.swap, pfn);
                }
            }
            SpaceKind::File => {
                *s.pte_mut(f.index) = e & !(pte::YOUNG | pte::DIRTY);
                if self.frames[pfn as usize].test_clear(pg::MAPPED) {
                    self.mod_page_state(pfn, PageState::FileMapped, -1);
                }
            }
        }
        if dirty {
            self.frames[pfn as usize].set(pg::DIRTY);
        }
        // TTU_BATCH_FLUSH: the TLBs of the mm's CPUs, at the batch's end.
        let mm = self.spaces[f.mapping as usize].mm();
        self.tlb_unmap_pending(mm, dirty);
    }

    /// `__remove_mapping`: the page leaves its page cache or swap cache, a shadow entry
    /// taking its place. Anon pages keep their swap slot (the PTE points at it).
    fn remove_mapping(&mut self, pfn: Pfn, shadow: u64) {
        let f = self.frames[pfn as usize];
        if f.is_file_lru() {
            let s = &mut self.spaces[f.mapping as usize];
            *s.pte_mut(f.index) = pte::shadow(shadow);
            s.nr_present -= 1;
            if s.nr_present == 0 {
                self.inode_mapping_shrunk(f.mapping);
            }
        } else if let Some(sw) = self.swap.as_mut() {
            sw.set_shadow(f.swap, shadow);
        }
    }

    /// Does `shrink_node`'s work up to `budget_ns` of charged CPU; true when finished.
    pub fn shrink_node_step(
        &mut self,
        ns: &mut NodeScan,
        sc: &mut ScanControl,
        budget_ns: u64,
    ) -> bool {
        if let Some(mut gs) = ns.gen_node.take() {
            if !self.lru_gen_shrink_node_step(&mut gs, sc, budget_ns) {
                ns.gen_node = Some(gs);
                return false;
            }
            return true;
        }
        loop {
            if let Some(mut ls) = ns.lruvec.take() {
                if !self.shrink_lruvec_step(&mut ls, sc, budget_ns) {
                    ns.lruvec = Some(ls);
                    return false;
                }
                self.shrink_slab_after_lruvec(self.lruvec_memcg(ls.lv), sc);
            }
            if let Some(mut w) = ns.gen_lruvec.take() {
                match self.lru_gen_lruvec_step(&mut w, sc, budget_ns) {
                    None => {
                        ns.gen_lruvec = Some(w);
                        return false;
                    }
                    // lru_gen_shrink_lruvec: a memcg that had to age goes young.
                    Some(true) => {
                        self.lru_gen_rotate_memcg(w.lv, super::lru_gen::MemcgLruOp::Young)
                    }
                    Some(false) => {}
                }
                self.shrink_slab_after_lruvec(self.lruvec_memcg(w.lv), sc);
            }
            let Some(memcg) = ns.memcgs.pop() else {
                break;
            };
            // shrink_node_memcgs: protection first (parents come before children).
            self.memcg
                .counters
                .calculate_protection(sc.target, memcg, self.recursiveprot);
            let (below_min, below_low) = self.mem_cgroup_below(sc.target, memcg);
            if below_min {
                continue;
            }
            if below_low {
                if !sc.memcg_low_reclaim {
                    sc.memcg_low_skipped = true;
                    continue;
                }
                self.memcg.cgs[memcg].events.low += 1;
            }
            let lv = self.mem_cgroup_lruvec(memcg, sc.nid);
            if self.lru_gen_enabled() {
                ns.gen_lruvec = Some(self.lru_gen_lruvec_begin(lv, sc));
            } else {
                ns.lruvec = Some(self.shrink_lruvec_begin(lv, sc));
            }
        }
        self.shrink_node_end(ns, sc);
        true
    }

    /// `shrink_node`, first half: zero the tallies, `prepare_scan_control`.
    pub fn shrink_node_begin(&mut self, sc: &mut ScanControl) -> NodeScan {
        sc.nr = ReclaimTallies::default();
        // MGLRU with the memcg LRU: global reclaim is `lru_gen_shrink_node`, none of
        // the classic per-node bookkeeping.
        if self.lru_gen_enabled()
            && sc.target == 0
            && self.cfg.lru_gen.memcg_reclaim == super::lru_gen::MemcgReclaim::MemcgLru
        {
            return NodeScan {
                lruvec: None,
                gen_lruvec: None,
                gen_node: Some(self.lru_gen_shrink_node_begin(sc)),
                nr_reclaimed_before: sc.nr_reclaimed,
                memcgs: Vec::new(),
            };
        }
        let ns = NodeScan {
            lruvec: None,
            gen_lruvec: None,
            gen_node: None,
            nr_reclaimed_before: sc.nr_reclaimed,
            // Popped from the end: reversed pre-order.
            memcgs: self.memcg.subtree(sc.target).into_iter().rev().collect(),
        };
        self.prepare_scan_control(sc);
        ns
    }

    /// `shrink_node`, second half: node flags from the tallies, progress bookkeeping.
    fn shrink_node_end(&mut self, ns: &NodeScan, sc: &mut ScanControl) {
        let reclaimed = sc.nr_reclaimed - ns.nr_reclaimed_before;
        let kswapd = self.is_kswapd();
        let legacy = self.throttle_mode == ReclaimThrottle::CongestionWait;
        let nid = sc.nid;
        if kswapd {
            // The inactive tail is all under writeback, or all dirty and unqueued.
            if sc.nr.writeback > 0 && sc.nr.writeback == sc.nr.taken {
                self.kswapd[nid].pgdat_writeback = true;
            }
            if sc.nr.unqueued_dirty > 0 && sc.nr.unqueued_dirty == sc.nr.file_taken {
                self.kswapd[nid].pgdat_dirty = true;
            }
            // Pages tagged for immediate reclaim came round again still under
            // writeback: the LRU cycles faster than the I/O completes.
            if sc.nr.immediate > 0 {
                if legacy {
                    self.congestion_wait();
                } else {
                    self.reclaim_throttle(nid, Sleep::Writeback);
                }
            }
        }
        // Every dirty page met was already under writeback and tagged: congested.
        let cgroup_reclaim = sc.target != 0;
        let target = self.mem_cgroup_lruvec(sc.target, nid);
        if (kswapd || cgroup_reclaim) && sc.nr.dirty > 0 && sc.nr.dirty == sc.nr.congested {
            let lv = &mut self.lruvecs[target];
            if cgroup_reclaim {
                lv.cgroup_congested = true;
            }
            if kswapd {
                lv.node_congested = true;
            }
        }
        let lv = &self.lruvecs[target];
        if !kswapd
            && matches!(self.current, Current::Task(_))
            && (lv.node_congested || lv.cgroup_congested)
        {
            match self.throttle_mode {
                ReclaimThrottle::CongestionWait => self.wait_iff_congested(),
                ReclaimThrottle::Throttle => self.reclaim_throttle(nid, Sleep::Writeback),
                ReclaimThrottle::ThrottleCurrent => self.reclaim_throttle(nid, Sleep::Congested),
            }
        }
        if reclaimed > 0 {
            // Any progress revives a node kswapd had given up on.
            self.kswapd[nid].failures = 0;
        } else if sc.cache_trim_mode {
            sc.cache_trim_mode_failed = true;
        }
    }

    /// `shrink_node` run to completion (direct reclaim), pass after pass while
    /// `should_continue_reclaim` (the classic LRU; MGLRU's global reclaim returns
    /// after one, as `lru_gen_shrink_node` does).
    pub fn shrink_node(&mut self, sc: &mut ScanControl) {
        loop {
            let before = sc.nr_reclaimed;
            let mut ns = self.shrink_node_begin(sc);
            self.shrink_node_step(&mut ns, sc, u64::MAX);
            if self.blocked_until.is_some()
                || (self.lru_gen_enabled() && sc.target == 0)
                || !self.should_continue_reclaim(sc.nr_reclaimed - before, sc)
            {
                break;
            }
        }
    }

    /// `in_reclaim_compaction`: reclaim for a high order that compaction will finish.
    fn in_reclaim_compaction(sc: &ScanControl) -> bool {
        sc.order > 0
            && (sc.order > super::page_alloc::PAGE_ALLOC_COSTLY_ORDER
                || sc.priority < DEF_PRIORITY - 2)
    }

    /// `should_continue_reclaim` (kernel-reference §2.16): in reclaim/compaction mode,
    /// keep reclaiming while the pass freed something, no zone could allocate the
    /// order or be compacted for it yet, and the inactive lists hold more than
    /// `compact_gap`.
    fn should_continue_reclaim(&self, nr_reclaimed: u64, sc: &ScanControl) -> bool {
        if !Self::in_reclaim_compaction(sc) || nr_reclaimed == 0 {
            return false;
        }
        for zi in self.node_zones(sc.nid).take(sc.reclaim_idx + 1) {
            let z = &self.zones[zi];
            if !z.is_managed() {
                continue;
            }
            let free = self.zone_page_state_free(zi);
            if zone_watermark_ok(
                z,
                sc.order,
                z.wmark(WMARK_MIN),
                sc.reclaim_idx,
                AllocFlags::default(),
                free,
            ) || super::compaction::compaction_suitable(
                z,
                sc.order,
                sc.reclaim_idx,
                self.cfg.extfrag_threshold,
                free,
            ) {
                return false;
            }
        }
        let mut inactive = self.node_lru_pages(sc.nid, lru::INACTIVE_FILE);
        if self.can_reclaim_anon_pages(sc.nid) {
            inactive += self.node_lru_pages(sc.nid, lru::INACTIVE_ANON);
        }
        inactive > super::compaction::compact_gap(sc.order)
    }

    /// `compaction_ready` (shrink_zones, costly orders): a zone of node `sc.nid` where
    /// compaction can go ahead with room to spare, so direct reclaim need not.
    fn compaction_ready(&self, sc: &ScanControl) -> bool {
        self.node_zones(sc.nid).take(sc.reclaim_idx + 1).any(|zi| {
            let z = &self.zones[zi];
            let free = self.zone_page_state_free(zi);
            z.is_managed()
                && (zone_watermark_ok(
                    z,
                    sc.order,
                    z.wmark(WMARK_MIN),
                    sc.reclaim_idx,
                    AllocFlags::default(),
                    free,
                ) || (super::compaction::compaction_suitable(
                    z,
                    sc.order,
                    sc.reclaim_idx,
                    self.cfg.extfrag_threshold,
                    free,
                ) && zone_watermark_ok(
                    z,
                    0,
                    z.wmark(WMARK_HIGH) + super::compaction::compact_gap(sc.order),
                    sc.reclaim_idx,
                    AllocFlags::default(),
                    self.zone_free_safe(zi),
                )))
        })
    }

    /// The nodes `shrink_zones` visits, in its order: those of the zonelist (the
    /// allocation's preferred node's, or the running CPU's node's for a memcg limit)
    /// with a zone at or below `reclaim_idx`, within the allocation's nodemask, each
    /// once (`zone->zone_pgdat == last_pgdat`).
    pub fn shrink_zones_nodes(&self, sc: &ScanControl) -> Vec<usize> {
        if self.nr_nodes() == 1 {
            return vec![0];
        }
        let (nid, nodemask) = match self.alloc_ctx {
            Some(ctx) if sc.target == 0 => ctx,
            _ => (self.numa_node_id(), super::mempolicy::NODE_MASK_ALL),
        };
        let mut nodes: Vec<usize> = Vec::new();
        for zi in self.zonelist_zones(nid, nodemask, sc.reclaim_idx) {
            let node = self.zones[zi].node;
            if nodes.last() != Some(&node) {
                nodes.push(node);
            }
        }
        nodes
    }

    /// `shrink_zones`: `shrink_node` on each node of `nodes`, skipping (for global
    /// reclaim of a costly order) one whose compaction is ready; then
    /// `consider_reclaim_throttle` on the first node shrunk. Returns whether some
    /// node's compaction was ready (`sc->compaction_ready`). Stops at a sleep.
    fn shrink_zones(&mut self, nodes: &[usize], sc: &mut ScanControl) -> bool {
        let mut compaction_ready = false;
        let mut first = None;
        for &nid in nodes {
            sc.nid = nid;
            if sc.target == 0
                && sc.order > super::page_alloc::PAGE_ALLOC_COSTLY_ORDER
                && self.compaction_ready(sc)
            {
                compaction_ready = true;
                continue;
            }
            first.get_or_insert(nid);
            self.shrink_node(sc);
            if self.blocked_until.is_some() {
                return compaction_ready;
            }
        }
        if let Some(nid) = first {
            sc.nid = nid;
            self.consider_reclaim_throttle(sc);
        }
        compaction_ready
    }

    /// The end of `do_try_to_free_pages`'s priority loop on `nodes`: the refault
    /// snapshots, and a memcg's LRUVEC_CGROUP_CONGESTED cleared.
    fn finish_reclaim_nodes(&mut self, nodes: &[usize], sc: &ScanControl) {
        for &nid in nodes {
            self.snapshot_refaults(sc.target, nid);
            if sc.target != 0 {
                let lv = self.mem_cgroup_lruvec(sc.target, nid);
                self.lruvecs[lv].cgroup_congested = false;
            }
        }
    }

    /// `do_try_to_free_pages` (kernel-reference §2.3): the priority loop over the
    /// zonelist's nodes, then the retries that precede OOM.
    fn do_try_to_free_pages(&mut self, sc: &mut ScanControl) -> u64 {
        let initial_priority = sc.priority;
        let nodes = self.shrink_zones_nodes(sc);
        loop {
            // allocstall_<zone>, counted per entry (and per retry) of global reclaim.
            if sc.target == 0 {
                self.count(
                    if sc.reclaim_idx == super::zone::ZONE_DMA32 {
                        Ev::AllocstallDma32
                    } else {
                        Ev::AllocstallNormal
                    },
                    1,
                );
            }
            loop {
                sc.nr_scanned = 0;
                let compaction_ready = self.shrink_zones(&nodes, sc);
                if self.blocked_until.is_some() {
                    // Sleeping (the allocation is retried after it): report what the
                    // pass got so far.
                    self.finish_reclaim_nodes(&nodes, sc);
                    return sc.nr_reclaimed;
                }
                if compaction_ready {
                    // A costly request whose compaction is ready needs no more
                    // reclaim: report progress (1) so the allocator compacts.
                    self.finish_reclaim_nodes(&nodes, sc);
                    return sc.nr_reclaimed.max(1);
                }
                if sc.nr_reclaimed >= sc.nr_to_reclaim {
                    break;
                }
                if sc.priority < DEF_PRIORITY - 2 {
                    sc.may_writepage = true;
                }
                sc.priority -= 1;
                if sc.priority < 0 {
                    break;
                }
            }
            self.finish_reclaim_nodes(&nodes, sc);
            if sc.nr_reclaimed > 0 {
                return sc.nr_reclaimed;
            }
            if !sc.memcg_full_walk {
                sc.priority = initial_priority;
                sc.memcg_full_walk = true;
                continue;
            }
            if sc.skipped_deactivate {
                sc.priority = initial_priority;
                sc.force_deactivate = true;
                sc.skipped_deactivate = false;
                continue;
            }
            // Untapped memory.low reserves: retry, reclaiming them too.
            if sc.memcg_low_skipped {
                sc.priority = initial_priority;
                sc.force_deactivate = false;
                sc.memcg_low_reclaim = true;
                sc.memcg_low_skipped = false;
                continue;
            }
            return 0;
        }
    }

    /// `try_to_free_pages`: direct reclaim by an allocating task. Its CPU time is a
    /// memory stall (PSI) of that task.
    pub fn try_to_free_pages(&mut self, order: usize, gfp: Gfp) -> u64 {
        let mut sc = ScanControl::new(SWAP_CLUSTER_MAX, gfp.highest_zoneidx, order);
        let nodes = self.shrink_zones_nodes(&sc);
        if self.throttle_direct_reclaim(&nodes) {
            return 0;
        }
        let cpu_before = self.cpu_ns;
        trace_event!(
            self,
            Tp::DirectReclaimBegin,
            "order={order} gfp_flags=GFP_HIGHUSER_MOVABLE"
        );
        self.in_reclaim = true;
        let got = self.do_try_to_free_pages(&mut sc);
        self.in_reclaim = false;
        trace_event!(self, Tp::DirectReclaimEnd, "nr_reclaimed={got}");
        debug_assert!(matches!(self.current, Current::Task(_)));
        self.stall_ns += self.cpu_ns - cpu_before;
        self.direct_reclaim_ns += self.cpu_ns - cpu_before;
        got
    }

    /// `try_to_free_mem_cgroup_pages`: reclaim from a memcg's subtree (limit reclaim
    /// by a charging task, or memory.reclaim's `proactive` reclaim:
    /// MEMCG_RECLAIM_PROACTIVE). Not counted in /proc/vmstat's scan counters or
    /// allocstall; memory.stat counts it.
    pub fn try_to_free_mem_cgroup_pages(
        &mut self,
        memcg: usize,
        nr_pages: u64,
        proactive: bool,
    ) -> u64 {
        let mut sc = ScanControl::new(nr_pages.max(SWAP_CLUSTER_MAX), super::zone::ZONE_NORMAL, 0);
        sc.target = memcg;
        sc.proactive = proactive;
        let cpu_before = self.cpu_ns;
        let was = self.in_reclaim;
        self.in_reclaim = true;
        let got = self.do_try_to_free_pages(&mut sc);
        self.in_reclaim = was;
        self.stall_ns += self.cpu_ns - cpu_before;
        self.direct_reclaim_ns += self.cpu_ns - cpu_before;
        got
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fate {
    Freed,
    Keep,
    Activate,
    /// Queued for `demote_folio_list`.
    Demote,
}

/// What a `shrink_folio_list` pass decides by: the reclaim's target memcg (for the
/// shadow entries), whether references are ignored, whether kswapd runs it, whether
/// cold folios go to the demotion list (`do_demote_pass`).
#[derive(Debug, Clone, Copy)]
struct Pass {
    target_memcg: usize,
    ignore_references: bool,
    kswapd: bool,
    demote: bool,
}

/// `pageout()` results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageOut {
    /// Could not write (e.g. swap device full): keep.
    Keep,
    Activate,
    /// Written synchronously (zram): the page is clean, free it now.
    Done,
    /// I/O submitted; the page is under writeback and will be rotated when it ends.
    Async,
}

/// `folio_mapped` over the frame table and the spaces (for loops that hold the
/// frames mutably).
fn folio_mapped_in(frames: &[super::page::Frame], spaces: &[super::Space], pfn: Pfn) -> bool {
    if frames[pfn as usize].test(pg::SWAPBACKED) {
        anon_pte_maps_in(frames, spaces, pfn)
    } else {
        frames[pfn as usize].test(pg::MAPPED)
    }
}

/// True if the anon page's PTE is present and points at it.
fn anon_pte_maps_in(frames: &[super::page::Frame], spaces: &[super::Space], pfn: Pfn) -> bool {
    let f = &frames[pfn as usize];
    let s = &spaces[f.mapping as usize];
    let e = s.pte(f.index);
    !s.dead && pte::is_present(e) && pte::pfn(e) == pfn
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page_alloc::test_pages::{add_pages, add_pages_of};
    use crate::test_util::{add_memcgs, add_process, add_zram, task_mm};
    use crate::Config;

    /// `move_folios_to_lru` is `lruvec_add_folio` page by page: the same lists in the
    /// same order and the same sizes everywhere (node, lruvecs per zone, hierarchical,
    /// pending rstat updates), for a batch mixing memcgs, anon and file, active,
    /// inactive and unevictable pages.
    #[test]
    fn move_folios_to_lru_is_adding_each_page() {
        let mut cfg = Config::new(256 << 8);
        add_memcgs(&mut cfg, &["a", "a/b"]);
        add_process(&mut cfg, Some("a/b"));
        add_process(&mut cfg, None);
        let build = || {
            let mut mm = task_mm(cfg.clone());
            let mut batch = Vec::new();
            for (owner, kind, flags) in [
                (Some(0), SpaceKind::Anon, 0),
                (None, SpaceKind::File, pg::ACTIVE),
                (Some(0), SpaceKind::File, 0),
                (Some(1), SpaceKind::Anon, pg::ACTIVE),
                (Some(0), SpaceKind::Anon, pg::UNEVICTABLE),
            ] {
                let (_, pfns) = add_pages_of(&mut mm, kind, 40, flags, owner);
                batch.extend(pfns.into_iter().step_by(3));
            }
            // Interleave the memcgs and lists, then take them off as isolation does.
            batch.sort_by_key(|&p| (p * 7919) % 1009);
            for &pfn in &batch {
                mm.lruvec_del_folio(pfn);
                mm.frames[pfn as usize].list = on::ISOLATED;
            }
            (mm, batch)
        };
        let ((mut a, batch), (mut b, _)) = (build(), build());
        a.move_folios_to_lru(&batch);
        for &pfn in &batch {
            b.lruvec_add_folio(pfn);
        }
        assert_eq!(a.zones[0].lru_pages, b.zones[0].lru_pages);
        assert_eq!(a.zones[1].lru_pages, b.zones[1].lru_pages);
        assert_eq!(a.lruvecs.len(), b.lruvecs.len());
        for (m, (x, y)) in a.lruvecs.iter().zip(&b.lruvecs).enumerate() {
            assert_eq!(x.zone_size, y.zone_size, "memcg {m}");
            assert_eq!(x.hier, y.hier, "memcg {m}");
            assert_eq!(x.stats_updates, y.stats_updates, "memcg {m}");
            for l in 0..lru::NR_LRU_LISTS {
                let (px, py): (Vec<Pfn>, Vec<Pfn>) =
                    (x.lists[l].iter().collect(), y.lists[l].iter().collect());
                assert_eq!(px, py, "memcg {m} list {l}");
            }
        }
        assert!(
            a.lruvecs
                .iter()
                .filter(|v| v.hier.iter().sum::<u64>() > 0)
                .count()
                >= 3
        );
    }

    fn input(swappiness: u64, priority: i32, sizes: [u64; 4]) -> ScanCountInput {
        ScanCountInput {
            swappiness,
            may_swap: true,
            can_reclaim_anon: true,
            priority,
            file_is_tiny: false,
            cache_trim_mode: false,
            anon_cost: 0,
            file_cost: 0,
            cgroup_reclaim: false,
            sizes,
        }
    }

    #[test]
    fn scan_count_swappiness_60_no_cost_history() {
        // sizes (IA, AA, IF, AF) = 409600 each, priority 12: scan = 409600 >> 12 = 100.
        // Costs 0: total = 0, acost = fcost = 0, total2 = 0.
        // ap = 60·(0+1)/(0+1) = 60; fp = 140·1/1 = 140; denominator 200.
        // anon lists: 100·60/200 = 30; file lists: 100·140/200 = 70.
        let (nr, bal) = get_scan_count(&input(60, 12, [409_600; 4]));
        assert_eq!(bal, ScanBalance::Fract);
        assert_eq!(nr, [30, 30, 70, 70]);
    }

    #[test]
    fn scan_count_costs_shift_pressure() {
        // anon_cost 3000, file_cost 1000: total = 4000; acost = 7000; fcost = 5000;
        // total2 = 12000. swappiness 100:
        // ap = 100·12001/7001 = 171 (1200100/7001 = 171.4); fp = 100·12001/5001 = 239.
        // denominator 410. Sizes 1 << 20 at priority 10: scan = 1024.
        // anon: 1024·171/410 = 427 (175104/410 = 427.08); file: 1024·239/410 = 596.
        let mut i = input(100, 10, [1 << 20; 4]);
        i.anon_cost = 3000;
        i.file_cost = 1000;
        let (nr, _) = get_scan_count(&i);
        assert_eq!(nr, [427, 427, 596, 596]);
    }

    #[test]
    fn scan_count_modes() {
        // swappiness 0 (global reclaim): ap = 0, so anon gets nothing under SCAN_FRACT.
        let (nr, bal) = get_scan_count(&input(0, 12, [409_600; 4]));
        assert_eq!(bal, ScanBalance::Fract);
        assert_eq!(nr, [0, 0, 100, 100]);
        // Priority 0 with swappiness > 0: SCAN_EQUAL, whole lists.
        let (nr, bal) = get_scan_count(&input(60, 0, [5, 6, 7, 8]));
        assert_eq!(bal, ScanBalance::Equal);
        assert_eq!(nr, [5, 6, 7, 8]);
        // Priority 0 with swappiness 0 is *not* SCAN_EQUAL.
        let (_, bal) = get_scan_count(&input(0, 0, [5, 6, 7, 8]));
        assert_eq!(bal, ScanBalance::Fract);
        // No swap: file only.
        let mut i = input(60, 0, [5, 6, 7, 8]);
        i.can_reclaim_anon = false;
        assert_eq!(get_scan_count(&i), ([0, 0, 7, 8], ScanBalance::File));
        // file_is_tiny: anon only; cache_trim_mode: file only.
        let mut i = input(60, 1, [10, 20, 30, 40]);
        i.file_is_tiny = true;
        assert_eq!(get_scan_count(&i), ([5, 10, 0, 0], ScanBalance::Anon));
        let mut i = input(60, 1, [10, 20, 30, 40]);
        i.cache_trim_mode = true;
        assert_eq!(get_scan_count(&i), ([0, 0, 15, 20], ScanBalance::File));
    }

    #[test]
    fn protection_scales_the_scan() {
        use ProtectionMode::*;
        let size = 1_000_000;
        // Proportional: usage 2× low (low 100k, usage 200k): protection 100k,
        // cgroup_size 200k: scan = 1e6 − 1e6·100000/200001 = 1e6 − 499997 = 500003.
        assert_eq!(
            protected_scan(Proportional, size, 200_000, 0, 100_000, false),
            (500_003, true)
        );
        // Exactly at its protection: 1e6 − 1e6·100000/100001 = 1e6 − 999990 = 10, then
        // the SWAP_CLUSTER_MAX floor: 32.
        assert_eq!(
            protected_scan(Proportional, size, 100_000, 0, 100_000, false),
            (32, true)
        );
        // The low-reclaim pass uses min (0 here): the whole list.
        assert_eq!(
            protected_scan(Proportional, size, 100_000, 0, 100_000, true),
            (1_000_000, false)
        );
        // min 50k, low 100k, low pass, usage 150k: 1e6 − 1e6·50000/150001 = 1e6 − 333331.
        assert_eq!(
            protected_scan(Proportional, size, 150_000, 50_000, 100_000, true),
            (666_669, false)
        );
        // Seed: 130% of protection → 1e6·130000/100000 − 1e6 = 300000 (30%); the
        // low-reclaim pass at 40% utilisation → 400000 (40%).
        assert_eq!(
            protected_scan(Seed, size, 130_000, 0, 100_000, false).0,
            300_000
        );
        assert_eq!(
            protected_scan(Seed, size, 40_000, 0, 100_000, true).0,
            400_000
        );
        // Seed clamps: at or below protection → 32; way over → the list size.
        assert_eq!(protected_scan(Seed, size, 100_000, 0, 100_000, false).0, 32);
        assert_eq!(
            protected_scan(Seed, size, 900_000, 0, 100_000, false).0,
            size
        );
        // Cliff: anything not skipped is scanned in full.
        assert_eq!(
            protected_scan(Cliff, size, 100_001, 0, 100_000, false),
            (size, false)
        );
        // No protection: every mode scans the list.
        assert_eq!(
            protected_scan(Proportional, size, 5, 0, 0, false),
            (size, false)
        );
    }

    #[test]
    fn inactive_ratio_table() {
        // kernel-reference §2.11. Below 1 GiB the ratio is 1: inactive may be half.
        // 100 MB of anon = 25600 pages; 12800/12800 is not low, 12799/12801 is.
        assert!(!inactive_is_low(12_800, 12_800));
        assert!(inactive_is_low(12_799, 12_801));
        // 1 GiB = 262144 pages → gb = 1, ratio = int_sqrt(10) = 3: inactive 25%.
        // 65536·3 = 196608 < 196608? no → not low at exactly 25%.
        assert!(!inactive_is_low(65_536, 196_608));
        assert!(inactive_is_low(65_535, 196_609));
        // 10 GiB: gb = 10, ratio = int_sqrt(100) = 10: inactive ~9%.
        // 2621440 pages; inactive 238313 (·10 = 2383130) vs active 2383127 → not low.
        assert!(!inactive_is_low(238_313, 2_383_127));
        assert!(inactive_is_low(238_312, 2_383_128));
        // 100 GiB: ratio int_sqrt(1000) = 31.
        let total = 100u64 << 18;
        let inactive = total / 32; // 819200; ·31 = 25395200 vs active 25395200 → not low
        assert!(!inactive_is_low(inactive, total - inactive));
        assert!(inactive_is_low(inactive - 1, total - inactive + 1));
    }

    /// A 64 MiB machine with zram swap (classic LRU), one task running, `rmap_walk_ns`.
    fn classic_mm(rmap_walk_ns: u64) -> Mm {
        let mut cfg = crate::test_util::config(64);
        add_zram(&mut cfg, 64);
        cfg.costs.rmap_walk_ns = rmap_walk_ns;
        task_mm(cfg)
    }

    /// With the inactive targets spent and file deactivation off, shrink_lruvec's
    /// remaining rounds only skip the active lists: the loop ends having scanned,
    /// moved, reclaimed and charged nothing, with only `skipped_deactivate` set,
    /// however large the active target (5000: the kernel walks 157 such rounds). With
    /// file deactivation on, the same target deactivates the whole active file list.
    #[test]
    fn shrink_lruvec_rounds_that_only_skip_change_only_the_flag() {
        for deactivate in [0, DEACTIVATE_FILE] {
            let mut mm = classic_mm(1);
            add_pages(&mut mm, SpaceKind::File, 100, pg::ACTIVE);
            assert_eq!(mm.lruvecs[0].lists[lru::ACTIVE_FILE].len, 100);
            let mut sc = ScanControl::new(u64::MAX, 1, 0);
            sc.may_deactivate = deactivate;
            let mut s = LruvecScan {
                lv: 0,
                nr: [0, 0, 0, 5000],
                targets: [0, 0, 0, 5000],
                nr_reclaimed: 0,
                proportional_reclaim: false,
            };
            let cpu_before = mm.cpu_ns;
            assert!(mm.shrink_lruvec_step(&mut s, &mut sc, u64::MAX));
            assert_eq!(s.nr, [0; 4]);
            assert_eq!(sc.nr_reclaimed, 0);
            let active = mm.lruvecs[0].lists[lru::ACTIVE_FILE].len;
            let inactive = mm.lruvecs[0].lists[lru::INACTIVE_FILE].len;
            if deactivate == 0 {
                assert!(sc.skipped_deactivate);
                assert_eq!((active, inactive), (100, 0));
                assert_eq!(mm.cpu_ns, cpu_before, "nothing to charge");
            } else {
                assert!(!sc.skipped_deactivate);
                assert_eq!((active, inactive), (0, 100));
            }
        }
    }

    /// CPU charged to reclaim `n` anon pages and then `n` unmapped file pages through
    /// shrink_folio_list; (anon, file, pages freed).
    fn reclaim_cost(rmap_walk_ns: u64, n: u32) -> (u64, u64, u64) {
        let mut mm = classic_mm(rmap_walk_ns);
        add_pages(&mut mm, SpaceKind::Anon, n, 0);
        add_pages(&mut mm, SpaceKind::File, n, 0);
        let mut sc = ScanControl::new(u64::MAX, 1, 0);
        let mut freed = 0;
        let mut cost = [0u64; 2];
        for (i, l) in [lru::INACTIVE_ANON, lru::INACTIVE_FILE]
            .into_iter()
            .enumerate()
        {
            let (taken, _) = mm.isolate_lru_folios(n as u64, l, 0, &sc);
            assert_eq!(taken.len() as u32, n, "list {l}");
            let before = mm.cpu_ns;
            let (reclaimed, _, kept) = mm.shrink_folio_list(taken, &mut sc, 0, false);
            cost[i] = mm.cpu_ns - before;
            assert!(kept.is_empty());
            freed += reclaimed;
        }
        (cost[0], cost[1], freed)
    }

    #[test]
    fn reclaiming_mapped_pages_costs_two_rmap_walks_each() {
        // A mapped anon page costs one rmap walk in folio_referenced (finding its PTE
        // not young) and one in try_to_unmap; unmapped page cache needs neither
        // (folio_referenced returns at mapcount 0). So raising costs.rmap_walk by
        // 1000 ns adds 2 × 1000 ns per anon page reclaimed and nothing per file page.
        let n = 16;
        let (anon_lo, file_lo, freed_lo) = reclaim_cost(1, n);
        let (anon_hi, file_hi, freed_hi) = reclaim_cost(1_001, n);
        assert_eq!((freed_lo, freed_hi), (2 * n as u64, 2 * n as u64));
        assert_eq!(anon_hi - anon_lo, 2 * 1_000 * n as u64);
        assert_eq!(file_hi, file_lo);
    }

    /// Reclaims the oldest `take` of `n` mapped file pages, every one of them accessed
    /// (young PTE), with the mapping advised `advice`: (pages freed, their indices,
    /// young PTEs left).
    fn reclaim_accessed_mapped(advice: crate::Advice, n: u32, take: u32) -> (u64, Vec<u32>, u32) {
        let mut mm = classic_mm(1);
        let (space, pfns) = add_pages(&mut mm, SpaceKind::File, n, pg::MAPPED);
        mm.madvise(space, advice);
        for i in 0..n {
            mm.spaces[space as usize].set_bits(i, pte::YOUNG);
        }
        let mut sc = ScanControl::new(u64::MAX, 1, 0);
        let (taken, _) = mm.isolate_lru_folios(take as u64, lru::INACTIVE_FILE, 0, &sc);
        let (freed, _, _kept) = mm.shrink_folio_list(taken, &mut sc, 0, false);
        let gone = (0..n)
            .filter(|&i| !pte::is_present(mm.spaces[space as usize].pte(i)))
            .collect();
        let young = pfns
            .iter()
            .enumerate()
            .filter(|&(i, _)| {
                let e = mm.spaces[space as usize].pte(i as u32);
                pte::is_present(e) && e & pte::YOUNG != 0
            })
            .count() as u32;
        (freed, gone, young)
    }

    #[test]
    fn mappings_without_recency_are_reclaimed_first_in_first_out() {
        // kernel-reference §2.10 with v6.3's vma_has_recency: folio_referenced skips
        // MADV_RANDOM / MADV_SEQUENTIAL / FMODE_NOREUSE mappings, so a young PTE does
        // not save a page; the inactive list's tail (the oldest pages: add_pages put
        // 0 first) goes, and nobody clears the young bits.
        use crate::Advice;
        for advice in [Advice::Random, Advice::Sequential, Advice::NoReuse] {
            let (freed, gone, young) = reclaim_accessed_mapped(advice, 16, 4);
            assert_eq!(freed, 4, "{advice:?}");
            assert_eq!(gone, vec![0, 1, 2, 3], "{advice:?}");
            assert_eq!(young, 12, "{advice:?}: the survivors keep their young bits");
        }
        // With recency the same pages are all referenced once: kept (PG_referenced set,
        // young bits cleared), none freed.
        let (freed, gone, young) = reclaim_accessed_mapped(Advice::Normal, 16, 4);
        assert_eq!((freed, gone, young), (0, vec![], 12));
    }

    #[test]
    fn memcg_limit_reclaim_snapshots_its_own_refaults() {
        // do_try_to_free_pages ends with snapshot_refaults(sc->target_mem_cgroup):
        // limit reclaim of memcg `app` records app's activation counts (hierarchical)
        // for its next prepare_scan_control, and leaves the root's snapshot alone.
        let mut cfg = Config::new(64 << 8);
        add_memcgs(&mut cfg, &["app"]);
        add_process(&mut cfg, Some("app"));
        let mut mm = task_mm(cfg);
        let app = mm.workload_memcg[0];
        assert_ne!(app, 0);
        add_pages_of(&mut mm, SpaceKind::File, 256, 0, Some(0));
        mm.lruvecs[app].workingset_activate = [3, 7];
        mm.lruvecs[0].workingset_activate = [5, 11];
        // Flushed, as reclaim reads them.
        mm.do_flush_stats(0);
        mm.try_to_free_mem_cgroup_pages(app, 32, false);
        assert_eq!(mm.lruvecs[app].refaults, [3, 7]);
        assert_eq!(mm.lruvecs[0].refaults, [0, 0]);
        // A later limit reclaim with no new activations: nothing to deactivate for
        // refaults' sake.
        let mut sc = ScanControl::new(32, super::super::zone::ZONE_NORMAL, 0);
        sc.target = app;
        mm.prepare_scan_control(&mut sc);
        assert_eq!(
            sc.may_deactivate & DEACTIVATE_FILE,
            0,
            "file inactive list not low"
        );
    }
}
