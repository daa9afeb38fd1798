//! Swap devices and the anonymous page-out / swap-in paths (mm/swapfile.c,
//! mm/swap_state.c, mm/page_io.c, drivers/block/zram; kernel-reference §8).
//!
//! Each swap slot holds one of: free, allocated (data on the device, nothing cached),
//! a page in the swap cache, or a workingset shadow of an evicted page. zram stores
//! pages compressed in a pool of real frames taken from the buddy allocator, so what
//! swapping to zram frees is a page minus its compressed size.

use super::blk_mq::Device;
use super::memcontrol::PageState;
use super::page::{on, pg, pte, Pfn, Pte};
use super::page_alloc::GFP_MEMALLOC_NOWAIT;
use super::vmscan::PageOut;
use super::{Mm, SwapConfig, SwapKind};
use crate::trace::Tp;
use crate::vm_event_item::Ev;

pub struct SwapDevice {
    pub kind: SwapKind,
    pub nr_slots: u32,
    /// Freed slots, the most recently freed on top: handed out before fresh ones.
    freed: Vec<u32>,
    /// Slots from here up have never been used; they are handed out in ascending
    /// order (as the cluster allocator does) once `freed` is empty. Together the two
    /// are the stack of free slots with the lowest never-used slot under the freed
    /// ones, without a word per slot up front.
    next_fresh: u32,
    /// Per slot: `pte::NONE` (free), `pte::SWAP` (allocated), `pte::present(pfn)`
    /// (swap-cache page), `pte::shadow(..)` (evicted, with shadow). Zeroed (NONE), so
    /// the host commits only the part slots were used in, as for `slot_memcg`.
    slots: Vec<Pte>,
    /// zram: bytes one page compresses to, bytes stored, and the pool cap.
    compressed_page_bytes: u64,
    pub stored_bytes: u64,
    mem_limit_bytes: u64,
    /// zram: pages stored (`orig_data_size` / 4096).
    pub stored_pages: u64,
    /// zram: which slots hold compressed data.
    stored_map: Vec<u64>,
    /// The memcg each used slot is charged to (`swap_cgroup`).
    pub slot_memcg: Vec<u16>,
    /// disk: the device.
    pub device: Option<Device>,
}

const ALLOCATED: Pte = pte::SWAP;

impl SwapDevice {
    pub fn new(cfg: &SwapConfig) -> SwapDevice {
        let nr_slots = cfg.size_pages as u32;
        SwapDevice {
            kind: cfg.kind,
            nr_slots,
            freed: Vec::new(),
            next_fresh: 0,
            slots: vec![pte::NONE; nr_slots as usize],
            // A ramdisk stores pages as they are.
            compressed_page_bytes: if cfg.kind == SwapKind::Ramdisk {
                4096
            } else {
                ((4096.0 / cfg.compression_ratio).ceil() as u64).clamp(1, 4096)
            },
            stored_bytes: 0,
            mem_limit_bytes: cfg.mem_limit_bytes,
            stored_pages: 0,
            stored_map: Vec::new(),
            slot_memcg: vec![0; nr_slots as usize],
            device: (cfg.kind == SwapKind::Disk).then(|| Device::new(&cfg.device)),
        }
    }

    pub fn nr_free_slots(&self) -> u64 {
        self.freed.len() as u64 + (self.nr_slots - self.next_fresh) as u64
    }

    pub fn nr_used_slots(&self) -> u64 {
        self.nr_slots as u64 - self.nr_free_slots()
    }

    /// Slots below this may be in use; none above it ever was.
    pub fn slots_ever_used(&self) -> u32 {
        self.next_fresh
    }

    /// `get_swap_pages`: one slot.
    fn alloc_slot(&mut self) -> Option<u32> {
        let s = match self.freed.pop() {
            Some(s) => s,
            None if self.next_fresh < self.nr_slots => {
                self.next_fresh += 1;
                self.next_fresh - 1
            }
            None => return None,
        };
        self.slots[s as usize] = ALLOCATED;
        Some(s)
    }

    pub fn mark_swapcache(&mut self, slot: u32, pfn: Pfn) {
        self.slots[slot as usize] = pte::present(pfn);
    }

    pub fn set_shadow(&mut self, slot: u32, shadow: u64) {
        self.slots[slot as usize] = pte::shadow(shadow);
    }

    pub fn slot(&self, slot: u32) -> Pte {
        self.slots[slot as usize]
    }

    /// A swap-in of `slot` is coming: start loading its entry (and what freeing it
    /// reads).
    #[inline]
    pub fn prefetch_slot(&self, slot: u32) {
        if let Some(e) = self.slots.get(slot as usize) {
            crate::hint::prefetch(e);
        }
        self.prefetch_for_free(slot);
    }

    /// A swap-in of `slot` has begun and will free the slot when done: start loading
    /// what [`Mm::swap_free`] reads beside the slot itself (its memcg, zram's map), so
    /// the misses overlap the fault's allocation and reclaim.
    pub fn prefetch_for_free(&self, slot: u32) {
        if let Some(m) = self.slot_memcg.get(slot as usize) {
            crate::hint::prefetch(m);
        }
        if let Some(w) = self.stored_map.get(slot as usize / 64) {
            crate::hint::prefetch(w);
        }
    }

