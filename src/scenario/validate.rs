//! Semantic checks that the types cannot express: ranges, keys that only make sense for
//! some workload kinds or patterns, cross-field orderings. Each problem names the dotted key
//! path to blame, so the loader can point at its line.

use super::units::{format_size, format_time, Bytes, Nanos, PAGE_SIZE};
use super::*;
use std::collections::HashMap;
use std::fmt::Display;

/// A broken rule, at a dotted key path such as `workload[1].size`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub key: String,
    pub message: String,
}

/// Below this the kernel's watermark and reserve arithmetic degenerates.
const MAX_MEMORY: u64 = 1 << 40;
const MAX_SAMPLES: u64 = 1_000_000;
const MIN_SAMPLE_INTERVAL_NS: u64 = 1_000_000;
const MIN_MEMORY: u64 = 64 << 20;

#[derive(Default)]
struct Checker(Vec<Problem>);

impl Checker {
    fn err(&mut self, key: impl Into<String>, message: impl Into<String>) {
        self.0.push(Problem {
            key: key.into(),
            message: message.into(),
        });
    }

    fn range<T: PartialOrd + Display>(&mut self, key: impl Into<String>, v: T, lo: T, hi: T) {
        if v < lo || v > hi {
            self.err(key, format!("must be in {lo}..={hi}, got {v}"));
        }
    }

    fn positive(&mut self, key: impl Into<String>, v: u64) {
        if v == 0 {
            self.err(key, "must be > 0");
        }
    }

    /// A key that must not be given in this context (`why` says which context).
    fn forbid(&mut self, key: String, given: bool, why: &str) {
        if given {
            self.err(key, format!("not allowed {why}"));
        }
    }
}

/// Sizes and times in messages are spelled as a scenario writes them.
fn sz(b: Bytes) -> String {
    format_size(b.0)
}

fn tm(t: Nanos) -> String {
    format_time(t.0)
}

/// Every problem of a deserialized scenario, timed actions included, in a fixed order.
pub fn validate(sc: &Scenario) -> Vec<Problem> {
    let mut c = Checker::default();
    check_static(sc, &mut c);
    check_actions(sc, &mut c);
    check_sweep(sc, &mut c);
    c.0
}

/// Each swept key must be settable to each of its values (checked by setting it on a
/// copy of the scenario); metrics must name something results.json has.
fn check_sweep(sc: &Scenario, c: &mut Checker) {
    let Some(sw) = &sc.sweep else {
        return;
    };
    let mut base = sc.clone();
    base.sweep = None;
    let mut seen = HashMap::new();
    for (i, p) in sw.params.iter().enumerate() {
        let k = |f: &str| format!("sweep.param[{i}].{f}");
        match (&p.name, p.key.is_empty()) {
            (Some(_), false) => {
                c.err(k("name"), "give `key` or `name`, not both");
                continue;
            }
            (None, true) => {
                c.err(
                    k("key"),
                    "a parameter needs a `key` (or a `name` and `with` keys)",
                );
                continue;
            }
            (Some(_), true) if p.with.is_empty() => {
                c.err(
                    k("with"),
                    "a `name` parameter sets nothing itself: give it `with` keys",
                );
            }
            _ => {}
        }
        // sweep.csv is written by the csv crate, which quotes a name holding a comma.
        if let Some(why) = p.name.as_deref().and_then(|n| bad_name(n, &[])) {
            c.err(k("name"), why);
        }
        if let Some(first) = seen.insert(p.column(), i) {
            c.err(
                k("key"),
                format!(
                    "`{}` is swept twice (also sweep.param[{first}])",
                    p.column()
                ),
            );
        }
        if p.name.is_none() && p.key.starts_with("sweep") {
            c.err(k("key"), "a sweep cannot sweep itself");
            continue;
        }
        if p.values.is_empty() {
            c.err(
                k("values"),
                format!("empty list: give `{}` at least one value", p.column()),
            );
        }
        for (j, v) in p.values.iter().enumerate() {
            if p.name.is_some() {
                break; // a name: nothing to set
            }
            let mut probe = base.clone();
            if let Err(e) = super::apply_key(&mut probe, &p.key, v) {
                if e.bad_key {
                    c.err(k("key"), e.to_string());
                    break;
                }
                c.err(
                    format!("sweep.param[{i}].values[{j}]"),
                    format!("{}: {v} is not a valid value: {}", p.key, e.message),
                );
            }
        }
        for (wk, wvals) in &p.with {
            let at = format!("sweep.param[{i}].with.{wk}");
            if let Some(first) = seen.insert(wk.as_str(), i) {
                c.err(
                    at.clone(),
                    format!("`{wk}` is swept twice (also sweep.param[{first}])"),
                );
            }
            if wvals.len() != p.values.len() {
                c.err(
                    at.clone(),
                    format!(
                        "{} values for {} of `{}`: give one per value",
                        wvals.len(),
                        p.values.len(),
                        p.column()
                    ),
                );
            }
            for (j, v) in wvals.iter().enumerate() {
                let mut probe = base.clone();
                if let Err(e) = super::apply_key(&mut probe, wk, v) {
                    if e.bad_key {
                        c.err(at.clone(), e.to_string());
                        break;
                    }
                    c.err(
                        format!("{at}[{j}]"),
                        format!("{wk}: {v} is not a valid value: {}", e.message),
                    );
                }
            }
        }
    }
    if sw.params.is_empty() {
        c.err("sweep.param", "a sweep needs at least one [[sweep.param]]");
    }
    if let Some(pv) = &sw.pivot {
        for (field, key) in [("rows", &pv.rows), ("columns", &pv.columns)] {
            if !sw.params.iter().any(|p| p.column() == key) {
                c.err(
                    format!("sweep.pivot.{field}"),
                    format!("`{key}` is not a swept key"),
                );
            }
        }
        if !sw.metrics.contains(&pv.metric) {
            c.err(
                "sweep.pivot.metric",
                format!("`{}` is not one of sweep.metrics", pv.metric),
            );
        }
        let column_values = sw
            .params
            .iter()
            .find(|p| p.column() == pv.columns)
            .map(|p| &p.values);
        if column_values.is_some_and(|v| !v.contains(&pv.baseline)) {
            c.err(
                "sweep.pivot.baseline",
                format!("{} is not a value of `{}`", pv.baseline, pv.columns),
            );
        }
    }
    for (m, path) in sw.metrics.iter().enumerate() {
        if let Some(why) = bad_name(path, &[]) {
            c.err(format!("sweep.metrics[{m}]"), why);
        }
    }
    // Whether each metric is a number results.json has needs the results schema of
    // the points, which the layers above build: `sweep::check_metrics`.
}

/// Everything but the actions: what must still hold after an action changes a key (checking
/// actions there would recurse, and they were checked at load time).
pub(crate) fn validate_static(sc: &Scenario) -> Vec<Problem> {
    let mut c = Checker::default();
    check_static(sc, &mut c);
    c.0
}

/// The timed actions' problems, for a change to an `action` key after loading (a swept
/// `action[0].write`): they are otherwise only checked at load time.
pub(crate) fn validate_actions(sc: &Scenario) -> Vec<Problem> {
    let mut c = Checker::default();
    check_actions(sc, &mut c);
    c.0
}

/// Fills what validation allows to be loose, so the simulator need not: memory sizes round
/// down to whole pages, file workloads get their default `io_size`.
pub(crate) fn normalize(sc: &mut Scenario) {
    let m = &mut sc.machine;
    m.memory.0 -= m.memory.0 % PAGE_SIZE;
    if let Some(d) = &mut m.dma32 {
        d.0 -= d.0 % PAGE_SIZE;
    }
    for w in &mut sc.workloads {
        let file = matches!(w.kind, WorkloadKind::FileRead | WorkloadKind::FileWrite);
        if file && w.io_size.is_none() {
            w.io_size = Some(Bytes(PAGE_SIZE));
        }
    }
}

fn check_static(sc: &Scenario, c: &mut Checker) {
    check_run(&sc.run, c);
    check_machine(&sc.machine, c);
    check_kernel(&sc.kernel, &sc.machine, c);
    check_costs(&sc.costs, c);
    check_ramdisk_files(sc, c);
    check_workloads(sc, c);
    check_cgroups(sc, c);
    check_damon(sc, c);
}

/// `damon_set_attrs`' rules: intervals > 0, sampling no longer than aggregation,
/// 3 <= min_nr_regions <= max_nr_regions.
fn check_damon_attrs(
    c: &mut Checker,
    keys: [String; 4],
    sample_us: u64,
    aggr_us: u64,
    nr: (u64, u64),
) {
    let [sample_k, aggr_k, min_k, max_k] = keys;
    c.positive(sample_k.clone(), sample_us);
    c.positive(aggr_k.clone(), aggr_us);
    if sample_us > aggr_us {
        c.err(
            sample_k,
            format!("must not exceed {aggr_k} ({aggr_us}), got {sample_us}"),
        );
    }
    if nr.0 < 3 {
        c.err(min_k.clone(), format!("must be at least 3, got {}", nr.0));
    }
    if nr.0 > nr.1 {
        c.err(
            max_k,
            format!("must be at least {min_k} ({}), got {}", nr.0, nr.1),
        );
    }
}

/// DAMOS watermarks: high >= mid >= low, per thousand, with a check interval.
fn check_damon_wmarks(
    c: &mut Checker,
    at: &str,
    interval: &str,
    active: bool,
    iv: u64,
    hml: [u64; 3],
) {
    if !active {
        return;
    }
    let [high, mid, low] = hml;
    let key = |f: &str| format!("{at}{f}");
    c.positive(key(interval), iv);
    for (f, v) in [("high", high), ("mid", mid), ("low", low)] {
        c.range(key(f), v, 0, 1000);
    }
    if !(high >= mid && mid >= low) {
        c.err(
            key("mid"),
            format!("watermarks must be ordered high >= mid >= low, got {high}, {mid}, {low}"),
        );
    }
}

