//! kswapd: background reclaim to the high watermark (mm/vmscan.c `kswapd`,
//! `balance_pgdat`, `kswapd_try_to_sleep`, `wakeup_kswapd`; kernel-reference §2.14).
//!
//! The kernel thread's loop is written as a state machine so the simulator can run it
//! a slice at a time: [`Mm::kswapd_run`] does up to one slice of work and says whether
//! kswapd keeps running, naps (HZ/10) or sleeps until woken.

use super::compaction::compaction_suitable;
use super::vmscan::{NodeScan, ScanControl, DEF_PRIORITY, SWAP_CLUSTER_MAX};
use super::zone::{zone_watermark_ok, AllocFlags, MAX_NR_ZONES, WMARK_HIGH, ZONE_NORMAL};
use super::{Mm, Out};
use crate::trace::Tp;
use crate::vm_event_item::Ev;

/// `MAX_RECLAIM_RETRIES`: balance_pgdat runs without progress before kswapd gives up.
pub const MAX_KSWAPD_FAILURES: u32 = 16;

#[derive(Debug, Clone, Default)]
pub enum KswapdState {
    /// On the wait queue indefinitely (after `mm_vmscan_kswapd_sleep`).
    #[default]
    Sleeping,
    /// The short nap of `kswapd_try_to_sleep`, until `until_ns`.
    Napping {
        until_ns: u64,
        alloc_order: usize,
        reclaim_order: usize,
        highest_zoneidx: usize,
    },
    /// Inside `balance_pgdat`.
    Running,
}

/// The state of one `balance_pgdat` call, kept across slices.
#[derive(Debug, Clone)]
pub struct BalanceRun {
    alloc_order: usize,
    highest_zoneidx: usize,
    sc: ScanControl,
    /// `shrink_node` in progress, with `sc.nr_reclaimed` at the start of the pass.
    pass: Option<(NodeScan, u64)>,
    restarted: bool,
    /// Pages still to reclaim for the watermark boosts (`nr_boost_reclaim`); 0 once
    /// done or dropped because the node is unbalanced.
    nr_boost_reclaim: u64,
    /// Each zone's boost when the run began (`zone_boosts`), taken off at the end.
    zone_boosts: [u64; MAX_NR_ZONES],
    /// This pass may not raise the priority: boosted reclaim stops at DEF_PRIORITY - 2.
    priority_capped: bool,
    /// v4.5's per-iteration state (`kernel.kswapd_compaction = "kswapd"`).
    v45: V45Iteration,
}

/// One priority iteration of v4.5's `balance_pgdat`: `nr_attempted` (the high
/// watermarks of the zones it reclaimed from), `pgdat_needs_compaction`, and whether a
/// zone was skipped as balanced or scanned enough (no priority raise).
#[derive(Debug, Clone, Copy, Default)]
struct V45Iteration {
    nr_attempted: u64,
    needs_compaction: bool,
    keep_priority: bool,
}

/// The per-node kswapd fields of `pg_data_t` plus the thread's own state.
#[derive(Debug, Clone, Default)]
pub struct Kswapd {
    /// `kswapd_order`: highest order requested by wakers since kswapd last read it.
    pub order: usize,
    /// `kswapd_highest_zoneidx`; `None` is the kernel's MAX_NR_ZONES ("unset").
    pub highest_zoneidx: Option<usize>,
    /// `kswapd_failures`.
    pub failures: u32,
    pub state: KswapdState,
    run: Option<BalanceRun>,
    /// PGDAT_DIRTY / PGDAT_WRITEBACK.
    pub pgdat_dirty: bool,
    pub pgdat_writeback: bool,
    /// Times kswapd was woken from sleep (for reports).
    pub wakeups: u64,
    /// How the last `balance_pgdat` ended: the order it balanced for and its final
    /// priority (0: it ran out of priorities).
    pub last_balance: Option<(usize, i32)>,
}

/// What kswapd does after a slice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KswapdNext {
    /// More work: run again as soon as a CPU is free.
    Run,
    /// Napping until this time unless woken earlier.
    NapUntil(u64),
    /// Asleep until woken.
    Sleep,
    /// Sleeping inside reclaim until this time: waiting for a free request on a full
    /// device queue (nothing cuts it short), or throttled (a throttle wake-up may).
    BlockedUntil(u64),
}

impl Mm {
    /// The node of the kswapd running now (`pgdat` of the kswapd thread).
    pub fn kswapd_nid(&self) -> usize {
        match self.current {
            super::Current::Kswapd(nid) => nid,
            _ => 0,
        }
    }

    /// `pgdat_balanced`: any eligible zone of node `nid` meets its high watermark at
    /// `order` (v4.5: [`Mm::pgdat_balanced_v45`]).
    pub fn pgdat_balanced(&self, nid: usize, order: usize, highest_zoneidx: usize) -> bool {
        if self.cfg.kswapd_compacts {
            return self.pgdat_balanced_v45(nid, order, highest_zoneidx);
        }
        let mut any_managed = false;
        for zi in self.node_zones(nid).take(highest_zoneidx + 1) {
            let z = &self.zones[zi];
            if !z.is_managed() {
                continue;
            }
            any_managed = true;
            // Memory tiering balances to PROMO: room for promotions.
            let mark = if self.cfg.numa_balancing.memory_tiering {
                crate::numa_balancing::promo_wmark_pages(z)
            } else {
                z.wmark(WMARK_HIGH)
            };
            // zone_watermark_ok_safe: exact below the drift mark.
            if zone_watermark_ok(
                z,
                order,
                mark,
                highest_zoneidx,
                AllocFlags::default(),
                self.zone_free_safe(zi),
            ) {
                return true;
            }
        }
        !any_managed
    }

