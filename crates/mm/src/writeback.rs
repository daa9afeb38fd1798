//! Dirty page-cache pages and their writeback (mm/page-writeback.c, fs/fs-writeback.c;
//! kernel-reference §5.4, §8.5).
//!
//! A file page written with write() is dirty until the flusher (one per device, here
//! one for the storage device) writes it back: periodically every
//! `dirty_writeback_centisecs` for pages older than `dirty_expire_centisecs`, and at
//! once while dirty pages exceed the background threshold. A page under writeback cannot
//! be freed; reclaim that meets one tags it PG_reclaim so that writeback completion
//! rotates it to the inactive tail. Writers are throttled by `balance_dirty_pages`
//! (kernel-reference §5.4; at the end of this file); reclaim_throttle is not here.

use super::memcontrol::PageState;
use super::page::{pg, Pfn};
use super::{Current, Mm};
use crate::page::PAGE_SIZE;
use crate::trace::Tp;
use crate::vm_event_item::Ev;
use std::collections::VecDeque;

/// `MAX_WRITEBACK_PAGES`: the flusher writes at most 4 MiB per chunk.
pub const MAX_WRITEBACK_PAGES: u64 = 1024;

#[derive(Debug, Clone, Default)]
pub struct Writeback {
    /// Pages in the order they were dirtied (with their dirtied time in ms); entries go
    /// stale when a page is cleaned or freed and are skipped then.
    dirty_fifo: VecDeque<(u32, Pfn)>,
    /// NR_FILE_DIRTY.
    pub nr_dirty: u64,
    /// NR_WRITEBACK (file and swap writes in flight).
    pub nr_writeback: u64,
    /// NR_ZONE_WRITE_PENDING per zone id: dirty file pages plus pages under writeback.
    pub nr_write_pending: Vec<u64>,
    /// Of `nr_writeback`, the page-cache pages: the storage bdi_writeback's
    /// WB_WRITEBACK (swap writes are not accounted to a bdi_writeback).
    pub nr_writeback_file: u64,
    /// `writeback_in_progress`: the flusher has background work queued (it stopped
    /// only to let the device drain and runs again).
    pub running: bool,
    /// `WB_start_all`'s work still to do: pages the flusher writes whatever the
    /// thresholds say, set when reclaim wakes it (`wakeup_flusher_threads`).
    pub start_all_pages: u64,
    /// Dirty throttling state: bandwidth estimates, ratelimits, per-task counters.
    pub throttle: DirtyThrottle,
    /// I/O completions, (time, sequence, pfn), one lane per device (the storage's
    /// page-cache writes, the swap device's), each ordered by (time, sequence). A
    /// queued device's writes complete in the order they were submitted, so a lane
    /// grows at its back; completion takes the earlier of the two fronts, the order a
    /// single heap of every write would give.
    inflight: [VecDeque<(u64, u64, Pfn)>; 2],
    seq: u64,
}

impl Writeback {
    /// No dirty pages, nothing in flight, on a machine of `nr_zones` zones.
    pub fn new(nr_zones: usize) -> Writeback {
        Writeback {
            nr_write_pending: vec![0; nr_zones],
            ..Writeback::default()
        }
    }

    pub fn push_inflight(&mut self, done_ns: u64, pfn: Pfn, zone: usize, to_swap: bool) {
        self.nr_write_pending[zone] += 1;
        self.seq += 1;
        let lane = &mut self.inflight[usize::from(to_swap)];
        if lane.back().is_none_or(|last| last.0 <= done_ns) {
            lane.push_back((done_ns, self.seq, pfn));
        } else {
            // A ramdisk's copies can finish out of submission order (a later, shorter
            // one first): after the writes completing no later.
            let at = lane.partition_point(|w| w.0 <= done_ns);
            lane.insert(at, (done_ns, self.seq, pfn));
        }
        self.nr_writeback += 1;
    }

    /// The lane whose front completes first (the lower sequence on a tie).
    fn first_lane(&self) -> Option<usize> {
        match (self.inflight[0].front(), self.inflight[1].front()) {
            (Some(a), Some(b)) => Some(if (b.0, b.1) < (a.0, a.1) { 1 } else { 0 }),
            (Some(_), None) => Some(0),
            (None, Some(_)) => Some(1),
            (None, None) => None,
        }
    }

    /// When the next write completes.
    pub fn next_completion(&self) -> Option<u64> {
        self.first_lane().map(|l| self.inflight[l][0].0)
    }

    /// Takes the next write that has completed by `now_ns` off its lane.
    fn pop_done(&mut self, now_ns: u64) -> Option<Pfn> {
        let lane = self.first_lane()?;
        let (t, _, pfn) = self.inflight[lane][0];
        if t > now_ns {
            return None;
        }
        self.inflight[lane].pop_front();
        Some(pfn)
    }
}

/// What the flusher does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlusherNext {
    /// More to write once the device has drained: run again at this time.
    RunAt(u64),
    /// Nothing urgent: the periodic wake-up.
    SleepUntil(u64),
}

impl Mm {
    /// A dirty page-cache folio migrated to `pfn`: queued for the flusher under its
    /// new frame, in the place its dirtying time gives it (the old frame's entry is
    /// stale now).
    pub(crate) fn requeue_dirty_folio(&mut self, pfn: Pfn) {
        let t = self.frames[pfn as usize].dirtied_ms();
        let fifo = &mut self.wb.dirty_fifo;
        let at = fifo.partition_point(|&(when, _)| when <= t);
        fifo.insert(at, (t, pfn));
    }

    /// `folio_mark_dirty` for a page-cache page.
    pub fn folio_mark_dirty(&mut self, pfn: Pfn) {
        let now_ms = (self.now / 1_000_000) as u32;
        let f = &mut self.frames[pfn as usize];
        if f.test(pg::DIRTY) {
            return;
        }
        f.set(pg::DIRTY);
        f.set_dirtied_ms(now_ms);
        self.wb.dirty_fifo.push_back((now_ms, pfn));
        self.wb.nr_dirty += 1;
        let zi = self.page_zone_id(pfn);
        self.wb.nr_write_pending[zi] += 1;
        self.mod_page_state(pfn, PageState::FileDirty, 1);
        self.count(Ev::NrDirtied, 1);
        // folio_account_dirtied: the dirtier's and its CPU's counts, which decide when
        // balance_dirty_pages_ratelimited looks at the global state.
        if let Current::Task(t) = self.current {
            if let Some(task) = self.wb.throttle.task.get_mut(t) {
                task.nr_dirtied += 1;
            }
        }
        let per_cpu = &mut self.wb.throttle.bdp_ratelimits;
        if per_cpu.len() <= self.current_cpu {
            per_cpu.resize(self.current_cpu + 1, 0);
        }
        per_cpu[self.current_cpu] += 1;
    }

