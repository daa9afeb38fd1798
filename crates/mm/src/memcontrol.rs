//! The memory cgroup tree (mm/memcontrol.c; kernel-reference §3).
//!
//! Every memcg has a page counter (charged up the hierarchy), an lruvec on each node
//! (`Mm::mem_cgroup_lruvec`), per-memcg event counters (memory.stat's pgscan, pgsteal,
//! workingset_*, ...) and memory.events. Ids are indices; 0 is the root, and a parent
//! always has a smaller id than its children.

use super::page::{lru, pg, Pfn};
use super::page_counter::Counters;
use super::Mm;
use crate::vm_event_item::{Ev, VmStat};

/// memory.events' counters. `Memcg::events` holds what happened in the memcg itself
/// (`memory_events_local`, memory.events.local); memory.events is their sum over the
/// subtree, as `memcg_memory_event` adds each event to the memcg and every ancestor
/// below the root.
#[derive(Debug, Clone, Copy, Default)]
pub struct MemcgEvents {
    pub low: u64,
    pub high: u64,
    pub max: u64,
    pub oom: u64,
    pub oom_kill: u64,
    /// MEMCG_OOM_GROUP_KILL: a whole memory.oom.group was killed with this memcg as
    /// the group.
    pub oom_group_kill: u64,
}

impl MemcgEvents {
    /// The counters by memory.events' keys, in the file's order.
    pub fn items(&self) -> [(&'static str, u64); 6] {
        [
            ("low", self.low),
            ("high", self.high),
            ("max", self.max),
            ("oom", self.oom),
            ("oom_kill", self.oom_kill),
            ("oom_group_kill", self.oom_group_kill),
        ]
    }
}

#[derive(Debug, Clone)]
pub struct Memcg {
    pub path: String,
    pub parent: Option<usize>,
    pub children: Vec<usize>,
    /// Events that happened in this memcg itself (memory.stat sums the subtree).
    pub stat: VmStat,
    /// memory.events.local.
    pub events: MemcgEvents,
    /// memory.oom.group.
    pub oom_group: bool,
    /// Kernel memory charged to this memcg itself.
    pub kmem: MemcgKmem,
    /// Page states counted for this memcg's own pages (`lruvec_stat`, pages),
    /// indexed by [`PageState`].
    pub state: [u64; NR_PAGE_STATE],
}

/// Node page states memory.stat shows that the LRU sizes do not give: counted as a
/// page enters and leaves the state, on the page's memcg (`__lruvec_stat_mod_folio`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageState {
    /// NR_FILE_MAPPED: page-cache pages mapped by a process (PG_mapped here).
    FileMapped,
    /// NR_FILE_DIRTY: dirty page-cache pages.
    FileDirty,
    /// NR_WRITEBACK: pages under writeback, page cache and swap writes alike.
    Writeback,
    /// NR_SWAPCACHE: pages in the swap cache.
    SwapCache,
    /// NR_ANON_THPS: pages of anonymous THPs not yet split.
    AnonThps,
}

pub const NR_PAGE_STATE: usize = 5;

/// Kernel memory charged to one memcg (not its children): MEMCG_KMEM and the kernel
/// items of memory.stat.
#[derive(Debug, Clone, Copy, Default)]
pub struct MemcgKmem {
    /// MEMCG_KMEM: every kernel page charged (page tables, stacks, the pages the
    /// objects' bytes were charged as).
    pub kmem_pages: u64,
    /// NR_PAGETABLE and NR_KERNEL_STACK_KB, in pages.
    pub pagetables_pages: u64,
    pub kernel_stack_pages: u64,
    /// NR_SLAB_UNRECLAIMABLE_B, NR_SLAB_RECLAIMABLE_B: bytes of the objects charged.
    pub slab_bytes: [u64; 2],
    /// Bytes charged as whole pages but not yet used by objects: the obj_cgroup's
    /// stock (`obj_stock.nr_bytes`, one stock per memcg here, not per CPU).
    pub obj_stock_bytes: u64,
}

/// Which kernel page a charge is for (the memory.stat item it counts in).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KmemItem {
    PageTables,
    KernelStack,
}

#[derive(Debug, Clone)]
pub struct MemcgTree {
    pub cgs: Vec<Memcg>,
    pub counters: Counters,
    /// The `swap` page counters (memory.swap.current / memory.swap.max).
    pub swap: Counters,
    /// The memory.peak and memory.swap.peak files the scenario's actions hold open,
    /// by name (each on one cgroup's file), in the order the actions first name them.
    pub peak_fds: Vec<OfPeak>,
}

/// A cgroup's two peak files, each over its own page counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeakFile {
    /// memory.peak, over the `memory` counter.
    Memory,
    /// memory.swap.peak, over the `swap` counter.
    Swap,
}

impl PeakFile {
    pub fn from_name(file: &str) -> Option<PeakFile> {
        match file {
            "memory.peak" => Some(PeakFile::Memory),
            "memory.swap.peak" => Some(PeakFile::Swap),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            PeakFile::Memory => "memory.peak",
            PeakFile::Swap => "memory.swap.peak",
        }
    }
}

/// An open memory.peak or memory.swap.peak file (`struct cgroup_of_peak`, v6.12+),
/// under the name the scenario gives it.
#[derive(Debug, Clone)]
pub struct OfPeak {
    pub name: String,
    pub memcg: usize,
    pub file: PeakFile,
    /// The usage this file last reset the peak to, raised by other files' resets;
    /// None until its first write (OFP_PEAK_UNSET), when it joins the cgroup's
    /// watchers (`memory_peaks` / `swap_peaks`).
    pub value: Option<u64>,
}

impl MemcgTree {
    /// The root plus the configured cgroups; panics if a parent comes after its child
    /// (the configuration's builder checks that).
    pub fn new(cfg: &super::Config) -> MemcgTree {
        let root = Memcg {
            path: "/".into(),
            parent: None,
            children: Vec::new(),
            stat: VmStat::default(),
            events: MemcgEvents::default(),
            oom_group: false,
            kmem: MemcgKmem::default(),
            state: [0; NR_PAGE_STATE],
        };
        let mut t = MemcgTree {
            cgs: vec![root],
            counters: Counters::new(),
            swap: Counters::new(),
            peak_fds: Vec::new(),
        };
        for cg in &cfg.memcgs {
            let parent = cg
                .path
                .rsplit_once('/')
                .map_or(0, |(p, _)| t.id_of(p).expect("validated parent"));
            let id = t.counters.add(parent);
            t.swap.add(parent);
            t.swap.c[id].max = cg.swap_max_pages;
            t.cgs.push(Memcg {
                path: cg.path.clone(),
                parent: Some(parent),
                children: Vec::new(),
                stat: VmStat::default(),
                events: MemcgEvents::default(),
                oom_group: cg.oom_group,
                kmem: MemcgKmem::default(),
                state: [0; NR_PAGE_STATE],
            });
            t.cgs[parent].children.push(id);
            let c = &mut t.counters.c[id];
            c.high = cg.high_pages;
            c.max = cg.max_pages;
            t.counters.set_protection(id, cg.min_pages, cg.low_pages);
        }
        // Opened before the run: the name is the file, whenever it is first used.
        for f in &cfg.peak_fds {
            let Some(memcg) = t.id_of(&f.memcg) else {
                continue;
            };
            if t.fd_of(&f.name).is_none() {
                t.peak_fds.push(OfPeak {
                    name: f.name.clone(),
                    memcg,
                    file: f.file,
                    value: None,
                });
            }
        }
        t
    }