    /// `wakeup_kswapd` for zone id `zone_idx` (its node's kswapd). A node kswapd need
    /// not balance may still be too fragmented for the order: a caller that cannot
    /// compact by itself wakes kcompactd.
    pub fn wakeup_kswapd(
        &mut self,
        zone_idx: usize,
        order: usize,
        highest_zoneidx: usize,
        can_direct_reclaim: bool,
    ) {
        let nid = self.zones[zone_idx].node;
        let zid = self.zones[zone_idx].idx;
        let k = &mut self.kswapd[nid];
        k.highest_zoneidx = Some(
            k.highest_zoneidx
                .map_or(highest_zoneidx, |c| c.max(highest_zoneidx)),
        );
        k.order = k.order.max(order);
        if matches!(k.state, KswapdState::Running) {
            return; // not on the wait queue: it will read the new values
        }
        // A balanced node is still worth waking for a pending watermark boost.
        if self.kswapd[nid].failures >= MAX_KSWAPD_FAILURES
            || (self.pgdat_balanced(nid, order, highest_zoneidx)
                && !self.pgdat_watermark_boosted(nid, highest_zoneidx))
        {
            if !can_direct_reclaim {
                self.wakeup_kcompactd(nid, order, highest_zoneidx);
            }
            return;
        }
        trace_event!(
            self,
            Tp::WakeupKswapd,
            "nid={nid} zid={zid} order={order} gfp_flags=GFP_HIGHUSER_MOVABLE"
        );
        self.out.push(Out::WakeKswapd {
            nid,
            at: self.clock(),
        });
    }

    /// `age_active_anon` (classic LRU): keep the anon inactive list topped up.
    fn age_active_anon(&mut self, sc: &mut ScanControl) {
        use super::page::lru;
        let root = self.mem_cgroup_lruvec(0, sc.nid);
        // can_age_anon_pages: swap, or a slower tier to demote to.
        if !self.can_reclaim_anon_pages(sc.nid)
            || !self.lruvec_inactive_is_low(root, lru::INACTIVE_ANON)
        {
            return;
        }
        for memcg in self.memcg.subtree(0) {
            let lv = self.mem_cgroup_lruvec(memcg, sc.nid);
            self.shrink_active_list(SWAP_CLUSTER_MAX, lru::ACTIVE_ANON, lv, sc);
        }
    }

    /// `pgdat_watermark_boosted`: a zone of node `nid` up to `highest_zoneidx` has a
    /// boost pending.
    fn pgdat_watermark_boosted(&self, nid: usize, highest_zoneidx: usize) -> bool {
        self.zones[self.node_zones(nid)][..=highest_zoneidx]
            .iter()
            .any(|z| z.is_managed() && z.watermark_boost > 0)
    }

    /// `prepare_kswapd_sleep`: sleep if the node is hopeless or balanced. No task may
    /// be left on `pfmemalloc_wait` when kswapd sleeps: wake them first.
    fn prepare_kswapd_sleep(&mut self, order: usize, highest_zoneidx: usize) -> bool {
        let nid = self.kswapd_nid();
        self.wake_pfmemalloc_waiters(nid);
        if self.kswapd[nid].failures >= MAX_KSWAPD_FAILURES {
            return true;
        }
        if self.pgdat_balanced(nid, order, highest_zoneidx) {
            // clear_pgdat_congested.
            self.kswapd[nid].pgdat_dirty = false;
            self.kswapd[nid].pgdat_writeback = false;
            let root = self.mem_cgroup_lruvec(0, nid);
            self.lruvecs[root].node_congested = false;
            self.lruvecs[root].cgroup_congested = false;
            return true;
        }
        false
    }

    /// `kswapd_highest_zoneidx`: the requested zone, or `prev` if unset.
    fn kswapd_highest_zoneidx(&self, prev: usize) -> usize {
        self.kswapd[self.kswapd_nid()]
            .highest_zoneidx
            .unwrap_or(prev)
    }

    /// One slice of the kswapd thread. `budget_ns` is the CPU time it may use before
    /// yielding. Called when kswapd is woken, its nap ends, or its last slice said Run.
    pub fn kswapd_run(&mut self, budget_ns: u64) -> KswapdNext {
        let deadline = self.cpu_ns + budget_ns;
        let cpu_before = self.cpu_ns;
        self.blocked_until = None;
        let next = self.kswapd_run_inner(deadline);
        // balance_pgdat runs inside psi_memstall_enter/leave.
        self.stall_ns += self.cpu_ns - cpu_before;
        match self.blocked_until.take() {
            Some(t) if next == KswapdNext::Run => KswapdNext::BlockedUntil(t),
            _ => next,
        }
    }

    fn kswapd_run_inner(&mut self, deadline: u64) -> KswapdNext {
        let nid = self.kswapd_nid();
        match self.kswapd[nid].state.clone() {
            KswapdState::Sleeping => {
                self.kswapd[nid].wakeups += 1;
                self.kswapd_start_balance(ZONE_NORMAL);
            }
            KswapdState::Napping {
                until_ns,
                reclaim_order,
                highest_zoneidx,
                ..
            } => {
                if self.now < until_ns {
                    // Woken during the nap: restore what the wakers may have reset.
                    if self.kswapd[nid].highest_zoneidx.is_none() {
                        self.kswapd[nid].highest_zoneidx = Some(highest_zoneidx);
                    }
                    self.kswapd[nid].order = self.kswapd[nid].order.max(reclaim_order);
                    self.count(Ev::KswapdLowWmarkHitQuickly, 1);
                } else if self.prepare_kswapd_sleep(reclaim_order, highest_zoneidx) {
                    // The nap ran its length and the node is still balanced. v4.5
                    // cleared the compaction skip bits here, before the full sleep.
                    if self.cfg.kswapd_compacts {
                        self.reset_isolation_suitable_node(nid);
                    }
                    self.kswapd[nid].state = KswapdState::Sleeping;
                    self.set_pgdat_percpu_threshold(nid, false);
                    trace_event!(self, Tp::KswapdSleep, "nid={nid}");
                    return KswapdNext::Sleep;
                } else {
                    self.count(Ev::KswapdHighWmarkHitQuickly, 1);
                }
                self.kswapd_start_balance(highest_zoneidx);
            }
            KswapdState::Running => {}
        }
        match self.balance_pgdat_step(deadline) {
            None => KswapdNext::Run,
            Some(reclaim_order) => {
                let run = self.kswapd[nid].run.take().unwrap();
                // clear_reclaim_active.
                let zones = self.node_zones(nid);
                for z in &mut self.zones[zones] {
                    z.reclaim_active = false;
                }
                self.kswapd[nid].last_balance = Some((reclaim_order, run.sc.priority));
                let idx = run.highest_zoneidx;
                // kswapd(): if high-order reclaim fell back to order 0, try to sleep
                // keeping the original order (for kcompactd); else re-read the requests.
                let (alloc_order, reclaim_order) = if reclaim_order < run.alloc_order {
                    (run.alloc_order, reclaim_order)
                } else {
                    (self.kswapd[nid].order, self.kswapd[nid].order)
                };
                let idx = if reclaim_order < run.alloc_order {
                    idx
                } else {
                    self.kswapd_highest_zoneidx(idx)
                };
                self.kswapd_try_to_sleep(alloc_order, reclaim_order, idx)
            }
        }
    }

