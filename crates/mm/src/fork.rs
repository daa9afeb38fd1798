//! What a workload's process costs the kernel, and what its exit gives back
//! (kernel/fork.c `copy_process`/`dup_mm`, kernel/exit.c `do_exit`): per thread a
//! `task_struct` and a 16 KiB kernel stack, per process an `mm_struct`,
//! `signal_struct`, `sighand_struct` and `files_struct`, per mapping a
//! `vm_area_struct`. All are charged to the workload's memcg (their caches are
//! SLAB_ACCOUNT; stacks go through `memcg_charge_kernel_stack`) and are unmovable.
//! A workload running from the run's first instant is there before it starts
//! (`fork_workload`: charged regardless of its memcg's limit, as if it had been
//! forked just before); one that starts later is forked then (`copy_process`, its
//! charges reclaiming as any charge does, or failing with ENOMEM). It exits when its
//! last thread finishes, stops or is killed: its anonymous memory and page tables are
//! unmapped (`exit_mmap`), its objects and stacks freed, its files closed.

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

/// What `copy_process` came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForkResult {
    Done,
    /// Reclaim for one of its charges or allocations has to sleep until then; what
    /// was allocated is kept and the fork goes on after the sleep.
    Retry {
        until_ns: u64,
    },
    /// A charge or allocation failed (nothing left to reclaim or kill): the fork
    /// fails and the process never runs.
    Enomem,
}

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

    /// Workload `w`'s process as it is when the run begins: `copy_process` for it
    /// and its `nr_threads` threads (with their kernel stacks if it has
    /// `kernel_stacks`), charged whatever its memcg's limit says. Returns the threads
    /// that got a stack.
    pub fn fork_workload(&mut self, w: usize, nr_threads: usize, kernel_stacks: bool) -> usize {
        self.copy_process(w, nr_threads, kernel_stacks, true);
        self.kernel_stacks.get(w).map_or(0, Vec::len)
    }

    /// `copy_process` for workload `w`'s process and its `nr_threads` threads (the
    /// first thread's `fork`, the others' `clone`), run by its first thread as the
    /// workload starts: the objects (`dup_task_struct`, `dup_mm`, `copy_signal`,
    /// `copy_sighand`, `copy_files`, a `vm_area_struct` per mapping by `dup_mmap`) and,
    /// with `kernel_stacks`, a stack per thread, all charged to `w`'s memcg (the
    /// launcher runs in it: the charges are current's, and current's memcg is the
    /// workload's). The charges reclaim from the memcg and may OOM-kill in it, as
    /// GFP_KERNEL charges do. A sleep in reclaim keeps what was allocated and the fork
    /// goes on after it (`Retry`); a charge or allocation that fails outright fails
    /// the fork with ENOMEM, everything it allocated freed (`bad_fork_cleanup_*`).
    /// `force` (the run's first instant) charges regardless of limits and leaves out
    /// what could not be allocated.
    pub fn copy_process(
        &mut self,
        w: usize,
        nr_threads: usize,
        kernel_stacks: bool,
        force: bool,
    ) -> ForkResult {
        let memcg = self.workload_memcg[w];
        if self.workload_objs.len() <= w {
            self.workload_objs.resize(w + 1, Vec::new());
        }
        if self.kernel_stacks.len() <= w {
            self.kernel_stacks.resize(w + 1, Vec::new());
        }
        if !force && self.workload_objs[w].is_empty() && self.kernel_stacks[w].is_empty() {
            // The system calls themselves, one per task made; a fork resumed after a
            // sleep in reclaim has paid them.
            self.charge(self.cfg.costs.syscall_ns * nr_threads as u64);
        }
        let c = self.fork_caches;
        let nr_vmas = self.mm_spaces.get(w).map_or(0, Vec::len);
        let per_process = [c.mm_struct, c.signal_cache, c.sighand_cache, c.files_cache];
        let caches = per_process
            .into_iter()
            .chain(std::iter::repeat_n(c.vm_area_struct, nr_vmas))
            .chain(std::iter::repeat_n(c.task_struct, nr_threads));
        // Resumed after a sleep: the objects allocated before it are kept.
        let done = if force {
            0
        } else {
            self.workload_objs[w].len()
        };
        for cache in caches.skip(done) {
            match self.kmem_cache_alloc_account(cache, memcg, force) {
                Some(obj) => self.workload_objs[w].push((cache, obj)),
                None if force => {}
                None => return self.copy_process_failed(w),
            }
        }
        if !kernel_stacks {
            self.workload_forked[w] = true;
            return ForkResult::Done;
        }
        let gfp = page_alloc::Gfp {
            migratetype: zone::MIGRATE_UNMOVABLE,
            ..page_alloc::GFP_HIGHUSER_MOVABLE
        };
        while self.kernel_stacks[w].len() < nr_threads {
            // alloc_thread_stack_node, then memcg_charge_kernel_stack.
            let Some(pfn) = self.alloc_kernel_pages(gfp, THREAD_SIZE_ORDER) else {
                if force {
                    break;
                }
                return self.copy_process_failed(w);
            };
            let pages = 1 << THREAD_SIZE_ORDER;
            if !self.memcg_kmem_charge_pages(memcg, pages, KmemItem::KernelStack, force) {
                self.free_kernel_pages(pfn, THREAD_SIZE_ORDER);
                return self.copy_process_failed(w);
            }
            self.kernel_stacks[w].push(pfn);
        }
        self.workload_forked[w] = true;
        ForkResult::Done
    }

    /// A fork's charge or allocation did not succeed: a sleep in reclaim (the fork
    /// goes on after it), else ENOMEM with what it allocated freed.
    fn copy_process_failed(&mut self, w: usize) -> ForkResult {
        if let Some(until_ns) = self.blocked_until.take() {
            return ForkResult::Retry { until_ns };
        }
        self.free_process_kmem(w);
        ForkResult::Enomem
    }

    /// The stacks and objects workload `w`'s process holds, freed and uncharged.
    fn free_process_kmem(&mut self, w: usize) {
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
    }

    /// A new process in workload `w`'s slot after the one before exited
    /// ([`Mm::exit_workload`]), to be forked by [`Mm::copy_process`]: its mappings are
    /// the same ranges again, empty (their tables were zapped), and it has run on no
    /// CPU yet. Not after an OOM kill.
    pub fn revive_workload(&mut self, w: usize) {
        debug_assert!(self.workload_dead[w] && self.workload_objs[w].is_empty());
        self.workload_dead[w] = false;
        self.workload_forked[w] = false;
        for s in self.spaces.iter_mut().filter(|s| s.owner == Some(w)) {
            debug_assert!(s.dead && s.nr_present == 0 && s.pt_pages.is_empty());
            s.dead = false;
        }
        if let Some(mask) = self.mm_cpumask.get_mut(w) {
            mask.fill(0);
        }
        if let Some(ran) = self.mm_ran.get_mut(w) {
            *ran = 0;
        }
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
        self.free_process_kmem(w);
        self.vfs_close_files(w);
    }
}