    /// The open peak file named `name`.
    pub fn fd_of(&self, name: &str) -> Option<usize> {
        self.peak_fds.iter().position(|f| f.name == name)
    }

    fn peak_counters(&self, file: PeakFile) -> &Counters {
        match file {
            PeakFile::Memory => &self.counters,
            PeakFile::Swap => &self.swap,
        }
    }

    /// `peak_write` (mm/memcontrol.c, v6.12+; `of_peak_reset` later): a write of
    /// anything through open file `fd` (None: a file opened for this write alone)
    /// resets the counter's `local_watermark` to the usage now, raises every other
    /// file that has written (the watchers) to that usage if it is below, and makes
    /// `fd` a watcher whose value is that usage. Note that a watcher's own peak since
    /// its reset is not kept: raised to the usage now, it reads the new
    /// `local_watermark` from then on, as the kernel's code does (cgroup-v2.rst's
    /// "since ... the most recent reset for that FD" is not what it delivers).
    /// Returns the usage in pages.
    pub fn peak_write(&mut self, memcg: usize, file: PeakFile, fd: Option<usize>) -> u64 {
        let counters = match file {
            PeakFile::Memory => &mut self.counters,
            PeakFile::Swap => &mut self.swap,
        };
        let usage = counters.c[memcg].usage;
        counters.c[memcg].local_watermark = usage;
        for w in self
            .peak_fds
            .iter_mut()
            .filter(|w| w.memcg == memcg && w.file == file)
        {
            if let Some(v) = w.value.as_mut() {
                *v = (*v).max(usage);
            }
        }
        // An unnamed file is registered and, closed at once, released again
        // (`peak_release`): it leaves nothing behind.
        if let Some(fd) = fd {
            self.peak_fds[fd].value = Some(usage);
        }
        usage
    }

    /// `peak_show`: through a file that never wrote, the peak since the cgroup was
    /// created (`watermark`); through one that did, the higher of its value and the
    /// peak since the latest reset by any file (`local_watermark`). In pages.
    pub fn peak_show(&self, memcg: usize, file: PeakFile, fd: Option<usize>) -> u64 {
        let c = &self.peak_counters(file).c[memcg];
        match fd.and_then(|fd| self.peak_fds[fd].value) {
            None => c.watermark,
            Some(v) => v.max(c.local_watermark),
        }
    }

    pub fn id_of(&self, path: &str) -> Option<usize> {
        if path == "/" {
            return Some(0);
        }
        self.cgs.iter().position(|c| c.path == path)
    }

    /// The subtree of `root` in pre-order (the order of `mem_cgroup_iter`).
    pub fn subtree(&self, root: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut stack = vec![root];
        while let Some(m) = stack.pop() {
            out.push(m);
            stack.extend(self.cgs[m].children.iter().rev());
        }
        out
    }

    /// `m` and its ancestors, up to the root.
    pub fn ancestors(&self, m: usize) -> impl Iterator<Item = usize> + '_ {
        std::iter::successors(Some(m), move |&c| self.cgs[c].parent)
    }

    /// A memory.stat event counter summed over the subtree (memory.stat is
    /// hierarchical).
    pub fn stat_hier(&self, m: usize, e: Ev) -> u64 {
        self.subtree(m)
            .iter()
            .map(|&c| self.cgs[c].stat.get(e))
            .sum()
    }

    /// Kernel memory charged in the subtree (memory.stat is hierarchical).
    pub fn kmem_hier(&self, m: usize) -> MemcgKmem {
        let mut k = MemcgKmem::default();
        for c in self.subtree(m) {
            let x = self.cgs[c].kmem;
            k.kmem_pages += x.kmem_pages;
            k.pagetables_pages += x.pagetables_pages;
            k.kernel_stack_pages += x.kernel_stack_pages;
            k.slab_bytes[0] += x.slab_bytes[0];
            k.slab_bytes[1] += x.slab_bytes[1];
            k.obj_stock_bytes += x.obj_stock_bytes;
        }
        k
    }

    /// A page state summed over the subtree, in pages (memory.stat is hierarchical).
    pub fn state_hier(&self, m: usize, item: PageState) -> u64 {
        self.subtree(m)
            .iter()
            .map(|&c| self.cgs[c].state[item as usize])
            .sum()
    }

    /// memory.events counters summed over the subtree.
    pub fn events_hier(&self, m: usize) -> MemcgEvents {
        let mut e = MemcgEvents::default();
        for c in self.subtree(m) {
            let x = self.cgs[c].events;
            e.low += x.low;
            e.high += x.high;
            e.max += x.max;
            e.oom += x.oom;
            e.oom_kill += x.oom_kill;
            e.oom_group_kill += x.oom_group_kill;
        }
        e
    }
}

/// FLUSH_TIME (2 × HZ jiffies): the periodic flusher's interval.
pub const MEMCG_FLUSH_TIME_NS: u64 = 2_000_000_000;

impl Mm {
    /// `__lruvec_stat_mod_folio`: `nr` pages of page `pfn`'s memcg, and of its node,
    /// enter (`nr` > 0) or leave a page state.
    #[inline]
    pub fn mod_page_state(&mut self, pfn: Pfn, item: PageState, nr: i64) {
        let memcg = self.frames[pfn as usize].memcg as usize;
        // Wraps below zero as the kernel's counters would: the checker's tally of the
        // frames catches it.
        let v = &mut self.memcg.cgs[memcg].state[item as usize];
        *v = v.wrapping_add_signed(nr);
        let nid = self.pfn_to_nid(pfn);
        let n = &mut self.node_page_state[nid][item as usize];
        *n = n.wrapping_add_signed(nr);
    }

    /// Counts an event globally (/proc/vmstat) and in a memcg (memory.stat).
    #[inline]
    pub fn count_memcg(&mut self, memcg: usize, e: Ev, n: u64) {
        self.vmstat.count(e, n);
        self.memcg.cgs[memcg].stat.count(e, n);
    }

