//! The frame table (`struct page` / `struct folio`) and page-table entries.
//!
//! One [`Frame`] per physical 4 KiB page, indexed by a u32 PFN, 28 bytes each. A frame is
//! always on exactly one list: a buddy free list, an LRU list, the zram pool, or (only
//! inside a reclaim call) a private isolation list. The links are intrusive u32 PFNs, so
//! nothing on the per-access path allocates.
//!
//! Page-table entries ([`Pte`]) are u64 words in flat per-mapping arrays. The same
//! encoding serves anonymous page tables and the page cache of a file (its xarray):
//! present (a PFN, with the hardware accessed and dirty bits), a swap entry, or a
//! workingset shadow entry left behind by reclaim.

/// The base page size (x86-64).
pub const PAGE_SIZE: u64 = 4096;

pub type Pfn = u32;
/// "No frame": the end of a list, an empty slot.
pub const NIL: Pfn = u32::MAX;

/// Page flags (`enum pageflags`), the subset reclaim reads.
pub mod pg {
    /// On an LRU list (PG_lru).
    pub const LRU: u16 = 1 << 0;
    pub const ACTIVE: u16 = 1 << 1;
    pub const REFERENCED: u16 = 1 << 2;
    /// Was on the active list before (PG_workingset): refaults of it are thrashing.
    pub const WORKINGSET: u16 = 1 << 3;
    pub const DIRTY: u16 = 1 << 4;
    pub const WRITEBACK: u16 = 1 << 5;
    /// Reclaim wants it freed as soon as writeback ends (PG_reclaim).
    pub const RECLAIM: u16 = 1 << 6;
    /// Anonymous memory: lives on the anon LRU, is reclaimed to swap.
    pub const SWAPBACKED: u16 = 1 << 7;
    /// Has a swap slot (`Frame::swap`) holding a copy (PG_swapcache).
    pub const SWAPCACHE: u16 = 1 << 8;
    pub const UNEVICTABLE: u16 = 1 << 9;
    /// Free, owned by the buddy allocator (PageBuddy).
    pub const BUDDY: u16 = 1 << 10;
    /// In a VM_LOCKED mapping (PG_mlocked, mm/mlock.c): unevictable while it is.
    pub const MLOCKED: u16 = 1 << 11;
    /// File page mapped into a page table (mmap), so reclaim must unmap it.
    pub const MAPPED: u16 = 1 << 12;
    /// Its owner died while the page was under writeback: free it at completion.
    pub const ORPHAN: u16 = 1 << 13;
    /// Brought in by swap readahead and not yet used (PG_readahead).
    pub const READAHEAD: u16 = 1 << 14;
    /// Charged to `Frame::memcg` (folio->memcg_data set).
    pub const CHARGED: u16 = 1 << 15;
}

/// Which list a frame is on (for the invariant checker and fast assertions).
pub mod on {
    /// LRU lists use their `lru` index 0..=4 (LRU_INACTIVE_ANON .. LRU_UNEVICTABLE).
    pub const BUDDY: u8 = 0x10;
    /// Driver memory on no LRU: a zsmalloc page of the zram pool, or a page of a
    /// ramdisk (brd) holding its data.
    pub const ZRAM: u8 = 0x20;
    pub const ISOLATED: u8 = 0x30;
    /// On a multi-gen LRU list: `LRU_GEN | gen` (the list it is physically on; its
    /// generation in `Frame::gen` may be younger after an in-place promotion).
    pub const LRU_GEN: u8 = 0x40;
    /// A slab of a kernel object cache (every frame of it).
    pub const SLAB: u8 = 0x50;
    /// A page a kernel caller holds (`highalloc`'s blocks, every frame of them).
    pub const KERNEL: u8 = 0x60;
    /// Free on a CPU's per-CPU list (`pcp.rs`; the head frame of the block).
    pub const PCP: u8 = 0x70;
    pub const NONE: u8 = 0xff;
}

/// `struct page`, reduced to what reclaim needs, in 28 bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct Frame {
    pub prev: Pfn,
    pub next: Pfn,
    /// Owning address space (index into `Mm::spaces`) for LRU pages.
    pub mapping: u32,
    /// Page offset within the owner (virtual page number or file page index).
    pub index: u32,
    /// Swap slot while PG_swapcache (`folio->swap`). A page-cache page is never in the
    /// swap cache: on one, the word holds the time it was dirtied instead
    /// ([`Frame::dirtied_ms`]), as the kernel's `folio->swap` shares its word with
    /// `folio->private`. One word for both keeps a frame at 28 bytes: 1 GiB less
    /// host memory per TiB simulated.
    pub swap: u32,
    pub flags: u16,
    /// Owning memcg id (0 = root).
    pub memcg: u16,
    /// Buddy order while free.
    pub order: u8,
    /// Which list (see [`on`]).
    pub list: u8,
    pub zone: u8,
    /// On an LRU page: the multi-gen LRU's generation + 1 (low 3 bits, 0 = none) and
    /// reference counter (2 bits above, `lru_gen::LRU_REFS_WIDTH`); on a free block:
    /// the free list's migratetype.
    pub gen: u8,
}

const _: () = assert!(std::mem::size_of::<Frame>() == 28);

// SAFETY: every field is an integer, so all-zero bytes are a valid `Frame`. The table is
// allocated zeroed (the OS commits a page of it when first touched); a frame means
// something only once `page_alloc` has initialised its block.
unsafe impl bytemuck::Zeroable for Frame {}

