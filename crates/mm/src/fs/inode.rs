//! Inodes (fs/inode.c): on the memcg's inode LRU once unused and without page cache,
//! pruned by the superblock shrinker, evicted with what is left of their mapping.

use crate::Mm;

impl Mm {
    /// `mapping_shrinkable`: the file has no page cache left (its shadow entries are
    /// not counted: the xarray's nodes are not modelled).
    fn mapping_shrinkable(&self, space: u32) -> bool {
        self.spaces[space as usize].nr_present == 0
    }

    /// `iput_final` after the last dentry let go of the inode: it stays cached, on the
    /// inode LRU if its mapping is shrinkable (`inode_add_lru`), else off it until
    /// reclaim empties the mapping.
    pub(super) fn iput_final(&mut self, space: u32) {
        if self.mapping_shrinkable(space) {
            self.inode_add_lru(space);
        }
    }

    fn inode_add_lru(&mut self, space: u32) {
        let f = self.vfs.file_mut(space);
        if f.i_on_lru {
            return;
        }
        f.i_on_lru = true;
        let obj = f.inode.expect("an unused cached inode");
        let (m, nid) = (self.lru_memcg(obj.memcg), self.obj_nid(obj));
        self.vfs_lru(m, nid).inodes.push_back(space);
    }

    /// A page left `space`'s page cache (`__remove_mapping`, invalidation): an unused
    /// inode whose mapping is now empty goes on the LRU (`if (mapping_shrinkable)
    /// inode_add_lru`).
    pub fn inode_mapping_shrunk(&mut self, space: u32) {
        let Some(f) = self.vfs.files.get(space as usize) else {
            return;
        };
        if f.inode.is_some() && f.dentry.is_none() && !f.i_on_lru && self.mapping_shrinkable(space)
        {
            self.inode_add_lru(space);
        }
    }

    /// `prune_icache_sb`: walk `nr_to_walk` inodes of `memcg`'s LRU on node `nid` from
    /// its oldest
    /// (`inode_lru_isolate`): one in use again or with page cache leaves the LRU, the
    /// others are evicted (`evict`: the mapping's remaining entries, shadows included,
    /// are dropped with it). Returns the inodes freed.
    pub fn prune_icache_sb(&mut self, memcg: usize, nid: usize, nr_to_walk: u64) -> u64 {
        let li = self.sb_lru_index(memcg, nid);
        let mut freed = 0;
        for _ in 0..nr_to_walk {
            let Some(space) = self.vfs.lru[li].inodes.pop_front() else {
                break;
            };
            self.charge(self.cfg.costs.shrink_object_ns);
            let busy = self.vfs.file(space).dentry.is_some() || !self.mapping_shrinkable(space);
            let f = self.vfs.file_mut(space);
            f.i_on_lru = false;
            if busy {
                continue;
            }
            let obj = f.inode.take().expect("an inode on the LRU exists");
            let cache = self.vfs.inode_cache;
            self.kmem_cache_free_account(cache, obj);
            freed += 1;
            // evict → truncate_inode_pages_final: no pages are left, the shadow
            // entries go; a later open would start with a fresh file_ra_state.
            let s = &mut self.spaces[space as usize];
            s.take_table();
            s.ra = crate::readahead::FileRaState::new(self.cfg.ra_pages);
        }
        freed
    }
}