    /// A reclaim event: memory.stat always, /proc/vmstat only for global reclaim
    /// (`target` 0), as shrink_inactive_list counts them.
    #[inline]
    pub fn count_reclaim(&mut self, target: usize, memcg: usize, e: Ev, n: u64) {
        if target == 0 {
            self.vmstat.count(e, n);
        }
        self.memcg.cgs[memcg].stat.count(e, n);
    }

    /// The memcg that allocations of the running task are charged to.
    pub fn current_memcg(&self) -> usize {
        self.current_workload.map_or(0, |w| self.workload_memcg[w])
    }

    /// `mem_cgroup_charge` → `try_charge_memcg`: a new page belongs to the current
    /// task's memcg. Over a memory.max on the way up, reclaim from that memcg (limit
    /// reclaim) and retry, up to MAX_RECLAIM_RETRIES times without progress, then the
    /// memcg OOM killer. False: the charge failed (the caller frees the page); check
    /// `blocked_until` (reclaim has to sleep) and whether the task was killed.
    pub fn mem_cgroup_charge(&mut self, pfn: Pfn) -> bool {
        self.mem_cgroup_charge_gfp(pfn, false)
    }

    /// [`Self::mem_cgroup_charge`] for a caller whose GFP mask may carry
    /// __GFP_NORETRY: then one round of limit reclaim that leaves no room fails the
    /// charge (no retries, no OOM kill), as `try_charge_memcg` goes to `nomem`.
    pub fn mem_cgroup_charge_gfp(&mut self, pfn: Pfn, noretry: bool) -> bool {
        let memcg = self.current_memcg();
        if !self.try_charge_memcg(memcg, 1, noretry) {
            return false;
        }
        let f = &mut self.frames[pfn as usize];
        f.memcg = memcg as u16;
        f.set(pg::CHARGED);
        true
    }

    /// `mem_cgroup_charge` of a folio of `nr_pages` pages from `head` to the current
    /// task's memcg, in one `try_charge_memcg`. False: the charge failed (the caller
    /// frees the folio); check `blocked_until` and whether the task was killed.
    pub fn mem_cgroup_charge_folio(&mut self, head: Pfn, nr_pages: u64) -> bool {
        let memcg = self.current_memcg();
        if !self.try_charge_memcg(memcg, nr_pages, false) {
            return false;
        }
        for pfn in head..head + nr_pages as Pfn {
            let f = &mut self.frames[pfn as usize];
            f.memcg = memcg as u16;
            f.set(pg::CHARGED);
        }
        true
    }

    /// `try_charge_memcg`: `nr_pages` for `memcg`. Over a memory.max on the way up,
    /// reclaim from that memcg (limit reclaim) and retry, up to MAX_RECLAIM_RETRIES
    /// times without progress, then the memcg OOM killer. With `noretry` one round of
    /// reclaim that leaves no room fails the charge. False: the charge failed; check
    /// `blocked_until` (reclaim has to sleep) and whether the task was killed.
    pub fn try_charge_memcg(&mut self, memcg: usize, nr_pages: u64, noretry: bool) -> bool {
        let mut retries = super::page_alloc::MAX_RECLAIM_RETRIES;
        // A folio above PAGE_ALLOC_COSTLY_ORDER (a THP) is unlikely to fit so close to
        // the limit: no retry on partial progress, and `mem_cgroup_oom` declines it
        // (the caller falls back to small pages).
        let costly = nr_pages > 1 << super::page_alloc::PAGE_ALLOC_COSTLY_ORDER;
        loop {
            let over = match self.memcg.counters.try_charge(memcg, nr_pages) {
                Ok(()) => {
                    self.charge_over_high(memcg, nr_pages);
                    return true;
                }
                Err(over) => over,
            };
            self.memcg.cgs[over].events.max += 1;
            let reclaimed = self.try_to_free_mem_cgroup_pages(over, nr_pages, false);
            if self.blocked_until.is_some() {
                return false;
            }
            let c = &self.memcg.counters.c[over];
            if c.usage + nr_pages <= c.max {
                continue; // room now: try again
            }
            if noretry {
                return false;
            }
            if reclaimed > 0 && !costly {
                continue; // progress: try again
            }
            if retries > 0 {
                retries -= 1;
                continue;
            }
            if costly {
                return false;
            }
            // mem_cgroup_oom: kill inside the memcg; a kill frees room, retry.
            if !self.mem_cgroup_out_of_memory(over) {
                return false;
            }
            if self.current_workload.is_some_and(|w| self.workload_dead[w]) {
                return false;
            }
            retries = super::page_alloc::MAX_RECLAIM_RETRIES;
        }
    }

    /// The end of a successful `try_charge_memcg`: over memory.high anywhere up the
    /// tree, the task owes reclaim and maybe a delay (`memcg_nr_pages_over_high`), paid
    /// on the way back to user space (`mem_cgroup_handle_over_high`). Owing more than a
    /// charge batch, it pays now, still in the kernel ("memcg: synchronously enforce
    /// memory.high for large overcharges"), unless it is reclaiming (PF_MEMALLOC): a
    /// THP or a populating mmap would otherwise overrun memory.high by the whole
    /// request first. A penalty sleep then ends the operation that charged
    /// (`throttled_until`).
    fn charge_over_high(&mut self, memcg: usize, nr_pages: u64) {
        let over = self.memcg.ancestors(memcg).any(|m| {
            let c = &self.memcg.counters.c[m];
            m != 0 && c.usage > c.high
        });
        let super::Current::Task(t) = self.current else {
            return;
        };
        if !over {
            return;
        }
        self.over_high[t] += nr_pages;
        if self.over_high[t] > MEMCG_CHARGE_BATCH && !self.in_reclaim {
            if let Some(until_ns) = self.mem_cgroup_handle_over_high() {
                self.throttled_until =
                    Some(self.throttled_until.map_or(until_ns, |t| t.max(until_ns)));
            }
        }
    }

    /// A kernel charge of `nr_pages` for `memcg`: `try_charge_memcg` from a task, or
    /// unconditionally (`force`: a process there from the run's first instant, as if
    /// forked just before it).
    /// Nothing is charged under `kernel.memcg_kmem = false` (cgroup.memory=nokmem).
    fn memcg_kmem_try_charge(&mut self, memcg: usize, nr_pages: u64, force: bool) -> bool {
        if !self.cfg.memcg_kmem {
            return true;
        }
        if force {
            self.memcg.counters.charge(memcg, nr_pages);
            return true;
        }
        self.try_charge_memcg(memcg, nr_pages, false)
    }

