//! The multi-gen LRU (mm/vmscan.c `CONFIG_LRU_GEN` part, include/linux/mm_inline.h,
//! mm/workingset.c `lru_gen_*`; kernel-reference §4).
//!
//! Each lruvec keeps up to `MAX_NR_GENS` generations per type (anon, file) in
//! `LruGenFolio`. Aging (`try_to_inc_max_seq`) walks the workloads' page tables for
//! accessed bits and makes a new youngest generation; eviction (`evict_folios`) takes
//! folios from the oldest one, choosing the type and the tiers to protect with the PID
//! controller over refault rates. Folios reclaimed go through the same
//! `shrink_folio_list`, writeback, swap and throttling as the classic LRU.
//!
//! A frame's generation is in `Frame::gen` (`gen + 1` in its low three bits, 0 when on
//! no generation list) with the `LRU_REFS_WIDTH`-bit reference counter above it; the
//! list it is physically on is `Frame::list` = `on::LRU_GEN | gen`. The two differ when
//! a page-table walk promoted the folio in place (`folio_update_gen`): the folio stays
//! where it was until `sort_folio` meets it, as in the kernel.
//!
//! Global reclaim picks memcgs one of three ways (`kernel.lru_gen.memcg_reclaim`,
//! §4.14): `iter` (MGLRU before "optimize multiple memcgs"), `seed` (v6.1) and
//! `memcg-lru` (the per-node memcg LRU of v6.3+). `iter` and `seed` also take v6.1's
//! placement of new folios and its walk promotion (every young folio moves); the rest
//! (tiers, refs, eviction) follows the base version in all three.

use super::list::LruList;
use super::page::{lru, on, pg, pte, Pfn, Pte, NIL};
use super::vmscan::{ScanControl, DEF_PRIORITY};
use super::zone::{zone_watermark_ok, AllocFlags, MAX_NR_ZONES, WMARK_HIGH, WMARK_LOW};
use super::{Mm, SpaceKind};
use crate::trace::Tp;
use crate::vm_event_item::Ev;

pub const MIN_NR_GENS: u64 = 2;
pub const MAX_NR_GENS: u64 = 4;
pub const MAX_NR_TIERS: usize = 4;
pub const MIN_LRU_BATCH: u64 = 64;
pub const MAX_LRU_BATCH: u64 = MIN_LRU_BATCH * 64;
/// Bits of the per-folio reference counter (`LRU_REFS_WIDTH`).
pub const LRU_REFS_WIDTH: u32 = 2;
const LRU_GEN_MASK: u8 = 0x7;
/// How many PTEs ahead a page-table walk starts loading a young entry's frame.
const WALK_PREFETCH_AHEAD: u32 = 16;
const LRU_REFS_SHIFT: u32 = 3;
const LRU_REFS_MASK: u8 = ((1 << LRU_REFS_WIDTH) - 1) << LRU_REFS_SHIFT;
pub const MAX_SWAPPINESS: u64 = 200;
/// `SWAPPINESS_ANON_ONLY`: the debugfs "max", anon only.
pub const SWAPPINESS_ANON_ONLY: u64 = MAX_SWAPPINESS + 1;
pub const ANON: usize = 0;
pub const FILE: usize = 1;
/// memcg LRU generations (3 today; 2 when introduced) and bins.
pub const MEMCG_NR_GENS: usize = 3;
pub const MEMCG_NR_BINS: usize = 8;
const BLOOM_FILTER_SHIFT: u32 = 15;
const BLOOM_WORDS: usize = (1 << BLOOM_FILTER_SHIFT) / 64;
/// PTEs per page-table page (a PMD entry's span).
pub const PTRS_PER_PTE: u32 = 512;

/// `lru_gen_from_seq`.
#[inline]
pub fn lru_gen_from_seq(seq: u64) -> usize {
    (seq % MAX_NR_GENS) as usize
}

/// `order_base_2`: ceil(log2(n)), 0 for n <= 1.
fn order_base_2(n: u32) -> usize {
    if n <= 1 {
        0
    } else {
        (32 - (n - 1).leading_zeros()) as usize
    }
}

/// `lru_tier_from_refs`: the top tier for PG_workingset, else log2 of the accesses.
pub fn lru_tier_from_refs(refs: u32, workingset: bool) -> usize {
    if workingset {
        MAX_NR_TIERS - 1
    } else {
        order_base_2(refs).min(MAX_NR_TIERS - 1)
    }
}

/// How global reclaim picks memcgs (`kernel.lru_gen.memcg_reclaim`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemcgReclaim {
    /// MGLRU before the seed: mem_cgroup_iter, kswapd ages every memcg each round.
    Iter,
    /// "mm: multi-gen LRU: optimize multiple memcgs" as merged in v6.1.
    Seed,
    /// The per-node memcg LRU (v6.3+).
    MemcgLru,
}

/// The MGLRU settings of `mm::Config`.
#[derive(Debug, Clone, Copy)]
pub struct LruGenConfig {
    /// `kernel.lru = "mglru"` with the main switch (0x0001) on.
    pub enabled: bool,
    /// 0x0002: page-table walks during aging.
    pub mm_walk: bool,
    /// 0x0004: the walk tests and clears the PMD entries' accessed bits and skips the
    /// page-table pages under an old one (x86's `arch_has_hw_nonleaf_pmd_young`).
    pub nonleaf_young: bool,
    /// `min_ttl_ms` in jiffies (`msecs_to_jiffies`), 0 = off.
    pub min_ttl_jiffies: u64,
    pub memcg_reclaim: MemcgReclaim,
}

/// Refault statistics for one tier position (`struct ctrl_pos`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CtrlPos {
    pub refaulted: u64,
    pub total: u64,
    pub gain: u64,
}

/// `positive_ctrl_err`: the process variable has few refaults, or a refault rate no
/// higher than the set point's (scaled by the gains).
pub fn positive_ctrl_err(sp: &CtrlPos, pv: &CtrlPos) -> bool {
    pv.refaulted < MIN_LRU_BATCH
        || pv.refaulted as u128 * (sp.total + MIN_LRU_BATCH) as u128 * sp.gain as u128
            <= (sp.refaulted + 1) as u128 * pv.total as u128 * pv.gain as u128
}

/// memcg LRU segments (`lrugen->seg`).
pub const MEMCG_LRU_HEAD: u8 = 1;
pub const MEMCG_LRU_TAIL: u8 = 2;

/// `lru_gen_rotate_memcg` operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemcgLruOp {
    Nop,
    Head,
    Tail,
    Old,
    Young,
}

/// `struct lru_gen_folio` plus the lruvec's `lru_gen_mm_state`.
#[derive(Debug, Clone)]
pub struct LruGenFolio {
    pub max_seq: u64,
    pub min_seq: [u64; 2],
    /// Jiffies at which each generation was born.
    pub timestamps: [u64; MAX_NR_GENS as usize],
    pub folios: [[[LruList; MAX_NR_ZONES]; 2]; MAX_NR_GENS as usize],
    /// Pages per generation by their `Frame::gen` (promoted-in-place folios count in
    /// their new generation, as the kernel's batched walk updates do).
    pub nr_pages: [[[i64; MAX_NR_ZONES]; 2]; MAX_NR_GENS as usize],
    pub avg_refaulted: [[u64; MAX_NR_TIERS]; 2],
    pub avg_total: [[u64; MAX_NR_TIERS]; 2],
    /// NR_HIST_GENS = 1: the current history slot only.
    pub protected: [[u64; MAX_NR_TIERS]; 2],
    pub evicted: [[u64; MAX_NR_TIERS]; 2],
    pub refaulted: [[u64; MAX_NR_TIERS]; 2],
    /// The memcg LRU: generation, segment, bin, and the links of its bin's list.
    pub memcg_gen: usize,
    pub seg: u8,
    pub bin: usize,
    pub memcg_prev: Option<usize>,
    pub memcg_next: Option<usize>,
    pub on_memcg_lru: bool,
    /// `mm_state.seq`: the last completed page-table walk iteration.
    pub mm_seq: u64,
    /// The double-buffered Bloom filters of PMD ranges worth walking (`seq % 2`);
    /// `None` until first reset (tests as "maybe present").
    pub filters: [Option<Box<[u64; BLOOM_WORDS]>>; 2],
    /// MM_LEAF_TOTAL, MM_LEAF_YOUNG, MM_NONLEAF_FOUND, MM_NONLEAF_ADDED.
    pub mm_stats: [u64; 4],
}

impl Default for LruGenFolio {
    /// `lru_gen_init_lruvec`: max_seq = MIN_NR_GENS + 1, min_seq 0, so four
    /// generations exist, all born at boot.
    fn default() -> Self {
        LruGenFolio {
            max_seq: MIN_NR_GENS + 1,
            min_seq: [0, 0],
            timestamps: [0; MAX_NR_GENS as usize],
            folios: Default::default(),
            nr_pages: Default::default(),
            avg_refaulted: Default::default(),
            avg_total: Default::default(),
            protected: Default::default(),
            evicted: Default::default(),
            refaulted: Default::default(),
            memcg_gen: 0,
            seg: 0,
            bin: 0,
            memcg_prev: None,
            memcg_next: None,
            on_memcg_lru: false,
            mm_seq: MIN_NR_GENS,
            filters: [None, None],
            mm_stats: [0; 4],
        }
    }
}

impl LruGenFolio {
    /// `get_nr_gens`.
    pub fn nr_gens(&self, t: usize) -> u64 {
        self.max_seq - self.min_seq[t] + 1
    }

    /// `lru_gen_is_active`: the two youngest generations count as "active".
    pub fn is_active(&self, gen: usize) -> bool {
        gen == lru_gen_from_seq(self.max_seq) || gen == lru_gen_from_seq(self.max_seq - 1)
    }

    /// `evictable_min_seq`: the oldest generation among the types `swappiness` allows.
    pub fn evictable_min_seq(&self, swappiness: u64) -> u64 {
        evictable_types(swappiness)
            .map(|t| self.min_seq[t])
            .min()
            .unwrap_or(self.max_seq)
    }

    /// Pages of type `t` in generation `gen`, all zones (negative transients as 0).
    pub fn gen_pages(&self, gen: usize, t: usize) -> u64 {
        self.nr_pages[gen][t].iter().map(|&n| n.max(0) as u64).sum()
    }

    /// `read_ctrl_pos`: refaults and totals of `tier` (`MAX_NR_TIERS` = all tiers).
    pub fn read_ctrl_pos(&self, t: usize, tier: usize, gain: u64) -> CtrlPos {
        let tiers = if tier >= MAX_NR_TIERS {
            0..MAX_NR_TIERS
        } else {
            tier..tier + 1
        };
        let mut pos = CtrlPos {
            gain,
            ..CtrlPos::default()
        };
        for i in tiers {
            pos.refaulted += self.avg_refaulted[t][i] + self.refaulted[t][i];
            pos.total += self.avg_total[t][i] + self.protected[t][i] + self.evicted[t][i];
        }
        pos
    }

    /// `reset_ctrl_pos` with NR_HIST_GENS = 1: on a min_seq advance (`carryover`) fold
    /// the slot into the moving averages (smoothing 1/2) and clear it; on a max_seq
    /// advance nothing (no other slot to clear).
    pub fn reset_ctrl_pos(&mut self, t: usize, carryover: bool) {
        if !carryover {
            return;
        }
        for tier in 0..MAX_NR_TIERS {
            self.avg_refaulted[t][tier] =
                (self.avg_refaulted[t][tier] + self.refaulted[t][tier]) / 2;
            self.avg_total[t][tier] =
                (self.avg_total[t][tier] + self.protected[t][tier] + self.evicted[t][tier]) / 2;
            self.refaulted[t][tier] = 0;
            self.evicted[t][tier] = 0;
            self.protected[t][tier] = 0;
        }
    }

    /// `get_type_to_scan`: file at swappiness <= 1, anon at >= 200; otherwise the type
    /// whose tiers refault less, anon weighted by swappiness, file by 200 − swappiness.
    pub fn get_type_to_scan(&self, swappiness: u64) -> usize {
        if swappiness <= 1 {
            return FILE;
        }
        if swappiness >= MAX_SWAPPINESS {
            return ANON;
        }
        let sp = self.read_ctrl_pos(ANON, MAX_NR_TIERS, swappiness);
        let pv = self.read_ctrl_pos(FILE, MAX_NR_TIERS, MAX_SWAPPINESS - swappiness);
        if positive_ctrl_err(&sp, &pv) {
            FILE
        } else {
            ANON
        }
    }

    /// `get_tier_idx`: the highest tier still evicted; tiers above it refault clearly
    /// more than tier 0 (gains 2:3) and are protected.
    pub fn get_tier_idx(&self, t: usize) -> usize {
        let sp = self.read_ctrl_pos(t, 0, 2);
        let mut tier = 1;
        while tier < MAX_NR_TIERS {
            let pv = self.read_ctrl_pos(t, tier, 3);
            if !positive_ctrl_err(&sp, &pv) {
                break;
            }
            tier += 1;
        }
        tier - 1
    }
}

/// `for_each_evictable_type`: file only at swappiness 0, anon only at 201.
pub fn evictable_types(swappiness: u64) -> impl Iterator<Item = usize> {
    let lo = (swappiness == 0) as usize;
    let hi = (swappiness < SWAPPINESS_ANON_ONLY) as usize;
    lo..=hi
}

/// The per-node memcg LRU (`pgdat->memcg_lru`): generations of bins of lists of the
/// node's lruvecs (one per memcg).
#[derive(Debug, Clone, Default)]
pub struct MemcgLru {
    pub seq: u64,
    pub nr_memcgs: [u64; MEMCG_NR_GENS],
    /// (first, last) lruvec of each list.
    pub fifo: [[(Option<usize>, Option<usize>); MEMCG_NR_BINS]; MEMCG_NR_GENS],
}

/// `get_memcg_gen`.
pub fn get_memcg_gen(seq: u64) -> usize {
    (seq % MEMCG_NR_GENS as u64) as usize
}

/// Frame helpers for the generation byte.
pub mod folio {
    use super::*;
    use crate::page::Frame;

    /// `folio_lru_gen`: the generation in the flags, if on a generation list.
    #[inline]
    pub fn lru_gen(f: &Frame) -> Option<usize> {
        match f.gen & LRU_GEN_MASK {
            0 => None,
            g => Some(g as usize - 1),
        }
    }

    #[inline]
    pub fn set_gen(f: &mut Frame, gen: Option<usize>) {
        f.gen = (f.gen & !LRU_GEN_MASK) | gen.map_or(0, |g| g as u8 + 1);
    }

    /// The raw reference counter (`LRU_REFS_MASK` bits).
    #[inline]
    pub fn refs_counter(f: &Frame) -> u32 {
        ((f.gen & LRU_REFS_MASK) >> LRU_REFS_SHIFT) as u32
    }

