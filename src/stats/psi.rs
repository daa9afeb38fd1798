//! Pressure stall information for memory (kernel/sched/psi.c): per-CPU state times,
//! aggregated and averaged the way the kernel does it, for the system and for every
//! cgroup's memory.pressure.
//!
//! Per CPU and group the kernel counts tasks in states (memstall, running,
//! memstall-and-running, iowait) and keeps running times of the states they make:
//! SOME while any task is in a memstall, FULL while some task is in a memstall and no
//! task runs productively (`tasks[NR_RUNNING] == tasks[NR_MEMSTALL_RUNNING]`), NONIDLE
//! while any task is in any of these states (`record_times`). A reader, or the
//! averaging work every 2 s, folds the CPUs' recent times into the group's totals,
//! each CPU weighted by its non-idle jiffies (`collect_percpu_times`), and every
//! `PSI_FREQ` jiffies feeds the period's share into the 10 s/60 s/300 s averages in the
//! scheduler's fixed point (`update_averages`, `calc_avgs`).
//!
//! The simulator reports state changes stamped with their time and CPU, possibly in
//! the future (a slice announces when it ends and where its stalls lie), but never
//! before the engine's clock. [`Psi::advance`] applies everything before the engine's
//! clock in time order; only the announced future waits, in a heap, so memory is
//! O(groups × CPUs) plus what running slices announced: independent of how often
//! anyone reads and how long the run is. A slice's changes (its run, the stalls in
//! it, the sleep it ends in) go into the heap as one batch, sorted, keyed by its next
//! change: the same order of application for a heap entry per slice instead of one
//! per change.
//!
//! Not modelled: the averaging work's own CPU (the kernel keeps rescheduling it on its
//! CPU while other tasks are there; here it is on no CPU, so every CPU counts as
//! "other"), the timer wheel's coarser expiry for long delays (the work runs at the
//! jiffy it asked for), the u32 wrap of the per-CPU times (they are u64 here), the
//! PSI_POLL aggregator (triggers) and the io and cpu resources.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The scheduler's fixed point (include/linux/sched/loadavg.h).
const FSHIFT: u32 = 11;
const FIXED_1: u64 = 1 << FSHIFT;
/// 1/exp(2s/10s), 1/exp(2s/60s), 1/exp(2s/300s) in fixed point (kernel/sched/psi.c).
const EXP_10S: u64 = 1677;
const EXP_60S: u64 = 1981;
const EXP_300S: u64 = 2034;
const EXPS: [u64; 3] = [EXP_10S, EXP_60S, EXP_300S];

const NSEC_PER_SEC: u64 = 1_000_000_000;
const NSEC_PER_USEC: u64 = 1_000;

/// The memory resource's states and PSI_NONIDLE (enum psi_states).
const MEM_SOME: usize = 0;
const MEM_FULL: usize = 1;
const NONIDLE: usize = 2;
const NR_STATES: usize = 3;
/// The states with totals and averages (SOME, FULL).
const NR_STALL_STATES: usize = 2;

/// Task counts (enum psi_task_count).
const NR_IOWAIT: usize = 0;
const NR_MEMSTALL: usize = 1;
const NR_RUNNING: usize = 2;
const NR_MEMSTALL_RUNNING: usize = 3;
const NR_TASK_COUNTS: usize = 4;

/// A change in one CPU's task counts (the TSK_* bits a `psi_task_change` sets or
/// clears: +1 sets, −1 clears).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PsiDelta {
    pub memstall: i8,
    pub running: i8,
    pub memstall_running: i8,
    pub iowait: i8,
}

impl PsiDelta {
    pub const RUN: PsiDelta = PsiDelta {
        memstall: 0,
        running: 1,
        memstall_running: 0,
        iowait: 0,
    };
    /// Running inside a memstall (direct reclaim, kswapd).
    pub const STALL_RUN: PsiDelta = PsiDelta {
        memstall: 1,
        running: 1,
        memstall_running: 1,
        iowait: 0,
    };
    /// A running task entering a memstall (`psi_memstall_enter`).
    pub const MEMSTALL_ENTER: PsiDelta = PsiDelta {
        memstall: 1,
        running: 0,
        memstall_running: 1,
        iowait: 0,
    };
    /// Blocked in a memstall (refault I/O).
    pub const STALL_WAIT: PsiDelta = PsiDelta {
        memstall: 1,
        running: 0,
        memstall_running: 0,
        iowait: 0,
    };
    pub const IOWAIT: PsiDelta = PsiDelta {
        memstall: 0,
        running: 0,
        memstall_running: 0,
        iowait: 1,
    };

    pub fn negated(self) -> PsiDelta {
        PsiDelta {
            memstall: -self.memstall,
            running: -self.running,
            memstall_running: -self.memstall_running,
            iowait: -self.iowait,
        }
    }

    fn counts(self) -> [i32; NR_TASK_COUNTS] {
        let mut c = [0; NR_TASK_COUNTS];
        c[NR_IOWAIT] = self.iowait as i32;
        c[NR_MEMSTALL] = self.memstall as i32;
        c[NR_RUNNING] = self.running as i32;
        c[NR_MEMSTALL_RUNNING] = self.memstall_running as i32;
        c
    }
}