    /// `__memcg_kmem_charge_page` for a page table or kernel stack: MEMCG_KMEM and
    /// the item's statistic. False: the charge failed (the caller frees the page).
    pub fn memcg_kmem_charge_pages(
        &mut self,
        memcg: usize,
        nr_pages: u64,
        item: KmemItem,
        force: bool,
    ) -> bool {
        if !self.memcg_kmem_try_charge(memcg, nr_pages, force) {
            return false;
        }
        if self.cfg.memcg_kmem {
            let k = &mut self.memcg.cgs[memcg].kmem;
            k.kmem_pages += nr_pages;
            match item {
                KmemItem::PageTables => k.pagetables_pages += nr_pages,
                KmemItem::KernelStack => k.kernel_stack_pages += nr_pages,
            }
        }
        true
    }

    /// `__memcg_kmem_uncharge_page`.
    pub fn memcg_kmem_uncharge_pages(&mut self, memcg: usize, nr_pages: u64, item: KmemItem) {
        if !self.cfg.memcg_kmem {
            return;
        }
        self.memcg.counters.uncharge(memcg, nr_pages);
        let k = &mut self.memcg.cgs[memcg].kmem;
        k.kmem_pages -= nr_pages;
        match item {
            KmemItem::PageTables => k.pagetables_pages -= nr_pages,
            KmemItem::KernelStack => k.kernel_stack_pages -= nr_pages,
        }
    }

    /// `obj_cgroup_charge` + `mod_objcg_state`: an object of `size_bytes` for
    /// `memcg`, taken from the stock of bytes already charged, else as whole pages
    /// (`obj_cgroup_charge_pages`, the last page's unused bytes going to the stock).
    pub fn obj_cgroup_charge(
        &mut self,
        memcg: usize,
        size_bytes: u64,
        reclaimable: bool,
        force: bool,
    ) -> bool {
        if !self.cfg.memcg_kmem {
            return true;
        }
        let stock = self.memcg.cgs[memcg].kmem.obj_stock_bytes;
        if stock >= size_bytes {
            self.memcg.cgs[memcg].kmem.obj_stock_bytes -= size_bytes;
        } else {
            let nr_pages = size_bytes.div_ceil(4096);
            if !self.memcg_kmem_try_charge(memcg, nr_pages, force) {
                return false;
            }
            let k = &mut self.memcg.cgs[memcg].kmem;
            k.kmem_pages += nr_pages;
            k.obj_stock_bytes += nr_pages * 4096 - size_bytes;
        }
        self.memcg.cgs[memcg].kmem.slab_bytes[usize::from(reclaimable)] += size_bytes;
        true
    }

    /// `obj_cgroup_uncharge`: the object's bytes go back to the stock
    /// (`refill_obj_stock` with allow_uncharge), whose whole pages are uncharged once
    /// it holds more than a page.
    pub fn obj_cgroup_uncharge(&mut self, memcg: usize, size_bytes: u64, reclaimable: bool) {
        if !self.cfg.memcg_kmem {
            return;
        }
        let k = &mut self.memcg.cgs[memcg].kmem;
        k.slab_bytes[usize::from(reclaimable)] -= size_bytes;
        k.obj_stock_bytes += size_bytes;
        if k.obj_stock_bytes > 4096 {
            let nr_pages = k.obj_stock_bytes / 4096;
            k.obj_stock_bytes %= 4096;
            k.kmem_pages -= nr_pages;
            self.memcg.counters.uncharge(memcg, nr_pages);
        }
    }

    /// `mem_cgroup_uncharge`: a page is being freed.
    pub fn mem_cgroup_uncharge(&mut self, pfn: Pfn) {
        let f = &mut self.frames[pfn as usize];
        if f.test_clear(pg::CHARGED) {
            let memcg = f.memcg as usize;
            self.memcg.counters.uncharge(memcg, 1);
        }
    }

    /// `mem_cgroup_get_nr_swap_pages`: swap the memcg may still use, the tightest
    /// memory.swap.max up the tree (and the device's free slots).
    pub fn mem_cgroup_get_nr_swap_pages(&self, memcg: usize) -> u64 {
        let free = self.swap.as_ref().map_or(0, |s| s.nr_free_slots());
        self.memcg
            .ancestors(memcg)
            .map(|m| {
                let c = &self.memcg.swap.c[m];
                c.max.saturating_sub(c.usage)
            })
            .fold(free, u64::min)
    }

    /// `mem_cgroup_protection(target, memcg)`: (emin, elow), or nothing for the target
    /// itself.
    pub fn mem_cgroup_protection(&self, target: usize, memcg: usize) -> (u64, u64) {
        if memcg == target {
            return (0, 0);
        }
        let c = &self.memcg.counters.c[memcg];
        (c.emin, c.elow)
    }

    /// `mem_cgroup_below_min` / `mem_cgroup_below_low`.
    pub fn mem_cgroup_below(&self, target: usize, memcg: usize) -> (bool, bool) {
        if memcg == target {
            return (false, false);
        }
        let c = &self.memcg.counters.c[memcg];
        (c.emin >= c.usage, c.elow >= c.usage)
    }

    /// A memcg's pages on one LRU list, itself and its descendants, exact (what
    /// memory.stat shows after its flush; results.json reports these).
    /// Summed over the nodes' lruvecs (`memcg_page_state`).
    pub fn lruvec_size_hier(&self, memcg: usize, l: usize) -> u64 {
        self.memcg_lruvecs(memcg)
            .map(|lv| self.lruvecs[lv].hier[l])
            .sum()
    }

    /// `lruvec_page_state` for LRU list `l` of lruvec `lv` as reclaim reads it:
    /// hierarchical, and under `memcg_stats_flush = "rstat"` the copy the last rstat
    /// flush left.
    pub fn lruvec_page_state(&self, lv: usize, l: usize) -> u64 {
        let v = &self.lruvecs[lv];
        if self.cfg.memcg_stats_rstat {
            v.hier_flushed[l]
        } else {
            v.hier[l]
        }
    }

    /// WORKINGSET_ACTIVATE_{ANON,FILE} as `lruvec_page_state` reads them.
    pub fn lruvec_workingset_activate(&self, lv: usize) -> [u64; 2] {
        let v = &self.lruvecs[lv];
        if self.cfg.memcg_stats_rstat {
            v.activate_flushed
        } else {
            v.workingset_activate
        }
    }

    /// `do_flush_stats` → `cgroup_rstat_flush`: the subtree's per-CPU deltas are
    /// folded in; its flushed copies become the exact counters and its pending
    /// updates are cleared. A flush of the root is the periodic one's mark
    /// (`flush_last_time`).
    pub fn do_flush_stats(&mut self, memcg: usize) {
        for c in self.memcg.subtree(memcg) {
            for nid in 0..self.nr_nodes() {
                let lv = self.mem_cgroup_lruvec(c, nid);
                let v = &mut self.lruvecs[lv];
                v.hier_flushed = v.hier;
                v.activate_flushed = v.workingset_activate;
                v.stats_updates = 0;
            }
        }
        if memcg == 0 {
            self.memcg_flush_last_ns = self.now;
        }
    }