    #[inline]
    pub fn set_refs_counter(f: &mut Frame, n: u32) {
        f.gen = (f.gen & !LRU_REFS_MASK) | (((n as u8) << LRU_REFS_SHIFT) & LRU_REFS_MASK);
    }

    /// `folio_lru_refs`: accesses through file descriptors (0 if not PG_referenced).
    #[inline]
    pub fn lru_refs(f: &Frame) -> u32 {
        if f.test(pg::REFERENCED) {
            refs_counter(f) + 1
        } else {
            0
        }
    }

    /// Clears `LRU_REFS_FLAGS` (the counter and PG_referenced).
    #[inline]
    pub fn clear_refs_flags(f: &mut Frame) {
        set_refs_counter(f, 0);
        f.clear(pg::REFERENCED);
    }

    /// `refs + workingset == BIT(LRU_REFS_WIDTH) + 1`: the working set being lazily
    /// promoted (saturated counter and PG_workingset).
    #[inline]
    pub fn lazily_promoted(f: &Frame) -> bool {
        lru_refs(f) + f.test(pg::WORKINGSET) as u32 == (1 << LRU_REFS_WIDTH) + 1
    }

    /// The tier of a folio (`lru_tier_from_refs(folio_lru_refs, PG_workingset)`).
    #[inline]
    pub fn tier(f: &Frame) -> usize {
        lru_tier_from_refs(lru_refs(f), f.test(pg::WORKINGSET))
    }
}

/// Bloom filter keys of a PMD range (`get_item_key`): two 15-bit indices from a
/// 30-bit hash of the page-table page's identity (space and PMD index here).
fn bloom_keys(space: u32, pmd: u32) -> [usize; 2] {
    let mut z = ((space as u64) << 32 | pmd as u64).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    let h = z & ((1 << (2 * BLOOM_FILTER_SHIFT)) - 1);
    let mask = (1 << BLOOM_FILTER_SHIFT) - 1;
    [(h & mask) as usize, (h >> BLOOM_FILTER_SHIFT) as usize]
}

/// `suitable_to_scan`: at least one young PTE per cache line (8 PTEs) on average.
fn suitable_to_scan(total: u64, young: u64) -> bool {
    young * 8 >= total
}

/// `msecs_to_jiffies` (rounding up).
pub fn msecs_to_jiffies(ms: u64, hz: u64) -> u64 {
    (ms * hz).div_ceil(1000)
}

/// The state of one `try_to_shrink_lruvec` (or, before v6.3, `lru_gen_shrink_lruvec`)
/// loop, kept across kswapd's slices.
#[derive(Debug, Clone)]
pub struct LruvecWork {
    /// The lruvec it works on (`Mm::mem_cgroup_lruvec`).
    pub lv: usize,
    scanned: u64,
    /// `max_seq` when the loop started (the seed's fairness test).
    seq_at_start: u64,
    reclaimed_at_start: u64,
    need_aging: bool,
    need_swapping: bool,
    /// The last `get_nr_to_scan` (the base version: negative means "rotate").
    nr_to_scan: i64,
}

/// Where `shrink_many` is in the memcg LRU, kept across kswapd's slices.
#[derive(Debug, Clone)]
pub struct GenScan {
    /// `sc.nr_reclaimed` at `lru_gen_shrink_node`'s entry (kswapd counts from 0 inside).
    reclaimed_before: u64,
    gen: usize,
    bin: usize,
    first_bin: usize,
    /// The lruvec the walk is at; `None` before the bin's first.
    pos: Option<usize>,
    /// The op `shrink_one` returned for `pos`, applied when the walk moves on.
    op: MemcgLruOp,
    cur: Option<LruvecWork>,
    started: bool,
    /// Neither writing nor unmapping allowed: nothing to scan for.
    skip: bool,
}

impl Mm {
    #[inline]
    pub fn lru_gen_enabled(&self) -> bool {
        self.cfg.lru_gen.enabled
    }

    /// The iter and seed modes model v6.1, where a walk always promotes a young folio
    /// and new folios go to the oldest generation (or the second oldest).
    #[inline]
    fn lru_gen_v61(&self) -> bool {
        self.cfg.lru_gen.memcg_reclaim != MemcgReclaim::MemcgLru
    }

    /// `lru_gen_update_size`: a folio's generation changes from `old` to `new`
    /// (`None` = off the lists); the per-generation counts follow, and the classic
    /// active/inactive counters with them (the two youngest generations are "active").
    fn lru_gen_update_size(&mut self, pfn: Pfn, old: Option<usize>, new: Option<usize>) {
        let f = &self.frames[pfn as usize];
        let (t, zi, lv) = (
            f.is_file_lru() as usize,
            f.zone as usize,
            self.folio_lruvec(pfn),
        );
        let g = &mut self.lruvecs[lv].lrugen;
        if let Some(o) = old {
            g.nr_pages[o][t][zi] -= 1;
        }
        if let Some(n) = new {
            g.nr_pages[n][t][zi] += 1;
        }
        let base = if t == FILE {
            lru::INACTIVE_FILE
        } else {
            lru::INACTIVE_ANON
        };
        let was = old.map(|o| base + if g.is_active(o) { lru::ACTIVE } else { 0 });
        let now = new.map(|n| base + if g.is_active(n) { lru::ACTIVE } else { 0 });
        match (was, now) {
            (Some(w), Some(n)) if w != n => self.move_lru_size(lv, w, n, zi),
            (Some(w), None) => self.update_lru_size(lv, w, zi, -1),
            (None, Some(n)) => self.update_lru_size(lv, n, zi, 1),
            _ => {}
        }
    }

    /// Moves a folio already on a generation list to `gen`'s list (`list_move` /
    /// `list_move_tail`), sizes unchanged.
    fn gen_list_move(&mut self, pfn: Pfn, gen: usize, tail: bool) {
        let f = &self.frames[pfn as usize];
        let (t, zi, lv, phys) = (
            f.is_file_lru() as usize,
            f.zone as usize,
            self.folio_lruvec(pfn),
            (f.list & 0x3) as usize,
        );
        let g = &mut self.lruvecs[lv].lrugen;
        g.folios[phys][t][zi].del(&mut self.frames, pfn);
        if tail {
            g.folios[gen][t][zi].add_tail(&mut self.frames, pfn);
        } else {
            g.folios[gen][t][zi].add_head(&mut self.frames, pfn);
        }
        self.frames[pfn as usize].list = on::LRU_GEN | gen as u8;
    }

    /// The sequence number `lru_gen_add_folio` gives a folio (kernel-reference §4.4):
    /// active → youngest; anon outside the swap cache, or dirty/under writeback and
    /// tagged for reclaim → second youngest; put back by reclaim, or only
    /// MIN_NR_GENS generations → oldest; else second oldest.
    pub fn lru_gen_folio_seq(&self, pfn: Pfn, reclaiming: bool) -> u64 {
        let f = &self.frames[pfn as usize];
        let t = f.is_file_lru() as usize;
        let g = &self.lruvecs[self.folio_lruvec(pfn)].lrugen;
        if self.lru_gen_v61() {
            // v6.1-v6.5: the second oldest for what cannot be evicted now, else the oldest.
            return if f.test(pg::ACTIVE) {
                g.max_seq
            } else if (t == ANON && !f.test(pg::SWAPCACHE))
                || (f.test(pg::RECLAIM) && (f.test(pg::DIRTY) || f.test(pg::WRITEBACK)))
            {
                g.min_seq[t] + 1
            } else {
                g.min_seq[t]
            };
        }
        if f.test(pg::ACTIVE) {
            g.max_seq
        } else if (t == ANON && !f.test(pg::SWAPCACHE))
            || (f.test(pg::RECLAIM) && (f.test(pg::DIRTY) || f.test(pg::WRITEBACK)))
        {
            g.max_seq - 1
        } else if reclaiming || g.min_seq[t] + MIN_NR_GENS >= g.max_seq {
            g.min_seq[t]
        } else {
            g.min_seq[t] + 1
        }
    }

    /// `lru_gen_add_folio`: false for an unevictable folio (it goes on the classic
    /// unevictable list). Reclaim's put-backs and rotations add at the tail.
    pub fn lru_gen_add_folio(&mut self, pfn: Pfn, reclaiming: bool) -> bool {
        if self.frames[pfn as usize].test(pg::UNEVICTABLE) {
            return false;
        }
        let gen = lru_gen_from_seq(self.lru_gen_folio_seq(pfn, reclaiming));
        let f = &mut self.frames[pfn as usize];
        folio::set_gen(f, Some(gen));
        f.clear(pg::ACTIVE);
        f.set(pg::LRU);
        f.list = on::LRU_GEN | gen as u8;
        let (t, zi) = (f.is_file_lru() as usize, f.zone as usize);
        self.lru_gen_update_size(pfn, None, Some(gen));
        let lv = self.folio_lruvec(pfn);
        let list = &mut self.lruvecs[lv].lrugen.folios[gen][t][zi];
        if reclaiming {
            list.add_tail(&mut self.frames, pfn);
        } else {
            list.add_head(&mut self.frames, pfn);
        }
        true
    }

    /// `lru_gen_del_folio`: off its generation list; outside reclaim a folio of an
    /// active generation keeps PG_active (for `folio_migrate_flags` and put-backs).
    pub fn lru_gen_del_folio(&mut self, pfn: Pfn, reclaiming: bool) -> bool {
        let f = self.frames[pfn as usize];
        let Some(gen) = folio::lru_gen(&f) else {
            return false;
        };
        let (t, zi, lv, phys) = (
            f.is_file_lru() as usize,
            f.zone as usize,
            self.folio_lruvec(pfn),
            (f.list & 0x3) as usize,
        );
        let active = !reclaiming && self.lruvecs[lv].lrugen.is_active(gen);
        self.lru_gen_update_size(pfn, Some(gen), None);
        self.lruvecs[lv].lrugen.folios[phys][t][zi].del(&mut self.frames, pfn);
        let f = &mut self.frames[pfn as usize];
        folio::set_gen(f, None);
        if active {
            f.set(pg::ACTIVE);
        }
        f.clear(pg::LRU);
        f.list = on::NONE;
        true
    }

    /// `lru_gen_inc_refs` (`folio_mark_accessed` under MGLRU): the first access through
    /// a file descriptor sets PG_referenced, later ones count up, and a saturated
    /// counter sets PG_workingset. Tiers move; the folio stays on its list.
    pub fn lru_gen_inc_refs(&mut self, pfn: Pfn) {
        let f = &mut self.frames[pfn as usize];
        if f.test(pg::UNEVICTABLE) {
            return;
        }
        if !f.test(pg::REFERENCED) {
            folio::set_refs_counter(f, 0);
            f.set(pg::REFERENCED);
            return;
        }
        let n = folio::refs_counter(f);
        if n == (1 << LRU_REFS_WIDTH) - 1 {
            f.set(pg::WORKINGSET);
            return;
        }
        folio::set_refs_counter(f, n + 1);
    }

    /// `lru_gen_set_refs`: a young PTE seen by reclaim. The first sighting only sets
    /// PG_referenced (keep); a second one sets PG_workingset (activate).
    pub fn lru_gen_set_refs(&mut self, pfn: Pfn) -> bool {
        let f = &mut self.frames[pfn as usize];
        if !f.test(pg::REFERENCED) && !f.test(pg::WORKINGSET) {
            folio::set_refs_counter(f, 0);
            f.set(pg::REFERENCED);
            return false;
        }
        folio::clear_refs_flags(f);
        f.set(pg::WORKINGSET);
        true
    }

    /// `folio_update_gen`: a page-table walk found the folio young. A first sighting
    /// only sets PG_referenced; otherwise the folio moves (in its flags, not on the
    /// list) to `gen` with PG_workingset. Returns the old generation.
    fn folio_update_gen(&mut self, pfn: Pfn, gen: usize) -> Option<usize> {
        if self.lru_gen_v61() {
            // v6.1: every young folio found moves to `gen`, references cleared.
            let f = &mut self.frames[pfn as usize];
            let old = folio::lru_gen(f)?;
            folio::clear_refs_flags(f);
            f.clear(pg::WORKINGSET);
            folio::set_gen(f, Some(gen));
            if old != gen {
                self.lru_gen_update_size(pfn, Some(old), Some(gen));
            }
            return Some(old);
        }
        let f = &mut self.frames[pfn as usize];
        if !f.test(pg::REFERENCED) && !f.test(pg::WORKINGSET) {
            folio::set_refs_counter(f, 0);
            f.set(pg::REFERENCED);
            return None;
        }
        let old = folio::lru_gen(f)?;
        folio::clear_refs_flags(f);
        folio::set_gen(f, Some(gen));
        f.set(pg::WORKINGSET);
        if old != gen {
            self.lru_gen_update_size(pfn, Some(old), Some(gen));
        }
        Some(old)
    }

    /// The dirty half of `walk_update_folio` (walk and look-around): a PTE's dirty bit
    /// reaches the folio, except for an anon folio with no swap copy, which is dirty
    /// by definition until it has one. The PTE keeps its bit (try_to_unmap moves it).
    fn walk_update_dirty(&mut self, pfn: Pfn, e: Pte) {
        let f = &self.frames[pfn as usize];
        if e & pte::DIRTY == 0 || f.test(pg::DIRTY) {
            return;
        }
        if f.is_file_lru() {
            self.folio_mark_dirty(pfn);
        } else if f.test(pg::SWAPCACHE) {
            self.frames[pfn as usize].set(pg::DIRTY);
        }
    }

    /// `folio_inc_gen`: move a folio of the oldest generation to the next one
    /// (unless a walk already promoted it), clearing its references; `reclaiming`
    /// tags it PG_reclaim so writeback's end rotates it back. Returns its generation.
    fn folio_inc_gen(&mut self, pfn: Pfn, reclaiming: bool) -> usize {
        let f = self.frames[pfn as usize];
        let t = f.is_file_lru() as usize;
        let old_gen = lru_gen_from_seq(self.lruvecs[self.folio_lruvec(pfn)].lrugen.min_seq[t]);
        if let Some(g) = folio::lru_gen(&f) {
            if g != old_gen {
                return g;
            }
        }
        let new_gen = (old_gen + 1) % MAX_NR_GENS as usize;
        self.folio_changed(pfn);
        let f = &mut self.frames[pfn as usize];
        folio::clear_refs_flags(f);
        folio::set_gen(f, Some(new_gen));
        if reclaiming {
            f.set(pg::RECLAIM);
        }
        self.lru_gen_update_size(pfn, Some(old_gen), Some(new_gen));
        new_gen
    }

