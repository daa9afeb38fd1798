//! Reclaim throttling: `reclaim_throttle` with its per-reason wait queues and wake-ups
//! (mm/vmscan.c, v5.16+), and the `congestion_wait` / `wait_iff_congested` sleeps it
//! replaced (mm/backing-dev.c, ≤ v5.15); kernel-reference §5.1, §5.2.
//!
//! A throttled task sleeps: [`Mm::reclaim_throttle`] puts it on the node's wait queue
//! for the reason (each pgdat has its own `reclaim_wait[]`, written-page count and
//! NR_ISOLATED, and its own `pfmemalloc_wait`) and asks it to block until the timeout (`Mm::block_until`), which
//! stops the reclaim it is in. A wake-up (enough writeback completed, isolation dropped,
//! another reclaimer made progress) cuts the sleep short with [`Out::WakeTask`]. The
//! simulator calls [`Mm::throttle_finish`] when the task runs again: that is where the
//! kernel's `mm_vmscan_throttled` fires, with the time actually slept.
//!
//! Whatever the switch, `throttle_direct_reclaim` (mm/vmscan.c, since v3.6) holds a
//! direct reclaimer on `pfmemalloc_wait` while the node's free pages are at or below
//! half its min watermarks, until kswapd restores them (`pgscan_direct_throttle`).
//!
//! The three switch values (`kernel.reclaim_throttle`):
//! - `congestion_wait`: kswapd meeting pages tagged for immediate reclaim sleeps
//!   `congestion_wait(HZ/10)`; direct reclaim on a congested lruvec calls
//!   `wait_iff_congested(HZ/10)`; too many isolated pages `msleep(100)`; the allocator
//!   with no progress and mostly dirty memory `congestion_wait(HZ/10)`. Since blk-mq no
//!   device marks itself congested, so the first always sleeps its full timeout and the
//!   second never sleeps.
//! - `throttle`: the series as merged in v5.16-rc1: WRITEBACK HZ/10 (also for direct
//!   reclaim on a congested lruvec), ISOLATED HZ/50, NOPROGRESS HZ/2.
//! - `throttle-current`: today's: the CONGESTED reason for the congested-lruvec site, a
//!   1-jiffy NOPROGRESS/CONGESTED sleep skipped unless over half the reclaimable pages
//!   are dirty or under writeback (`skip_throttle_noprogress`).

use super::{Current, Mm, Out};
use crate::trace::Tp;
use std::collections::{BTreeMap, VecDeque};

/// `kernel.reclaim_throttle`: which kernel's sleeps reclaim takes (see the module
/// doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReclaimThrottle {
    /// ≤ v5.15: `congestion_wait` / `wait_iff_congested`.
    CongestionWait,
    /// v5.16-rc1's `reclaim_throttle`.
    #[default]
    Throttle,
    /// Today's `reclaim_throttle`.
    ThrottleCurrent,
}

/// Why a reclaimer sleeps: the four `vmscan_throttle_state` reasons and the legacy
/// sleeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Sleep {
    /// VMSCAN_THROTTLE_WRITEBACK.
    Writeback,
    /// VMSCAN_THROTTLE_ISOLATED.
    Isolated,
    /// VMSCAN_THROTTLE_NOPROGRESS.
    Noprogress,
    /// VMSCAN_THROTTLE_CONGESTED.
    Congested,
    /// `congestion_wait(BLK_RW_ASYNC, HZ/10)`.
    CongestionWait,
    /// `wait_iff_congested(BLK_RW_ASYNC, HZ/10)`.
    WaitIffCongested,
    /// `msleep(100)` in the legacy `shrink_inactive_list` (too many isolated).
    Msleep,
    /// `throttle_direct_reclaim`: on `pgdat->pfmemalloc_wait` until kswapd restores
    /// half the min watermarks (no timeout; no tracepoint, `pgscan_direct_throttle`
    /// counts the entries).
    PfmemallocWait,
}

impl Sleep {
    pub const ALL: [Sleep; 8] = [
        Sleep::Writeback,
        Sleep::Isolated,
        Sleep::Noprogress,
        Sleep::Congested,
        Sleep::CongestionWait,
        Sleep::WaitIffCongested,
        Sleep::Msleep,
        Sleep::PfmemallocWait,
    ];

    /// As the kernel prints it: the reason flag, or the legacy tracepoint's name.
    pub fn name(self) -> &'static str {
        match self {
            Sleep::Writeback => "VMSCAN_THROTTLE_WRITEBACK",
            Sleep::Isolated => "VMSCAN_THROTTLE_ISOLATED",
            Sleep::Noprogress => "VMSCAN_THROTTLE_NOPROGRESS",
            Sleep::Congested => "VMSCAN_THROTTLE_CONGESTED",
            Sleep::CongestionWait => "writeback_congestion_wait",
            Sleep::WaitIffCongested => "writeback_wait_iff_congested",
            Sleep::Msleep => "msleep_too_many_isolated",
            Sleep::PfmemallocWait => "throttle_direct_reclaim",
        }
    }

    /// The `reclaim_wait[]` queue, for the reclaim_throttle reasons, and
    /// `pfmemalloc_wait` after them: the sleeps a wake-up can end.
    fn queue(self) -> Option<usize> {
        match self {
            Sleep::Writeback => Some(0),
            Sleep::Isolated => Some(1),
            Sleep::Noprogress => Some(2),
            Sleep::Congested => Some(3),
            Sleep::PfmemallocWait => Some(PFMEMALLOC_QUEUE),
            _ => None,
        }
    }
}

/// A task asleep in reclaim.
#[derive(Debug, Clone, Copy)]
struct Sleeper {
    kind: Sleep,
    /// The node whose queue it is on.
    nid: usize,
    start_ns: u64,
    timeout_ns: u64,
    /// A wake-up was already sent (one is enough).
    woken: bool,
}

/// Pages a reclaimer holds isolated from the LRU while it works through them.
#[derive(Debug, Clone, Copy)]
struct Isolation {
    start_ns: u64,
    end_ns: u64,
    nr_pages: u64,
    file: bool,
}

