//! Dentries (fs/dcache.c): allocated when a workload opens a file, put on the memcg's
//! dentry LRU when it closes it, pruned by the superblock shrinker.

use super::VfsFile;
use crate::memory::FaultResult;
use crate::Mm;

impl Mm {
    /// The open at a workload's first access to a file (`path_openat`): a dentry
    /// (`d_alloc`) and an inode (`alloc_inode`), both charged to the current task's
    /// memcg, unless they are cached. Err: an allocation failed (retry after a sleep,
    /// or the task was killed).
    pub fn vfs_open(&mut self, space: u32) -> Result<(), FaultResult> {
        let f = self.vfs.file(space);
        if f.d_count > 0 {
            return Ok(());
        }
        let memcg = self.current_memcg();
        if f.dentry.is_none() {
            let cache = self.vfs.dentry_cache;
            let Some(obj) = self.kmem_cache_alloc_account(cache, memcg, false) else {
                return Err(self.alloc_failure());
            };
            self.vfs.file_mut(space).dentry = Some(obj);
        }
        if self.vfs.file(space).inode.is_none() {
            let cache = self.vfs.inode_cache;
            let Some(obj) = self.kmem_cache_alloc_account(cache, memcg, false) else {
                return Err(self.alloc_failure());
            };
            self.vfs.file_mut(space).inode = Some(obj);
        }
        // dget: a dentry still on the LRU stays there until a walk finds it in use.
        self.vfs.file_mut(space).d_count = 1;
        if let Some(w) = self.current_workload {
            if self.vfs.open_files.len() <= w {
                self.vfs.open_files.resize(w + 1, Vec::new());
            }
            self.vfs.open_files[w].push(space);
        }
        Ok(())
    }

    /// The exit of workload `w` closes its files: `dput` of each dentry, which goes
    /// on its memcg's LRU marked referenced (`retain_dentry`, `d_lru_add`).
    pub fn vfs_close_files(&mut self, w: usize) {
        let Some(open) = self.vfs.open_files.get_mut(w) else {
            return;
        };
        for space in std::mem::take(open) {
            let f = self.vfs.file_mut(space);
            f.d_count -= 1;
            if f.d_count > 0 {
                continue;
            }
            f.d_referenced = true;
            if !f.d_on_lru {
                f.d_on_lru = true;
                let obj = f.dentry.expect("an open file has a dentry");
                let (m, nid) = (self.lru_memcg(obj.memcg), self.obj_nid(obj));
                self.vfs_lru(m, nid).dentries.push_back(space);
            }
        }
    }

    /// `prune_dcache_sb`: walk `nr_to_walk` dentries of `memcg`'s LRU on node `nid`
    /// from its oldest
    /// (`list_lru_walk_one` with `dentry_lru_isolate`): one in use leaves the LRU, a
    /// referenced one loses the mark and goes round again, the others are freed
    /// (`shrink_dentry_list`), each dropping its inode (`iput`). Returns the dentries
    /// freed.
    pub fn prune_dcache_sb(&mut self, memcg: usize, nid: usize, nr_to_walk: u64) -> u64 {
        let li = self.sb_lru_index(memcg, nid);
        let mut freed = 0;
        for _ in 0..nr_to_walk {
            let Some(space) = self.vfs.lru[li].dentries.pop_front() else {
                break;
            };
            self.charge(self.cfg.costs.shrink_object_ns);
            let f: &mut VfsFile = self.vfs.file_mut(space);
            if f.d_count > 0 {
                f.d_on_lru = false;
            } else if f.d_referenced {
                f.d_referenced = false;
                self.vfs.lru[li].dentries.push_back(space);
            } else {
                f.d_on_lru = false;
                let obj = f.dentry.take().expect("a dentry on the LRU exists");
                let cache = self.vfs.dentry_cache;
                self.kmem_cache_free_account(cache, obj);
                freed += 1;
                self.iput_final(space);
            }
        }
        freed
    }

    pub(super) fn vfs_lru(&mut self, memcg: usize, nid: usize) -> &mut super::SbLru {
        let li = self.sb_lru_index(memcg, nid);
        if self.vfs.lru.len() <= li {
            self.vfs.lru.resize(li + 1, super::SbLru::default());
        }
        &mut self.vfs.lru[li]
    }
}
