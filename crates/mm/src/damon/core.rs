//! The kdamond loop and its regions (mm/damon/core.c, v6.2 with the v6.7+ per-scheme
//! apply interval): sampling, aggregation, `kdamond_merge_regions`,
//! `kdamond_split_regions`, `damon_region_sz_limit`.

use super::damos::Scheme;
use super::{Attrs, KdamondConfig, KdamondNext, Ops, DAMON_MIN_REGION};
use crate::trace::Tp;
use crate::Mm;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// `struct damon_region`: `[start, end)` in bytes (physical for paddr, virtual for
/// vaddr).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    pub start: u64,
    pub end: u64,
    /// The address sampled this interval.
    pub sampling_addr: u64,
    /// Samples of the current aggregation window that found it accessed.
    pub nr_accesses: u32,
    pub last_nr_accesses: u32,
    /// Aggregation intervals its access frequency has stayed about the same.
    pub age: u32,
}

impl Region {
    pub fn new(start: u64, end: u64) -> Region {
        Region {
            start,
            end,
            sampling_addr: start,
            nr_accesses: 0,
            last_nr_accesses: 0,
            age: 0,
        }
    }

    pub fn size(&self) -> u64 {
        self.end - self.start
    }
}

/// `struct damon_target`.
#[derive(Debug, Clone)]
pub struct Target {
    /// vaddr: the workload whose address space this is.
    pub workload: Option<usize>,
    pub regions: Vec<Region>,
}

/// `damon_split_region_at`: cut `regions[i]` `sz` bytes in; the right part inherits
/// age and both counts (v6.7+; v6.2 started the right part's `nr_accesses` at 0,
/// which only differs for a split in the middle of a window, by a quota or filter).
pub fn damon_split_region_at(regions: &mut Vec<Region>, i: usize, sz: u64) {
    let r = regions[i];
    let mut right = Region::new(r.start + sz, r.end);
    right.age = r.age;
    right.last_nr_accesses = r.last_nr_accesses;
    right.nr_accesses = r.nr_accesses;
    regions[i].end = r.start + sz;
    regions.insert(i + 1, right);
}

/// `damon_merge_regions_of`: age each region against its last window, and merge
/// adjacent regions whose counts differ by at most `thres` while the result stays
/// within `sz_limit` (counts and ages size-weighted).
pub fn damon_merge_regions_of(regions: &mut Vec<Region>, thres: u32, sz_limit: u64) {
    let mut out: Vec<Region> = Vec::with_capacity(regions.len());
    for mut r in regions.drain(..) {
        if r.nr_accesses.abs_diff(r.last_nr_accesses) > thres {
            r.age = 0;
        } else {
            r.age += 1;
        }
        if let Some(prev) = out.last_mut() {
            if prev.end == r.start
                && prev.nr_accesses.abs_diff(r.nr_accesses) <= thres
                && prev.size() + r.size() <= sz_limit
            {
                let (sl, sr) = (prev.size(), r.size());
                prev.nr_accesses =
                    ((prev.nr_accesses as u64 * sl + r.nr_accesses as u64 * sr) / (sl + sr)) as u32;
                prev.age = ((prev.age as u64 * sl + r.age as u64 * sr) / (sl + sr)) as u32;
                prev.end = r.end;
                continue;
            }
        }
        out.push(r);
    }
    *regions = out;
}

/// `damon_split_regions_of`: cut each region into `nr_subs` at random points (10 % to
/// 90 % of what is left of its left part, page-aligned).
pub fn damon_split_regions_of(regions: &mut Vec<Region>, nr_subs: u32, rng: &mut Pcg64Mcg) {
    let mut out = Vec::with_capacity(regions.len() * nr_subs as usize);
    for r in regions.drain(..) {
        let mut parts = vec![r];
        let mut sz_region = r.size();
        let mut i = 0;
        while i < nr_subs - 1 && sz_region > 2 * DAMON_MIN_REGION {
            i += 1;
            let sz_sub =
                (rng.gen_range(1..10u64) * sz_region / 10) / DAMON_MIN_REGION * DAMON_MIN_REGION;
            if sz_sub == 0 || sz_sub >= sz_region {
                continue;
            }
            damon_split_region_at(&mut parts, 0, sz_sub);
            sz_region = sz_sub;
        }
        out.extend(parts);
    }
    *regions = out;
}