/// One kind of sleep's record: how many, how long (the seed's tables).
#[derive(Debug, Clone, Default)]
pub struct SleepStats {
    pub count: u64,
    /// Ended by a wake-up before the timeout.
    pub woken_early: u64,
    /// Slept the whole timeout.
    pub timed_out: u64,
    /// usec_delayed (jiffy-granular, as the tracepoint reports it) → count.
    pub usec_delayed: BTreeMap<u64, u64>,
}

/// The sleeps in reclaim: who sleeps how, each node's throttling state, and the
/// record of every sleep.
#[derive(Debug, Clone, Default)]
pub struct ReclaimWait {
    /// Per task: the sleep it is in.
    sleeping: Vec<Option<Sleeper>>,
    /// Per task: woken from `pfmemalloc_wait` with the reserves restored, so the
    /// reclaim it goes on with does not check them again (the kernel's task leaves
    /// `wait_event` with the condition true and reclaims).
    pfmemalloc_woken: Vec<bool>,
    /// Per node, its pgdat's part.
    nodes: Vec<NodeWait>,
    /// Every node's sleeps, by kind.
    pub stats: BTreeMap<Sleep, SleepStats>,
}

/// A node's throttling state (`pgdat->reclaim_wait[]`, `pfmemalloc_wait`,
/// `nr_writeback_throttled`, `nr_reclaim_start`, NR_THROTTLED_WRITTEN) plus its
/// NR_ISOLATED_* over time.
#[derive(Debug, Clone, Default)]
pub struct NodeWait {
    /// Tasks on each `reclaim_wait[reason]` and on `pfmemalloc_wait`, in the order
    /// they slept.
    queues: [Vec<usize>; 5],
    /// `nr_writeback_throttled`.
    pub nr_writeback_throttled: u64,
    /// `nr_reclaim_start`: NR_THROTTLED_WRITTEN when the first WRITEBACK sleeper began.
    nr_reclaim_start: u64,
    /// NR_THROTTLED_WRITTEN.
    pub nr_throttled_written: u64,
    /// The isolations not yet forgotten, ordered by `end_ns` (ties in the order they
    /// were noted), so the ones over long ago leave from the front and a query stops
    /// at the first that ended before it.
    isolated: VecDeque<Isolation>,
}

/// `pfmemalloc_wait`'s place among the queues.
const PFMEMALLOC_QUEUE: usize = 4;

/// How long a `pfmemalloc_wait` sleep may last: `wait_event_killable` has no timeout,
/// so only a wake-up (or an OOM kill) ends it.
const PFMEMALLOC_WAIT_NS: u64 = u64::MAX / 4;

/// `SWAP_CLUSTER_MAX` pages written per WRITEBACK sleeper before they are woken.
const WRITTEN_PER_SLEEPER: u64 = super::vmscan::SWAP_CLUSTER_MAX;

impl ReclaimWait {
    pub fn new(nr_nodes: usize) -> ReclaimWait {
        ReclaimWait {
            nodes: vec![NodeWait::default(); nr_nodes],
            ..ReclaimWait::default()
        }
    }

    pub fn set_nr_tasks(&mut self, n: usize) {
        self.sleeping = vec![None; n];
        self.pfmemalloc_woken = vec![false; n];
    }

    /// Node `nid`'s part.
    pub fn node(&self, nid: usize) -> &NodeWait {
        &self.nodes[nid]
    }

    /// NR_ISOLATED_{ANON,FILE} of node `nid` as a reclaimer running at `now_ns` sees
    /// it.
    pub fn nr_isolated(&mut self, nid: usize, now_ns: u64, file: bool) -> u64 {
        self.nodes[nid].nr_isolated(now_ns, file)
    }

    /// Records pages of node `nid` held isolated over `[start_ns, end_ns)`.
    pub fn note_isolated(
        &mut self,
        nid: usize,
        start_ns: u64,
        end_ns: u64,
        nr_pages: u64,
        file: bool,
    ) {
        self.nodes[nid].note_isolated(start_ns, end_ns, nr_pages, file);
    }

    /// Whether a task sleeping until `until_ns` can be woken early: it is in a
    /// reclaim_throttle and that is what it sleeps for (not a longer I/O wait).
    pub fn is_wakeable(&self, task: usize, until_ns: u64) -> bool {
        self.sleeping.get(task).copied().flatten().is_some_and(|s| {
            s.kind.queue().is_some() && s.start_ns.saturating_add(s.timeout_ns) >= until_ns
        })
    }
}

impl NodeWait {
    /// NR_ISOLATED_{ANON,FILE} as a reclaimer running at `now_ns` sees it.
    fn nr_isolated(&mut self, now_ns: u64, file: bool) -> u64 {
        self.forget_isolated_before(now_ns);
        // Only entries still held at `now_ns` count, and those are the ledger's end.
        self.isolated
            .iter()
            .rev()
            .take_while(|i| i.end_ns > now_ns)
            .filter(|i| i.file == file && i.start_ns <= now_ns)
            .map(|i| i.nr_pages)
            .sum()
    }

    /// Entries long over cannot matter to anyone still to run: a slice that starts
    /// later starts no earlier than the one at `now_ns` (slices are 100 us by default;
    /// 1 ms leaves room for longer ones and keeps the ledger short).
    fn forget_isolated_before(&mut self, now_ns: u64) {
        let horizon = now_ns.saturating_sub(ISOLATED_MEMORY_NS);
        while self.isolated.front().is_some_and(|i| i.end_ns <= horizon) {
            self.isolated.pop_front();
        }
    }