    /// `global_dirtyable_memory`: free pages above the kernel's reserves
    /// (`totalreserve_pages`: each zone's largest lowmem reserve plus its high watermark)
    /// plus the file LRU, + 1 so that it is never 0.
    pub fn global_dirtyable_memory(&self) -> u64 {
        use super::page::lru;
        let totalreserve: u64 = self
            .zones
            .iter()
            .map(|z| {
                (z.lowmem_reserve.iter().max().copied().unwrap_or(0)
                    + z.wmark(super::zone::WMARK_HIGH))
                .min(z.managed_pages)
            })
            .sum();
        let free = self.nr_free_pages();
        free - free.min(totalreserve)
            + self.global_lru_pages(lru::INACTIVE_FILE)
            + self.global_lru_pages(lru::ACTIVE_FILE)
            + 1
    }

    /// `global_dirty_limits` → `domain_dirty_limits`: (background threshold, dirty
    /// threshold) in pages. `vm.dirty_bytes` / `vm.dirty_background_bytes` (rounded up to
    /// pages) when set, else the ratios of dirtyable memory, taken in parts per
    /// PAGE_SIZE as the kernel does; a background threshold at or above the dirty one
    /// becomes half of it. (No RT-task boost: workloads are normal tasks.)
    pub fn dirty_thresholds(&self) -> (u64, u64) {
        let avail = self.global_dirtyable_memory();
        let of_avail = |pct: u64| (pct * PAGE_SIZE / 100) * avail / PAGE_SIZE;
        let thresh = match self.cfg.dirty_bytes {
            0 => of_avail(self.cfg.dirty_ratio),
            bytes => bytes.div_ceil(PAGE_SIZE),
        }
        .min(u32::MAX as u64);
        let mut bg = match self.cfg.dirty_background_bytes {
            0 => of_avail(self.cfg.dirty_background_ratio),
            bytes => bytes.div_ceil(PAGE_SIZE),
        };
        if bg >= thresh {
            bg = thresh / 2;
        }
        (bg, thresh)
    }

    /// Starts writeback of a dirty page-cache page: it is under writeback from now, and
    /// its I/O goes out with the plug (`flush_plug`).
    pub fn start_file_writeback(&mut self, pfn: Pfn, for_reclaim: bool) {
        let f = &mut self.frames[pfn as usize];
        debug_assert!(f.test(pg::DIRTY) && !f.test(pg::WRITEBACK));
        f.clear(pg::DIRTY);
        f.set(pg::WRITEBACK);
        if for_reclaim {
            f.set(pg::RECLAIM);
        }
        self.wb.nr_dirty -= 1;
        let zi = self.page_zone_id(pfn);
        self.wb.nr_write_pending[zi] -= 1;
        self.mod_page_state(pfn, PageState::FileDirty, -1);
        // Clean now: a writer skipping writes to dirty pages must look at it again.
        self.folio_changed(pfn);
        self.plug.push((pfn, false));
        self.count(Ev::PgpgOut, 4);
    }

    /// `blk_finish_plug`: submit the plugged writes, one merged request per device.
    pub fn flush_plug(&mut self) {
        if self.plug.is_empty() {
            return;
        }
        let plug = std::mem::take(&mut self.plug);
        let nr_swap = plug.iter().filter(|(_, s)| *s).count() as u64;
        let nr_file = plug.len() as u64 - nr_swap;
        let now = self.now;
        let swap_done = (nr_swap > 0).then(|| {
            let dev = self
                .swap
                .as_mut()
                .and_then(|s| s.device.as_mut())
                .expect("swap writes need a swap device");
            dev.submit(now, nr_swap, true)
        });
        let file_done = (nr_file > 0).then(|| self.storage.submit(now, nr_file, true));
        self.wb.nr_writeback_file += nr_file;
        for (pfn, to_swap) in plug {
            let done = if to_swap { swap_done } else { file_done };
            let zone = self.page_zone_id(pfn);
            self.wb
                .push_inflight(done.expect("submitted"), pfn, zone, to_swap);
            self.mod_page_state(pfn, PageState::Writeback, 1);
        }
    }

    /// Completes every write that has finished by `now` (`folio_end_writeback`).
    pub fn complete_io(&mut self, now: u64) {
        while let Some(pfn) = self.wb.pop_done(now) {
            self.wb.nr_writeback -= 1;
            self.mod_page_state(pfn, PageState::Writeback, -1);
            let zi = self.page_zone_id(pfn);
            self.wb.nr_write_pending[zi] -= 1;
            if self.frames[pfn as usize].is_file_lru() {
                self.wb.nr_writeback_file -= 1;
            }
            self.end_page_writeback(pfn);
        }
    }

    fn end_page_writeback(&mut self, pfn: Pfn) {
        self.frames[pfn as usize].clear(pg::WRITEBACK);
        self.acct_reclaim_writeback(pfn);
        if self.frames[pfn as usize].is_file_lru() {
            self.count(Ev::NrWritten, 1);
        }
        let f = self.frames[pfn as usize];
        if f.test(pg::ORPHAN) {
            // Its owner died while the I/O was in flight.
            self.lruvec_del_folio(pfn);
            if f.test(pg::SWAPCACHE) {
                self.swap_free(f.swap);
            }
            self.free_pages(pfn, 0);
            return;
        }
        if f.test(pg::DIRTY) && f.is_file_lru() {
            // Redirtied while under writeback: it waits for the flusher again.
            self.wb.dirty_fifo.push_back((f.dirtied_ms(), pfn));
        }
        if f.test(pg::RECLAIM) {
            self.frames[pfn as usize].clear(pg::RECLAIM);
            self.folio_rotate_reclaimable(pfn);
        }
    }

