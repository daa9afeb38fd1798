//! The VFS caches reclaim shrinks (fs/dcache.c, fs/inode.c, fs/super.c; kernel
//! reference §2.4 step 4), a part of the kernel model under `mm` (its state lives in
//! `Mm::vfs`, its code is `Mm`'s methods; it is not a layer of its own): a file a workload opens gets a dentry and an inode, slab
//! objects of reclaimable caches charged to the opener's memcg. While the file is open
//! both are pinned. When the workload exits, `dput` puts the unused dentry on its
//! memcg's dentry LRU (a `list_lru`) with DCACHE_REFERENCED set; the dentry pins the
//! inode. The superblock's shrinker (`super_cache_count` / `super_cache_scan`, driven
//! by `shrink_slab`) walks the dentry LRU first (a referenced dentry gets a second
//! trip round, an unreferenced one is freed and lets go of its inode), then the inode
//! LRU: an inode with no page cache left is evicted (its shadow entries go with it);
//! one that still has page cache is taken off the LRU and goes back on when reclaim
//! empties its mapping (`mapping_shrinkable`, v5.16+).
//!
//! Not modelled: the xarray nodes of shadow entries (so a mapping holding only shadow
//! entries counts as empty here, where the kernel waits for the shadow-node shrinker),
//! negative dentries, directories, reopening a file whose dentry was freed (files
//! belong to one workload, which opens each once).

pub mod dcache;
pub mod inode;

use crate::slab::Obj;
use crate::Mm;
use std::collections::VecDeque;

/// `struct dentry` and an ext4 inode (`ext4_inode_cache`) on a v6.x x86-64 kernel:
/// their /proc/slabinfo object sizes.
pub const DENTRY_SIZE_BYTES: u64 = 192;
pub const INODE_SIZE_BYTES: u64 = 1176;

/// The superblock shrinker's `batch` (alloc_super) and `seeks` (DEFAULT_SEEKS).
pub const SB_SHRINK_BATCH: u64 = 1024;
pub const DEFAULT_SEEKS: u64 = 2;

/// A file's dentry and inode.
#[derive(Debug, Clone, Copy, Default)]
pub struct VfsFile {
    pub dentry: Option<Obj>,
    pub inode: Option<Obj>,
    /// `d_lockref.count`: 1 while the workload that opened it has it open.
    pub d_count: u32,
    /// DCACHE_REFERENCED: set by dput, cleared (with a rotation) by the LRU walk.
    pub d_referenced: bool,
    pub d_on_lru: bool,
    pub i_on_lru: bool,
}

/// One memcg's `list_lru`s of the superblock on one node (`s_dentry_lru`,
/// `s_inode_lru`: files by space id, the oldest first; an object is on the list of
/// its slab page's node) and the shrinker's deferred work for them (`shrinker_info`'s
/// per-node `nr_deferred`).
#[derive(Debug, Clone, Default)]
pub struct SbLru {
    pub dentries: VecDeque<u32>,
    pub inodes: VecDeque<u32>,
    pub nr_deferred: u64,
}

/// The VFS state: per space (files only) its dentry and inode, per memcg and node its
/// LRUs.
#[derive(Debug, Clone, Default)]
pub struct Vfs {
    pub files: Vec<VfsFile>,
    /// Indexed by [`Mm::sb_lru_index`]: memcg-major, a node's within.
    pub lru: Vec<SbLru>,
    /// The kmem caches of dentries and inodes (`Mm::kmem_caches` indices).
    pub dentry_cache: u32,
    pub inode_cache: u32,
    /// Per workload: the files it has open.
    pub open_files: Vec<Vec<u32>>,
}

impl Vfs {
    pub fn file(&self, space: u32) -> VfsFile {
        self.files.get(space as usize).copied().unwrap_or_default()
    }

    fn file_mut(&mut self, space: u32) -> &mut VfsFile {
        if self.files.len() <= space as usize {
            self.files.resize(space as usize + 1, VfsFile::default());
        }
        &mut self.files[space as usize]
    }
}

/// `mult_frac(x, n, d)`: x · n / d without overflowing the product.
pub fn mult_frac(x: u64, n: u64, d: u64) -> u64 {
    (x / d) * n + (x % d) * n / d
}

impl Mm {
    /// The memcg whose `list_lru` holds an object charged to `memcg`: its own under
    /// kmem accounting, else the one global list (the root's).
    fn lru_memcg(&self, memcg: u16) -> usize {
        if self.cfg.memcg_kmem {
            memcg as usize
        } else {
            0
        }
    }