fn check_damon(sc: &Scenario, c: &mut Checker) {
    use super::damon::{DamosAction, FilterType, Operations};
    let nr_nodes = sc.machine.nodes.len().max(1);
    for (ki, kd) in sc.damon.iter().flat_map(|d| d.kdamonds.iter()).enumerate() {
        let kk = format!("damon.kdamonds[{ki}]");
        if kd.contexts.len() > 1 {
            c.err(
                format!("{kk}.contexts"),
                format!(
                    "a kdamond runs one context (the kernel's nr_contexts is 0 or 1), got {}",
                    kd.contexts.len()
                ),
            );
        }
        if kd.contexts.is_empty() && kd.state == super::damon::KdamondState::On {
            c.err(
                format!("{kk}.state"),
                "a kdamond turned on needs a [[...contexts]]",
            );
        }
        for (ci, ctx) in kd.contexts.iter().enumerate().take(1) {
            let ck = format!("{kk}.contexts[{ci}]");
            let iv = &ctx.monitoring_attrs.intervals;
            let nr = &ctx.monitoring_attrs.nr_regions;
            let ak = format!("{ck}.monitoring_attrs");
            check_damon_attrs(
                c,
                [
                    format!("{ak}.intervals.sample_us"),
                    format!("{ak}.intervals.aggr_us"),
                    format!("{ak}.nr_regions.min"),
                    format!("{ak}.nr_regions.max"),
                ],
                iv.sample_us,
                iv.aggr_us,
                (nr.min, nr.max),
            );
            let paddr = match ctx.operations {
                Operations::Paddr => true,
                Operations::Vaddr => false,
                Operations::Fvaddr => {
                    c.err(
                        format!("{ck}.operations"),
                        "\"fvaddr\" (fixed virtual ranges) is not modelled; use \"vaddr\" or \"paddr\"",
                    );
                    false
                }
            };
            if ctx.targets.is_empty() && kd.state == super::damon::KdamondState::On {
                c.err(
                    format!("{ck}.targets"),
                    "a running context needs a [[...targets]]",
                );
            }
            if paddr && ctx.targets.len() > 1 {
                c.err(
                    format!("{ck}.targets"),
                    "paddr monitors one target (physical memory)",
                );
            }
            for (ti, t) in ctx.targets.iter().enumerate() {
                let tk = format!("{ck}.targets[{ti}]");
                match (&t.pid_target, paddr) {
                    (Some(_), true) => c.err(
                        format!("{tk}.pid_target"),
                        "paddr monitors physical memory: no pid_target",
                    ),
                    (None, false) => c.err(
                        format!("{tk}.pid_target"),
                        "vaddr needs the workload whose address space to monitor",
                    ),
                    (Some(name), false) => match sc.workloads.iter().find(|w| &w.name == name) {
                        None => c.err(
                            format!("{tk}.pid_target"),
                            format!("no workload named `{name}`"),
                        ),
                        Some(w) if w.is_several_processes() => {
                            c.err(
                                format!("{tk}.pid_target"),
                                format!(
                                    "`{name}` is several processes (`processes` or a process `lifetime`): a pid names one"
                                ),
                            )
                        }
                        Some(_) => {}
                    },
                    (None, true) => {}
                }
                if let Some(n) = t.numa_node {
                    if !paddr {
                        c.err(
                            format!("{tk}.numa_node"),
                            "a node's memory is a paddr target; vaddr monitors a workload",
                        );
                    } else if !t.regions.is_empty() {
                        c.err(
                            format!("{tk}.numa_node"),
                            "gives the target's region: leave `regions` out",
                        );
                    } else if n as usize >= nr_nodes {
                        c.err(
                            format!("{tk}.numa_node"),
                            format!("must name a node of the machine (0..{nr_nodes}), got {n}"),
                        );
                    }
                }
                for (ri, r) in t.regions.iter().enumerate() {
                    if r.start.0 >= r.end.0 {
                        c.err(
                            format!("{tk}.regions[{ri}].end"),
                            format!("must be above start ({}), got {}", r.start.0, r.end.0),
                        );
                    }
                }
            }
            for (si, sch) in ctx.schemes.iter().enumerate() {
                let sk = format!("{ck}.schemes[{si}]");
                let migrate = matches!(
                    sch.action,
                    DamosAction::MigrateHot | DamosAction::MigrateCold
                );
                let ok = match sch.action {
                    DamosAction::Pageout | DamosAction::Stat => true,
                    DamosAction::Cold => !paddr,
                    DamosAction::LruPrio | DamosAction::LruDeprio => paddr,
                    DamosAction::MigrateHot | DamosAction::MigrateCold => paddr,
                    _ => {
                        c.err(
                            format!("{sk}.action"),
                            format!(
                                "{:?} is a kernel DAMOS action this simulator does not model; use pageout, cold, lru_prio, lru_deprio, migrate_hot, migrate_cold or stat",
                                sch.action
                            )
                            .to_lowercase(),
                        );
                        true
                    }
                };
                if !ok {
                    c.err(
                        format!("{sk}.action"),
                        format!(
                            "{:?} is not supported by the {} operations (paddr: pageout, lru_prio, lru_deprio, migrate_hot, migrate_cold, stat; vaddr: pageout, cold, stat)",
                            sch.action,
                            if paddr { "paddr" } else { "vaddr" }
                        )
                        .to_lowercase(),
                    );
                }
                match (migrate, sch.target_nid) {
                    (true, None) => c.err(
                        format!("{sk}.target_nid"),
                        "migrate_hot and migrate_cold need the node to move pages to",
                    ),
                    (true, Some(n)) if n as usize >= nr_nodes => c.err(
                        format!("{sk}.target_nid"),
                        format!("must name a node of the machine (0..{nr_nodes}), got {n}"),
                    ),
                    (false, Some(_)) => c.err(
                        format!("{sk}.target_nid"),
                        "only migrate_hot and migrate_cold move pages to a node",
                    ),
                    _ => {}
                }
                let p = &sch.access_pattern;
                for (f, r) in [
                    ("sz", &p.sz),
                    ("nr_accesses", &p.nr_accesses),
                    ("age", &p.age),
                ] {
                    if r.max.0.is_some_and(|m| m < r.min) {
                        c.err(
                            format!("{sk}.access_pattern.{f}.max"),
                            format!(
                                "must be at least min ({}), got {}",
                                r.min,
                                r.max.0.unwrap_or(0)
                            ),
                        );
                    }
                }
                let q = &sch.quotas;
                if (q.ms > 0 || q.bytes.0 > 0 || !q.goals.is_empty()) && q.reset_interval_ms == 0 {
                    c.err(
                        format!("{sk}.quotas.reset_interval_ms"),
                        "must be > 0 when a quota is set",
                    );
                }
                for (gi, g) in q.goals.iter().enumerate() {
                    c.positive(
                        format!("{sk}.quotas.goals[{gi}].target_value"),
                        g.target_value,
                    );
                }
                let w = &sch.watermarks;
                check_damon_wmarks(
                    c,
                    &format!("{sk}.watermarks."),
                    "interval_us",
                    w.metric != super::damon::WmarkMetric::None,
                    w.interval_us,
                    [w.high, w.mid, w.low],
                );
                for (fi, f) in sch.filters.iter().enumerate() {
                    let fk = format!("{sk}.filters[{fi}]");
                    match f.kind {
                        FilterType::Anon | FilterType::Memcg if !paddr => c.err(
                            format!("{fk}.type"),
                            "anon and memcg filters are handled by the paddr operations only",
                        ),
                        FilterType::Memcg => match &f.memcg_path {
                            None => c.err(
                                format!("{fk}.memcg_path"),
                                "a memcg filter needs memcg_path",
                            ),
                            Some(p) => {
                                let path = p.trim_matches('/');
                                if !path.is_empty() && !sc.cgroups.iter().any(|cg| cg.path == path)
                                {
                                    c.err(format!("{fk}.memcg_path"), format!("no cgroup `{p}`"));
                                }
                            }
                        },
                        FilterType::Addr => {
                            if f.addr_start.0 >= f.addr_end.0 {
                                c.err(
                                    format!("{fk}.addr_end"),
                                    format!(
                                        "must be above addr_start ({}), got {}",
                                        f.addr_start.0, f.addr_end.0
                                    ),
                                );
                            }
                        }
                        FilterType::Anon => {}
                        other => c.err(
                            format!("{fk}.type"),
                            format!("{other:?} filters are not modelled; use anon, memcg or addr")
                                .to_lowercase(),
                        ),
                    }
                }
            }
        }
    }
    if let Some(r) = &sc.damon_reclaim {
        check_damon_attrs(
            c,
            [
                "damon_reclaim.sample_interval".into(),
                "damon_reclaim.aggr_interval".into(),
                "damon_reclaim.min_nr_regions".into(),
                "damon_reclaim.max_nr_regions".into(),
            ],
            r.sample_interval,
            r.aggr_interval,
            (r.min_nr_regions, r.max_nr_regions),
        );
        c.positive(
            "damon_reclaim.quota_reset_interval_ms",
            r.quota_reset_interval_ms,
        );
        check_damon_wmarks(
            c,
            "damon_reclaim.wmarks_",
            "interval",
            true,
            r.wmarks_interval,
            [r.wmarks_high, r.wmarks_mid, r.wmarks_low],
        );
        let (s0, e0) = (r.monitor_region_start.0, r.monitor_region_end.0);
        if (s0, e0) != (0, 0) && s0 >= e0 {
            c.err(
                "damon_reclaim.monitor_region_end",
                format!("must be above monitor_region_start ({s0}), got {e0}"),
            );
        }
    }
}