    /// `inc_min_seq`: retire the oldest generation of type `t`. If the type is
    /// evictable its folios first move to the next generation (no cold/hot
    /// inversion), their pages counted as protected in their tiers.
    fn inc_min_seq(&mut self, lv: usize, t: usize, swappiness: u64) {
        let evictable =
            !((t == FILE && swappiness == SWAPPINESS_ANON_ONLY) || (t == ANON && swappiness == 0));
        if evictable {
            let old_gen = lru_gen_from_seq(self.lruvecs[lv].lrugen.min_seq[t]);
            let mut moved = 0u64;
            for zi in 0..MAX_NR_ZONES {
                loop {
                    let pfn = self.lruvecs[lv].lrugen.folios[old_gen][t][zi].tail();
                    if pfn == NIL {
                        break;
                    }
                    let f = self.frames[pfn as usize];
                    let (lazy, tier) = (folio::lazily_promoted(&f), folio::tier(&f));
                    let new_gen = self.folio_inc_gen(pfn, false);
                    self.gen_list_move(pfn, new_gen, true);
                    if !lazy {
                        self.lruvecs[lv].lrugen.protected[t][tier] += 1;
                    }
                    moved += 1;
                }
            }
            self.charge(moved * self.cfg.costs.walk_young_ns);
        }
        let g = &mut self.lruvecs[lv].lrugen;
        g.reset_ctrl_pos(t, true);
        g.min_seq[t] += 1;
    }

    /// `try_to_inc_min_seq`: after eviction, advance each evictable type past empty
    /// oldest generations, keeping the types within reach of each other.
    fn try_to_inc_min_seq(&mut self, lv: usize, swappiness: u64) -> bool {
        let g = &self.lruvecs[lv].lrugen;
        let mut min_seq = g.min_seq;
        let mut inc = false;
        for t in evictable_types(swappiness) {
            while min_seq[t] + MIN_NR_GENS <= g.max_seq {
                let gen = lru_gen_from_seq(min_seq[t]);
                if g.folios[gen][t].iter().any(|l| !l.is_empty()) {
                    break;
                }
                min_seq[t] += 1;
                inc = true;
            }
        }
        if !inc {
            return false;
        }
        if swappiness > 0 && swappiness <= MAX_SWAPPINESS {
            let seq = g.max_seq - MIN_NR_GENS;
            if min_seq[ANON] > seq && min_seq[FILE] < seq {
                min_seq[ANON] = seq;
            } else if min_seq[FILE] > seq && min_seq[ANON] < seq {
                min_seq[FILE] = seq;
            }
        }
        let mut success = false;
        for t in evictable_types(swappiness) {
            let g = &mut self.lruvecs[lv].lrugen;
            if min_seq[t] <= g.min_seq[t] {
                continue;
            }
            g.reset_ctrl_pos(t, true);
            g.min_seq[t] = min_seq[t];
            success = true;
        }
        success
    }

    /// `inc_max_seq`: a new youngest generation. A type already at MAX_NR_GENS retires
    /// its oldest first; the two youngest generations' pages move from the "active" to
    /// the "inactive" compat counters as max_seq advances.
    fn inc_max_seq(&mut self, lv: usize, seq: u64, swappiness: u64) -> bool {
        if seq != self.lruvecs[lv].lrugen.max_seq {
            return false;
        }
        for t in [ANON, FILE] {
            if self.lruvecs[lv].lrugen.nr_gens(t) == MAX_NR_GENS {
                self.inc_min_seq(lv, t, swappiness);
            }
        }
        let g = &self.lruvecs[lv].lrugen;
        let prev = lru_gen_from_seq(g.max_seq - 1);
        let next = lru_gen_from_seq(g.max_seq + 1);
        let mut deltas = Vec::new();
        for t in [ANON, FILE] {
            for zi in 0..MAX_NR_ZONES {
                let delta = g.nr_pages[prev][t][zi] - g.nr_pages[next][t][zi];
                if delta != 0 {
                    let base = if t == FILE {
                        lru::INACTIVE_FILE
                    } else {
                        lru::INACTIVE_ANON
                    };
                    deltas.push((base, zi, delta));
                }
            }
        }
        for (base, zi, delta) in deltas {
            self.update_lru_size(lv, base, zi, delta);
            self.update_lru_size(lv, base + lru::ACTIVE, zi, -delta);
        }
        let now = self.jiffies();
        let g = &mut self.lruvecs[lv].lrugen;
        g.reset_ctrl_pos(ANON, false);
        g.reset_ctrl_pos(FILE, false);
        g.timestamps[next] = now;
        g.max_seq += 1;
        true
    }

    /// The workloads whose page tables `memcg`'s mm_list holds (its live tasks' mms).
    fn memcg_mm_list(&self, memcg: usize) -> Vec<usize> {
        (0..self.workload_memcg.len())
            .filter(|&w| self.workload_memcg[w] == memcg && !self.workload_dead[w])
            .collect()
    }

    /// `try_to_inc_max_seq`: age lruvec `lv`. With page-table walks on, walk every mm
    /// of its memcg that ran since its last walk for this node (all of them with
    /// `force_scan`), promoting young folios of this lruvec; then `inc_max_seq`.
    pub fn try_to_inc_max_seq(
        &mut self,
        lv: usize,
        seq: u64,
        swappiness: u64,
        force_scan: bool,
    ) -> bool {
        if seq <= self.lruvecs[lv].lrugen.mm_seq {
            return false;
        }
        if self.cfg.lru_gen.mm_walk {
            // reset_bloom_filter for seq + 1: the walk records dense PMD ranges there.
            let next = ((seq + 1) % 2) as usize;
            let g = &mut self.lruvecs[lv].lrugen;
            match &mut g.filters[next] {
                Some(f) => f.fill(0),
                None => g.filters[next] = Some(Box::new([0; BLOOM_WORDS])),
            }
            // should_skip_mm: the mm's bit of this node (`mm->lru_gen.bitmap`).
            let key = 1u64 << (self.lruvec_pgdat(lv) % 64);
            for w in self.memcg_mm_list(self.lruvec_memcg(lv)) {
                if !force_scan && self.mm_ran[w] & key == 0 {
                    continue;
                }
                self.mm_ran[w] &= !key;
                // should_skip_mm: too small to be worth it.
                let size: u64 = self.mm_spaces[w]
                    .iter()
                    .map(|&s| &self.spaces[s as usize])
                    .filter(|s| match s.kind {
                        SpaceKind::Anon => swappiness > 0,
                        SpaceKind::File => true,
                    })
                    .map(|s| s.nr_present)
                    .sum();
                if size < MIN_LRU_BATCH {
                    continue;
                }
                for i in 0..self.mm_spaces[w].len() {
                    let si = self.mm_spaces[w][i];
                    self.walk_space(lv, si, seq, swappiness, force_scan);
                }
            }
        }
        self.lruvecs[lv].lrugen.mm_seq += 1;
        self.inc_max_seq(lv, seq, swappiness)
    }

    /// `walk_pmd_range` / `walk_pte_range` over one mapping of an mm: PMD ranges in the
    /// Bloom filter of `seq` (all with `force_scan`); young PTEs of this memcg's folios
    /// are cleared and the folios promoted to `seq`'s generation; ranges dense in young
    /// PTEs go into the filter of `seq + 1` (all of lruvec `lv`'s). With non-leaf young
    /// bits (0x4), a PMD entry
    /// not accessed since the last walk is skipped before the filter is asked, even
    /// with `force_scan`, and a young one is cleared (`walk_pmd_range_locked`).
    fn walk_space(&mut self, lv: usize, si: u32, seq: u64, swappiness: u64, force_scan: bool) {
        let s = &self.spaces[si as usize];
        // should_skip_vma: a mapping without recency is not walked, nor a VM_LOCKED
        // one (its pages are on no generation).
        if s.dead
            || s.vm_locked
            || !s.vma_has_recency()
            || (s.kind == SpaceKind::Anon && swappiness == 0)
            || (s.kind == SpaceKind::File && swappiness == SWAPPINESS_ANON_ONLY)
        {
            return;
        }
        let file = s.kind == SpaceKind::File;
        let n = s.nr_pages();
        let new_gen = lru_gen_from_seq(seq);
        let cur = (seq % 2) as usize;
        let (mut total, mut young_total, mut found, mut added) = (0u64, 0u64, 0u64, 0u64);
        let pmds: Vec<u32> = s.populated_pmds().collect();
        for pmd in pmds {
            let start = pmd * PTRS_PER_PTE;
            let end = (start + PTRS_PER_PTE).min(n);
            if self.cfg.lru_gen.nonleaf_young
                && !self.spaces[si as usize].pmd_test_and_clear_young(pmd)
            {
                continue;
            }
            let keys = bloom_keys(si, pmd);
            let in_filter = force_scan
                || self.lruvecs[lv].lrugen.filters[cur]
                    .as_ref()
                    .is_none_or(|f| keys.iter().all(|&k| f[k / 64] & 1 << (k % 64) != 0));
            if !in_filter {
                continue;
            }
            found += 1;
            let (mut examined, mut young) = (0u64, 0u64);
            for i in start..end.min(start + WALK_PREFETCH_AHEAD) {
                self.prefetch_young_frame(si, i);
            }
            for idx in start..end {
                examined += 1;
                if idx + WALK_PREFETCH_AHEAD < end {
                    self.prefetch_young_frame(si, idx + WALK_PREFETCH_AHEAD);
                }
                let e = self.spaces[si as usize].pte(idx);
                if !pte::is_present(e) || e & pte::YOUNG == 0 {
                    continue;
                }
                let pfn = pte::pfn(e);
                // get_pfn_folio: a folio of another memcg or node is not this walk's.
                if self.folio_lruvec(pfn) != lv
                    || (file && !self.frames[pfn as usize].test(pg::MAPPED))
                {
                    continue;
                }
                *self.spaces[si as usize].pte_mut(idx) &= !pte::YOUNG;
                young += 1;
                self.folio_update_gen(pfn, new_gen);
                self.walk_update_dirty(pfn, e);
            }
            total += examined;
            young_total += young;
            if suitable_to_scan(examined, young) {
                added += 1;
                let next = ((seq + 1) % 2) as usize;
                if let Some(f) = self.lruvecs[lv].lrugen.filters[next].as_mut() {
                    for k in keys {
                        f[k / 64] |= 1 << (k % 64);
                    }
                }
            }
        }
        let st = &mut self.lruvecs[lv].lrugen.mm_stats;
        st[0] += total;
        st[1] += young_total;
        st[2] += found;
        st[3] += added;
        self.charge(
            total * self.cfg.costs.walk_pte_ns + young_total * self.cfg.costs.walk_young_ns,
        );
    }

    /// A walk over the PTEs of space `si` will read the frame of entry `i` if it is
    /// young: start loading it now (the entries are adjacent, the frames anywhere), so
    /// the walk's misses overlap instead of following one another.
    fn prefetch_young_frame(&self, si: u32, i: u32) {
        let e = self.spaces[si as usize].pte(i);
        if pte::is_present(e) && e & pte::YOUNG != 0 {
            crate::hint::prefetch(&self.frames[pte::pfn(e) as usize]);
        }
    }

    /// `lru_gen_look_around`: reclaim found `pfn` young through its PTE; clear that
    /// bit and scan up to MIN_LRU_BATCH PTEs around it in the same page-table page,
    /// promoting this memcg's young folios (in place for kswapd, which has a walk
    /// context; through `folio_activate` for direct reclaim). A dense window feeds the
    /// current Bloom filter. Returns whether the PTE was young.
    pub fn lru_gen_look_around(&mut self, pfn: Pfn) -> bool {
        let f = self.frames[pfn as usize];
        let si = f.mapping;
        let idx = f.index;
        let s = &mut self.spaces[si as usize];
        let e = s.pte(idx);
        if !pte::is_present(e) || pte::pfn(e) != pfn || e & pte::YOUNG == 0 {
            return false;
        }
        *s.pte_mut(idx) &= !pte::YOUNG;
        let nr = s.nr_pages();
        let file = s.kind == SpaceKind::File;
        let pmd_start = idx & !(PTRS_PER_PTE - 1);
        let (mut start, mut end) = (pmd_start, (pmd_start + PTRS_PER_PTE).min(nr));
        if end - start == 1 {
            return true;
        }
        let half = MIN_LRU_BATCH as u32 / 2;
        if end - start > MIN_LRU_BATCH as u32 {
            if idx - start < half {
                end = start + MIN_LRU_BATCH as u32;
            } else if end - idx < half {
                start = end - MIN_LRU_BATCH as u32;
            } else {
                start = idx - half;
                end = idx + half;
            }
        }
        let lv = self.folio_lruvec(pfn);
        let max_seq = self.lruvecs[lv].lrugen.max_seq;
        let new_gen = lru_gen_from_seq(max_seq);
        let walk = self.is_kswapd();
        let mut young = 1u64;
        for i in start..end {
            self.prefetch_young_frame(si, i);
        }
        for i in start..end {
            let e = self.spaces[si as usize].pte(i);
            if !pte::is_present(e) || e & pte::YOUNG == 0 {
                continue;
            }
            let p = pte::pfn(e);
            let g = &self.frames[p as usize];
            if self.folio_lruvec(p) != lv
                || folio::lru_gen(g).is_none()
                || (file && !g.test(pg::MAPPED))
            {
                continue;
            }
            *self.spaces[si as usize].pte_mut(i) &= !pte::YOUNG;
            young += 1;
            self.walk_update_dirty(p, e);
            if walk {
                self.folio_update_gen(p, new_gen);
            } else if self.lru_gen_set_refs(p)
                && folio::lru_gen(&self.frames[p as usize]).is_some_and(|g| g != new_gen)
            {
                self.folio_activate(p);
            }
        }
        let examined = (end - start) as u64;
        if suitable_to_scan(examined, young) {
            let keys = bloom_keys(si, idx / PTRS_PER_PTE);
            if let Some(flt) = self.lruvecs[lv].lrugen.filters[(max_seq % 2) as usize].as_mut() {
                for k in keys {
                    flt[k / 64] |= 1 << (k % 64);
                }
            }
        }
        self.charge(examined * self.cfg.costs.walk_pte_ns + young * self.cfg.costs.walk_young_ns);
        true
    }
}

impl Mm {
    /// `sort_folio`: deal with a folio at the oldest generation's tail without
    /// isolating it: unevictable → its list; promoted by a walk → its generation;
    /// in a protected tier → the next generation; ineligible zone → next generation's
    /// tail; dirty or under writeback → next generation, tagged for reclaim.
    fn sort_folio(&mut self, pfn: Pfn, sc: &mut ScanControl, tier_idx: usize) -> bool {
        let f = self.frames[pfn as usize];
        let t = f.is_file_lru() as usize;
        let lv = self.folio_lruvec(pfn);
        let gen = folio::lru_gen(&f).expect("on a generation list");
        if f.test(pg::MLOCKED) {
            // !folio_evictable: onto the unevictable list.
            self.lru_gen_del_folio(pfn, true);
            self.frames[pfn as usize].set(pg::UNEVICTABLE);
            self.lruvec_add_folio(pfn);
            self.count(Ev::UnevictablePgsCulled, 1);
            return true;
        }
        let g = &self.lruvecs[lv].lrugen;
        if gen != lru_gen_from_seq(g.min_seq[t]) {
            self.gen_list_move(pfn, gen, false);
            return true;
        }
        let tier = folio::tier(&f);
        let lazy = folio::lazily_promoted(&f);
        if tier > tier_idx || lazy {
            let gen = self.folio_inc_gen(pfn, false);
            self.gen_list_move(pfn, gen, false);
            if !lazy {
                self.lruvecs[lv].lrugen.protected[t][tier] += 1;
            }
            return true;
        }
        if f.zone as usize > sc.reclaim_idx {
            let gen = self.folio_inc_gen(pfn, false);
            self.gen_list_move(pfn, gen, true);
            return true;
        }
        let (dirty, writeback) = (f.test(pg::DIRTY), f.test(pg::WRITEBACK));
        if t == FILE && dirty {
            sc.nr.file_taken += 1;
            if !writeback {
                sc.nr.unqueued_dirty += 1;
            }
        }
        if writeback || (t == FILE && dirty) {
            let gen = self.folio_inc_gen(pfn, true);
            self.gen_list_move(pfn, gen, false);
            return true;
        }
        false
    }