impl Frame {
    pub const EMPTY: Frame = Frame {
        prev: NIL,
        next: NIL,
        mapping: u32::MAX,
        index: 0,
        swap: u32::MAX,
        flags: 0,
        memcg: 0,
        order: 0,
        list: on::NONE,
        zone: 0,
        gen: 0,
    };

    /// A dirty page-cache page's dirtying time, in ms of virtual time (writeback's
    /// expiry), kept in the `swap` word.
    #[inline]
    pub fn dirtied_ms(&self) -> u32 {
        debug_assert!(!self.test(pg::SWAPCACHE));
        self.swap
    }

    #[inline]
    pub fn set_dirtied_ms(&mut self, now_ms: u32) {
        debug_assert!(!self.test(pg::SWAPCACHE));
        self.swap = now_ms;
    }

    #[inline]
    pub fn test(&self, f: u16) -> bool {
        self.flags & f != 0
    }
    #[inline]
    pub fn set(&mut self, f: u16) {
        self.flags |= f;
    }
    #[inline]
    pub fn clear(&mut self, f: u16) {
        self.flags &= !f;
    }
    /// Test-and-clear, as `folio_test_clear_referenced`.
    #[inline]
    pub fn test_clear(&mut self, f: u16) -> bool {
        let was = self.flags & f != 0;
        self.flags &= !f;
        was
    }
    /// `folio_is_file_lru`: not swap-backed.
    #[inline]
    pub fn is_file_lru(&self) -> bool {
        self.flags & pg::SWAPBACKED == 0
    }
}

/// A page-table (or page-cache) entry.
pub type Pte = u64;

pub mod pte {
    use super::{Pfn, Pte};

    const TYPE_SHIFT: u32 = 62;
    pub const TYPE_MASK: u64 = 3 << TYPE_SHIFT;
    pub const NONE: u64 = 0;
    pub const PRESENT: u64 = 1 << TYPE_SHIFT;
    pub const SWAP: u64 = 2 << TYPE_SHIFT;
    pub const SHADOW: u64 = 3 << TYPE_SHIFT;
    /// Hardware accessed ("young") bit, set on every access, cleared by reclaim's rmap walk.
    pub const YOUNG: u64 = 1 << 61;
    /// Hardware dirty bit, set on write.
    pub const DIRTY: u64 = 1 << 60;
    /// A present page on a slower node than the accessing CPU's (a CPU-less tier),
    /// its node in the bits at `NID_SHIFT`: the workloads' hit loops charge its
    /// accesses the node's latency. A simulator mark, not a hardware bit: reclaim and
    /// the kernel's walks see a present entry as ever.
    pub const SLOW: u64 = 1 << 59;
    /// `PAGE_PROTNONE` set by NUMA balancing's scan (`change_prot_numa`): the next
    /// access takes a NUMA hint fault (`do_numa_page`).
    pub const NUMA: u64 = 1 << 58;
    const PAYLOAD: u64 = (1 << 60) - 1;

    #[inline]
    pub fn kind(e: Pte) -> u64 {
        e & TYPE_MASK
    }
    #[inline]
    pub fn is_present(e: Pte) -> bool {
        e & TYPE_MASK == PRESENT
    }
    /// A hit the hardware completes on its own: present and not `NUMA` (the
    /// workloads' hit loops take only these, charging a `SLOW` one its node's
    /// latency).
    #[inline]
    pub fn hw_hit(e: Pte) -> bool {
        e & (TYPE_MASK | NUMA) == PRESENT
    }
    /// A `SLOW` entry's node (bits 52..58; the pfn is the low 32).
    pub const NID_SHIFT: u32 = 52;
    #[inline]
    pub fn slow_nid(e: Pte) -> usize {
        (e >> NID_SHIFT & 63) as usize
    }
    #[inline]
    pub fn present(pfn: Pfn) -> Pte {
        PRESENT | pfn as u64
    }
    #[inline]
    pub fn pfn(e: Pte) -> Pfn {
        e as u32
    }
    #[inline]
    pub fn swap(slot: u32) -> Pte {
        SWAP | slot as u64
    }
    #[inline]
    pub fn slot(e: Pte) -> u32 {
        e as u32
    }
    #[inline]
    pub fn shadow(v: u64) -> Pte {
        SHADOW | (v & PAYLOAD)
    }
    #[inline]
    pub fn shadow_value(e: Pte) -> u64 {
        e & PAYLOAD
    }
}

/// LRU list indices (`enum lru_list`).
pub mod lru {
    pub const INACTIVE_ANON: usize = 0;
    pub const ACTIVE_ANON: usize = 1;
    pub const INACTIVE_FILE: usize = 2;
    pub const ACTIVE_FILE: usize = 3;
    pub const UNEVICTABLE: usize = 4;
    pub const NR_LRU_LISTS: usize = 5;
    pub const ACTIVE: usize = 1;
    pub const FILE: usize = 2;
    /// The four evictable lists, in the kernel's `for_each_evictable_lru` order.
    pub const EVICTABLE: [usize; 4] = [INACTIVE_ANON, ACTIVE_ANON, INACTIVE_FILE, ACTIVE_FILE];

    pub fn name(l: usize) -> &'static str {
        [
            "inactive_anon",
            "active_anon",
            "inactive_file",
            "active_file",
            "unevictable",
        ][l]
    }
    /// `folio_lru_list` for an evictable folio: base by type, plus active.
    pub fn of(file: bool, active: bool) -> usize {
        (if file { FILE } else { 0 }) + if active { ACTIVE } else { 0 }
    }
}
