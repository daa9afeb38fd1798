//! Helpers the mm unit tests share: an `Mm` with a task running, pages put on an
//! LRU by hand.

use super::page::{on, pg, pte, Pfn};
use super::page_alloc::GFP_HIGHUSER_MOVABLE;
use super::zone::{PAGEBLOCK_NR_PAGES, ZONE_DMA32};
use super::{Current, Mm, SpaceKind};

/// The `Mm` of scenario `text`, with one task created and running (task 0).
pub fn task_mm(text: &str) -> Mm {
    let sc = crate::scenario::parse_str(text, "t.toml", &[]).unwrap();
    let mut mm = Mm::new(crate::scenario::mm_config::mm_config(&sc));
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
    let (mm, zi, _, _) = checkerboard_with("");
    (mm, zi)
}

/// [`checkerboard`] with more scenario text (a `[kernel]` table); also returns the
/// file space and its pages (index order).
pub fn checkerboard_with(extra: &str) -> (Mm, usize, u32, Vec<Pfn>) {
    let mut mm = task_mm(&format!(
        "[machine]\nmemory = \"256M\"\n{extra}\
         [[workload]]\nname = \"w\"\nkind = \"anon\"\nsize = \"4K\"\n"
    ));
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
        crate::mm::page_alloc::take_free_block(&mut mm.zones[zi], &mut mm.frames, p);
        mm.frames[p as usize].list = on::KERNEL;
        mm.kernel_pages += 1;
        block += PAGEBLOCK_NR_PAGES as Pfn;
    }
}