    /// `isolate_folio`: off the list for `shrink_folio_list` (every simulated
    /// allocation may do I/O, so none is refused for lack of __GFP_IO).
    fn isolate_folio(&mut self, pfn: Pfn) {
        self.folio_changed(pfn);
        let f = &mut self.frames[pfn as usize];
        if !f.test(pg::REFERENCED) {
            folio::set_refs_counter(f, 0);
        }
        f.clear(pg::RECLAIM);
        self.lru_gen_del_folio(pfn, true);
        self.frames[pfn as usize].list = on::ISOLATED;
    }

    /// `scan_folios`: from the oldest generation of type `t`, zone by zone starting at
    /// `reclaim_idx`, sort or isolate folios from the tail until MAX_LRU_BATCH are
    /// scanned or MIN_LRU_BATCH isolated. Returns (scanned, isolated folios); scanned
    /// is 0 when nothing could be isolated with budget left (no livelock).
    fn scan_folios(
        &mut self,
        lv: usize,
        sc: &mut ScanControl,
        t: usize,
        tier: usize,
    ) -> (u64, Vec<Pfn>) {
        let mut list = Vec::new();
        if self.lruvecs[lv].lrugen.nr_gens(t) == MIN_NR_GENS {
            return (0, list);
        }
        let gen = lru_gen_from_seq(self.lruvecs[lv].lrugen.min_seq[t]);
        let (mut scanned, mut sorted, mut remaining) = (0u64, 0u64, MAX_LRU_BATCH);
        for i in (1..=MAX_NR_ZONES).rev() {
            let zi = (sc.reclaim_idx + i) % MAX_NR_ZONES;
            // The walk's first frames fetched together, then each WALK_PREFETCH_AHEAD
            // ahead of the tail (as isolate_lru_folios): without the first batch every
            // scan began with a chain of misses.
            let fetched = self.lruvecs[lv].lrugen.folios[gen][t][zi]
                .prefetch_tail(&self.frames, remaining.min(MIN_LRU_BATCH) as usize);
            let mut walked = 0usize;
            loop {
                let pfn = self.lruvecs[lv].lrugen.folios[gen][t][zi].tail();
                if pfn == NIL {
                    break;
                }
                scanned += 1;
                walked += 1;
                if walked + super::list::WALK_PREFETCH_AHEAD > fetched {
                    self.lruvecs[lv].lrugen.folios[gen][t][zi].prefetch_walk(&self.frames);
                }
                if self.sort_folio(pfn, sc, tier) {
                    sorted += 1;
                } else {
                    self.isolate_folio(pfn);
                    list.push(pfn);
                }
                remaining -= 1;
                if remaining == 0 || list.len() as u64 >= MIN_LRU_BATCH {
                    break;
                }
            }
            if remaining == 0 || list.len() as u64 >= MIN_LRU_BATCH {
                break;
            }
        }
        self.charge(scanned * self.cfg.costs.scan_page_ns);
        let isolated = list.len() as u64;
        let item = self.reclaimer_item(sc, Ev::PgscanKswapd);
        let memcg = self.lruvec_memcg(lv);
        self.count_reclaimer(sc, memcg, item, isolated);
        self.count_reclaim(sc.target, memcg, Ev::Pgrefill, sorted);
        self.count(
            if t == FILE {
                Ev::PgscanFile
            } else {
                Ev::PgscanAnon
            },
            isolated,
        );
        trace_event!(self, Tp::LruIsolate, "classzone={} order={} nr_requested={MAX_LRU_BATCH} nr_scanned={scanned} nr_skipped=0 nr_taken={isolated} lru={}",
                sc.reclaim_idx,
                sc.order,
                if t == FILE { "inactive_file" } else { "inactive_anon" });
        if t == FILE {
            sc.nr.file_taken += isolated;
        }
        let ret = if isolated > 0 || remaining == 0 {
            scanned
        } else {
            0
        };
        (ret, list)
    }

    /// `isolate_folios`: the type the PID controller picks first, then the other.
    fn isolate_folios(
        &mut self,
        lv: usize,
        sc: &mut ScanControl,
        swappiness: u64,
    ) -> (u64, usize, Vec<Pfn>) {
        let mut t = self.lruvecs[lv].lrugen.get_type_to_scan(swappiness);
        let mut last = t;
        for _ in evictable_types(swappiness) {
            let tier = self.lruvecs[lv].lrugen.get_tier_idx(t);
            last = t;
            let (scanned, list) = self.scan_folios(lv, sc, t, tier);
            if scanned > 0 {
                return (scanned, t, list);
            }
            t = 1 - t;
        }
        (0, last, Vec::new())
    }

    /// `evict_folios`: isolate a batch, advance min_seq past emptied generations, run
    /// the batch through `shrink_folio_list`, put the survivors back (never into the
    /// oldest generation), and give clean ones that may have missed the end-of-
    /// writeback rotation one retry. Returns (scanned, evicted anon).
    pub fn evict_folios(
        &mut self,
        lv: usize,
        sc: &mut ScanControl,
        swappiness: u64,
    ) -> (u64, bool) {
        let (mut scanned, t, mut list) = self.isolate_folios(lv, sc, swappiness);
        scanned += self.try_to_inc_min_seq(lv, swappiness) as u64;
        let g = &self.lruvecs[lv].lrugen;
        if g.evictable_min_seq(swappiness) + MIN_NR_GENS > g.max_seq {
            scanned = 0;
        }
        if list.is_empty() {
            return (scanned, false);
        }
        let mut skip_retry = false;
        loop {
            let nr_taken = list.len() as u64;
            let memcg = self.lruvec_memcg(lv);
            let (reclaimed, stat, survivors) = self.shrink_folio_list(list, sc, memcg, false);
            let demote = self.demote_item(sc);
            self.mod_tier_stat(lv, demote, stat.nr_demoted);
            sc.nr.unqueued_dirty += stat.nr_unqueued_dirty;
            sc.nr_reclaimed += reclaimed;
            self.trace_shrink_inactive(nr_taken, reclaimed, &stat, sc, t == FILE);
            let mut clean = Vec::new();
            let mut back = Vec::with_capacity(survivors.len());
            for pfn in survivors {
                let f = self.frames[pfn as usize];
                if !self.folio_evictable(pfn) {
                    // folio_putback_lru (move_folios_to_lru culls it).
                    back.push(pfn);
                    continue;
                }
                if !skip_retry
                    && !f.test(pg::ACTIVE)
                    && !self.folio_mapped(pfn)
                    && !f.test(pg::DIRTY)
                    && !f.test(pg::WRITEBACK)
                {
                    clean.push(pfn);
                    continue;
                }
                let ft = f.is_file_lru() as usize;
                if self.lru_gen_folio_seq(pfn, false) == self.lruvecs[lv].lrugen.min_seq[ft] {
                    let f = &mut self.frames[pfn as usize];
                    folio::clear_refs_flags(f);
                    f.set(pg::ACTIVE);
                }
                back.push(pfn);
            }
            for pfn in back {
                self.frames[pfn as usize].list = on::NONE;
                self.lruvec_add_folio(pfn);
            }
            self.count_steal(sc, memcg, t == FILE, reclaimed);
            if clean.is_empty() {
                break;
            }
            skip_retry = true;
            list = clean;
        }
        (scanned, t == ANON)
    }
}

impl Mm {
    /// `get_swappiness` of lruvec `lv`: 0 without may_swap or with fewer than
    /// MIN_LRU_BATCH swap pages left to its memcg; else vm.swappiness.
    pub fn get_swappiness(&self, lv: usize, sc: &ScanControl) -> u64 {
        if !sc.may_swap {
            return 0;
        }
        if !self.can_demote(self.lruvec_pgdat(lv), sc.no_demotion)
            && self.mem_cgroup_get_nr_swap_pages(self.lruvec_memcg(lv)) < MIN_LRU_BATCH
        {
            return 0;
        }
        self.cfg.swappiness
    }

    /// Pages of the evictable types in every generation (`should_run_aging`'s size).
    fn evictable_size(&self, lv: usize, swappiness: u64) -> u64 {
        let g = &self.lruvecs[lv].lrugen;
        let mut size = 0;
        for t in evictable_types(swappiness) {
            for seq in g.min_seq[t]..=g.max_seq {
                size += g.gen_pages(lru_gen_from_seq(seq), t);
            }
        }
        size
    }

    /// `should_run_aging` (base version): must age when eviction is no longer possible
    /// (fewer than MIN_NR_GENS + 1 generations of the evictable types), had better with
    /// exactly MIN_NR_GENS + 1. Returns (age?, pages of the evictable types).
    pub fn should_run_aging(&self, lv: usize, swappiness: u64) -> (bool, u64) {
        let g = &self.lruvecs[lv].lrugen;
        let min = g.evictable_min_seq(swappiness);
        if min + MIN_NR_GENS > g.max_seq {
            return (true, 0);
        }
        (
            min + MIN_NR_GENS == g.max_seq,
            self.evictable_size(lv, swappiness),
        )
    }

    /// `should_run_aging` as in v6.1 (the seed and before): with exactly MIN_NR_GENS + 1
    /// generations, age if the youngest holds more than 1/MIN_NR_GENS of the pages or
    /// the oldest less than 1/(MIN_NR_GENS + 2). Returns (age?, pages >> priority).
    pub fn should_run_aging_v61(&self, lv: usize, swappiness: u64, priority: i32) -> (bool, u64) {
        let g = &self.lruvecs[lv].lrugen;
        let (mut old, mut young, mut total) = (0u64, 0u64, 0u64);
        for t in evictable_types(swappiness) {
            for seq in g.min_seq[t]..=g.max_seq {
                let size = g.gen_pages(lru_gen_from_seq(seq), t);
                total += size;
                if seq == g.max_seq {
                    young += size;
                } else if seq + MIN_NR_GENS == g.max_seq {
                    old += size;
                }
            }
        }
        let nr_to_scan = total >> priority;
        let min = g.evictable_min_seq(swappiness);
        let age = if min + MIN_NR_GENS > g.max_seq {
            true
        } else if min + MIN_NR_GENS < g.max_seq {
            false
        } else {
            young * MIN_NR_GENS > total || old * (MIN_NR_GENS + 2) < total
        };
        (age, nr_to_scan)
    }

    /// `get_nr_to_scan` (base): −1 to skip a memcg below min or to rotate one that
    /// had to age; at DEF_PRIORITY (or with no aging needed) the pages >> priority.
    fn get_nr_to_scan(&mut self, lv: usize, sc: &ScanControl, swappiness: u64) -> i64 {
        if self.mem_cgroup_below(sc.target, self.lruvec_memcg(lv)).0 {
            return -1;
        }
        let (age, size) = self.should_run_aging(lv, swappiness);
        if !age || sc.priority == DEF_PRIORITY {
            return (size >> sc.priority) as i64;
        }
        let max_seq = self.lruvecs[lv].lrugen.max_seq;
        if self.try_to_inc_max_seq(lv, max_seq, swappiness, false) {
            -1
        } else {
            0
        }
    }

    /// `get_nr_to_scan` as in v6.1: 0 below min (or low, outside the low pass); kswapd
    /// leaves aging to `lru_gen_age_node`, direct reclaim ages here below DEF_PRIORITY.
    /// Returns (pages to scan, aging was needed).
    fn get_nr_to_scan_v61(&mut self, lv: usize, sc: &ScanControl, swappiness: u64) -> (u64, bool) {
        let (below_min, below_low) = self.mem_cgroup_below(sc.target, self.lruvec_memcg(lv));
        if below_min || (below_low && !sc.memcg_low_reclaim) {
            return (0, false);
        }
        let (age, nr_to_scan) = self.should_run_aging_v61(lv, swappiness, sc.priority);
        if !age {
            return (nr_to_scan, false);
        }
        let g = &self.lruvecs[lv].lrugen;
        let (max_seq, min) = (g.max_seq, g.evictable_min_seq(swappiness));
        // At DEF_PRIORITY skip ageing; below it kswapd leaves it to lru_gen_age_node
        // and direct reclaim ages here.
        if sc.priority != DEF_PRIORITY {
            if self.is_kswapd() {
                return (0, true);
            }
            if self.try_to_inc_max_seq(lv, max_seq, swappiness, false) {
                return (nr_to_scan, true);
            }
        }
        (
            if min + MIN_NR_GENS <= max_seq {
                nr_to_scan
            } else {
                0
            },
            true,
        )
    }

    /// `should_abort_scan` (base): memcg reclaim never stops early; global reclaim
    /// stops at its target, and kswapd at order 0 once every eligible zone is above
    /// its high watermark plus MIN_LRU_BATCH.
    fn should_abort_scan(&self, sc: &ScanControl) -> bool {
        if sc.target != 0 {
            return false;
        }
        if sc.nr_reclaimed >= sc.nr_to_reclaim.max(2 << sc.order) {
            return true;
        }
        if !self.is_kswapd() || sc.order > 0 {
            return false;
        }
        self.node_zones(sc.nid).take(sc.reclaim_idx + 1).all(|zi| {
            let z = &self.zones[zi];
            !z.is_managed()
                || zone_watermark_ok(
                    z,
                    0,
                    z.wmark(WMARK_HIGH) + MIN_LRU_BATCH,
                    sc.reclaim_idx,
                    AllocFlags::default(),
                    self.zone_page_state_free(zi),
                )
        })
    }