/// One group's state on one CPU (struct psi_group_cpu), for the PSI_AVGS aggregator.
#[derive(Debug, Clone, Copy, Default)]
struct GroupCpu {
    tasks: [i32; NR_TASK_COUNTS],
    state_mask: u8,
    state_start_ns: u64,
    times_ns: [u64; NR_STATES],
    times_prev_ns: [u64; NR_STATES],
}

impl GroupCpu {
    /// `test_state` for the memory states and PSI_NONIDLE.
    fn test_state(&self, s: usize) -> bool {
        let t = &self.tasks;
        match s {
            MEM_SOME => t[NR_MEMSTALL] > 0,
            MEM_FULL => t[NR_MEMSTALL] > 0 && t[NR_RUNNING] == t[NR_MEMSTALL_RUNNING],
            _ => t[NR_IOWAIT] > 0 || t[NR_MEMSTALL] > 0 || t[NR_RUNNING] > 0,
        }
    }

    /// `record_times`: the time since the last change goes to the states it was in.
    fn record_times(&mut self, now_ns: u64) {
        let delta = now_ns.saturating_sub(self.state_start_ns);
        self.state_start_ns = now_ns;
        for s in 0..NR_STATES {
            if self.state_mask & (1 << s) != 0 {
                self.times_ns[s] += delta;
            }
        }
    }

    /// The per-CPU half of `psi_group_change`: new task counts, the time up to now
    /// to the old states, then the new state mask.
    fn change(&mut self, d: PsiDelta, now_ns: u64) {
        for (t, c) in self.tasks.iter_mut().zip(d.counts()) {
            *t += c;
            debug_assert!(*t >= 0, "psi: task underflow");
        }
        let mask = (0..NR_STATES)
            .filter(|&s| self.test_state(s))
            .fold(0u8, |m, s| m | 1 << s);
        self.record_times(now_ns);
        self.state_mask = mask;
    }

    /// `get_recent_times`: each state's time since the last collection, including the
    /// state in progress.
    fn recent_times(&mut self, now_ns: u64) -> [u64; NR_STATES] {
        let mut delta = [0; NR_STATES];
        for (s, d) in delta.iter_mut().enumerate() {
            let mut t = self.times_ns[s];
            if self.state_mask & (1 << s) != 0 {
                t += now_ns.saturating_sub(self.state_start_ns);
            }
            *d = t - self.times_prev_ns[s];
            self.times_prev_ns[s] = t;
        }
        delta
    }
}

/// One cgroup's (or the system's) memory pressure (struct psi_group).
#[derive(Debug, Clone)]
pub struct PsiGroup {
    parent: Option<u32>,
    pcpu: Box<[GroupCpu]>,
    /// `total[PSI_AVGS][SOME, FULL]`: cumulative stall time.
    total_ns: [u64; NR_STALL_STATES],
    /// The part of `total_ns` the averages have taken in.
    avg_total_ns: [u64; NR_STALL_STATES],
    /// `avg[SOME, FULL][10 s, 60 s, 300 s]`: percent in fixed point (FIXED_1 = 1 %).
    avg: [[u64; 3]; NR_STALL_STATES],
    avg_last_update_ns: u64,
    avg_next_update_ns: u64,
    /// `delayed_work_pending(&group->avgs_work)`.
    avgs_work_pending: bool,
}

/// What /proc/pressure/memory (or a cgroup's memory.pressure) shows.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Pressure {
    /// `[SOME, FULL][avg10, avg60, avg300]` in percent, as `psi_show` prints them
    /// (LOAD_INT.LOAD_FRAC: two decimals, truncated).
    pub avg_pct: [[f64; 3]; 2],
    /// `[SOME, FULL]` total stall time in microseconds.
    pub total_us: [u64; 2],
}

/// The jiffies clock of the scenario's HZ (include/linux/jiffies.h).
#[derive(Debug, Clone, Copy)]
struct Jiffies {
    hz: u64,
}

impl Jiffies {
    /// `nsecs_to_jiffies`: exact division when HZ divides a second (100, 250, 1000),
    /// the kernel's `n·9 / ((9·NSEC_PER_SEC + HZ/2) / HZ)` otherwise (300).
    fn nsecs_to_jiffies(self, ns: u64) -> u64 {
        if NSEC_PER_SEC.is_multiple_of(self.hz) {
            ns / (NSEC_PER_SEC / self.hz)
        } else {
            ((ns as u128 * 9) / ((9 * NSEC_PER_SEC + self.hz / 2) / self.hz) as u128) as u64
        }
    }

    /// `jiffies_to_nsecs`: via whole microseconds, as the kernel does.
    fn jiffies_to_nsecs(self, j: u64) -> u64 {
        j * 1_000_000 / self.hz * NSEC_PER_USEC
    }

    /// The value of `jiffies` at `t_ns`.
    fn at(self, t_ns: u64) -> u64 {
        (t_ns as u128 * self.hz as u128 / NSEC_PER_SEC as u128) as u64
    }

    /// When a timer `delay` jiffies from `now_ns` fires: when `jiffies` reaches
    /// `jiffies + delay`.
    fn timer_expiry_ns(self, now_ns: u64, delay: u64) -> u64 {
        let j = (self.at(now_ns) + delay) as u128;
        (j * NSEC_PER_SEC as u128).div_ceil(self.hz as u128) as u64
    }