    /// `kswapd_try_to_sleep`, first half: nap if balanced, else straight back to work.
    fn kswapd_try_to_sleep(
        &mut self,
        alloc_order: usize,
        reclaim_order: usize,
        idx: usize,
    ) -> KswapdNext {
        let nid = self.kswapd_nid();
        if self.prepare_kswapd_sleep(reclaim_order, idx) {
            // v4.6+: clear the skip bits a direct compaction asked to flush, and hand
            // the order kswapd was woken for to kcompactd ("wake kcompactd before
            // kswapd's short sleep").
            if !self.cfg.kswapd_compacts {
                self.reset_isolation_suitable_node(nid);
                self.wakeup_kcompactd(nid, alloc_order, idx);
            }
            let until_ns = self.now + self.cfg.jiffy_ns() * self.cfg.hz / 10;
            self.kswapd[nid].state = KswapdState::Napping {
                until_ns,
                alloc_order,
                reclaim_order,
                highest_zoneidx: idx,
            };
            return KswapdNext::NapUntil(until_ns);
        }
        self.count(Ev::KswapdHighWmarkHitQuickly, 1);
        self.kswapd_start_balance(idx);
        KswapdNext::Run
    }

    /// kswapd(): read and reset the requests, then enter `balance_pgdat`.
    fn kswapd_start_balance(&mut self, prev_idx: usize) {
        let nid = self.kswapd_nid();
        let alloc_order = self.kswapd[nid].order;
        let idx = self.kswapd_highest_zoneidx(prev_idx);
        self.kswapd[nid].order = 0;
        self.kswapd[nid].highest_zoneidx = None;
        self.kswapd[nid].state = KswapdState::Running;
        self.set_pgdat_percpu_threshold(nid, true);
        trace_event!(
            self,
            Tp::KswapdWake,
            "nid={nid} zid={idx} order={alloc_order}"
        );
        self.count(Ev::Pageoutrun, 1);
        let mut sc = ScanControl::new(0, idx, alloc_order);
        sc.nid = nid;
        sc.may_writepage = true;
        sc.may_swap = true;
        sc.may_unmap = true;
        // The boosts to reclaim for; the zones keep theirs until the run ends, so
        // allocations near the watermarks stall or reclaim meanwhile.
        let zone_boosts: [u64; MAX_NR_ZONES] = std::array::from_fn(|i| {
            let z = &self.zones[nid * MAX_NR_ZONES + i];
            if i <= idx && z.is_managed() {
                z.watermark_boost
            } else {
                0
            }
        });
        // set_reclaim_active: the per-CPU lists of the zones it balances keep fewer
        // pages until the run ends.
        let zones = self.node_zones(nid);
        for z in self.zones[zones].iter_mut().take(idx + 1) {
            z.reclaim_active = z.is_managed();
        }
        self.kswapd[nid].run = Some(BalanceRun {
            alloc_order,
            highest_zoneidx: idx,
            sc,
            pass: None,
            restarted: false,
            nr_boost_reclaim: zone_boosts.iter().sum(),
            zone_boosts,
            priority_capped: false,
            v45: V45Iteration::default(),
        });
    }

