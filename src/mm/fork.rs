//! What a workload's process costs the kernel, and what its exit gives back
//! (kernel/fork.c `copy_process`/`dup_mm`, kernel/exit.c `do_exit`): per thread a
//! `task_struct` and a 16 KiB kernel stack, per process an `mm_struct`,
//! `signal_struct`, `sighand_struct` and `files_struct`, per mapping a
//! `vm_area_struct`. All are charged to the workload's memcg (their caches are
//! SLAB_ACCOUNT; stacks go through `memcg_charge_kernel_stack`) and are unmovable.
//! A workload's process is forked before the run starts (charged regardless of its
//! memcg's limit, as if it had been there already) and exits when its last thread
//! finishes, stops or is killed: its anonymous memory and page tables are unmapped
//! (`exit_mmap`), its objects and stacks freed, its files closed.

use super::memcontrol::KmemItem;
use super::slab::KmemCache;
use super::{page_alloc, zone, Mm, THREAD_SIZE_ORDER};

/// /proc/slabinfo object sizes of a v6.x x86-64 distribution kernel (they vary with
/// the configuration by a few hundred bytes).
pub const TASK_STRUCT_SIZE_BYTES: u64 = 9_984;
pub const MM_STRUCT_SIZE_BYTES: u64 = 1_344;
pub const SIGNAL_CACHE_SIZE_BYTES: u64 = 1_152;
pub const SIGHAND_CACHE_SIZE_BYTES: u64 = 2_112;
pub const FILES_CACHE_SIZE_BYTES: u64 = 704;
pub const VM_AREA_STRUCT_SIZE_BYTES: u64 = 176;

/// The caches of fork's objects (`Mm::kmem_caches` indices).
#[derive(Debug, Clone, Copy, Default)]
pub struct ForkCaches {
    pub task_struct: u32,
    pub mm_struct: u32,
    pub signal_cache: u32,
    pub sighand_cache: u32,
    pub files_cache: u32,
    pub vm_area_struct: u32,
}

impl Mm {
    /// `proc_caches_init` and friends, and the VFS's dentry and inode caches
    /// (SLAB_RECLAIM_ACCOUNT): made at boot, before any workload's cache.
    pub fn kmem_caches_init(&mut self) {
        let nr_cpus = self.cfg.nr_cpus as u32;
        let mut cache = |size, reclaimable| {
            self.kmem_caches
                .push(KmemCache::new(size, reclaimable, nr_cpus));
            (self.kmem_caches.len() - 1) as u32
        };
        let fork = ForkCaches {
            task_struct: cache(TASK_STRUCT_SIZE_BYTES, false),
            mm_struct: cache(MM_STRUCT_SIZE_BYTES, false),
            signal_cache: cache(SIGNAL_CACHE_SIZE_BYTES, false),
            sighand_cache: cache(SIGHAND_CACHE_SIZE_BYTES, false),
            files_cache: cache(FILES_CACHE_SIZE_BYTES, false),
            vm_area_struct: cache(VM_AREA_STRUCT_SIZE_BYTES, false),
        };
        let dentry = cache(crate::fs::DENTRY_SIZE_BYTES, true);
        let inode = cache(crate::fs::INODE_SIZE_BYTES, true);
        self.fork_caches = fork;
        self.vfs.dentry_cache = dentry;
        self.vfs.inode_cache = inode;
    }

    /// `copy_process` for workload `w`'s process and its `nr_threads` threads (with
    /// their kernel stacks if it has `kernel_stacks`). Returns the threads that got a
    /// stack.
    pub fn fork_workload(&mut self, w: usize, nr_threads: usize, kernel_stacks: bool) -> usize {
        let memcg = self.workload_memcg[w];
        if self.workload_objs.len() <= w {
            self.workload_objs.resize(w + 1, Vec::new());
        }
        let c = self.fork_caches;
        let nr_vmas = self.mm_spaces.get(w).map_or(0, Vec::len);
        let per_process = [c.mm_struct, c.signal_cache, c.sighand_cache, c.files_cache];
        let caches = per_process
            .into_iter()
            .chain(std::iter::repeat_n(c.vm_area_struct, nr_vmas))
            .chain(std::iter::repeat_n(c.task_struct, nr_threads));
        for cache in caches {
            if let Some(obj) = self.kmem_cache_alloc_account(cache, memcg, true) {
                self.workload_objs[w].push((cache, obj));
            }
        }
        if kernel_stacks {
            self.alloc_kernel_stacks(w, nr_threads)
        } else {
            0
        }
    }

    /// `alloc_thread_stack_node` for `nr_threads` threads of workload `w`: a
    /// THREAD_SIZE (16 KiB) unmovable block each, charged to its memcg
    /// (`memcg_charge_kernel_stack`). Returns how many it got.
    pub fn alloc_kernel_stacks(&mut self, w: usize, nr_threads: usize) -> usize {
        if self.kernel_stacks.len() <= w {
            self.kernel_stacks.resize(w + 1, Vec::new());
        }
        let gfp = page_alloc::Gfp {
            migratetype: zone::MIGRATE_UNMOVABLE,
            ..page_alloc::GFP_HIGHUSER_MOVABLE
        };
        let memcg = self.workload_memcg.get(w).copied().unwrap_or(0);
        for _ in 0..nr_threads {
            match self.alloc_kernel_pages(gfp, THREAD_SIZE_ORDER) {
                Some(pfn) => {
                    self.memcg_kmem_charge_pages(
                        memcg,
                        1 << THREAD_SIZE_ORDER,
                        KmemItem::KernelStack,
                        true,
                    );
                    self.kernel_stacks[w].push(pfn);
                }
                None => break,
            }
        }
        self.kernel_stacks[w].len()
    }

    /// `do_exit` of workload `w`'s last thread: `exit_mm` → `exit_mmap` (every
    /// mapping it owns unmapped, its page tables freed), the stacks and objects
    /// freed and uncharged, the files closed. Nothing if it already exited.
    pub fn exit_workload(&mut self, w: usize) {
        if self.workload_dead[w] {
            return;
        }
        self.workload_dead[w] = true;
        let owned: Vec<usize> = (0..self.spaces.len())
            .filter(|&i| self.spaces[i].owner == Some(w) && !self.spaces[i].dead)
            .collect();
        for si in owned {
            self.zap_space(si as u32);
            self.spaces[si].dead = true;
        }
        let mapped: Vec<u32> = (0..self.spaces.len() as u32)
            .filter(|&i| self.spaces[i as usize].mapper == Some(w))
            .collect();
        for si in mapped {
            self.unmap_file_mapping(si);
        }
        let memcg = self.workload_memcg[w];
        if let Some(stacks) = self.kernel_stacks.get_mut(w) {
            for pfn in std::mem::take(stacks) {
                self.free_kernel_pages(pfn, THREAD_SIZE_ORDER);
                self.memcg_kmem_uncharge_pages(
                    memcg,
                    1 << THREAD_SIZE_ORDER,
                    KmemItem::KernelStack,
                );
            }
        }
        if let Some(objs) = self.workload_objs.get_mut(w) {
            for (cache, obj) in std::mem::take(objs) {
                self.kmem_cache_free_account(cache, obj);
            }
        }
        self.vfs_close_files(w);
    }
}