    /// PSI_FREQ: 2 s and a jiffy.
    fn psi_freq(self) -> u64 {
        2 * self.hz + 1
    }
}

/// A state change or an averaging work due at `t_ns`. Changes come before works of
/// the same time; insertion order among equals (`order`: the kind's rank in the top
/// bit, the sequence number below, so the heap compares two integers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Due {
    t_ns: u64,
    order: u64,
    kind: DueKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DueKind {
    /// `psi_task_change` of a task in `group` on `cpu`.
    Change { cpu: u16, group: u32, d: PsiDelta },
    /// `psi_avgs_work` of `group`.
    AvgsWork { group: u32 },
    /// The next of a batch's changes (`Psi::batches[batch]`, in key order): the heap
    /// holds one entry per batch, keyed as its next change.
    Batch { batch: u32 },
}

impl DueKind {
    fn rank(self) -> u8 {
        match self {
            DueKind::Change { .. } => 0,
            DueKind::AvgsWork { .. } => 1,
            DueKind::Batch { .. } => unreachable!("a batch is keyed by its changes"),
        }
    }
}

impl Due {
    fn key(&self) -> (u64, u64) {
        (self.t_ns, self.order)
    }
}

impl PartialOrd for Due {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Due {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key().cmp(&other.key())
    }
}

/// Adds `due` to a batch in key order. The simulator records a slice's changes in
/// time order (one comparison each); a caller recording intervals (a run's end
/// second, before the stalls inside it) gets them sorted here. Out of line, so that
/// `Psi::push` stays small enough to inline where nothing is batched.
#[inline(never)]
fn insert_sorted(b: &mut Vec<Due>, due: Due) {
    b.push(due);
    let mut i = b.len() - 1;
    while i > 0 && b[i - 1].key() > b[i].key() {
        b.swap(i - 1, i);
        i -= 1;
    }
}

/// A batch's changes in key order, `next` the first not applied.
#[derive(Debug, Clone, Default)]
struct Batch {
    changes: Vec<Due>,
    next: usize,
}

/// Every PSI group of the machine: index 0 is the system (the root cgroup's
/// memory.pressure is /proc/pressure/memory), the others the cgroups, by memcg id.
#[derive(Debug, Clone)]
pub struct Psi {
    groups: Vec<PsiGroup>,
    due: BinaryHeap<Reverse<Due>>,
    seq: u64,
    /// Between [`Psi::begin_batch`] and [`Psi::end_batch`]: the changes recorded.
    batching: Option<Vec<Due>>,
    /// Batches in the heap (a slice's changes, sorted), and the free slots.
    batches: Vec<Batch>,
    free_batches: Vec<u32>,
    spare_batch: Vec<Due>,
    jiffies: Jiffies,
    /// `psi_period`: PSI_FREQ in nanoseconds.
    psi_period_ns: u64,
    /// Everything due before this time has been applied.
    applied_until_ns: u64,
    /// False: every change goes through the heap (the test of applying some at once).
    apply_at_once: bool,
    #[cfg(test)]
    applied_at_once: u64,
}

impl Psi {
    /// Groups for a tree given by each group's parent (`parents[0]` is the root's,
    /// `None`), on `nr_cpus` CPUs with the jiffies of `hz` (`psi_init`, `group_init`).
    pub fn new(nr_cpus: usize, hz: u64, parents: &[Option<usize>]) -> Psi {
        let jiffies = Jiffies { hz };
        let psi_period_ns = jiffies.jiffies_to_nsecs(jiffies.psi_freq());
        let groups = parents
            .iter()
            .map(|p| PsiGroup {
                parent: p.map(|p| p as u32),
                pcpu: vec![GroupCpu::default(); nr_cpus].into_boxed_slice(),
                total_ns: [0; NR_STALL_STATES],
                avg_total_ns: [0; NR_STALL_STATES],
                avg: [[0; 3]; NR_STALL_STATES],
                avg_last_update_ns: 0,
                avg_next_update_ns: psi_period_ns,
                avgs_work_pending: false,
            })
            .collect();
        Psi {
            groups,
            due: BinaryHeap::new(),
            seq: 0,
            batching: None,
            batches: Vec::new(),
            free_batches: Vec::new(),
            spare_batch: Vec::new(),
            jiffies,
            psi_period_ns,
            applied_until_ns: 0,
            apply_at_once: true,
            #[cfg(test)]
            applied_at_once: 0,
        }
    }

    /// The bytes one group takes on `nr_cpus` CPUs (its struct and per-CPU state).
    pub fn group_bytes(nr_cpus: usize) -> usize {
        std::mem::size_of::<PsiGroup>() + nr_cpus * std::mem::size_of::<GroupCpu>()
    }

    /// Records that from `t_ns` on, a task of `group` on `cpu` changes state by `d`.
    /// `t_ns` may lie in the future, never before the last [`Psi::advance`].
    pub fn record(&mut self, t_ns: u64, cpu: usize, group: usize, d: PsiDelta) {
        debug_assert!(t_ns >= self.applied_until_ns, "psi change in the past");
        let kind = DueKind::Change {
            cpu: cpu as u16,
            group: group as u32,
            d,
        };
        self.push(t_ns.max(self.applied_until_ns), kind);
    }