    /// `mem_cgroup_flush_stats`: flush if the subtree has more pending updates than
    /// MEMCG_CHARGE_BATCH (64) per CPU (`memcg_vmstats_needs_flush`).
    pub fn mem_cgroup_flush_stats(&mut self, memcg: usize) {
        if self.cfg.memcg_stats_rstat
            && self
                .memcg_lruvecs(memcg)
                .map(|lv| self.lruvecs[lv].stats_updates)
                .sum::<u64>()
                > MEMCG_CHARGE_BATCH * self.cfg.nr_cpus
        {
            self.do_flush_stats(memcg);
        }
    }

    /// `mem_cgroup_flush_stats_ratelimited` (reclaim's and workingset's): only when
    /// the periodic flusher is a full cycle late.
    pub fn mem_cgroup_flush_stats_ratelimited(&mut self, memcg: usize) {
        if self.cfg.memcg_stats_rstat
            && self.now > self.memcg_flush_last_ns + 2 * MEMCG_FLUSH_TIME_NS
        {
            self.mem_cgroup_flush_stats(memcg);
        }
    }

    /// `flush_memcg_stats_dwork`: every FLUSH_TIME, the whole tree, pending updates
    /// or not.
    pub fn flush_memcg_stats_dwork(&mut self) {
        self.do_flush_stats(0);
    }

    /// A read of memcg `m`'s memory.stat (`memory_stat_show` flushes first).
    pub fn memory_stat_read(&mut self, m: usize) {
        self.mem_cgroup_flush_stats(m);
    }

    /// memory.numa_stat of a memcg (`memory_numa_stat_show`): per item, its value on
    /// each node (`N0=`, `N1=`, ...), hierarchical as memory.stat's, after a flush:
    /// the LRU sizes in bytes and the workingset activations of the memcg's lruvec
    /// on each node. The other items of the kernel's file are not kept per node.
    pub fn memory_numa_stat(&self, m: usize) -> Vec<(&'static str, Vec<u64>)> {
        let per_node = |f: &dyn Fn(&super::lru::Lruvec) -> u64| {
            self.memcg_lruvecs(m)
                .map(|lv| f(&self.lruvecs[lv]))
                .collect::<Vec<u64>>()
        };
        let size = |ls: &[usize]| per_node(&|v| ls.iter().map(|&l| v.hier[l]).sum::<u64>() * 4096);
        vec![
            (
                "anon",
                size(&[lru::INACTIVE_ANON, lru::ACTIVE_ANON, lru::UNEVICTABLE]),
            ),
            ("file", size(&[lru::INACTIVE_FILE, lru::ACTIVE_FILE])),
            ("inactive_anon", size(&[lru::INACTIVE_ANON])),
            ("active_anon", size(&[lru::ACTIVE_ANON])),
            ("inactive_file", size(&[lru::INACTIVE_FILE])),
            ("active_file", size(&[lru::ACTIVE_FILE])),
            ("unevictable", size(&[lru::UNEVICTABLE])),
            (
                "workingset_activate_anon",
                per_node(&|v| v.workingset_activate[0]),
            ),
            (
                "workingset_activate_file",
                per_node(&|v| v.workingset_activate[1]),
            ),
        ]
    }

    /// memory.stat of a memcg as the kernel prints it (bytes for sizes, counts for
    /// events), in v6.18's order (`memory_stats[]`, then pgscan and pgsteal, then
    /// `memcg_vm_event_stat[]`), with the keys the simulator can compute; docs/scenarios.md's
    /// memory.stat section lists the others and why they are left out.
    pub fn memory_stat(&self, m: usize) -> Vec<(&'static str, u64)> {
        let size = |l: usize| self.lruvec_size_hier(m, l) * 4096;
        let t = &self.memcg;
        let ev = |e: Ev| t.stat_hier(m, e);
        let state = |item: PageState| t.state_hier(m, item) * 4096;
        let k = t.kmem_hier(m);
        vec![
            // NR_ANON_MAPPED counts mlocked anon too; the unevictable list holds
            // nothing else here.
            (
                "anon",
                size(lru::INACTIVE_ANON) + size(lru::ACTIVE_ANON) + size(lru::UNEVICTABLE),
            ),
            ("file", size(lru::INACTIVE_FILE) + size(lru::ACTIVE_FILE)),
            ("kernel", k.kmem_pages * 4096),
            ("kernel_stack", k.kernel_stack_pages * 4096),
            ("pagetables", k.pagetables_pages * 4096),
            ("file_mapped", state(PageState::FileMapped)),
            ("file_dirty", state(PageState::FileDirty)),
            ("file_writeback", state(PageState::Writeback)),
            ("swapcached", state(PageState::SwapCache)),
            ("anon_thp", state(PageState::AnonThps)),
            ("inactive_anon", size(lru::INACTIVE_ANON)),
            ("active_anon", size(lru::ACTIVE_ANON)),
            ("inactive_file", size(lru::INACTIVE_FILE)),
            ("active_file", size(lru::ACTIVE_FILE)),
            ("unevictable", size(lru::UNEVICTABLE)),
            ("slab_reclaimable", k.slab_bytes[1]),
            ("slab_unreclaimable", k.slab_bytes[0]),
            ("slab", k.slab_bytes[0] + k.slab_bytes[1]),
            ("workingset_refault_anon", ev(Ev::WorkingsetRefaultAnon)),
            ("workingset_refault_file", ev(Ev::WorkingsetRefaultFile)),
            ("workingset_activate_anon", ev(Ev::WorkingsetActivateAnon)),
            ("workingset_activate_file", ev(Ev::WorkingsetActivateFile)),
            ("workingset_restore_anon", ev(Ev::WorkingsetRestoreAnon)),
            ("workingset_restore_file", ev(Ev::WorkingsetRestoreFile)),
            (
                "pgscan",
                ev(Ev::PgscanKswapd) + ev(Ev::PgscanDirect) + ev(Ev::PgscanProactive),
            ),
            (
                "pgsteal",
                ev(Ev::PgstealKswapd) + ev(Ev::PgstealDirect) + ev(Ev::PgstealProactive),
            ),
            ("pswpin", ev(Ev::Pswpin)),
            ("pswpout", ev(Ev::Pswpout)),
            ("pgscan_kswapd", ev(Ev::PgscanKswapd)),
            ("pgscan_direct", ev(Ev::PgscanDirect)),
            ("pgscan_proactive", ev(Ev::PgscanProactive)),
            ("pgsteal_kswapd", ev(Ev::PgstealKswapd)),
            ("pgsteal_direct", ev(Ev::PgstealDirect)),
            ("pgsteal_proactive", ev(Ev::PgstealProactive)),
            ("pgfault", ev(Ev::Pgfault)),
            ("pgmajfault", ev(Ev::Pgmajfault)),
            ("pgrefill", ev(Ev::Pgrefill)),
            ("pgactivate", ev(Ev::Pgactivate)),
            ("pgdeactivate", ev(Ev::Pgdeactivate)),
            ("thp_fault_alloc", ev(Ev::ThpFaultAlloc)),
        ]
    }
}

