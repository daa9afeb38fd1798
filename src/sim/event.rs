//! The event queue: (time, class, sequence) order, so ties break by insertion order and
//! a run is a pure function of scenario and seed. A CPU freeing up sorts before other
//! events at the same time, so tasks already waiting for a CPU get it before a task
//! whose slice just ended can take it again.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Event {
    /// A CPU finished a slice: give it to the first task in the run queue.
    CpuFree(u32),
    /// A task becomes runnable (woken, timer, or waiting for a CPU). `gen` guards
    /// against stale timers: a task ignores an event whose gen is not its current one.
    Ready { task: u32, gen: u32 },
    /// Process I/O completions due by now.
    IoPoll,
    /// Take a timeseries sample (and run the invariant checker under `--check`).
    Sample,
    /// Apply timed action `i`.
    Action(u32),
    /// The memcg statistics' periodic flush (`flush_memcg_stats_dwork`).
    MemcgFlush,
    /// A monitoring agent reads every cgroup's memory.stat (`run.memory_stat_poll`).
    MemoryStatRead,
    /// Each CPU's `vmstat_update` (every `vm.stat_interval`, 1 s): v6.7's decay of
    /// the per-CPU lists' `high`.
    VmstatUpdate,
    /// Process (mm) `i`'s NUMA balancing scan (`task_numa_work`), memory tiering on.
    NumaScan(u32),
}

#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Reverse<(u64, u8, u64, Event)>>,
    seq: u64,
}

impl EventQueue {
    #[inline]
    pub fn push(&mut self, time_ns: u64, ev: Event) {
        self.seq += 1;
        let class = if matches!(ev, Event::CpuFree(_)) {
            0
        } else {
            1
        };
        self.heap.push(Reverse((time_ns, class, self.seq, ev)));
    }

    pub fn pop(&mut self) -> Option<(u64, Event)> {
        self.heap.pop().map(|Reverse((t, _, _, e))| (t, e))
    }

    pub fn peek_time(&self) -> Option<u64> {
        self.heap.peek().map(|Reverse((t, _, _, _))| *t)
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_then_insertion_order() {
        let mut q = EventQueue::default();
        q.push(10, Event::Sample);
        q.push(5, Event::Action(1));
        q.push(10, Event::IoPoll);
        q.push(5, Event::Action(0));
        q.push(10, Event::CpuFree(3));
        assert_eq!(q.pop(), Some((5, Event::Action(1))));
        assert_eq!(q.pop(), Some((5, Event::Action(0))));
        assert_eq!(q.pop(), Some((10, Event::CpuFree(3))));
        assert_eq!(q.pop(), Some((10, Event::Sample)));
        assert_eq!(q.pop(), Some((10, Event::IoPoll)));
        assert_eq!(q.pop(), None);
    }
}