    /// Records a state held over `[start, end)`.
    pub fn interval(&mut self, start_ns: u64, end_ns: u64, cpu: usize, group: usize, d: PsiDelta) {
        if end_ns > start_ns {
            self.record(start_ns, cpu, group, d);
            self.record(end_ns, cpu, group, d.negated());
        }
    }

    #[inline]
    fn push(&mut self, t_ns: u64, kind: DueKind) {
        self.seq += 1;
        debug_assert!(self.seq < 1 << 63);
        let due = Due {
            t_ns,
            order: (kind.rank() as u64) << 63 | self.seq,
            kind,
        };
        match &mut self.batching {
            Some(b) => insert_sorted(b, due),
            None => {
                // A change at the applied time that sorts before everything pending
                // is the next to apply whatever is recorded later (a later change
                // is no earlier and has a higher sequence number): applied now, it
                // skips the heap's push and pop (a slice's start, most often).
                if let DueKind::Change { cpu, group, d } = kind {
                    if self.apply_at_once
                        && t_ns <= self.applied_until_ns
                        && self.due.peek().is_none_or(|top| top.0.key() > due.key())
                    {
                        self.task_change(group as usize, cpu as usize, d, t_ns);
                        #[cfg(test)]
                        {
                            self.applied_at_once += 1;
                        }
                        return;
                    }
                }
                self.due.push(Reverse(due))
            }
        }
    }

    /// From here to [`Psi::end_batch`], changes are recorded as one batch: a slice's
    /// run, its stalls and the sleep it ends in, which would otherwise each take a
    /// heap entry (and the heap's sift, on a heap that many of them make deeper).
    /// The order in which changes apply is the same either way: each keeps its time
    /// and sequence number, and the batch sits in the heap as its earliest change.
    pub fn begin_batch(&mut self) {
        debug_assert!(self.batching.is_none());
        self.batching = Some(std::mem::take(&mut self.spare_batch));
    }

    pub fn end_batch(&mut self) {
        let Some(mut changes) = self.batching.take() else {
            return;
        };
        if changes.len() < 2 {
            self.due.extend(changes.drain(..).map(Reverse));
            self.spare_batch = changes;
            return;
        }
        let first = changes[0];
        let batch = match self.free_batches.pop() {
            Some(i) => {
                // The slot's emptied buffer is the next batch's (no allocation).
                let old = std::mem::replace(&mut self.batches[i as usize].changes, changes);
                self.spare_batch = old;
                i
            }
            None => {
                self.batches.push(Batch { changes, next: 0 });
                (self.batches.len() - 1) as u32
            }
        };
        self.due.push(Reverse(Due {
            kind: DueKind::Batch { batch },
            ..first
        }));
    }

    /// Applies, in time order, every change and runs every averaging work due before
    /// `now_ns`: all of them have been recorded once the engine's clock reached it.
    pub fn advance(&mut self, now_ns: u64) {
        while let Some(&Reverse(top)) = self.due.peek() {
            if top.t_ns >= now_ns {
                break;
            }
            let due = match top.kind {
                DueKind::Batch { batch } => {
                    let b = &mut self.batches[batch as usize];
                    let due = b.changes[b.next];
                    b.next += 1;
                    if let Some(next) = b.changes.get(b.next) {
                        // Re-keyed in place: one sift down instead of a pop and a push.
                        let mut top = self.due.peek_mut().expect("peeked");
                        top.0.t_ns = next.t_ns;
                        top.0.order = next.order;
                    } else {
                        self.due.pop();
                        b.changes.clear();
                        b.next = 0;
                        self.free_batches.push(batch);
                    }
                    due
                }
                _ => {
                    self.due.pop();
                    top
                }
            };
            match due.kind {
                DueKind::Change { cpu, group, d } => {
                    self.task_change(group as usize, cpu as usize, d, due.t_ns)
                }
                DueKind::AvgsWork { group } => self.avgs_work(group as usize, due.t_ns),
                DueKind::Batch { .. } => unreachable!("batches hold changes"),
            }
        }
        self.applied_until_ns = self.applied_until_ns.max(now_ns);
    }

    /// `psi_task_change`: `psi_group_change` on the task's group and every ancestor.
    fn task_change(&mut self, group: usize, cpu: usize, d: PsiDelta, now_ns: u64) {
        let mut g = Some(group);
        while let Some(i) = g {
            self.group_change(i, cpu, d, now_ns);
            g = self.groups[i].parent.map(|p| p as usize);
        }
    }

    /// `psi_group_change`: the CPU's counts and times; wakes the averaging clock.
    fn group_change(&mut self, g: usize, cpu: usize, d: PsiDelta, now_ns: u64) {
        let group = &mut self.groups[g];
        group.pcpu[cpu].change(d, now_ns);
        if !group.avgs_work_pending {
            group.avgs_work_pending = true;
            let at = self
                .jiffies
                .timer_expiry_ns(now_ns, self.jiffies.psi_freq());
            self.push(at, DueKind::AvgsWork { group: g as u32 });
        }
    }

