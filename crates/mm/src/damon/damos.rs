//! DAMOS: applying schemes to regions (mm/damon/core.c's scheme half, v6.2 with the
//! quota goals of v6.8–v6.9 and the core address filter of v6.6):
//! `kdamond_apply_schemes`, `damos_set_effective_quota`,
//! `damon_feed_loop_next_input`, `damos_skip_charged_region`, `damos_wmark_wait_us`,
//! `damos_apply_scheme`.

use super::core::{damon_split_region_at, Ctx, Region};
use super::ops_common::{damon_cold_score, damon_hot_score, DAMOS_MAX_SCORE};
use super::DAMON_MIN_REGION;
use super::{Action, FilterKind, GoalMetric, Ops, Quota, SchemeConfig, WmarkMetric};
use crate::Mm;

/// Per-scheme statistics (`struct damos_stat`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SchemeStat {
    pub nr_tried: u64,
    pub sz_tried: u64,
    pub nr_applied: u64,
    pub sz_applied: u64,
    pub qt_exceeds: u64,
}

/// `struct damos_quota`'s private state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QuotaState {
    /// Effective size quota of this window (bytes); 0 = none.
    pub esz: u64,
    pub charged_sz: u64,
    /// Window start (ns).
    pub charged_from_ns: u64,
    /// Resume point: the target and the address after the last charged region.
    pub charge_target_from: Option<usize>,
    pub charge_addr_from: u64,
    pub total_charged_sz: u64,
    pub total_charged_ns: u64,
    /// The goal feedback loop's input, in 1/10000 bytes.
    pub esz_bp: u64,
    pub min_score: u32,
    /// The PSI total at the last goal update (`last_psi_total`), per goal.
    pub last_psi_total: Vec<u64>,
}

/// A scheme as it runs: its configuration, quota state, activation and stats.
#[derive(Debug, Clone)]
pub struct Scheme {
    pub cfg: SchemeConfig,
    pub quota: QuotaState,
    /// `wmarks.activated`.
    pub activated: bool,
    pub stat: SchemeStat,
    /// When the scheme was last applied (for `apply_interval_us`).
    last_applied_ns: u64,
}

/// `damon_feed_loop_next_input`: a proportional step of the quota toward the goal
/// (score 10000 = on target); never below 10000.
pub fn damon_feed_loop_next_input(last_input: u64, score: u64) -> u64 {
    const GOAL: u64 = 10_000;
    const MIN_INPUT: u64 = 10_000;
    let diff = GOAL.max(score) - GOAL.min(score);
    let diff_bp = diff * 10_000 / GOAL;
    let compensation = (last_input as u128 * diff_bp as u128 / 10_000) as u64;
    if GOAL > score {
        return last_input.saturating_add(compensation);
    }
    if last_input > compensation + MIN_INPUT {
        return last_input - compensation;
    }
    MIN_INPUT
}

impl Scheme {
    pub fn new(cfg: SchemeConfig, now_ns: u64) -> Scheme {
        let goals = cfg.quota.goals.len();
        let mut quota = QuotaState {
            charged_from_ns: now_ns,
            last_psi_total: vec![0; goals],
            ..QuotaState::default()
        };
        // damos_new_scheme: the first window's quota before any throughput is known.
        set_effective_quota(&cfg.quota, &mut quota);
        Scheme {
            cfg,
            quota,
            activated: false,
            stat: SchemeStat::default(),
            last_applied_ns: now_ns,
        }
    }

    /// `damos_wmark_wait_us`: update activation from the metric (per thousand free);
    /// the time to wait before checking again, 0 if active.
    pub fn damos_wmark_wait_us(&mut self, metric: u64) -> u64 {
        let w = &self.cfg.wmarks;
        if w.metric == WmarkMetric::None {
            self.activated = true;
            return 0;
        }
        if metric > w.high || w.low > metric {
            self.activated = false;
            return w.interval_us;
        }
        if w.high >= metric && metric >= w.mid && !self.activated {
            return w.interval_us;
        }
        self.activated = true;
        0
    }

    /// Does the scheme have a quota to enforce (time, size or goals)?
    fn has_quota(&self) -> bool {
        let q = &self.cfg.quota;
        q.ms > 0 || q.sz > 0 || !q.goals.is_empty()
    }
}

