//! Helpers the mm unit tests share: an `Mm` with a task running, pages put on an
//! LRU by hand.

use super::memcontrol::MemcgConfig;
use super::page::{on, pg, pte, Pfn};
use super::page_alloc::GFP_HIGHUSER_MOVABLE;
use super::swap::{SwapConfig, SwapKind};
use super::zone::{PAGEBLOCK_NR_PAGES, ZONE_DMA32};
use super::{Config, Current, Mm, SpaceKind, WorkloadConfig};

/// A machine of `memory_mib` MiB with one process (workload 0, in the root cgroup)
/// and every knob at its default.
pub fn config(memory_mib: u64) -> Config {
    let mut cfg = Config::new(memory_mib << 8);
    add_process(&mut cfg, None);
    cfg
}

/// Another process, in cgroup `memcg` (None: the root).
pub fn add_process(cfg: &mut Config, memcg: Option<&str>) {
    cfg.workloads.push(WorkloadConfig {
        memcg: memcg.map(str::to_string),
        page_tables: true,
        ..Default::default()
    });
}

/// `mib` MiB of zram swap (pages compress 3:1, no pool limit).
pub fn add_zram(cfg: &mut Config, mib: u64) {
    let super::blk_mq::DeviceConfig::Block(disk) = cfg.storage else {
        unreachable!("the default storage is a disk")
    };
    cfg.swap = Some(SwapConfig {
        kind: SwapKind::Zram,
        size_pages: mib << 8,
        compression_ratio: 3.0,
        mem_limit_bytes: 0,
        device: disk,
    });
}

/// Cgroups at `paths` (no protection, no limits), each after its parent.
pub fn add_memcgs(cfg: &mut Config, paths: &[&str]) {
    cfg.memcgs.extend(paths.iter().map(|p| MemcgConfig::new(p)));
}

/// `kernel.lru = "mglru"`: the multi-gen LRU with every feature bit on.
pub fn mglru(cfg: &mut Config) {
    cfg.lru_gen.enabled = true;
}

/// The `Mm` of `cfg`, with one task created and running (task 0).
pub fn task_mm(cfg: Config) -> Mm {
    let mut mm = Mm::new(cfg);
    mm.set_nr_tasks(1);
    mm.current = Current::Task(0);
    mm
}

/// `n` pages of `kind` (with page `flags`) on the LRU of the root memcg, present in
/// a new space's table (PTEs not young). A file space's table is its page cache, so
/// its pages are cached but, without PG_mapped, mapped by no one.
pub fn add_pages(mm: &mut Mm, kind: SpaceKind, n: u32, flags: u16) -> (u32, Vec<Pfn>) {
    add_pages_of(mm, kind, n, flags, None)
}

/// [`add_pages`] in a space of workload `owner` (an anon space joins its mm, which
/// MGLRU's walk visits), charged to its memcg.
pub fn add_pages_of(
    mm: &mut Mm,
    kind: SpaceKind,
    n: u32,
    flags: u16,
    owner: Option<usize>,
) -> (u32, Vec<Pfn>) {
    let memcg = owner.map_or(0, |w| mm.workload_memcg[w]);
    let space = mm.add_space(kind, "s".into(), n as u64, owner);
    let mut pfns = Vec::new();
    for i in 0..n {
        let pfn = mm.alloc_pages(GFP_HIGHUSER_MOVABLE, 0).unwrap();
        let f = &mut mm.frames[pfn as usize];
        f.mapping = space;
        f.index = i;
        f.set(flags);
        f.memcg = memcg as u16;
        if kind == SpaceKind::Anon {
            f.set(pg::SWAPBACKED);
        }
        mm.folio_add_lru(pfn);
        *mm.spaces[space as usize].pte_mut(i) = pte::present(pfn);
        mm.spaces[space as usize].nr_present += 1;
        pfns.push(pfn);
    }
    (space, pfns)
}

/// A 256 MiB machine filled with clean file pages, then every page at an even PFN
/// dropped: 32768 free pages, none with a free buddy.
pub fn checkerboard() -> (Mm, usize) {
    let (mm, zi, _, _) = checkerboard_with(config(256));
    (mm, zi)
}

/// [`checkerboard`] of a 256 MiB `cfg`; also returns the file space and its pages
/// (index order).
pub fn checkerboard_with(cfg: Config) -> (Mm, usize, u32, Vec<Pfn>) {
    let mut mm = task_mm(cfg);
    let zi = ZONE_DMA32;
    mm.zones[zi].watermark = [0; 3];
    let n = mm.nr_free_pages() as u32;
    let (space, pfns) = add_pages(&mut mm, SpaceKind::File, n, 0);
    assert_eq!(mm.nr_free_pages(), 0);
    for (idx, &p) in pfns.iter().enumerate() {
        if p % 2 == 0 {
            mm.lruvec_del_folio(p);
            *mm.spaces[space as usize].pte_mut(idx as u32) = pte::NONE;
            mm.spaces[space as usize].nr_present -= 1;
            mm.frames[p as usize].flags = 0;
            mm.frames[p as usize].list = on::NONE;
            mm.free_pages(p, 0);
        }
    }
    assert_eq!(mm.nr_free_pages(), n as u64 / 2);
    assert!(!mm.zone_has_free_block(zi, 1));
    (mm, zi, space, pfns)
}

/// Pins each pageblock of the checkerboard with a kernel page (its first free
/// page): no pageblock can be emptied.
pub fn pin_every_pageblock(mm: &mut Mm, zi: usize) {
    let (start, end) = (mm.zones[zi].start_pfn, mm.zones[zi].end_pfn);
    let mut block = start;
    while block < end {
        let p = (block..end)
            .find(|&p| mm.frames[p as usize].list == on::BUDDY)
            .unwrap();
        crate::page_alloc::take_free_block(&mut mm.zones[zi], &mut mm.frames, p);
        mm.frames[p as usize].list = on::KERNEL;
        mm.kernel_pages += 1;
        block += PAGEBLOCK_NR_PAGES as Pfn;
    }
}