    /// The swap-cache page of a slot, if one is there.
    pub fn lookup_swap_cache(&self, slot: u32) -> Option<Pfn> {
        let e = self.slots[slot as usize];
        pte::is_present(e).then(|| pte::pfn(e))
    }
}

impl Mm {
    /// `vm_swap_full`: more than half of swap is in use.
    pub fn vm_swap_full(&self) -> bool {
        self.swap
            .as_ref()
            .is_some_and(|s| s.nr_free_slots() * 2 < s.nr_slots as u64)
    }

    /// `add_to_swap`: give an anon page a slot and put it in the swap cache, dirty.
    pub fn add_to_swap(&mut self, pfn: Pfn) -> bool {
        if self.swap.is_none() {
            return false;
        }
        // mem_cgroup_try_charge_swap: within memory.swap.max up the tree.
        let memcg = self.frames[pfn as usize].memcg as usize;
        if self.memcg.swap.try_charge(memcg, 1).is_err() {
            return false;
        }
        let Some(sw) = self.swap.as_mut() else {
            return false;
        };
        let Some(slot) = sw.alloc_slot() else {
            self.memcg.swap.uncharge(memcg, 1);
            return false;
        };
        sw.slot_memcg[slot as usize] = memcg as u16;
        sw.mark_swapcache(slot, pfn);
        let f = &mut self.frames[pfn as usize];
        f.swap = slot;
        f.set(pg::SWAPCACHE | pg::DIRTY);
        self.mod_page_state(pfn, PageState::SwapCache, 1);
        true
    }

    /// `swap_free` of the last reference: the slot and whatever zram stored for it.
    pub fn swap_free(&mut self, slot: u32) {
        let Some(sw) = self.swap.as_mut() else {
            return;
        };
        let was = sw.slots[slot as usize];
        debug_assert!(was != pte::NONE, "double free of swap slot {slot}");
        sw.slots[slot as usize] = pte::NONE;
        sw.freed.push(slot);
        let memcg = sw.slot_memcg[slot as usize] as usize;
        self.memcg.swap.uncharge(memcg, 1);
        // zram frees the slot's data (swap_slot_free_notify); brd keeps its page, as
        // swap without discard never tells it the slot is free.
        let sw = self.swap.as_mut().unwrap();
        if sw.kind == SwapKind::Zram && sw.stored_has(slot) {
            sw.stored_clear(slot);
            sw.stored_bytes -= sw.compressed_page_bytes;
            sw.stored_pages -= 1;
            self.zram_shrink_pool();
        }
    }

    /// `folio_free_swap`: drop a swap-cache page's slot; the page becomes plain anon
    /// (dirty: its only copy is now in memory).
    pub fn folio_free_swap(&mut self, pfn: Pfn) {
        let slot = self.frames[pfn as usize].swap;
        let f = &mut self.frames[pfn as usize];
        f.clear(pg::SWAPCACHE);
        f.set(pg::DIRTY);
        f.swap = u32::MAX;
        self.mod_page_state(pfn, PageState::SwapCache, -1);
        self.swap_free(slot);
    }

    /// `pageout` → `swap_writepage` for anon, or a filesystem writepage (kswapd only)
    /// for file pages.
    pub fn pageout(&mut self, pfn: Pfn) -> PageOut {
        let f = self.frames[pfn as usize];
        if f.is_file_lru() {
            // The filesystem's writepage: waits for a free request if the queue is full.
            if let Some(t) = self.storage.congested(self.now) {
                self.block_until(t);
                return PageOut::Keep;
            }
            self.vmscan_write(pfn);
            self.start_file_writeback(pfn, true);
            return PageOut::Async;
        }
        let slot = f.swap;
        let kind = self.swap.as_ref().map(|s| s.kind);
        match kind {
            Some(k @ (SwapKind::Zram | SwapKind::Ramdisk)) => {
                let stored = self.swap.as_ref().unwrap().stored_has(slot);
                if k == SwapKind::Zram {
                    self.charge(self.cfg.costs.compress_ns);
                    // A page rewritten to its slot replaces the old compressed copy.
                    if stored {
                        let sw = self.swap.as_mut().unwrap();
                        sw.stored_clear(slot);
                        sw.stored_bytes -= sw.compressed_page_bytes;
                        sw.stored_pages -= 1;
                    }
                } else {
                    // brd: a memory copy into the slot's page, allocated on first write.
                    self.charge(self.cfg.costs.copy_page_ns);
                }
                // brd rewrites the page it has; zram (and brd's first write) stores anew.
                let reuse = k == SwapKind::Ramdisk && stored;
                if !reuse && !self.zram_store(slot) {
                    // The write fails (pool full or out of memory): the page stays.
                    self.remap_after_failed_swapout(pfn);
                    return PageOut::Activate;
                }
                self.frames[pfn as usize].clear(pg::DIRTY);
                // count_swpout_vm_event: the page's memcg too.
                self.count_memcg(self.frames[pfn as usize].memcg as usize, Ev::Pswpout, 1);
                self.vmscan_write(pfn);
                self.count(Ev::PgpgOut, 4);
                // zram completes the write at once: folio_end_writeback runs now.
                self.acct_reclaim_writeback(pfn);
                PageOut::Done
            }
            Some(SwapKind::Disk) => {
                // A full request queue makes the writer sleep for a free request.
                let dev = self.swap.as_mut().unwrap().device.as_mut().unwrap();
                if let Some(t) = dev.congested(self.now) {
                    self.block_until(t);
                    return PageOut::Keep;
                }
                let f = &mut self.frames[pfn as usize];
                f.clear(pg::DIRTY);
                f.set(pg::WRITEBACK | pg::RECLAIM);
                self.plug.push((pfn, true));
                // count_swpout_vm_event: the page's memcg too.
                self.count_memcg(self.frames[pfn as usize].memcg as usize, Ev::Pswpout, 1);
                self.vmscan_write(pfn);
                self.count(Ev::PgpgOut, 4);
                PageOut::Async
            }
            _ => PageOut::Keep,
        }
    }

