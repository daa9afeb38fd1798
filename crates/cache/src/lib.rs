//! Replacement policies, and the cache simulator that runs one alone over a trace
//! (`reclaimsim cache`). Not the kernel: research policies live here, behind
//! [`Policy`], one file each. Under the kernel's dynamics (`kernel.lru = "sieve"`) the
//! kernel model asks them through its own `PagePolicy` hook, which the top crate
//! adapts a [`Policy`] to; this crate depends on the trace formats alone.
//!
//! A policy orders the cached objects and picks victims; the simulator (as
//! libCacheSim's `cache_get_base`) owns the capacity: a request whose key is cached is
//! a hit; a miss of an object larger than the cache is not inserted; otherwise the
//! policy evicts until the object fits, then inserts it. Sizes are bytes, or 1 per
//! object when sizes are ignored.
//!
//! Adding a policy: a file here implementing [`Policy`], and a line in [`POLICIES`].

pub mod arc;
pub mod clock;
pub mod fifo;
pub mod lru;
pub mod queue;
pub mod run;
pub mod s3fifo;
pub mod sieve;

/// The requests a simulation runs over: the trace readers' records.
pub use reclaimsim_trace::Request;

/// A replacement policy over keys (trace objects, or pages).
pub trait Policy: Send {
    /// A request for `key` (of `size`): true if it is cached (a hit, recorded as the
    /// policy records one: promotion, a reference bit, a frequency; a ghost hit is a
    /// miss the policy remembers for the insert that follows).
    fn lookup(&mut self, key: u64, size: u64) -> bool;
    /// Whether a missed object of `size` may be cached at all (checked before any
    /// eviction; the simulator already refuses objects larger than the cache).
    fn can_insert(&self, _size: u64) -> bool {
        true
    }
    /// Caches `key` (of `size`) after a miss; the caller has made room. A policy may
    /// still decline (S3-FIFO: an object as big as its small queue).
    fn insert(&mut self, key: u64, size: u64);
    /// Evicts one object, the policy's victim; None if nothing is cached.
    fn evict(&mut self) -> Option<u64>;
    /// Bytes cached (objects, when every size is 1).
    fn occupied(&self) -> u64;
    /// Drops `key` if cached (not an eviction: no ghost is kept). The kernel model's
    /// pages leave for other reasons than reclaim (freed, migrated).
    fn remove(&mut self, key: u64);
    /// A request for `key` is coming: start loading what its lookup will touch.
    fn prefetch(&self, _key: u64) {}
}

/// A policy's constructor, given the cache's capacity (bytes, or objects).
pub type NewPolicy = fn(u64) -> Box<dyn Policy>;

/// The policies by name.
pub const POLICIES: &[(&str, NewPolicy)] = &[
    ("lru", |c| Box::new(lru::Lru::new(c))),
    ("fifo", |c| Box::new(fifo::Fifo::new(c))),
    ("clock", |c| Box::new(clock::Clock::new(c))),
    ("sieve", |c| Box::new(sieve::Sieve::new(c))),
    ("s3fifo", |c| Box::new(s3fifo::S3Fifo::new(c))),
    ("arc", |c| Box::new(arc::Arc::new(c))),
];

/// The constructor of policy `name`.
pub fn policy(name: &str) -> Option<NewPolicy> {
    POLICIES.iter().find(|(n, _)| *n == name).map(|&(_, f)| f)
}

/// What a run over a trace counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct CacheStats {
    pub requests: u64,
    pub misses: u64,
    pub request_bytes: u64,
    pub miss_bytes: u64,
}

impl CacheStats {
    pub fn miss_ratio(&self) -> f64 {
        self.misses as f64 / self.requests.max(1) as f64
    }

    pub fn byte_miss_ratio(&self) -> f64 {
        self.miss_bytes as f64 / self.request_bytes.max(1) as f64
    }
}

/// The cache simulator's step for one request (`cache_get_base`).
pub fn access(p: &mut dyn Policy, capacity: u64, r: Request, st: &mut CacheStats) {
    st.requests += 1;
    st.request_bytes += r.size;
    if p.lookup(r.key, r.size) {
        return;
    }
    st.misses += 1;
    st.miss_bytes += r.size;
    if r.size > capacity || !p.can_insert(r.size) {
        return;
    }
    while p.occupied() + r.size > capacity {
        if p.evict().is_none() {
            break;
        }
    }
    p.insert(r.key, r.size);
}

/// Runs `policy` with `capacity` over `requests`.
pub fn simulate(
    new: NewPolicy,
    capacity: u64,
    requests: impl IntoIterator<Item = Request>,
) -> CacheStats {
    let mut p = new(capacity);
    let mut st = CacheStats::default();
    for r in requests {
        access(p.as_mut(), capacity, r, &mut st);
    }
    st
}

#[cfg(test)]
pub(crate) mod test_util {
    use super::*;

    /// Hit (true) or miss per request of `keys` (size 1 each) with `capacity` objects.
    pub fn hits(new: NewPolicy, capacity: u64, keys: &[u64]) -> Vec<bool> {
        let mut p = new(capacity);
        let mut st = CacheStats::default();
        keys.iter()
            .map(|&key| {
                let before = st.misses;
                access(p.as_mut(), capacity, Request::new(key, 1), &mut st);
                st.misses == before
            })
            .collect()
    }

    /// "h"/"m" per request, for readable assertions.
    pub fn pattern(new: NewPolicy, capacity: u64, keys: &[u64]) -> String {
        hits(new, capacity, keys)
            .iter()
            .map(|&h| if h { 'h' } else { 'm' })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `remove` takes a cached object out without an eviction: the victims that
    /// follow are the others, and a ghost-keeping policy keeps no ghost of it.
    #[test]
    fn remove_is_not_an_eviction() {
        for &(name, new) in POLICIES {
            // S3-FIFO declines objects as big as its small queue: 100 slots give it 10.
            let mut p = new(100);
            for k in 1..=3 {
                assert!(!p.lookup(k, 1));
                p.insert(k, 1);
            }
            p.remove(2);
            p.remove(99);
            assert_eq!(p.occupied(), 2, "{name}");
            let mut out = vec![p.evict().unwrap(), p.evict().unwrap()];
            out.sort();
            assert_eq!(out, vec![1, 3], "{name}");
            assert_eq!(p.evict(), None, "{name}");
            assert!(!p.lookup(2, 1), "{name}: removed, not a ghost");
        }
        // SIEVE: a removed object under the hand passes the hand on. 1 2 3 (head 3),
        // 1 visited; evicting clears 1 and takes 2, the hand at 3. Removing 3 moves
        // the hand past the head: it wraps to the tail, 1 (cleared) goes next.
        let mut s = sieve::Sieve::new(3);
        for k in 1..=3 {
            s.insert(k, 1);
        }
        assert!(s.lookup(1, 1));
        assert_eq!(s.evict(), Some(2));
        s.remove(3);
        assert_eq!(s.evict(), Some(1));
    }
}
