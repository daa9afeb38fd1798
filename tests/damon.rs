//! DAMON, DAMOS and DAMON_RECLAIM: behaviour worked out from kernel-reference §6.

mod common;

use common::run_checked;
use reclaimsim::report::results::Results;
use reclaimsim::scenario;
use reclaimsim::sim::{RunOptions, Simulation};
use reclaimsim::stats::trace::Tracer;

/// A 1 GiB machine with zram; `app` touches `touched` once (100 ms, sequential),
/// then accesses its first 64 MiB uniformly, as fast as it can, for the rest of the
/// run: 64 MiB hot, the rest cold from t = 0.1 s.
fn hot_cold(touched: &str, duration: &str, damon: &str) -> String {
    format!(
        r#"
[run]
duration = "{duration}"
sample_interval = "1s"
[machine]
memory = "1G"
nr_cpus = 2
[machine.swap]
type = "zram"
size = "1G"
[[workload]]
name = "app"
kind = "phases"
[[workload.phase]]
duration = "100ms"
size = "{touched}"
pattern = "sequential"
[[workload.phase]]
duration = "60s"
size = "64M"
pattern = "uniform"
{damon}
"#
    )
}

const VADDR_PAGEOUT: &str = r#"
[[damon.kdamonds]]
state = "on"
[[damon.kdamonds.contexts]]
operations = "vaddr"
[[damon.kdamonds.contexts.targets]]
pid_target = "app"
[[damon.kdamonds.contexts.schemes]]
action = "pageout"
access_pattern.nr_accesses.max = 0
access_pattern.age.min = 30
"#;

/// The `damon_aggregated` lines of a run: (time s, start, end, nr_accesses, age).
fn aggregated(text: &str) -> Vec<(f64, u64, u64, u32, u32)> {
    let sc = scenario::parse_str(text, "t.toml", &[]).unwrap();
    let mut sim = Simulation::new(sc);
    sim.enable_trace(Tracer::parse("damon_aggregated", 1_000_000).unwrap());
    let out = reclaimsim::report::run_with_series(sim, RunOptions::default()).unwrap();
    let trace = out.trace.unwrap();
    trace
        .lines()
        .filter_map(|l| {
            let (head, fields) = l.split_once(" damon_aggregated: ")?;
            let t: f64 = head
                .trim_end_matches(':')
                .rsplit(' ')
                .next()?
                .parse()
                .ok()?;
            let (_, range) = fields.split_once("nr_regions=")?;
            let (_, range) = range.split_once(' ')?;
            let (range, counts) = range.split_once(": ")?;
            let (s, e) = range.split_once('-')?;
            let (n, a) = counts.split_once(' ')?;
            Some((
                t,
                s.parse().ok()?,
                e.parse().ok()?,
                n.parse().ok()?,
                a.parse().ok()?,
            ))
        })
        .collect()
}

#[test]
fn cold_regions_are_found_within_a_few_aggregations() {
    // 512 MiB touched, 64 MiB of it hot. The hot pages are accessed ~600 times a
    // second each (10 M accesses/s over 16384 pages), so every 5 ms sample finds a
    // hot page accessed: a hot region counts all 20 samples of its 100 ms window.
    // A cold page is never accessed again: 0. By t = 1 s (9 aggregations, regions
    // split from 10 towards finer ones) the windows must say so.
    let text = hot_cold("512M", "1500ms", &VADDR_PAGEOUT.replace("pageout", "stat"));
    let lines = aggregated(&text);
    assert!(!lines.is_empty(), "no damon_aggregated lines");
    let base = 0x7f00_0000_0000u64;
    let hot_end = base + (64 << 20);
    let late: Vec<_> = lines.iter().filter(|l| l.0 >= 1.0).collect();
    assert!(!late.is_empty());
    for &&(t, s, e, n, _) in &late {
        if e <= hot_end {
            // P(a 5 ms sample misses a hot page) = e^-3 ≈ 5 %: 19 of 20 on average.
            assert!(n >= 14, "hot region {s:x}-{e:x} at {t}: nr_accesses {n}");
        } else if s >= hot_end {
            assert_eq!(n, 0, "cold region {s:x}-{e:x} at {t}");
        }
    }
    // Both kinds are there.
    assert!(late.iter().any(|l| l.2 <= hot_end) && late.iter().any(|l| l.1 >= hot_end));
    // And at every aggregation the regions tile the mapping: in address order, each
    // starting where the one before ended, from its first byte to its last.
    let mut times: Vec<f64> = lines.iter().map(|l| l.0).collect();
    times.dedup();
    assert!(times.len() >= 10, "{}", times.len());
    for t in times {
        let mut regions: Vec<(u64, u64)> = lines
            .iter()
            .filter(|l| l.0 == t)
            .map(|l| (l.1, l.2))
            .collect();
        regions.sort();
        assert_eq!(regions[0].0, base, "at {t}");
        assert_eq!(regions.last().unwrap().1, base + (512 << 20), "at {t}");
        for w in regions.windows(2) {
            assert_eq!(w[0].1, w[1].0, "at {t}: {regions:x?}");
        }
    }
}