    /// One round of the flusher (`wb_workfn` → `wb_do_writeback`): a start-all's pages
    /// (`wb_check_start_all`), background writeback while over the background
    /// threshold, then expired pages, a chunk at a time, oldest dirtied first.
    pub fn wb_writeback(&mut self) -> FlusherNext {
        self.wb_bandwidth_estimate_start();
        let (bg_thresh, _) = self.dirty_thresholds();
        let expire_ms = (self.cfg.dirty_expire_ns / 1_000_000) as u32;
        let now_ms = (self.now / 1_000_000) as u32;
        let mut written = 0;
        let mut request_free_ns = None;
        while written < MAX_WRITEBACK_PAGES {
            // Every request of the pool in flight: the submitter sleeps for a free one
            // (blk-mq request allocation), which bounds the writes in flight.
            if let Some(free_ns) = self.storage.congested(self.clock()) {
                request_free_ns = Some(free_ns);
                break;
            }
            let Some(&(t, pfn)) = self.wb.dirty_fifo.front() else {
                self.wb.start_all_pages = self.wb.nr_dirty.max(1);
                break;
            };
            let f = &self.frames[pfn as usize];
            // Stale: cleaned, freed, or redirtied later (a newer entry exists).
            if !f.test(pg::DIRTY)
                || f.test(pg::WRITEBACK)
                || f.test(pg::SWAPBACKED)
                || f.dirtied_ms() != t
            {
                self.wb.dirty_fifo.pop_front();
                continue;
            }
            let expired = now_ms.saturating_sub(t) >= expire_ms;
            if !expired && self.wb.nr_dirty <= bg_thresh && self.wb.start_all_pages == 0 {
                break;
            }
            self.wb.dirty_fifo.pop_front();
            self.wb.start_all_pages = self.wb.start_all_pages.saturating_sub(1);
            self.start_file_writeback(pfn, false);
            self.charge(self.cfg.costs.reclaim_page_ns);
            written += 1;
            // Dirty pages merge into requests of up to 1 MiB (max_sectors_kb).
            if written % 256 == 0 {
                self.flush_plug();
            }
        }
        self.flush_plug();
        // do_writepages: a bandwidth estimate every BANDWIDTH_INTERVAL while writing.
        if self.jiffies() > self.wb.throttle.bw_time_stamp + self.bandwidth_interval() {
            self.wb_update_bandwidth(None);
        }
        self.wb.running = written == MAX_WRITEBACK_PAGES || request_free_ns.is_some();
        if let Some(free_ns) = request_free_ns {
            return FlusherNext::RunAt(free_ns);
        }
        if written == MAX_WRITEBACK_PAGES {
            // More to do: go on once the device has worked off most of what is queued.
            let backlog = self.storage.backlog_ns(self.now);
            return FlusherNext::RunAt(self.now + backlog.max(1_000_000) / 2);
        }
        FlusherNext::SleepUntil(self.now + self.cfg.dirty_writeback_interval_ns)
    }
}

// Dirty throttling: balance_dirty_pages (mm/page-writeback.c, v6.x; kernel-reference
// §5.4).
//
// A task that dirties page-cache pages is checked every `nr_dirtied_pause` pages. At or
// below the freerun line, (thresh + bg_thresh) / 2, it is not throttled. Above it, its
// dirty rate is held at `task_ratelimit = dirty_ratelimit × pos_ratio` by sleeping
// `pages_dirtied / task_ratelimit` (at most MAX_PAUSE, 200 ms), where `pos_ratio` falls
// from 2 at freerun through 1 at the setpoint to 0 at the limit (a cubic), and
// `dirty_ratelimit` tracks the device's write bandwidth (estimated every
// BANDWIDTH_INTERVAL from pages written back) divided among the dirtiers. The kernel's
// integer arithmetic is kept, in jiffies and pages per second.
//
// Simplified, for the one global domain and the one storage device:
// - One bdi_writeback. Its share of the threshold (`__wb_calc_thresh`, a flexible
//   proportion of writeback completions) is all of it once any page-cache page has been
//   written back, nothing before; bdi min/max_ratio and strictlimit are not modelled.
// - No memcg domain (cgroup writeback), no RT-task limit boost, no laptop mode, no
//   `dirty_throttle_leaks` (tasks do not exit while holding unthrottled pages).
// - The kernel calls balance_dirty_pages_ratelimited after every page copied and may
//   sleep between two pages of one write(); here it runs once per write(), after all of
//   its pages are dirty, with all of them counted (the pause is proportional to the
//   pages, so the rate is the same). A task can therefore run past its check point by
//   up to one write's pages.
// - Above the hard limit the kernel sleeps MAX_PAUSE and loops before returning to the
//   writer. Here the write completes after one MAX_PAUSE sleep; the task's
//   nr_dirtied_pause is then 0 (as the kernel's wb_min_pause computes it for a zero
//   task_ratelimit), so its next write checks again at once.
// - The bandwidth estimate is updated from balance_dirty_pages and from the flusher's
//   rounds (do_writepages); the delayed update after writeback ends (`bw_dwork`) is
//   left out.

/// `INIT_BW`: a new bdi_writeback's bandwidth guess, 100 MB/s, in pages per second.
pub const INIT_BW: u64 = (100 << 20) / PAGE_SIZE;
/// Fixed-point shift of `pos_ratio` (1.0 = 1 << 10).
const RATELIMIT_CALC_SHIFT: u32 = 10;
/// `DIRTY_POLL_THRESH`: 128 KiB, in pages.
const DIRTY_POLL_THRESH: u64 = 32;
/// A new task's `nr_dirtied_pause` (copy_process: 128 KiB).
pub const INIT_NR_DIRTIED_PAUSE: u64 = 32;
/// The ratelimit while the limit is exceeded: 32 KiB, in pages.
const DIRTY_EXCEEDED_RATELIMIT: u64 = 8;

/// A task's dirty-throttling fields of `task_struct`.
#[derive(Debug, Clone, Copy)]
pub struct TaskDirty {
    /// Pages dirtied since the last balance_dirty_pages.
    pub nr_dirtied: u64,
    /// Check again once `nr_dirtied` reaches this.
    pub nr_dirtied_pause: u64,
    /// Jiffies when the last pause ended (or would have): the reference for the next
    /// one; `None` before the first check (the kernel's 0).
    pub dirty_paused_when: Option<u64>,
}

impl Default for TaskDirty {
    fn default() -> Self {
        TaskDirty {
            nr_dirtied: 0,
            nr_dirtied_pause: INIT_NR_DIRTIED_PAUSE,
            dirty_paused_when: None,
        }
    }
}

/// The storage device's `bdi_writeback` bandwidth and ratelimit estimates, the global
/// `wb_domain`'s hard limit, and the tasks' and CPUs' dirtied-page counts. Rates are in
/// pages per second, times in jiffies.
#[derive(Debug, Clone)]
pub struct DirtyThrottle {
    pub write_bandwidth: u64,
    pub avg_write_bandwidth: u64,
    pub dirty_ratelimit: u64,
    pub balanced_dirty_ratelimit: u64,
    pub bw_time_stamp: u64,
    /// NR_DIRTIED and NR_WRITTEN (the bdi's WB_DIRTIED, WB_WRITTEN) at `bw_time_stamp`.
    pub dirtied_stamp: u64,
    pub written_stamp: u64,
    /// Over both the global and the device's threshold: tasks check every 8 pages.
    pub dirty_exceeded: bool,
    /// `global_wb_domain.dirty_limit`: the hard limit, following the threshold up at
    /// once and down slowly.
    pub dirty_limit: u64,
    pub dirty_limit_tstamp: u64,
    /// `ratelimit_pages`: a CPU's dirtied pages that force a check (thresh / (CPUs × 32),
    /// at least 16), so all CPUs together overshoot by at most 1/32 of the threshold.
    pub ratelimit_pages: u64,
    /// `bdp_ratelimits`, per CPU.
    pub bdp_ratelimits: Vec<u64>,
    /// Per task (sized by `Mm::set_nr_tasks`).
    pub task: Vec<TaskDirty>,
}