    /// `should_abort_scan` as the seed merged it (v6.1): direct reclaim stops after
    /// ageing this memcg twice or once it met the target while swapping; kswapd goes on
    /// until it reclaimed `nr_to_reclaim` since `lru_gen_age_node`; below
    /// DEF_PRIORITY − 1 both stop once free pages clear the high (kswapd) or low
    /// watermark everywhere, adding MIN_LRU_BATCH for the stop.
    fn should_abort_scan_v61(
        &self,
        seq: u64,
        lv: usize,
        sc: &mut ScanControl,
        need_swapping: bool,
    ) -> bool {
        let max_seq = self.lruvecs[lv].lrugen.max_seq;
        if !self.is_kswapd() {
            if max_seq - seq > 1 {
                return true;
            }
            if sc.nr_reclaimed >= sc.nr_to_reclaim && need_swapping {
                return true;
            }
            if sc.target != 0 {
                return false;
            }
        } else if sc.nr_reclaimed - sc.last_reclaimed < sc.nr_to_reclaim {
            return false;
        }
        if sc.priority > DEF_PRIORITY - 2 {
            return false;
        }
        let kswapd = self.is_kswapd();
        for zi in self.node_zones(sc.nid).take(sc.reclaim_idx + 1) {
            let z = &self.zones[zi];
            if !z.is_managed() {
                continue;
            }
            let wmark = z.wmark(if kswapd { WMARK_HIGH } else { WMARK_LOW });
            if wmark > self.zone_page_state_free(zi) {
                return false;
            }
        }
        sc.nr_reclaimed += MIN_LRU_BATCH;
        true
    }

    /// Starts `try_to_shrink_lruvec` (or v6.1's `lru_gen_shrink_lruvec`) on lruvec `lv`.
    pub fn lru_gen_lruvec_begin(&self, lv: usize, sc: &ScanControl) -> LruvecWork {
        LruvecWork {
            lv,
            scanned: 0,
            seq_at_start: self.lruvecs[lv].lrugen.max_seq,
            reclaimed_at_start: sc.nr_reclaimed,
            need_aging: false,
            need_swapping: false,
            nr_to_scan: 0,
        }
    }

    /// Runs the lruvec's evict loop until it ends (Some(rotate: it had to age)) or the
    /// CPU budget runs out or reclaim must sleep (None; call again).
    pub fn lru_gen_lruvec_step(
        &mut self,
        w: &mut LruvecWork,
        sc: &mut ScanControl,
        budget_ns: u64,
    ) -> Option<bool> {
        let lv = w.lv;
        let v61 = self.cfg.lru_gen.memcg_reclaim != MemcgReclaim::MemcgLru;
        loop {
            let swappiness = self.get_swappiness(lv, sc);
            let n = if v61 {
                let (n, aging) = self.get_nr_to_scan_v61(lv, sc, swappiness);
                w.need_aging = aging;
                n as i64
            } else {
                self.get_nr_to_scan(lv, sc, swappiness)
            };
            w.nr_to_scan = n;
            if n <= 0 {
                break;
            }
            let (delta, anon) = self.evict_folios(lv, sc, swappiness);
            w.need_swapping |= anon;
            if delta == 0 {
                break;
            }
            w.scanned += delta;
            if w.scanned >= n as u64 {
                break;
            }
            let abort = match self.cfg.lru_gen.memcg_reclaim {
                MemcgReclaim::Iter => false,
                MemcgReclaim::Seed => {
                    self.should_abort_scan_v61(w.seq_at_start, lv, sc, w.need_swapping)
                }
                MemcgReclaim::MemcgLru => self.should_abort_scan(sc),
            };
            if abort {
                break;
            }
            if self.cpu_ns >= budget_ns || self.blocked_until.is_some() {
                return None;
            }
        }
        // Too much of the oldest generation's file cache is dirty: wake the flushers.
        if sc.nr.unqueued_dirty > 0 && sc.nr.unqueued_dirty == sc.nr.file_taken {
            self.wakeup_flusher_threads();
        }
        // The seed: a memcg that gave MIN_LRU_BATCH without ageing spares kswapd's
        // next round of ageing.
        if v61
            && w.nr_to_scan > 0
            && sc.nr_reclaimed - w.reclaimed_at_start >= MIN_LRU_BATCH
            && !w.need_aging
        {
            sc.memcgs_need_aging = false;
        }
        Some(w.nr_to_scan < 0)
    }

    /// `lruvec_is_sizable`: enough evictable pages to be worth it at this priority.
    fn lruvec_is_sizable(&self, lv: usize, sc: &ScanControl) -> bool {
        let swappiness = self.get_swappiness(lv, sc);
        (self.evictable_size(lv, swappiness) >> sc.priority) > 0
    }

    /// `lruvec_is_reclaimable` (min_ttl): not below min, sizable, and its oldest
    /// evictable generation born more than `min_ttl` jiffies ago.
    fn lruvec_is_reclaimable(&self, lv: usize, sc: &ScanControl, min_ttl: u64) -> bool {
        if self.mem_cgroup_below(0, self.lruvec_memcg(lv)).0 || !self.lruvec_is_sizable(lv, sc) {
            return false;
        }
        let swappiness = self.get_swappiness(lv, sc);
        let g = &self.lruvecs[lv].lrugen;
        let birth = g.timestamps[lru_gen_from_seq(g.evictable_min_seq(swappiness))];
        birth + min_ttl < self.jiffies()
    }

    /// `set_initial_priority`: start where one pass over the inactive pages would
    /// yield `nr_to_reclaim`, within [DEF_PRIORITY/2, DEF_PRIORITY].
    pub fn set_initial_priority(&self, sc: &mut ScanControl) {
        if sc.priority != DEF_PRIORITY || sc.nr_to_reclaim < MIN_LRU_BATCH {
            return;
        }
        let mut reclaimable = self.node_lru_pages(sc.nid, lru::INACTIVE_FILE);
        if self.can_reclaim_anon_pages(sc.nid) {
            reclaimable += self.node_lru_pages(sc.nid, lru::INACTIVE_ANON);
        }
        let fls = |x: u64| 64 - x.leading_zeros() as i32;
        let priority = fls(reclaimable) - 1 - fls(sc.nr_to_reclaim - 1);
        sc.priority = priority.clamp(DEF_PRIORITY / 2, DEF_PRIORITY);
    }

    /// `lru_gen_age_node`: kswapd's per-round pass over node `sc.nid`'s lruvecs.
    /// v6.3+: protection for every memcg and the min_ttl test (OOM kill when every
    /// memcg's oldest generation is younger than min_ttl). Before (`iter`, `seed`): age
    /// every memcg that needs it; the seed skips the round when eviction found cold
    /// pages without ageing.
    pub fn lru_gen_age_node(&mut self, sc: &mut ScanControl) {
        let min_ttl = self.cfg.lru_gen.min_ttl_jiffies;
        let memcgs = self.memcg.subtree(0);
        if self.cfg.lru_gen.memcg_reclaim == MemcgReclaim::MemcgLru {
            self.set_initial_priority(sc);
            let mut reclaimable = min_ttl == 0;
            for &memcg in &memcgs {
                self.memcg
                    .counters
                    .calculate_protection(0, memcg, self.recursiveprot);
                if !reclaimable {
                    let lv = self.mem_cgroup_lruvec(memcg, sc.nid);
                    reclaimable = self.lruvec_is_reclaimable(lv, sc, min_ttl);
                }
            }
            if !reclaimable {
                self.out_of_memory();
            }
            return;
        }
        if self.cfg.lru_gen.memcg_reclaim == MemcgReclaim::Seed {
            sc.last_reclaimed = sc.nr_reclaimed;
            if !sc.memcgs_need_aging {
                sc.memcgs_need_aging = true;
                return;
            }
        }
        let mut success = false;
        for &memcg in &memcgs {
            // age_lruvec.
            self.memcg
                .counters
                .calculate_protection(0, memcg, self.recursiveprot);
            if self.mem_cgroup_below(0, memcg).0 {
                continue;
            }
            let lv = self.mem_cgroup_lruvec(memcg, sc.nid);
            let swappiness = self.get_swappiness(lv, sc);
            let (age, nr_to_scan) = self.should_run_aging_v61(lv, swappiness, sc.priority);
            if min_ttl > 0 {
                let g = &self.lruvecs[lv].lrugen;
                let birth = g.timestamps[lru_gen_from_seq(g.min_seq[FILE])];
                if birth + min_ttl > self.jiffies() {
                    continue;
                }
                if nr_to_scan == 0 && sc.priority != DEF_PRIORITY {
                    continue;
                }
            }
            if age {
                let max_seq = self.lruvecs[lv].lrugen.max_seq;
                self.try_to_inc_max_seq(lv, max_seq, swappiness, false);
            }
            success = true;
        }
        if !success && min_ttl > 0 && sc.order == 0 {
            self.out_of_memory();
        }
    }

    /// `lru_gen_online_memcg`: each of a memcg's lruvecs joins its node's memcg LRU,
    /// at the old generation's tail in a random bin.
    pub fn lru_gen_online_memcg(&mut self, memcg: usize) {
        for nid in 0..self.nr_nodes() {
            let lv = self.mem_cgroup_lruvec(memcg, nid);
            let gen = get_memcg_gen(self.memcg_lru[nid].seq);
            let bin = self.memcg_lru_bin();
            self.memcg_lru_link(lv, gen, bin, true);
            self.memcg_lru[nid].nr_memcgs[gen] += 1;
        }
    }

    fn memcg_lru_bin(&mut self) -> usize {
        use rand::RngCore;
        (self.lru_gen_rng.next_u32() % MEMCG_NR_BINS as u32) as usize
    }

    fn memcg_lru_link(&mut self, lv: usize, gen: usize, bin: usize, tail: bool) {
        let nid = self.lruvec_pgdat(lv);
        let (first, last) = self.memcg_lru[nid].fifo[gen][bin];
        let g = &mut self.lruvecs[lv].lrugen;
        g.memcg_gen = gen;
        g.bin = bin;
        g.on_memcg_lru = true;
        if tail {
            g.memcg_prev = last;
            g.memcg_next = None;
            match last {
                Some(l) => self.lruvecs[l].lrugen.memcg_next = Some(lv),
                None => self.memcg_lru[nid].fifo[gen][bin].0 = Some(lv),
            }
            self.memcg_lru[nid].fifo[gen][bin].1 = Some(lv);
        } else {
            g.memcg_prev = None;
            g.memcg_next = first;
            match first {
                Some(f) => self.lruvecs[f].lrugen.memcg_prev = Some(lv),
                None => self.memcg_lru[nid].fifo[gen][bin].1 = Some(lv),
            }
            self.memcg_lru[nid].fifo[gen][bin].0 = Some(lv);
        }
    }

    fn memcg_lru_unlink(&mut self, lv: usize) {
        let nid = self.lruvec_pgdat(lv);
        let g = &self.lruvecs[lv].lrugen;
        let (gen, bin, prev, next) = (g.memcg_gen, g.bin, g.memcg_prev, g.memcg_next);
        match prev {
            Some(p) => self.lruvecs[p].lrugen.memcg_next = next,
            None => self.memcg_lru[nid].fifo[gen][bin].0 = next,
        }
        match next {
            Some(n) => self.lruvecs[n].lrugen.memcg_prev = prev,
            None => self.memcg_lru[nid].fifo[gen][bin].1 = prev,
        }
        let g = &mut self.lruvecs[lv].lrugen;
        g.memcg_prev = None;
        g.memcg_next = None;
        g.on_memcg_lru = false;
    }

    /// `lru_gen_rotate_memcg`: HEAD/TAIL keep the generation and set the segment;
    /// OLD/YOUNG move to that generation. HEAD and OLD add at a random bin's head,
    /// TAIL and YOUNG at its tail. An emptied old generation makes young the old one.
    pub fn lru_gen_rotate_memcg(&mut self, lv: usize, op: MemcgLruOp) {
        let nid = self.lruvec_pgdat(lv);
        if op == MemcgLruOp::Nop || !self.lruvecs[lv].lrugen.on_memcg_lru {
            return;
        }
        let bin = self.memcg_lru_bin();
        let old = self.lruvecs[lv].lrugen.memcg_gen;
        let seq = self.memcg_lru[nid].seq;
        let (seg, new) = match op {
            MemcgLruOp::Head => (MEMCG_LRU_HEAD, old),
            MemcgLruOp::Tail => (MEMCG_LRU_TAIL, old),
            MemcgLruOp::Old => (0, get_memcg_gen(seq)),
            MemcgLruOp::Young => (0, get_memcg_gen(seq + 1)),
            MemcgLruOp::Nop => unreachable!(),
        };
        self.memcg_lru_unlink(lv);
        self.lruvecs[lv].lrugen.seg = seg;
        let tail = matches!(op, MemcgLruOp::Tail | MemcgLruOp::Young);
        self.memcg_lru_link(lv, new, bin, tail);
        self.memcg_lru[nid].nr_memcgs[old] -= 1;
        self.memcg_lru[nid].nr_memcgs[new] += 1;
        if self.memcg_lru[nid].nr_memcgs[old] == 0 && old == get_memcg_gen(self.memcg_lru[nid].seq)
        {
            self.memcg_lru[nid].seq += 1;
        }
    }

    /// `shrink_one`'s checks before reclaiming: skip (YOUNG) below min; the first try
    /// below low moves the memcg to the tail (TAIL), the next counts a low event.
    fn shrink_one_begin(&mut self, lv: usize) -> Option<MemcgLruOp> {
        let (below_min, below_low) = self.mem_cgroup_below(0, self.lruvec_memcg(lv));
        if below_min {
            return Some(MemcgLruOp::Young);
        }
        if below_low {
            if self.lruvecs[lv].lrugen.seg != MEMCG_LRU_TAIL {
                return Some(MemcgLruOp::Tail);
            }
            let memcg = self.lruvec_memcg(lv);
            self.memcg.cgs[memcg].events.low += 1;
        }
        None
    }

    /// `shrink_one`'s end: YOUNG if it had to age, stay if it is still sizable, else
    /// one retry at the tail, then YOUNG.
    fn shrink_one_end(&self, lv: usize, sc: &ScanControl, success: bool) -> MemcgLruOp {
        if success {
            return MemcgLruOp::Young;
        }
        if self.lruvec_is_sizable(lv, sc) {
            return MemcgLruOp::Nop;
        }
        if self.lruvecs[lv].lrugen.seg != MEMCG_LRU_TAIL {
            MemcgLruOp::Tail
        } else {
            MemcgLruOp::Young
        }
    }

    /// `lru_gen_shrink_node`, first half (global reclaim, memcg-lru): the initial
    /// priority; kswapd counts this call's reclaim from 0.
    pub fn lru_gen_shrink_node_begin(&mut self, sc: &mut ScanControl) -> GenScan {
        let reclaimed_before = sc.nr_reclaimed;
        // Unmapped clean folios are already prioritised: scanning for more is futile.
        let skip = !sc.may_writepage || !sc.may_unmap;
        if !skip {
            self.set_initial_priority(sc);
            if self.is_kswapd() {
                sc.nr_reclaimed = 0;
            }
        }
        let gen = get_memcg_gen(self.memcg_lru[sc.nid].seq);
        let bin = self.memcg_lru_bin();
        GenScan {
            reclaimed_before,
            gen,
            bin,
            first_bin: bin,
            pos: None,
            op: MemcgLruOp::Nop,
            cur: None,
            started: false,
            skip,
        }
    }