#[test]
fn pageout_of_cold_regions_frees_memory_through_swap() {
    // Cold for age >= 30 aggregations (3 s) and not accessed: the 448 MiB touched
    // once are paged out (zram), the 64 MiB hot set stays. Without the scheme the
    // machine has room for all of it and swaps nothing.
    let with = run_checked(&hot_cold("512M", "10s", VADDR_PAGEOUT), &[]);
    let without = run_checked(
        &hot_cold("512M", "10s", &VADDR_PAGEOUT.replace("\"on\"", "\"off\"")),
        &[],
    );
    let cold_pages = (512 - 64) * 256;
    assert_eq!(without.vmstat["pswpout"], 0);
    let out = with.vmstat["pswpout"];
    assert!(
        out >= cold_pages * 95 / 100 && out <= cold_pages,
        "pswpout {out}"
    );
    // The hot set never comes back from swap: it was never paged out.
    assert_eq!(with.vmstat["pswpin"], 0);
    // Freed, less what zram's pool holds of it.
    let freed = with.vmstat["nr_free_pages"] - without.vmstat["nr_free_pages"];
    let pool = with.swap.mem_used_total / 4096;
    assert!(
        freed + pool >= cold_pages * 9 / 10,
        "freed {freed}, pool {pool}"
    );
    let kd = &with.damon.as_ref().unwrap().kdamonds["kdamond.0"];
    assert!(kd.schemes[0].sz_applied >= cold_pages * 4096);
    assert!(with.tasks["kdamond.0"].system_ns > 0);
}

/// DAMON_RECLAIM on the hot/cold app with 768 MiB touched (25 % of RAM free: below
/// the mid watermark, 40 %), cold after 1 s.
fn reclaim(extra: &str, duration: &str) -> Results {
    let text = hot_cold(
        "768M",
        duration,
        &format!("[damon_reclaim]\nenabled = true\nmin_age = 1000000\n{extra}"),
    );
    run_checked(&text, &[])
}