/// No simulated work is free: a zero cost would let an operation (or a slice of kswapd)
/// take no virtual time, and a task would loop at one instant. 1ns is the least.
fn check_costs(k: &Costs, c: &mut Checker) {
    for (key, v, what) in [
        ("access", k.access, "every access"),
        ("minor_fault", k.minor_fault, "every minor fault"),
        ("major_fault", k.major_fault, "every major fault"),
        ("scan_page", k.scan_page, "scanning a page"),
        ("reclaim_page", k.reclaim_page, "reclaiming a page"),
        (
            "rmap_walk",
            k.rmap_walk,
            "every reverse-map walk to a mapped page",
        ),
        ("syscall", k.syscall, "every read() or write()"),
        ("copy_page", k.copy_page, "copying a page"),
        (
            "walk_pte",
            k.walk_pte,
            "every PTE an MGLRU page-table walk examines",
        ),
        (
            "walk_young",
            k.walk_young,
            "every young PTE an MGLRU walk finds",
        ),
        ("damon_check", k.damon_check, "every DAMON region sample"),
        (
            "shrink_object",
            k.shrink_object,
            "every object a slab shrinker scans",
        ),
        ("tlb_flush", k.tlb_flush, "every TLB flush"),
        ("tlb_ipi", k.tlb_ipi, "every TLB shootdown IPI"),
    ] {
        if v.0 == 0 {
            c.err(
                format!("costs.{key}"),
                format!("must be > 0: {what} takes virtual time (1ns is the least)"),
            );
        }
    }
}

/// Why a name that reaches output (the summary, results.json keys, CSV headers, chart
/// labels) is unusable, if it is: empty, or holding a control character (NUL, newline,
/// tab: they break the summary's lines and the charts' SVG text), or one of `extra`.
fn bad_name(name: &str, extra: &[char]) -> Option<String> {
    if name.trim().is_empty() {
        return Some("must not be empty".to_string());
    }
    if let Some(ch) = name.chars().find(|c| c.is_control()) {
        return Some(format!(
            "{:?} holds the control character {:?}: names appear in the summary, \
             results.json and charts",
            name, ch
        ));
    }
    if let Some(ch) = name.chars().find(|c| extra.contains(c)) {
        return Some(format!(
            "{name:?} holds `{ch}`, which would split a column of timeseries.csv"
        ));
    }
    None
}

/// A memory.oom.group write's value: 0 or 1, as a number or its digits.
pub fn oom_group_value(v: &toml::Value) -> Option<bool> {
    let n = match v {
        toml::Value::Integer(n) => *n,
        toml::Value::String(s) => s.trim().parse().ok()?,
        _ => return None,
    };
    match n {
        0 => Some(false),
        1 => Some(true),
        _ => None,
    }
}

/// An open file's name reaches results.json's keys and timeseries.csv's column
/// names (`memory.peak[NAME]:cgroup`): letters, digits, `_`, `-` and `.`.
fn bad_fd_name(name: &str) -> Option<String> {
    if name.is_empty() || name.len() > 64 {
        return Some(format!("`{name}`: 1 to 64 characters"));
    }
    if let Some(ch) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
    {
        return Some(format!(
            "`{name}` holds `{ch}`: a name of letters, digits, `_`, `-` and `.` (it names \
             a key of results.json and a column of timeseries.csv)"
        ));
    }
    None
}

/// The cgroup v2 interface files the root cgroup lacks (CFTYPE_NOT_ON_ROOT in
/// mm/memcontrol.c): the root has no limits or protection, only memory.reclaim and
/// memory.pressure among those the simulator models.
const NOT_ON_ROOT: [&str; 5] = [
    "memory.min",
    "memory.low",
    "memory.high",
    "memory.max",
    "memory.swap.max",
];

/// At most this many cgroups (memcg ids are 16 bits in shadow entries).
const MAX_CGROUPS: usize = 4096;

/// The cgroup tree: unique paths whose parents are listed before them, protection
/// within the limit, and workloads placed in cgroups that exist.
fn check_cgroups(sc: &Scenario, c: &mut Checker) {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    if sc.cgroups.len() > MAX_CGROUPS {
        c.err(
            "cgroup",
            format!("at most {MAX_CGROUPS} cgroups, got {}", sc.cgroups.len()),
        );
    }
    for (i, cg) in sc.cgroups.iter().enumerate() {
        let k = |f: &str| format!("cgroup[{i}].{f}");
        let p = cg.path.as_str();
        if p == "/" {
            c.err(
                k("path"),
                format!(
                    "the root cgroup `/` cannot be declared: it has no {} (cgroup v2 \
                     puts them in child cgroups only)",
                    NOT_ON_ROOT.join(", ")
                ),
            );
            continue;
        }
        if let Some(why) = bad_name(p, &[',']) {
            c.err(k("path"), why);
            continue;
        }
        if let Some(seg) = p.split('/').find(|s| *s == "." || *s == "..") {
            c.err(
                k("path"),
                format!("`{p}`: `{seg}` is not a cgroup name (a cgroup is a directory)"),
            );
            continue;
        }
        if p.starts_with('/') || p.ends_with('/') || p.contains("//") {
            c.err(
                k("path"),
                format!("`{p}` is not a cgroup path (like `workload.slice/app`, no leading `/`)"),
            );
            continue;
        }
        if let Some(first) = seen.insert(p, i) {
            c.err(
                k("path"),
                format!("duplicate cgroup path `{p}` (also cgroup[{first}])"),
            );
        }
        if let Some((parent, _)) = p.rsplit_once('/') {
            if !seen.contains_key(parent) {
                c.err(
                    k("path"),
                    format!("unknown parent `{parent}`: list it as a [[cgroup]] before `{p}`"),
                );
            }
        }
        let m = &cg.memory;
        if m.oom.group > 1 {
            c.err(
                k("memory.oom.group"),
                format!("must be 0 or 1, got {}", m.oom.group),
            );
        }
        let max = m.max.pages();
        for (field, v) in [("min", m.min), ("low", m.low)] {
            if let Some(b) = v.filter(|b| b.pages() > max) {
                c.err(
                    k(&format!("memory.{field}")),
                    format!(
                        "{} is above memory.max ({})",
                        sz(b),
                        m.max.0.map_or("max".to_string(), sz)
                    ),
                );
            }
        }
    }
    for (i, w) in sc.workloads.iter().enumerate() {
        if let Some(p) = w
            .cgroup
            .as_deref()
            .filter(|p| *p != "/" && !seen.contains_key(p))
        {
            c.err(
                format!("workload[{i}].cgroup"),
                format!("no cgroup `{p}` (add a [[cgroup]] with that path)"),
            );
        }
    }
}

fn check_run(r: &Run, c: &mut Checker) {
    c.positive("run.duration", r.duration.0);
    // Below a millisecond a sample resolves nothing reclaim does (its timers are
    // jiffies), and `--check` walks every frame at every sample.
    if r.sample_interval.0 < MIN_SAMPLE_INTERVAL_NS {
        c.err(
            "run.sample_interval",
            format!("must be at least 1ms, got {}", tm(r.sample_interval)),
        );
    }
    // Each sample is a timeseries row held in memory until the run ends.
    if r.sample_interval.0 > 0 && r.duration.0 / r.sample_interval.0 > MAX_SAMPLES {
        c.err(
            "run.sample_interval",
            format!(
                "gives more than {MAX_SAMPLES} samples over run.duration ({}); got {}",
                tm(r.duration),
                tm(r.sample_interval)
            ),
        );
    }
    // A read flushes at most every cgroup's statistics: below a millisecond it would
    // only cost events.
    if r.memory_stat_poll.0 != 0 && r.memory_stat_poll.0 < MIN_SAMPLE_INTERVAL_NS {
        c.err(
            "run.memory_stat_poll",
            format!(
                "must be 0 (no reads) or at least 1ms, got {}",
                tm(r.memory_stat_poll)
            ),
        );
    }
    if let Some(first) = r.memcg_stats_flush_first {
        if first.0 == 0 || first.0 > crate::mm::memcontrol::MEMCG_FLUSH_TIME_NS {
            c.err(
                "run.memcg_stats_flush_first",
                format!(
                    "must be in (0, 2s] (the flush runs every 2s), got {}",
                    tm(first)
                ),
            );
        }
    }
    if !(1_000..=10_000_000).contains(&r.slice.0) {
        c.err(
            "run.slice",
            format!("must be in 1us..=10ms, got {}", tm(r.slice)),
        );
    }
}

/// The nodes the model can have.
const MAX_NODES: usize = crate::mm::page_alloc::MAX_NUMNODES_MODELLED;
/// A node's memory comes in whole max-order blocks (4 MiB), so no buddy block spans
/// two nodes (the kernel's nodes are whole memory sections, 128 MiB on x86-64).
const NODE_ALIGN: u64 = 4 << 20;
/// The largest SLIT entry (255 means unreachable).
const MAX_DISTANCE: u32 = 254;