impl Default for DirtyThrottle {
    fn default() -> Self {
        DirtyThrottle {
            write_bandwidth: INIT_BW,
            avg_write_bandwidth: INIT_BW,
            dirty_ratelimit: INIT_BW,
            balanced_dirty_ratelimit: INIT_BW,
            bw_time_stamp: 0,
            dirtied_stamp: 0,
            written_stamp: 0,
            dirty_exceeded: false,
            dirty_limit: 0,
            dirty_limit_tstamp: 0,
            ratelimit_pages: 0,
            bdp_ratelimits: Vec::new(),
            task: Vec::new(),
        }
    }
}

/// One look at the global domain (`struct dirty_throttle_control` for the one wb).
#[derive(Debug, Clone, Copy)]
struct Dtc {
    /// NR_FILE_DIRTY + NR_WRITEBACK.
    dirty: u64,
    thresh: u64,
    bg_thresh: u64,
    /// `hard_dirty_limit`: max(thresh, dirty_limit).
    limit: u64,
    wb_thresh: u64,
    /// The device's dirty and under-writeback page-cache pages.
    wb_dirty: u64,
    pos_ratio: u64,
}

impl Dtc {
    /// `dirty_freerun_ceiling`.
    fn freerun(&self) -> u64 {
        (self.thresh + self.bg_thresh) / 2
    }

    fn setpoint(&self) -> u64 {
        (self.freerun() + self.limit) / 2
    }
}

/// `ilog2` (of a value > 0; 0 for 0).
fn ilog2(x: u64) -> u64 {
    x.checked_ilog2().unwrap_or(0) as u64
}

/// `roundup_pow_of_two`.
fn roundup_pow_of_two(x: u64) -> u64 {
    x.max(1).next_power_of_two()
}

/// `pos_ratio_polynom`: 1 + ((setpoint − dirty) / (limit − setpoint))³, clamped to
/// [0, 2], in 1/1024ths: 2.0 at freerun, 1.0 at the setpoint, 0 at the limit.
pub fn pos_ratio_polynom(setpoint: u64, dirty: u64, limit: u64) -> u64 {
    let x = ((setpoint as i64 - dirty as i64) << RATELIMIT_CALC_SHIFT)
        / (limit.saturating_sub(setpoint) | 1) as i64;
    let mut pos_ratio = x;
    pos_ratio = (pos_ratio * x) >> RATELIMIT_CALC_SHIFT;
    pos_ratio = (pos_ratio * x) >> RATELIMIT_CALC_SHIFT;
    pos_ratio += 1 << RATELIMIT_CALC_SHIFT;
    pos_ratio.clamp(0, 2 << RATELIMIT_CALC_SHIFT) as u64
}

/// `dirty_poll_interval`: below the threshold, check again after about the square root
/// of the pages left (a power of two); at or above it, after every page.
pub fn dirty_poll_interval(dirty: u64, thresh: u64) -> u64 {
    if thresh > dirty {
        1 << (ilog2(thresh - dirty) >> 1)
    } else {
        1
    }
}

/// `wb_position_ratio` (without strictlimit): the global control line, scaled by the
/// device's own line around its setpoint (slope 1 / (8 × write_bw)) and its reserve area.
fn wb_position_ratio(d: &Dtc, write_bw: u64) -> u64 {
    if d.dirty >= d.limit {
        return 0;
    }
    let setpoint = d.setpoint();
    let mut pos_ratio = pos_ratio_polynom(setpoint, d.dirty, d.limit);
    let wb_thresh = d.wb_thresh.min(d.thresh).max((d.limit - d.dirty) / 8);
    let x = (wb_thresh << 16) / (d.thresh | 1);
    let wb_setpoint = (setpoint * x) >> 16;
    let span = ((d.thresh.saturating_sub(wb_thresh) + 8 * write_bw) * x) >> 16;
    let x_intercept = wb_setpoint + span;
    if d.wb_dirty < x_intercept - span / 4 {
        pos_ratio = pos_ratio * (x_intercept - d.wb_dirty) / ((x_intercept - wb_setpoint) | 1);
    } else {
        pos_ratio /= 4;
    }
    // The reserve area: keep the device busy when its dirty pages run low.
    let x_intercept = wb_thresh / 2;
    if d.wb_dirty < x_intercept {
        if d.wb_dirty > x_intercept / 8 {
            pos_ratio = pos_ratio * x_intercept / d.wb_dirty;
        } else {
            pos_ratio *= 8;
        }
    }
    pos_ratio
}

impl DirtyThrottle {
    /// `wb_update_write_bandwidth`: the pages written back over the last `elapsed`
    /// jiffies, averaged over a ~3 s window, then smoothed once more (`avg`).
    fn update_write_bandwidth(&mut self, elapsed: u64, written: u64, hz: u64) {
        let period = roundup_pow_of_two(3 * hz);
        let old = self.write_bandwidth;
        let mut avg = self.avg_write_bandwidth;
        let mut bw = (written - written.min(self.written_stamp)) * hz;
        if elapsed > period {
            bw /= elapsed;
            avg = bw;
        } else {
            bw += old * (period - elapsed);
            bw >>= ilog2(period);
            if avg > old && old >= bw {
                avg -= (avg - old) >> 3;
            }
            if avg < old && old <= bw {
                avg += (old - avg) >> 3;
            }
        }
        self.write_bandwidth = bw;
        self.avg_write_bandwidth = avg.max(1);
    }

    /// `update_dirty_limit` via `domain_update_dirty_limit` (every BANDWIDTH_INTERVAL):
    /// the hard limit follows the threshold up in one step, down by 1/32 of the gap.
    fn update_dirty_limit(&mut self, d: &Dtc, now: u64, interval: u64) {
        if now < self.dirty_limit_tstamp + interval {
            return;
        }
        if self.dirty_limit < d.thresh {
            self.dirty_limit = d.thresh;
        } else {
            let target = d.thresh.max(d.dirty);
            if self.dirty_limit > target {
                self.dirty_limit -= (self.dirty_limit - target) >> 5;
            }
        }
        self.dirty_limit_tstamp = now;
    }