/// `MEMCG_CHARGE_BATCH`: charges are taken 64 pages at a time, and memory.high is
/// settled once a batch has been charged over it; also the per-CPU count of pending
/// statistics updates that makes a flush worth it.
pub const MEMCG_CHARGE_BATCH: u64 = 64;
/// `MEMCG_MAX_HIGH_DELAY_JIFFIES` is 2·HZ; the shifts of the delay formula.
const MEMCG_DELAY_PRECISION_SHIFT: u32 = 20;
const MEMCG_DELAY_SCALING_SHIFT: u32 = 14;

/// `calculate_overage`: how far usage is over high, in 2^-20 units of high.
pub fn calculate_overage(usage: u64, high: u64) -> u64 {
    if usage <= high {
        return 0;
    }
    ((usage - high) << MEMCG_DELAY_PRECISION_SHIFT) / high.max(1)
}

/// `calculate_high_delay`: the throttling penalty in jiffies for `nr_pages` charged
/// over memory.high, quadratic in the overage, capped at 2 s.
pub fn calculate_high_delay(max_overage: u64, nr_pages: u64, hz: u64) -> u64 {
    if max_overage == 0 {
        return 0;
    }
    let penalty = (max_overage as u128 * max_overage as u128 * hz as u128)
        >> MEMCG_DELAY_PRECISION_SHIFT
        >> MEMCG_DELAY_SCALING_SHIFT;
    ((penalty as u64).saturating_mul(nr_pages) / MEMCG_CHARGE_BATCH).min(2 * hz)
}

impl Mm {
    /// `reclaim_high`: reclaim `nr_pages` from every level over its memory.high (below
    /// the root), counting memory.events high.
    fn reclaim_high(&mut self, memcg: usize, nr_pages: u64) -> u64 {
        let levels: Vec<usize> = self.memcg.ancestors(memcg).filter(|&m| m != 0).collect();
        let mut reclaimed = 0;
        for m in levels {
            let c = &self.memcg.counters.c[m];
            if c.usage <= c.high {
                continue;
            }
            self.memcg.cgs[m].events.high += 1;
            reclaimed += self.try_to_free_mem_cgroup_pages(m, nr_pages, false);
        }
        reclaimed
    }

    /// `mem_cgroup_handle_over_high`, run when a task returns to user space owing a
    /// batch charged over memory.high: reclaim, then, if still far over, sleep the
    /// penalty (returned as the time to sleep until).
    pub fn mem_cgroup_handle_over_high(&mut self) -> Option<u64> {
        let super::Current::Task(t) = self.current else {
            return None;
        };
        if self.over_high[t] < MEMCG_CHARGE_BATCH {
            return None;
        }
        let nr_pages = std::mem::take(&mut self.over_high[t]);
        let memcg = self.current_memcg();
        let hz = self.cfg.hz;
        let mut retries = super::page_alloc::MAX_RECLAIM_RETRIES;
        let mut in_retry = false;
        loop {
            let reclaimed = self.reclaim_high(memcg, if in_retry { 32 } else { nr_pages });
            if self.blocked_until.is_some() {
                return self.blocked_until.take();
            }
            let max_overage = self
                .memcg
                .ancestors(memcg)
                .filter(|&m| m != 0)
                .map(|m| {
                    calculate_overage(
                        self.memcg.counters.c[m].usage,
                        self.memcg.counters.c[m].high,
                    )
                })
                .max()
                .unwrap_or(0);
            let penalty = calculate_high_delay(max_overage, nr_pages, hz);
            // Penalties up to 10 ms are not worth a sleep.
            if penalty <= hz / 100 {
                return None;
            }
            // Prefer reclaim over sleeping while reclaim makes progress.
            if reclaimed > 0 || retries > 0 {
                if reclaimed == 0 {
                    retries -= 1;
                }
                in_retry = true;
                continue;
            }
            let until = self.clock() + penalty * self.cfg.jiffy_ns();
            return Some(until);
        }
    }
}

impl Mm {
    /// A write to memory.peak or memory.swap.peak through the open file named `fd`
    /// (None: opened for this write alone), a timed action's.
    pub fn memcg_peak_write(&mut self, memcg: usize, file: PeakFile, fd: Option<&str>) -> String {
        let fd = fd.and_then(|name| self.memcg.fd_of(name));
        let usage = self.memcg.peak_write(memcg, file, fd);
        format!("reset to {} bytes", usage * 4096)
    }

    /// `memory_oom_group_write`: 0 or 1.
    pub fn memory_oom_group_write(&mut self, memcg: usize, group: bool) -> String {
        self.memcg.cgs[memcg].oom_group = group;
        "set".into()
    }

    /// What `cat` of a cgroup file shows now (through the open file `fd`, for the peak
    /// files): bytes, or `max`. None for a file the simulator does not show.
    pub fn cgroup_file_show(&self, memcg: usize, file: &str, fd: Option<&str>) -> Option<String> {
        let limit = |pages: u64| {
            if pages >= super::page_counter::PAGE_COUNTER_MAX {
                "max".to_string()
            } else {
                (pages * 4096).to_string()
            }
        };
        let t = &self.memcg;
        if let Some(pf) = PeakFile::from_name(file) {
            let fd = fd.and_then(|name| t.fd_of(name));
            return Some((t.peak_show(memcg, pf, fd) * 4096).to_string());
        }
        let c = &t.counters.c[memcg];
        Some(match file {
            "memory.current" => (c.usage * 4096).to_string(),
            "memory.min" => (c.min * 4096).to_string(),
            "memory.low" => (c.low * 4096).to_string(),
            "memory.high" => limit(c.high),
            "memory.max" => limit(c.max),
            "memory.swap.current" => (t.swap.c[memcg].usage * 4096).to_string(),
            "memory.oom.group" => u8::from(t.cgs[memcg].oom_group).to_string(),
            _ => return None,
        })
    }