    /// `psi_avgs_work`: fold the CPUs' times, update the averages when due, and run
    /// again at the next update while any CPU was non-idle since the last fold.
    fn avgs_work(&mut self, g: usize, now_ns: u64) {
        let nonidle = self.collect_percpu_times(g, now_ns);
        let group = &mut self.groups[g];
        if now_ns >= group.avg_next_update_ns {
            group.avg_next_update_ns = update_averages(group, now_ns, self.psi_period_ns);
        }
        if nonidle {
            let delay = self
                .jiffies
                .nsecs_to_jiffies(group.avg_next_update_ns - now_ns)
                + 1;
            let at = self.jiffies.timer_expiry_ns(now_ns, delay);
            self.push(at, DueKind::AvgsWork { group: g as u32 });
        } else {
            group.avgs_work_pending = false;
        }
    }

    /// `collect_percpu_times` (PSI_AVGS): each CPU's recent SOME and FULL time,
    /// weighted by its non-idle jiffies, into the group's totals. Returns whether any
    /// CPU was non-idle since the last collection.
    fn collect_percpu_times(&mut self, g: usize, now_ns: u64) -> bool {
        let group = &mut self.groups[g];
        let mut deltas = [0u64; NR_STALL_STATES];
        let mut nonidle_total = 0u64;
        let mut changed_nonidle = false;
        for c in group.pcpu.iter_mut() {
            let times = c.recent_times(now_ns);
            let nonidle = self.jiffies.nsecs_to_jiffies(times[NONIDLE]);
            nonidle_total += nonidle;
            changed_nonidle |= times[NONIDLE] > 0;
            for (d, t) in deltas.iter_mut().zip(times) {
                *d += t * nonidle;
            }
        }
        for (total, d) in group.total_ns.iter_mut().zip(deltas) {
            *total += d / nonidle_total.max(1);
        }
        changed_nonidle
    }

    /// `psi_show`: fold the CPUs' times, update the averages if due, and report. Applies
    /// what is due before `now_ns` first.
    /// `group->total[PSI_AVGS]` in µs (some, full) as last folded in by the averaging
    /// work or a read, without folding anything (what `damos_get_some_mem_psi_total`
    /// reads).
    pub fn avgs_total_us(&self, g: usize) -> [u64; 2] {
        self.groups[g].total_ns.map(|t| t / NSEC_PER_USEC)
    }

    pub fn show(&mut self, g: usize, now_ns: u64) -> Pressure {
        self.advance(now_ns);
        self.collect_percpu_times(g, now_ns);
        let group = &mut self.groups[g];
        if now_ns >= group.avg_next_update_ns {
            group.avg_next_update_ns = update_averages(group, now_ns, self.psi_period_ns);
        }
        Pressure {
            avg_pct: group.avg.map(|a| a.map(load_pct)),
            total_us: group.total_ns.map(|t| t / NSEC_PER_USEC),
        }
    }
}

/// `update_averages`: the stall time since the last update, clamped to the period,
/// into the averages, after decaying them over the periods missed while idle. Returns
/// the next update time, on the fixed `psi_period` grid.
fn update_averages(group: &mut PsiGroup, now_ns: u64, psi_period_ns: u64) -> u64 {
    let expires = group.avg_next_update_ns;
    let missed_periods = if now_ns - expires >= psi_period_ns {
        (now_ns - expires) / psi_period_ns
    } else {
        0
    };
    let avg_next_update = expires + (1 + missed_periods) * psi_period_ns;
    let period = now_ns - (group.avg_last_update_ns + missed_periods * psi_period_ns);
    group.avg_last_update_ns = now_ns;
    for s in 0..NR_STALL_STATES {
        let sample = (group.total_ns[s] - group.avg_total_ns[s]).min(period);
        group.avg_total_ns[s] += sample;
        calc_avgs(&mut group.avg[s], missed_periods, sample, period);
    }
    avg_next_update
}

/// `calc_avgs`: zeroes for the missed periods, then the period's percentage (whole
/// percent, as the kernel divides) into each average.
fn calc_avgs(avg: &mut [u64; 3], missed_periods: u64, time_ns: u64, period_ns: u64) {
    if missed_periods > 0 {
        for (a, e) in avg.iter_mut().zip(EXPS) {
            *a = calc_load_n(*a, e, 0, missed_periods);
        }
    }
    let pct = time_ns * 100 / period_ns * FIXED_1;
    for (a, e) in avg.iter_mut().zip(EXPS) {
        *a = calc_load(*a, e, pct);
    }
}

/// `calc_load` (include/linux/sched/loadavg.h): `load·e + active·(1 − e)`, rounded up
/// while rising.
fn calc_load(load: u64, exp: u64, active: u64) -> u64 {
    let mut newload = load * exp + active * (FIXED_1 - exp);
    if active >= load {
        newload += FIXED_1 - 1;
    }
    newload / FIXED_1
}