    /// `wb_update_dirty_ratelimit`: the balanced rate is the rate tasks were allowed,
    /// scaled by write bandwidth / dirty rate (write_bw / N for N dirtiers);
    /// `dirty_ratelimit` steps towards it only when the position error agrees, in steps
    /// that shrink near the target. Returns (dirty_rate, task_ratelimit) for the trace.
    fn update_dirty_ratelimit(
        &mut self,
        d: &Dtc,
        dirtied: u64,
        elapsed: u64,
        hz: u64,
    ) -> (u64, u64) {
        let setpoint = d.setpoint();
        let write_bw = self.avg_write_bandwidth;
        let mut dirty_ratelimit = self.dirty_ratelimit;
        let dirty_rate = dirtied.saturating_sub(self.dirtied_stamp) * hz / elapsed;
        // +1 helps ramp up from tiny values.
        let task_ratelimit = ((dirty_ratelimit * d.pos_ratio) >> RATELIMIT_CALC_SHIFT) + 1;
        let balanced = (task_ratelimit * write_bw / (dirty_rate | 1)).min(write_bw);
        let mut step = 0;
        if d.dirty < setpoint {
            let x = self
                .balanced_dirty_ratelimit
                .min(balanced)
                .min(task_ratelimit);
            if dirty_ratelimit < x {
                step = x - dirty_ratelimit;
            }
        } else {
            let x = self
                .balanced_dirty_ratelimit
                .max(balanced)
                .max(task_ratelimit);
            if dirty_ratelimit > x {
                step = dirty_ratelimit - x;
            }
        }
        let shift = dirty_ratelimit / (2 * step + 1);
        step = if shift < 64 {
            (step >> shift).div_ceil(8)
        } else {
            0
        };
        if dirty_ratelimit < balanced {
            dirty_ratelimit += step;
        } else {
            dirty_ratelimit = dirty_ratelimit.saturating_sub(step);
        }
        self.dirty_ratelimit = dirty_ratelimit.max(1);
        self.balanced_dirty_ratelimit = balanced;
        (dirty_rate, task_ratelimit)
    }

    /// `wb_max_pause`: at most MAX_PAUSE, less when the device's dirty pages are few
    /// compared with its bandwidth (so that they do not run out during the sleep).
    fn max_pause(&self, wb_dirty: u64, hz: u64) -> u64 {
        let bw = self.avg_write_bandwidth;
        let t = wb_dirty / (1 + bw / roundup_pow_of_two(1 + hz / 8)) + 1;
        t.min(max_pause(hz))
    }

    /// `wb_min_pause`: the shortest pause worth sleeping (a shorter one is carried over
    /// to the next check) and the `nr_dirtied_pause` that aims at ~10 ms pauses (more with
    /// many dirtiers, at least 32 pages when the rate allows).
    fn min_pause(
        &self,
        max_pause: u64,
        task_ratelimit: u64,
        dirty_ratelimit: u64,
        hz: u64,
    ) -> (i64, u64) {
        let hi = ilog2(self.avg_write_bandwidth) as i64;
        let lo = ilog2(self.dirty_ratelimit) as i64;
        let (hz_i, max_pause) = (hz as i64, max_pause as i64);
        let per_hz = roundup_pow_of_two(hz) as i64;
        let rl = dirty_ratelimit as i64;
        // Target: a 10 ms pause for one dirtier, N × 10 ms for 2^N of them.
        let mut t = (hz_i / 100).max(1);
        if hi > lo {
            t += (hi - lo) * (10 * hz_i) / 1024;
        }
        t = t.min(1 + max_pause / 2);
        let mut pages = rl * t / per_hz;
        if pages < DIRTY_POLL_THRESH as i64 {
            t = max_pause;
            pages = rl * t / per_hz;
            if pages > DIRTY_POLL_THRESH as i64 {
                pages = DIRTY_POLL_THRESH as i64;
                t = hz_i * DIRTY_POLL_THRESH as i64 / rl;
            }
        }
        let pause = hz_i * pages / (task_ratelimit as i64 + 1);
        if pause > max_pause {
            t = max_pause;
            pages = task_ratelimit as i64 * t / per_hz;
        }
        let min_pause = if pages >= DIRTY_POLL_THRESH as i64 {
            1 + t / 2
        } else {
            t
        };
        (min_pause, pages as u64)
    }
}

/// `MAX_PAUSE`: max(HZ/5, 1) jiffies (200 ms).
fn max_pause(hz: u64) -> u64 {
    (hz / 5).max(1)
}

impl Mm {
    /// The jiffies clock of the current context.
    pub(super) fn jiffies(&self) -> u64 {
        self.clock() / self.cfg.jiffy_ns()
    }

    /// `BANDWIDTH_INTERVAL`: max(HZ/5, 1) jiffies (200 ms).
    fn bandwidth_interval(&self) -> u64 {
        (self.cfg.hz / 5).max(1)
    }

    /// `writeback_set_ratelimit` (at boot, and when vm.dirty_ratio or vm.dirty_bytes
    /// changes): the hard limit starts at the threshold; `ratelimit_pages` from it.
    pub fn writeback_set_ratelimit(&mut self, nr_cpus: u64) {
        let (_, thresh) = self.dirty_thresholds();
        let th = &mut self.wb.throttle;
        th.dirty_limit = thresh;
        th.ratelimit_pages = (thresh / (nr_cpus.max(1) * 32)).max(16);
    }

    /// `wakeup_flusher_threads(WB_REASON_VMSCAN)` → `wb_start_writeback`: reclaim found
    /// only dirty pages not queued for I/O. Unless a start-all is already pending, the
    /// flusher's next round writes every page dirty then (`wb_check_start_all`: its
    /// work is `get_nr_dirty_pages()`, not bounded by the background threshold).
    pub(super) fn wakeup_flusher_threads(&mut self) {
        if self.wb.start_all_pages == 0 {
            self.wb.start_all_pages = self.wb.nr_dirty;
        }
        self.out.push(super::Out::WakeFlusher { at: self.clock() });
    }

    /// `wb_start_background_writeback`, unless the flusher is already at it.
    fn wb_start_background_writeback(&mut self) {
        if !self.wb.running {
            self.out.push(super::Out::WakeFlusher { at: self.clock() });
        }
    }

    /// `wb_bandwidth_estimate_start`: a flusher starting after more than a second
    /// without writeback starts the estimate afresh, so the idle time does not count.
    fn wb_bandwidth_estimate_start(&mut self) {
        let now = self.jiffies();
        if now.saturating_sub(self.wb.throttle.bw_time_stamp) > self.cfg.hz
            && self.wb.nr_writeback_file == 0
        {
            let (dirtied, written) = (
                self.vmstat.get(Ev::NrDirtied),
                self.vmstat.get(Ev::NrWritten),
            );
            let th = &mut self.wb.throttle;
            th.dirtied_stamp = dirtied;
            th.written_stamp = written;
            th.bw_time_stamp = now;
        }
    }