    /// `balance_pgdat` until done (Some(order it balanced for)) or out of budget (None).
    /// With a watermark boost pending it first reclaims the boost's worth, without
    /// writeback or swap and no harder than DEF_PRIORITY - 2, stopping at the first
    /// pass without progress; if the node is unbalanced it drops the boost and
    /// reclaims normally. At the end each zone's boost is taken off.
    fn balance_pgdat_step(&mut self, deadline: u64) -> Option<usize> {
        let nid = self.kswapd_nid();
        if self.cfg.kswapd_compacts {
            return self.balance_pgdat_v45_step(deadline);
        }
        let mut run = self.kswapd[nid].run.take().unwrap();
        let result = loop {
            if let Some((mut ns, reclaimed_before)) = run.pass.take() {
                if !self.shrink_node_step(&mut ns, &mut run.sc, deadline) {
                    run.pass = Some((ns, reclaimed_before));
                    break None;
                }
                // kswapd_shrink_node's tail, then balance_pgdat's wake-up of the
                // tasks throttled in direct reclaim once the reserves are back.
                self.wake_pfmemalloc_waiters(nid);
                let sc = &mut run.sc;
                let reclaimed = sc.nr_reclaimed - reclaimed_before;
                if sc.order > 0 && sc.nr_reclaimed >= 2 << sc.order {
                    sc.order = 0; // enough for compaction: balance at order 0 now
                }
                let scanned_enough = sc.nr_scanned.max(reclaimed) >= sc.nr_to_reclaim;
                let raise_priority = !scanned_enough && !run.priority_capped;
                run.nr_boost_reclaim -= run.nr_boost_reclaim.min(reclaimed);
                if run.nr_boost_reclaim > 0 && reclaimed == 0 {
                    // No progress for a boost: I/O cannot be queued, stop.
                    if run.sc.nr_reclaimed == 0 {
                        self.kswapd[nid].failures += 1;
                    }
                    break Some(run.sc.order);
                }
                let sc = &mut run.sc;
                if raise_priority || reclaimed == 0 {
                    sc.priority -= 1;
                }
                if sc.priority < 1 {
                    // Ran out of priorities.
                    if run.sc.nr_reclaimed == 0 && run.sc.cache_trim_mode_failed && !run.restarted {
                        run.sc.no_cache_trim_mode = true;
                        run.sc.priority = DEF_PRIORITY;
                        run.restarted = true;
                        continue;
                    }
                    if run.sc.nr_reclaimed == 0 {
                        self.kswapd[nid].failures += 1;
                    }
                    break Some(run.sc.order);
                }
                // Out of budget, or throttled: go on after the slice or the sleep.
                if self.cpu_ns >= deadline || self.blocked_until.is_some() {
                    break None;
                }
            }
            // Top of the priority loop.
            let sc = &mut run.sc;
            sc.reclaim_idx = run.highest_zoneidx;
            let balanced = self.pgdat_balanced(nid, sc.order, run.highest_zoneidx);
            if !balanced && run.nr_boost_reclaim > 0 {
                // Unbalanced: keep the boost for later and reclaim normally (restart).
                run.nr_boost_reclaim = 0;
                sc.priority = DEF_PRIORITY;
            }
            let boosting = run.nr_boost_reclaim > 0;
            if !boosting && balanced {
                break Some(sc.order);
            }
            run.priority_capped = boosting && sc.priority == DEF_PRIORITY - 2;
            // Boosted reclaim relieves pressure; it issues no writeback and no swap.
            sc.may_writepage = !boosting;
            sc.may_swap = !boosting;
            // kswapd_age_node: keep the anon inactive list topped up (MGLRU:
            // lru_gen_age_node).
            if self.lru_gen_enabled() {
                self.lru_gen_age_node(sc);
            } else {
                self.age_active_anon(sc);
            }
            if sc.priority < DEF_PRIORITY - 2 {
                sc.may_writepage = true;
            }
            sc.nr_scanned = 0;
            // kswapd_shrink_node: reclaim the high watermarks' worth.
            sc.nr_to_reclaim = self.zones[self.node_zones(nid)]
                .iter()
                .take(sc.reclaim_idx + 1)
                .filter(|z| z.is_managed())
                .map(|z| z.wmark(WMARK_HIGH).max(SWAP_CLUSTER_MAX))
                .sum();
            let before = sc.nr_reclaimed;
            let ns = self.shrink_node_begin(sc);
            run.pass = Some((ns, before));
        };
        if result.is_some() {
            self.snapshot_refaults(0, nid);
            let zones = self.node_zones(nid);
            for (z, boost) in self.zones[zones].iter_mut().zip(run.zone_boosts) {
                z.watermark_boost -= z.watermark_boost.min(boost);
            }
            // After boosted reclaim there is likely room: defragment pageblocks.
            if run.zone_boosts.iter().any(|&b| b > 0) {
                self.wakeup_kcompactd(nid, super::zone::PAGEBLOCK_ORDER, run.highest_zoneidx);
            }
        }
        self.kswapd[nid].run = Some(run);
        result
    }
}

/// `KSWAPD_ZONE_BALANCE_GAP_RATIO` (v4.5): a zone's balance gap is 1 % of it, at
/// most its low watermark.
const KSWAPD_ZONE_BALANCE_GAP_RATIO: u64 = 100;

impl Mm {
    /// v4.5's `zone_balanced`: the high watermark (plus `gap`) met at `order`, and for a
    /// high order, the zone worth compacting.
    fn zone_balanced_v45(&self, zi: usize, order: usize, gap: u64, classzone_idx: usize) -> bool {
        let z = &self.zones[zi];
        if !zone_watermark_ok(
            z,
            order,
            z.wmark(WMARK_HIGH) + gap,
            classzone_idx,
            AllocFlags::default(),
            self.zone_free_safe(zi),
        ) {
            return false;
        }
        order == 0
            || compaction_suitable(
                z,
                order,
                classzone_idx,
                self.cfg.extfrag_threshold,
                self.zone_page_state_free(zi),
            )
    }

    /// v4.5's `pgdat_balanced`: for order 0 every zone balanced; for a high order, the
    /// balanced zones hold a quarter of the node's pages.
    pub fn pgdat_balanced_v45(&self, nid: usize, order: usize, classzone_idx: usize) -> bool {
        let (mut managed, mut balanced) = (0u64, 0u64);
        for t in 0..=classzone_idx {
            let zi = nid * MAX_NR_ZONES + t;
            let z = &self.zones[zi];
            if !z.is_managed() {
                continue;
            }
            managed += z.managed_pages;
            if self.zone_balanced_v45(zi, order, 0, t) {
                balanced += z.managed_pages;
            } else if order == 0 {
                return false;
            }
        }
        order == 0 || balanced >= managed >> 2
    }

