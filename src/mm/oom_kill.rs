//! The OOM killer (mm/oom_kill.c `out_of_memory`, `select_bad_process`,
//! `oom_badness`; kernel-reference §1.7 step 14).
//!
//! Victims are workloads (a workload's threads share one mm, as a process's do).
//! Badness is resident anon pages plus swap entries; page tables are not modelled.

use super::page::{pg, pte};
use super::{Mm, OomEvent, Out};
use crate::stats::trace::Tp;
use crate::stats::vmstat::Ev;

impl Mm {
    /// `oom_badness` of a workload: RSS + swap entries over its address spaces.
    pub fn oom_badness(&self, workload: usize) -> (u64, u64) {
        self.spaces
            .iter()
            .filter(|s| s.owner == Some(workload) && !s.dead)
            .fold((0, 0), |(r, w), s| (r + s.nr_present, w + s.nr_swap))
    }

    /// `out_of_memory`: kill the workload with the highest badness. Returns whether
    /// something was killed (progress).
    pub fn out_of_memory(&mut self) -> bool {
        self.select_and_kill(None)
    }

    /// `mem_cgroup_out_of_memory`: the same, among the workloads of a memcg's subtree.
    pub fn mem_cgroup_out_of_memory(&mut self, memcg: usize) -> bool {
        self.memcg.cgs[memcg].events.oom += 1;
        self.select_and_kill(Some(memcg))
    }

    fn select_and_kill(&mut self, within: Option<usize>) -> bool {
        let allowed = within.map(|m| self.memcg.subtree(m));
        let mut chosen: Option<(u64, usize)> = None;
        for w in 0..self.workload_dead.len() {
            if self.workload_dead[w] {
                continue;
            }
            if allowed
                .as_ref()
                .is_some_and(|a| !a.contains(&self.workload_memcg[w]))
            {
                continue;
            }
            let (rss, swap) = self.oom_badness(w);
            let points = rss + swap;
            if points == 0 {
                continue;
            }
            // The kernel walks tasks in pid order and a tie replaces the earlier choice.
            if chosen.is_none_or(|(best, _)| points >= best) {
                chosen = Some((points, w));
            }
        }
        let Some((_, victim)) = chosen else {
            return false;
        };
        self.oom_kill_workload(victim);
        true
    }

    /// `oom_kill_process` + `exit_mmap`: the victim's anonymous memory is freed at once
    /// (the oom_reaper's effect); pages under writeback are freed when it completes.
    pub fn oom_kill_workload(&mut self, w: usize) {
        let (rss, swap) = self.oom_badness(w);
        self.count(Ev::OomKill, 1);
        self.oom_events.push(OomEvent {
            time_ns: self.now,
            workload: w,
            rss_pages: rss,
            swap_pages: swap,
        });
        let memcg = self.workload_memcg[w];
        self.memcg.cgs[memcg].events.oom_kill += 1;
        let pid = self.workload_task.get(w).map_or(0, |t| t + 1);
        trace_event!(self, Tp::MarkVictim, "pid={pid}");
        self.out.push(Out::OomKill { workload: w });
        self.exit_workload(w);
    }

    /// `zap_page_range` over a whole anonymous mapping (munmap, exit): every page and
    /// swap slot it holds is freed and the page table is empty again. Pages under
    /// writeback are freed when the write completes. A VM_LOCKED mapping's pages are
    /// munlocked as they are unmapped (`folio_remove_rmap_ptes` →
    /// `munlock_vma_folio`), back to an evictable list before they are freed.
    pub fn zap_space(&mut self, si: u32) {
        let entries = self.spaces[si as usize].take_table();
        let locked = self.spaces[si as usize].vm_locked;
        let mut freed = 0;
        for &e in &entries {
            match pte::kind(e) {
                pte::PRESENT => {
                    if locked {
                        self.munlock_folio(pte::pfn(e));
                    }
                    self.free_anon_folio(pte::pfn(e))
                }
                pte::SWAP => {
                    let slot = pte::slot(e);
                    match self.swap.as_ref().and_then(|s| s.lookup_swap_cache(slot)) {
                        Some(pfn) => self.free_anon_folio(pfn),
                        None => self.swap_free(slot),
                    }
                }
                _ => continue,
            }
            freed += 1;
        }
        self.charge(freed * self.cfg.costs.reclaim_page_ns);
        // free_pgtables.
        for pfn in std::mem::take(&mut self.spaces[si as usize].pt_pages) {
            self.pte_free(si, pfn);
        }
        let s = &mut self.spaces[si as usize];
        s.nr_present = 0;
        s.nr_swap = 0;
    }

    /// Frees an anon page of an exiting mm, with its swap slot.
    fn free_anon_folio(&mut self, pfn: super::page::Pfn) {
        let f = self.frames[pfn as usize];
        if f.test(pg::WRITEBACK) {
            self.frames[pfn as usize].set(pg::ORPHAN);
            return;
        }
        self.lruvec_del_folio(pfn);
        self.clear_mlock_on_free(pfn);
        if f.test(pg::SWAPCACHE) {
            self.swap_free(f.swap);
        }
        self.free_pages(pfn, 0);
    }

    pub fn workload_killed(&self, w: usize) -> bool {
        self.workload_dead[w]
    }
}