/// `[[machine.node]]`: the nodes' memory adds up to `machine.memory`, every CPU is
/// on one node, and each SLIT row has a distance per node, 10 to itself and more to
/// the others.
fn check_nodes(m: &Machine, c: &mut Checker) {
    if m.nodes.is_empty() {
        return;
    }
    let n = m.nodes.len();
    if n > MAX_NODES {
        c.err(
            "machine.node",
            format!("at most {MAX_NODES} nodes, got {n}"),
        );
        return;
    }
    let total: u64 = m.nodes.iter().map(|d| d.memory.0).sum();
    if total != m.memory.0 {
        c.err(
            "machine.node",
            format!(
                "the nodes' memory adds up to {}, but machine.memory is {}",
                sz(Bytes(total)),
                sz(m.memory)
            ),
        );
    }
    let mut owner: Vec<Option<usize>> = vec![None; m.nr_cpus as usize];
    for (i, node) in m.nodes.iter().enumerate() {
        let k = |f: &str| format!("machine.node[{i}].{f}");
        if node.memory.0 % NODE_ALIGN != 0 {
            c.err(
                k("memory"),
                format!("must be a multiple of 4M, got {}", sz(node.memory)),
            );
        }
        if node.memory.0 == 0 && node.cpus.is_empty() {
            c.err(k("memory"), "a node needs memory or CPUs");
        }
        if node.latency.is_some_and(|l| l.0 == 0) {
            c.err(k("latency"), "must be > 0");
        }
        if node.bandwidth.is_some_and(|b| b.0 < 1 << 20) {
            c.err(k("bandwidth"), "must be at least 1M (per second)");
        }
        for &cpu in &node.cpus {
            match owner.get_mut(cpu as usize) {
                None => c.err(
                    k("cpus"),
                    format!("CPU {cpu} is not below machine.nr_cpus ({})", m.nr_cpus),
                ),
                Some(Some(j)) => c.err(
                    k("cpus"),
                    format!("CPU {cpu} is already on machine.node[{j}]"),
                ),
                Some(o) => *o = Some(i),
            }
        }
        if let Some(d) = &node.distance {
            if d.len() != n {
                c.err(
                    k("distance"),
                    format!("needs a distance to each of the {n} nodes, got {}", d.len()),
                );
                continue;
            }
            for (j, &dist) in d.iter().enumerate() {
                if j == i && dist != crate::mm::LOCAL_DISTANCE {
                    c.err(
                        k("distance"),
                        format!("a node's distance to itself is 10, got {dist} at [{j}]"),
                    );
                } else if j != i && !(crate::mm::LOCAL_DISTANCE + 1..=MAX_DISTANCE).contains(&dist)
                {
                    c.err(
                        k("distance"),
                        format!("distance to node {j} must be in 11..=254, got {dist}"),
                    );
                }
            }
        }
    }
    if let Some(cpu) = owner.iter().position(Option::is_none) {
        c.err(
            "machine.node",
            format!("CPU {cpu} (machine.nr_cpus is {}) is on no node", m.nr_cpus),
        );
    }
    if m.nodes[0].memory.0 == 0 {
        c.err(
            "machine.node[0].memory",
            "node 0 holds the low memory: must be > 0",
        );
    }
}

fn check_machine(m: &Machine, c: &mut Checker) {
    if m.memory.0 < MIN_MEMORY {
        c.err(
            "machine.memory",
            format!("must be at least 64M, got {}", sz(m.memory)),
        );
    }
    // PFNs are u32 and the frame table costs 28 bytes a page: 1 TiB is 7 GiB of host RAM.
    if m.memory.0 > MAX_MEMORY {
        c.err(
            "machine.memory",
            format!("must be at most 1T, got {}", sz(m.memory)),
        );
    }
    c.range("machine.nr_cpus", m.nr_cpus, 1, 1024);
    check_nodes(m, c);
    if let Some(d) = m.dma32.filter(|d| *d > m.memory) {
        c.err(
            "machine.dma32",
            format!(
                "must not exceed machine.memory ({}), got {}",
                sz(m.memory),
                sz(d)
            ),
        );
    }
    let s = &m.swap;
    if s.kind != SwapKind::None {
        let kind = match s.kind {
            SwapKind::Zram => "zram",
            SwapKind::Ramdisk => "ramdisk",
            _ => "disk",
        };
        if s.size.0 == 0 {
            c.err(
                "machine.swap.size",
                format!("must be > 0 with swap type \"{kind}\""),
            );
        }
        if s.size.0 > MAX_MEMORY {
            c.err(
                "machine.swap.size",
                format!("must be at most 1T, got {}", sz(s.size)),
            );
        }
        let r = s.compression_ratio;
        if !(r.is_finite() && r >= 1.0) {
            c.err(
                "machine.swap.compression_ratio",
                format!("must be a finite number >= 1.0, got {r}"),
            );
        }
        // Only disk swap goes to the device; zram's is ignored.
        if s.kind == SwapKind::Disk {
            check_device("machine.swap.device", &s.device, c);
        }
    }
    check_device("machine.storage", &m.storage, c);
}

/// Files on a ramdisk take RAM for every page: they must leave a quarter of memory.
fn check_ramdisk_files(sc: &Scenario, c: &mut Checker) {
    if sc.machine.storage.kind != crate::scenario::DeviceKind::Ramdisk {
        return;
    }
    let bytes: u64 = sc
        .workloads
        .iter()
        .map(|w| match w.kind {
            WorkloadKind::FileRead | WorkloadKind::FileWrite => {
                w.nr_files.unwrap_or(1) as u64
                    * w.file_size.map_or(0, |b| b.0.next_multiple_of(4096))
            }
            WorkloadKind::Fio => {
                w.numjobs.unwrap_or(1) as u64 * w.size.map_or(0, |b| b.0.next_multiple_of(4096))
            }
            _ => 0,
        })
        .sum();
    let limit = sc.machine.memory.0 / 4 * 3;
    if bytes > limit {
        c.err(
            "machine.storage.type",
            format!(
                "the workloads' files ({} MiB) do not fit on a ramdisk in 3/4 of machine.memory ({} MiB)",
                bytes >> 20,
                limit >> 20
            ),
        );
    }
}

fn check_device(at: &str, d: &Device, c: &mut Checker) {
    c.positive(format!("{at}.read_bandwidth"), d.read_bandwidth.0);
    c.positive(format!("{at}.write_bandwidth"), d.write_bandwidth.0);
    c.positive(format!("{at}.queue_depth"), d.queue_depth.into());
    // The block layer's limits: read_ahead_kb up to what a u32 page count holds (0
    // turns readahead off), max_sectors_kb at least a page.
    c.range(format!("{at}.read_ahead_kb"), d.read_ahead_kb, 0, 1 << 30);
    c.range(format!("{at}.max_sectors_kb"), d.max_sectors_kb, 4, 1 << 30);
}

fn check_kernel(k: &Kernel, m: &Machine, c: &mut Checker) {
    let vm = &k.vm;
    // fault_around_bytes_set refuses more than a page table's span (PTRS_PER_PTE pages).
    c.range(
        "kernel.fault_around_bytes",
        k.fault_around_bytes.0,
        0,
        512 * PAGE_SIZE,
    );
    c.range("kernel.vm.swappiness", vm.swappiness, 0, 200);
    match k.numa_balancing {
        0 | 2 => {}
        1 | 3 => c.err(
            "kernel.numa_balancing",
            "normal NUMA balancing (task placement, 1 and 3) is not modelled; 0 or 2 \
             (memory tiering)",
        ),
        v => c.err("kernel.numa_balancing", format!("must be 0 or 2, got {v}")),
    }
    let nb = [
        (
            "numa_balancing_promote_rate_limit_MBps",
            k.numa_balancing_promote_rate_limit_mbps,
        ),
        (
            "numa_balancing_hot_threshold_ms",
            k.numa_balancing_hot_threshold_ms,
        ),
        (
            "numa_balancing_scan_period_min_ms",
            k.numa_balancing_scan_period_min_ms,
        ),
        (
            "numa_balancing_scan_period_max_ms",
            k.numa_balancing_scan_period_max_ms,
        ),
        ("numa_balancing_scan_size_mb", k.numa_balancing_scan_size_mb),
    ];
    for (name, v) in nb {
        if let Some(v) = v {
            c.range(format!("kernel.{name}"), v, 1, 1 << 30);
        }
    }
    if let (Some(lo), Some(hi)) = (
        k.numa_balancing_scan_period_min_ms,
        k.numa_balancing_scan_period_max_ms,
    ) {
        if lo > hi {
            c.err(
                "kernel.numa_balancing_scan_period_min_ms",
                format!("must not exceed scan_period_max_ms ({hi}), got {lo}"),
            );
        }
    }
    // A day: longer would protect every generation of any run.
    c.range(
        "kernel.lru_gen.min_ttl_ms",
        k.lru_gen.min_ttl_ms,
        0,
        86_400_000,
    );
    c.range(
        "kernel.vm.watermark_scale_factor",
        vm.watermark_scale_factor,
        1,
        3000,
    );
    c.range("kernel.vm.extfrag_threshold", vm.extfrag_threshold, 0, 1000);
    // The handlers refuse fractions below MIN_PERCPU_PAGELIST_(HIGH_)FRACTION, and
    // each sysctl exists only in its era's kernels.
    for (key, v, era) in [
        (
            "kernel.vm.percpu_pagelist_fraction",
            vm.percpu_pagelist_fraction,
            k.pcp == Pcp::V4_5,
        ),
        (
            "kernel.vm.percpu_pagelist_high_fraction",
            vm.percpu_pagelist_high_fraction,
            matches!(k.pcp, Pcp::V5_14 | Pcp::V6_7),
        ),
    ] {
        if v != 0 && v < 8 {
            c.err(key, format!("must be 0 or at least 8, got {v}"));
        } else if v != 0 && !era {
            let pcp = match k.pcp {
                Pcp::Off => "off",
                Pcp::V4_5 => "v4.5",
                Pcp::V5_14 => "v5.14",
                Pcp::V6_7 => "v6.7",
            };
            c.err(
                key,
                format!("is not a sysctl of the kernel `kernel.pcp = \"{pcp}\"` models"),
            );
        }
    }
    c.range(
        "kernel.vm.compaction_proactiveness",
        vm.compaction_proactiveness,
        0,
        100,
    );
    c.range(
        "kernel.vm.compact_unevictable_allowed",
        vm.compact_unevictable_allowed,
        0,
        1,
    );
    c.range(
        "kernel.vm.vfs_cache_pressure",
        vm.vfs_cache_pressure,
        0,
        i32::MAX as u32,
    );
    // proc_dointvec_minmax with 0..=100, and zone_reclaim_mode's three bits.
    c.range(
        "kernel.vm.zone_reclaim_mode",
        vm.zone_reclaim_mode,
        0,
        crate::mm::node_reclaim::RECLAIM_MODE_MASK,
    );
    c.range(
        "kernel.vm.min_unmapped_ratio",
        vm.min_unmapped_ratio,
        0,
        100,
    );
    c.range("kernel.vm.min_slab_ratio", vm.min_slab_ratio, 0, 100);
    c.range(
        "kernel.vm.watermark_boost_factor",
        vm.watermark_boost_factor,
        0,
        i32::MAX as u32,
    );
    if let Some(kb) = vm.min_free_kbytes {
        c.range("kernel.vm.min_free_kbytes", kb, 128, 262_144);
        let quarter = m.memory.0 / 4 / 1024;
        if kb >= quarter {
            c.err(
                "kernel.vm.min_free_kbytes",
                format!("must be below a quarter of machine.memory ({quarter}), got {kb}"),
            );
        }
    }
    let n = vm.lowmem_reserve_ratio.len();
    if !(1..=3).contains(&n) {
        c.err(
            "kernel.vm.lowmem_reserve_ratio",
            format!("must have 1 to 3 entries, got {n}"),
        );
    }
    c.range("kernel.vm.dirty_ratio", vm.dirty_ratio, 0, 100);
    c.range(
        "kernel.vm.dirty_background_ratio",
        vm.dirty_background_ratio,
        0,
        100,
    );
    let (bytes, bg_bytes) = (vm.dirty_bytes, vm.dirty_background_bytes);
    // With a *_bytes key set the ratios are not what is in force: the pair is checked
    // only when both thresholds come from the same kind of key. A mixed pair whose
    // background threshold ends up at or above the dirty one gets the kernel's
    // fallback (background = dirty / 2) at run time.
    if bytes.0 == 0 && bg_bytes.0 == 0 && vm.dirty_background_ratio >= vm.dirty_ratio {
        c.err(
            "kernel.vm.dirty_background_ratio",
            format!(
                "must be below dirty_ratio ({}), got {}",
                vm.dirty_ratio, vm.dirty_background_ratio
            ),
        );
    }
    // The kernel's sysctl table: vm.dirty_bytes has a minimum of 2 pages
    // (`dirty_bytes_min`); either size must come to at most UINT_MAX pages (-ERANGE).
    if bytes.0 != 0 && bytes.0 < 2 * PAGE_SIZE {
        c.err(
            "kernel.vm.dirty_bytes",
            format!(
                "must be 0 (use dirty_ratio) or at least 8K (2 pages), got {}",
                sz(bytes)
            ),
        );
    }
    for (key, b) in [
        ("kernel.vm.dirty_bytes", bytes),
        ("kernel.vm.dirty_background_bytes", bg_bytes),
    ] {
        if b.0.div_ceil(PAGE_SIZE) > u32::MAX as u64 {
            c.err(key, format!("must be below 16T, got {}", sz(b)));
        }
    }
    if bytes.0 != 0 && bg_bytes.0 != 0 && bg_bytes >= bytes {
        c.err(
            "kernel.vm.dirty_background_bytes",
            format!(
                "must be below dirty_bytes ({}), got {}",
                sz(bytes),
                sz(bg_bytes)
            ),
        );
    }
    c.positive(
        "kernel.vm.dirty_expire_centisecs",
        vm.dirty_expire_centisecs.into(),
    );
    c.positive(
        "kernel.vm.dirty_writeback_centisecs",
        vm.dirty_writeback_centisecs.into(),
    );
    c.range("kernel.vm.page-cluster", vm.page_cluster, 0, 10);
    if ![100, 250, 300, 1000].contains(&k.hz.0) {
        c.err(
            "kernel.HZ",
            format!("must be 100, 250, 300 or 1000, got {}", k.hz.0),
        );
    }
}

