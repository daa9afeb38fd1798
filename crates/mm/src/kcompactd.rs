//! kcompactd, the per-node compaction thread (mm/compaction.c `kcompactd`,
//! `wakeup_kcompactd`, `kcompactd_do_work`, proactive compaction; kernel-reference
//! §7.7–7.8), as v4.6's "mm, kswapd: replace kswapd compaction with waking up
//! kcompactd" introduced it: kswapd balances order-0 watermarks, then hands the order
//! it was woken for to kcompactd. Under `kernel.kswapd_compaction = "kswapd"` (v4.5)
//! there is no kcompactd: nothing wakes it and it never runs.
//!
//! A wake-up's work (`kcompactd_do_work`) runs in one slice.

use super::compaction::{
    fragmentation_score_wmark, fragmentation_score_zone, CompactControl, CompactResult,
    MigrateMode, COMPACT_MAX_DEFER_SHIFT,
};
use super::zone::{MAX_NR_ZONES, WMARK_MIN};
use super::{Mm, Out};
use crate::trace::Tp;
use crate::vm_event_item::Ev;

/// `HPAGE_FRAG_CHECK_INTERVAL_MSEC`: kcompactd's timeout for the proactive check.
pub const HPAGE_FRAG_CHECK_INTERVAL_MSEC: u64 = 500;

/// The per-node kcompactd fields of `pg_data_t`.
#[derive(Debug, Clone, Default)]
pub struct Kcompactd {
    /// `kcompactd_max_order`: the highest order requested since the last run.
    pub max_order: usize,
    /// `kcompactd_highest_zoneidx`; `None` is "every zone" (the node's last zone).
    pub highest_zoneidx: Option<usize>,
    /// `proactive_compact_trigger`: `vm.compaction_proactiveness` was written.
    pub proactive_trigger: bool,
    /// The next wait's timeout: 500 ms, or 32 s after a proactive round that did not
    /// lower the fragmentation score.
    pub timeout_ns: u64,
}

/// What kcompactd does after a slice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KcompactdNext {
    /// Waits until woken or until this time (the proactive check).
    SleepUntil(u64),
    /// Waits until woken (proactive compaction off).
    Sleep,
}

impl Mm {
    fn kcompactd_default_timeout_ns(&self) -> u64 {
        HPAGE_FRAG_CHECK_INTERVAL_MSEC * 1_000_000
    }

    /// When kcompactd's first proactive check is due (None: it only runs when woken).
    pub fn kcompactd_first_timer(&self) -> Option<u64> {
        (!self.cfg.kswapd_compacts && self.cfg.compaction_proactiveness > 0)
            .then(|| self.kcompactd_default_timeout_ns())
    }

    /// The node of the kcompactd running now.
    fn kcompactd_nid(&self) -> usize {
        match self.current {
            super::Current::Kcompactd(nid) => nid,
            _ => 0,
        }
    }

    /// `wakeup_kcompactd` of node `nid`: record the request; wake its kcompactd if
    /// some eligible zone is worth compacting for it (`kcompactd_node_suitable`).
    pub fn wakeup_kcompactd(&mut self, nid: usize, order: usize, highest_zoneidx: usize) {
        if self.cfg.kswapd_compacts || order == 0 {
            return;
        }
        let k = &mut self.kcompactd[nid];
        k.max_order = k.max_order.max(order);
        k.highest_zoneidx = Some(
            k.highest_zoneidx
                .map_or(highest_zoneidx, |c| c.min(highest_zoneidx)),
        );
        if !self.kcompactd_node_suitable(nid) {
            return;
        }
        let name = self.zones[nid * MAX_NR_ZONES + highest_zoneidx].name();
        trace_event!(
            self,
            Tp::CompactionWakeupKcompactd,
            "nid={nid} order={order} highest_zoneidx={name:<8}"
        );
        self.out.push(Out::WakeKcompactd {
            nid,
            at: self.clock(),
        });
    }

    fn kcompactd_highest_zoneidx(&self, nid: usize) -> usize {
        self.kcompactd[nid]
            .highest_zoneidx
            .unwrap_or(MAX_NR_ZONES - 1)
    }

    /// `kcompactd_node_suitable`: an eligible zone of node `nid` fails the request's
    /// order at MIN but is worth compacting.
    fn kcompactd_node_suitable(&self, nid: usize) -> bool {
        let idx = self.kcompactd_highest_zoneidx(nid);
        let order = self.kcompactd[nid].max_order;
        self.node_zones(nid).take(idx + 1).any(|zi| {
            self.zones[zi].is_managed()
                && self.compaction_suit_allocation_order(zi, order, idx, WMARK_MIN)
                    == CompactResult::Continue
        })
    }