#[test]
fn a_time_quota_bounds_kdamond_cpu() {
    // vaddr pageout of regions idle for 1 s, under a 10 ms/s time quota; the same
    // scheme without a quota gives the pageout's CPU cost per page, independent of the
    // quota's enforcement (less `stat`'s run: monitoring alone, applying costs nothing).
    // DAMOS turns the time quota into bytes per window at the throughput measured so
    // far, 4 MiB/ms assumed before any (damos_set_effective_quota): the first window
    // takes 40 MiB whatever it costs, each later one 10 ms of pageout.
    let scheme = |action: &str, quota: &str| {
        hot_cold(
            "768M",
            "6s",
            &VADDR_PAGEOUT
                .replace("pageout", action)
                .replace("age.min = 30", &format!("age.min = 10\n{quota}")),
        )
    };
    let q = "quotas.ms = 10\nquotas.reset_interval_ms = 1000";
    let (quota, csv) = common::run_checked_csv(&scheme("pageout", q));
    let monitor = run_checked(&scheme("stat", q), &[]);
    let none = run_checked(&scheme("pageout", ""), &[]);
    let cpu = |r: &Results| r.tasks["kdamond.0"].system_ns;
    let per_page_ns =
        cpu(&none).saturating_sub(cpu(&monitor)) as f64 / none.vmstat["pswpout"] as f64;
    assert!(per_page_ns > 0.0);
    let first_window_pages = 40 * 256;
    let window_pages = 10e6 / per_page_ns;
    // Windows are 1 s apart and charged on 100 ms aggregation ticks, samples 1 s apart:
    // each sample interval holds one window's charges (the first from 1.1 s, when the
    // cold regions are 1 s old).
    let pswpout_col = csv
        .lines()
        .next()
        .unwrap()
        .split(',')
        .position(|c| c == "pswpout_per_s");
    let per_window: Vec<f64> = csv
        .lines()
        .skip(1)
        .map(|l| {
            l.split(',')
                .nth(pswpout_col.unwrap())
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect();
    assert_eq!(
        per_window[..2],
        [0.0, first_window_pages as f64],
        "{per_window:?}"
    );
    for (i, &pages) in per_window.iter().enumerate().skip(2) {
        assert!(
            pages <= window_pages * 1.05,
            "window {i}: {pages} pages paged out, 10 ms is {window_pages:.0} pages"
        );
    }
    // The quota, not a lack of cold regions, binds: a later window uses all of it.
    assert!(
        per_window[2] >= window_pages * 0.95,
        "{per_window:?}, 10 ms is {window_pages:.0} pages"
    );
    // So kdamond's pageout CPU is the first window's 40 MiB and at most 10 ms a window
    // after it (5 at most in 6 s).
    let spent = cpu(&quota).saturating_sub(cpu(&monitor)) as f64;
    let budget = first_window_pages as f64 * per_page_ns + 5.0 * 10e6;
    assert!(
        spent <= budget * 1.05,
        "pageout CPU {spent} ns, budget {budget} ns"
    );
    // It is the quota that binds: without it the whole cold part goes at once.
    let cold = (768 - 64) * 256;
    assert!(
        none.vmstat["pswpout"] >= cold * 95 / 100,
        "{}",
        none.vmstat["pswpout"]
    );
    assert!(
        quota.vmstat["pswpout"] < cold / 2,
        "{}",
        quota.vmstat["pswpout"]
    );
    assert!(cpu(&none) > cpu(&quota));
    let st = &quota.damon.as_ref().unwrap().kdamonds["kdamond.0"].schemes[0];
    assert!(st.qt_exceeds > 0 && st.sz_applied > 0);
}

#[test]
fn watermarks_switch_the_scheme_on_and_off() {
    // 512 MiB touched: 50 % free, not above high (500) but at/above mid (400) and
    // never activated: the scheme stays off, nothing is tried.
    let text = hot_cold(
        "512M",
        "6s",
        "[damon_reclaim]\nenabled = true\nmin_age = 1000000\n",
    );
    let r = run_checked(&text, &[]);
    let st = r.damon.as_ref().unwrap().damon_reclaim.clone().unwrap();
    assert_eq!((st.nr_reclaim_tried_regions, r.vmstat["pswpout"]), (0, 0));
    // 768 MiB: 25 % free, below mid: on. With high at 300 it pages out until free
    // memory passes 30 % and then switches off: the run ends just above 300 ‰ (one
    // window's quota past it at most: 128 MiB = 12.5 %), well short of what the
    // cold 704 MiB would free.
    let r = reclaim("wmarks_high = 300\nwmarks_mid = 280\nquota_ms = 0", "15s");
    let total = 262_144u64;
    let free = r.vmstat["nr_free_pages"];
    assert!(free * 1000 / total > 300, "free {free}");
    assert!(free * 1000 / total <= 300 + 125, "free {free}");
    assert!(r.vmstat["pswpout"] > 0);
}

/// Two 256 MiB workloads, each in its cgroup, both touched at once: `b` keeps
/// accessing all of its memory, `a` none of it. One vaddr context watches both (`b`
/// first); a pageout scheme matches any region but may take 16 MiB a second.
const PRIORITY: &str = r#"
[run]
duration = "5s"
sample_interval = "1s"
[machine]
memory = "1G"
nr_cpus = 4
[machine.swap]
type = "zram"
size = "1G"
[[cgroup]]
path = "a"
[[cgroup]]
path = "b"
[[workload]]
name = "b"
kind = "phases"
cgroup = "b"
[[workload.phase]]
duration = "100ms"
size = "256M"
pattern = "sequential"
[[workload.phase]]
duration = "60s"
size = "256M"
pattern = "uniform"
[[workload.phase]]
duration = "60s"
size = "4K"
pattern = "uniform"
[[workload]]
name = "a"
kind = "phases"
cgroup = "a"
[[workload.phase]]
duration = "100ms"
size = "256M"
pattern = "sequential"
[[workload.phase]]
duration = "60s"
size = "4K"
pattern = "uniform"
[[damon.kdamonds]]
state = "on"
[[damon.kdamonds.contexts]]
operations = "vaddr"
[[damon.kdamonds.contexts.targets]]
pid_target = "b"
[[damon.kdamonds.contexts.targets]]
pid_target = "a"
[[damon.kdamonds.contexts.schemes]]
action = "pageout"
access_pattern.nr_accesses.max = "max"
quotas = { bytes = "16M", reset_interval_ms = 1000, weights = { nr_accesses_permil = 1000 } }
"#;

#[test]
fn with_prioritisation_colder_regions_are_paged_out_first() {
    // Weighted by access frequency, a's regions (0 accesses) score 99 and b's near 0:
    // the histogram cut-off admits a's only. Without weights every region scores the
    // same and the scheme goes in target order, b first: b's pages go out and fault
    // straight back in.
    let set = |w: u32| {
        format!("damon.kdamonds[0].contexts[0].schemes[0].quotas.weights.nr_accesses_permil={w}")
    };
    let prio = run_checked(PRIORITY, &[&set(1000)]);
    let flat = run_checked(PRIORITY, &[&set(0)]);
    let mib = |r: &Results, cg: &str| r.cgroups[cg]["memory"]["current"].as_u64().unwrap() >> 20;
    // Four 16 MiB windows after the first second (the first, before the regions tell
    // hot from cold, may take either).
    assert!(mib(&prio, "a") <= 256 - 48, "a {}", mib(&prio, "a"));
    assert_eq!(mib(&prio, "b"), 256);
    assert_eq!(mib(&flat, "a"), 256);
    assert!(
        flat.vmstat["pswpin"] >= 4 * 4096,
        "{}",
        flat.vmstat["pswpin"]
    );
    assert!(prio.vmstat["pswpin"] * 2 < flat.vmstat["pswpin"]);
}

#[test]
fn damon_runs_are_deterministic() {
    let text = hot_cold(
        "768M",
        "4s",
        "[damon_reclaim]\nenabled = true\nmin_age = 1000000\n",
    );
    let a = serde_json::to_string(&run_checked(&text, &[])).unwrap();
    let b = serde_json::to_string(&run_checked(&text, &[])).unwrap();
    assert_eq!(a, b);
}

#[test]
fn bad_damon_configuration_is_rejected_with_its_key() {
    let cases: [(&str, &str, &str); 6] = [
        (
            VADDR_PAGEOUT,
            "action = \"pageout\"",
            "action = \"willneed\"",
        ),
        (
            VADDR_PAGEOUT,
            "access_pattern.age.min = 30",
            "access_pattern.age.min = 30\naccess_pattern.age.max = 10",
        ),
        (
            VADDR_PAGEOUT,
            "operations = \"vaddr\"",
            "operations = \"vaddr\"\nmonitoring_attrs.intervals.sample_us = 0",
        ),
        (
            VADDR_PAGEOUT,
            "operations = \"vaddr\"",
            "operations = \"vaddr\"\nmonitoring_attrs.nr_regions.min = 2",
        ),
        (
            VADDR_PAGEOUT,
            "pid_target = \"app\"",
            "pid_target = \"nobody\"",
        ),
        (
            "[damon_reclaim]\nenabled = true\n",
            "enabled = true",
            "enabled = true\nwmarks_mid = 600",
        ),
    ];
    let want = [
        "schemes[0].action",
        "access_pattern.age.max",
        "intervals.sample_us",
        "nr_regions.min",
        "targets[0].pid_target",
        "damon_reclaim.wmarks_mid",
    ];
    for ((base, from, to), key) in cases.iter().zip(want) {
        let text = hot_cold("64M", "1s", &base.replace(from, to));
        let err = scenario::parse_str(&text, "t.toml", &[])
            .unwrap_err()
            .to_string();
        assert!(err.contains(key), "{key}: {err}");
        assert!(err.contains("t.toml:"), "no line: {err}");
    }
}

#[test]
fn masim_stairs_climb_under_damon() {
    // scenarios/masim-stairs.toml: after a 10 s warm-up, phase i (from t = 10 + 5i s)
    // hammers region s_i alone: 10 MB sequential writes at one page per access, so
    // every 5 ms sample finds its sampled page written. The regions are laid out
    // from VA_BASE with a 2 MiB guard after each (10 MB = 9.54 MiB → a 12 MiB step).
    // Two seconds into phase i, the only regions counting all 20 samples are s_i's.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/masim-stairs.toml");
    let sc = scenario::load(&path, &["run.duration=28s".into()]).unwrap();
    let mut sim = Simulation::new(sc);
    sim.enable_trace(Tracer::parse("damon_aggregated", 1_000_000).unwrap());
    let trace = reclaimsim::report::run_with_series(sim, RunOptions::default())
        .unwrap()
        .trace
        .unwrap();
    let base = 0x7f00_0000_0000u64;
    for phase in 0..3u64 {
        let at = 12.0 + 5.0 * phase as f64;
        let lo = base + phase * (12 << 20);
        let hi = lo + 10_000_000;
        let mut seen = 0;
        for l in trace.lines() {
            let Some((head, fields)) = l.split_once(" damon_aggregated: ") else {
                continue;
            };
            let t: f64 = head
                .trim_end_matches(':')
                .rsplit(' ')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            if !(at..at + 0.1).contains(&t) {
                continue;
            }
            let (_, rest) = fields.split_once("nr_regions=").unwrap();
            let (_, rest) = rest.split_once(' ').unwrap();
            let (range, counts) = rest.split_once(": ").unwrap();
            let (s, e) = range.split_once('-').unwrap();
            let (s, e): (u64, u64) = (s.parse().unwrap(), e.parse().unwrap());
            let n: u32 = counts.split(' ').next().unwrap().parse().unwrap();
            if n >= 18 {
                assert!(
                    s >= lo && e <= hi + 4096,
                    "phase {phase}: hot {s:x}-{e:x} outside s{phase}"
                );
                seen += 1;
            }
        }
        assert!(seen > 0, "phase {phase}: no hot region at {at} s");
    }
}

#[test]
fn masim_configs_load_and_errors_name_the_cfg_line() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let zigzag = "[machine]\nmemory = \"1G\"\n[[workload]]\nname = \"z\"\nkind = \"masim\"\nconfig = \"masim/zigzag.cfg\"\n".to_string();
    let file = dir.join("zigzag-test.toml");
    let sc = scenario::parse_str(&zigzag, file.to_str().unwrap(), &[]).unwrap();
    let m = sc.workloads[0].masim().unwrap();
    assert_eq!((m.regions.len(), m.phases.len()), (2, 13));
    // A broken .cfg: the error is at its line.
    let tmp = std::env::temp_dir().join(format!("reclaimsim-masim-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::write(
        tmp.join("bad.cfg"),
        "a, 8192\n\nphase\n100\nb, 0, 4096, 1\n",
    )
    .unwrap();
    let text = zigzag.replace("masim/zigzag.cfg", "bad.cfg");
    let err = scenario::parse_str(&text, tmp.join("s.toml").to_str().unwrap(), &[])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("bad.cfg:5:") && err.contains("no region named `b`"),
        "{err}"
    );
    // A missing file: the scenario's `config` key.
    let text = zigzag.replace("masim/zigzag.cfg", "nope.cfg");
    let err = scenario::parse_str(&text, tmp.join("s.toml").to_str().unwrap(), &[])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("workload[0].config") && err.contains("nope.cfg"),
        "{err}"
    );
    std::fs::remove_dir_all(&tmp).unwrap();
}