fn kind_name(k: WorkloadKind) -> &'static str {
    match k {
        WorkloadKind::Anon => "anon",
        WorkloadKind::FileRead => "file-read",
        WorkloadKind::FileWrite => "file-write",
        WorkloadKind::Kv => "kv",
        WorkloadKind::Fio => "fio",
        WorkloadKind::MmapLatency => "mmap-latency",
        WorkloadKind::AnonHog => "anon-hog",
        WorkloadKind::Phases => "phases",
        WorkloadKind::Masim => "masim",
        WorkloadKind::Slab => "slab",
        WorkloadKind::Highalloc => "highalloc",
        WorkloadKind::Trace => "trace",
    }
}

const PATTERN_KEYS: [&str; 5] = [
    "pattern",
    "skew",
    "hot_fraction",
    "hot_probability",
    "phase_change",
];

/// The kind-specific keys each kind accepts (name, kind, threads, start, stop, rate and
/// think_time apply to all).
fn kind_keys(k: WorkloadKind) -> Vec<&'static str> {
    let with_pattern = |extra: &[&'static str]| PATTERN_KEYS.iter().chain(extra).copied().collect();
    match k {
        WorkloadKind::Anon => with_pattern(&[
            "size",
            "write_ratio",
            "madvise_hugepage",
            "page_tables",
            "advice",
            "init",
            "populate",
            "mlock",
            "processes",
            "lifetime",
        ]),
        WorkloadKind::FileRead => with_pattern(&[
            "nr_files",
            "file_size",
            "io_size",
            "mmap",
            "advice",
            "page_tables",
        ]),
        WorkloadKind::FileWrite => with_pattern(&["nr_files", "file_size", "io_size", "advice"]),
        WorkloadKind::Kv => with_pattern(&[
            "keys",
            "value_size",
            "set_ratio",
            "pipeline",
            "request_time",
            "fill",
            "ramp_time",
            "madvise_hugepage",
            "page_tables",
            "populate",
            "mlock",
        ]),
        WorkloadKind::Fio => vec![
            "rw",
            "bs",
            "size",
            "numjobs",
            "iodepth",
            "runtime",
            "ramp_time",
            "rwmixread",
            "advice",
        ],
        WorkloadKind::MmapLatency => vec![
            "size",
            "processes",
            "lifetime",
            "madvise_hugepage",
            "page_tables",
            "populate",
            "mlock",
        ],
        WorkloadKind::AnonHog => vec![
            "size",
            "processes",
            "lifetime",
            "grow_by",
            "grow_every",
            "max_size",
            "write_ratio",
            "madvise_hugepage",
            "page_tables",
            "populate",
            "mlock",
        ],
        WorkloadKind::Phases => vec![
            "phase",
            "processes",
            "lifetime",
            "repeat",
            "repeat_from",
            "config",
            "madvise_hugepage",
            "page_tables",
        ],
        WorkloadKind::Masim => vec!["config", "madvise_hugepage", "page_tables"],
        WorkloadKind::Slab => vec!["object_size", "lifetime", "lifetime_dist", "slab_type"],
        WorkloadKind::Highalloc => vec!["order", "gfp", "count"],
        WorkloadKind::Trace => vec![
            "trace",
            "trace_format",
            "trace_options",
            "backing",
            "pacing",
            "time_unit",
            "loop",
            "ignore_obj_size",
            "madvise_hugepage",
            "page_tables",
            "advice",
        ],
    }
}

/// The optional keys a workload entry sets.
fn given_keys(w: &Workload) -> Vec<&'static str> {
    let mut v = Vec::new();
    macro_rules! given {
        ($($f:ident),*) => { $( if w.$f.is_some() { v.push(stringify!($f)); } )* };
    }
    given!(
        pattern,
        skew,
        hot_fraction,
        hot_probability,
        phase_change,
        write_ratio,
        madvise_hugepage,
        advice,
        init,
        populate,
        mlock,
        page_tables,
        kernel_stacks,
        size,
        nr_files,
        file_size,
        io_size,
        mmap,
        keys,
        value_size,
        set_ratio,
        pipeline,
        fill,
        request_time,
        rw,
        bs,
        numjobs,
        iodepth,
        runtime,
        ramp_time,
        rwmixread,
        grow_by,
        grow_every,
        max_size,
        repeat,
        repeat_from,
        object_size,
        lifetime,
        lifetime_dist,
        slab_type,
        order,
        gfp,
        count,
        trace,
        trace_format,
        trace_options,
        backing,
        pacing,
        time_unit,
        ignore_obj_size,
        processes
    );
    if w.loop_.is_some() {
        v.push("loop");
    }
    if !w.phases.is_empty() {
        v.push("phase");
    }
    if w.config.is_some() {
        v.push("config");
    }
    v
}

/// A size for something that gets page tables: 4K to 1T.
fn check_size(c: &mut Checker, key: String, b: Bytes) {
    if b.0 < PAGE_SIZE {
        c.err(key, format!("must be at least 4K, got {}", sz(b)));
    } else if b.0 > MAX_MEMORY {
        // Page tables cost 8 bytes a page of the host's memory.
        c.err(key, format!("must be at most 1T, got {}", sz(b)));
    }
}

/// The steps of a `phases` program (inline or from its `config` file); keys are
/// relative to the program (`phase[2].size`, `repeat`).
pub fn check_phases(
    phases: &[Phase],
    repeat: Option<u32>,
    repeat_from: Option<u32>,
) -> Vec<Problem> {
    let mut c = Checker::default();
    if phases.is_empty() {
        c.err("phase", "at least one [[phase]] is required");
    }
    for (j, p) in phases.iter().enumerate() {
        let pk = |f: &str| format!("phase[{j}].{f}");
        if p.duration.0 == 0 {
            c.err(pk("duration"), "must be > 0");
        }
        check_size(&mut c, pk("size"), p.size);
        if p.offset.0 % PAGE_SIZE != 0 {
            c.err(
                pk("offset"),
                format!("must be a multiple of 4K, got {}", sz(p.offset)),
            );
        } else if p.offset.0.saturating_add(p.size.0) > MAX_MEMORY {
            c.err(pk("offset"), "offset + size must be at most 1T");
        }
        if p.skew.is_some() && p.pattern != Pattern::Zipf {
            c.err(pk("skew"), "does not apply unless pattern = \"zipf\"");
        }
        if let Some(s) = p.skew.filter(|s| !(s.is_finite() && *s > 0.0)) {
            c.err(pk("skew"), format!("must be a finite number > 0, got {s}"));
        }
        let hot = p.pattern == Pattern::Hotcold;
        for (f, given) in [
            ("hot_fraction", p.hot_fraction.is_some()),
            ("hot_probability", p.hot_probability.is_some()),
            ("phase_change", p.phase_change.is_some()),
        ] {
            if given && !hot {
                c.err(pk(f), "does not apply unless pattern = \"hotcold\"");
            }
        }
        for (f, v) in [
            ("hot_fraction", p.hot_fraction),
            ("hot_probability", p.hot_probability),
        ] {
            if let Some(x) = v.filter(|x| !(*x > 0.0 && *x < 1.0)) {
                c.err(pk(f), format!("must be in (0, 1), got {x}"));
            }
        }
        if let Some(r) = p.write_ratio.filter(|r| !(0.0..=1.0).contains(r)) {
            c.err(pk("write_ratio"), format!("must be in [0, 1], got {r}"));
        }
    }
    if repeat == Some(0) {
        c.err("repeat", "must be at least 1");
    }
    if let Some(f) = repeat_from.filter(|f| *f as usize >= phases.len()) {
        c.err(
            "repeat_from",
            format!(
                "must name a step (0 to {}), got {f}",
                phases.len().saturating_sub(1)
            ),
        );
    }
    c.0
}