    /// A page written by reclaim: `nr_vmscan_write` and `mm_vmscan_write_folio`.
    fn vmscan_write(&mut self, pfn: Pfn) {
        self.count(Ev::NrVmscanWrite, 1);
        if self.tracing(Tp::WriteFolio) {
            let flags = if self.frames[pfn as usize].is_file_lru() {
                "RECLAIM_WB_FILE|RECLAIM_WB_ASYNC"
            } else if self
                .swap
                .as_ref()
                .is_some_and(|s| matches!(s.kind, SwapKind::Zram | SwapKind::Ramdisk))
            {
                "RECLAIM_WB_ANON|RECLAIM_WB_SYNC"
            } else {
                "RECLAIM_WB_ANON|RECLAIM_WB_ASYNC"
            };
            trace_event!(self, Tp::WriteFolio, "pfn=0x{pfn:x} flags={flags}");
        }
    }

    /// The failed write leaves the page resident: point the PTE back at it.
    fn remap_after_failed_swapout(&mut self, pfn: Pfn) {
        let f = self.frames[pfn as usize];
        let s = &mut self.spaces[f.mapping as usize];
        let e = s.pte_mut(f.index);
        if pte::kind(*e) == pte::SWAP && pte::slot(*e) == f.swap {
            *e = pte::present(pfn) | pte::DIRTY;
            s.nr_present += 1;
            s.nr_swap -= 1;
        }
        self.frames[pfn as usize].clear(pg::DIRTY);
    }

    /// Grows the zram pool to hold one more compressed page. The pool allocates with
    /// reclaim's PF_MEMALLOC rights: below the MIN watermark if need be.
    fn zram_store(&mut self, slot: u32) -> bool {
        let sw = self.swap.as_ref().unwrap();
        let new_bytes = sw.stored_bytes + sw.compressed_page_bytes;
        if sw.mem_limit_bytes > 0 && new_bytes > sw.mem_limit_bytes {
            return false;
        }
        let need_pages = new_bytes.div_ceil(4096);
        while self.zram_pool.len < need_pages {
            let Some(p) = self.alloc_pages(GFP_MEMALLOC_NOWAIT, 0) else {
                return false;
            };
            let f = &mut self.frames[p as usize];
            f.flags = 0;
            f.list = on::ZRAM;
            self.zram_pool.add_head(&mut self.frames, p);
        }
        let sw = self.swap.as_mut().unwrap();
        sw.stored_bytes = new_bytes;
        sw.stored_pages += 1;
        sw.stored_set(slot);
        true
    }

    /// Returns pool pages no longer needed (zsmalloc frees empty zspages).
    fn zram_shrink_pool(&mut self) {
        let need = self
            .swap
            .as_ref()
            .map_or(0, |s| s.stored_bytes.div_ceil(4096));
        while self.zram_pool.len > need {
            let p = self.zram_pool.pop_head(&mut self.frames).unwrap();
            let f = &mut self.frames[p as usize];
            f.flags = 0;
            f.list = on::NONE;
            self.free_pages(p, 0);
        }
    }
}

/// zram keeps a per-slot "has data" bit (`zram_table`); a compact bitmap.
impl SwapDevice {
    fn stored_has(&self, slot: u32) -> bool {
        self.stored_map
            .get(slot as usize / 64)
            .is_some_and(|w| w >> (slot % 64) & 1 == 1)
    }
    fn stored_set(&mut self, slot: u32) {
        let i = slot as usize / 64;
        if self.stored_map.len() <= i {
            self.stored_map.resize(i + 1, 0);
        }
        self.stored_map[i] |= 1 << (slot % 64);
    }
    fn stored_clear(&mut self, slot: u32) {
        if let Some(w) = self.stored_map.get_mut(slot as usize / 64) {
            *w &= !(1 << (slot % 64));
        }
    }
}