    /// Writes a cgroup interface file (a timed action by an administrator or agent,
    /// running outside any simulated task). Returns what the write did, for results.
    pub fn memcg_write(&mut self, memcg: usize, file: &str, pages: u64) -> String {
        // The root has no limit or protection files (CFTYPE_NOT_ON_ROOT); the loader
        // rejects such writes, this keeps a limit off the root should one get through.
        if memcg == 0 && file != "memory.reclaim" {
            return format!("cannot write {file}: the root cgroup has none");
        }
        self.as_admin(|mm| mm.write_cgroup_file(memcg, file, pages))
    }

    fn write_cgroup_file(&mut self, memcg: usize, file: &str, pages: u64) -> String {
        match file {
            "memory.reclaim" => self.memory_reclaim(memcg, pages),
            "memory.min" | "memory.low" => {
                let c = &self.memcg.counters.c[memcg];
                let (min, low) = if file == "memory.min" {
                    (pages, c.low)
                } else {
                    (c.min, pages)
                };
                self.memcg.counters.set_protection(memcg, min, low);
                "set".into()
            }
            "memory.high" => {
                self.memcg.counters.c[memcg].high = pages;
                let got = self.reclaim_down_to(memcg, pages, false);
                format!("set; reclaimed {got} pages")
            }
            "memory.max" => {
                self.memcg.counters.c[memcg].max = pages;
                let got = self.reclaim_down_to(memcg, pages, true);
                format!("set; reclaimed {got} pages")
            }
            other => format!("cannot write {other}"),
        }
    }

    /// `memory_reclaim` (v6.9+ batching): reclaim `target` pages in batches of a
    /// quarter of what is left, giving up after MAX_RECLAIM_RETRIES fruitless tries
    /// (the write then fails with EAGAIN).
    fn memory_reclaim(&mut self, memcg: usize, target: u64) -> String {
        let mut reclaimed = 0;
        let mut retries = super::page_alloc::MAX_RECLAIM_RETRIES;
        while reclaimed < target {
            let batch = ((target - reclaimed) / 4).max(1);
            self.blocked_until = None;
            let got = self.try_to_free_mem_cgroup_pages(memcg, batch, true);
            if got == 0 {
                if retries == 0 {
                    return format!("EAGAIN after {reclaimed} of {target} pages");
                }
                retries -= 1;
            }
            reclaimed += got;
        }
        format!("reclaimed {reclaimed} pages")
    }