    /// Records pages held isolated over `[start_ns, end_ns)`, and forgets what is over
    /// by then: only direct reclaim asks ([`Mm::too_many_isolated`]), so a run where
    /// kswapd alone reclaims would otherwise keep every batch it ever isolated.
    fn note_isolated(&mut self, start_ns: u64, end_ns: u64, nr_pages: u64, file: bool) {
        self.forget_isolated_before(start_ns);
        if end_ns > start_ns && nr_pages > 0 {
            // After the entries ending no later (CPUs' clocks differ by about a slice,
            // so that is near the back).
            let at = self.isolated.partition_point(|i| i.end_ns <= end_ns);
            self.isolated.insert(
                at,
                Isolation {
                    start_ns,
                    end_ns,
                    nr_pages,
                    file,
                },
            );
        }
    }
}

/// How long after it ended an isolation is remembered.
const ISOLATED_MEMORY_NS: u64 = 1_000_000;

/// `jiffies_to_usecs` of the jiffies that passed in `ns` (a sleep shorter than a tick
/// reports 0, as the tracepoint does).
fn usec_delayed(ns: u64, jiffy_ns: u64) -> u64 {
    ns / jiffy_ns * (jiffy_ns / 1000)
}

impl Mm {
    fn throttle_task(&self) -> Option<usize> {
        match self.current {
            Current::Task(_) | Current::Kswapd(_) => Some(self.current_task),
            // Other kernel threads are never throttled (kdamond's reclaim_pages does
            // not throttle; kcompactd's compaction gives up its run instead);
            // memory.reclaim actions have no simulated task to put to sleep.
            Current::Flusher | Current::Kdamond(_) | Current::Kcompactd(_) | Current::Admin => None,
        }
    }

    /// `reclaim_throttle(pgdat, reason)` on node `nid`: onto its
    /// `reclaim_wait[reason]`, to sleep until woken or the reason's timeout.
    pub fn reclaim_throttle(&mut self, nid: usize, reason: Sleep) {
        let Some(task) = self.throttle_task() else {
            return;
        };
        if self.blocked_until.is_some() {
            return; // already on its way to sleep
        }
        let jiffy = self.cfg.jiffy_ns();
        let hz = self.cfg.hz;
        let current = self.throttle_mode == ReclaimThrottle::ThrottleCurrent;
        let timeout_ns = match reason {
            Sleep::Writeback => hz / 10 * jiffy,
            Sleep::Isolated => hz / 50 * jiffy,
            Sleep::Noprogress | Sleep::Congested if current => {
                if self.skip_throttle_noprogress(nid) {
                    return; // cond_resched() only
                }
                jiffy
            }
            Sleep::Noprogress => hz / 2 * jiffy,
            _ => unreachable!("not a reclaim_throttle reason"),
        };
        let w = &mut self.reclaim_wait.nodes[nid];
        if reason == Sleep::Writeback {
            w.nr_writeback_throttled += 1;
            if w.nr_writeback_throttled == 1 {
                w.nr_reclaim_start = w.nr_throttled_written;
            }
        }
        w.queues[reason.queue().expect("a reason")].push(task);
        self.sleep(task, nid, reason, timeout_ns);
    }

    /// `congestion_wait(BLK_RW_ASYNC, HZ/10)`: nothing signals congestion, so nothing
    /// ends the sleep early.
    pub fn congestion_wait(&mut self) {
        self.legacy_sleep(
            Sleep::CongestionWait,
            self.cfg.hz / 10 * self.cfg.jiffy_ns(),
        );
    }

    /// `msleep(100)`.
    pub fn msleep_too_many_isolated(&mut self) {
        self.legacy_sleep(Sleep::Msleep, 100_000_000);
    }

    fn legacy_sleep(&mut self, kind: Sleep, timeout_ns: u64) {
        let Some(task) = self.throttle_task() else {
            return;
        };
        if self.blocked_until.is_none() {
            let nid = self.numa_node_id();
            self.sleep(task, nid, kind, timeout_ns);
        }
    }

    /// `wait_iff_congested(BLK_RW_ASYNC, HZ/10)`: no device is marked congested, so it
    /// only reschedules and returns; the tracepoint still fires.
    pub fn wait_iff_congested(&mut self) {
        if self.throttle_task().is_none() {
            return;
        }
        let timeout_ns = self.cfg.hz / 10 * self.cfg.jiffy_ns();
        let nid = self.numa_node_id();
        self.record_sleep(Sleep::WaitIffCongested, nid, timeout_ns, 0);
    }

    fn sleep(&mut self, task: usize, nid: usize, kind: Sleep, timeout_ns: u64) {
        let start_ns = self.clock();
        self.reclaim_wait.sleeping[task] = Some(Sleeper {
            kind,
            nid,
            start_ns,
            timeout_ns,
            woken: false,
        });
        let until_ns = start_ns.saturating_add(timeout_ns);
        self.block_until(until_ns);
        self.throttled_until = Some(until_ns);
    }

    /// Whether `task` sleeps at the end of its reclaim attempt, not part-way through
    /// it: NOPROGRESS comes after the last priority pass made nothing, while the
    /// kernel's WRITEBACK, ISOLATED and CONGESTED sleeps (and the old kernel's
    /// msleep in `too_many_isolated`) are inside `shrink_node` or
    /// `shrink_inactive_list`, after which the same `try_to_free_pages` goes on.
    pub fn sleeps_after_reclaim_attempt(&self, task: usize) -> bool {
        self.reclaim_wait
            .sleeping
            .get(task)
            .and_then(Option::as_ref)
            .is_some_and(|s| s.kind == Sleep::Noprogress)
    }

    /// The simulator runs `task` again (its timer fired or it was woken) at `now_ns`:
    /// end its sleep, as `reclaim_throttle` does after `schedule_timeout` returns.
    pub fn throttle_finish(&mut self, task: usize, cpu: usize, now_ns: u64) {
        let Some(s) = self
            .reclaim_wait
            .sleeping
            .get_mut(task)
            .and_then(Option::take)
        else {
            return;
        };
        let w = &mut self.reclaim_wait.nodes[s.nid];
        if let Some(q) = s.kind.queue() {
            w.queues[q].retain(|&t| t != task);
        }
        if s.kind == Sleep::Writeback {
            w.nr_writeback_throttled -= 1;
        }
        if s.kind == Sleep::PfmemallocWait {
            self.reclaim_wait.pfmemalloc_woken[task] = s.woken;
        }
        let slept_ns = now_ns.saturating_sub(s.start_ns).min(s.timeout_ns);
        let (was_task, was_cpu) = (self.current_task, self.current_cpu);
        let (was_now, was_cpu_ns) = (self.now, self.cpu_ns);
        self.current_task = task;
        self.current_cpu = cpu;
        self.now = now_ns;
        self.cpu_ns = 0;
        self.record_sleep(s.kind, s.nid, s.timeout_ns, slept_ns);
        self.current_task = was_task;
        self.current_cpu = was_cpu;
        self.now = was_now;
        self.cpu_ns = was_cpu_ns;
    }

