//! `masim`: DAMON's evaluation workload, run from a masim configuration
//! ([`crate::scenario::masim`]). Each memory region is an anonymous mapping of the
//! workload's; each phase runs for its time, picking an access line by probability
//! and doing a batch of [`MASIM_BATCH`] accesses as it says.

use super::pattern::{Draw, Sampler};
use super::{
    after_hits, ahead_key, fault_in, hit_limit, hit_loop_ahead, resolve_item, skip, Ctx, Picker,
    Step, Thread, WorkloadStats,
};
use crate::mm::memory::FaultResult;
use crate::mm::{Mm, SpaceKind};
use crate::scenario::masim::{MasimConfig, RwMode, MASIM_BATCH};
use crate::scenario::Workload as WorkloadCfg;
use rand::RngCore;

pub struct Masim {
    cfg: MasimConfig,
    /// The space of each region.
    spaces: Vec<u32>,
}

impl Masim {
    pub fn new(idx: usize, cfg: &WorkloadCfg, mm: &mut Mm) -> Masim {
        let m = cfg.masim().cloned().expect("loaded with the scenario");
        let spaces = m
            .regions
            .iter()
            .map(|r| {
                let name = format!("{}/{}", cfg.name, r.name);
                mm.add_space(SpaceKind::Anon, name, r.size.div_ceil(4096), Some(idx))
            })
            .collect();
        Masim { cfg: m, spaces }
    }