/// The most tasks one workload's processes may have together.
const MAX_PROCESS_TASKS: u64 = 4096;

/// A memory policy names nodes the machine has: preferred one, bind and the
/// interleaves at least one; weights only for weighted-interleave, one per node.
/// `cpunodebind` names nodes the machine has, each with CPUs, none twice.
fn check_cpunodebind(nodes: &[u32], m: &Machine, key: &str, c: &mut Checker) {
    let nr = m.nodes.len().max(1);
    if nodes.is_empty() {
        c.err(key, "names no node");
    }
    for (i, &n) in nodes.iter().enumerate() {
        if n as usize >= nr {
            c.err(
                key,
                format!("node {n} does not exist (the machine has {nr})"),
            );
        } else if nodes[..i].contains(&n) {
            c.err(key, format!("node {n} is named twice"));
        } else if m.nodes.get(n as usize).is_some_and(|d| d.cpus.is_empty()) {
            c.err(key, format!("node {n} has no CPUs"));
        }
    }
}

fn check_mempolicy(p: &MempolicyCfg, nr_nodes: usize, key: &str, c: &mut Checker) {
    let k = |f: &str| format!("{key}.{f}");
    let mut seen = vec![false; nr_nodes];
    for &nid in &p.nodes {
        match seen.get_mut(nid as usize) {
            None => c.err(
                k("nodes"),
                format!("node {nid} does not exist (the machine has {nr_nodes})"),
            ),
            Some(true) => c.err(k("nodes"), format!("node {nid} is named twice")),
            Some(s) => *s = true,
        }
    }
    match p.mode {
        MempolicyMode::Default | MempolicyMode::Local => {
            if !p.nodes.is_empty() {
                c.err(k("nodes"), "not allowed with mode \"default\" or \"local\"");
            }
        }
        MempolicyMode::Preferred => {
            if p.nodes.len() != 1 {
                c.err(k("nodes"), "mode \"preferred\" takes one node");
            }
        }
        MempolicyMode::Bind | MempolicyMode::Interleave | MempolicyMode::WeightedInterleave => {
            if p.nodes.is_empty() {
                c.err(k("nodes"), "needs at least one node");
            }
        }
    }
    if !p.weights.is_empty() {
        if p.mode != MempolicyMode::WeightedInterleave {
            c.err(k("weights"), "only with mode \"weighted-interleave\"");
        } else if p.weights.len() != nr_nodes {
            c.err(
                k("weights"),
                format!(
                    "needs a weight per node ({nr_nodes}), got {}",
                    p.weights.len()
                ),
            );
        } else if let Some(w) = p.weights.iter().find(|w| !(1..=255).contains(*w)) {
            c.err(
                k("weights"),
                format!("each weight must be in 1..=255, got {w}"),
            );
        }
    }
}