    /// `__wb_update_bandwidth`: the write bandwidth from the pages written back since
    /// the last update and, from balance_dirty_pages (`d` given), the hard limit and
    /// the dirty ratelimit.
    fn wb_update_bandwidth(&mut self, d: Option<Dtc>) {
        let now = self.jiffies();
        let hz = self.cfg.hz;
        let interval = self.bandwidth_interval();
        let dirtied = self.vmstat.get(Ev::NrDirtied);
        let written = self.vmstat.get(Ev::NrWritten);
        let th = &mut self.wb.throttle;
        let elapsed = now.saturating_sub(th.bw_time_stamp).max(1);
        let rates = d.map(|d| {
            th.update_dirty_limit(&d, now, interval);
            th.update_dirty_ratelimit(&d, dirtied, elapsed, hz)
        });
        th.update_write_bandwidth(elapsed, written, hz);
        th.dirtied_stamp = dirtied;
        th.written_stamp = written;
        th.bw_time_stamp = now;
        if let Some((dirty_rate, task_ratelimit)) = rates {
            if self.tracing(Tp::BdiDirtyRatelimit) {
                let th = &self.wb.throttle;
                let kbps = |pages: u64| pages * (PAGE_SIZE / 1024);
                let line = format!(
                    "bdi storage: write_bw={} awrite_bw={} dirty_rate={} dirty_ratelimit={} \
                     task_ratelimit={} balanced_dirty_ratelimit={} cgroup_ino=1",
                    kbps(th.write_bandwidth),
                    kbps(th.avg_write_bandwidth),
                    kbps(dirty_rate),
                    kbps(th.dirty_ratelimit),
                    kbps(task_ratelimit),
                    kbps(th.balanced_dirty_ratelimit),
                );
                trace_event!(self, Tp::BdiDirtyRatelimit, "{line}");
            }
        }
    }

    /// Whether [`Mm::balance_dirty_pages_ratelimited`] would return now without looking
    /// at the global state or changing anything: the current task has dirtied fewer
    /// than its `nr_dirtied_pause` pages (8 while the limit is exceeded) since its last
    /// check, and its CPU's count is below `ratelimit_pages`. Only dirtying a page
    /// moves either count, so a run of writes that dirty nothing stays quiet
    /// (`workload::skip_fio` skips such writes).
    pub fn dirty_ratelimit_quiet(&self) -> bool {
        let Current::Task(t) = self.current else {
            return true;
        };
        let th = &self.wb.throttle;
        let Some(task) = th.task.get(t) else {
            return true;
        };
        let mut ratelimit = task.nr_dirtied_pause;
        if th.dirty_exceeded {
            ratelimit = ratelimit.min(DIRTY_EXCEEDED_RATELIMIT);
        }
        let cpu_dirtied = th.bdp_ratelimits.get(self.current_cpu).copied();
        task.nr_dirtied < ratelimit && cpu_dirtied.unwrap_or(0) < th.ratelimit_pages
    }

    /// `balance_dirty_pages_ratelimited`, once a write() has dirtied its pages: if the
    /// task has dirtied its `nr_dirtied_pause` pages (8 while the limit is exceeded), or
    /// its CPU `ratelimit_pages`, look at the global state. Returns when the task's
    /// pause ends if it must sleep.
    pub fn balance_dirty_pages_ratelimited(&mut self) -> Option<u64> {
        let Current::Task(t) = self.current else {
            return None;
        };
        let cpu = self.current_cpu;
        let th = &mut self.wb.throttle;
        let task = *th.task.get(t)?;
        let mut ratelimit = task.nr_dirtied_pause;
        if th.dirty_exceeded {
            ratelimit = ratelimit.min(DIRTY_EXCEEDED_RATELIMIT);
        }
        if th.bdp_ratelimits.len() <= cpu {
            th.bdp_ratelimits.resize(cpu + 1, 0);
        }
        let p = &mut th.bdp_ratelimits[cpu];
        if task.nr_dirtied >= ratelimit {
            *p = 0;
        } else if *p >= th.ratelimit_pages {
            *p = 0;
            ratelimit = 0;
        }
        if task.nr_dirtied >= ratelimit {
            self.balance_dirty_pages(t, task.nr_dirtied)
        } else {
            None
        }
    }

    /// `balance_dirty_pages` for task `t`, which dirtied `pages_dirtied` pages since its
    /// last check. Returns when its pause ends, if it must sleep (the kernel's
    /// `io_schedule_timeout`: an I/O wait, not a memory stall).
    fn balance_dirty_pages(&mut self, t: usize, pages_dirtied: u64) -> Option<u64> {
        let hz = self.cfg.hz;
        let now = self.jiffies();
        let interval = self.bandwidth_interval();
        let (bg_thresh, thresh) = self.dirty_thresholds();
        let nr_dirty = self.wb.nr_dirty;
        let mut d = Dtc {
            dirty: nr_dirty + self.wb.nr_writeback,
            thresh,
            bg_thresh,
            limit: thresh.max(self.wb.throttle.dirty_limit),
            wb_thresh: 0,
            wb_dirty: nr_dirty + self.wb.nr_writeback_file,
            pos_ratio: 0,
        };
        if nr_dirty > bg_thresh {
            self.wb_start_background_writeback();
        }
        if d.dirty <= d.freerun() {
            let task = &mut self.wb.throttle.task[t];
            task.dirty_paused_when = Some(now);
            task.nr_dirtied = 0;
            task.nr_dirtied_pause = dirty_poll_interval(d.dirty, d.thresh);
            return None;
        }
        self.wb_start_background_writeback();
        // __wb_calc_thresh: the device's share of the threshold by its share of the
        // writeback completions, all of them for the only device once it has written.
        d.wb_thresh = if self.vmstat.get(Ev::NrWritten) > 0 {
            d.thresh
        } else {
            0
        };
        let th = &mut self.wb.throttle;
        th.dirty_exceeded = d.wb_dirty > d.wb_thresh && d.dirty > d.thresh;
        d.pos_ratio = wb_position_ratio(&d, th.avg_write_bandwidth);
        if now > th.bw_time_stamp + interval {
            self.wb_update_bandwidth(Some(d));
        }
        let th = &self.wb.throttle;
        let dirty_ratelimit = th.dirty_ratelimit;
        let task_ratelimit = (dirty_ratelimit * d.pos_ratio) >> RATELIMIT_CALC_SHIFT;
        let max_pause = th.max_pause(d.wb_dirty, hz);
        let (min_pause, nr_dirtied_pause) =
            th.min_pause(max_pause, task_ratelimit, dirty_ratelimit, hz);
        let task = th.task[t];
        let mut when = now;
        // Above the limit (task_ratelimit 0): the longest pause.
        let (period, pause) = match (hz * pages_dirtied).checked_div(task_ratelimit) {
            None => (max_pause, max_pause as i64),
            Some(period) => {
                let mut pause = period as i64;
                if let Some(w) = task.dirty_paused_when {
                    pause -= now as i64 - w as i64;
                }
                // A pause too short to sleep (or think time since the last one that covers
                // it) is carried over: the reference time moves on by the period instead.
                if pause < min_pause {
                    self.trace_balance_dirty_pages(
                        &d,
                        dirty_ratelimit,
                        task_ratelimit,
                        pages_dirtied,
                        period,
                        pause.min(0),
                    );
                    let task = &mut self.wb.throttle.task[t];
                    if pause < -(hz as i64) {
                        task.dirty_paused_when = Some(now);
                        task.nr_dirtied = 0;
                    } else if period > 0 {
                        task.dirty_paused_when =
                            Some(task.dirty_paused_when.unwrap_or(now) + period);
                        task.nr_dirtied = 0;
                    } else if task.nr_dirtied_pause <= pages_dirtied {
                        task.nr_dirtied_pause += pages_dirtied;
                    }
                    return None;
                }
                if pause > max_pause as i64 {
                    // For an occasional drop of task_ratelimit: the excess, up to another
                    // MAX_PAUSE, is owed to the next period.
                    when += (pause as u64 - max_pause).min(max_pause);
                    (period, max_pause as i64)
                } else {
                    (period, pause)
                }
            }
        };
        self.trace_balance_dirty_pages(
            &d,
            dirty_ratelimit,
            task_ratelimit,
            pages_dirtied,
            period,
            pause,
        );
        let task = &mut self.wb.throttle.task[t];
        task.dirty_paused_when = Some(when + pause as u64);
        task.nr_dirtied = 0;
        task.nr_dirtied_pause = nr_dirtied_pause;
        Some(self.clock() + pause as u64 * self.cfg.jiffy_ns())
    }