    /// `shrink_many` over the memcg LRU's old generation, bin after bin, until
    /// `should_abort_scan`; resumable. True when `lru_gen_shrink_node` is done.
    pub fn lru_gen_shrink_node_step(
        &mut self,
        gs: &mut GenScan,
        sc: &mut ScanControl,
        budget_ns: u64,
    ) -> bool {
        while !gs.skip {
            if let Some(mut w) = gs.cur.take() {
                match self.lru_gen_lruvec_step(&mut w, sc, budget_ns) {
                    None => {
                        gs.cur = Some(w);
                        return false;
                    }
                    Some(success) => {
                        self.shrink_slab_after_lruvec(self.lruvec_memcg(w.lv), sc);
                        gs.op = self.shrink_one_end(w.lv, sc, success);
                        if self.should_abort_scan(sc) {
                            // The walk stopped early: rotate the last one and return.
                            if let Some(p) = gs.pos {
                                self.lru_gen_rotate_memcg(p, gs.op);
                            }
                            break;
                        }
                    }
                }
            }
            // Next entry of the list: after `pos` (its op applied first), or the head.
            let next = match gs.pos {
                None if !gs.started => {
                    gs.started = true;
                    self.memcg_lru[sc.nid].fifo[gs.gen][gs.bin].0
                }
                None => None,
                Some(p) => {
                    let g = &self.lruvecs[p].lrugen;
                    let (next, list) = (g.memcg_next, (g.memcg_gen, g.bin));
                    let op = std::mem::replace(&mut gs.op, MemcgLruOp::Nop);
                    self.lru_gen_rotate_memcg(p, op);
                    if next.is_none() && list.0 != gs.gen {
                        // Raced with a rotation to another list: restart this bin.
                        gs.pos = None;
                        gs.started = false;
                        continue;
                    }
                    next
                }
            };
            let Some(lv) = next else {
                // End of this bin: the rest of the old generation's bins.
                gs.bin = (gs.bin + 1) % MEMCG_NR_BINS;
                gs.pos = None;
                gs.started = false;
                if gs.bin == gs.first_bin {
                    break;
                }
                continue;
            };
            gs.pos = Some(lv);
            if self.lruvecs[lv].lrugen.memcg_gen != gs.gen {
                continue;
            }
            if let Some(op) = self.shrink_one_begin(lv) {
                gs.op = op;
                if self.should_abort_scan(sc) {
                    self.lru_gen_rotate_memcg(lv, op);
                    break;
                }
                continue;
            }
            gs.cur = Some(self.lru_gen_lruvec_begin(lv, sc));
        }
        if self.is_kswapd() && !gs.skip {
            sc.nr_reclaimed += gs.reclaimed_before;
        }
        if sc.nr_reclaimed > gs.reclaimed_before {
            self.kswapd[sc.nid].failures = 0;
        }
        true
    }
}