    /// v4.5's `balance_pgdat`, a priority iteration at a time: reclaim each zone up to
    /// the first unbalanced one (`end_zone`) that is not balanced (at order 0 when it
    /// is worth compacting: `testorder`), a high watermark's worth each, summed in
    /// `nr_attempted`. Then: twice the order reclaimed drops to order 0; compaction
    /// (`compact_pgdat`, async) runs only if no zone met the order at LOW and this
    /// iteration reclaimed more than `nr_attempted`. The seed shows that test never
    /// passing: with order-0 watermarks met, kswapd reclaims nothing, goes through
    /// every priority and never compacts.
    fn balance_pgdat_v45_step(&mut self, deadline: u64) -> Option<usize> {
        let nid = self.kswapd_nid();
        let base = nid * MAX_NR_ZONES;
        let mut run = self.kswapd[nid].run.take().unwrap();
        let idx = run.highest_zoneidx;
        let result = loop {
            let reclaimed = match run.pass.take() {
                Some((mut ns, before)) => {
                    if !self.shrink_node_step(&mut ns, &mut run.sc, deadline) {
                        run.pass = Some((ns, before));
                        break None;
                    }
                    if run.sc.nr_scanned >= run.sc.nr_to_reclaim {
                        run.v45.keep_priority = true;
                    }
                    Some(run.sc.nr_reclaimed - before)
                }
                None => None,
            };
            if let Some(reclaimed) = reclaimed {
                self.wake_pfmemalloc_waiters(nid);
                let it = run.v45;
                let sc = &mut run.sc;
                if sc.order > 0 && reclaimed >= 2 << sc.order {
                    sc.order = 0;
                }
                if it.needs_compaction && reclaimed > it.nr_attempted {
                    let order = sc.order;
                    self.compact_pgdat_v45(nid, order);
                }
                let sc = &mut run.sc;
                if !it.keep_priority || reclaimed == 0 {
                    sc.priority -= 1;
                }
                if sc.priority < 1 || self.pgdat_balanced_v45(nid, sc.order, idx) {
                    break Some(sc.order);
                }
                if self.cpu_ns >= deadline || self.blocked_until.is_some() {
                    break None;
                }
            }
            // Top of the iteration: the highest zone not balanced at the order.
            let order = run.sc.order;
            let Some(end_zone) = (0..=idx).rev().find(|&t| {
                self.zones[base + t].is_managed() && !self.zone_balanced_v45(base + t, order, 0, 0)
            }) else {
                break Some(order);
            };
            let needs_compaction = order > 0
                && !(base..=base + end_zone).any(|zi| {
                    let z = &self.zones[zi];
                    z.is_managed()
                        && zone_watermark_ok(
                            z,
                            order,
                            z.wmark(super::zone::WMARK_LOW),
                            idx,
                            AllocFlags::default(),
                            self.zone_page_state_free(zi),
                        )
                });
            let mut it = V45Iteration {
                needs_compaction,
                ..V45Iteration::default()
            };
            let mut nr_to_reclaim = 0;
            for zi in base..=base + end_zone {
                let z = &self.zones[zi];
                if !z.is_managed() {
                    continue;
                }
                let testorder = if order > 0
                    && compaction_suitable(
                        z,
                        order,
                        idx,
                        self.cfg.extfrag_threshold,
                        self.zone_page_state_free(zi),
                    ) {
                    0
                } else {
                    order
                };
                let gap = z
                    .wmark(super::zone::WMARK_LOW)
                    .min(z.managed_pages.div_ceil(KSWAPD_ZONE_BALANCE_GAP_RATIO));
                if self.zone_balanced_v45(zi, testorder, gap, end_zone) {
                    it.keep_priority = true;
                    continue;
                }
                let want = z.wmark(WMARK_HIGH).max(SWAP_CLUSTER_MAX);
                nr_to_reclaim += want;
                it.nr_attempted += want;
            }
            run.v45 = it;
            let sc = &mut run.sc;
            sc.reclaim_idx = end_zone;
            if sc.priority < DEF_PRIORITY - 2 {
                sc.may_writepage = true;
            }
            self.age_active_anon(sc);
            sc.nr_scanned = 0;
            let before = sc.nr_reclaimed;
            if nr_to_reclaim == 0 {
                // Every zone balanced at its testorder: nothing reclaimed (so no
                // compaction: 0 > nr_attempted fails), and the priority drops.
                sc.priority -= 1;
                if sc.priority < 1 || self.pgdat_balanced_v45(nid, sc.order, idx) {
                    break Some(sc.order);
                }
                // Even an iteration that reclaims nothing looks at every zone.
                self.charge(self.cfg.costs.scan_page_ns);
                if self.cpu_ns >= deadline {
                    break None;
                }
                continue;
            }
            sc.nr_to_reclaim = nr_to_reclaim;
            let ns = self.shrink_node_begin(sc);
            run.pass = Some((ns, before));
        };
        self.kswapd[nid].run = Some(run);
        result
    }