/// A phases program from a file: its steps from `repeat_from` run `repeat` times, and
/// the run stops when it is done (`run.stop_when_done`). By hand: 0.1 s of work, then
/// 3 × 1 s, the 4 MiB of it faulted in once (1024 × 1 µs): 3.1 s and a millisecond.
#[test]
fn phase_program_files_repeat_and_runs_stop_when_done() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("prog.toml"),
        r#"
repeat_from = 1
repeat = 3
[[phase]]
duration = "100ms"
size = "4M"
pattern = "sequential"
write_ratio = 1.0
[[phase]]
duration = "1s"
offset = "2M"
size = "2M"
"#,
    )
    .unwrap();
    let scenario = dir.path().join("s.toml");
    std::fs::write(
        &scenario,
        r#"
[run]
duration = "60s"
stop_when_done = true
[machine]
memory = "1G"
# No per-CPU lists: the used memory counted by hand below is the process's alone
# (pages waiting on a CPU's list are not in MemFree either, so they count as used).
[kernel]
pcp = "off"
[[workload]]
name = "prog"
kind = "phases"
config = "prog.toml"
"#,
    )
    .unwrap();
    let sc = scenario::load(&scenario, &[]).unwrap_or_else(|e| panic!("{e}"));
    let r = reclaimsim::report::run(Simulation::new(sc), RunOptions::default()).unwrap();
    let runtime = r.workloads["prog"].runtime_ns.expect("finished");
    assert!(
        (3_100_000_000..3_110_000_000).contains(&runtime),
        "{runtime}"
    );
    assert_eq!(r.duration_ns, runtime, "the run ends with the program");
    // 4 MiB resident from the first 100 ms on, and the process's kernel memory from
    // the start: 2 page tables (4 MiB / 2 MiB), a 16 KiB stack (4 pages), and the
    // first slab of each of fork's caches on one CPU (min_objects 8: task_struct 8
    // pages, mm_struct 4, signal_cache 4, sighand_cache 8, files_cache 2,
    // vm_area_struct 1): 33 pages. The mean over 1 s samples sees it in every one.
    let used = (4 << 20) + 33 * 4096;
    assert_eq!(r.memory.max_used_bytes, used);
    assert_eq!(r.memory.mean_used_bytes, used);

    // Errors name the program file, its line and the key in it.
    std::fs::write(
        dir.path().join("prog.toml"),
        "repeat = 2\n[[phase]]\nduration = \"1s\"\nsize = \"4M\"\noffset = \"5000\"\n",
    )
    .unwrap();
    let e = scenario::load(&scenario, &[]).unwrap_err();
    assert!(e.file.ends_with("prog.toml"), "{e}");
    assert_eq!((e.line, e.key.as_str()), (5, "phase[0].offset"), "{e}");
    std::fs::write(
        dir.path().join("prog.toml"),
        "repeat_from = 3\n[[phase]]\nduration = \"1s\"\nsize = \"4M\"\n",
    )
    .unwrap();
    let e = scenario::load(&scenario, &[]).unwrap_err();
    assert_eq!((e.line, e.key.as_str()), (1, "repeat_from"), "{e}");
    // A sweep or timed action may change `config`: the new file is loaded.
    std::fs::write(
        dir.path().join("prog.toml"),
        "[[phase]]\nduration = \"1s\"\nsize = \"4M\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("other.toml"),
        "[[phase]]\nduration = \"2s\"\nsize = \"8M\"\n",
    )
    .unwrap();
    let mut sc = scenario::load(&scenario, &[]).unwrap();
    scenario::set_key(
        &mut sc,
        "workload.0.config",
        &toml::Value::String("other.toml".into()),
    )
    .unwrap();
    let r = reclaimsim::report::run(Simulation::new(sc), RunOptions::default()).unwrap();
    // 8 MiB, 4 page tables, and the stack and first slabs as above (31 pages).
    assert_eq!(r.memory.max_used_bytes, (8 << 20) + 35 * 4096);
    let runtime = r.workloads["prog"].runtime_ns.unwrap();
    assert!(
        (2_000_000_000..2_010_000_000).contains(&runtime),
        "{runtime}"
    );
}

