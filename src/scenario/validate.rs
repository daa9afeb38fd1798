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
    c.0
}

/// Everything but the actions: what must still hold after an action changes a key (checking
/// actions there would recurse, and they were checked at load time).
pub(crate) fn validate_static(sc: &Scenario) -> Vec<Problem> {
    let mut c = Checker::default();
    check_static(sc, &mut c);
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
        if w.kind != WorkloadKind::Anon && w.io_size.is_none() {
            w.io_size = Some(Bytes(PAGE_SIZE));
        }
    }
}

fn check_static(sc: &Scenario, c: &mut Checker) {
    check_run(&sc.run, c);
    check_machine(&sc.machine, c);
    check_kernel(&sc.kernel, &sc.machine, c);
    check_workloads(sc, c);
}

fn check_run(r: &Run, c: &mut Checker) {
    c.positive("run.duration", r.duration.0);
    c.positive("run.sample_interval", r.sample_interval.0);
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
    if !(1_000..=10_000_000).contains(&r.slice.0) {
        c.err(
            "run.slice",
            format!("must be in 1us..=10ms, got {}", tm(r.slice)),
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
    // PFNs are u32 and the frame table costs 32 bytes a page: 1 TiB is 8 GiB of host RAM.
    if m.memory.0 > MAX_MEMORY {
        c.err(
            "machine.memory",
            format!("must be at most 1T, got {}", sz(m.memory)),
        );
    }
    c.range("machine.nr_cpus", m.nr_cpus, 1, 1024);
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
        let kind = if s.kind == SwapKind::Zram {
            "zram"
        } else {
            "disk"
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

fn check_device(at: &str, d: &Device, c: &mut Checker) {
    c.positive(format!("{at}.read_bandwidth"), d.read_bandwidth.0);
    c.positive(format!("{at}.write_bandwidth"), d.write_bandwidth.0);
    c.positive(format!("{at}.queue_depth"), d.queue_depth.into());
}

fn check_kernel(k: &Kernel, m: &Machine, c: &mut Checker) {
    let vm = &k.vm;
    c.range("kernel.vm.swappiness", vm.swappiness, 0, 200);
    c.range(
        "kernel.vm.watermark_scale_factor",
        vm.watermark_scale_factor,
        1,
        3000,
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
    if vm.dirty_background_ratio >= vm.dirty_ratio {
        c.err(
            "kernel.vm.dirty_background_ratio",
            format!(
                "must be below dirty_ratio ({}), got {}",
                vm.dirty_ratio, vm.dirty_background_ratio
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
        if w.name.trim().is_empty() {
            c.err(k("name"), "must not be empty");
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
        if let Some(stop) = w.stop.filter(|s| *s <= w.start) {
            c.err(
                k("stop"),
                format!("must be after start ({}), got {}", tm(w.start), tm(stop)),
            );
        }

        let kind = kind_name(w.kind);
        let for_kind = format!("for kind \"{kind}\"");
        let need_size = |c: &mut Checker, field: &str, v: Option<Bytes>| match v {
            None => c.err(k(field), format!("required {for_kind}")),
            Some(b) if b.0 < PAGE_SIZE => {
                c.err(k(field), format!("must be at least 4K, got {}", sz(b)))
            }
            // Page tables cost 8 bytes a page of the host's memory.
            Some(b) if b.0 > MAX_MEMORY => {
                c.err(k(field), format!("must be at most 1T, got {}", sz(b)))
            }
            Some(_) => {}
        };
        match w.kind {
            WorkloadKind::Anon => {
                need_size(c, "size", w.size);
                c.forbid(k("nr_files"), w.nr_files.is_some(), &for_kind);
                c.forbid(k("file_size"), w.file_size.is_some(), &for_kind);
                c.forbid(k("io_size"), w.io_size.is_some(), &for_kind);
                c.forbid(k("mmap"), w.mmap.is_some(), &for_kind);
            }
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
                // `size` is the anon working set; files are sized by nr_files * file_size.
                c.forbid(k("size"), w.size.is_some(), &for_kind);
                c.forbid(k("write_ratio"), w.write_ratio.is_some(), &for_kind);
                if w.kind == WorkloadKind::FileWrite {
                    c.forbid(k("mmap"), w.mmap.is_some(), &for_kind);
                }
            }
        }

        let only_with = |c: &mut Checker, field: &str, given: bool, p: Pattern, name: &str| {
            let why = format!("unless pattern = \"{name}\"");
            c.forbid(k(field), given && w.pattern != p, &why);
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
    for i in order {
        let a = &sc.actions[i];
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
        if !a.set.starts_with("kernel.") {
            c.err(
                format!("action[{i}].set"),
                format!(
                    "`{}` cannot be set at run time (only keys under `kernel.`)",
                    a.set
                ),
            );
            continue;
        }
        if let Err(e) = super::apply_key(&mut live, &a.set, &a.value) {
            let field = if e.bad_key { "set" } else { "value" };
            c.err(format!("action[{i}].{field}"), e.to_string());
        }
    }
}