    /// The `writeback:balance_dirty_pages` tracepoint (times in ms, rates in KB/s;
    /// `paused` is 0: the simulator returns to the writer after each pause).
    fn trace_balance_dirty_pages(
        &mut self,
        d: &Dtc,
        dirty_ratelimit: u64,
        task_ratelimit: u64,
        dirtied: u64,
        period: u64,
        pause: i64,
    ) {
        if !self.tracing(Tp::BalanceDirtyPages) {
            return;
        }
        let hz = self.cfg.hz;
        let now = self.jiffies();
        let Current::Task(t) = self.current else {
            return;
        };
        let task = self.wb.throttle.task[t];
        let think = task
            .dirty_paused_when
            .map_or(0, |w| (now as i64 - w as i64) * 1000 / hz as i64);
        let setpoint = d.setpoint();
        let kbps = |pages: u64| pages * (PAGE_SIZE / 1024);
        let line = format!(
            "bdi storage: limit={} setpoint={} dirty={} wb_setpoint={} wb_dirty={} \
             dirty_ratelimit={} task_ratelimit={} dirtied={} dirtied_pause={} paused=0 \
             pause={} period={} think={} cgroup_ino=1",
            d.limit,
            setpoint,
            d.dirty,
            setpoint * d.wb_thresh / (d.thresh + 1),
            d.wb_dirty,
            kbps(dirty_ratelimit),
            kbps(task_ratelimit),
            dirtied,
            task.nr_dirtied_pause,
            pause * 1000 / hz as i64,
            period * 1000 / hz,
            think,
        );
        trace_event!(self, Tp::BalanceDirtyPages, "{line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Completions come in the order one heap of every write, keyed (time, sequence),
    /// gives: two devices whose times interleave, one of them (a ramdisk) finishing
    /// some writes before earlier ones, ties across devices, checks at random times.
    #[test]
    fn completions_in_time_then_submission_order() {
        use rand::{Rng, SeedableRng};
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(5);
        let mut wb = Writeback::new(2);
        let mut heap = BinaryHeap::new();
        let (mut seq, mut now, mut queued_ns) = (0u64, 0u64, 0u64);
        for step in 0..50_000u32 {
            now += rng.gen_range(0..4) * 500;
            if rng.gen_bool(0.6) {
                let to_swap = rng.gen_bool(0.5);
                // The file device queues (monotone, coarse times that tie); the swap
                // device is a ramdisk: now + a copy time that varies with the size.
                let done = if to_swap {
                    now + rng.gen_range(1..8) * 1_000
                } else {
                    queued_ns = queued_ns.max(now) + rng.gen_range(0..3) * 1_000;
                    queued_ns
                };
                let pfn = step;
                wb.push_inflight(done, pfn, 0, to_swap);
                seq += 1;
                heap.push(Reverse((done, seq, pfn)));
            } else {
                let check = now + rng.gen_range(0..5_000);
                loop {
                    let want = match heap.peek() {
                        Some(&Reverse((t, _, pfn))) if t <= check => {
                            heap.pop();
                            Some(pfn)
                        }
                        _ => None,
                    };
                    assert_eq!(wb.pop_done(check), want, "step {step}");
                    if want.is_none() {
                        break;
                    }
                }
                assert_eq!(
                    wb.next_completion(),
                    heap.peek().map(|Reverse((t, _, _))| *t)
                );
            }
        }
    }

    /// `dirty_ratelimit_quiet` against `balance_dirty_pages_ratelimited` over every
    /// combination of the counts around their limits: quiet, the call returns None and
    /// leaves the throttle's state as it was; not quiet, it looks at the global state
    /// (a task with pages dirtied has them counted from 0 again).
    #[test]
    fn quiet_dirty_throttling_changes_nothing() {
        use crate::test_util::{config, task_mm};
        let mut mm = task_mm(config(64));
        mm.wb.throttle.ratelimit_pages = 16;
        for exceeded in [false, true] {
            for pause in [0, 4, 8, 9, 32] {
                for dirtied in [0, 3, 7, 8, 9, 31, 32] {
                    for cpu_dirtied in [0, 15, 16, 17] {
                        let th = &mut mm.wb.throttle;
                        th.dirty_exceeded = exceeded;
                        th.bdp_ratelimits = vec![cpu_dirtied];
                        th.task[0] = TaskDirty {
                            nr_dirtied: dirtied,
                            nr_dirtied_pause: pause,
                            dirty_paused_when: None,
                        };
                        let ratelimit = if exceeded { pause.min(8) } else { pause };
                        let quiet = dirtied < ratelimit && cpu_dirtied < 16;
                        let case = (exceeded, pause, dirtied, cpu_dirtied);
                        assert_eq!(mm.dirty_ratelimit_quiet(), quiet, "{case:?}");
                        let before = format!("{:?}", mm.wb.throttle);
                        let r = mm.balance_dirty_pages_ratelimited();
                        if quiet {
                            assert_eq!(r, None, "{case:?}");
                            assert_eq!(format!("{:?}", mm.wb.throttle), before, "{case:?}");
                        } else if dirtied > 0 {
                            assert_eq!(mm.wb.throttle.task[0].nr_dirtied, 0, "{case:?}");
                        }
                    }
                }
            }
        }
    }

    /// A write() to pages cached and dirty, with the writer's throttling quiet,
    /// changes nothing but the clock; cleaning one for writeback is logged for a job
    /// that follows the file, and unsettles it.
    #[test]
    fn a_write_to_dirty_pages_is_settled_until_writeback_cleans_one() {
        use super::super::page::pte;
        use crate::memory::FaultResult;
        use crate::test_util::{config, task_mm};
        use crate::SpaceKind;
        let mut mm = task_mm(config(64));
        let space = mm.add_space(SpaceKind::File, "f".into(), 16, None);
        assert!(
            !mm.filemap_write_settled(space, 0, 4),
            "not open, not cached"
        );
        assert_eq!(mm.filemap_write(space, 0, 4), FaultResult::Done);
        assert!(mm.filemap_write_settled(space, 0, 4));
        assert!(
            !mm.filemap_write_settled(space, 3, 2),
            "page 4 is not cached"
        );
        // 4 pages dirtied of the new task's 32 before it looks: quiet.
        assert!(mm.dirty_ratelimit_quiet());
        let pfns: Vec<_> = (0..4)
            .map(|i| pte::pfn(mm.spaces[space as usize].pte(i)))
            .collect();
        let state = |mm: &Mm| {
            let frames: Vec<_> = pfns.iter().map(|&p| mm.frames[p as usize]).collect();
            format!("{frames:?} {:?} {}", mm.wb.throttle, mm.wb.nr_dirty)
        };
        let before = state(&mm);
        mm.cpu_ns = 0;
        assert_eq!(mm.filemap_write(space, 0, 4), FaultResult::Done);
        assert_eq!(state(&mm), before);
        let c = &mm.cfg.costs;
        assert_eq!(mm.cpu_ns, c.syscall_ns + 4 * c.copy_page_ns);
        // Writeback cleans page 2: logged (only while someone watches), unsettled.
        let from = mm.spaces[space as usize].watch_changes();
        mm.start_file_writeback(pfns[1], false);
        assert_eq!(mm.spaces[space as usize].changes_since(from), Some(&[][..]));
        mm.watching_folios = true;
        mm.start_file_writeback(pfns[2], false);
        assert_eq!(
            mm.spaces[space as usize].changes_since(from),
            Some(&[2u64][..])
        );
        assert!(mm.filemap_write_settled(space, 3, 1));
        assert!(!mm.filemap_write_settled(space, 2, 1));
    }

    #[test]
    fn pos_ratio_curve() {
        // thresh 16384, bg 8192: freerun 12288, limit 16384, setpoint 14336. x is
        // (setpoint - dirty) · 1024 / (2048 | 1), then x³/1024² + 1024.
        let (setpoint, limit) = (14336, 16384);
        // At freerun x = 2048·1024/2049 = 1023: 1023·1023>>10 = 1022, ·1023>>10 = 1021.
        assert_eq!(pos_ratio_polynom(setpoint, 12288, limit), 1024 + 1021);
        assert_eq!(pos_ratio_polynom(setpoint, setpoint, limit), 1024);
        // At the limit x = -1023: 1022, then -1045506 >> 10 = -1022 (floor).
        assert_eq!(pos_ratio_polynom(setpoint, limit, limit), 2);
        // Far below freerun and far above the limit: clamped to [0, 2.0].
        assert_eq!(pos_ratio_polynom(setpoint, 0, limit), 2048);
        assert_eq!(pos_ratio_polynom(setpoint, 2 * limit, limit), 0);
    }

    #[test]
    fn poll_interval_is_about_the_square_root_of_the_margin() {
        // 16384 pages to go: 2^(14 >> 1) = 128; 100: 2^(6 >> 1) = 8; none left: 1.
        assert_eq!(dirty_poll_interval(0, 16384), 128);
        assert_eq!(dirty_poll_interval(16284, 16384), 8);
        assert_eq!(dirty_poll_interval(16384, 16384), 1);
        assert_eq!(dirty_poll_interval(20000, 16384), 1);
    }

    #[test]
    fn pauses_for_one_dirtier_at_50_mb_per_s() {
        // 50 MiB/s = 12800 pages/s, HZ = 1000.
        let th = DirtyThrottle {
            avg_write_bandwidth: 12800,
            dirty_ratelimit: 12800,
            ..DirtyThrottle::default()
        };
        // wb_max_pause: 12800 / roundup_pow_of_two(126) = 100; 15000 / 101 + 1 = 149
        // jiffies; with twice the pages it hits MAX_PAUSE.
        assert_eq!(th.max_pause(15000, 1000), 149);
        assert_eq!(th.max_pause(30000, 1000), 200);
        // wb_min_pause: hi = lo = ilog2(12800) = 13, so a 10 ms target; 12800 · 10 /
        // 1024 = 125 pages (>= 32), whose pause 1000 · 125 / 12801 = 9 fits; min pause
        // 1 + 10/2.
        assert_eq!(th.min_pause(200, 12800, 12800, 1000), (6, 125));
        // Over the limit (task_ratelimit 0): the pause would be 125 s, so t = 200 and
        // 0 pages: check at the next write.
        assert_eq!(th.min_pause(200, 0, 12800, 1000), (200, 0));
    }

    #[test]
    fn write_bandwidth_estimate() {
        let mut th = DirtyThrottle::default();
        assert_eq!(th.write_bandwidth, 25600); // INIT_BW, 100 MiB/s
                                               // 200 jiffies, 2560 pages (12800 pages/s): (2560·1000 + 25600·(4096 − 200)) >> 12
                                               // = 102297600 / 4096 = 24975; avg stays (it only moves towards a bw that has
                                               // moved away from it in the same direction twice).
        th.update_write_bandwidth(200, 2560, 1000);
        assert_eq!((th.write_bandwidth, th.avg_write_bandwidth), (24975, 25600));
        // Longer than the 4096-jiffy window: the plain rate, 51200 pages in 5 s.
        th.written_stamp = 2560;
        th.update_write_bandwidth(5000, 2560 + 51200, 1000);
        assert_eq!((th.write_bandwidth, th.avg_write_bandwidth), (10240, 10240));
    }

    #[test]
    fn hard_limit_follows_the_threshold() {
        let mut th = DirtyThrottle {
            dirty_limit: 16384,
            ..DirtyThrottle::default()
        };
        let d = |thresh, dirty| Dtc {
            dirty,
            thresh,
            bg_thresh: thresh / 2,
            limit: 0,
            wb_thresh: thresh,
            wb_dirty: dirty,
            pos_ratio: 0,
        };
        // Up at once.
        th.update_dirty_limit(&d(20000, 0), 200, 200);
        assert_eq!(th.dirty_limit, 20000);
        // Not again within BANDWIDTH_INTERVAL.
        th.update_dirty_limit(&d(30000, 0), 300, 200);
        assert_eq!(th.dirty_limit, 20000);
        // Down by 1/32 of the gap to max(thresh, dirty): 20000 − 3616/32 = 19887.
        th.update_dirty_limit(&d(10000, 16384), 400, 200);
        assert_eq!(th.dirty_limit, 20000 - (20000 - 16384) / 32);
    }
}