    /// After lowering memory.high or memory.max: reclaim until usage fits, up to 16
    /// fruitless tries; for memory.max, then the memcg OOM killer.
    fn reclaim_down_to(&mut self, memcg: usize, limit: u64, oom: bool) -> u64 {
        let mut total = 0;
        let mut retries = super::page_alloc::MAX_RECLAIM_RETRIES;
        loop {
            let usage = self.memcg.counters.c[memcg].usage;
            if usage <= limit {
                return total;
            }
            self.blocked_until = None;
            let got = self.try_to_free_mem_cgroup_pages(memcg, usage - limit, false);
            total += got;
            if got > 0 {
                continue;
            }
            if retries > 0 {
                retries -= 1;
                continue;
            }
            if !oom || !self.mem_cgroup_out_of_memory(memcg) {
                return total;
            }
            retries = super::page_alloc::MAX_RECLAIM_RETRIES;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page_alloc::test_pages::add_pages_of;
    use crate::test_util::{add_memcgs, add_process, task_mm};
    use crate::SpaceKind;
    use crate::{Config, PeakFdConfig};

    /// A 2-CPU machine with memcg `app` (a child of the root) and `flush` as
    /// `kernel.memcg_stats_flush`; the memcg's id.
    fn stats_mm(flush: &str) -> (Mm, usize) {
        let mut cfg = Config::new(64 << 8);
        cfg.nr_cpus = 2;
        cfg.memcg_stats_rstat = match flush {
            "rstat" => true,
            "exact" => false,
            _ => unreachable!("{flush}"),
        };
        add_memcgs(&mut cfg, &["app"]);
        add_process(&mut cfg, Some("app"));
        let mm = task_mm(cfg);
        let app = mm.workload_memcg[0];
        (mm, app)
    }

    #[test]
    fn reclaim_reads_statistics_as_the_last_flush_left_them() {
        let (mut mm, app) = stats_mm("rstat");
        let inactive = |mm: &Mm, m: usize| mm.lruvec_page_state(m, lru::INACTIVE_FILE);
        add_pages_of(&mut mm, SpaceKind::File, 100, 0, Some(0));
        assert_eq!(mm.lruvec_size_hier(app, lru::INACTIVE_FILE), 100);
        assert_eq!(inactive(&mm, app), 0, "nothing flushed yet");
        // memory.stat flushes past MEMCG_CHARGE_BATCH × nr_cpus = 128 pending
        // updates: 100 are not enough, 150 are; the flush covers app's subtree only.
        mm.memory_stat_read(app);
        assert_eq!(inactive(&mm, app), 0);
        add_pages_of(&mut mm, SpaceKind::File, 50, 0, Some(0));
        mm.memory_stat_read(app);
        assert_eq!(inactive(&mm, app), 150);
        assert_eq!(inactive(&mm, 0), 0, "the root was not read");
        // The periodic flusher at 2 s: the whole tree, whatever is pending.
        mm.now = MEMCG_FLUSH_TIME_NS;
        add_pages_of(&mut mm, SpaceKind::File, 10, 0, Some(0));
        mm.flush_memcg_stats_dwork();
        assert_eq!((inactive(&mm, app), inactive(&mm, 0)), (160, 160));
        // The ratelimited flush (reclaim's) waits for the flusher to be a whole
        // cycle late: not at 5 s (3 s after it), at 6.1 s, given enough updates.
        add_pages_of(&mut mm, SpaceKind::File, 200, 0, Some(0));
        mm.now = 5_000_000_000;
        mm.mem_cgroup_flush_stats_ratelimited(app);
        assert_eq!(inactive(&mm, app), 160);
        mm.now = 6_100_000_000;
        mm.mem_cgroup_flush_stats_ratelimited(app);
        assert_eq!(inactive(&mm, app), 360);
        // Refault counters go the same way.
        mm.lruvecs[app].workingset_activate = [0, 7];
        assert_eq!(mm.lruvec_workingset_activate(app), [0, 0]);
        mm.flush_memcg_stats_dwork();
        assert_eq!(mm.lruvec_workingset_activate(app), [0, 7]);
    }

    #[test]
    fn exact_statistics_need_no_flush() {
        let (mut mm, app) = stats_mm("exact");
        add_pages_of(&mut mm, SpaceKind::File, 100, 0, Some(0));
        assert_eq!(mm.lruvec_page_state(app, lru::INACTIVE_FILE), 100);
        mm.lruvecs[app].workingset_activate = [2, 3];
        assert_eq!(mm.lruvec_workingset_activate(app), [2, 3]);
    }

    #[test]
    fn flushed_statistics_lag_by_at_most_the_flush_period() {
        // Pages added every 100 ms for 10 s, the flusher every 2 s as the engine
        // runs it: at every step reclaim sees the count of the last multiple of 2 s.
        let (mut mm, app) = stats_mm("rstat");
        let step_ns = 100_000_000u64;
        let mut exact_at = std::collections::BTreeMap::new();
        for i in 1..=100u64 {
            mm.now = i * step_ns;
            add_pages_of(&mut mm, SpaceKind::File, 3, 0, Some(0));
            if mm.now.is_multiple_of(MEMCG_FLUSH_TIME_NS) {
                mm.flush_memcg_stats_dwork();
            }
            exact_at.insert(mm.now, mm.lruvec_size_hier(app, lru::INACTIVE_FILE));
            mm.mem_cgroup_flush_stats_ratelimited(app); // never a cycle late here
            let last_flush = mm.now / MEMCG_FLUSH_TIME_NS * MEMCG_FLUSH_TIME_NS;
            let want = exact_at.get(&last_flush).copied().unwrap_or(0);
            assert_eq!(
                mm.lruvec_page_state(app, lru::INACTIVE_FILE),
                want,
                "at {}",
                mm.now
            );
        }
    }

    #[test]
    fn high_delay_table() {
        // kernel-reference §3.4: high = 100 MiB (25600 pages), a batch over it.
        // 101M: overage = (256 << 20) / 25600 = 10485; 10485² · 1000 = 109935225000;
        // >> 20 >> 14 = 109935225000 / 2^34 = 6.4 → 6 jiffies (6 ms at HZ=1000).
        let high = 25_600;
        let delay = |usage_mib: u64| {
            calculate_high_delay(calculate_overage(usage_mib * 256, high), 64, 1000)
        };
        assert_eq!(calculate_overage(101 * 256, high), 10_485);
        assert_eq!(delay(101), 6);
        // 105M: overage = (1280 << 20)/25600 = 52428; 52428² · 1000 >> 34 = 159.99 → 159.
        assert_eq!(delay(105), 159);
        // 110M: overage 104857: 104857² · 1000 >> 34 = 639.99 → 639.
        assert_eq!(delay(110), 639);
        // 118M and beyond: the 2·HZ cap.
        assert_eq!(delay(118), 2000);
        assert_eq!(delay(150), 2000);
        // Under high: nothing; half a batch: half the delay (105M: 159·32/64 = 79).
        assert_eq!(delay(100), 0);
        assert_eq!(
            calculate_high_delay(calculate_overage(105 * 256, high), 32, 1000),
            79
        );
    }

    /// A tree with cgroup `app` (id 1) and open peak files `A` and `B` on its
    /// memory.peak.
    fn peak_tree() -> MemcgTree {
        let mut cfg = Config::new(1 << 18);
        add_memcgs(&mut cfg, &["app"]);
        cfg.peak_fds = ["A", "B"]
            .map(|name| PeakFdConfig {
                name: name.into(),
                memcg: "app".into(),
                file: PeakFile::Memory,
            })
            .into();
        MemcgTree::new(&cfg)
    }

    #[test]
    fn peak_files_reset_per_open_file_as_peak_write_does() {
        const M: u64 = 256; // pages per MiB
        let mut t = peak_tree();
        let (app, a, b) = (1, t.fd_of("A").unwrap(), t.fd_of("B").unwrap());
        let mem = PeakFile::Memory;
        let read = |t: &MemcgTree, fd: Option<usize>| t.peak_show(app, mem, fd) / M;
        // Usage 10M; A writes: A's value and local_watermark are 10M.
        t.counters.charge(app, 10 * M);
        assert_eq!(t.peak_write(app, mem, Some(a)), 10 * M);
        // Up to 30M: every charge raises local_watermark; A reads max(10, 30).
        t.counters.charge(app, 20 * M);
        assert_eq!(read(&t, Some(a)), 30);
        // B has not written: it reads the all-time watermark, as a fresh open does.
        assert_eq!((read(&t, Some(b)), read(&t, None)), (30, 30));
        // Down to 20M, B writes: local_watermark = 20M, and A, a watcher, is raised
        // from 10M to 20M. A's 30M since its own reset is gone: the kernel keeps no
        // per-file peak, only its value and the shared local_watermark.
        t.counters.uncharge(app, 10 * M);
        assert_eq!(t.peak_write(app, mem, Some(b)), 20 * M);
        assert_eq!(t.peak_fds[a].value, Some(20 * M));
        // Up to 25M: A reads max(20, 25), B max(20, 25); a fresh open the 30M.
        t.counters.charge(app, 5 * M);
        assert_eq!(
            (read(&t, Some(a)), read(&t, Some(b)), read(&t, None)),
            (25, 25, 30)
        );
        // A writes at 25M, which raises watcher B from 20M to 25M too. Usage falls
        // to 15M and an unnamed write (`echo x > memory.peak`) resets
        // local_watermark there, raising no one (both are above 15M). Up to 16M: A
        // and B read their 25M, above the local 16M.
        t.peak_write(app, mem, Some(a));
        assert_eq!(t.peak_fds[b].value, Some(25 * M));
        t.counters.uncharge(app, 10 * M);
        assert_eq!(t.peak_write(app, mem, None), 15 * M);
        t.counters.charge(app, M);
        assert_eq!(t.counters.c[app].local_watermark, 16 * M);
        assert_eq!(
            (read(&t, Some(a)), read(&t, Some(b)), read(&t, None)),
            (25, 25, 30)
        );
        // The swap counter's file is another file: untouched by all this.
        assert_eq!(t.peak_show(app, PeakFile::Swap, None), 0);
        assert_eq!(t.swap.c[app].local_watermark, 0);
    }

    #[test]
    fn tree_from_paths_in_preorder() {
        let mut cfg = Config::new(1 << 18);
        let paths = [
            "system.slice",
            "workload.slice",
            "workload.slice/app",
            "system.slice/cron",
        ];
        add_memcgs(&mut cfg, &paths);
        cfg.memcgs[1].low_pages = 512 * 256;
        cfg.memcgs[2].min_pages = 64 * 256;
        let t = MemcgTree::new(&cfg);
        assert_eq!(t.id_of("workload.slice/app"), Some(3));
        assert_eq!(t.cgs[3].parent, Some(2));
        // Pre-order: root, system.slice, its child cron, workload.slice, app.
        assert_eq!(t.subtree(0), vec![0, 1, 4, 2, 3]);
        assert_eq!(t.ancestors(3).collect::<Vec<_>>(), vec![3, 2, 0]);
        assert_eq!(t.counters.c[2].low, 512 * 256);
        assert_eq!(t.counters.c[3].min, 64 * 256);
    }
}