/// `damos_set_effective_quota`: this window's size quota from the time quota (at the
/// throughput measured so far), the goals' feedback, and the size quota.
pub fn set_effective_quota(q: &Quota, st: &mut QuotaState) {
    if q.ms == 0 && q.goals.is_empty() {
        st.esz = q.sz;
        return;
    }
    let mut esz = u64::MAX;
    if !q.goals.is_empty() {
        let score = q
            .goals
            .iter()
            .map(|g| g.current_value.saturating_mul(10_000) / g.target_value.max(1))
            .max()
            .unwrap_or(0);
        st.esz_bp = damon_feed_loop_next_input(st.esz_bp.max(10_000), score);
        esz = st.esz_bp / 10_000;
    }
    if q.ms > 0 {
        // Bytes per ms.
        let throughput = if st.total_charged_ns > 0 {
            (st.total_charged_sz as u128 * 1_000_000 / st.total_charged_ns as u128) as u64
        } else {
            4096 * 1024
        };
        esz = esz.min(throughput.saturating_mul(q.ms));
    }
    if q.sz > 0 && q.sz < esz {
        esz = q.sz;
    }
    st.esz = esz;
}

/// `__damos_valid_target`: the region matches the access pattern.
fn pattern_matches(s: &Scheme, r: &Region) -> bool {
    let p = &s.cfg.pattern;
    let sz = r.size();
    p.min_sz <= sz
        && sz <= p.max_sz
        && p.min_nr_accesses <= r.nr_accesses
        && r.nr_accesses <= p.max_nr_accesses
        && p.min_age <= r.age
        && r.age <= p.max_age
}

impl Mm {
    /// `get_scheme_score` of the operation set: paddr scores pageout, lru_deprio and
    /// migrate_cold by coldness, lru_prio and migrate_hot by hotness; vaddr scores
    /// pageout and cold by coldness.
    fn damos_score(ctx: &Ctx, r: &Region, s: &Scheme) -> u32 {
        match s.cfg.action {
            Action::Pageout | Action::Cold | Action::LruDeprio | Action::MigrateCold => {
                damon_cold_score(&ctx.attrs, r, &s.cfg.quota)
            }
            Action::LruPrio | Action::MigrateHot => damon_hot_score(&ctx.attrs, r, &s.cfg.quota),
            Action::Stat => DAMOS_MAX_SCORE,
        }
    }

    /// The quota goals' current values: PSI accumulated since the last update.
    fn damos_update_goals(&mut self, s: &mut Scheme) {
        let psi = self.damon.psi_some_total_us;
        for (i, g) in s.cfg.quota.goals.iter_mut().enumerate() {
            if g.metric == GoalMetric::SomeMemPsiUs {
                g.current_value = psi - s.quota.last_psi_total[i].min(psi);
                s.quota.last_psi_total[i] = psi;
            }
        }
    }

    /// `kdamond_apply_schemes`: for each active scheme with a quota, roll its charge
    /// window and fill the score histogram to find the lowest score that fits the
    /// quota; then apply every scheme to every region.
    pub(super) fn kdamond_apply_schemes(&mut self, ctx: &mut Ctx) {
        let now = self.clock();
        let mut due = vec![false; ctx.schemes.len()];
        for (si, s) in ctx.schemes.iter_mut().enumerate() {
            let interval_ns = s.cfg.apply_interval_us * 1000;
            due[si] = interval_ns == 0 || now - s.last_applied_ns >= interval_ns;
            if due[si] {
                s.last_applied_ns = now;
            }
        }
        for (si, &is_due) in due.iter().enumerate() {
            if !is_due || !ctx.schemes[si].activated || !ctx.schemes[si].has_quota() {
                continue;
            }
            let mut s = ctx.schemes[si].clone();
            // A new charge window starts.
            if now >= s.quota.charged_from_ns + s.cfg.quota.reset_interval_ms * 1_000_000 {
                if s.quota.esz > 0 && s.quota.charged_sz >= s.quota.esz {
                    s.stat.qt_exceeds += 1;
                }
                s.quota.total_charged_sz += s.quota.charged_sz;
                s.quota.charged_from_ns = now;
                s.quota.charged_sz = 0;
                self.damos_update_goals(&mut s);
                set_effective_quota(&s.cfg.quota, &mut s.quota);
            }
            // Prioritisation: the histogram of scores, weighted by size.
            let mut histogram = [0u64; DAMOS_MAX_SCORE as usize + 1];
            let mut max_score = 0;
            for t in &ctx.targets {
                for r in &t.regions {
                    if !pattern_matches(&s, r) {
                        continue;
                    }
                    let score = Self::damos_score(ctx, r, &s);
                    histogram[score as usize] += r.size();
                    max_score = max_score.max(score);
                }
            }
            s.quota.min_score = min_score_for(&histogram, max_score, s.quota.esz);
            ctx.schemes[si] = s;
        }
        for ti in 0..ctx.targets.len() {
            let mut ri = 0;
            while ri < ctx.targets[ti].regions.len() {
                for (si, &is_due) in due.iter().enumerate() {
                    if is_due {
                        self.damon_do_apply_scheme(ctx, ti, &mut ri, si);
                    }
                }
                ri += 1;
            }
        }
    }