/// `damon_region_sz_limit`: no merge may leave fewer than `min_nr_regions` regions.
pub fn damon_region_sz_limit(targets: &[Target], min_nr_regions: u64) -> u64 {
    let sz: u64 = targets
        .iter()
        .flat_map(|t| &t.regions)
        .map(Region::size)
        .sum();
    (sz / min_nr_regions.max(1)).max(DAMON_MIN_REGION)
}

/// `damon_va_evenly_split_region` / the paddr initial regions: `[start, end)` in
/// `nr` page-aligned pieces (the last takes the remainder).
pub fn evenly_split(start: u64, end: u64, nr: u64) -> Vec<Region> {
    let pages = (end - start) / DAMON_MIN_REGION;
    let nr = nr.clamp(1, pages.max(1));
    let sz = pages / nr * DAMON_MIN_REGION;
    let mut v: Vec<Region> = (0..nr)
        .map(|i| Region::new(start + i * sz, start + (i + 1) * sz))
        .collect();
    v.last_mut().expect("nr >= 1").end = end;
    v
}

/// `struct damon_ctx`'s running state.
#[derive(Debug, Clone)]
pub struct Ctx {
    pub ops: Ops,
    pub attrs: Attrs,
    pub targets: Vec<Target>,
    pub schemes: Vec<Scheme>,
    rng: Pcg64Mcg,
    /// A prepare_access_checks is waiting for its check.
    sampled: bool,
    last_aggregation_ns: u64,
    last_ops_update_ns: u64,
    sz_limit: u64,
    /// `kdamond_split_regions`'s `last_nr_regions` (a static in the kernel).
    last_nr_regions: u64,
    /// The highest nr_accesses of the last check (`max_nr_accesses`).
    max_nr_accesses: u32,
    /// Aggregations done.
    pub nr_aggregations: u64,
}

impl Ctx {
    pub fn nr_regions(&self) -> u64 {
        self.targets.iter().map(|t| t.regions.len() as u64).sum()
    }
}