fn check_workloads(sc: &Scenario, c: &mut Checker) {
    if sc.workloads.is_empty() {
        c.err("workload", "at least one [[workload]] is required");
    }
    let end = sc.run.duration;
    let mut names: HashMap<&str, usize> = HashMap::new();
    for (i, w) in sc.workloads.iter().enumerate() {
        let k = |field: &str| format!("workload[{i}].{field}");
        if let Some(why) = bad_name(&w.name, &[]) {
            c.err(k("name"), why);
        } else if let Some(first) = names.get(w.name.as_str()) {
            c.err(
                k("name"),
                format!(
                    "duplicate workload name `{}` (also workload[{first}])",
                    w.name
                ),
            );
        } else {
            names.insert(&w.name, i);
        }
        c.range(k("threads"), w.threads, 1, 1024);
        if let Some(p) = &w.mempolicy {
            check_mempolicy(p, sc.machine.nodes.len().max(1), &k("mempolicy"), c);
        }
        if let Some(nodes) = &w.cpunodebind {
            check_cpunodebind(nodes, &sc.machine, &k("cpunodebind"), c);
        }
        if let Some(n) = w.processes {
            c.range(k("processes"), n, 1, 1024);
            if w.ops.is_some_and(|ops| ops < n as u64) {
                c.err(
                    k("ops"),
                    format!("must be at least `processes` ({n}): each process does its share"),
                );
            }
            if n as u64 * w.threads as u64 > MAX_PROCESS_TASKS {
                c.err(
                    k("processes"),
                    format!(
                        "processes × threads must be at most {MAX_PROCESS_TASKS}, got {n} × {}",
                        w.threads
                    ),
                );
            }
        }
        if w.process_lifetime() == Some(Nanos(0)) {
            c.err(k("lifetime"), "must be > 0");
        }
        // A start_after chain and a DAMON vaddr target name one process.
        if w.is_several_processes() {
            if w.start_after.is_some() {
                c.err(
                    k("start_after"),
                    "does not combine with `processes` > 1 or a process `lifetime`",
                );
            }
            if let Some(j) = sc
                .workloads
                .iter()
                .position(|o| o.start_after.as_deref() == Some(w.name.as_str()))
            {
                c.err(
                    format!("workload[{j}].start_after"),
                    format!(
                        "`{}` is several processes (`processes` or a process `lifetime`): nothing to wait for",
                        w.name
                    ),
                );
            }
        }
        if w.ops == Some(0) {
            c.err(k("ops"), "must be at least 1 (leave it out for no limit)");
        }
        if w.start >= end {
            c.err(
                k("start"),
                format!(
                    "must be before the end of the run ({}), got {}",
                    tm(end),
                    tm(w.start)
                ),
            );
        }
        if let Some(adj) = w.oom_score_adj {
            c.range(k("oom_score_adj"), adj, -1000, 1000);
        }
        if let Some(stop) = w.stop.filter(|s| *s <= w.start) {
            c.err(
                k("stop"),
                format!("must be after start ({}), got {}", tm(w.start), tm(stop)),
            );
        }

        if let Some(after) = &w.start_after {
            match sc.workloads.iter().position(|o| &o.name == after) {
                None => c.err(k("start_after"), format!("no workload is named `{after}`")),
                Some(j) if j == i => c.err(k("start_after"), "a workload cannot wait for itself"),
                Some(_) => {
                    // Follow the chain: it must end at a workload that starts.
                    let mut seen = vec![i];
                    let mut cur = w.start_after.clone();
                    while let Some(name) = cur {
                        let Some(j) = sc.workloads.iter().position(|o| o.name == name) else {
                            break;
                        };
                        if seen.contains(&j) {
                            c.err(
                                k("start_after"),
                                format!(
                                    "`{after}` waits, directly or not, for `{}`: a cycle",
                                    w.name
                                ),
                            );
                            break;
                        }
                        seen.push(j);
                        cur = sc.workloads[j].start_after.clone();
                    }
                }
            }
        }
        let kind = kind_name(w.kind);
        let for_kind = format!("for kind \"{kind}\"");
        // Keys that do not apply to this kind are errors, not silently ignored.
        let mut allowed = kind_keys(w.kind);
        allowed.push("kernel_stacks"); // every kind's threads have one
        for field in given_keys(w) {
            if allowed.contains(&field) {
                continue;
            }
            if field == "populate" || field == "mlock" {
                c.forbid(
                    k(field),
                    true,
                    &format!(
                        "{for_kind}: it applies to the anonymous mapping of kinds \"anon\", \"kv\", \"anon-hog\" and \"mmap-latency\""
                    ),
                );
            } else {
                c.forbid(k(field), true, &for_kind);
            }
        }
        let need_size = |c: &mut Checker, field: &str, v: Option<Bytes>| match v {
            None => c.err(k(field), format!("required {for_kind}")),
            Some(b) => check_size(c, k(field), b),
        };
        if w.kind == WorkloadKind::Anon && w.advice == Some(Advice::Noreuse) {
            c.err(
                k("advice"),
                "\"noreuse\" is file advice (POSIX_FADV_NOREUSE); an anonymous mapping takes \"normal\", \"random\" or \"sequential\"",
            );
        }
        match w.kind {
            WorkloadKind::Anon | WorkloadKind::MmapLatency => need_size(c, "size", w.size),
            WorkloadKind::FileRead | WorkloadKind::FileWrite => {
                match w.nr_files {
                    None => c.err(k("nr_files"), format!("required {for_kind}")),
                    Some(0) => c.err(k("nr_files"), "must be at least 1, got 0"),
                    Some(n) if w.file_size.is_some_and(|fs| n as u64 * fs.0 > MAX_MEMORY) => c.err(
                        k("nr_files"),
                        format!(
                            "nr_files × file_size must be at most 1T, got {n} × {}",
                            sz(w.file_size.unwrap())
                        ),
                    ),
                    Some(_) => {}
                }
                need_size(c, "file_size", w.file_size);
                if let Some(io) = w.io_size {
                    if io.0 == 0 || io.0 % PAGE_SIZE != 0 {
                        c.err(
                            k("io_size"),
                            format!("must be a positive multiple of 4K, got {}", sz(io)),
                        );
                    } else if let Some(fs) = w.file_size.filter(|fs| io > *fs) {
                        c.err(
                            k("io_size"),
                            format!("must not exceed file_size ({}), got {}", sz(fs), sz(io)),
                        );
                    }
                }
            }
            WorkloadKind::Kv => {
                match w.keys {
                    None => c.err(k("keys"), format!("required {for_kind}")),
                    Some(0) => c.err(k("keys"), "must be at least 1, got 0"),
                    Some(_) => {}
                }
                match w.value_size {
                    None => c.err(k("value_size"), format!("required {for_kind}")),
                    Some(v) if v.0 == 0 => c.err(k("value_size"), "must be at least 1 byte"),
                    Some(v) if w.keys.is_some_and(|n| n.saturating_mul(v.0) > MAX_MEMORY) => {
                        c.err(k("value_size"), "keys × value_size must be at most 1T")
                    }
                    Some(_) => {}
                }
                if let Some(r) = w.set_ratio.filter(|r| !(0.0..=1.0).contains(r)) {
                    c.err(k("set_ratio"), format!("must be in [0, 1], got {r}"));
                }
                if let Some(p) = w.pipeline {
                    c.range(k("pipeline"), p, 1, 1024);
                }
            }
            WorkloadKind::Fio => {
                if w.rw.is_none() {
                    c.err(k("rw"), format!("required {for_kind}"));
                }
                need_size(c, "size", w.size);
                if w.threads != 1 {
                    c.err(k("threads"), "fio jobs are set with numjobs");
                }
                let bs = w.bs.unwrap_or(Bytes(PAGE_SIZE));
                if bs.0 == 0 || bs.0 % PAGE_SIZE != 0 {
                    c.err(
                        k("bs"),
                        format!("must be a positive multiple of 4K, got {}", sz(bs)),
                    );
                } else if w.size.is_some_and(|s| bs > s) {
                    c.err(k("bs"), format!("must not exceed size, got {}", sz(bs)));
                }
                if let Some(n) = w.numjobs {
                    c.range(k("numjobs"), n, 1, 1024);
                }
                if let Some(d) = w.iodepth {
                    c.range(k("iodepth"), d, 1, 65536);
                }
                if let Some(m) = w.rwmixread {
                    c.range(k("rwmixread"), m, 0, 100);
                    if w.rw != Some(FioRw::Randrw) {
                        c.err(k("rwmixread"), "only applies with rw = \"randrw\"");
                    }
                }
                if let (Some(ramp), Some(run)) = (w.ramp_time, w.runtime) {
                    if ramp >= run {
                        c.err(
                            k("ramp_time"),
                            format!("must be below runtime ({}), got {}", tm(run), tm(ramp)),
                        );
                    }
                }
                if w.runtime == Some(Nanos(0)) {
                    c.err(k("runtime"), "must be > 0");
                }
            }
            WorkloadKind::AnonHog => {
                need_size(c, "size", w.size);
                if w.grow_by.is_some() != w.grow_every.is_some() {
                    c.err(k("grow_by"), "grow_by and grow_every go together");
                }
                if w.grow_every == Some(Nanos(0)) {
                    c.err(k("grow_every"), "must be > 0");
                }
                if w.grow_by.is_some() {
                    match (w.max_size, w.size) {
                        (None, _) => c.err(k("max_size"), "required with grow_by"),
                        (Some(m), Some(s)) if m < s => c.err(
                            k("max_size"),
                            format!("must be at least size ({}), got {}", sz(s), sz(m)),
                        ),
                        (Some(m), _) => check_size(c, k("max_size"), m),
                    }
                }
            }
            WorkloadKind::Highalloc => {
                match w.order {
                    None => c.err(k("order"), format!("required {for_kind}")),
                    Some(o) => c.range(k("order"), o, 0, 10),
                }
                match w.gfp.as_deref() {
                    None => c.err(k("gfp"), format!("required {for_kind}")),
                    Some(g) => {
                        if let Err(e) = crate::mm::page_alloc::parse_gfp(g) {
                            c.err(k("gfp"), e);
                        }
                    }
                }
                if w.rate.is_none() {
                    c.err(
                        k("rate"),
                        format!("required {for_kind} (attempts per second per thread)"),
                    );
                }
                if w.count == Some(0) {
                    c.err(k("count"), "must be at least 1");
                }
            }
            WorkloadKind::Slab => {
                match w.object_size {
                    None => c.err(k("object_size"), format!("required {for_kind}")),
                    Some(b) if b.0 == 0 || b.0 > 4 << 20 => c.err(
                        k("object_size"),
                        format!("must be 1 byte to 4M (a max-order page), got {}", sz(b)),
                    ),
                    _ => {}
                }
                match w.lifetime {
                    None => c.err(k("lifetime"), format!("required {for_kind}")),
                    Some(Nanos(0)) => c.err(k("lifetime"), "must be > 0"),
                    _ => {}
                }
                if w.rate.is_none() {
                    c.err(
                        k("rate"),
                        format!("required {for_kind} (objects allocated per second per thread)"),
                    );
                }
            }
            WorkloadKind::Trace => {
                if w.trace.is_none() {
                    c.err(k("trace"), format!("required {for_kind} (the trace file)"));
                }
                if w.threads != 1 {
                    c.err(
                        k("threads"),
                        "a trace is one thread's requests: give each thread a workload",
                    );
                }
                if let Some(f) = &w.trace_format {
                    if crate::trace::Format::parse(f).is_none() {
                        c.err(
                            k("trace_format"),
                            format!("`{f}`: expected oracleGeneral, csv, text, lackey or damo"),
                        );
                    }
                }
                if let Some(o) = &w.trace_options {
                    if let Err(e) = crate::trace::csv::CsvOptions::parse(o) {
                        c.err(k("trace_options"), e);
                    }
                }
                if w.pacing == Some(crate::scenario::schema::TracePacing::Timestamps) {
                    if w.rate.is_some() {
                        c.err(
                            k("rate"),
                            "pacing = \"timestamps\" paces the requests already",
                        );
                    }
                    // The format (as the loader will read it) must carry times.
                    let format = w
                        .trace_format
                        .as_deref()
                        .and_then(crate::trace::Format::parse)
                        .or_else(|| {
                            w.trace
                                .as_deref()
                                .map(|t| crate::trace::Format::guess(std::path::Path::new(t)))
                        });
                    let format = match (format, &w.trace_options) {
                        (Some(crate::trace::Format::Csv(_)), Some(o)) => {
                            crate::trace::csv::CsvOptions::parse(o)
                                .ok()
                                .map(crate::trace::Format::Csv)
                        }
                        (f, _) => f,
                    };
                    if format.is_some_and(|f| !f.has_time()) {
                        c.err(
                            k("pacing"),
                            "this trace has no timestamps (a CSV needs time-col): pace it \
                             by `rate`, or not at all",
                        );
                    }
                }
                if w.time_unit == Some(Nanos(0)) {
                    c.err(k("time_unit"), "must be > 0");
                }
            }
            WorkloadKind::Masim => {
                if w.config.is_none() {
                    c.err(
                        k("config"),
                        format!("required {for_kind} (a masim .cfg file)"),
                    );
                }
            }
            WorkloadKind::Phases => match (w.phases.is_empty(), &w.config) {
                (true, None) => c.err(
                    k("phase"),
                    "at least one [[workload.phase]] (or a `config` file of them) is required",
                ),
                (false, Some(_)) => c.err(
                    k("config"),
                    "give the steps inline ([[workload.phase]]) or in a `config` file, not both",
                ),
                (false, None) => {
                    for p in check_phases(&w.phases, w.repeat, w.repeat_from) {
                        c.err(k(&p.key), p.message);
                    }
                }
                (true, Some(_)) => {
                    for f in ["repeat", "repeat_from"] {
                        let given = if f == "repeat" {
                            w.repeat
                        } else {
                            w.repeat_from
                        };
                        c.forbid(k(f), given.is_some(), "with `config` (the file says it)");
                    }
                }
            },
        }

        let pattern = w.pattern.unwrap_or(Pattern::Uniform);
        let only_with = |c: &mut Checker, field: &str, given: bool, p: Pattern, name: &str| {
            let why = format!("unless pattern = \"{name}\"");
            c.forbid(k(field), given && pattern != p, &why);
        };
        only_with(c, "skew", w.skew.is_some(), Pattern::Zipf, "zipf");
        if let Some(s) = w.skew.filter(|s| !(s.is_finite() && *s > 0.0)) {
            c.err(k("skew"), format!("must be a finite number > 0, got {s}"));
        }
        for (field, v) in [
            ("hot_fraction", w.hot_fraction),
            ("hot_probability", w.hot_probability),
        ] {
            only_with(c, field, v.is_some(), Pattern::Hotcold, "hotcold");
            if let Some(f) = v.filter(|f| !(*f > 0.0 && *f < 1.0)) {
                c.err(
                    k(field),
                    format!("must be strictly between 0 and 1, got {f}"),
                );
            }
        }
        let given = w.phase_change.is_some();
        only_with(c, "phase_change", given, Pattern::Hotcold, "hotcold");
        if let Some(r) = w.write_ratio.filter(|r| !(0.0..=1.0).contains(r)) {
            c.err(k("write_ratio"), format!("must be in [0, 1], got {r}"));
        }
        if let Some(r) = w.rate.filter(|r| !(r.is_finite() && *r > 0.0)) {
            c.err(k("rate"), format!("must be a finite number > 0, got {r}"));
        }
        if w.rate.is_some() && w.think_time.is_some() {
            c.err(k("think_time"), "cannot be combined with rate");
        }
    }
}

