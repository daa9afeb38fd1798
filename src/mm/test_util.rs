//! Helpers the mm unit tests share: an `Mm` with a task running, pages put on an
//! LRU by hand.

use super::page::{pg, pte, Pfn};
use super::page_alloc::GFP_HIGHUSER_MOVABLE;
use super::{Current, Mm, SpaceKind};

/// The `Mm` of scenario `text`, with one task created and running (task 0).
pub fn task_mm(text: &str) -> Mm {
    let sc = crate::scenario::parse_str(text, "t.toml", &[]).unwrap();
    let mut mm = Mm::new(&sc);
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