    /// One run of the kcompactd thread, from a wake-up or its timer: the requested
    /// work (as a memory stall), else the proactive check. Returns how it waits next.
    pub fn kcompactd_run(&mut self) -> KcompactdNext {
        let nid = self.kcompactd_nid();
        let default = self.kcompactd_default_timeout_ns();
        // kcompactd_work_requested, but a proactive trigger goes to the check below.
        if self.kcompactd[nid].max_order > 0 && !self.kcompactd[nid].proactive_trigger {
            let cpu_before = self.cpu_ns;
            self.kcompactd_do_work(nid);
            self.stall_ns += self.cpu_ns - cpu_before;
            self.kcompactd[nid].timeout_ns = default;
        } else {
            self.kcompactd[nid].timeout_ns = default;
            if self.should_proactive_compact_node(nid) {
                let prev = self.fragmentation_score_node(nid);
                self.proactive_compact_node(nid);
                if self.fragmentation_score_node(nid) >= prev {
                    self.kcompactd[nid].timeout_ns = default << COMPACT_MAX_DEFER_SHIFT;
                }
            }
            self.kcompactd[nid].proactive_trigger = false;
        }
        trace_event!(self, Tp::CompactionKcompactdSleep, "nid={nid}");
        if self.cfg.compaction_proactiveness == 0 {
            KcompactdNext::Sleep
        } else {
            KcompactdNext::SleepUntil(self.clock() + self.kcompactd[nid].timeout_ns)
        }
    }

    /// `kcompactd_do_work`: SYNC_LIGHT compaction for the requested order in each
    /// eligible zone that is not deferred, fails the order at MIN and is worth it; a
    /// zone compacted without the page is deferred (kcompactd compacts synchronously).
    fn kcompactd_do_work(&mut self, nid: usize) {
        let order = self.kcompactd[nid].max_order;
        let idx = self.kcompactd_highest_zoneidx(nid);
        let name = self.zones[nid * MAX_NR_ZONES + idx].name();
        trace_event!(
            self,
            Tp::CompactionKcompactdWake,
            "nid={nid} order={order} highest_zoneidx={name:<8}"
        );
        self.count(Ev::CompactDaemonWake, 1);
        for zi in self.node_zones(nid).take(idx + 1) {
            let zone_idx = self.zones[zi].idx;
            if !self.zones[zi].is_managed() {
                continue;
            }
            if self.zones[zi]
                .compact
                .defer
                .compaction_deferred(order as u32)
            {
                continue;
            }
            if self.compaction_suit_allocation_order(zi, order, zone_idx, WMARK_MIN)
                != CompactResult::Continue
            {
                continue;
            }
            let mut cc = CompactControl::new(zi, Some(order));
            cc.mode = MigrateMode::SyncLight;
            cc.highest_zoneidx = idx;
            let status = self.compact_zone(&mut cc);
            match status {
                CompactResult::Success => {
                    self.zones[zi]
                        .compact
                        .defer
                        .compaction_defer_reset(order as u32, false);
                }
                CompactResult::PartialSkipped | CompactResult::Complete => {
                    self.defer_compaction(zi, order);
                }
                _ => {}
            }
            self.count(Ev::CompactDaemonMigrateScanned, cc.total_migrate_scanned);
            self.count(Ev::CompactDaemonFreeScanned, cc.total_free_scanned);
        }
        // Done until woken again (requests made meanwhile are not lost: they raised
        // the fields above what this run read).
        let k = &mut self.kcompactd[nid];
        if k.max_order <= order {
            k.max_order = 0;
        }
        if k.highest_zoneidx.is_some_and(|i| i >= idx) {
            k.highest_zoneidx = None;
        }
    }

    /// `fragmentation_score_node`: node `nid`'s zones' scores weighted by their size.
    pub fn fragmentation_score_node(&self, nid: usize) -> u64 {
        let zones = &self.zones[self.node_zones(nid)];
        let node_pages: u64 = zones.iter().map(|z| z.managed_pages).sum();
        zones
            .iter()
            .filter(|z| z.is_managed())
            .map(|z| z.managed_pages * fragmentation_score_zone(z) / (node_pages + 1))
            .sum()
    }

    /// `should_proactive_compact_node`: proactiveness on, kswapd asleep, and the
    /// node's score above the high mark.
    fn should_proactive_compact_node(&self, nid: usize) -> bool {
        let p = self.cfg.compaction_proactiveness;
        p > 0
            && !matches!(self.kswapd[nid].state, super::kswapd::KswapdState::Running)
            && self.fragmentation_score_node(nid) > fragmentation_score_wmark(p, false)
    }