    /// The tracepoint and the histogram for one finished sleep.
    fn record_sleep(&mut self, kind: Sleep, nid: usize, timeout_ns: u64, slept_ns: u64) {
        let jiffy = self.cfg.jiffy_ns();
        let usec_timeout = timeout_ns / 1000;
        let delayed = usec_delayed(slept_ns, jiffy);
        let st = self.reclaim_wait.stats.entry(kind).or_default();
        st.count += 1;
        if slept_ns >= timeout_ns {
            st.timed_out += 1;
        } else if kind.queue().is_some() {
            st.woken_early += 1;
        }
        *st.usec_delayed.entry(delayed).or_default() += 1;
        match kind {
            Sleep::CongestionWait => trace_event!(
                self,
                Tp::WritebackCongestionWait,
                "usec_timeout={usec_timeout} usec_delayed={delayed}"
            ),
            Sleep::WaitIffCongested => trace_event!(
                self,
                Tp::WritebackWaitIffCongested,
                "usec_timeout={usec_timeout} usec_delayed={delayed}"
            ),
            Sleep::Msleep | Sleep::PfmemallocWait => {}
            // The kernel's format string spells the field "usect_delayed".
            _ => trace_event!(
                self,
                Tp::VmscanThrottled,
                "nid={nid} usec_timeout={usec_timeout} usect_delayed={delayed} reason={}",
                kind.name()
            ),
        }
    }

    /// Wakes every task on node `nid`'s `reclaim_wait[reason]` (`wake_up`; the
    /// sleepers are not exclusive waiters, so all of them).
    pub fn wake_throttled(&mut self, nid: usize, reason: Sleep) {
        let q = reason.queue().expect("a reason");
        if self.reclaim_wait.nodes[nid].queues[q].is_empty() {
            return;
        }
        let at = self.clock();
        for i in 0..self.reclaim_wait.nodes[nid].queues[q].len() {
            let task = self.reclaim_wait.nodes[nid].queues[q][i];
            if let Some(s) = self.reclaim_wait.sleeping[task].as_mut() {
                if !s.woken {
                    s.woken = true;
                    self.out.push(Out::WakeTask { task, at });
                }
            }
        }
    }

    /// `acct_reclaim_writeback`: page `pfn` finished writeback. Once its node's
    /// WRITEBACK sleepers have seen SWAP_CLUSTER_MAX pages each written there since
    /// the first of them slept, wake them.
    pub fn acct_reclaim_writeback(&mut self, pfn: super::page::Pfn) {
        let nid = self.pfn_to_nid(pfn);
        let w = &mut self.reclaim_wait.nodes[nid];
        if w.nr_writeback_throttled == 0 {
            return;
        }
        w.nr_throttled_written += 1;
        let written = w.nr_throttled_written - w.nr_reclaim_start;
        if written > WRITTEN_PER_SLEEPER * w.nr_writeback_throttled {
            self.wake_throttled(nid, Sleep::Writeback);
        }
    }

    /// `skip_throttle_noprogress`: don't sleep if kswapd gave up on node `nid` (OOM
    /// is near), or unless over half the node's reclaimable pages wait for writeback.
    pub fn skip_throttle_noprogress(&self, nid: usize) -> bool {
        if self.kswapd[nid].failures >= super::kswapd::MAX_KSWAPD_FAILURES {
            return true;
        }
        let anon = self.can_reclaim_anon_pages(nid);
        let zones = self.node_zones(nid);
        let reclaimable: u64 = self.zones[zones.clone()]
            .iter()
            .filter(|z| z.is_managed())
            .map(|z| z.reclaimable_pages(anon))
            .sum();
        let write_pending: u64 = self.wb.nr_write_pending[zones].iter().sum();
        2 * write_pending <= reclaimable
    }

    /// `too_many_isolated` (shrink_inactive_list's) on node `nid`: direct reclaim
    /// only; more pages of the type isolated on the node than an eighth of its
    /// inactive list (GFP_KERNEL-like callers). When not, it wakes the node's
    /// ISOLATED sleepers.
    pub fn too_many_isolated(&mut self, nid: usize, file: bool) -> bool {
        if self.is_kswapd() || !matches!(self.current, Current::Task(_)) {
            return false;
        }
        use super::page::lru;
        let inactive = self.node_lru_pages(
            nid,
            if file {
                lru::INACTIVE_FILE
            } else {
                lru::INACTIVE_ANON
            },
        ) >> 3;
        let now = self.clock();
        let isolated = self.reclaim_wait.nr_isolated(nid, now, file);
        let too_many = isolated > inactive;
        if !too_many && self.throttle_mode != ReclaimThrottle::CongestionWait {
            self.wake_throttled(nid, Sleep::Isolated);
        }
        too_many
    }

    /// `allow_direct_reclaim` (`pfmemalloc_watermark_ok` before v4.11): the free pages
    /// of the zones up to ZONE_NORMAL that have reclaimable pages (NR_FREE_PAGES, the
    /// counter) above half their min watermarks, the PF_MEMALLOC reserves. Always
    /// once kswapd gave up on the node. When not, wakes the node's kswapd if it
    /// sleeps.
    pub fn allow_direct_reclaim(&mut self, nid: usize) -> bool {
        if !self.pfmemalloc_reserves_ok(nid) {
            use super::kswapd::KswapdState;
            if matches!(
                self.kswapd[nid].state,
                KswapdState::Sleeping | KswapdState::Napping { .. }
            ) {
                let k = &mut self.kswapd[nid];
                k.highest_zoneidx = Some(k.highest_zoneidx.map_or(super::zone::ZONE_NORMAL, |z| {
                    z.min(super::zone::ZONE_NORMAL)
                }));
                self.out.push(Out::WakeKswapd {
                    nid,
                    at: self.clock(),
                });
            }
            return false;
        }
        true
    }

