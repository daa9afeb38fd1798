//! The OOM killer (mm/oom_kill.c `out_of_memory`, `select_bad_process`,
//! `oom_evaluate_task`, `oom_badness`, `oom_kill_process`; mm/memcontrol.c
//! `mem_cgroup_get_oom_group`, `mem_cgroup_get_max`; kernel-reference §1.7 step 14).
//!
//! Victims are workloads (a workload's threads share one mm, as a process's do).
//! Badness is resident anon pages, swap entries and page-table pages (a file
//! mapping's resident pages, MM_FILEPAGES, are not counted), moved by the process's
//! `oom_score_adj`.

use super::page::{pg, pte};
use super::{Mm, OomEvent, Out};
use crate::trace::Tp;
use crate::vm_event_item::Ev;

/// `OOM_SCORE_ADJ_MIN`: a process the OOM killer never selects, and that
/// memory.oom.group leaves alive.
pub const OOM_SCORE_ADJ_MIN: i32 = -1000;

impl Mm {
    /// A workload's resident anon pages and swap entries (`get_mm_rss`'s anon part,
    /// MM_SWAPENTS): what its kill's record shows.
    pub fn oom_rss_swap(&self, workload: usize) -> (u64, u64) {
        self.spaces
            .iter()
            .filter(|s| s.owner == Some(workload) && !s.dead)
            .fold((0, 0), |(r, w), s| (r + s.nr_present, w + s.nr_swap))
    }

    /// `mm_pgtables_bytes(mm) / PAGE_SIZE`: the page-table pages of a workload's
    /// anonymous mappings and of the files it maps.
    fn oom_pgtables(&self, workload: usize) -> u64 {
        self.spaces
            .iter()
            .filter(|s| (s.owner == Some(workload) && !s.dead) || s.mapper == Some(workload))
            .map(|s| s.pt_pages.len() as u64)
            .sum()
    }

    /// `oom_badness(p, totalpages)`: rss + swap entries + page-table pages, plus
    /// `oom_score_adj` × (totalpages / 1000), the division first as the kernel
    /// computes it. None (LONG_MIN) for a process never selected: not yet forked,
    /// gone, or at OOM_SCORE_ADJ_MIN.
    pub fn oom_badness(&self, workload: usize, totalpages: u64) -> Option<i64> {
        let adj = self.workload_oom_score_adj[workload];
        if !self.workload_forked[workload]
            || self.workload_dead[workload]
            || adj == OOM_SCORE_ADJ_MIN
        {
            return None;
        }
        let (rss, swap) = self.oom_rss_swap(workload);
        let points = (rss + swap + self.oom_pgtables(workload)) as i64;
        Some(points + adj as i64 * (totalpages / 1000) as i64)
    }