    /// v4.5's `compact_pgdat` from kswapd: ASYNC compaction of every zone of node
    /// `nid` not deferred for `order`; a zone that then meets the order at LOW has its
    /// back-off reset. Order 0 (after the drop) has nothing to do.
    fn compact_pgdat_v45(&mut self, nid: usize, order: usize) {
        if order == 0 {
            return;
        }
        for zi in self.node_zones(nid) {
            if !self.zones[zi].is_managed() {
                continue;
            }
            if !self.zones[zi]
                .compact
                .defer
                .compaction_deferred(order as u32)
            {
                let mut cc = super::compaction::CompactControl::new(zi, Some(order));
                cc.mode = super::compaction::MigrateMode::Async;
                self.compact_zone(&mut cc);
            }
            let z = &self.zones[zi];
            if zone_watermark_ok(
                z,
                order,
                z.wmark(super::zone::WMARK_LOW),
                0,
                AllocFlags::default(),
                self.zone_page_state_free(zi),
            ) {
                self.zones[zi]
                    .compact
                    .defer
                    .compaction_defer_reset(order as u32, false);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page_alloc::test_pages::add_pages;
    use crate::page_alloc::{Gfp, GFP_MEMALLOC_NOWAIT};
    use crate::test_util::{add_zram, config, task_mm};
    use crate::zone::{MIGRATE_UNMOVABLE, ZONE_DMA32};
    use crate::SpaceKind;

    /// A 1 GiB machine (one DMA32 zone: min 1024, high 1548 pages) with 200,000 clean
    /// file pages and 20,000 anon pages on the LRUs, and the rest of memory taken and
    /// every other page of it given back, so all free memory is in order-0 blocks.
    fn fragmented() -> Mm {
        let mut cfg = config(1024);
        add_zram(&mut cfg, 1024);
        let mut mm = task_mm(cfg);
        add_pages(&mut mm, SpaceKind::File, 200_000, 0);
        add_pages(&mut mm, SpaceKind::Anon, 20_000, 0);
        let mut taken = Vec::new();
        let all = AllocFlags {
            no_watermarks: true,
            ..AllocFlags::default()
        };
        while let Some(p) = mm.get_page_from_freelist(GFP_MEMALLOC_NOWAIT, 0, 0, all) {
            taken.push(p);
        }
        taken.sort_unstable();
        for p in taken.iter().step_by(2) {
            mm.free_pages(*p, 0);
        }
        assert!((0..NR_ORDERS_ABOVE_0).all(|o| mm.zones[ZONE_DMA32].free_area[o + 1].nr_free == 0));
        mm
    }

    const NR_ORDERS_ABOVE_0: usize = crate::zone::MAX_PAGE_ORDER;

    const GFP_KERNEL_NORECLAIM: Gfp = Gfp {
        direct_reclaim: false,
        kswapd_reclaim: true,
        highest_zoneidx: ZONE_NORMAL,
        migratetype: MIGRATE_UNMOVABLE,
        high: false,
        noretry: false,
    };

    #[test]
    fn a_fragmenting_fallback_boosts_the_watermarks_and_kswapd_reclaims_the_boost() {
        let mut mm = fragmented();
        assert_eq!(mm.zones[ZONE_DMA32].watermark[WMARK_HIGH], 1548);
        let free_before = mm.zones[ZONE_DMA32].nr_free_pages;
        assert!(
            free_before > 1548 + 512,
            "{free_before}: balanced even when boosted"
        );
        mm.out.clear();
        // An unmovable page falls back to an order-0 movable block: a pageblock's
        // worth of boost, min(0 + 512, max(512, 1548 · 15000 / 10000 = 2322)) = 512,
        // and kswapd is woken although the node is balanced.
        mm.alloc_pages(GFP_KERNEL_NORECLAIM, 0).unwrap();
        assert_eq!(mm.zones[ZONE_DMA32].watermark_boost, 512);
        assert!(
            !mm.zones[ZONE_DMA32].boosted_watermark,
            "cleared after the wake-up"
        );
        assert!(mm.out.iter().any(|o| matches!(o, Out::WakeKswapd { .. })));
        // kswapd reclaims the boost's worth from the clean file pages, at most at
        // DEF_PRIORITY - 2, without swap: 200,000 >> 12 = 48 pages at priority 12, 97
        // at 11, 195 at 10 and 10 again: ~535 >= 512, and it stops.
        mm.current = crate::Current::Kswapd(0);
        while !matches!(
            mm.kswapd_run(u64::MAX / 4),
            KswapdNext::NapUntil(_) | KswapdNext::Sleep
        ) {}
        let steal = mm.vmstat.get(Ev::PgstealKswapd);
        assert!((530..=540).contains(&steal), "{steal}");
        assert_eq!(mm.vmstat.get(Ev::Pswpout), 0);
        assert_eq!(mm.zones[ZONE_DMA32].watermark_boost, 0);
        assert_eq!(mm.kswapd[0].failures, 0);
    }

    /// kswapd woken for order 9 on the pinned checkerboard (256 MiB, watermarks 0,
    /// 32,640 free pages at order 0, a kernel page in every pageblock so no order-9
    /// block can form) and run to its nap.
    fn kswapd_for_order_9(kswapd_compacts: bool) -> Mm {
        let (mut mm, zi) = crate::page_alloc::test_pages::checkerboard();
        crate::page_alloc::test_pages::pin_every_pageblock(&mut mm, zi);
        mm.cfg.kswapd_compacts = kswapd_compacts;
        mm.out.clear();
        mm.wakeup_kswapd(zi, 9, zi, false);
        assert!(mm.out.iter().any(|o| matches!(o, Out::WakeKswapd { .. })));
        mm.current = crate::Current::Kswapd(0);
        while !matches!(
            mm.kswapd_run(u64::MAX / 4),
            KswapdNext::NapUntil(_) | KswapdNext::Sleep
        ) {}
        mm
    }

    #[test]
    fn v4_5_kswapd_goes_through_every_priority_and_never_compacts() {
        let mm = kswapd_for_order_9(true);
        // The zone is worth compacting for order 9 (free 32,640 > LOW 0 + 1024;
        // fragmentation index 1000 - (1000 + 32640·1000/512) / 32640 = 998 > 500), so
        // kswapd_shrink_zone tests it at order 0 with gap min(LOW, 1 %) = 0: balanced,
        // nothing reclaimed. nr_reclaimed 0 is never > nr_attempted 0: no compaction;
        // the priority drops each time until it runs out, never balanced at order 9.
        assert_eq!(mm.kswapd[0].last_balance, Some((9, 0)));
        assert_eq!(mm.vmstat.get(Ev::PgstealKswapd), 0);
        assert_eq!(mm.vmstat.get(Ev::CompactMigrateScanned), 0);
        assert!(!mm
            .out
            .iter()
            .any(|o| matches!(o, Out::WakeKcompactd { .. })));
    }

    #[test]
    fn kswapd_hands_the_order_to_kcompactd() {
        let mm = kswapd_for_order_9(false);
        // v4.8+: reclaim at order 9, 32 pages a pass (HIGH is 0), until compact_gap
        // (1024) pages are freed; then balance at order 0 (met) and, before the nap,
        // wake kcompactd for order 9.
        assert_eq!(mm.kswapd[0].last_balance.map(|b| b.0), Some(0));
        let steal = mm.vmstat.get(Ev::PgstealKswapd);
        assert!((1024..1024 + SWAP_CLUSTER_MAX).contains(&steal), "{steal}");
        assert_eq!(
            mm.vmstat.get(Ev::CompactMigrateScanned),
            0,
            "kswapd does not compact"
        );
        assert_eq!(mm.kcompactd[0].max_order, 9);
        assert!(mm
            .out
            .iter()
            .any(|o| matches!(o, Out::WakeKcompactd { .. })));
    }

    #[test]
    fn without_the_boost_factor_nothing_is_boosted() {
        let mut mm = fragmented();
        mm.cfg.watermark_boost_factor = 0;
        mm.out.clear();
        mm.alloc_pages(GFP_KERNEL_NORECLAIM, 0).unwrap();
        assert_eq!(mm.zones[ZONE_DMA32].watermark_boost, 0);
        assert!(mm.out.is_empty(), "a balanced node: kswapd stays asleep");
    }
}

#[cfg(test)]
mod node_tests {
    use super::*;
    use crate::page::lru;
    use crate::page_alloc::test_pages::add_pages;
    use crate::test_util::{config, task_mm};
    use crate::zone::{WMARK_LOW, WMARK_MIN};
    use crate::{Current, SpaceKind};

    /// `test_util::two_nodes` (64 MiB each; node 0's zone is id 0, node 1's id 3).
    /// Workload 0 allocates locally, workload 1 is bound to node 1. 4096 clean file
    /// pages of workload 0 from CPU 0 go on node 0's lists; workload 1's clean file
    /// pages fill node 1 until its zone is 16 pages below its low watermark (bound,
    /// the allocations past LOW take the slow path to MIN on node 1, waking its
    /// kswapd, instead of spilling to node 0).
    fn two_nodes_node1_short() -> Mm {
        let mut cfg = config(128);
        crate::test_util::add_process(&mut cfg, None);
        cfg.workloads[1].mempolicy = crate::mempolicy::Mempolicy::Bind { nodes: 0b10 };
        crate::test_util::two_nodes(&mut cfg);
        let mut mm = task_mm(cfg);
        mm.current_cpu = 0;
        mm.current_workload = Some(0);
        add_pages(&mut mm, SpaceKind::File, 4096, 0);
        mm.current_workload = Some(1);
        let (min, low) = (mm.zones[3].wmark(WMARK_MIN), mm.zones[3].wmark(WMARK_LOW));
        let n = mm.zones[3].nr_free_pages - (low - 16);
        add_pages(&mut mm, SpaceKind::File, n as u32, 0);
        assert_eq!(mm.zones[3].nr_free_pages, low - 16);
        assert!(low - 16 > min, "{min} {low}: no direct reclaim");
        mm
    }

    #[test]
    fn each_nodes_kswapd_reclaims_its_own_node_only() {
        let mut mm = two_nodes_node1_short();
        // 4096 from CPU 0 and the 64 that spilled from node 1: node 0's inactive file.
        let node0 = mm.node_lru_pages(0, lru::INACTIVE_FILE);
        assert_eq!(node0, 4096);
        let node1 = mm.node_lru_pages(1, lru::INACTIVE_FILE);
        // The bound allocations below LOW woke node 1's kswapd, and only it.
        assert!(mm
            .out
            .iter()
            .all(|o| *o == Out::WakeKswapd { nid: 1, at: 0 }));
        assert!(!mm.out.is_empty());
        mm.out.clear();
        mm.wakeup_kswapd(3, 0, ZONE_NORMAL, true);
        assert_eq!(mm.out, vec![Out::WakeKswapd { nid: 1, at: 0 }]);
        // Node 0 is far above its watermarks: its kswapd has nothing to do.
        mm.out.clear();
        mm.wakeup_kswapd(0, 0, ZONE_NORMAL, true);
        assert!(mm.out.is_empty());
        mm.current = Current::Kswapd(1);
        while !matches!(
            mm.kswapd_run(u64::MAX / 4),
            KswapdNext::NapUntil(_) | KswapdNext::Sleep
        ) {}
        // Every page it took was node 1's: node 0's list is as it was, and node 1's
        // shrank by what kswapd stole, until node 1 is balanced.
        assert_eq!(mm.node_lru_pages(0, lru::INACTIVE_FILE), node0);
        let steal = mm.vmstat.get(Ev::PgstealKswapd);
        assert!(steal > 0);
        assert_eq!(mm.node_lru_pages(1, lru::INACTIVE_FILE), node1 - steal);
        assert!(mm.pgdat_balanced(1, 0, ZONE_NORMAL));
        assert_eq!((mm.kswapd[0].wakeups, mm.kswapd[1].wakeups), (0, 1));
        mm.check_invariants().unwrap();
    }

    #[test]
    fn a_refault_reads_the_clock_of_the_node_it_was_evicted_from() {
        // A node 1 page's shadow names node 1 and stamps node 1's clock. Node 1's clock
        // then moves 10 on, node 0's 100,000: an anon refault (no swap: its workingset
        // is the file lists, 4000-odd pages on node 1) is 11 away on node 1's clock,
        // recent, and activates; on node 0's it would be 100,000 away and would not.
        let mut mm = two_nodes_node1_short();
        let root1 = mm.mem_cgroup_lruvec(0, 1);
        let pfn = mm.lruvecs[root1].lists[lru::INACTIVE_FILE].tail();
        assert_eq!(mm.pfn_to_nid(pfn), 1);
        let shadow = mm.workingset_eviction(pfn, 0);
        assert_eq!(
            mm.workingset.unpack(shadow).0,
            crate::workingset::ShadowOwner { memcg: 0, nid: 1 }
        );
        mm.lruvecs[root1].nonresident_age += 10;
        mm.lruvecs[0].nonresident_age += 100_000;
        // The refaulting page, on node 1 as workload 1's fault allocates it.
        let new = mm
            .alloc_pages(crate::page_alloc::GFP_HIGHUSER_MOVABLE, 0)
            .unwrap();
        assert_eq!(mm.pfn_to_nid(new), 1);
        mm.frames[new as usize].set(crate::page::pg::SWAPBACKED);
        mm.do_flush_stats(0);
        mm.workingset_refault(new, shadow);
        assert!(mm.frames[new as usize].test(crate::page::pg::ACTIVE));
        // The activation ticked node 1's clock, not node 0's.
        assert_eq!(mm.lruvecs[0].nonresident_age, 100_000);
        assert_eq!(mm.lruvecs[root1].nonresident_age, 12);
    }
}

#[cfg(test)]
mod demotion_tests {
    use super::*;
    use crate::memory_tiers::TierStat;
    use crate::page::{lru, pte};
    use crate::page_alloc::test_pages::add_pages;
    use crate::test_util::{config, task_mm};
    use crate::vm_event_item::Ev;
    use crate::zone::{WMARK_HIGH, WMARK_LOW, ZONE_NORMAL};
    use crate::{Current, Mm, SpaceKind};

    /// Two 64 MiB nodes: node 0 DRAM with both CPUs, node 1 CPU-less CXL (2.5× the
    /// latency, half the bandwidth: the next tier). No swap. Workload 0, bound to
    /// node 0, fills node 0's zone (id 0) with anon pages to 16 below its low
    /// watermark, so its kswapd is woken.
    fn dram_and_cxl(demotion_enabled: bool) -> (Mm, u32) {
        let mut cfg = config(128);
        crate::test_util::dram_and_cxl(&mut cfg);
        cfg.demotion_enabled = demotion_enabled;
        cfg.workloads[0].mempolicy = crate::mempolicy::Mempolicy::Bind { nodes: 0b01 };
        let mut mm = task_mm(cfg);
        mm.current_cpu = 0;
        mm.current_workload = Some(0);
        let low = mm.zones[0].wmark(WMARK_LOW);
        let n = mm.zones[0].nr_free_pages - (low - 16);
        let (space, _) = add_pages(&mut mm, SpaceKind::Anon, n as u32, 0);
        assert_eq!(mm.zones[0].nr_free_pages, low - 16);
        (mm, space)
    }

    fn run_kswapd0(mm: &mut Mm) {
        mm.out.clear();
        mm.wakeup_kswapd(0, 0, ZONE_NORMAL, true);
        mm.current = Current::Kswapd(0);
        while !matches!(
            mm.kswapd_run(u64::MAX / 4),
            KswapdNext::NapUntil(_) | KswapdNext::Sleep
        ) {}
    }

    /// With no swap, node 0's anon is reclaimable only by demotion (get_scan_count's
    /// `can_reclaim_anon_pages`). kswapd0 demotes until node 0 is balanced: every
    /// page it stole was demoted, not swapped or dropped; node 0 gains exactly the
    /// pages node 1 loses; each demoted page is on node 1's inactive anon list and its
    /// PTE points at it.
    #[test]
    fn kswapd_demotes_cold_anon_to_the_slower_node() {
        let (mut mm, space) = dram_and_cxl(true);
        assert_eq!(mm.tiers.preferred[0], 0b10);
        assert!(mm.can_demote(0, false) && !mm.can_demote(1, false));
        let (free0, free1) = (mm.zones[0].nr_free_pages, mm.zones[3].nr_free_pages);
        let high = mm.zones[0].wmark(WMARK_HIGH);
        run_kswapd0(&mut mm);
        let demoted = mm.node_tier_stat(0, TierStat::PgdemoteKswapd);
        assert!(demoted >= high - free0, "{demoted} < {high} - {free0}");
        assert_eq!(mm.vmstat.get(Ev::PgstealKswapd), demoted);
        assert_eq!(mm.vmstat.get(Ev::Pswpout), 0);
        assert_eq!(mm.zones[0].nr_free_pages, free0 + demoted);
        assert_eq!(mm.zones[3].nr_free_pages, free1 - demoted);
        assert_eq!(mm.node_lru_pages(1, lru::INACTIVE_ANON), demoted);
        let s = &mm.spaces[space as usize];
        let on_node1 = (0..s.nr_pages())
            .filter(|&i| pte::is_present(s.pte(i)) && mm.pfn_to_nid(pte::pfn(s.pte(i))) == 1)
            .count() as u64;
        assert_eq!(on_node1, demoted);
        assert_eq!(s.nr_present, s.nr_pages() as u64);
        // Counted on the source node only, and in the root's memory.stat.
        assert_eq!(mm.node_tier_stat(1, TierStat::PgdemoteKswapd), 0);
        assert_eq!(mm.memcg_tier_stat(0, TierStat::PgdemoteKswapd), demoted);
        assert!(mm.pgdat_balanced(0, 0, ZONE_NORMAL));
        mm.check_invariants().unwrap();
    }

    /// The same machine with demotion off: no swap, so kswapd0 can take no anon page.
    #[test]
    fn without_demotion_no_swap_means_no_anon_reclaim() {
        let (mut mm, _) = dram_and_cxl(false);
        assert!(!mm.can_demote(0, false));
        run_kswapd0(&mut mm);
        assert_eq!(mm.vmstat.get(Ev::PgstealKswapd), 0);
        assert_eq!(mm.node_lru_pages(1, lru::INACTIVE_ANON), 0);
        mm.check_invariants().unwrap();
    }

    /// `reclaim_pages` (MADV_PAGEOUT, DAMOS pageout) never demotes (`no_demotion`).
    #[test]
    fn reclaim_pages_does_not_demote() {
        let (mut mm, space) = dram_and_cxl(true);
        let pfns: Vec<_> = (0..64)
            .map(|i| pte::pfn(mm.spaces[space as usize].pte(i)))
            .collect();
        for &pfn in &pfns {
            mm.lruvec_del_folio(pfn);
            mm.frames[pfn as usize].list = crate::page::on::ISOLATED;
        }
        mm.reclaim_pages(pfns);
        assert_eq!(mm.node_tier_stat(0, TierStat::PgdemoteDirect), 0);
        assert_eq!(mm.node_lru_pages(1, lru::INACTIVE_ANON), 0);
    }
}
