//! The block layer under the page cache and swap (block/blk-mq.c's request pool,
//! drivers/block/brd.c's ramdisk): requests wait for one of `queue_depth` service
//! slots, transfer at the device bandwidth (one transfer at a time), and complete a
//! fixed latency later.
//!
//! Deliberately simple: enough to make page-cache misses, writeback and disk swap cost
//! what a device of that latency and bandwidth costs, with queueing when many requests
//! arrive at once. Built from the model's own [`DeviceConfig`].

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A device as the kernel model is given it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceConfig {
    /// A queued device.
    Block(BlockDeviceConfig),
    /// A brd ramdisk whose I/O copies a page in `copy_ns`.
    Ramdisk { copy_ns: u64 },
}

/// A queued device's latencies, bandwidths (bytes per second) and queue depth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockDeviceConfig {
    pub read_latency_ns: u64,
    pub write_latency_ns: u64,
    pub read_bytes_per_s: u64,
    pub write_bytes_per_s: u64,
    pub queue_depth: u32,
}

#[derive(Debug, Clone)]
pub struct Device {
    read_latency_ns: u64,
    write_latency_ns: u64,
    read_ns_per_page: u64,
    write_ns_per_page: u64,
    /// When each service slot is next free, with its index: the earliest first,
    /// the lowest index among those free at the same time (a scan of every slot
    /// took O(queue_depth) per request).
    slots_free_at: BinaryHeap<Reverse<(u64, u32)>>,
    /// When the transfer engine is next free.
    xfer_free_at: u64,
    /// Completion times of the requests allocated and not yet completed.
    in_flight: BinaryHeap<Reverse<u64>>,
    /// `nr_requests`: the block layer's request pool, 2 × min(queue_depth, 128) as
    /// blk-mq sizes it with an I/O scheduler; a submitter beyond it sleeps.
    nr_requests: usize,
    pub reads: u64,
    pub writes: u64,
    /// A ramdisk (brd): BLK_FEAT_SYNCHRONOUS, an I/O is a copy of `read_ns_per_page`
    /// per page, in parallel for any number of submitters; never congested. Reads are
    /// charged as the reader's CPU time (`filemap`); writeback completes after the copy.
    synchronous: bool,
}

impl Device {
    pub fn new(cfg: &BlockDeviceConfig) -> Device {
        let per_page = |bw: u64| (4096u64 * 1_000_000_000).div_ceil(bw.max(1));
        Device {
            read_latency_ns: cfg.read_latency_ns,
            write_latency_ns: cfg.write_latency_ns,
            read_ns_per_page: per_page(cfg.read_bytes_per_s),
            write_ns_per_page: per_page(cfg.write_bytes_per_s),
            slots_free_at: (0..cfg.queue_depth.max(1))
                .map(|i| Reverse((0, i)))
                .collect(),
            xfer_free_at: 0,
            in_flight: Default::default(),
            nr_requests: 2 * cfg.queue_depth.clamp(1, 128) as usize,
            reads: 0,
            writes: 0,
            synchronous: false,
        }
    }

    /// A brd ramdisk whose I/O copies a page in `copy_ns`.
    pub fn ramdisk(copy_ns: u64) -> Device {
        Device {
            read_latency_ns: 0,
            write_latency_ns: 0,
            read_ns_per_page: copy_ns.max(1),
            write_ns_per_page: copy_ns.max(1),
            slots_free_at: BinaryHeap::from([Reverse((0, 0))]),
            xfer_free_at: 0,
            in_flight: Default::default(),
            nr_requests: usize::MAX,
            reads: 0,
            writes: 0,
            synchronous: true,
        }
    }

    /// The device `cfg` describes.
    pub fn from_config(cfg: &DeviceConfig) -> Device {
        match cfg {
            DeviceConfig::Block(b) => Device::new(b),
            DeviceConfig::Ramdisk { copy_ns } => Device::ramdisk(*copy_ns),
        }
    }

    pub fn is_ramdisk(&self) -> bool {
        self.synchronous
    }

    /// A synchronous device (brd) does the I/O in the submitter's context: the CPU time
    /// of the copy, counted as done. None for a queued device.
    pub fn synchronous_ns(&mut self, nr_pages: u64, write: bool) -> Option<u64> {
        if !self.synchronous {
            return None;
        }
        if write {
            self.writes += nr_pages;
        } else {
            self.reads += nr_pages;
        }
        Some(nr_pages * self.read_ns_per_page)
    }