    /// `constrained_alloc`'s `totalpages`: for a global OOM all RAM and swap; for a
    /// memcg's, `mem_cgroup_get_max`: its memory.max, plus min(memory.swap.max, total
    /// swap) when it may swap (vm.swappiness, on cgroup v2), at least 1.
    fn oom_totalpages(&self, within: Option<usize>) -> u64 {
        let total_swap = self.swap.as_ref().map_or(0, |s| s.nr_slots as u64);
        match within {
            None => self.managed_pages() + total_swap,
            Some(m) => {
                let mut max = self.memcg.counters.c[m].max;
                if self.cfg.swappiness > 0 {
                    max = max.saturating_add(self.memcg.swap.c[m].max.min(total_swap));
                }
                max.max(1)
            }
        }
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

    /// `select_bad_process` (`oom_evaluate_task` for each process: every process
    /// for a global OOM, in creation order; the memcg's subtree in pre-order for a
    /// memcg's, `mem_cgroup_scan_tasks`) then `oom_kill_process`.
    fn select_and_kill(&mut self, within: Option<usize>) -> bool {
        let totalpages = self.oom_totalpages(within);
        let mut chosen: Option<(i64, usize)> = None;
        for w in self.oom_scan_order(within) {
            let Some(points) = self.oom_badness(w, totalpages) else {
                continue;
            };
            // `points < chosen_points` is skipped: an equal score replaces the
            // earlier choice.
            if chosen.is_none_or(|(best, _)| points >= best) {
                chosen = Some((points, w));
            }
        }
        let Some((_, victim)) = chosen else {
            return false;
        };
        self.oom_kill_process(victim, within);
        true
    }

    /// The processes of memcg `within`'s subtree in `mem_cgroup_scan_tasks` order
    /// (memcgs in pre-order, each one's processes in creation order), or every
    /// process.
    fn oom_scan_order(&self, within: Option<usize>) -> Vec<usize> {
        let all = 0..self.workload_dead.len();
        match within {
            None => all.collect(),
            Some(m) => self
                .memcg
                .subtree(m)
                .into_iter()
                .flat_map(|c| all.clone().filter(move |&w| self.workload_memcg[w] == c))
                .collect(),
        }
    }

    /// `mem_cgroup_get_oom_group`: the highest cgroup with memory.oom.group set from
    /// the victim's up to the OOM domain (the memcg whose limit was hit, or the root),
    /// never above it: an OOM inside a cgroup kills nothing outside it, whatever its
    /// ancestors say.
    pub fn mem_cgroup_get_oom_group(&self, victim: usize, within: Option<usize>) -> Option<usize> {
        let domain = within.unwrap_or(0);
        let memcg = self.workload_memcg[victim];
        if memcg == 0 {
            return None;
        }
        let mut group = None;
        for m in self.memcg.ancestors(memcg) {
            if self.memcg.cgs[m].oom_group {
                group = Some(m);
            }
            if m == domain {
                break;
            }
        }
        group
    }

    /// `oom_kill_process`: kill the victim; then, if its OOM group is set, every
    /// process of the group's subtree not at OOM_SCORE_ADJ_MIN
    /// (`mem_cgroup_scan_tasks(oom_group, oom_kill_memcg_member)`), counting
    /// oom_group_kill at the group. The scan reaches the victim too: it has been sent
    /// SIGKILL but not yet run to exit, so `__oom_kill_process` finds its mm and
    /// counts oom_kill for it a second time (its memory is already gone here).
    fn oom_kill_process(&mut self, victim: usize, within: Option<usize>) {
        let group = self.mem_cgroup_get_oom_group(victim, within);
        self.oom_kill_workload(victim);
        let Some(group) = group else {
            return;
        };
        self.memcg.cgs[group].events.oom_group_kill += 1;
        for w in self.oom_scan_order(Some(group)) {
            if self.workload_oom_score_adj[w] == OOM_SCORE_ADJ_MIN {
                continue;
            }
            if w == victim {
                self.count(Ev::OomKill, 1);
                self.memcg.cgs[self.workload_memcg[w]].events.oom_kill += 1;
            } else if self.workload_forked[w] && !self.workload_dead[w] {
                self.oom_kill_workload(w);
            }
        }
    }

    /// `__oom_kill_process` + `exit_mmap`: the victim's anonymous memory is freed at
    /// once (the oom_reaper's effect); pages under writeback are freed when it
    /// completes.
    pub fn oom_kill_workload(&mut self, w: usize) {
        let (rss, swap) = self.oom_rss_swap(w);
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

#[cfg(test)]
mod tests {
    use crate::page_alloc::test_pages::add_pages_of;
    use crate::test_util::{add_process, config, task_mm};
    use crate::SpaceKind;

    #[test]
    fn oom_badness_by_hand() {
        let mut cfg = config(256);
        add_process(&mut cfg, None);
        cfg.workloads[1].oom_score_adj = -1000;
        let mut mm = task_mm(cfg);
        // a: 100 resident pages, 20 of its mapping's entries on swap, 3 page-table
        // pages (the table pages' frames are not read: their count is).
        let (space, _) = add_pages_of(&mut mm, SpaceKind::Anon, 100, 0, Some(0));
        mm.spaces[space as usize].nr_swap = 20;
        mm.spaces[space as usize].pt_pages = vec![1, 2, 3];
        // Not forked yet: no process to select (find_lock_task_mm finds no mm).
        assert_eq!(mm.oom_badness(0, 25_600), None);
        mm.workload_forked = vec![true, true];
        assert_eq!(mm.oom_badness(0, 25_600), Some(123));
        // oom_score_adj counts in (totalpages / 1000) steps: 25600 → 25 pages each.
        mm.workload_oom_score_adj[0] = 40;
        assert_eq!(mm.oom_badness(0, 25_600), Some(123 + 40 * 25));
        mm.workload_oom_score_adj[0] = -10;
        assert_eq!(mm.oom_badness(0, 25_600), Some(123 - 250));
        // Below 1000 pages the adjustment is nothing at all.
        assert_eq!(mm.oom_badness(0, 999), Some(123));
        // OOM_SCORE_ADJ_MIN and a process already gone are never selected.
        assert_eq!(mm.oom_badness(1, 25_600), None);
        mm.workload_dead[0] = true;
        assert_eq!(mm.oom_badness(0, 25_600), None);
    }
}