    /// One scheme on region `*ri` of target `ti` (`damon_do_apply_schemes`' body).
    fn damon_do_apply_scheme(&mut self, ctx: &mut Ctx, ti: usize, ri: &mut usize, si: usize) {
        let s = &ctx.schemes[si];
        if !s.activated {
            return;
        }
        if s.quota.esz > 0 && s.quota.charged_sz >= s.quota.esz {
            return;
        }
        if damos_skip_charged_region(ctx, ti, ri, si) {
            return;
        }
        let s = &ctx.schemes[si];
        let r = ctx.targets[ti].regions[*ri];
        if !pattern_matches(s, &r) {
            return;
        }
        if s.quota.esz > 0 && Self::damos_score(ctx, &r, s) < s.quota.min_score {
            return;
        }
        self.damos_apply_scheme(ctx, ti, *ri, si);
    }

    /// `damos_apply_scheme`: trim the region to what is left of the quota, apply the
    /// action (its CPU time charged to the quota), advance the charge and the resume
    /// point, reset the region's age, count.
    fn damos_apply_scheme(&mut self, ctx: &mut Ctx, ti: usize, ri: usize, si: usize) {
        let esz = ctx.schemes[si].quota.esz;
        let charged = ctx.schemes[si].quota.charged_sz;
        let sz = ctx.targets[ti].regions[ri].size();
        if esz > 0 && charged + sz > esz {
            let left = (esz - charged) / DAMON_MIN_REGION * DAMON_MIN_REGION;
            if left == 0 {
                damos_update_stat(&mut ctx.schemes[si].stat, 0, 0);
                return;
            }
            damon_split_region_at(&mut ctx.targets[ti].regions, ri, left);
        }
        if self.damos_core_filter_out(ctx, ti, ri, si) {
            return;
        }
        // The filter may have split it: what is left at `ri` is what is applied and
        // charged.
        let r = ctx.targets[ti].regions[ri];
        let sz = r.size();
        let begin = self.cpu_ns;
        let workload = ctx.targets[ti].workload;
        let sz_applied = match ctx.ops {
            Ops::Paddr => self.damon_pa_apply_scheme(&r, &ctx.schemes[si]),
            Ops::Vaddr => self.damon_va_apply_scheme(workload, &r, &ctx.schemes[si]),
        };
        let q = &mut ctx.schemes[si].quota;
        q.total_charged_ns += self.cpu_ns - begin;
        q.charged_sz += sz;
        if q.esz > 0 && q.charged_sz >= q.esz {
            q.charge_target_from = Some(ti);
            // The kernel's `end + 1`: the next window skips this region's successor's
            // first page too.
            q.charge_addr_from = r.end + 1;
        }
        if ctx.schemes[si].cfg.action != Action::Stat {
            ctx.targets[ti].regions[ri].age = 0;
        }
        damos_update_stat(&mut ctx.schemes[si].stat, sz, sz_applied);
    }