/// Actions are applied in time order to one copy of the scenario, as the simulator will, so
/// each value is checked against the settings in force when it is written.
fn check_actions(sc: &Scenario, c: &mut Checker) {
    let mut order: Vec<usize> = (0..sc.actions.len()).collect();
    order.sort_by_key(|&i| sc.actions[i].at);
    let mut live = sc.clone();
    // Each named open file, where it was opened: (cgroup, file, the action naming it).
    let mut fds: HashMap<&str, (&str, &str, usize)> = HashMap::new();
    for i in order {
        let a = &sc.actions[i];
        if a.read.is_none() && a.value.is_none() {
            c.err(
                format!("action[{i}].value"),
                "missing: every action but a `read` writes a value",
            );
            continue;
        }
        if let Some(name) = &a.fd {
            let file = a.write.as_deref().or(a.read.as_deref());
            match (a.cgroup.as_deref(), file) {
                (Some(cg), Some(file)) if CGROUP_PER_FD.contains(&file) => {
                    if let Some(why) = bad_fd_name(name) {
                        c.err(format!("action[{i}].fd"), why);
                        continue;
                    }
                    let first = *fds.entry(name).or_insert((cg, file, i));
                    if (first.0, first.1) != (cg, file) {
                        c.err(
                            format!("action[{i}].fd"),
                            format!(
                                "`{name}` is already open on {}/{} (action[{}]): an open file \
                                 is one cgroup's file; give this one another name",
                                first.0, first.1, first.2
                            ),
                        );
                        continue;
                    }
                }
                _ => {
                    c.err(
                        format!("action[{i}].fd"),
                        format!(
                            "only a cgroup's {} is written or read through a named open file",
                            CGROUP_PER_FD.join(" or ")
                        ),
                    );
                    continue;
                }
            }
        }
        if a.at >= sc.run.duration {
            c.err(
                format!("action[{i}].at"),
                format!(
                    "must be before the end of the run ({}), got {}",
                    tm(sc.run.duration),
                    tm(a.at)
                ),
            );
        }
        if let Some(name) = &a.sysctl {
            if a.set.is_some()
                || a.cgroup.is_some()
                || a.write.is_some()
                || a.read.is_some()
                || a.debugfs.is_some()
            {
                c.err(
                    format!("action[{i}]"),
                    "give one of `set`, `cgroup` and `write`, `debugfs`, or `sysctl`",
                );
            } else if name == "vm.compact_memory" {
                if a.value.as_ref().and_then(|v| v.as_integer()) != Some(1) {
                    c.err(format!("action[{i}].value"), "vm.compact_memory takes 1");
                }
            } else if name == "vm.drop_caches" {
                if !matches!(a.value.as_ref().and_then(|v| v.as_integer()), Some(1..=3)) {
                    c.err(
                        format!("action[{i}].value"),
                        "vm.drop_caches takes 1, 2 or 3",
                    );
                }
            } else {
                c.err(
                    format!("action[{i}].sysctl"),
                    format!(
                        "`{name}` is not a write-only sysctl here (vm.compact_memory and \
                         vm.drop_caches are)"
                    ),
                );
            }
            continue;
        }
        if let Some(file) = &a.debugfs {
            if a.set.is_some() || a.cgroup.is_some() || a.write.is_some() || a.read.is_some() {
                c.err(
                    format!("action[{i}]"),
                    "give one of `set`, `cgroup` and `write`, or `debugfs`",
                );
            } else if file != "lru_gen" {
                c.err(
                    format!("action[{i}].debugfs"),
                    format!("`{file}` cannot be written (the one debugfs file is lru_gen)"),
                );
            } else if sc.kernel.lru != crate::scenario::LruKind::Mglru {
                c.err(
                    format!("action[{i}].debugfs"),
                    "lru_gen needs the multi-gen LRU (kernel.lru = \"mglru\")",
                );
            } else {
                let nr_memcgs = sc.cgroups.len() + 1;
                match a.value.as_ref().and_then(|v| v.as_str()) {
                    None => c.err(
                        format!("action[{i}].value"),
                        "expected the commands as a string, e.g. \"+ 1 0 7\"",
                    ),
                    Some(text) => {
                        let nr_nodes = sc.machine.nodes.len().max(1);
                        if let Err(e) =
                            crate::mm::lru_gen::parse_lru_gen_cmds(text, nr_memcgs, nr_nodes)
                        {
                            c.err(format!("action[{i}].value"), e);
                        }
                    }
                }
            }
            continue;
        }
        let value = a.value.as_ref();
        let set = match (&a.set, &a.cgroup, &a.write, &a.read) {
            (Some(s), None, None, None) => s,
            (None, Some(cg), None, Some(file)) => {
                if value.is_some() {
                    c.err(
                        format!("action[{i}].value"),
                        "a read writes nothing: drop `value`",
                    );
                    continue;
                }
                if cg != "/" && !sc.cgroups.iter().any(|x| &x.path == cg) {
                    c.err(format!("action[{i}].cgroup"), format!("no cgroup `{cg}`"));
                    continue;
                }
                if !CGROUP_READABLE.contains(&file.as_str()) {
                    c.err(
                        format!("action[{i}].read"),
                        format!(
                            "`{file}` cannot be read (one of {})",
                            CGROUP_READABLE.join(", ")
                        ),
                    );
                } else if cg == "/" {
                    c.err(
                        format!("action[{i}].read"),
                        format!("the root cgroup has no {file}: read it in a child cgroup"),
                    );
                }
                continue;
            }
            (None, Some(cg), Some(file), None) => {
                let Some(value) = value else {
                    continue; // reported above
                };
                if cg != "/" && !sc.cgroups.iter().any(|x| &x.path == cg) {
                    c.err(format!("action[{i}].cgroup"), format!("no cgroup `{cg}`"));
                }
                if cg == "/" && NOT_ON_ROOT.contains(&file.as_str()) {
                    c.err(
                        format!("action[{i}].write"),
                        format!(
                            "the root cgroup has no {file} (cgroup v2 has no limits or \
                             protection at the root): write it in a child cgroup"
                        ),
                    );
                    continue;
                }
                if !CGROUP_WRITABLE.contains(&file.as_str()) {
                    c.err(
                        format!("action[{i}].write"),
                        format!(
                            "`{file}` cannot be written (one of {})",
                            CGROUP_WRITABLE.join(", ")
                        ),
                    );
                    continue;
                }
                if cg == "/" && file != "memory.reclaim" {
                    c.err(
                        format!("action[{i}].write"),
                        format!("the root cgroup has no {file}: write it in a child cgroup"),
                    );
                    continue;
                }
                if file == "memory.oom.group" {
                    // memory_oom_group_write: kstrtoint, then 0 or 1.
                    if oom_group_value(value).is_none() {
                        c.err(
                            format!("action[{i}].value"),
                            format!("memory.oom.group takes 0 or 1, got `{value}`"),
                        );
                    }
                    continue;
                }
                if CGROUP_PER_FD.contains(&file.as_str()) {
                    // peak_write: any non-empty string resets (`echo reset > memory.peak`).
                    let ok = match value {
                        toml::Value::String(v) => !v.is_empty(),
                        toml::Value::Integer(_) => true,
                        _ => false,
                    };
                    if !ok {
                        c.err(
                            format!("action[{i}].value"),
                            format!(
                                "{file} takes any non-empty string (e.g. \"reset\"), got `{value}`"
                            ),
                        );
                    }
                    continue;
                }
                if let Some(Err(why)) = value
                    .as_str()
                    .filter(|v| super::size_expr::is_expr(v))
                    .map(super::size_expr::parse)
                {
                    c.err(format!("action[{i}].value"), why);
                    continue;
                }
                let ok = match value {
                    toml::Value::String(v) => {
                        v == "max" || units::parse_size(v).is_ok() || super::size_expr::is_expr(v)
                    }
                    toml::Value::Integer(n) => *n >= 0,
                    _ => false,
                };
                if !ok
                    || (file.as_str() != "memory.high"
                        && file.as_str() != "memory.max"
                        && value.as_str() == Some("max"))
                {
                    c.err(
                        format!("action[{i}].value"),
                        format!("`{value}` is not a size for {file}"),
                    );
                }
                continue;
            }
            (None, Some(_), Some(_), Some(_)) => {
                c.err(format!("action[{i}]"), "give `write` or `read`, not both");
                continue;
            }
            _ => {
                c.err(
                    format!("action[{i}]"),
                    "give either `set`, or `cgroup` and `write` (or `read`)",
                );
                continue;
            }
        };
        let damon = set.starts_with("damon.") || set.starts_with("damon_reclaim.");
        if !set.starts_with("kernel.") && !damon {
            c.err(
                format!("action[{i}].set"),
                format!(
                    "`{set}` cannot be set at run time (only keys under `kernel.`, `damon.` and `damon_reclaim.`)"
                ),
            );
            continue;
        }
        // A boot option: kernel memory charged under one setting would be uncharged
        // under the other.
        if set == "kernel.memcg_kmem" {
            c.err(
                format!("action[{i}].set"),
                "`kernel.memcg_kmem` is a boot option (cgroup.memory=nokmem): it cannot be set at run time",
            );
            continue;
        }
        // The kdamonds are made at boot: an action may change them, not add one.
        let nr_kdamonds = |sc: &Scenario| {
            sc.damon.as_ref().map_or(0, |d| d.kdamonds.len()) + sc.damon_reclaim.is_some() as usize
        };
        let before = nr_kdamonds(&live);
        let lru_before = live.kernel.lru;
        let Some(value) = value else {
            continue; // reported above
        };
        if let Err(e) = super::apply_key(&mut live, set, value) {
            let field = if e.bad_key { "set" } else { "value" };
            c.err(format!("action[{i}].{field}"), e.to_string());
            continue;
        }
        let lru_after = live.kernel.lru;
        if lru_after != lru_before && (lru_before.is_research() || lru_after.is_research()) {
            c.err(
                format!("action[{i}].value"),
                format!(
                    "a research policy (`{}`) is chosen at boot: kernel.lru cannot switch \
                     between it and `{}` at run time (classic and mglru can)",
                    if lru_before.is_research() {
                        lru_before.name()
                    } else {
                        lru_after.name()
                    },
                    if lru_before.is_research() {
                        lru_after.name()
                    } else {
                        lru_before.name()
                    },
                ),
            );
            continue;
        }
        if damon {
            if nr_kdamonds(&live) != before {
                c.err(
                    format!("action[{i}].set"),
                    format!("`{set}` would add a kdamond at run time; configure it (off) in the scenario"),
                );
                continue;
            }
            let mut inner = Checker::default();
            check_damon(&live, &mut inner);
            if let Some(p) = inner.0.first() {
                c.err(
                    format!("action[{i}].value"),
                    format!("{}: {}", p.key, p.message),
                );
            }
        }
    }
}
