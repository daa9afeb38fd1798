//! Pressure stall information for memory (kernel/sched/psi.c), per CPU and aggregated
//! the way the kernel aggregates it.
//!
//! Per CPU the kernel counts tasks in states: memstall, running, memstall-and-running,
//! iowait. A CPU is in "some" while any task on it is in memstall, in "full" while
//! some task is in memstall and no task is running productively
//! (`tasks[NR_RUNNING] == tasks[NR_MEMSTALL_RUNNING]`), and non-idle while any task is
//! in any of these states. The system total of a window is
//! `Σ_cpu state_time(cpu) × nonidle(cpu) / Σ_cpu nonidle(cpu)` (`collect_percpu_times`).
//!
//! The simulator reports each task's state changes as deltas stamped with a time and
//! the task's CPU; they are sorted and swept when a window closes.

/// A change in one CPU's task counts.
#[derive(Debug, Clone, Copy)]
pub struct PsiDelta {
    pub memstall: i32,
    pub running: i32,
    pub memstall_running: i32,
    pub iowait: i32,
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
}

#[derive(Debug, Clone, Copy, Default)]
struct CpuState {
    memstall: i32,
    running: i32,
    memstall_running: i32,
    iowait: i32,
    /// Accumulated in the current window.
    some_ns: u64,
    full_ns: u64,
    nonidle_ns: u64,
}

impl CpuState {
    fn account(&mut self, dt: u64) {
        if self.memstall > 0 {
            self.some_ns += dt;
            if self.running == self.memstall_running {
                self.full_ns += dt;
            }
        }
        if self.memstall > 0 || self.running > 0 || self.iowait > 0 {
            self.nonidle_ns += dt;
        }
    }
}

#[derive(Debug, Clone)]
pub struct Psi {
    cpus: Vec<CpuState>,
    pending: Vec<(u64, u64, u16, PsiDelta)>,
    seq: u64,
    /// The end of the last closed window.
    pub window_start_ns: u64,
    pub some_total_ns: u64,
    pub full_total_ns: u64,
    /// The kernel's running averages (10 s, 60 s, 300 s), in percent, updated per
    /// window with its exponential decay.
    pub avg_some: [f64; 3],
    pub avg_full: [f64; 3],
}

impl Psi {
    pub fn new(nr_cpus: usize) -> Psi {
        Psi {
            cpus: vec![CpuState::default(); nr_cpus],
            pending: Vec::new(),
            seq: 0,
            window_start_ns: 0,
            some_total_ns: 0,
            full_total_ns: 0,
            avg_some: [0.0; 3],
            avg_full: [0.0; 3],
        }
    }

    /// Records that from `t_ns` on, `cpu`'s counts change by `d`.
    pub fn record(&mut self, t_ns: u64, cpu: usize, d: PsiDelta) {
        self.seq += 1;
        self.pending.push((t_ns, self.seq, cpu as u16, d));
    }

    /// Records a state held over `[start, end)`.
    pub fn interval(&mut self, start_ns: u64, end_ns: u64, cpu: usize, d: PsiDelta) {
        if end_ns > start_ns {
            self.record(start_ns, cpu, d);
            self.record(end_ns, cpu, d.negated());
        }
    }

    /// Closes the window ending at `until_ns` (every delta before it must have been
    /// recorded). Returns the window's (some, full) stall time in ns.
    pub fn close_window(&mut self, until_ns: u64) -> (u64, u64) {
        self.pending.sort_unstable_by_key(|&(t, s, _, _)| (t, s));
        let split = self.pending.partition_point(|&(t, _, _, _)| t < until_ns);
        let mut last = vec![self.window_start_ns; self.cpus.len()];
        for &(t, _, cpu, d) in &self.pending[..split] {
            let c = &mut self.cpus[cpu as usize];
            let t = t.max(last[cpu as usize]);
            c.account(t - last[cpu as usize]);
            last[cpu as usize] = t;
            c.memstall += d.memstall;
            c.running += d.running;
            c.memstall_running += d.memstall_running;
            c.iowait += d.iowait;
        }
        self.pending.drain(..split);
        let (mut some, mut full, mut nonidle) = (0u128, 0u128, 0u128);
        for (i, c) in self.cpus.iter_mut().enumerate() {
            c.account(until_ns.saturating_sub(last[i]));
            let n = c.nonidle_ns as u128;
            some += c.some_ns as u128 * n;
            full += c.full_ns as u128 * n;
            nonidle += n;
            c.some_ns = 0;
            c.full_ns = 0;
            c.nonidle_ns = 0;
        }
        let some = some.checked_div(nonidle).unwrap_or(0) as u64;
        let full = full.checked_div(nonidle).unwrap_or(0) as u64;
        self.some_total_ns += some;
        self.full_total_ns += full;
        let window = until_ns.saturating_sub(self.window_start_ns);
        if window > 0 {
            // calc_avgs: avg = avg·e + pct·(1 − e), e = exp(−window / period).
            for (i, period_s) in [10.0f64, 60.0, 300.0].iter().enumerate() {
                let e = (-(window as f64) / (period_s * 1e9)).exp();
                self.avg_some[i] =
                    self.avg_some[i] * e + 100.0 * some as f64 / window as f64 * (1.0 - e);
                self.avg_full[i] =
                    self.avg_full[i] * e + 100.0 * full as f64 / window as f64 * (1.0 - e);
            }
        }
        self.window_start_ns = until_ns;
        (some, full)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_cpu_some_and_full() {
        // One CPU, window 0..1000. A task runs 0..1000; a second task is in a memstall
        // (blocked on a refault) 200..500. some = 300; full = 0 (the first task runs).
        let mut p = Psi::new(1);
        p.interval(0, 1000, 0, PsiDelta::RUN);
        p.interval(200, 500, 0, PsiDelta::STALL_WAIT);
        assert_eq!(p.close_window(1000), (300, 0));
        // Next window: the task reclaims 1000..1400 (memstall while running) and nothing
        // else runs: some = full = 400; the CPU is idle after 1400.
        p.interval(1000, 1400, 0, PsiDelta::STALL_RUN);
        assert_eq!(p.close_window(2000), (400, 400));
        assert_eq!((p.some_total_ns, p.full_total_ns), (700, 400));
    }

    #[test]
    fn two_cpus_weighted_by_nonidle() {
        // CPU0: kswapd reclaims for the whole window (some = full = 1000, nonidle 1000).
        // CPU1: a task runs for 500 of it (nonidle 500, no stall).
        // some = (1000·1000 + 0·500) / 1500 = 666; full likewise.
        let mut p = Psi::new(2);
        p.interval(0, 1000, 0, PsiDelta::STALL_RUN);
        p.interval(0, 500, 1, PsiDelta::RUN);
        assert_eq!(p.close_window(1000), (666, 666));
    }

    #[test]
    fn deltas_after_the_window_wait() {
        let mut p = Psi::new(1);
        p.interval(500, 1500, 0, PsiDelta::STALL_RUN);
        assert_eq!(p.close_window(1000), (500, 500));
        assert_eq!(p.close_window(2000), (500, 500));
    }
}