    pub(crate) fn op(
        &mut self,
        stats: &mut WorkloadStats,
        stats_from: u64,
        t: &mut Thread,
        cx: &mut Ctx,
        origin: u64,
    ) -> Step {
        loop {
            if t.progress == 0 {
                // Entering phase t.phase; `phase_left` holds its end (virtual ns).
                let Some(p) = self.cfg.phases.get(t.phase) else {
                    return Step::Finished;
                };
                t.phase_left = cx.clock + p.time_ms * 1_000_000;
                t.progress = 1;
                t.masim_left = 0;
                t.masim_offsets = vec![0; p.accesses.len()];
            }
            if cx.retry.is_none() && cx.clock >= t.phase_left {
                t.phase += 1;
                t.progress = 0;
                continue;
            }
            break;
        }
        let phase = &self.cfg.phases[t.phase];
        if let Some((vpn, write)) = cx.retry {
            let space = self.spaces[phase.accesses[t.masim_pattern].region];
            let s = fault_in(cx, t, space, vpn as u32, write, origin);
            if matches!(s, Step::Op(FaultResult::Done, _)) {
                t.masim_left = t.masim_left.saturating_sub(1);
            }
            return s;
        }
        if t.masim_left == 0 {
            // rndint() % total_probability picks the line whose range holds it.
            let total: u64 = phase.accesses.iter().map(|a| a.probability).sum();
            let mut r = t.rng.next_u64() % total;
            t.masim_pattern = phase
                .accesses
                .iter()
                .position(|a| {
                    let hit = r < a.probability;
                    r = r.saturating_sub(a.probability);
                    hit
                })
                .expect("r < total");
            t.masim_left = MASIM_BATCH;
        }
        let acc = phase.accesses[t.masim_pattern].clone();
        let region_bytes = self.cfg.regions[acc.region].size;
        let space = self.spaces[acc.region];
        let access_ns = cx.mm.cfg.costs.access_ns;
        let to_phase_end = t.phase_left.saturating_sub(cx.clock) / access_ns.max(1);
        let limit = hit_limit(cx, access_ns, t.masim_left.min(to_phase_end.max(1)));
        let write_u32 = match acc.rw {
            RwMode::ReadOnly => 0,
            RwMode::WriteOnly | RwMode::ReadWrite => u32::MAX,
        };
        let traps = cx.mm.spaces[space as usize].traps();
        if acc.random && cx.skip.is_some() && cx.unpaced && !traps {
            // Skipping: the line's pages as a sampler the skipping loop handles.
            let sampler = random_line_sampler(region_bytes);
            let (hits, miss) = super::run_hit_loop(cx, t, &sampler, space, 0, limit, write_u32);
            t.masim_left = t.masim_left.saturating_sub(hits);
            let s = after_hits(
                stats, stats_from, cx, t, space, hits, miss, access_ns, origin,
            );
            if miss.is_some() && matches!(s, Step::Op(FaultResult::Done, _)) {
                t.masim_left = t.masim_left.saturating_sub(1);
            }
            return s;
        }
        let (cpu_node, nr_nodes) = (cx.mm.numa_node_id(), cx.mm.nr_nodes());
        let mut slow = super::Slow::new(&cx.mm.access_extra, cpu_node, nr_nodes);
        let seen = |(e, _): super::Seen| slow.hit(e);
        let entries = cx.mm.spaces[space as usize].hw_table_mut();
        let (hits, miss) = if acc.random {
            let pick =
                |r: &mut rand_pcg::Pcg64Mcg| Draw::Item((r.next_u64() % region_bytes) / 4096);
            let key = ahead_key(
                Picker::MasimRandom,
                [region_bytes, 0, 0],
                0,
                space,
                write_u32,
            );
            let (rng, ahead) = (&mut t.rng, &mut t.ahead);
            hit_loop_ahead(
                entries,
                limit,
                write_u32,
                rng,
                ahead,
                key,
                pick,
                |_| (),
                resolve_item,
                seen,
            )
        } else if acc.stride == 4096 && cx.skip.is_some() && cx.unpaced && !traps {
            // A page-sized stride is a sequential sweep of the region's n pages: the
            // page after k is k + 1, and after the last, 0 (the offset wraps once the
            // next would pass the region's end). Skipping, its settled runs pass
            // without a look; reads or writes only, nothing is drawn, so it is `each`
            // access for access.
            let s = &mut cx.mm.spaces[space as usize];
            let n = region_bytes.div_ceil(4096);
            let offset = &mut t.masim_offsets[t.masim_pattern];
            let mut cursor = (*offset / 4096 + 1) % n;
            let (rng, state) = (&mut t.rng, (&mut t.skip, &mut slow));
            let r =
                skip::sequential_hits(s, limit, write_u32, rng, &mut cursor, state, (space, 0, n));
            // The offset of the last page accessed (or issued: a miss).
            *offset = (cursor + n - 1) % n * 4096;
            r
        } else if acc.stride < 4096 && cx.skip.is_some() && cx.unpaced && !traps {
            // A stride within a page: after an access, the line's next ones in the
            // same page find it as that access left it (nothing runs between them),
            // so each page's run is one access and its repeats in closed form.
            let offset = &mut t.masim_offsets[t.masim_pattern];
            let line = (acc.stride, region_bytes, write_u32 == u32::MAX);
            stride_hits(entries, limit, offset, line, &mut slow)
        } else if acc.stride > 4096 && cx.skip.is_some() && cx.unpaced && !traps {
            // A stride past a page: each access another page, the line's pages the
            // same every pass. Its settled accesses are counted without a change,
            // and page tables whose line entries were seen settled pass without a
            // look; nothing is drawn, so it is `each` access for access.
            let s = &mut cx.mm.spaces[space as usize];
            let offset = &mut t.masim_offsets[t.masim_pattern];
            let (rng, state) = (&mut t.rng, (&mut t.skip, &mut slow));
            let line = (space, region_bytes, acc.stride);
            skip::strided_hits(s, limit, write_u32, rng, offset, state, line)
        } else {
            let offset = &mut t.masim_offsets[t.masim_pattern];
            let stride = acc.stride;
            let pick = |_: &mut rand_pcg::Pcg64Mcg| {
                *offset += stride;
                if *offset >= region_bytes {
                    *offset = 0;
                }
                *offset / 4096
            };
            super::hit_loop_seen(entries, limit, write_u32, &mut t.rng, pick, seen)
        };
        cx.slow_ns += slow.ns;
        t.masim_left = t.masim_left.saturating_sub(hits);
        let s = after_hits(
            stats, stats_from, cx, t, space, hits, miss, access_ns, origin,
        );
        if miss.is_some() && matches!(s, Step::Op(FaultResult::Done, _)) {
            t.masim_left = t.masim_left.saturating_sub(1);
        }
        s
    }
}

/// A sequential line of `stride` bytes (below a page) over `region_bytes` from the
/// offset last accessed, `each`'s per-access loop for up to `limit` accesses, made a
/// page's run at a time: the run's first access as the loop makes it (a miss ends the
/// call, its offset issued), the rest of the run counted as hits without a look (the
/// first made the entry young, and dirty for writes, and its PMD entry young; a slow
/// node's cost is per access). `offset` ends at the last offset accessed or issued.
fn stride_hits(
    (entries, pmd_young): (&mut [crate::mm::page::Pte], &mut [bool]),
    limit: u64,
    offset: &mut u64,
    (stride, region_bytes, write): (u64, u64, bool),
    slow: &mut super::Slow,
) -> (u64, Option<(u32, bool)>) {
    let mut hits = 0u64;
    while hits < limit {
        let mut o = *offset + stride;
        if o >= region_bytes {
            o = 0;
        }
        *offset = o;
        let vpn = (o / 4096) as usize;
        let e = entries[vpn];
        if !crate::mm::page::pte::hw_hit(e) {
            return (hits, Some((vpn as u32, write)));
        }
        super::hit_entry(entries, pmd_young, vpn, e, write);
        // The line's offsets from o on that stay in this page and the region.
        let page_end_bytes = ((vpn as u64 + 1) * 4096).min(region_bytes);
        let run = ((page_end_bytes - 1 - o) / stride + 1).min(limit - hits);
        slow.hit_n(e, run);
        hits += run;
        *offset = o + (run - 1) * stride;
    }
    (hits, None)
}