    /// `damos_filter_out` for the core's filters (addr): a region straddling a
    /// filter's edge is split there first, so the part in question is judged whole.
    fn damos_core_filter_out(&mut self, ctx: &mut Ctx, ti: usize, ri: usize, si: usize) -> bool {
        for f in ctx.schemes[si].cfg.filters.clone() {
            let FilterKind::Addr(start, end) = f.kind else {
                continue;
            };
            let regions = &mut ctx.targets[ti].regions;
            let r = regions[ri];
            let matched = if start <= r.start && r.end <= end {
                true
            } else if r.end <= start || end <= r.start {
                false
            } else if r.start < start {
                damon_split_region_at(regions, ri, start - r.start);
                false
            } else {
                damon_split_region_at(regions, ri, end - r.start);
                true
            };
            if matched == f.matching {
                return true;
            }
        }
        false
    }
}

/// The histogram cut-off: walk scores down from the highest, adding sizes, until the
/// quota is covered (or score 0).
pub fn min_score_for(histogram: &[u64], max_score: u32, esz: u64) -> u32 {
    let mut cumulated = 0u64;
    let mut score = max_score;
    loop {
        cumulated += histogram[score as usize];
        if cumulated >= esz || score == 0 {
            return score;
        }
        score -= 1;
    }
}

fn damos_update_stat(st: &mut SchemeStat, sz_tried: u64, sz_applied: u64) {
    st.nr_tried += 1;
    st.sz_tried += sz_tried;
    if sz_applied > 0 {
        st.nr_applied += 1;
    }
    st.sz_applied += sz_applied;
}