impl Mm {
    /// `damon_start` for kdamond `k`: build the context (`ops.init`, the initial
    /// regions) and allocate page_ext's idle bits on first use.
    pub fn kdamond_start(&mut self, k: usize) {
        if self.damon.page_idle.is_none() {
            self.damon.page_idle = Some(super::ops_common::PageIdle::new(self.frames.len()));
        }
        let cfg = self.damon.kdamonds[k].cfg.clone();
        let targets = cfg
            .targets
            .iter()
            .map(|t| Target {
                workload: t.workload,
                regions: match cfg.ops {
                    Ops::Paddr => self.damon_pa_init_regions(t, &cfg.attrs),
                    Ops::Vaddr => self.damon_va_init_regions(t, &cfg.attrs),
                },
            })
            .collect::<Vec<_>>();
        let sz_limit = damon_region_sz_limit(&targets, cfg.attrs.min_nr_regions);
        let seed = self.damon_seed ^ (k as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let now = self.clock();
        let schemes = cfg
            .schemes
            .iter()
            .map(|s| Scheme::new(s.clone(), now))
            .collect();
        self.damon.kdamonds[k].ctx = Some(Ctx {
            ops: cfg.ops,
            attrs: cfg.attrs,
            targets,
            schemes,
            rng: Pcg64Mcg::seed_from_u64(seed),
            sampled: false,
            last_aggregation_ns: now,
            last_ops_update_ns: now,
            sz_limit,
            last_nr_regions: 0,
            max_nr_accesses: 0,
            nr_aggregations: 0,
        });
    }

    /// `damon_stop`: the context goes, its scheme stats stay readable.
    pub fn kdamond_stop(&mut self, k: usize) {
        if let Some(ctx) = self.damon.kdamonds[k].ctx.take() {
            self.damon.kdamonds[k].last_stats = ctx.schemes.iter().map(|s| s.stat).collect();
        }
    }

    /// A running kdamond's configuration changed (sysfs `commit`, DAMON_RECLAIM's
    /// `commit_inputs`): new attributes and schemes, keeping the regions and each
    /// scheme's quota progress and stats.
    pub fn kdamond_commit(&mut self, k: usize, cfg: &KdamondConfig) {
        let now = self.clock();
        let Some(ctx) = self.damon.kdamonds[k].ctx.as_mut() else {
            return;
        };
        ctx.attrs = cfg.attrs;
        let old = std::mem::take(&mut ctx.schemes);
        let mut old = old.into_iter();
        ctx.schemes = cfg
            .schemes
            .iter()
            .map(|c| match old.next() {
                Some(mut s) => {
                    s.cfg = c.clone();
                    s
                }
                None => Scheme::new(c.clone(), now),
            })
            .collect();
        ctx.sz_limit = damon_region_sz_limit(&ctx.targets, ctx.attrs.min_nr_regions);
    }

    /// One wake-up of kdamond `k` (`kdamond_fn`'s loop body): finish the sampling
    /// interval that ended (check accesses; aggregate, apply schemes and split when
    /// the aggregation interval passed), wait for the watermarks, and start the next
    /// sampling interval. Its CPU time accumulates in `cpu_ns` like any kernel work.
    pub fn kdamond_run(&mut self, k: usize) -> KdamondNext {
        let Some(mut ctx) = self.damon.kdamonds[k].ctx.take() else {
            return KdamondNext::Stop;
        };
        let next = self.kdamond_step(k, &mut ctx);
        if next == KdamondNext::Stop {
            self.damon.kdamonds[k].last_stats = ctx.schemes.iter().map(|s| s.stat).collect();
            self.damon.kdamonds[k].cfg.on = false;
        } else {
            self.damon.kdamonds[k].ctx = Some(ctx);
        }
        next
    }

    fn kdamond_step(&mut self, k: usize, ctx: &mut Ctx) -> KdamondNext {
        if ctx.sampled {
            ctx.sampled = false;
            ctx.max_nr_accesses = match ctx.ops {
                Ops::Paddr => self.damon_pa_check_accesses(ctx),
                Ops::Vaddr => self.damon_va_check_accesses(ctx),
            };
            let now = self.clock();
            if now - ctx.last_aggregation_ns >= ctx.attrs.aggr_us * 1000 {
                let window_start_ns = ctx.last_aggregation_ns;
                ctx.last_aggregation_ns = now;
                self.kdamond_aggregate(k, ctx, (window_start_ns, now));
            }
            let now = self.clock();
            if ctx.attrs.ops_update_us > 0
                && now - ctx.last_ops_update_ns >= ctx.attrs.ops_update_us * 1000
            {
                ctx.last_ops_update_ns = now;
                ctx.sz_limit = damon_region_sz_limit(&ctx.targets, ctx.attrs.min_nr_regions);
            }
        }
        // kdamond_need_stop: a vaddr context whose every target exited.
        if ctx.ops == Ops::Vaddr
            && ctx
                .targets
                .iter()
                .all(|t| t.workload.is_none_or(|w| self.workload_dead[w]))
        {
            return KdamondNext::Stop;
        }
        let wait_us = self.kdamond_wait_activation(ctx);
        if wait_us > 0 {
            return KdamondNext::SleepUntil(self.clock() + wait_us * 1000);
        }
        match ctx.ops {
            Ops::Paddr => self.damon_pa_prepare_access_checks(ctx),
            Ops::Vaddr => self.damon_va_prepare_access_checks(ctx),
        }
        ctx.sampled = true;
        KdamondNext::SleepUntil(self.clock() + ctx.attrs.sample_us * 1000)
    }

    /// The aggregation-interval work: merge, apply schemes, reset (tracing
    /// `damon_aggregated`), split.
    fn kdamond_aggregate(&mut self, k: usize, ctx: &mut Ctx, window_ns: (u64, u64)) {
        let thres = ctx.max_nr_accesses / 10;
        for t in &mut ctx.targets {
            damon_merge_regions_of(&mut t.regions, thres, ctx.sz_limit);
        }
        if !ctx.schemes.is_empty() {
            self.kdamond_apply_schemes(ctx);
        }
        if let Some(rec) = self.damon.recording.as_mut() {
            for (ti, t) in ctx.targets.iter().enumerate() {
                let regions = t
                    .regions
                    .iter()
                    .map(|r| super::RecordedRegion {
                        start: r.start,
                        end: r.end,
                        nr_accesses: r.nr_accesses,
                        age: r.age,
                    })
                    .collect();
                let snapshot = super::RecordedSnapshot {
                    start_ns: window_ns.0,
                    end_ns: window_ns.1,
                    regions,
                };
                rec.add(k, ti, ctx.attrs, snapshot);
            }
        }
        for (ti, t) in ctx.targets.iter_mut().enumerate() {
            let nr = t.regions.len();
            for r in &mut t.regions {
                if self.trace.is_some() {
                    let (s, e, n, a) = (r.start, r.end, r.nr_accesses, r.age);
                    trace_event!(
                        self,
                        Tp::DamonAggregated,
                        "target_id={ti} nr_regions={nr} {s}-{e}: {n} {a}"
                    );
                }
                r.last_nr_accesses = r.nr_accesses;
                r.nr_accesses = 0;
            }
        }
        kdamond_split_regions(ctx);
        ctx.nr_aggregations += 1;
    }

    /// `kdamond_wait_activation`: the smallest wait any scheme's watermarks ask for;
    /// 0 when some scheme is active (or there are none).
    fn kdamond_wait_activation(&mut self, ctx: &mut Ctx) -> u64 {
        let metric = self.free_mem_rate();
        let mut min_wait: Option<u64> = None;
        for s in &mut ctx.schemes {
            let w = s.damos_wmark_wait_us(metric);
            min_wait = Some(min_wait.map_or(w, |m| m.min(w)));
        }
        min_wait.unwrap_or(0)
    }

    /// The `free_mem_rate` watermark metric: free pages per thousand of total RAM.
    pub fn free_mem_rate(&self) -> u64 {
        self.nr_free_pages() * 1000 / self.managed_pages().max(1)
    }

    /// The random sampling address of a region (`damon_rand(start, end)`, aligned).
    pub(super) fn damon_rand_addr(rng: &mut Pcg64Mcg, r: &Region) -> u64 {
        let pages = r.size() / DAMON_MIN_REGION;
        r.start + rng.gen_range(0..pages.max(1)) * DAMON_MIN_REGION
    }
}

impl Ctx {
    pub(super) fn rng(&mut self) -> &mut Pcg64Mcg {
        &mut self.rng
    }
}

/// `kdamond_split_regions`: split only while regions are at most half the maximum;
/// in three when the count did not change since last time and is under a third.
fn kdamond_split_regions(ctx: &mut Ctx) {
    let nr_regions = ctx.nr_regions();
    if nr_regions > ctx.attrs.max_nr_regions / 2 {
        return;
    }
    let nr_subs = if ctx.last_nr_regions == nr_regions && nr_regions < ctx.attrs.max_nr_regions / 3
    {
        3
    } else {
        2
    };
    for t in &mut ctx.targets {
        damon_split_regions_of(&mut t.regions, nr_subs, &mut ctx.rng);
    }
    ctx.last_nr_regions = nr_regions;
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: u64 = DAMON_MIN_REGION;

    fn r(start: u64, end: u64, nr: u32, last: u32, age: u32) -> Region {
        Region {
            start: start * P,
            end: end * P,
            sampling_addr: start * P,
            nr_accesses: nr,
            last_nr_accesses: last,
            age,
        }
    }

    #[test]
    fn merge_by_hand() {
        // threshold 2, limit 100 pages.
        // A [0,10) 10 acc (last 10, age 4): stays similar → age 5.
        // B [10,30) 11 acc (last 3, age 7): changed by 8 > 2 → age 0. |10-11| ≤ 2:
        //   merge: nr = (10×10 + 11×20)/30 = 320/30 = 10; age = (5×10 + 0×20)/30 = 1.
        // C [30,40) 0 acc (last 0, age 9): age 10. |10-0| > 2: kept.
        // D [50,60) 0 acc (last 1, age 2): age 3; not adjacent to C (40 ≠ 50): kept.
        // E [60,150) 1 acc (last 1, age 0): age 1; |0-1| ≤ 2 but 10 + 90 = 100 ≤ 100:
        //   merge: nr = (0×10 + 1×90)/100 = 0; age = (3×10 + 1×90)/100 = 1.
        let mut v = vec![
            r(0, 10, 10, 10, 4),
            r(10, 30, 11, 3, 7),
            r(30, 40, 0, 0, 9),
            r(50, 60, 0, 1, 2),
            r(60, 150, 1, 1, 0),
        ];
        damon_merge_regions_of(&mut v, 2, 100 * P);
        let got: Vec<_> = v
            .iter()
            .map(|x| (x.start / P, x.end / P, x.nr_accesses, x.age))
            .collect();
        assert_eq!(got, vec![(0, 30, 10, 1), (30, 40, 0, 10), (50, 150, 0, 1)]);
        // With a 99-page limit, D and E stay apart.
        let mut v = vec![r(50, 60, 0, 1, 2), r(60, 150, 1, 1, 0)];
        damon_merge_regions_of(&mut v, 2, 99 * P);
        assert_eq!(v.len(), 2);
    }

    #[test]
    fn split_by_hand() {
        // The random cut is ALIGN_DOWN(k × size / 10) for k in 1..=9, so a 10-page
        // region splits at a whole page k; with three sub-regions the left part is
        // cut again. Replay the same generator to know each k.
        let mut rng = Pcg64Mcg::seed_from_u64(7);
        let mut replay = rng.clone();
        let mut v = vec![r(0, 10, 0, 4, 3), r(10, 12, 0, 0, 0)];
        damon_split_regions_of(&mut v, 3, &mut rng);
        let k1 = replay.gen_range(1..10u64);
        let mut want = vec![];
        // The left part is cut again only while it is over two pages.
        let cut2 = if k1 > 2 {
            replay.gen_range(1..10u64) * k1 / 10
        } else {
            0
        };
        if cut2 == 0 || cut2 >= k1 {
            want.push((0, k1));
        } else {
            want.push((0, cut2));
            want.push((cut2, k1));
        }
        want.push((k1, 10));
        // The 2-page region is not more than 2 × DAMON_MIN_REGION: left whole.
        want.push((10, 12));
        let got: Vec<_> = v.iter().map(|x| (x.start / P, x.end / P)).collect();
        assert_eq!(got, want);
        // The new parts inherit age and the last window's count.
        assert!(v[..v.len() - 1]
            .iter()
            .all(|x| x.age == 3 && x.last_nr_accesses == 4));
        // And the regions still tile [0, 12) in order.
        assert!(v.windows(2).all(|w| w[0].end == w[1].start));
    }

    #[test]
    fn size_limit_and_even_split() {
        let t = Target {
            workload: None,
            regions: vec![r(0, 100, 0, 0, 0), r(200, 230, 0, 0, 0)],
        };
        // 130 pages / 10 = 13 pages; at least one page.
        assert_eq!(damon_region_sz_limit(std::slice::from_ref(&t), 10), 13 * P);
        assert_eq!(damon_region_sz_limit(std::slice::from_ref(&t), 1000), P);
        let v = evenly_split(0, 10 * P, 3);
        let got: Vec<_> = v.iter().map(|x| (x.start / P, x.end / P)).collect();
        assert_eq!(got, vec![(0, 3), (3, 6), (6, 10)]);
    }
}