/// A random access line's pages as a [`Sampler`]: masim draws a byte offset uniform
/// over the region (`rndint() % size`) and touches its page, so every whole page is
/// equally likely and a last partial page less so. A region of whole pages is
/// `Uniform`; otherwise the whole pages are a class taking their bytes' share of the
/// draws and the partial page the other (`HotCold` without a phase change; the share
/// in 2^-32 steps, as the hot/cold sampler keeps it).
pub(super) fn random_line_sampler(region_bytes: u64) -> Sampler {
    let (full, rest) = (region_bytes / 4096, region_bytes % 4096);
    if rest == 0 || full == 0 {
        return Sampler::Uniform {
            n: region_bytes.div_ceil(4096),
        };
    }
    let share = (full * 4096) as u128 * (1u128 << 32) / region_bytes as u128;
    Sampler::HotCold {
        n: full + 1,
        hot_n: full,
        hot_prob_u32: share.min(u32::MAX as u128) as u32,
        phase_change_ns: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `stride_hits` against the per-access loop `each` runs (`hit_loop_seen` with
    /// masim's offset step): the same hits, miss, offset, entries, PMD bits and slow
    /// cost, over strides that divide a page and that do not, a region with a partial
    /// last page, missing and slow entries and limits that end runs part-way.
    #[test]
    fn a_short_stride_line_runs_as_the_per_access_loop() {
        use crate::mm::page::{pte, Pte};
        use rand::SeedableRng;
        let region_bytes: u64 = 40 * 4096 + 1000;
        let pages = region_bytes.div_ceil(4096) as usize;
        let extra = [0u64, 70];
        for stride in [1u64, 64, 1000, 3000, 4095] {
            for write in [false, true] {
                for seed in 0..6u64 {
                    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
                    let mut table: Vec<Pte> = (0..pages)
                        .map(|i| match rng.next_u64() % 8 {
                            0 => 0,
                            1 => pte::present(i as u32) | pte::SLOW | 1 << pte::NID_SHIFT,
                            2 => pte::present(i as u32) | pte::YOUNG,
                            _ => pte::present(i as u32),
                        })
                        .collect();
                    let mut pmd = vec![false; 1];
                    let (mut table2, mut pmd2) = (table.clone(), pmd.clone());
                    let mut off = rng.next_u64() % region_bytes;
                    let mut off2 = off;
                    for _ in 0..20 {
                        let limit = 1 + rng.next_u64() % 400;
                        let mut slow = super::super::Slow::new(&extra, 0, 2);
                        let line = (stride, region_bytes, write);
                        let got =
                            stride_hits((&mut table, &mut pmd), limit, &mut off, line, &mut slow);
                        let mut slow2 = super::super::Slow::new(&extra, 0, 2);
                        let pick = |_: &mut rand_pcg::Pcg64Mcg| {
                            off2 += stride;
                            if off2 >= region_bytes {
                                off2 = 0;
                            }
                            off2 / 4096
                        };
                        let seen = |(e, _): super::super::Seen| slow2.hit(e);
                        let w = if write { u32::MAX } else { 0 };
                        let want = super::super::hit_loop_seen(
                            (&mut table2, &mut pmd2),
                            limit,
                            w,
                            &mut rng.clone(),
                            pick,
                            seen,
                        );
                        assert_eq!(got, want, "stride {stride} write {write} seed {seed}");
                        assert_eq!((off, slow.ns), (off2, slow2.ns));
                        assert_eq!((&table, &pmd), (&table2, &pmd2));
                        if let Some((vpn, _)) = got.1 {
                            // The fault maps it, as the retried access would.
                            table[vpn as usize] = pte::present(vpn);
                            table2[vpn as usize] = pte::present(vpn);
                        }
                    }
                }
            }
        }
    }

    /// By hand: 8192 bytes are two whole pages; 10000 are two whole pages (8192 bytes
    /// of the draws, 0.8192 of them) and a partial one (1808 bytes).
    #[test]
    fn random_lines_weigh_a_partial_page_by_its_bytes() {
        assert!(matches!(
            random_line_sampler(8192),
            Sampler::Uniform { n: 2 }
        ));
        assert!(matches!(
            random_line_sampler(100),
            Sampler::Uniform { n: 1 }
        ));
        let Sampler::HotCold {
            n,
            hot_n,
            hot_prob_u32,
            phase_change_ns,
        } = random_line_sampler(10_000)
        else {
            panic!("two classes");
        };
        assert_eq!((n, hot_n, phase_change_ns), (3, 2, None));
        assert_eq!(hot_prob_u32, (0.8192 * 4_294_967_296.0) as u32);
    }
}