/// `damos_skip_charged_region`: in the window after the quota ran out, resume after
/// the last charged region rather than at the first region again.
fn damos_skip_charged_region(ctx: &mut Ctx, ti: usize, ri: &mut usize, si: usize) -> bool {
    let q = &ctx.schemes[si].quota;
    let Some(target_from) = q.charge_target_from else {
        return false;
    };
    let addr_from = q.charge_addr_from;
    if ti != target_from {
        return true;
    }
    let regions = &mut ctx.targets[ti].regions;
    let r = regions[*ri];
    if *ri == regions.len() - 1 {
        let q = &mut ctx.schemes[si].quota;
        q.charge_target_from = None;
        q.charge_addr_from = 0;
        return true;
    }
    if addr_from > 0 && r.end <= addr_from {
        return true;
    }
    if addr_from > 0 && r.start < addr_from {
        let mut sz_to_skip = (addr_from - r.start) / DAMON_MIN_REGION * DAMON_MIN_REGION;
        if sz_to_skip == 0 {
            if r.size() <= DAMON_MIN_REGION {
                return true;
            }
            sz_to_skip = DAMON_MIN_REGION;
        }
        damon_split_region_at(regions, *ri, sz_to_skip);
        *ri += 1;
    }
    let q = &mut ctx.schemes[si].quota;
    q.charge_target_from = None;
    q.charge_addr_from = 0;
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::damon::{AccessPattern, Quota, QuotaGoal, Watermarks};

    fn quota(ms: u64, sz: u64) -> Quota {
        Quota {
            ms,
            sz,
            reset_interval_ms: 1000,
            weight_sz: 0,
            weight_nr_accesses: 0,
            weight_age: 1,
            goals: Vec::new(),
        }
    }

    fn scheme(wmarks: Watermarks) -> Scheme {
        Scheme::new(
            SchemeConfig {
                action: Action::Pageout,
                apply_interval_us: 0,
                pattern: AccessPattern {
                    min_sz: 4096,
                    max_sz: u64::MAX,
                    min_nr_accesses: 0,
                    max_nr_accesses: 0,
                    min_age: 0,
                    max_age: u32::MAX,
                },
                quota: quota(10, 0),
                wmarks,
                filters: Vec::new(),
                target_nid: None,
            },
            0,
        )
    }

    #[test]
    fn effective_quota_by_hand() {
        // No time quota, no goals: the size quota as it is.
        let mut st = QuotaState::default();
        set_effective_quota(&quota(0, 1 << 20), &mut st);
        assert_eq!(st.esz, 1 << 20);
        // Time quota before anything was charged: 4 MiB per ms assumed, × 10 ms.
        set_effective_quota(&quota(10, 0), &mut st);
        assert_eq!(st.esz, 40 << 20);
        // 8 MiB applied in 2 ms of CPU: 4194 bytes/ns... 8388608 × 1e6 / 2e6 =
        // 4194304 bytes per ms; × 10 ms = 41943040, capped by a 16 MiB size quota.
        st.total_charged_sz = 8 << 20;
        st.total_charged_ns = 2_000_000;
        set_effective_quota(&quota(10, 0), &mut st);
        assert_eq!(st.esz, 41_943_040);
        set_effective_quota(&quota(10, 16 << 20), &mut st);
        assert_eq!(st.esz, 16 << 20);
        // Slower pageout, 1 MiB in 4 ms: 262144 bytes per ms × 10 = 2.5 MiB.
        st.total_charged_sz = 1 << 20;
        st.total_charged_ns = 4_000_000;
        set_effective_quota(&quota(10, 16 << 20), &mut st);
        assert_eq!(st.esz, 2_621_440);
    }

    #[test]
    fn quota_charging_across_reset_intervals() {
        // A paddr stat scheme, every region matching, a 40 KiB (10-page) size quota
        // per 1 s window; four 8-page regions (P = pages).
        const P: u64 = 4096;
        use crate::damon::*;
        let mut cfg = crate::test_util::config(64);
        cfg.damon.push(KdamondConfig {
            on: true,
            ops: Ops::Paddr,
            attrs: Attrs {
                sample_us: 5_000,
                aggr_us: 100_000,
                ops_update_us: 1_000_000,
                min_nr_regions: 10,
                max_nr_regions: 1_000,
            },
            targets: vec![TargetConfig::default()],
            schemes: vec![SchemeConfig {
                action: Action::Stat,
                apply_interval_us: 0,
                pattern: AccessPattern {
                    min_sz: 0,
                    max_sz: u64::MAX,
                    min_nr_accesses: 0,
                    max_nr_accesses: u32::MAX,
                    min_age: 0,
                    max_age: u32::MAX,
                },
                quota: Quota {
                    ms: 0,
                    sz: 40_960,
                    reset_interval_ms: 1_000,
                    weight_sz: 0,
                    weight_nr_accesses: 0,
                    weight_age: 0,
                    goals: Vec::new(),
                },
                wmarks: Watermarks {
                    metric: WmarkMetric::None,
                    interval_us: 0,
                    high: 0,
                    mid: 0,
                    low: 0,
                },
                filters: Vec::new(),
                target_nid: None,
            }],
            reclaim_module: false,
        });
        let mut mm = crate::test_util::task_mm(cfg);
        mm.damon_apply_configs();
        let mut ctx = mm.damon.kdamonds[0].ctx.take().unwrap();
        ctx.targets[0].regions = (0..4)
            .map(|i| Region::new(i * 8 * P, (i + 1) * 8 * P))
            .collect();
        ctx.schemes[0].activated = true;
        let pages = |ctx: &Ctx| -> Vec<(u64, u64)> {
            ctx.targets[0]
                .regions
                .iter()
                .map(|r| (r.start / P, r.end / P))
                .collect()
        };
        // Window 1 (t = 0): region 0 whole (8 pages), then region 1 trimmed to the 2
        // pages left of the quota (split at 10); the resume point is after it.
        mm.now = 0;
        mm.kdamond_apply_schemes(&mut ctx);
        assert_eq!(
            pages(&ctx),
            vec![(0, 8), (8, 10), (10, 16), (16, 24), (24, 32)]
        );
        let st = ctx.schemes[0].stat;
        assert_eq!((st.nr_tried, st.sz_tried, st.qt_exceeds), (2, 10 * P, 0));
        assert_eq!(ctx.schemes[0].quota.charge_addr_from, 10 * P + 1);
        // Same window, later aggregation: the quota is spent, nothing more.
        mm.now = 500_000_000;
        mm.kdamond_apply_schemes(&mut ctx);
        assert_eq!(ctx.schemes[0].stat.nr_tried, 2);
        // Window 2 (t = 1 s): the last window used its quota up (qt_exceeds). The
        // charged regions are skipped; the kernel's resume address is end + 1, so the
        // next region loses its first page to the skip (split at 11). 5 pages of
        // [11, 16), then 5 of [16, 24) (split at 21).
        mm.now = 1_000_000_000;
        mm.kdamond_apply_schemes(&mut ctx);
        assert_eq!(
            pages(&ctx),
            vec![
                (0, 8),
                (8, 10),
                (10, 11),
                (11, 16),
                (16, 21),
                (21, 24),
                (24, 32)
            ]
        );
        let st = ctx.schemes[0].stat;
        assert_eq!((st.nr_tried, st.sz_tried, st.qt_exceeds), (4, 20 * P, 1));
        assert_eq!(ctx.schemes[0].quota.total_charged_sz, 10 * P);
        assert_eq!(ctx.schemes[0].quota.charge_addr_from, 21 * P + 1);
    }

    #[test]
    fn quota_goal_feedback_step() {
        // Under the goal (score 5000 = half): compensation = last × 5000/10000.
        assert_eq!(damon_feed_loop_next_input(40_000, 5_000), 60_000);
        // On the goal: unchanged.
        assert_eq!(damon_feed_loop_next_input(40_000, 10_000), 40_000);
        // Over by 50 %: 40000 − 20000.
        assert_eq!(damon_feed_loop_next_input(40_000, 15_000), 20_000);
        // Twice the goal or more: the minimum.
        assert_eq!(damon_feed_loop_next_input(40_000, 20_000), 10_000);
        // Through set_effective_quota: a PSI goal of 1000 µs with 250 µs measured:
        // score 2500, esz_bp from max(0, 10000) = 10000 → + 7500 = 17500 → 1 byte;
        // the time quota's 40 MiB is larger, the goal's wins.
        let mut q = quota(10, 0);
        q.goals.push(QuotaGoal {
            metric: GoalMetric::SomeMemPsiUs,
            target_value: 1000,
            current_value: 250,
        });
        let mut st = QuotaState::default();
        set_effective_quota(&q, &mut st);
        assert_eq!((st.esz_bp, st.esz), (17_500, 1));
    }

    #[test]
    fn histogram_cut_off_by_hand() {
        // Scores 70: 4 MiB, 60: 8 MiB, 40: 16 MiB. A 10 MiB quota: 70 gives 4, 60
        // brings 12 ≥ 10 → cut at 60. A 4 MiB quota: cut at 70. 100 MiB: score 0.
        let mut h = [0u64; 100];
        h[70] = 4 << 20;
        h[60] = 8 << 20;
        h[40] = 16 << 20;
        assert_eq!(min_score_for(&h, 70, 10 << 20), 60);
        assert_eq!(min_score_for(&h, 70, 4 << 20), 70);
        assert_eq!(min_score_for(&h, 70, 100 << 20), 0);
        assert_eq!(min_score_for(&h, 70, 28 << 20), 40);
    }

    #[test]
    fn watermarks_at_each_boundary() {
        // high 500, mid 400, low 200 (DAMON_RECLAIM's), interval 5 s.
        let w = Watermarks {
            metric: WmarkMetric::FreeMemRate,
            interval_us: 5_000_000,
            high: 500,
            mid: 400,
            low: 200,
        };
        let mut s = scheme(w);
        // Inactive: between mid and high (inclusive) it stays off.
        assert_eq!(s.damos_wmark_wait_us(500), 5_000_000);
        assert_eq!(s.damos_wmark_wait_us(400), 5_000_000);
        assert!(!s.activated);
        // Below mid: on.
        assert_eq!(s.damos_wmark_wait_us(399), 0);
        assert!(s.activated);
        // Active: stays on up to high, and down to low.
        assert_eq!(s.damos_wmark_wait_us(450), 0);
        assert_eq!(s.damos_wmark_wait_us(500), 0);
        assert_eq!(s.damos_wmark_wait_us(200), 0);
        // Below low: off (regular reclaim's job).
        assert_eq!(s.damos_wmark_wait_us(199), 5_000_000);
        assert!(!s.activated);
        // Back in [low, mid): on again. Above high: off.
        assert_eq!(s.damos_wmark_wait_us(300), 0);
        assert_eq!(s.damos_wmark_wait_us(501), 5_000_000);
        assert!(!s.activated);
        // Metric none: always on.
        let mut s = scheme(Watermarks {
            metric: WmarkMetric::None,
            ..w
        });
        assert_eq!(s.damos_wmark_wait_us(999), 0);
        assert!(s.activated);
    }
}