    /// `proactive_compact_node`: every zone whole, SYNC_LIGHT, hints ignored, until its
    /// score is at the low mark (or kswapd starts).
    fn proactive_compact_node(&mut self, nid: usize) {
        for zi in self.node_zones(nid) {
            if !self.zones[zi].is_managed() {
                continue;
            }
            let mut cc = CompactControl::new(zi, None);
            cc.mode = MigrateMode::SyncLight;
            cc.whole_zone = true;
            cc.ignore_skip_hint = true;
            cc.proactive_compaction = true;
            cc.proactiveness = self.cfg.compaction_proactiveness;
            self.compact_zone(&mut cc);
            self.count(Ev::CompactDaemonMigrateScanned, cc.total_migrate_scanned);
            self.count(Ev::CompactDaemonFreeScanned, cc.total_free_scanned);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page_alloc::test_pages::{checkerboard, pin_every_pageblock};

    #[test]
    fn proactive_compaction_stops_at_the_low_mark() {
        // The checkerboard: all 32768 free pages at order 0, zone score 100, node
        // score 100 · 65536 / 65537 = 99 > 90 (proactiveness 20: high mark 90, low 80).
        let (mut mm, zi) = checkerboard();
        // The arithmetic counts pages merging as they are freed: without per-CPU
        // lists (proactive compaction, order -1, never drains them).
        mm.cfg.pcp = crate::pcp::PcpVersion::Off;
        assert_eq!(mm.cfg.compaction_proactiveness, 20);
        assert_eq!(mm.fragmentation_score_node(0), 99);
        // Each emptied pageblock is 512 free pages at order 9 (256 moved out); the
        // zone's score is (32768 - 512 k) · 100 / 32768, at most 80 from k = 13
        // (79.68): 13 · 256 = 3328 pages moved, checked after each batch of 32.
        let next = mm.kcompactd_run();
        assert_eq!(mm.vmstat.get(Ev::PgmigrateSuccess), 3328);
        assert_eq!(fragmentation_score_zone(&mm.zones[zi]), 79);
        assert_eq!(
            mm.vmstat.get(Ev::CompactDaemonWake),
            0,
            "no wake-up asked for it"
        );
        assert!(mm.vmstat.get(Ev::CompactDaemonMigrateScanned) > 0);
        // Progress: the next check in 500 ms; it finds 79 <= 90 and does nothing.
        assert_eq!(next, KcompactdNext::SleepUntil(mm.clock() + 500_000_000));
        mm.kcompactd_run();
        assert_eq!(mm.vmstat.get(Ev::PgmigrateSuccess), 3328);
        mm.check_invariants().unwrap();
    }

    #[test]
    fn proactive_compaction_without_progress_waits_32_seconds() {
        let (mut mm, zi) = checkerboard();
        pin_every_pageblock(&mut mm, zi);
        let next = mm.kcompactd_run();
        assert!(mm.vmstat.get(Ev::PgmigrateSuccess) > 0, "it tried");
        assert!(mm.fragmentation_score_node(0) >= 99);
        assert_eq!(next, KcompactdNext::SleepUntil(mm.clock() + 32_000_000_000));
        // Off: no timer at all.
        mm.cfg.compaction_proactiveness = 0;
        assert_eq!(mm.kcompactd_run(), KcompactdNext::Sleep);
    }

    #[test]
    fn a_wake_up_compacts_for_the_order_and_defers_on_failure() {
        let (mut mm, zi) = checkerboard();
        mm.cfg.compaction_proactiveness = 0;
        mm.out.clear();
        // An order-9 request on the checkerboard: worth it, so kcompactd is woken.
        mm.wakeup_kcompactd(0, 9, zi);
        assert!(mm
            .out
            .iter()
            .any(|o| matches!(o, Out::WakeKcompactd { .. })));
        mm.kcompactd_run();
        assert_eq!(mm.vmstat.get(Ev::CompactDaemonWake), 1);
        assert!(mm.zone_has_free_block(zi, 9));
        assert_eq!(
            mm.vmstat.get(Ev::PgmigrateSuccess),
            256,
            "one block, then done"
        );
        assert_eq!(mm.kcompactd[0].max_order, 0, "request consumed");
        // Now the order is there: a new request does not wake it.
        mm.out.clear();
        mm.wakeup_kcompactd(0, 9, zi);
        assert!(mm.out.is_empty());
        // Pinned: the run fails and defers the zone (shift 1).
        let (mut mm, zi) = checkerboard();
        pin_every_pageblock(&mut mm, zi);
        mm.wakeup_kcompactd(0, 9, zi);
        mm.kcompactd_run();
        assert_eq!(mm.zones[zi].compact.defer.defer_shift, 1);
        // Under v4.5 there is no kcompactd to wake.
        let (mut mm, zi) = checkerboard();
        mm.cfg.kswapd_compacts = true;
        mm.out.clear();
        mm.wakeup_kcompactd(0, 9, zi);
        assert!(mm.out.is_empty());
        assert_eq!(mm.kcompactd[0].max_order, 0);
    }
}