/// The seed's directions at a small size: 256 MiB of input used once, then a 64 MiB
/// table revisited for 1 s every 6 s and a 16 MiB hot set, on a machine with little
/// free memory (384 MiB). DAMON_RECLAIM (min_age 2 s) with more time quota saves more
/// memory and uses more CPU; prioritisation (coldest first: the input, idle since the
/// start, before the table, idle 5 s at a time) slows the program less than address
/// order, which reaches the table first: the allocator hands out frames from the top
/// down, so the table's frames lie below the input's.
#[test]
fn damon_reclaim_follows_the_seeds_directions() {
    let text = r#"
[run]
duration = "120s"
stop_when_done = true
[machine]
memory = "384M"
nr_cpus = 2
[machine.swap]
type = "zram"
size = "1G"
compression_ratio = 3.0
[kernel]
vm.swappiness = 100
[[workload]]
name = "prog"
kind = "phases"
repeat_from = 2
repeat = 5
[[workload.phase]]
duration = "15ms"
offset = "64M"
size = "256M"
pattern = "sequential"
write_ratio = 1.0
[[workload.phase]]
duration = "5ms"
size = "64M"
pattern = "sequential"
write_ratio = 1.0
[[workload.phase]]
duration = "5s"
offset = "320M"
size = "16M"
write_ratio = 0.3
[[workload.phase]]
duration = "1s"
size = "64M"
write_ratio = 0.2
[damon_reclaim]
enabled = false
min_age = 2000000
quota_sz = 0
wmarks_high = 1000
wmarks_mid = 999
wmarks_low = 0
"#;
    // The directions over the mean of three seeds: one seed's 50 ms/s pair can be
    // within its noise (seed 1 with today's per-CPU lists: 0.84 % against 0.82 %).
    let seeds = [1u64, 2, 3];
    let per_seed: Vec<[(f64, f64, f64); 5]> = std::thread::scope(|s| {
        let handles: Vec<_> = seeds
            .iter()
            .map(|&seed| {
                s.spawn(move || {
                    let run = |enabled: bool, quota_ms: u64, prio: bool| {
                        let sets = [
                            format!("damon_reclaim.enabled={enabled}"),
                            format!("damon_reclaim.quota_ms={quota_ms}"),
                            format!("damon_reclaim.weights.age_permil={}", u64::from(prio)),
                            format!("run.seed={seed}"),
                        ];
                        let sets: Vec<&str> = sets.iter().map(|s| s.as_str()).collect();
                        run_checked(text, &sets)
                    };
                    let orig = run(false, 0, false);
                    let fig = |r: &Results| {
                        let f = reclaimsim::report::damon_table::figures(r, &orig);
                        (f.memory_saving_pct, f.kdamond_cpu_pct, f.slowdown_pct)
                    };
                    [
                        fig(&run(true, 0, false)),
                        fig(&run(true, 50, false)),
                        fig(&run(true, 50, true)),
                        fig(&run(true, 10, false)),
                        fig(&run(true, 10, true)),
                    ]
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mean = |i: usize| {
        let n = per_seed.len() as f64;
        let sum = per_seed.iter().fold((0.0, 0.0, 0.0), |a, f| {
            (a.0 + f[i].0, a.1 + f[i].1, a.2 + f[i].2)
        });
        (sum.0 / n, sum.1 / n, sum.2 / n)
    };
    let (none, q50, q50p, q10, q10p) = (mean(0), mean(1), mean(2), mean(3), mean(4));
    let all = format!("none {none:?}\n50 {q50:?}\n50p {q50p:?}\n10 {q10:?}\n10p {q10p:?}");
    // More quota: more saving, more CPU.
    assert!(none.0 > q50.0 && q50.0 > q10.0 && q10.0 > 0.0, "{all}");
    assert!(none.1 > q50.1 && q50.1 > q10.1, "{all}");
    // Prioritisation: less slowdown at 50 and 10 ms/s.
    assert!(q50p.2 < q50.2, "{all}");
    assert!(q10p.2 < q10.2, "{all}");
}
