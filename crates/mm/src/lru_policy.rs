//! Research replacement policies under the kernel's dynamics (`kernel.lru = "lru"`,
//! `"fifo"`, `"clock"`, `"arc"`, `"s3fifo"`, `"sieve"`). Not the kernel: the policies
//! live in the reclaimsim-cache crate; this is the small interface through which `mm/` asks
//! them, and where the lruvec holds them.
//!
//! Each lruvec has one policy per page type (anon, file). It hears every page that
//! joins the LRU (`lruvec_add_folio`), every access (user loads and stores, which all
//! trap under a research policy: [`super::Space::set_trap`]; read() and write()
//! through `folio_mark_accessed`), and every page that leaves the LRU other than as
//! its victim (isolation for migration, freeing, truncation). Reclaim asks it for
//! victims in place of the inactive list's tail (`isolate_lru_folios`). Everything
//! else is the kernel's: `get_scan_count`'s anon/file balance and swappiness, the
//! priorities and batches, kswapd and the watermarks, writeback and swap,
//! `shrink_folio_list` (without its reference check: the policy has decided),
//! refaults and memcg charging. Pages sit on the inactive lists (the counts
//! memory.stat shows) and are never activated.
//!
//! Keys are page identities, `mapping << 32 | index`, not frames: a policy's ghost
//! (ARC's B1/B2, S3-FIFO's ghost queue) must recognise the data when it faults back
//! in, whatever frame it lands in.

use super::page::Pfn;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Page keys are already well spread in their low bits (indexes) and high bits
/// (mappings): one multiply mixes them, where SipHash would cost more than the
/// lookup (every user access asks).
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }

    fn write_u64(&mut self, k: u64) {
        // Fibonacci hashing; the top bits (which hashbrown uses for its control
        // bytes) depend on every input bit through the rotate.
        self.0 = (k ^ k.rotate_left(32)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

type PfnMap = HashMap<u64, Pfn, BuildHasherDefault<KeyHasher>>;

/// A replacement policy over pages, as `mm/` asks it.
pub trait PagePolicy: Send {
    /// A page joins (a new page, a refault, a page put back after isolation).
    fn add(&mut self, key: u64);
    /// A resident page was accessed.
    fn access(&mut self, key: u64);
    /// A page left other than by eviction.
    fn remove(&mut self, key: u64);
    /// The policy's next victim, removed; None if it holds nothing.
    fn evict(&mut self) -> Option<u64>;
}

/// Makes a policy for an lruvec that can hold so many pages (`kernel.lru`'s policy,
/// from the cache crate's registry).
#[derive(Clone)]
pub struct PolicyFactory {
    pub name: &'static str,
    new: std::sync::Arc<dyn Fn(u64) -> Box<dyn PagePolicy> + Send + Sync>,
}

impl PolicyFactory {
    pub fn new(
        name: &'static str,
        new: impl Fn(u64) -> Box<dyn PagePolicy> + Send + Sync + 'static,
    ) -> PolicyFactory {
        PolicyFactory {
            name,
            new: std::sync::Arc::new(new),
        }
    }

    pub fn make(&self, capacity_pages: u64) -> Box<dyn PagePolicy> {
        (self.new)(capacity_pages)
    }
}

impl std::fmt::Debug for PolicyFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "PolicyFactory({})", self.name)
    }
}

/// An lruvec's policies (index 0 anon, 1 file) and where each page they hold is.
pub struct LruvecPolicy {
    policy: [Box<dyn PagePolicy>; 2],
    pfn: [PfnMap; 2],
}

impl LruvecPolicy {
    pub fn new(factory: &PolicyFactory, capacity_pages: u64) -> LruvecPolicy {
        LruvecPolicy {
            policy: [factory.make(capacity_pages), factory.make(capacity_pages)],
            pfn: [PfnMap::default(), PfnMap::default()],
        }
    }

    pub fn add(&mut self, file: bool, key: u64, pfn: Pfn) {
        let t = file as usize;
        if self.pfn[t].insert(key, pfn).is_none() {
            self.policy[t].add(key);
        }
    }

    /// An access to a page on this lruvec's LRU (the caller checked PG_lru). No map
    /// lookup: a page on the LRU is in its policy, and a policy asked about a key it
    /// does not hold changes nothing it keeps for resident pages (a ghost of a page
    /// that is resident cannot exist: its return removed the ghost).
    pub fn access(&mut self, file: bool, key: u64) {
        self.policy[file as usize].access(key);
    }

    pub fn remove(&mut self, file: bool, key: u64) {
        let t = file as usize;
        if self.pfn[t].remove(&key).is_some() {
            self.policy[t].remove(key);
        }
    }

    /// The next victim of type `file`: its frame.
    pub fn evict(&mut self, file: bool) -> Option<Pfn> {
        let t = file as usize;
        while let Some(key) = self.policy[t].evict() {
            if let Some(pfn) = self.pfn[t].remove(&key) {
                return Some(pfn);
            }
        }
        None
    }

    /// Pages held, by type.
    pub fn len(&self, file: bool) -> usize {
        self.pfn[file as usize].len()
    }

    /// Whether `key` (of type `file`) is held, at frame `pfn` (the checker's question).
    pub fn holds(&self, file: bool, key: u64, pfn: Pfn) -> bool {
        self.pfn[file as usize].get(&key) == Some(&pfn)
    }
}

impl std::fmt::Debug for LruvecPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(
            f,
            "LruvecPolicy(anon {}, file {})",
            self.len(false),
            self.len(true)
        )
    }
}

/// A page's key: its mapping and index.
pub fn page_key(mapping: u32, index: u32) -> u64 {
    (mapping as u64) << 32 | index as u64
}