    /// Submits a request of `nr_pages` at `now`; returns when it completes.
    pub fn submit(&mut self, now: u64, nr_pages: u64, write: bool) -> u64 {
        if let Some(copy_ns) = self.synchronous_ns(nr_pages, write) {
            return now + copy_ns;
        }
        let (lat, per_page) = if write {
            self.writes += nr_pages;
            (self.write_latency_ns, self.write_ns_per_page)
        } else {
            self.reads += nr_pages;
            (self.read_latency_ns, self.read_ns_per_page)
        };
        // Earliest-free slot, lowest index on ties: deterministic.
        let Reverse((slot_free, slot)) = self.slots_free_at.pop().expect("queue_depth >= 1");
        let start = now.max(slot_free);
        let xfer_start = start.max(self.xfer_free_at);
        self.xfer_free_at = xfer_start + per_page * nr_pages;
        let done = self.xfer_free_at + lat;
        self.slots_free_at.push(Reverse((done, slot)));
        self.in_flight.push(Reverse(done));
        done
    }

    /// Every request of the pool in flight: a submitter must wait (the block layer's
    /// request allocation sleeps) until the returned time, when the first completes.
    pub fn congested(&mut self, now: u64) -> Option<u64> {
        if self.synchronous {
            return None;
        }
        while self.in_flight.peek().is_some_and(|r| r.0 <= now) {
            self.in_flight.pop();
        }
        (self.in_flight.len() >= self.nr_requests)
            .then(|| self.in_flight.peek().expect("non-empty").0)
    }

    /// How far the transfer engine is booked beyond `now` (a queue-length proxy).
    pub fn backlog_ns(&self, now: u64) -> u64 {
        self.xfer_free_at.saturating_sub(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(depth: u32) -> Device {
        Device::new(&BlockDeviceConfig {
            read_latency_ns: 100_000,
            write_latency_ns: 10_000,
            read_bytes_per_s: 4096 * 1_000_000, // 1 us per page
            write_bytes_per_s: 4096 * 500_000,  // 2 us per page
            queue_depth: depth,
        })
    }

    #[test]
    fn latency_plus_transfer() {
        let mut d = dev(4);
        // One page read at t=0: 1 us transfer + 100 us latency.
        assert_eq!(d.submit(0, 1, false), 101_000);
        // A second read at t=0 waits for the transfer engine: 2 us + 100 us.
        assert_eq!(d.submit(0, 1, false), 102_000);
        // An 8-page write at t=1ms: 16 us + 10 us.
        assert_eq!(d.submit(1_000_000, 8, true), 1_026_000);
    }

    #[test]
    fn the_request_pool_is_twice_the_queue_depth() {
        let mut d = dev(2);
        // Four 1-page writes at t=0: 2 us transfer each, 10 us latency.
        for i in 0..4 {
            assert_eq!(d.congested(0), None, "request {i}");
            d.submit(0, 1, true);
        }
        // Pool of 4 full: wait for the first to complete (2 + 10 us).
        assert_eq!(d.congested(0), Some(12_000));
        assert_eq!(d.congested(12_000), None);
    }

    /// The slot heap answers as a scan of every slot does (the earliest free, the
    /// lowest index on ties): completion times equal a reference device's that scans,
    /// over submissions at times that go back and forth, of mixed sizes and kinds.
    #[test]
    fn slots_are_taken_as_a_scan_takes_them() {
        use rand::{Rng, SeedableRng};
        for depth in [1u32, 3, 32, 1248] {
            let mut d = dev(depth);
            let (mut slots, mut xfer_free_at) = (vec![0u64; depth as usize], 0u64);
            let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(depth as u64);
            for _ in 0..5000 {
                let now = rng.gen_range(0..2_000_000u64);
                let (pages, write) = (rng.gen_range(1..33u64), rng.gen_bool(0.3));
                let (slot, &free) = slots
                    .iter()
                    .enumerate()
                    .min_by_key(|&(i, &t)| (t, i))
                    .unwrap();
                let (lat, per_page) = if write {
                    (10_000, 2_000)
                } else {
                    (100_000, 1_000)
                };
                let xfer_start = now.max(free).max(xfer_free_at);
                xfer_free_at = xfer_start + per_page * pages;
                slots[slot] = xfer_free_at + lat;
                assert_eq!(d.submit(now, pages, write), slots[slot], "depth {depth}");
            }
        }
    }

    #[test]
    fn queue_depth_limits_concurrency() {
        let mut d = dev(1);
        assert_eq!(d.submit(0, 1, false), 101_000);
        // With one slot the next request starts only when the first completes.
        assert_eq!(d.submit(0, 1, false), 202_000);
    }
}