/// `fixed_power_int` (kernel/sched/loadavg.c): `x^n` in fixed point with `frac_bits`,
/// rounding each product.
fn fixed_power_int(mut x: u64, frac_bits: u32, mut n: u64) -> u64 {
    let mut result = 1u64 << frac_bits;
    while n > 0 {
        if n & 1 == 1 {
            result = (result * x + (1 << (frac_bits - 1))) >> frac_bits;
        }
        n >>= 1;
        if n == 0 {
            break;
        }
        x = (x * x + (1 << (frac_bits - 1))) >> frac_bits;
    }
    result
}

/// `calc_load_n`: `n` periods of `calc_load` at once.
fn calc_load_n(load: u64, exp: u64, active: u64, n: u64) -> u64 {
    calc_load(load, fixed_power_int(exp, FSHIFT, n), active)
}

/// An average as `psi_show` prints it: `LOAD_INT(x).LOAD_FRAC(x)`.
fn load_pct(x: u64) -> f64 {
    let int = x >> FSHIFT;
    let frac = ((x & (FIXED_1 - 1)) * 100) >> FSHIFT;
    (int * 100 + frac) as f64 / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;
    const S: u64 = 1_000_000_000;

    /// The system group alone, on `nr_cpus` CPUs.
    fn system(nr_cpus: usize, hz: u64) -> Psi {
        Psi::new(nr_cpus, hz, &[None])
    }

    #[test]
    fn some_full_and_nonidle_per_cpu() {
        // One CPU, HZ=1000. A task runs 0..1000 ms; a second task is blocked in a
        // memstall (a refault) 200..500 ms: SOME, not FULL (the first runs). The first
        // task reclaims 600..700 ms (a memstall while running, no other task running
        // productively): SOME and FULL. With one CPU the weighting cancels out.
        let mut p = system(1, 1000);
        p.interval(0, 1000 * MS, 0, 0, PsiDelta::RUN);
        p.interval(200 * MS, 500 * MS, 0, 0, PsiDelta::STALL_WAIT);
        p.interval(600 * MS, 700 * MS, 0, 0, PsiDelta::MEMSTALL_ENTER);
        // A read in the middle of the refault counts its part so far: 200 ms.
        assert_eq!(p.show(0, 400 * MS).total_us, [200_000, 0]);
        // some = 300 + 100 ms, full = 100 ms.
        assert_eq!(p.show(0, 1000 * MS).total_us, [400_000, 100_000]);
        // Idle afterwards: nothing more.
        assert_eq!(p.show(0, 1500 * MS).total_us, [400_000, 100_000]);
    }

    #[test]
    fn cpus_are_weighted_by_their_nonidle_jiffies() {
        // HZ=100 (10 ms jiffies). CPU0: kswapd reclaims 0..1000 ms (some = full =
        // nonidle = 1000 ms, 100 jiffies). CPU1: a task runs 0..505 ms (nonidle 505 ms,
        // 50 whole jiffies, no stall). some = full = 1000 ms × 100 / (100 + 50)
        // = 666.666 ms (weighting by nanoseconds would give 664.45 ms).
        let mut p = system(2, 100);
        p.interval(0, 1000 * MS, 0, 0, PsiDelta::STALL_RUN);
        p.interval(0, 505 * MS, 1, 0, PsiDelta::RUN);
        assert_eq!(p.show(0, 1000 * MS).total_us, [666_666, 666_666]);
        // A stall shorter than a jiffy, alone between two reads: 0 jiffies of
        // non-idle time weigh nothing (the division is by max(0, 1)).
        p.interval(1200 * MS, 1205 * MS, 0, 0, PsiDelta::STALL_RUN);
        assert_eq!(p.show(0, 1300 * MS).total_us, [666_666, 666_666]);
    }

    #[test]
    fn averages_after_periods_of_full_pressure() {
        // HZ=1000: psi_period = 2001 jiffies = 2.001 s. kswapd reclaims on CPU0 from 0 on
        // (some = full = 100 %). The change at 0 wakes the averaging work for
        // 0 + 2001 jiffies; it updates at 2.001 s (period 2.001 s), asks for
        // nsecs_to_jiffies(4.002 − 2.001 s) + 1 = 2002 jiffies: 4.003 s (period
        // 2.002 s), then 2001 jiffies: 6.004 s (period 2.001 s). Each period's sample
        // is clamped to the period: 100 %, pct = 100 × 2048 = 204800.
        // calc_load(load, e, 204800) = (load·e + 204800·(2048 − e) + 2047) / 2048:
        //   avg10:  0 → (0 + 75980800 + 2047) / 2048 = 37100
        //           → (37100·1677 + 75980800 + 2047) / 2048 = 138199547 / 2048 = 67480
        //           → (67480·1677 + 75980800 + 2047) / 2048 = 189146807 / 2048 = 92356
        //   avg60 (e = 1981, 204800·67 = 13721600): 6700, 13181, 19450
        //   avg300 (e = 2034, 204800·14 = 2867200): 1400, 2791, 4172
        // printed as LOAD_INT.LOAD_FRAC: 92356 = 45·2048 + 196, 196·100/2048 = 9 →
        // 45.09; 19450 = 9·2048 + 1018 → 9.49; 4172 = 2·2048 + 76 → 2.03.
        let mut p = system(1, 1000);
        p.record(0, 0, 0, PsiDelta::STALL_RUN);
        let r = p.show(0, 6500 * MS);
        assert_eq!(r.avg_pct, [[45.09, 9.49, 2.03]; 2]);
        assert_eq!(r.total_us, [6_500_000; 2]);
        // After one period only: 37100 = 18·2048 + 236 → 18.11; 6700 → 3.27; 1400 → 0.68.
        let mut p = system(1, 1000);
        p.record(0, 0, 0, PsiDelta::STALL_RUN);
        assert_eq!(p.show(0, 3 * S).avg_pct[0], [18.11, 3.27, 0.68]);
    }

    #[test]
    fn idle_stops_the_clock_and_missed_periods_catch_up() {
        // HZ=1000. kswapd reclaims 0..1 s, then the machine is idle.
        // 2.001 s: sample 1 s of 2.001 s: pct = 100·1e9 / 2.001e9 = 49 (whole percent),
        //   avg10 = (49·2048·371 + 2047) / 2048 = 18179; avg60 3283; avg300 686.
        //   The CPU was non-idle since the last fold: run again at 4.003 s.
        // 4.003 s: sample 0 (period 2.002 s): avg10 = 18179·1677 / 2048 = 14885;
        //   avg60 3175; avg300 681. Nothing was non-idle: the work stops; next
        //   update due at 6.003 s.
        // A read at 30 s: missed_periods = (30 − 6.003) / 2.001 = 11, period =
        //   30 − (4.003 + 11·2.001) = 3.986 s. calc_load_n with
        //   fixed_power_int(1677, 11, 11) = 227 (0.8188^11·2048 = 226.9):
        //   14885·227 / 2048 = 1649, then the period's 0: 1649·1677 / 2048 = 1350.
        //   avg60: fixed_power_int(1981, 11, 11) = 1421: 3175 → 2202 → 2129;
        //   avg300: 1898: 681 → 631 → 626.
        let mut p = system(1, 1000);
        p.interval(0, S, 0, 0, PsiDelta::STALL_RUN);
        let r = p.show(0, 5 * S);
        // 14885 = 7·2048 + 549 → 7.26; 3175 → 1.55; 681 → 0.33.
        assert_eq!(r.avg_pct[0], [7.26, 1.55, 0.33]);
        assert!(!p.groups[0].avgs_work_pending);
        let r = p.show(0, 30 * S);
        // 1350 → 0.65; 2129 = 1·2048 + 81 → 1.03; 626 → 0.30.
        assert_eq!(r.avg_pct[0], [0.65, 1.03, 0.30]);
        assert_eq!(p.groups[0].avg[0], [1350, 2129, 626]);
        assert_eq!(p.groups[0].avg_next_update_ns, 30_015 * MS);
    }

    #[test]
    fn future_changes_wait_for_their_time() {
        // A slice announced at 0 that reclaims 500..1500 ms (HZ=100).
        let mut p = system(1, 100);
        p.interval(500 * MS, 1500 * MS, 0, 0, PsiDelta::STALL_RUN);
        // Nothing yet at 500 ms (the change at 500 ms is not before the read).
        assert_eq!(p.show(0, 500 * MS).total_us, [0, 0]);
        // At 1 s it has begun, not ended: 500 ms so far.
        assert_eq!(p.show(0, 1000 * MS).total_us, [500_000; 2]);
        assert_eq!(p.due.len(), 2, "its end and the averaging work wait");
        assert_eq!(p.show(0, 2000 * MS).total_us, [1_000_000; 2]);
    }

    #[test]
    fn a_change_reaches_its_group_and_every_ancestor() {
        // Tree: 0 (root = system) ← 1 ← 2, and 0 ← 3. A task of group 2 reclaims.
        let mut p = Psi::new(1, 1000, &[None, Some(0), Some(1), Some(0)]);
        p.interval(0, 100 * MS, 0, 2, PsiDelta::STALL_RUN);
        let totals: Vec<[u64; 2]> = (0..4).map(|g| p.show(g, S).total_us).collect();
        assert_eq!(totals, [[100_000; 2], [100_000; 2], [100_000; 2], [0; 2]]);
    }

    #[test]
    fn a_batch_applies_as_its_changes_would_one_by_one() {
        // Slices on 2 CPUs in a 3-group tree, each a run with stalls inside (some
        // touching its start or end) and, now and then, a sleep from its end to a
        // later wake-up; single changes between. Recorded once as separate changes
        // and once batched per slice: every read of every group must agree, and so
        // must the averages.
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
        let parents = [None, Some(0), Some(1)];
        let (mut plain, mut batched) = (Psi::new(2, 250, &parents), Psi::new(2, 250, &parents));
        let mut clock = 0u64;
        let mut wakes: Vec<(u64, usize, usize)> = Vec::new();
        for step in 0..4000 {
            let (cpu, group) = (rng.gen_range(0..2), rng.gen_range(0..3));
            let start = clock + rng.gen_range(0..3) * MS;
            let end = start + rng.gen_range(1..40) * MS;
            let mut stalls = Vec::new();
            let mut t = start;
            while t < end && rng.gen_bool(0.7) {
                let s = t + rng.gen_range(0..3) * MS;
                let e = (s + rng.gen_range(1..5) * MS).min(end);
                if s >= e {
                    break;
                }
                stalls.push((s, e));
                t = e + rng.gen_range(0..2) * MS;
            }
            let sleeps = rng.gen_bool(0.3);
            // One by one as intervals; batched in time order, the run's end after
            // its stalls (as the simulator records a slice): where a stall ends with
            // the run, the two changes at that instant trade places.
            plain.interval(start, end, cpu, group, PsiDelta::RUN);
            for &(s, e) in &stalls {
                plain.interval(s, e, cpu, group, PsiDelta::MEMSTALL_ENTER);
            }
            // Half the batches are recorded in the intervals' order instead, out of
            // time order: the batch sorts them.
            batched.begin_batch();
            if rng.gen_bool(0.5) {
                batched.record(start, cpu, group, PsiDelta::RUN);
                for &(s, e) in &stalls {
                    batched.interval(s, e, cpu, group, PsiDelta::MEMSTALL_ENTER);
                }
                batched.record(end, cpu, group, PsiDelta::RUN.negated());
            } else {
                batched.interval(start, end, cpu, group, PsiDelta::RUN);
                for &(s, e) in &stalls {
                    batched.interval(s, e, cpu, group, PsiDelta::MEMSTALL_ENTER);
                }
            }
            for p in [&mut plain, &mut batched] {
                if sleeps {
                    p.record(end, cpu, group, PsiDelta::STALL_WAIT);
                }
            }
            batched.end_batch();
            if sleeps {
                wakes.push((end + rng.gen_range(0..20) * MS, cpu, group));
            }
            clock += rng.gen_range(0..4) * MS;
            // Wake-ups recorded once the clock reaches them, as the engine does.
            wakes.sort_unstable();
            while wakes.first().is_some_and(|w| w.0 <= clock) {
                let (w, cpu, group) = wakes.remove(0);
                for p in [&mut plain, &mut batched] {
                    p.record(w, cpu, group, PsiDelta::STALL_WAIT.negated());
                }
            }
            if step % 37 == 0 {
                reads_agree(&mut plain, &mut batched, 3, clock);
            }
        }
        ends_agree(&mut plain, &mut batched, 3, clock);
    }

    /// Every group reads the same from `a` and `b` at `at`.
    fn reads_agree(a: &mut Psi, b: &mut Psi, groups: usize, at: u64) {
        for g in 0..groups {
            assert_eq!(a.show(g, at), b.show(g, at), "group {g} at {at}");
        }
    }

    /// Five seconds after `clock`, every group reads the same, and each stalled.
    fn ends_agree(a: &mut Psi, b: &mut Psi, groups: usize, clock: u64) {
        let end = clock + 5 * S;
        reads_agree(a, b, groups, end);
        for g in 0..groups {
            assert!(a.show(g, end).total_us[0] > 0, "the test stalls group {g}");
        }
    }

    #[test]
    fn changes_applied_at_once_read_as_through_the_heap() {
        // As the engine records: the clock moves to an event, everything before it is
        // applied, then slices starting at the clock (or after an interrupt's delay),
        // their stalls and ends, sleeps, and wake-ups at the clock are recorded. One
        // Psi applies a change at the clock that sorts first at once, the other puts
        // every change through the heap: every read must agree.
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(11);
        let parents = [None, Some(0), Some(0)];
        let (mut heap, mut once) = (Psi::new(3, 250, &parents), Psi::new(3, 250, &parents));
        heap.apply_at_once = false;
        let mut clock = 0u64;
        let mut wakes: Vec<(u64, usize, usize)> = Vec::new();
        for step in 0..6000 {
            clock += rng.gen_range(0..3) * MS + rng.gen_range(0..2) * 100;
            for p in [&mut heap, &mut once] {
                p.advance(clock);
            }
            wakes.sort_unstable();
            while wakes.first().is_some_and(|w| w.0 <= clock) {
                let (_, cpu, group) = wakes.remove(0);
                for p in [&mut heap, &mut once] {
                    p.record(clock, cpu, group, PsiDelta::STALL_WAIT.negated());
                }
            }
            let (cpu, group) = (rng.gen_range(0..3), rng.gen_range(0..3));
            let start = clock + if rng.gen_bool(0.8) { 0 } else { 700 };
            let end = start + rng.gen_range(1..30) * MS / 4;
            let stall = rng
                .gen_bool(0.3)
                .then(|| (start, start + (end - start) / 2));
            let sleeps = rng.gen_bool(0.3);
            for p in [&mut heap, &mut once] {
                p.interval(start, end, cpu, group, PsiDelta::RUN);
                if let Some((s, e)) = stall {
                    p.interval(s, e, cpu, group, PsiDelta::MEMSTALL_ENTER);
                }
                if sleeps {
                    p.record(end, cpu, group, PsiDelta::STALL_WAIT);
                }
            }
            if sleeps {
                wakes.push((end + rng.gen_range(0..20) * MS, cpu, group));
            }
            if step % 41 == 0 {
                reads_agree(&mut heap, &mut once, 3, clock);
            }
        }
        ends_agree(&mut heap, &mut once, 3, clock);
        assert_eq!(heap.applied_at_once, 0);
        assert!(once.applied_at_once > 1000, "{}", once.applied_at_once);
    }
}