    /// `allow_direct_reclaim`'s test of node `nid`, without the wake-up.
    fn pfmemalloc_reserves_ok(&self, nid: usize) -> bool {
        if self.kswapd[nid].failures >= super::kswapd::MAX_KSWAPD_FAILURES {
            return true;
        }
        let anon = self.can_reclaim_anon_pages(nid);
        let (mut reserve, mut free) = (0, 0);
        for zi in self.node_zones(nid).take(super::zone::ZONE_NORMAL + 1) {
            let z = &self.zones[zi];
            if !z.is_managed() || z.reclaimable_pages(anon) == 0 {
                continue;
            }
            reserve += z.wmark(super::zone::WMARK_MIN);
            free += self.zone_page_state_free(zi);
        }
        // No reserves (an unexpected configuration): do not throttle.
        reserve == 0 || free > reserve / 2
    }

    /// `throttle_direct_reclaim`, at the top of `try_to_free_pages`: a task (kernel
    /// threads are not throttled) whose first node in the zonelist (`nodes[0]`, the
    /// nodes `shrink_zones` would visit) has used up half its PF_MEMALLOC reserves
    /// counts `pgscan_direct_throttle` and sleeps on that node's `pfmemalloc_wait`
    /// until its kswapd has restored them (GFP_HIGHUSER_MOVABLE has __GFP_FS: `wait_event_killable`, no
    /// timeout). True if it now sleeps; it reclaims once woken (the allocation is
    /// retried then, and that reclaim skips this check, as the woken task's does).
    pub fn throttle_direct_reclaim(&mut self, nodes: &[usize]) -> bool {
        let Current::Task(_) = self.current else {
            return false;
        };
        let task = self.current_task;
        if std::mem::take(&mut self.reclaim_wait.pfmemalloc_woken[task]) {
            return false;
        }
        let Some(&nid) = nodes.first() else {
            return false;
        };
        if self.blocked_until.is_some() || self.allow_direct_reclaim(nid) {
            return false;
        }
        self.count(crate::vm_event_item::Ev::PgscanDirectThrottle, 1);
        self.reclaim_wait.nodes[nid].queues[PFMEMALLOC_QUEUE].push(task);
        self.sleep(task, nid, Sleep::PfmemallocWait, PFMEMALLOC_WAIT_NS);
        true
    }

    /// Node `nid`'s kswapd's wake-up of its `pfmemalloc_wait` (after each
    /// `balance_pgdat` pass, and in `prepare_kswapd_sleep`): the sleepers recheck
    /// `allow_direct_reclaim`, so they are woken only once it holds.
    pub fn wake_pfmemalloc_waiters(&mut self, nid: usize) {
        if !self.reclaim_wait.nodes[nid].queues[PFMEMALLOC_QUEUE].is_empty()
            && self.pfmemalloc_reserves_ok(nid)
        {
            self.wake_throttled(nid, Sleep::PfmemallocWait);
        }
    }

    /// A page came without reclaim: a pending "woken with the reserves restored" is
    /// spent.
    pub fn pfmemalloc_wake_spent(&mut self, task: usize) {
        if let Some(w) = self.reclaim_wait.pfmemalloc_woken.get_mut(task) {
            *w = false;
        }
    }