    /// Where `memcg`'s lists on node `nid` are in [`Vfs::lru`] (a machine of one node
    /// indexes them by memcg).
    pub fn sb_lru_index(&self, memcg: usize, nid: usize) -> usize {
        memcg * self.nr_nodes() + nid
    }

    /// The node of an object's slab page (`list_lru`'s `page_to_nid`).
    fn obj_nid(&self, obj: Obj) -> usize {
        self.pfn_to_nid(obj.slab)
    }

    /// `super_cache_count`: the objects on `memcg`'s dentry and inode LRUs of node
    /// `nid`, scaled by `vm.vfs_cache_pressure` (`vfs_pressure_ratio`).
    pub fn super_cache_count(&self, memcg: usize, nid: usize) -> u64 {
        let Some(l) = self.vfs.lru.get(self.sb_lru_index(memcg, nid)) else {
            return 0;
        };
        let total = (l.dentries.len() + l.inodes.len()) as u64;
        mult_frac(total, self.cfg.vfs_cache_pressure, 100)
    }

    /// `super_cache_scan`: `nr_to_scan` split between node `nid`'s two LRUs in
    /// proportion to their lengths, the dentries first (they pin the inodes), each
    /// walked for its share plus one. Returns the objects freed.
    pub fn super_cache_scan(&mut self, memcg: usize, nid: usize, nr_to_scan: u64) -> u64 {
        let Some(l) = self.vfs.lru.get(self.sb_lru_index(memcg, nid)) else {
            return 0;
        };
        let (dentries, inodes) = (l.dentries.len() as u64, l.inodes.len() as u64);
        let total = dentries + inodes + 1;
        let d_scan = mult_frac(nr_to_scan, dentries, total);
        let i_scan = mult_frac(nr_to_scan, inodes, total);
        let freed = self.prune_dcache_sb(memcg, nid, d_scan + 1);
        freed + self.prune_icache_sb(memcg, nid, i_scan + 1)
    }
}

#[cfg(test)]
mod tests {
    use crate::SpaceKind;

    /// 3000 one-page files opened and closed without being read (empty mappings):
    /// 3000 referenced dentries on the root's LRU, their inodes pinned by them.
    /// `shrink_slab` at priority 0, worked by hand from do_shrink_slab and
    /// super_cache_scan:
    /// freeable 3000, delta = 3000 · 4 / 2 = 6000, total_scan = min(6000, 2 · 3000);
    /// batches of 1024 while total_scan ≥ 1024: five (5120 scanned), 880 deferred.
    /// Each batch walks mult_frac(1024, d, d + i + 1) + 1 dentries, then
    /// mult_frac(1024, i, d + i + 1) + 1 inodes (d, i: the lists at its start):
    /// 1. d 3000, i 0: 1024 dentries rotated (referenced cleared), 1 inode walk: none.
    /// 2. likewise: 2048 rotated.
    /// 3. 952 rotated, then 72 unreferenced ones freed (their inodes, with no page
    ///    cache, go on the inode LRU); 1 inode walked: evicted.
    /// 4. d 2928, i 71 (total 3000): 999 + 1 = 1000 dentries freed; 24 + 1 = 25
    ///    inodes evicted.
    /// 5. d 1928, i 1046 (total 2975): 663 + 1 = 664 dentries; 360 + 1 = 361 inodes.
    ///
    /// Freed: 72 + 1000 + 664 = 1736 dentries, 1 + 25 + 361 = 387 inodes.
    #[test]
    fn super_cache_scan_walks_dentries_then_inodes_in_proportion() {
        let mut mm = crate::test_util::task_mm(crate::Config {
            nr_cpus: 4,
            ..crate::test_util::config(256)
        });
        mm.current_workload = Some(0);
        let spaces: Vec<u32> = (0..3000)
            .map(|i| mm.add_space(SpaceKind::File, format!("f{i}"), 1, None))
            .collect();
        for &s in &spaces {
            mm.vfs_open(s).unwrap();
        }
        let reclaimable = |mm: &crate::Mm| mm.memcg.cgs[0].kmem.slab_bytes[1];
        assert_eq!(reclaimable(&mm), 3000 * (192 + 8 + 1176 + 8));
        // Open files are pinned: nothing to count.
        assert_eq!(mm.super_cache_count(0, 0), 0);
        mm.vfs_close_files(0);
        assert_eq!(mm.super_cache_count(0, 0), 3000);
        let freed = mm.shrink_slab(0, 0, 0);
        assert_eq!(freed, 1736 + 387);
        assert_eq!(mm.vmstat.get(crate::vm_event_item::Ev::SlabsScanned), 5120);
        assert_eq!(mm.vfs.lru[0].nr_deferred, 880);
        let (dentries, inodes) = (3000 - 1736, 3000 - 387);
        assert_eq!(
            (mm.vfs.lru[0].dentries.len(), mm.vfs.lru[0].inodes.len()),
            (dentries, 1736 - 387)
        );
        assert_eq!(reclaimable(&mm), (dentries * 200 + inodes * 1184) as u64);
        mm.check_invariants().unwrap();
        // vfs_cache_pressure 0: nothing is counted, nothing scanned.
        mm.cfg.vfs_cache_pressure = 0;
        assert_eq!(mm.shrink_slab(0, 0, 0), 0);
        assert_eq!(mm.vmstat.get(crate::vm_event_item::Ev::SlabsScanned), 5120);
        // drop_slab frees everything left: rounds until one frees at most 1.
        mm.cfg.vfs_cache_pressure = 100;
        assert_eq!(mm.drop_slab(), (dentries + inodes) as u64);
        assert_eq!(reclaimable(&mm), 0);
        mm.check_invariants().unwrap();
    }