impl Mm {
    /// `lru_gen_change_state`: the main switch flipped at run time; every evictable
    /// folio moves between the classic lists and the generations (active folios to
    /// the youngest generation, the youngest two generations to the active lists).
    pub fn lru_gen_change_state(&mut self, enable: bool) {
        for lv in 0..self.lruvecs.len() {
            if enable {
                for l in lru::EVICTABLE {
                    loop {
                        let pfn = self.lruvecs[lv].lists[l].tail();
                        if pfn == NIL {
                            break;
                        }
                        self.lruvec_del_folio(pfn);
                        self.lruvec_add_folio(pfn);
                    }
                }
            } else {
                for gen in 0..MAX_NR_GENS as usize {
                    for t in [ANON, FILE] {
                        for zi in 0..MAX_NR_ZONES {
                            loop {
                                let pfn = self.lruvecs[lv].lrugen.folios[gen][t][zi].tail();
                                if pfn == NIL {
                                    break;
                                }
                                self.lru_gen_del_folio(pfn, false);
                                self.lruvec_add_folio(pfn);
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Bits of an MGLRU shadow token's generation part (`EVICTION_MASK >> LRU_REFS_WIDTH`).
const TOKEN_SEQ_MASK: u64 = (1 << (super::workingset::EVICTION_BITS - LRU_REFS_WIDTH)) - 1;

impl Mm {
    /// `lru_gen_eviction`: the shadow of a folio evicted from its memcg's lruvec:
    /// the oldest generation's number and the folio's refs (`max(refs − 1, 0)`),
    /// counted as evicted in its tier.
    pub fn lru_gen_eviction(&mut self, pfn: Pfn) -> u64 {
        let f = self.frames[pfn as usize];
        let t = f.is_file_lru() as usize;
        let refs = folio::lru_refs(&f);
        let ws = f.test(pg::WORKINGSET);
        let tier = lru_tier_from_refs(refs, ws);
        let owner = super::workingset::ShadowOwner {
            memcg: f.memcg,
            nid: self.pfn_to_nid(pfn) as u8,
        };
        let lv = self.folio_lruvec(pfn);
        let g = &mut self.lruvecs[lv].lrugen;
        let token =
            ((g.min_seq[t] & TOKEN_SEQ_MASK) << LRU_REFS_WIDTH) | refs.saturating_sub(1) as u64;
        g.evicted[t][tier] += 1;
        self.workingset.pack_token(owner, token, ws)
    }

    /// `lru_gen_refault` (kernel-reference §4.8): counted as a refault in the
    /// lruvec it left; "recent" if evicted from the generation that is still the
    /// oldest, then counted in its tier's refaults (the PID controller's input) and as
    /// an activation; a refault in a page fault, or of a folio near saturation, comes
    /// back as working set (PG_workingset and full refs: a restore).
    pub fn lru_gen_refault(&mut self, pfn: Pfn, shadow: u64) {
        let f = self.frames[pfn as usize];
        let file = f.is_file_lru();
        let t = file as usize;
        let memcg = f.memcg as usize;
        let lv = self.folio_lruvec(pfn);
        let (owner, token, workingset) = self.workingset.unpack_token(shadow);
        if self.shadow_lruvec(owner) != Some(lv) {
            return; // evicted from another lruvec
        }
        self.count_memcg_type(
            memcg,
            file,
            Ev::WorkingsetRefaultAnon,
            Ev::WorkingsetRefaultFile,
        );
        let g = &mut self.lruvecs[lv].lrugen;
        let recent = token >> LRU_REFS_WIDTH == g.min_seq[t] & TOKEN_SEQ_MASK;
        if !recent {
            return;
        }
        let refs = (token & ((1 << LRU_REFS_WIDTH) - 1)) as u32 + 1;
        let tier = lru_tier_from_refs(refs, workingset);
        g.refaulted[t][tier] += 1;
        self.count_memcg_type(
            memcg,
            file,
            Ev::WorkingsetActivateAnon,
            Ev::WorkingsetActivateFile,
        );
        if self.in_lru_fault || refs >= (1 << LRU_REFS_WIDTH) - 1 {
            let f = &mut self.frames[pfn as usize];
            folio::set_refs_counter(f, (1 << LRU_REFS_WIDTH) - 1);
            f.set(pg::REFERENCED | pg::WORKINGSET);
            self.count_memcg_type(
                memcg,
                file,
                Ev::WorkingsetRestoreAnon,
                Ev::WorkingsetRestoreFile,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::page_alloc::test_pages::{add_pages, add_pages_of};
    use crate::test_util::{add_memcgs, add_process, add_zram, mglru, task_mm};
    use crate::{Config, Current};

    /// A 64 MiB machine with 64 MiB of zram, MGLRU on, three cgroups, and one
    /// workload in cgroup "a".
    fn cfg() -> Config {
        let mut cfg = Config::new(64 << 8);
        add_zram(&mut cfg, 64);
        mglru(&mut cfg);
        add_memcgs(&mut cfg, &["a", "b", "c"]);
        add_process(&mut cfg, Some("a"));
        cfg
    }

    fn mm() -> Mm {
        task_mm(cfg())
    }

    fn gen_of(mm: &Mm, pfn: Pfn) -> usize {
        folio::lru_gen(&mm.frames[pfn as usize]).unwrap()
    }

    #[test]
    fn generation_arithmetic_and_placement() {
        // A new lruvec: max_seq = MIN_NR_GENS + 1 = 3, min_seq 0: four generations, the
        // youngest two (seq 3 → gen 3, seq 2 → gen 2) "active".
        let mut mm = mm();
        let g = &mm.lruvecs[0].lrugen;
        assert_eq!((g.max_seq, g.min_seq), (3, [0, 0]));
        assert_eq!((g.nr_gens(ANON), g.nr_gens(FILE)), (4, 4));
        assert!(g.is_active(3) && g.is_active(2) && !g.is_active(1) && !g.is_active(0));
        assert_eq!(lru_gen_from_seq(9), 1);
        // §4.4: a clean file page (not active, not reclaiming, more than MIN_NR_GENS
        // generations) → min_seq + 1 = seq 1; an anon page outside the swap cache →
        // max_seq − 1 = seq 2; an active one → max_seq = 3.
        let (_, file) = add_pages(&mut mm, SpaceKind::File, 5, 0);
        let (_, anon) = add_pages(&mut mm, SpaceKind::Anon, 3, 0);
        let (_, hot) = add_pages(&mut mm, SpaceKind::File, 2, pg::ACTIVE);
        assert_eq!(gen_of(&mm, file[0]), 1);
        assert_eq!(gen_of(&mm, anon[0]), 2);
        assert_eq!(gen_of(&mm, hot[0]), 3);
        assert!(
            !mm.frames[hot[0] as usize].test(pg::ACTIVE),
            "PG_active cleared on a list"
        );
        // Compat counters: gen 1 inactive, gens 2 and 3 active.
        assert_eq!(mm.global_lru_pages(lru::INACTIVE_FILE), 5);
        assert_eq!(mm.global_lru_pages(lru::ACTIVE_FILE), 2);
        assert_eq!(mm.global_lru_pages(lru::ACTIVE_ANON), 3);
        mm.check_invariants().unwrap();

        // inc_max_seq(3): both types have MAX_NR_GENS = 4 generations, so each retires
        // its oldest first (gen 0: empty) → min_seq 1; then max_seq 4 (gen 0). Seq 2
        // (the 3 anon pages) stops being active: 3 anon pages move to inactive.
        assert!(mm.inc_max_seq(0, 3, 100));
        let g = &mm.lruvecs[0].lrugen;
        assert_eq!((g.max_seq, g.min_seq), (4, [1, 1]));
        assert_eq!(mm.global_lru_pages(lru::INACTIVE_ANON), 3);
        assert_eq!(mm.global_lru_pages(lru::ACTIVE_ANON), 0);
        // A stale sequence number does nothing.
        assert!(!mm.inc_max_seq(0, 3, 100));
        // inc_max_seq(4): min_seq 1 (gen 1 holds the 5 file pages) retires by moving
        // them to gen 2 (seq 2), counted as protected in tier 0, which reset_ctrl_pos
        // then folds into the average: (0 + 5) / 2 = 2. max_seq 5 wraps to gen 1,
        // now empty and the youngest.
        assert!(mm.inc_max_seq(0, 4, 100));
        let g = &mm.lruvecs[0].lrugen;
        assert_eq!((g.max_seq, g.min_seq), (5, [2, 2]));
        assert_eq!(gen_of(&mm, file[0]), 2);
        assert_eq!((g.protected[FILE][0], g.avg_total[FILE][0]), (0, 2));
        assert_eq!(g.gen_pages(1, FILE), 0);
        mm.check_invariants().unwrap();
        // Nothing left at seq 2 and 3 for anon? The anon pages are at seq 2 (gen 2):
        // try_to_inc_min_seq finds both types' oldest generations populated.
        assert!(!mm.try_to_inc_min_seq(0, 100));
    }

    #[test]
    fn min_seq_advances_past_empty_generations_within_reach_of_the_other_type() {
        // Anon pages at seq 2 (max_seq − 1), file pages moved to seq 3: each type's
        // min_seq advances over empty generations while min_seq + MIN_NR_GENS <=
        // max_seq, so to 2 (leaving two generations). s = max_seq − MIN_NR_GENS = 1:
        // neither is above s while the other is below it: no clamp.
        let mut mm = mm();
        let (_, file) = add_pages(&mut mm, SpaceKind::File, 4, 0);
        add_pages(&mut mm, SpaceKind::Anon, 4, 0);
        for &p in &file {
            mm.lru_gen_del_folio(p, true);
            mm.frames[p as usize].set(pg::ACTIVE);
            mm.lruvec_add_folio(p);
        }
        assert!(mm.try_to_inc_min_seq(0, 60));
        assert_eq!(mm.lruvecs[0].lrugen.min_seq, [2, 2]);
        // Anon stuck at seq 0 (a swap-cache page put back by reclaim goes to the
        // oldest), file empty: file would reach 2 > s = 1 while anon is 0 < 1, so file
        // is clamped to 1.
        let mut mm = self::mm();
        let (_, anon) = add_pages(&mut mm, SpaceKind::Anon, 1, pg::SWAPCACHE);
        mm.lru_gen_del_folio(anon[0], true);
        mm.lru_gen_add_folio(anon[0], true);
        assert_eq!(gen_of(&mm, anon[0]), 0);
        assert!(mm.try_to_inc_min_seq(0, 60));
        assert_eq!(mm.lruvecs[0].lrugen.min_seq, [0, 1]);
        // At swappiness 0 only file is evictable: no clamp, file goes to 2.
        let mut mm2 = self::mm();
        add_pages(&mut mm2, SpaceKind::Anon, 4, 0);
        assert!(mm2.try_to_inc_min_seq(0, 0));
        assert_eq!(mm2.lruvecs[0].lrugen.min_seq, [0, 2]);
    }

    #[test]
    fn should_run_aging_at_each_generation_count() {
        let mut mm = mm();
        add_pages(&mut mm, SpaceKind::File, 10, 0); // seq 1
        add_pages(&mut mm, SpaceKind::File, 30, pg::ACTIVE); // seq 3
                                                             // Four generations (min 0, max 3): no need to age; 40 evictable pages.
        assert_eq!(mm.should_run_aging(0, 0), (false, 40));
        // Three (min 1): "better to age" with exactly MIN_NR_GENS + 1.
        mm.lruvecs[0].lrugen.min_seq = [1, 1];
        assert_eq!(mm.should_run_aging(0, 0), (true, 40));
        // Two (min 2): must age, and nothing to scan.
        mm.lruvecs[0].lrugen.min_seq = [2, 2];
        assert_eq!(mm.should_run_aging(0, 0), (true, 0));
        // v6.1 with three generations: young (seq 3) = 30 of 40 → 30·2 > 40: age.
        // (min_seq 1 counts seqs 1..=3: 10 + 30.)
        mm.lruvecs[0].lrugen.min_seq = [1, 1];
        assert_eq!(mm.should_run_aging_v61(0, 0, 0), (true, 40));
        // With four generations v6.1 never ages; pages >> priority: 40 >> 2 = 10.
        mm.lruvecs[0].lrugen.min_seq = [0, 0];
        assert_eq!(mm.should_run_aging_v61(0, 0, 2), (false, 10));
    }

    #[test]
    fn should_run_aging_v61_looks_at_the_spread() {
        // Three generations, seq 1 (old) 10, seq 2 (middle) 50, seq 3 (young) 10:
        // young·2 = 20 ≤ 70 and old·4 = 40 < 70 → age (too few cold pages).
        let mut mm = mm();
        add_pages(&mut mm, SpaceKind::File, 10, 0); // seq 1
        let (_, mid) = add_pages(&mut mm, SpaceKind::File, 50, 0);
        for &p in &mid {
            mm.lru_gen_del_folio(p, true);
            mm.frames[p as usize].set(pg::RECLAIM | pg::DIRTY); // → max_seq − 1
            mm.lruvec_add_folio(p);
        }
        add_pages(&mut mm, SpaceKind::File, 10, pg::ACTIVE); // seq 3
        mm.lruvecs[0].lrugen.min_seq = [1, 1];
        assert_eq!(mm.should_run_aging_v61(0, 0, 0), (true, 70));
        // 20 old instead (old·4 = 80 ≥ 80, young·2 = 20 ≤ 80): no aging.
        add_pages(&mut mm, SpaceKind::File, 10, 0);
        assert_eq!(mm.should_run_aging_v61(0, 0, 0), (false, 80));
    }

    #[test]
    fn pid_controller_picks_the_type_that_refaults_less() {
        let mut g = LruGenFolio::default();
        // Few file refaults (< MIN_LRU_BATCH): scan file.
        g.refaulted[FILE][0] = 63;
        g.evicted[FILE][0] = 100;
        assert_eq!(g.get_type_to_scan(60), FILE);
        // swappiness 1 → file, 200 → anon, whatever the refaults.
        g.refaulted[FILE][0] = 10_000;
        assert_eq!(g.get_type_to_scan(1), FILE);
        assert_eq!(g.get_type_to_scan(200), ANON);
        // swappiness 100 (equal gains): anon sp = (refaulted 100, total 1000), file
        // pv = (refaulted 500, total 1000). positive iff pv.r·(sp.t + 64)·100 ≤
        // (sp.r + 1)·pv.t·100: 500·1064 = 532000 > 101·1000 = 101000 → anon.
        let mut g = LruGenFolio::default();
        g.refaulted[ANON][0] = 100;
        g.evicted[ANON][0] = 1000;
        g.refaulted[FILE][1] = 500;
        g.evicted[FILE][0] = 600;
        g.protected[FILE][1] = 400;
        assert_eq!(
            g.read_ctrl_pos(FILE, MAX_NR_TIERS, 100),
            CtrlPos {
                refaulted: 500,
                total: 1000,
                gain: 100
            }
        );
        assert_eq!(g.get_type_to_scan(100), ANON);
        // File refaulting at 5 % against anon's 50 %: 50·1064·100 = 5.32e6 ≤
        // 501·1000·100 = 5.01e7 → file.
        let mut g = LruGenFolio::default();
        g.refaulted[ANON][0] = 500;
        g.evicted[ANON][0] = 1000;
        g.refaulted[FILE][0] = 50;
        g.evicted[FILE][0] = 1000;
        // 50 < 64: file by the small-numbers rule already; make it 64 and 5 %.
        g.refaulted[FILE][0] = 64;
        g.evicted[FILE][0] = 1280;
        // 64·1064·100 = 6.8e6 ≤ 501·1280·100 = 6.4e7 → file.
        assert_eq!(g.get_type_to_scan(100), FILE);
        // The averages count too: a history of anon refaults at 0 now.
        let mut g = LruGenFolio::default();
        g.avg_refaulted[ANON][0] = 0;
        g.avg_total[ANON][0] = 10_000;
        g.refaulted[FILE][0] = 1000;
        g.evicted[FILE][0] = 2000;
        // 1000·(10000+64)·140... at swappiness 60: sp gain 60, pv gain 140:
        // 1000·10064·60 = 6.04e8 > 1·2000·140 = 2.8e5 → anon.
        assert_eq!(g.get_type_to_scan(60), ANON);
    }

    #[test]
    fn tiers_refaulting_clearly_more_than_tier_0_are_protected() {
        // Tier 0: 100 refaults of 1000; tier 1: 30 of 100 (30 %, ≥ 64? no: 30 < 64 →
        // positive → not protected, look further); tier 2: 80 of 100 → 80·(1000+64)·2
        // = 170240 > (100+1)·100·3 = 30300 → not positive: stop, protect tiers ≥ 2.
        let mut g = LruGenFolio::default();
        g.refaulted[FILE][0] = 100;
        g.evicted[FILE][0] = 1000;
        g.refaulted[FILE][1] = 30;
        g.evicted[FILE][1] = 100;
        g.refaulted[FILE][2] = 80;
        g.evicted[FILE][2] = 100;
        assert_eq!(g.get_tier_idx(FILE), 1);
        // Tier 2 at 14 % (70 of 500): 70·1064·2 = 148960 ≤ 101·500·3 = 151500 →
        // positive (within the 2:3 margin): nothing protected up to tier 3.
        g.refaulted[FILE][2] = 70;
        g.evicted[FILE][2] = 500;
        assert_eq!(g.get_tier_idx(FILE), 3);
        // reset_ctrl_pos folds the slot into the averages (halved) and clears it.
        g.reset_ctrl_pos(FILE, true);
        assert_eq!((g.avg_refaulted[FILE][0], g.avg_total[FILE][0]), (50, 500));
        assert_eq!((g.refaulted[FILE][0], g.evicted[FILE][0]), (0, 0));
    }

    #[test]
    fn tiers_from_references() {
        // order_base_2: refs 0, 1 → tier 0; 2 → 1; 3, 4 → 2; PG_workingset → 3.
        let tiers: Vec<usize> = (0..=4).map(|r| lru_tier_from_refs(r, false)).collect();
        assert_eq!(tiers, [0, 0, 1, 2, 2]);
        assert_eq!(lru_tier_from_refs(0, true), 3);
        // read() accesses: PG_referenced, then the counter 0 → 3, then PG_workingset.
        let mut mm = mm();
        let (_, p) = add_pages(&mut mm, SpaceKind::File, 1, 0);
        let f = |mm: &Mm| mm.frames[p[0] as usize];
        let mut seen = Vec::new();
        for _ in 0..6 {
            mm.folio_mark_accessed(p[0]);
            seen.push((folio::lru_refs(&f(&mm)), f(&mm).test(pg::WORKINGSET)));
        }
        assert_eq!(
            seen,
            [
                (1, false),
                (2, false),
                (3, false),
                (4, false),
                (4, true),
                (4, true)
            ]
        );
        assert!(folio::lazily_promoted(&f(&mm)));
        assert_eq!(
            gen_of(&mm, p[0]),
            1,
            "accesses through fds change tiers, not lists"
        );
    }

    #[test]
    fn should_abort_scan_branches() {
        let mut mm = mm();
        let mut sc = ScanControl::new(32, 1, 0);
        // Base: memcg reclaim never aborts.
        sc.target = 1;
        sc.nr_reclaimed = 1000;
        assert!(!mm.should_abort_scan(&sc));
        // Global reclaim at its target (max(nr_to_reclaim, 2 << order) = 32).
        sc.target = 0;
        sc.nr_reclaimed = 32;
        assert!(mm.should_abort_scan(&sc));
        sc.nr_reclaimed = 31;
        assert!(!mm.should_abort_scan(&sc), "direct reclaim below target");
        // Order 5: compact_gap = 2 << 5 = 64 pages needed.
        sc.order = 5;
        sc.nr_reclaimed = 40;
        assert!(!mm.should_abort_scan(&sc));
        // kswapd at order 0 below target: abort once every zone is above HIGH + 64;
        // the fresh machine is all free.
        mm.current = Current::Kswapd(0);
        sc.order = 0;
        sc.nr_reclaimed = 0;
        assert!(mm.should_abort_scan(&sc));
        // ... and not when a zone is short of it (the 64 MiB machine is all DMA32).
        let z = &mut mm.zones[0];
        let free = z.nr_free_pages;
        z.nr_free_pages = z.wmark(WMARK_HIGH) + MIN_LRU_BATCH - 1;
        assert!(!mm.should_abort_scan(&sc));
        mm.zones[0].nr_free_pages = free;

        // v6.1 (the seed). Direct reclaim: aged twice since the start → abort.
        mm.current = Current::Task(0);
        let mut sc = ScanControl::new(32, 1, 0);
        mm.lruvecs[0].lrugen.max_seq = 5;
        assert!(mm.should_abort_scan_v61(3, 0, &mut sc, false));
        // Target met while swapping → abort; without swapping, global reclaim goes on
        // to the priority test: at DEF_PRIORITY − 1 never abort.
        sc.nr_reclaimed = 32;
        assert!(mm.should_abort_scan_v61(4, 0, &mut sc, true));
        sc.priority = DEF_PRIORITY - 1;
        assert!(!mm.should_abort_scan_v61(4, 0, &mut sc, false));
        // Memcg reclaim stops there too: never aborts.
        sc.target = 1;
        sc.priority = 2;
        assert!(!mm.should_abort_scan_v61(4, 0, &mut sc, false));
        // Global direct reclaim at a low priority with every zone above LOW: abort,
        // crediting MIN_LRU_BATCH.
        sc.target = 0;
        assert!(mm.should_abort_scan_v61(4, 0, &mut sc, false));
        assert_eq!(sc.nr_reclaimed, 32 + MIN_LRU_BATCH);
        // kswapd: until nr_to_reclaim since last_reclaimed, never.
        mm.current = Current::Kswapd(0);
        let mut sc = ScanControl::new(100, 1, 0);
        sc.priority = 2;
        sc.last_reclaimed = 50;
        sc.nr_reclaimed = 149;
        assert!(!mm.should_abort_scan_v61(5, 0, &mut sc, false));
        sc.nr_reclaimed = 150;
        assert!(mm.should_abort_scan_v61(5, 0, &mut sc, false));
        // ... unless a zone is below its HIGH watermark.
        sc.nr_reclaimed = 150;
        mm.zones[0].nr_free_pages = mm.zones[0].wmark(WMARK_HIGH) - 1;
        assert!(!mm.should_abort_scan_v61(5, 0, &mut sc, false));
    }

    fn memcg_lru_lists(mm: &Mm) -> Vec<Vec<usize>> {
        let mut out = Vec::new();
        for gen in 0..MEMCG_NR_GENS {
            for bin in 0..MEMCG_NR_BINS {
                let mut v = Vec::new();
                let mut cur = mm.memcg_lru[0].fifo[gen][bin].0;
                while let Some(m) = cur {
                    v.push(m);
                    cur = mm.lruvecs[m].lrugen.memcg_next;
                }
                out.push(v);
            }
        }
        out
    }

    #[test]
    fn memcg_lru_rotations() {
        let mut mm = mm();
        // All four memcgs online in the old generation (seq 0 → gen 0).
        assert_eq!(mm.memcg_lru[0].nr_memcgs, [4, 0, 0]);
        let where_is = |mm: &Mm, m: usize| {
            let g = &mm.lruvecs[m].lrugen;
            (g.memcg_gen, g.seg)
        };
        // TAIL: same generation, TAIL segment, at a bin's tail.
        mm.lru_gen_rotate_memcg(1, MemcgLruOp::Tail);
        assert_eq!(where_is(&mm, 1), (0, MEMCG_LRU_TAIL));
        let bin = mm.lruvecs[1].lrugen.bin;
        assert_eq!(memcg_lru_lists(&mm)[bin].last(), Some(&1));
        // HEAD: same generation, HEAD segment, at a bin's head.
        mm.lru_gen_rotate_memcg(2, MemcgLruOp::Head);
        assert_eq!(where_is(&mm, 2), (0, MEMCG_LRU_HEAD));
        let bin = mm.lruvecs[2].lrugen.bin;
        assert_eq!(memcg_lru_lists(&mm)[bin].first(), Some(&2));
        // YOUNG: the young generation (seq + 1 → gen 1), default segment, at a tail.
        mm.lru_gen_rotate_memcg(3, MemcgLruOp::Young);
        assert_eq!(where_is(&mm, 3), (1, 0));
        assert_eq!(mm.memcg_lru[0].nr_memcgs, [3, 1, 0]);
        // OLD from young: back to gen 0 at a head.
        mm.lru_gen_rotate_memcg(3, MemcgLruOp::Old);
        assert_eq!(where_is(&mm, 3), (0, 0));
        let bin = mm.lruvecs[3].lrugen.bin;
        assert_eq!(memcg_lru_lists(&mm)[bin].first(), Some(&3));
        // Emptying the old generation makes the young one old: seq 0 → 1.
        for m in 0..4 {
            mm.lru_gen_rotate_memcg(m, MemcgLruOp::Young);
        }
        assert_eq!(mm.memcg_lru[0].seq, 1);
        assert_eq!(mm.memcg_lru[0].nr_memcgs, [0, 4, 0]);
        // Now old = gen 1, young = gen 2.
        mm.lru_gen_rotate_memcg(0, MemcgLruOp::Young);
        assert_eq!(where_is(&mm, 0), (2, 0));
        // NOP changes nothing.
        let before = memcg_lru_lists(&mm);
        mm.lru_gen_rotate_memcg(1, MemcgLruOp::Nop);
        assert_eq!(memcg_lru_lists(&mm), before);
        mm.check_invariants().unwrap();
    }

    /// Workload 0's anon mapping of three page-table pages (3 × 512 pages) in memcg a:
    /// table 0 all accessed, table 1 with young PTEs under a PMD entry a previous walk
    /// cleared, table 2 with one access.
    fn three_tables(cfg: Config) -> (Mm, u32, usize) {
        let mut mm = task_mm(cfg);
        let (si, _) = add_pages_of(&mut mm, SpaceKind::Anon, 3 * 512, 0, Some(0));
        let s = &mut mm.spaces[si as usize];
        for i in 0..512 {
            s.set_bits(i, pte::YOUNG);
        }
        for i in 512..1024 {
            s.set_bits(i, pte::YOUNG);
        }
        assert!(s.pmd_test_and_clear_young(1));
        s.set_bits(1024 + 7, pte::YOUNG);
        let a = mm.workload_memcg[0];
        (mm, si, a)
    }

    #[test]
    fn walk_skips_page_tables_under_an_old_pmd_entry() {
        // [TOTAL, YOUNG, FOUND, ADDED]; force_scan, so the Bloom filter passes all.
        // 0x7: table 1's PMD entry is old: not descended into (its young PTEs stay
        // young), and the other two entries are cleared. Table 0: 512 of 512 young,
        // dense (512 × 8 ≥ 512) → added; table 2: 1 young, 8 < 512 → not added.
        let (mut mm, si, a) = three_tables(cfg());
        let max_seq = mm.lruvecs[a].lrugen.max_seq;
        assert!(mm.try_to_inc_max_seq(a, max_seq, 60, true));
        assert_eq!(mm.lruvecs[a].lrugen.mm_stats, [1024, 513, 2, 1]);
        let s = &mut mm.spaces[si as usize];
        assert!((512..1024).all(|i| s.pte(i) & pte::YOUNG != 0));
        assert!(s.pte(0) & pte::YOUNG == 0 && s.pte(1024 + 7) & pte::YOUNG == 0);
        assert!(!s.pmd_test_and_clear_young(0) && !s.pmd_test_and_clear_young(2));
        // Nothing accessed since: the next walk finds no young PMD entry at all.
        let max_seq = mm.lruvecs[a].lrugen.max_seq;
        assert!(mm.try_to_inc_max_seq(a, max_seq, 60, true));
        assert_eq!(mm.lruvecs[a].lrugen.mm_stats, [1024, 513, 2, 1]);
        // One access under table 1 makes its entry young: all 512 young PTEs found.
        mm.spaces[si as usize].set_bits(600, pte::YOUNG);
        let max_seq = mm.lruvecs[a].lrugen.max_seq;
        assert!(mm.try_to_inc_max_seq(a, max_seq, 60, true));
        assert_eq!(mm.lruvecs[a].lrugen.mm_stats, [1536, 1025, 3, 2]);
        mm.check_invariants().unwrap();

        // 0x3: the PMD bits are not used: every table is walked.
        let (mut mm, _, a) = three_tables(Config {
            lru_gen: LruGenConfig {
                nonleaf_young: false,
                ..cfg().lru_gen
            },
            ..cfg()
        });
        let max_seq = mm.lruvecs[a].lrugen.max_seq;
        assert!(mm.try_to_inc_max_seq(a, max_seq, 60, true));
        assert_eq!(mm.lruvecs[a].lrugen.mm_stats, [1536, 1025, 3, 2]);
    }

    #[test]
    fn walk_moves_a_dirty_pte_to_a_folio_with_a_swap_copy_only() {
        // walk_update_folio: an anon folio without a swap slot is left alone (it has
        // nothing clean to lose); one in the swap cache becomes dirty, so reclaim
        // writes it again instead of dropping it.
        let mut mm = mm();
        let (si, p) = add_pages_of(&mut mm, SpaceKind::Anon, 64, 0, Some(0));
        mm.frames[p[1] as usize].set(pg::SWAPCACHE);
        for i in 0..64 {
            mm.spaces[si as usize].set_bits(i, pte::YOUNG | pte::DIRTY);
        }
        let a = mm.workload_memcg[0];
        let max_seq = mm.lruvecs[a].lrugen.max_seq;
        assert!(mm.try_to_inc_max_seq(a, max_seq, 60, true));
        assert!(!mm.frames[p[0] as usize].test(pg::DIRTY));
        assert!(mm.frames[p[1] as usize].test(pg::DIRTY));
        assert!(mm.spaces[si as usize].pte(1) & pte::DIRTY != 0);
    }

    #[test]
    fn shadow_token_round_trip_and_recent_refault() {
        // A file page with refs 3 (PG_referenced, counter 2) evicted at min_seq 0:
        // token = 0 << 2 | 2; evicted[FILE][tier 2] += 1. Refault while min_seq is
        // still 0: recent, refs = 2 + 1 = 3 → tier 2 refaulted, an activation; refs ≥
        // 3 → restored as working set.
        let mut mm = mm();
        let (_, p) = add_pages(&mut mm, SpaceKind::File, 2, 0);
        for _ in 0..3 {
            mm.folio_mark_accessed(p[0]);
        }
        assert_eq!(folio::lru_refs(&mm.frames[p[0] as usize]), 3);
        let shadow = mm.lru_gen_eviction(p[0]);
        assert_eq!(
            mm.workingset.unpack_token(shadow),
            (
                crate::workingset::ShadowOwner { memcg: 0, nid: 0 },
                2,
                false
            )
        );
        assert_eq!(mm.lruvecs[0].lrugen.evicted[FILE][2], 1);
        mm.lru_gen_refault(p[1], shadow);
        assert_eq!(mm.lruvecs[0].lrugen.refaulted[FILE][2], 1);
        assert_eq!(mm.vmstat.get(Ev::WorkingsetActivateFile), 1);
        assert_eq!(mm.vmstat.get(Ev::WorkingsetRestoreFile), 1);
        assert!(mm.frames[p[1] as usize].test(pg::WORKINGSET));
        // Once min_seq moved on, the same shadow is a plain refault.
        mm.lruvecs[0].lrugen.min_seq[FILE] = 1;
        mm.lru_gen_refault(p[1], shadow);
        assert_eq!(mm.vmstat.get(Ev::WorkingsetRefaultFile), 2);
        assert_eq!(mm.vmstat.get(Ev::WorkingsetActivateFile), 1);
    }
}

/// A command written to /sys/kernel/debug/lru_gen (`lru_gen_seq_write`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LruGenCmd {
    /// `+ memcg_id node_id max_gen_nr [can_swap [force_scan]]`: age.
    Age {
        memcg_id: u16,
        nid: u16,
        seq: u64,
        can_swap: Option<bool>,
        force_scan: bool,
    },
    /// `- memcg_id node_id min_gen_nr [swappiness [nr_to_reclaim]]`: evict.
    Evict {
        memcg_id: u16,
        nid: u16,
        seq: u64,
        swappiness: Option<u64>,
        nr_to_reclaim: u64,
    },
}

/// Parses what is written to `lru_gen` (commands separated by `,`, `;` or newlines)
/// for a machine with `nr_memcgs` memcgs (ids 1 ..= nr_memcgs, the root 1) and
/// `nr_nodes` nodes. The message says which command and which field is wrong.
pub fn parse_lru_gen_cmds(
    text: &str,
    nr_memcgs: usize,
    nr_nodes: usize,
) -> Result<Vec<LruGenCmd>, String> {
    let mut cmds = Vec::new();
    for (i, cmd) in text
        .split([',', ';', '\n'])
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .enumerate()
    {
        let at = |what: &str| format!("command {} `{cmd}`: {what}", i + 1);
        let f: Vec<&str> = cmd.split_whitespace().collect();
        if !(4..=6).contains(&f.len()) {
            return Err(at("expected `+ memcg node seq [can_swap [force_scan]]` or `- memcg node seq [swappiness [nr_to_reclaim]]`"));
        }
        let num = |s: &str, what: &str| {
            s.parse::<u64>()
                .map_err(|_| at(&format!("{what} `{s}` is not a number")))
        };
        let memcg_id = num(f[1], "memcg id")?;
        if memcg_id == 0 || memcg_id > nr_memcgs as u64 {
            return Err(at(&format!(
                "no memcg with id {memcg_id} (ids are 1 to {nr_memcgs}; `memcg` lines of lru_gen.txt show them)"
            )));
        }
        let nid = num(f[2], "node id")?;
        if nid >= nr_nodes as u64 {
            return Err(at(&if nr_nodes == 1 {
                format!("no node {nid} (the machine has one node, 0)")
            } else {
                format!(
                    "no node {nid} (the machine's nodes are 0 to {})",
                    nr_nodes - 1
                )
            }));
        }
        let nid = nid as u16;
        let seq = num(f[3], "generation")?;
        let flag = |s: &str, what: &str| match s {
            "0" => Ok(false),
            "1" => Ok(true),
            _ => Err(at(&format!("{what} must be 0 or 1, got `{s}`"))),
        };
        let memcg_id = memcg_id as u16;
        cmds.push(match f[0] {
            "+" => LruGenCmd::Age {
                memcg_id,
                nid,
                seq,
                can_swap: f.get(4).map(|s| flag(s, "can_swap")).transpose()?,
                force_scan: f
                    .get(5)
                    .map(|s| flag(s, "force_scan"))
                    .transpose()?
                    .unwrap_or(true),
            },
            "-" => LruGenCmd::Evict {
                memcg_id,
                nid,
                seq,
                swappiness: f
                    .get(4)
                    .map(|s| match *s {
                        "max" => Ok(SWAPPINESS_ANON_ONLY),
                        s => num(s, "swappiness").and_then(|v| {
                            if v <= MAX_SWAPPINESS {
                                Ok(v)
                            } else {
                                Err(at(&format!(
                                    "swappiness must be 0 to 200 or `max`, got {v}"
                                )))
                            }
                        }),
                    })
                    .transpose()?,
                nr_to_reclaim: f
                    .get(5)
                    .map(|s| num(s, "nr_to_reclaim"))
                    .transpose()?
                    .unwrap_or(u64::MAX),
            },
            op => return Err(at(&format!("`{op}` is neither + (age) nor - (evict)"))),
        });
    }
    if cmds.is_empty() {
        return Err("no command".into());
    }
    Ok(cmds)
}

impl Mm {
    /// The debugfs path of a memcg (`cgroup_path`): `/` for the root.
    fn memcg_debugfs_path(&self, memcg: usize) -> String {
        if memcg == 0 {
            "/".into()
        } else {
            format!("/{}", self.memcg.cgs[memcg].path)
        }
    }

    /// Reading /sys/kernel/debug/lru_gen (`full`: lru_gen_full): per memcg (id =
    /// index + 1, the root 1) and node, a line per generation — sequence number, age
    /// in ms, anon and file pages — from the oldest evictable one (all four with
    /// `full`, an `x` marking those below a type's min_seq, then per tier the PID
    /// controller's figures: avg refaulted/total `R T` at max_seq, refaulted, evicted
    /// and protected `r e p` at min_seq, and the page-table walk's counters).
    pub fn lru_gen_seq_show(&self, full: bool) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let now = self.jiffies();
        let ms = |j: u64| j * 1000 / self.cfg.hz;
        for (memcg, nid) in self
            .memcg
            .subtree(0)
            .into_iter()
            .flat_map(|m| (0..self.nr_nodes()).map(move |n| (m, n)))
        {
            let g = &self.lruvecs[self.mem_cgroup_lruvec(memcg, nid)].lrugen;
            if nid == 0 {
                let _ = writeln!(
                    out,
                    "memcg {:5} {}",
                    memcg + 1,
                    self.memcg_debugfs_path(memcg)
                );
            }
            let _ = writeln!(out, " node {:5}", nid);
            let first = if !full {
                g.evictable_min_seq(MAX_SWAPPINESS / 2)
            } else {
                g.max_seq.saturating_sub(MAX_NR_GENS - 1)
            };
            for seq in first..=g.max_seq {
                let gen = lru_gen_from_seq(seq);
                let _ = write!(
                    out,
                    " {:10} {:10}",
                    seq,
                    ms(now.saturating_sub(g.timestamps[gen]))
                );
                for t in [ANON, FILE] {
                    let mark = if full && seq < g.min_seq[t] { 'x' } else { ' ' };
                    let _ = write!(out, " {:10}{mark}", g.gen_pages(gen, t));
                }
                out.push('\n');
                if !full {
                    continue;
                }
                for tier in 0..MAX_NR_TIERS {
                    let _ = write!(out, "            {tier:10}");
                    for t in [ANON, FILE] {
                        let (s, n) = if seq == g.max_seq {
                            ("RTx", [g.avg_refaulted[t][tier], g.avg_total[t][tier], 0])
                        } else if seq == g.min_seq[t] {
                            (
                                "rep",
                                [
                                    g.refaulted[t][tier],
                                    g.evicted[t][tier],
                                    g.protected[t][tier],
                                ],
                            )
                        } else {
                            ("xxx", [0; 3])
                        };
                        for (i, c) in s.chars().enumerate() {
                            let _ = write!(out, " {:10}{c}", n[i]);
                        }
                    }
                    out.push('\n');
                }
                // MM_LEAF_TOTAL, MM_LEAF_YOUNG, MM_NONLEAF_FOUND, MM_NONLEAF_ADDED: at
                // max_seq (NR_HIST_GENS = 1), `xxxx` at the others.
                out.push_str("                      ");
                let (marks, stats) = if seq == g.max_seq {
                    (['T', 'Y', 'F', 'A'], g.mm_stats)
                } else {
                    (['x'; 4], [0; 4])
                };
                for (n, c) in stats.iter().zip(marks) {
                    let _ = write!(out, " {n:10}{c}");
                }
                out.push('\n');
            }
        }
        out
    }

    /// Writing /sys/kernel/debug/lru_gen (`lru_gen_seq_write` → `run_cmd`): each
    /// command runs in the writer's context; returns what each returned (0, or -EINVAL
    /// for a generation out of range, -EEXIST when ageing found max_seq moved on).
    pub fn lru_gen_seq_write(&mut self, cmds: &[LruGenCmd]) -> String {
        self.as_admin(|mm| mm.run_lru_gen_cmds(cmds))
    }

    fn run_lru_gen_cmds(&mut self, cmds: &[LruGenCmd]) -> String {
        let mut results = Vec::new();
        for cmd in cmds {
            let mut sc = ScanControl::new(u64::MAX, MAX_NR_ZONES - 1, 0);
            let r = match *cmd {
                LruGenCmd::Age {
                    memcg_id,
                    nid,
                    seq,
                    can_swap,
                    force_scan,
                } => {
                    let lv = self.mem_cgroup_lruvec(memcg_id as usize - 1, nid as usize);
                    sc.nid = nid as usize;
                    let swappiness = match can_swap {
                        Some(false) => 0,
                        _ => self.get_swappiness(lv, &sc),
                    };
                    let max_seq = self.lruvecs[lv].lrugen.max_seq;
                    if seq > max_seq {
                        "-EINVAL".to_string()
                    } else if self.try_to_inc_max_seq(lv, max_seq, swappiness, force_scan) {
                        "0".to_string()
                    } else {
                        "-EEXIST".to_string()
                    }
                }
                LruGenCmd::Evict {
                    memcg_id,
                    nid,
                    seq,
                    swappiness,
                    nr_to_reclaim,
                } => {
                    let lv = self.mem_cgroup_lruvec(memcg_id as usize - 1, nid as usize);
                    sc.nid = nid as usize;
                    let swappiness = swappiness.unwrap_or_else(|| self.get_swappiness(lv, &sc));
                    sc.nr_to_reclaim = nr_to_reclaim;
                    if seq + MIN_NR_GENS > self.lruvecs[lv].lrugen.max_seq {
                        "-EINVAL".to_string()
                    } else {
                        loop {
                            let g = &self.lruvecs[lv].lrugen;
                            if seq < g.evictable_min_seq(swappiness)
                                || sc.nr_reclaimed >= nr_to_reclaim
                                || self.blocked_until.is_some()
                                || self.evict_folios(lv, &mut sc, swappiness).0 == 0
                            {
                                break;
                            }
                        }
                        format!("0 (reclaimed {} pages)", sc.nr_reclaimed)
                    }
                }
            };
            results.push(r);
        }
        results.join(", ")
    }
}