    /// `consider_reclaim_throttle`, after each `shrink_zones` pass of
    /// `do_try_to_free_pages`, on the first node shrunk (`sc.nid`): progress above
    /// 12.5 % efficiency wakes its NOPROGRESS sleepers; global direct reclaim that got
    /// nothing at priority 1 sleeps there.
    pub fn consider_reclaim_throttle(&mut self, sc: &super::vmscan::ScanControl) {
        if self.throttle_mode == ReclaimThrottle::CongestionWait {
            return;
        }
        if sc.nr_reclaimed > sc.nr_scanned >> 3 {
            self.wake_throttled(sc.nid, Sleep::Noprogress);
            return;
        }
        if self.is_kswapd() || sc.target != 0 {
            return;
        }
        if sc.priority == 1 && sc.nr_reclaimed == 0 {
            self.reclaim_throttle(sc.nid, Sleep::Noprogress);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// HZ=250 (4 ms jiffies); three tasks asleep-able in reclaim.
    fn mm(mode: ReclaimThrottle) -> Mm {
        let mut mm = Mm::new(super::super::Config {
            hz: 250,
            reclaim_throttle: mode,
            ..crate::test_util::config(256)
        });
        mm.set_nr_tasks(3);
        mm
    }

    /// Task `task` enters the kernel at `now_ns` and throttles for `reason`.
    fn throttle(mm: &mut Mm, task: usize, now_ns: u64, reason: Sleep) -> Option<u64> {
        mm.current = Current::Task(task);
        mm.current_task = task;
        mm.now = now_ns;
        mm.cpu_ns = 0;
        mm.blocked_until = None;
        mm.reclaim_throttle(0, reason);
        mm.blocked_until
    }

    /// `n` pages of node 0 finish writeback.
    fn written(mm: &mut Mm, n: u64) {
        for _ in 0..n {
            mm.acct_reclaim_writeback(0);
        }
    }

    fn wakes(mm: &mut Mm) -> Vec<(usize, u64)> {
        std::mem::take(&mut mm.out)
            .into_iter()
            .filter_map(|o| match o {
                Out::WakeTask { task, at } => Some((task, at)),
                _ => None,
            })
            .collect()
    }

    /// 256 MiB, all of it ZONE_DMA32, with 64 clean file pages on the LRU (the zone
    /// has reclaimable pages, so its min watermark is a reserve), free pages taken
    /// down to `free` (PF_MEMALLOC allocations may go below min) and the per-CPU
    /// diffs folded, so NR_FREE_PAGES reads exactly `free`.
    fn below_min(free: impl Fn(u64) -> u64) -> (Mm, u64, Vec<u32>) {
        use crate::page_alloc::test_pages::add_pages;
        use crate::page_alloc::GFP_MEMALLOC_NOWAIT;
        use crate::zone::{WMARK_MIN, ZONE_DMA32, ZONE_NORMAL};
        let mut cfg = crate::test_util::config(256);
        cfg.pcp = crate::pcp::PcpVersion::Off;
        let mut mm = crate::test_util::task_mm(cfg);
        assert!(!mm.zones[ZONE_NORMAL].is_managed());
        add_pages(&mut mm, crate::SpaceKind::File, 64, 0);
        let min = mm.zones[ZONE_DMA32].wmark(WMARK_MIN);
        let mut taken = Vec::new();
        mm.in_reclaim = true; // PF_MEMALLOC: past the min watermark
        while mm.zones[ZONE_DMA32].nr_free_pages > free(min) {
            taken.push(mm.alloc_pages(GFP_MEMALLOC_NOWAIT, 0).unwrap());
        }
        mm.in_reclaim = false;
        mm.fold_vm_stat_diffs();
        assert_eq!(mm.zone_page_state_free(ZONE_DMA32), free(min));
        mm.out.clear();
        (mm, min, taken)
    }

    fn direct_reclaim(mm: &mut Mm) -> (u64, Option<u64>) {
        mm.blocked_until = None;
        let got = mm.try_to_free_pages(0, crate::page_alloc::GFP_HIGHUSER_MOVABLE);
        (got, mm.blocked_until)
    }

    fn vm(mm: &Mm, ev: crate::vm_event_item::Ev) -> u64 {
        mm.vmstat.get(ev)
    }

    #[test]
    fn direct_reclaim_waits_at_half_the_min_watermark_until_kswapd_restores_it() {
        use crate::vm_event_item::Ev;
        // Free pages at exactly min/2: not above half the reserve, so throttled.
        let (mut mm, min, mut taken) = below_min(|min| min / 2);
        assert!(min > 100, "a real reserve: {min}");
        let (got, blocked) = direct_reclaim(&mut mm);
        assert_eq!(got, 0);
        assert!(blocked.is_some_and(|t| t > 1_000_000_000_000), "no timeout");
        assert_eq!(vm(&mm, Ev::PgscanDirectThrottle), 1);
        // It reclaimed nothing (no allocstall, nothing scanned) and woke kswapd.
        assert_eq!(
            vm(&mm, Ev::AllocstallNormal) + vm(&mm, Ev::AllocstallDma32),
            0
        );
        assert_eq!(vm(&mm, Ev::PgscanDirect), 0);
        assert!(mm.out.iter().any(|o| matches!(o, Out::WakeKswapd { .. })));
        mm.out.clear();
        // kswapd's check after a pass: min/2 is still not enough.
        mm.wake_pfmemalloc_waiters(0);
        assert!(wakes(&mut mm).is_empty());
        // One page more is: the sleeper is woken.
        mm.free_pages(taken.pop().unwrap(), 0);
        mm.fold_vm_stat_diffs();
        mm.now = 7_000_000;
        mm.wake_pfmemalloc_waiters(0);
        assert_eq!(wakes(&mut mm), vec![(0, 7_000_000)]);
        mm.throttle_finish(0, 0, 7_000_000);
        let st = &mm.reclaim_wait.stats[&Sleep::PfmemallocWait];
        assert_eq!((st.count, st.woken_early, st.timed_out), (1, 1, 0));
        // Back at min/2 before it runs: the woken task reclaims all the same (the
        // kernel's leaves the wait with the condition true and goes on to reclaim).
        mm.in_reclaim = true;
        taken.push(
            mm.alloc_pages(crate::page_alloc::GFP_MEMALLOC_NOWAIT, 0)
                .unwrap(),
        );
        mm.in_reclaim = false;
        mm.fold_vm_stat_diffs();
        let (got, blocked) = direct_reclaim(&mut mm);
        assert!(got > 0 && blocked.is_none(), "{got} {blocked:?}");
        assert_eq!(vm(&mm, Ev::PgscanDirectThrottle), 1);
        assert!(vm(&mm, Ev::PgscanDirect) >= got);
    }

    #[test]
    fn direct_reclaim_goes_on_above_half_the_reserve_for_kernel_threads_and_hopeless_nodes() {
        use crate::vm_event_item::Ev;
        // One page above min/2: reclaims.
        let (mut mm, _, _) = below_min(|min| min / 2 + 1);
        let (got, blocked) = direct_reclaim(&mut mm);
        assert!(got > 0 && blocked.is_none(), "{got} {blocked:?}");
        assert_eq!(vm(&mm, Ev::PgscanDirectThrottle), 0);
        // At min/2, kswapd (a kernel thread) is never throttled...
        let (mut mm, _, _) = below_min(|min| min / 2);
        mm.current = Current::Kswapd(0);
        assert!(!mm.throttle_direct_reclaim(&[0]));
        // ... nor a task once kswapd gave up on the node (MAX_RECLAIM_RETRIES).
        mm.current = Current::Task(0);
        mm.kswapd[0].failures = super::super::kswapd::MAX_KSWAPD_FAILURES;
        assert!(!mm.throttle_direct_reclaim(&[0]));
        mm.kswapd[0].failures -= 1;
        assert!(mm.throttle_direct_reclaim(&[0]));
        assert_eq!(vm(&mm, Ev::PgscanDirectThrottle), 1);
    }

    #[test]
    fn writeback_sleepers_wake_after_32_pages_each() {
        let mut mm = mm(ReclaimThrottle::Throttle);
        // Two tasks sleep on WRITEBACK: HZ/10 = 25 jiffies = 100 ms.
        assert_eq!(throttle(&mut mm, 0, 0, Sleep::Writeback), Some(100_000_000));
        assert_eq!(throttle(&mut mm, 1, 0, Sleep::Writeback), Some(100_000_000));
        assert_eq!(mm.reclaim_wait.node(0).nr_writeback_throttled, 2);
        // Wake-up needs written > 32 × 2: 64 pages are not enough, the 65th is.
        mm.now = 10_000_000;
        written(&mut mm, 64);
        assert!(wakes(&mut mm).is_empty());
        written(&mut mm, 1);
        assert_eq!(wakes(&mut mm), vec![(0, 10_000_000), (1, 10_000_000)]);
        // More completions do not wake them again.
        written(&mut mm, 100);
        assert!(wakes(&mut mm).is_empty());
        // They run 10 ms after sleeping: 2.5 jiffies, reported as 2 (8000 us).
        mm.throttle_finish(0, 0, 10_000_000);
        mm.throttle_finish(1, 1, 10_000_000);
        assert_eq!(mm.reclaim_wait.node(0).nr_writeback_throttled, 0);
        let st = &mm.reclaim_wait.stats[&Sleep::Writeback];
        assert_eq!((st.count, st.woken_early, st.timed_out), (2, 2, 0));
        assert_eq!(st.usec_delayed.get(&8000), Some(&2));
    }

    #[test]
    fn writeback_count_starts_when_the_first_sleeper_sleeps() {
        let mut mm = mm(ReclaimThrottle::Throttle);
        // Pages written while nobody sleeps are not counted.
        written(&mut mm, 1000);
        throttle(&mut mm, 0, 0, Sleep::Writeback);
        written(&mut mm, 32);
        assert!(wakes(&mut mm).is_empty());
        written(&mut mm, 1);
        assert_eq!(wakes(&mut mm).len(), 1);
    }

    #[test]
    fn isolated_sleepers_wake_when_isolation_drops() {
        let mut mm = mm(ReclaimThrottle::Throttle);
        // No file pages on the LRU: an eighth of the inactive list is 0, so any page
        // isolated by another reclaimer is too many. Task 1 holds 32 until t=1000.
        mm.reclaim_wait.note_isolated(0, 0, 1000, 32, true);
        throttle(&mut mm, 0, 0, Sleep::Isolated);
        mm.current = Current::Task(2);
        mm.current_task = 2;
        mm.now = 500;
        assert!(mm.too_many_isolated(0, true));
        assert!(wakes(&mut mm).is_empty());
        // Anon isolation is counted apart.
        assert!(!mm.too_many_isolated(0, false));
        assert_eq!(wakes(&mut mm), vec![(0, 500)]);
        // kswapd is never held back.
        mm.current = Current::Kswapd(0);
        assert!(!mm.too_many_isolated(0, true));
    }

    #[test]
    fn a_sleeper_nothing_wakes_sleeps_the_full_timeout() {
        let mut mm = mm(ReclaimThrottle::Throttle);
        // ISOLATED: HZ/50 = 5 jiffies = 20 ms; no wake-up comes.
        assert_eq!(
            throttle(&mut mm, 0, 1_000, Sleep::Isolated),
            Some(20_001_000)
        );
        mm.throttle_finish(0, 0, 20_001_000);
        let st = &mm.reclaim_wait.stats[&Sleep::Isolated];
        assert_eq!((st.count, st.woken_early, st.timed_out), (1, 0, 1));
        assert_eq!(st.usec_delayed.get(&20_000), Some(&1));
        // NOPROGRESS as merged: HZ/2 = 500 ms.
        assert_eq!(
            throttle(&mut mm, 1, 0, Sleep::Noprogress),
            Some(500_000_000)
        );
    }

    #[test]
    fn noprogress_sleepers_wake_on_another_reclaimers_progress() {
        let mut mm = mm(ReclaimThrottle::Throttle);
        throttle(&mut mm, 0, 0, Sleep::Noprogress);
        // 4 of 32 scanned is exactly 12.5 %: not above it, no wake-up.
        let mut sc = super::super::vmscan::ScanControl::new(32, 1, 0);
        mm.current = Current::Task(1);
        mm.current_task = 1;
        (sc.nr_scanned, sc.nr_reclaimed) = (32, 4);
        mm.consider_reclaim_throttle(&sc);
        assert!(wakes(&mut mm).is_empty());
        sc.nr_reclaimed = 5;
        mm.consider_reclaim_throttle(&sc);
        assert_eq!(wakes(&mut mm), vec![(0, 0)]);
    }

    #[test]
    fn current_kernel_skips_noprogress_sleeps_unless_writeback_dominates() {
        let mut mm = mm(ReclaimThrottle::ThrottleCurrent);
        // Nothing dirty: 2 × 0 <= reclaimable, no sleep at all.
        assert_eq!(throttle(&mut mm, 0, 0, Sleep::Noprogress), None);
        assert_eq!(throttle(&mut mm, 0, 0, Sleep::Congested), None);
        // Over half the reclaimable pages pending writeback: one jiffy (4 ms).
        let reclaimable: u64 = mm.zones.iter().map(|z| z.reclaimable_pages(false)).sum();
        mm.wb.nr_write_pending[1] = reclaimable / 2 + 1;
        assert_eq!(throttle(&mut mm, 0, 0, Sleep::Congested), Some(4_000_000));
        // WRITEBACK and ISOLATED keep their timeouts.
        assert_eq!(throttle(&mut mm, 1, 0, Sleep::Writeback), Some(100_000_000));
        assert_eq!(throttle(&mut mm, 2, 0, Sleep::Isolated), Some(20_000_000));
    }

    #[test]
    fn congestion_wait_always_sleeps_its_timeout() {
        let mut mm = mm(ReclaimThrottle::CongestionWait);
        mm.current = Current::Task(0);
        mm.current_task = 0;
        mm.congestion_wait();
        assert_eq!(mm.blocked_until, Some(100_000_000));
        // Writeback completing does not end it: it is on no wait queue.
        written(&mut mm, 10_000);
        assert!(wakes(&mut mm).is_empty());
        assert!(!mm.reclaim_wait.is_wakeable(0, 100_000_000));
        mm.throttle_finish(0, 0, 100_000_000);
        let st = &mm.reclaim_wait.stats[&Sleep::CongestionWait];
        assert_eq!((st.count, st.timed_out), (1, 1));
        // wait_iff_congested never sleeps: no device is marked congested.
        mm.blocked_until = None;
        mm.wait_iff_congested();
        assert_eq!(mm.blocked_until, None);
        let st = &mm.reclaim_wait.stats[&Sleep::WaitIffCongested];
        assert_eq!(st.usec_delayed.get(&0), Some(&1));
    }

    #[test]
    fn kernel_threads_other_than_kswapd_are_not_throttled() {
        let mut mm = mm(ReclaimThrottle::Throttle);
        mm.current = Current::Flusher;
        mm.reclaim_throttle(0, Sleep::Writeback);
        assert_eq!(mm.blocked_until, None);
        mm.current = Current::Kswapd(0);
        mm.current_task = 2;
        mm.reclaim_throttle(0, Sleep::Writeback);
        assert_eq!(mm.blocked_until, Some(100_000_000));
    }

    /// Each pgdat has its own `reclaim_wait[]` and written-page count: a node's
    /// finished writes wake its WRITEBACK sleepers, not another node's.
    #[test]
    fn each_node_wakes_its_own_writeback_sleepers() {
        let mut cfg = crate::test_util::config(128);
        crate::test_util::two_nodes(&mut cfg);
        let mut mm = Mm::new(cfg);
        mm.set_nr_tasks(2);
        for (task, nid) in [(0, 0), (1, 1)] {
            mm.current = Current::Task(task);
            mm.current_task = task;
            mm.blocked_until = None;
            mm.reclaim_throttle(nid, Sleep::Writeback);
            assert_eq!(mm.reclaim_wait.node(nid).nr_writeback_throttled, 1);
        }
        // SWAP_CLUSTER_MAX pages per sleeper, and one more: 33 of node 1's.
        let node1 = mm.node_start_pfn[1];
        for _ in 0..33 {
            mm.acct_reclaim_writeback(node1);
        }
        assert_eq!(wakes(&mut mm), [(1, 0)]);
        written(&mut mm, 32);
        assert!(wakes(&mut mm).is_empty());
        written(&mut mm, 1);
        assert_eq!(wakes(&mut mm), [(0, 0)]);
    }

    #[test]
    fn usec_delayed_counts_whole_jiffies() {
        // HZ=250: 4 ms jiffies. 3.9 ms is no whole jiffy; 100 ms is 25.
        let jiffy = 4_000_000;
        assert_eq!(usec_delayed(3_900_000, jiffy), 0);
        assert_eq!(usec_delayed(4_000_000, jiffy), 4000);
        assert_eq!(usec_delayed(100_000_000, jiffy), 100_000);
    }

    #[test]
    fn isolation_counts_only_while_held() {
        let mut w = NodeWait::default();
        w.note_isolated(1000, 2000, 32, true);
        w.note_isolated(1500, 2500, 32, true);
        w.note_isolated(1500, 2500, 32, false);
        assert_eq!(w.nr_isolated(999, true), 0);
        assert_eq!(w.nr_isolated(1600, true), 64);
        assert_eq!(w.nr_isolated(1600, false), 32);
        assert_eq!(w.nr_isolated(2000, true), 32);
    }

    /// kswapd's batches alone (no direct reclaimer asks): the ledger holds what the
    /// last millisecond isolated, not every batch of the run.
    #[test]
    fn a_ledger_nobody_asks_stays_short() {
        let mut w = NodeWait::default();
        for k in 0..100_000u64 {
            let start = k * 10_000;
            w.note_isolated(start, start + 50_000, 32, k % 2 == 0);
        }
        // Entries that end within 1 ms of the last start, 10 us apart, and five live.
        assert!(w.isolated.len() <= 106, "{} entries", w.isolated.len());
        assert_eq!(w.nr_isolated(999_990_000 + 1, true), 32 * 2);
    }

    /// The ordered ledger answers as a plain list would that forgets, at each query and
    /// each note, every entry over by more than 1 ms: reclaimers on four CPUs whose
    /// clocks run up to 1.5 ms apart (so some queries come after entries they would
    /// have forgotten).
    #[test]
    fn ordered_ledger_answers_as_the_plain_list() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(13);
        let mut w = NodeWait::default();
        let mut plain: Vec<Isolation> = Vec::new();
        let mut cpu_ns = [0u64; 4];
        for step in 0..100_000 {
            let c = rng.gen_range(0..4);
            let lead = *cpu_ns.iter().max().unwrap();
            cpu_ns[c] = cpu_ns[c].max(lead.saturating_sub(1_500_000)) + rng.gen_range(0..200_000);
            let now = cpu_ns[c];
            let file = rng.gen_bool(0.5);
            if rng.gen_bool(0.5) {
                let end = now + rng.gen_range(0..300_000);
                let pages = rng.gen_range(0..40);
                w.note_isolated(now, end, pages, file);
                let horizon = now.saturating_sub(1_000_000);
                plain.retain(|i| i.end_ns > horizon);
                if end > now && pages > 0 {
                    plain.push(Isolation {
                        start_ns: now,
                        end_ns: end,
                        nr_pages: pages,
                        file,
                    });
                }
            } else {
                let horizon = now.saturating_sub(1_000_000);
                plain.retain(|i| i.end_ns > horizon);
                let want: u64 = plain
                    .iter()
                    .filter(|i| i.file == file && i.start_ns <= now && now < i.end_ns)
                    .map(|i| i.nr_pages)
                    .sum();
                assert_eq!(w.nr_isolated(now, file), want, "step {step}");
                assert_eq!(w.isolated.len(), plain.len(), "step {step}");
            }
        }
    }
}