    /// The superblock shrinker is NUMA-aware: an object is on the `list_lru` of its
    /// slab page's node, and `shrink_slab` of one node counts and frees only that
    /// node's. Files opened from node 0's CPU and from node 1's: each node's reclaim
    /// sees its own 1000 dentries (the inodes are pinned by them).
    #[test]
    fn each_node_shrinks_its_own_objects() {
        let mut cfg = crate::test_util::config(128);
        crate::test_util::two_nodes(&mut cfg);
        let mut mm = crate::test_util::task_mm(cfg);
        mm.current_workload = Some(0);
        for cpu in [0, 1] {
            mm.current_cpu = cpu;
            for i in 0..1000 {
                let s = mm.add_space(SpaceKind::File, format!("f{cpu}.{i}"), 1, None);
                mm.vfs_open(s).unwrap();
            }
        }
        mm.vfs_close_files(0);
        assert_eq!(
            (mm.super_cache_count(0, 0), mm.super_cache_count(0, 1)),
            (1000, 1000)
        );
        assert!(mm.node_slab_reclaimable_pages.iter().all(|&p| p > 0));
        // Node 1's reclaim at priority 0: freeable 1000, delta 2000, total_scan 2000 →
        // one batch of 1024 (976 deferred): mult_frac(1024, 1000, 1001) + 1 = 1023
        // dentry walks rotate all 1000 (referenced) and free 23, whose inodes join the
        // inode LRU; 0 + 1 inode walk frees one. Node 0's lists are untouched.
        assert_eq!(mm.shrink_slab(0, 1, 0), 23 + 1);
        assert_eq!(mm.super_cache_count(0, 0), 1000);
        let i1 = mm.sb_lru_index(0, 1);
        assert_eq!(mm.vfs.lru[i1].nr_deferred, 976);
        assert_eq!(mm.vfs.lru[mm.sb_lru_index(0, 0)].nr_deferred, 0);
        // drop_slab empties both.
        assert_eq!(mm.drop_slab(), 4000 - 24);
        assert_eq!(mm.node_slab_reclaimable_pages, [0, 0]);
        mm.check_invariants().unwrap();
    }

    /// An inode whose file still has page cache stays off the LRU when its dentry
    /// goes, and joins it when reclaim takes the last page.
    #[test]
    fn an_inode_with_page_cache_waits_for_it() {
        let mut mm = crate::test_util::task_mm(crate::Config {
            nr_cpus: 4,
            ..crate::test_util::config(256)
        });
        mm.current_workload = Some(0);
        let (s, _) = crate::page_alloc::test_pages::add_pages(&mut mm, SpaceKind::File, 1, 0);
        mm.vfs_open(s).unwrap();
        mm.vfs_close_files(0);
        // Two walks: the first clears DCACHE_REFERENCED, the second frees it.
        assert_eq!(mm.prune_dcache_sb(0, 0, 2), 1);
        assert!(mm.vfs.lru[0].inodes.is_empty(), "cache left: off the LRU");
        assert!(mm.vfs.file(s).inode.is_some());
        // The page goes (dropped here; reclaim's __remove_mapping does the same).
        assert_eq!(mm.drop_pagecache(), 1);
        assert_eq!(mm.vfs.lru[0].inodes.len(), 1);
        assert_eq!(mm.prune_icache_sb(0, 0, 1), 1);
        assert!(mm.vfs.file(s).inode.is_none());
        mm.check_invariants().unwrap();
    }
}
