//! The event queue: (time, class, sequence) order, so ties break by insertion order and
//! a run is a pure function of scenario and seed. A CPU freeing up sorts before other
//! events at the same time, so tasks already waiting for a CPU get it before a task
//! whose slice just ended can take it again.

use std::collections::BinaryHeap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// An event and its place in the order: time in the high 64 bits, then the class
/// (a CPU freeing up first), then the sequence number, so the heap compares one
/// integer (the derived order on a tuple with the event compared field by field,
/// branch by branch, and took a quarter of an event-bound run's time).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    key: u128,
    ev: Event,
}

impl Entry {
    fn key(time_ns: u64, ev: Event, seq: u64) -> u128 {
        let class = u128::from(!matches!(ev, Event::CpuFree(_)));
        debug_assert!(seq < 1 << 63);
        (time_ns as u128) << 64 | class << 63 | seq as u128
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entry {
    /// Reversed: the std heap is a max-heap, the queue pops the least key.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        other.key.cmp(&self.key)
    }
}

#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    seq: u64,
}

impl EventQueue {
    #[inline]
    pub fn push(&mut self, time_ns: u64, ev: Event) {
        let seq = self.next_seq();
        self.push_at_seq(time_ns, seq, ev);
    }

    /// Takes the next sequence number: an event held back with it (a CPU's free-up
    /// that nobody waits for yet) keeps the place it would have had among later pushes.
    #[inline]
    pub fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// Pushes an event with a sequence number taken earlier by [`EventQueue::next_seq`].
    #[inline]
    pub fn push_at_seq(&mut self, time_ns: u64, seq: u64, ev: Event) {
        self.heap.push(Entry {
            key: Entry::key(time_ns, ev, seq),
            ev,
        });
    }

    pub fn pop(&mut self) -> Option<(u64, Event)> {
        self.heap.pop().map(|e| ((e.key >> 64) as u64, e.ev))
    }

    pub fn peek_time(&self) -> Option<u64> {
        self.heap.peek().map(|e| (e.key >> 64) as u64)
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

    /// An event pushed with a sequence number taken earlier sorts where a push at
    /// that moment would have: before same-time, same-class events pushed since.
    #[test]
    fn a_held_event_keeps_its_place() {
        let mut q = EventQueue::default();
        let held = q.next_seq();
        q.push(10, Event::CpuFree(1));
        q.push(10, Event::Sample);
        q.push(5, Event::Action(0));
        q.push_at_seq(10, held, Event::CpuFree(0));
        assert_eq!(q.pop(), Some((5, Event::Action(0))));
        assert_eq!(q.pop(), Some((10, Event::CpuFree(0))));
        assert_eq!(q.pop(), Some((10, Event::CpuFree(1))));
        assert_eq!(q.pop(), Some((10, Event::Sample)));
        assert_eq!(q.pop(), None);
    }
}
