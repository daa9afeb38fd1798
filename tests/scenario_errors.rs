//! Scenario loading through the library API: every error names file, line and key.
//! Expected line numbers are counted by hand (1-based) from the texts below.

use reclaimsim::scenario::{self, parse_str, ScenarioError};
use std::io::Write;

/// Line 7 is the sysctl; the tests edit lines in place so the numbering holds.
const BASE: &str = r#"[machine]
memory = "4G"
swap = { type = "disk", size = "2G" }

[kernel]
HZ = 1000
vm.swappiness = 60

[[workload]]
name = "web"
kind = "file-read"
nr_files = 100
file_size = "16M"
io_size = "64K"

[[workload]]
name = "heap"
kind = "anon"
size = "3G"
pattern = "hotcold"
hot_fraction = 0.2
hot_probability = 0.9
"#;

fn err(text: &str, sets: &[&str]) -> ScenarioError {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    match parse_str(text, "q.toml", &sets) {
        Ok(_) => panic!("expected an error for {sets:?}"),
        Err(e) => e,
    }
}

fn edited(from: &str, to: &str) -> String {
    assert!(BASE.contains(from), "{from}");
    BASE.replacen(from, to, 1)
}

#[test]
fn base_is_valid() {
    let sc = parse_str(BASE, "q.toml", &[]).unwrap();
    assert_eq!(sc.kernel.vm.dirty_ratio, 20);
    assert_eq!(sc.workloads[1].hot_fraction, Some(0.2));
}

#[test]
fn unknown_key_display() {
    let e = err(&edited("vm.swappiness", "vm.swapiness"), &[]);
    assert_eq!(
        e.to_string(),
        "q.toml:7: kernel.vm.swapiness: unknown key (did you mean `swappiness`?)"
    );
}

#[test]
fn value_errors() {
    let e = err(&edited(r#"size = "3G""#, r#"size = "4X""#), &[]);
    assert_eq!((e.line, e.key.as_str()), (19, "workload[1].size"), "{e}");
    let e = err(&edited(r#"size = "3G""#, r#"size = "-1G""#), &[]);
    assert_eq!((e.line, e.key.as_str()), (19, "workload[1].size"), "{e}");
    let e = err(&edited(r#"type = "disk""#, r#"type = "ssd""#), &[]);
    assert_eq!((e.line, e.key.as_str()), (3, "machine.swap.type"), "{e}");
    assert!(e.message.contains("`none`, `zram`, `disk`"), "{e}");
}

#[test]
fn semantic_errors() {
    let e = err(&edited(r#"io_size = "64K""#, r#"io_size = "32M""#), &[]);
    assert_eq!((e.line, e.key.as_str()), (14, "workload[0].io_size"), "{e}");
    assert!(e.message.contains("file_size (16M)"), "{e}");
    let e = err(&edited("hot_fraction = 0.2", "hot_fraction = 1.0"), &[]);
    assert_eq!(
        (e.line, e.key.as_str()),
        (21, "workload[1].hot_fraction"),
        "{e}"
    );
    let e = err(&edited(r#"name = "heap""#, r#"name = "web""#), &[]);
    assert_eq!((e.line, e.key.as_str()), (17, "workload[1].name"), "{e}");
    let e = err(
        &edited(r#"pattern = "hotcold""#, r#"pattern = "zipf""#),
        &[],
    );
    assert_eq!(
        (e.line, e.key.as_str()),
        (21, "workload[1].hot_fraction"),
        "{e}"
    );
    assert!(e.message.contains("hotcold"), "{e}");
}

/// The per-CPU list sysctls: 0 or at least 8 (MIN_PERCPU_PAGELIST_HIGH_FRACTION), and
/// each only in the kernels that have it (line 7 is the edited sysctl).
#[test]
fn percpu_pagelist_fractions() {
    let e = err(
        &edited("vm.swappiness = 60", "vm.percpu_pagelist_high_fraction = 4"),
        &[],
    );
    assert_eq!(
        (e.line, e.key.as_str()),
        (7, "kernel.vm.percpu_pagelist_high_fraction"),
        "{e}"
    );
    assert!(e.message.contains("at least 8, got 4"), "{e}");
    let e = err(
        &edited("vm.swappiness = 60", "vm.percpu_pagelist_fraction = 16"),
        &[],
    );
    assert_eq!(
        (e.line, e.key.as_str()),
        (7, "kernel.vm.percpu_pagelist_fraction"),
        "{e}"
    );
    assert!(e.message.contains("kernel.pcp = \"v6.7\""), "{e}");
    let v4 = edited("vm.swappiness = 60", "vm.percpu_pagelist_fraction = 16");
    assert!(parse_str(&v4, "q.toml", &["kernel.pcp=\"v4.5\"".to_string()]).is_ok());
    let e = err(&BASE.replace("HZ = 1000", "pcp = \"v5\""), &[]);
    assert_eq!((e.line, e.key.as_str()), (6, "kernel.pcp"), "{e}");
}

#[test]
fn set_overrides() {
    let sets = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let sc = parse_str(
        BASE,
        "q.toml",
        &sets(&[
            "machine.memory=8G",
            "kernel.vm.page-cluster=2",
            "workload.0.nr_files=7",
            "workload[1].pattern=uniform",
            "workload[1].hot_fraction=[]",
        ]),
    );
    // `[]` is a TOML array: a type error at that key, reported against the flag.
    let e = sc.unwrap_err();
    assert_eq!(
        (e.line, e.key.as_str()),
        (0, "workload[1].hot_fraction"),
        "{e}"
    );
    assert_eq!(
        e.flag.as_deref(),
        Some("--set workload[1].hot_fraction=[]"),
        "{e}"
    );
    assert_eq!(
        e.to_string(),
        "--set workload[1].hot_fraction=[]: workload[1].hot_fraction: expected a number, \
         got an array"
    );

    let e = err(BASE, &["workload.1.pattern=\"uniform\""]);
    assert_eq!(
        (e.line, e.key.as_str()),
        (21, "workload[1].hot_fraction"),
        "{e}"
    );

    let e = err(BASE, &["kernel.vm.no_such=1"]);
    assert_eq!(
        e.to_string(),
        "--set kernel.vm.no_such=1: kernel.vm.no_such: unknown key (expected one of \
         `swappiness`, `min_free_kbytes`, `watermark_scale_factor`, `watermark_boost_factor`, \
         `lowmem_reserve_ratio`, \
         `dirty_background_ratio`, `dirty_ratio`, `dirty_bytes`, `dirty_background_bytes`, \
         `dirty_expire_centisecs`, `dirty_writeback_centisecs`, `page-cluster`, \
         `extfrag_threshold`, `compaction_proactiveness`, `compact_unevictable_allowed`, \
         `vfs_cache_pressure`, `percpu_pagelist_fraction`, `percpu_pagelist_high_fraction`, \
         `zone_reclaim_mode`, `min_unmapped_ratio`, `min_slab_ratio`)"
    );

    // zone_reclaim_mode has three bits; the ratios are percentages.
    let e = err(
        &edited("vm.swappiness = 60", "vm.zone_reclaim_mode = 8"),
        &[],
    );
    assert_eq!(
        (e.line, e.key.as_str()),
        (7, "kernel.vm.zone_reclaim_mode"),
        "{e}"
    );
    let e = err(BASE, &["kernel.vm.min_unmapped_ratio=101"]);
    assert_eq!(e.key, "kernel.vm.min_unmapped_ratio", "{e}");
}

#[test]
fn load_names_the_file() {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(edited("HZ = 1000", "HZ = 999").as_bytes())
        .unwrap();
    let e = scenario::load(f.path(), &[]).unwrap_err();
    assert_eq!(e.file, f.path().display().to_string());
    assert_eq!((e.line, e.key.as_str()), (6, "kernel.HZ"), "{e}");

    let sc = scenario::load(f.path(), &["kernel.HZ=300".to_string()]).unwrap();
    assert_eq!(sc.kernel.hz.0, 300);

    let missing = f.path().with_extension("absent");
    let e = scenario::load(&missing, &[]).unwrap_err();
    assert_eq!(e.line, 0);
}

#[test]
fn set_key_at_run_time() {
    let mut sc = parse_str(BASE, "q.toml", &[]).unwrap();
    scenario::set_key(&mut sc, "kernel.vm.swappiness", &toml::Value::Integer(0)).unwrap();
    assert_eq!(sc.kernel.vm.swappiness, 0);
    let e = scenario::set_key(&mut sc, "kernel.HZ", &toml::Value::Integer(999)).unwrap_err();
    assert!(e.starts_with("kernel.HZ: must be"), "{e}");
    assert_eq!(sc.kernel.hz.0, 1000);
}

/// Issue 9, defect 1: a zero cost lets work take no virtual time and a task loop at
/// one instant; each cost is rejected, naming its key (and line, from the file).
#[test]
fn zero_costs_are_rejected() {
    for key in [
        "access",
        "minor_fault",
        "major_fault",
        "scan_page",
        "reclaim_page",
        "rmap_walk",
        "syscall",
        "copy_page",
        "walk_pte",
        "walk_young",
        "damon_check",
    ] {
        let raw = format!("costs.{key}=0");
        let e = err(BASE, &[&raw]);
        assert_eq!(e.key, format!("costs.{key}"), "{e}");
        assert_eq!(e.flag, Some(format!("--set {raw}")), "{e}");
        assert!(e.message.starts_with("must be > 0: "), "{e}");
        assert!(e.message.contains("takes virtual time"), "{e}");
    }
    // From the file: line 10 is the `access` key.
    let text = edited("[[workload]]", "[costs]\naccess = 0\n\n[[workload]]");
    assert_eq!(
        err(&text, &[]).to_string(),
        "q.toml:10: costs.access: must be > 0: every access takes virtual time (1ns is the least)"
    );
    // The least allowed cost is 1ns.
    parse_str(BASE, "q.toml", &["costs.access=\"1ns\"".to_string()]).unwrap();
}

/// Issue 9, defect 8: cgroup v2's root has no memory.min/low/high/max/swap.max
/// (CFTYPE_NOT_ON_ROOT in mm/memcontrol.c); memory.reclaim it has.
#[test]
fn root_cgroup_takes_no_limits() {
    for file in ["memory.max", "memory.high", "memory.min", "memory.low"] {
        // Line 27 is the `write` key.
        let text = format!(
            "{BASE}\n[[action]]\nat = \"1s\"\ncgroup = \"/\"\nwrite = \"{file}\"\nvalue = \"1G\"\n"
        );
        let e = err(&text, &[]);
        assert_eq!((e.line, e.key.as_str()), (27, "action[0].write"), "{e}");
        assert!(
            e.message
                .contains(&format!("the root cgroup has no {file}")),
            "{e}"
        );
    }
    let reclaim = format!(
        "{BASE}\n[[action]]\nat = \"1s\"\ncgroup = \"/\"\nwrite = \"memory.reclaim\"\nvalue = \"1G\"\n"
    );
    let mut sc = parse_str(&reclaim, "q.toml", &[]).unwrap();
    // A timed action changed after loading (a sweep point) is checked too.
    let e = scenario::set_key(&mut sc, "action[0].write", &"memory.max".into()).unwrap_err();
    assert!(
        e.starts_with("action[0].write: the root cgroup has no memory.max"),
        "{e}"
    );
    // The root cannot be declared (with limits or without): line 25 is its path.
    let text = format!("{BASE}\n[[cgroup]]\npath = \"/\"\nmemory.max = \"1G\"\n");
    let e = err(&text, &[]);
    assert_eq!((e.line, e.key.as_str()), (25, "cgroup[0].path"), "{e}");
    assert!(e.message.contains("root cgroup"), "{e}");
    // A swept or --set action is checked as one in the file is.
    let e = err(&reclaim, &["action[0].write=memory.max"]);
    assert_eq!(e.key, "action[0].write", "{e}");
    assert_eq!(
        e.flag.as_deref(),
        Some("--set action[0].write=memory.max"),
        "{e}"
    );
}

/// Issue 9, defect 9: names reach the summary, results.json, CSV headers and charts;
/// control characters (and for CSV columns, commas) are rejected at load time.
#[test]
fn names_with_control_characters_are_rejected() {
    // Line 10 is workload[0].name.
    for bad in [
        r#""w\u0000b""#,
        r#""w\nb""#,
        r#""w\tb""#,
        r#""\u007f""#,
        r#""  ""#,
    ] {
        let e = err(&edited(r#""web""#, bad), &[]);
        assert_eq!(
            (e.line, e.key.as_str()),
            (10, "workload[0].name"),
            "{bad}: {e}"
        );
    }
    let e = err(&edited(r#""web""#, r#""w\nb""#), &[]);
    assert!(e.message.contains("control character '\\n'"), "{e}");
    // Cgroup paths: also a comma (a timeseries.csv column) and `.`/`..` (not names).
    for bad in ["a\\u0000", "a\\rb", "a,b", "a/..", "."] {
        let text = format!("{BASE}\n[[cgroup]]\npath = \"a\"\n\n[[cgroup]]\npath = \"{bad}\"\n");
        let e = err(&text, &[]);
        assert_eq!(
            (e.line, e.key.as_str()),
            (28, "cgroup[1].path"),
            "{bad}: {e}"
        );
    }
    // Sweep metrics and parameter names head sweep.csv columns.
    let param = r#"sweep.param=[{key = "kernel.vm.swappiness", values = [1]}]"#;
    let e = err(
        BASE,
        &[param, "sweep.metrics=[\"vmstat.pgscan_kswapd\\n\"]"],
    );
    assert_eq!(e.key, "sweep.metrics[0]", "{e}");
    let e = err(
        BASE,
        &[r#"sweep.param=[{name = "a\nb", values = [1], with = {"kernel.vm.swappiness" = [1]}}]"#],
    );
    assert_eq!(e.key, "sweep.param[0].name", "{e}");
    assert!(e.message.contains("control character"), "{e}");
    // A comma is fine there: sweep.csv quotes it (tests/sweep.rs checks the CSV).
}

/// Issue 9, defect 10: messages name the right key in the user's terms, and never a
/// line 0: a `--set` problem names the flag, a missing table just the file.
#[test]
fn messages_name_the_key_in_user_terms() {
    let e = err(BASE, &["workload[0]=3"]);
    assert_eq!(
        e.to_string(),
        "--set workload[0]=3: workload[0]: expected a table of workload keys, got an integer (3)"
    );
    let e = err(BASE, &["run.seed=9223372036854775808"]);
    assert_eq!(
        e.to_string(),
        "--set run.seed=9223372036854775808: run.seed: must be at most 9223372036854775807, \
         got 9223372036854775808"
    );
    let e = err(BASE, &["workload[1].threads=4294967296"]);
    assert_eq!(e.message, "must be at most 4294967295, got 4294967296");
    // The largest seed is accepted, from --set as from the file.
    let sc = parse_str(
        BASE,
        "q.toml",
        &["run.seed=9223372036854775807".to_string()],
    )
    .unwrap();
    assert_eq!(sc.run.seed, i64::MAX as u64);
    let text = format!("[run]\nseed = 9223372036854775808\n{BASE}");
    assert_eq!(
        err(&text, &[]).to_string(),
        "q.toml:2: run.seed: must be at most 9223372036854775807 (the largest TOML integer)"
    );
    // A duplicate table is blamed on itself (not on the table before it).
    let text = format!("[run]\nseed = 1\n{BASE}\n[run]\nduration = \"1s\"\n");
    assert_eq!(
        err(&text, &[]).to_string(),
        "q.toml:26: run: given twice (first at line 1)"
    );
    let text = edited(
        "vm.swappiness = 60",
        "vm.swappiness = 60\nvm.swappiness = 1",
    );
    assert_eq!(
        err(&text, &[]).to_string(),
        "q.toml:8: kernel.vm.swappiness: given twice (first at line 7)"
    );
    // No line: the file and key, never `:0:`.
    let no_machine = BASE.lines().skip(3).collect::<Vec<_>>().join("\n");
    let e = err(&no_machine, &[]);
    assert_eq!(e.to_string(), "q.toml: machine: missing required key");
}

/// Issue 9, defect 10: `--set` keys were handled in quadratic time (a 50 000-segment
/// key took 40 s). Now linear: 100× the segments costs well under 100² × the time.
#[test]
fn long_set_keys_take_linear_time() {
    let time = |n: usize| {
        let key = vec!["a"; n].join(".");
        let sets = [format!("{key}=1")];
        (0..3)
            .map(|_| {
                let t = std::time::Instant::now();
                let e = parse_str(BASE, "q.toml", &sets).unwrap_err();
                assert_eq!(
                    e.flag.as_deref(),
                    Some(format!("--set {}", sets[0]).as_str())
                );
                t.elapsed()
            })
            .min()
            .unwrap()
    };
    let (short, long) = (time(500), time(50_000));
    assert!(
        long < short * 1_000,
        "500 segments: {short:?}, 50 000: {long:?}"
    );
}

#[test]
fn cgroup_limit_of_the_wrong_type_says_what_a_limit_is() {
    // Line 26 is memory.max (it was "data did not match any variant of untagged enum").
    let text = format!("{BASE}\n[[cgroup]]\npath = \"a\"\nmemory.max = true\n");
    let e = err(&text, &[]);
    assert_eq!(
        e.to_string(),
        "q.toml:26: cgroup[0].memory.max: expected a size such as \"2G\", or \"max\", got a boolean"
    );
}

#[test]
fn control_characters_in_a_set_key_are_escaped() {
    // An error is one line, whatever the key holds.
    let e = err(BASE, &["kernel.vm.swap\npiness=1"]);
    assert_eq!(e.key, "kernel.vm.swap\npiness");
    assert_eq!(
        e.to_string(),
        "--set kernel.vm.swap\\npiness=1: kernel.vm.swap\\npiness: unknown key (did you mean \
         `swappiness`?)"
    );
}

/// A machine of two 64 MiB nodes, a CPU each, then `extra` lines from line 12 on.
fn two_nodes(extra: &str) -> String {
    format!(
        r#"[machine]
memory = "128M"
nr_cpus = 2

[[machine.node]]
memory = "64M"
cpus = [0]

[[machine.node]]
memory = "64M"
cpus = [1]
{extra}
[[workload]]
name = "w"
kind = "anon"
size = "16M"
"#
    )
}

/// `[[machine.node]]` and `mempolicy`: each mistake at its key's line, the nodes'
/// sums and CPUs checked against `[machine]`, and (for now) a machine of several
/// nodes refused with the reason.
#[test]
fn nodes_and_mempolicies_are_checked_where_they_are_written() {
    let text = two_nodes("").replacen(
        "memory = \"64M\"\ncpus = [1]",
        "memory = \"32M\"\ncpus = [1]",
        1,
    );
    let e = err(&text, &[]);
    assert_eq!((e.line, e.key.as_str()), (5, "machine.node"), "{e}");
    assert!(
        e.message
            .contains("adds up to 96M, but machine.memory is 128M"),
        "{e}"
    );

    let e = err(&two_nodes("").replacen("cpus = [1]", "cpus = [0]", 1), &[]);
    assert_eq!(
        (e.line, e.key.as_str()),
        (11, "machine.node[1].cpus"),
        "{e}"
    );
    assert!(
        e.message.contains("CPU 0 is already on machine.node[0]"),
        "{e}"
    );

    let e = err(&two_nodes("distance = [5, 10]"), &[]);
    assert_eq!(
        (e.line, e.key.as_str()),
        (12, "machine.node[1].distance"),
        "{e}"
    );
    assert!(
        e.message
            .contains("distance to node 0 must be in 11..=254, got 5"),
        "{e}"
    );
    let e = err(&two_nodes("distance = [21, 10, 21]"), &[]);
    assert!(e.message.contains("each of the 2 nodes, got 3"), "{e}");
    let e = err(&two_nodes("latency = \"0ns\""), &[]);
    assert_eq!(
        (e.line, e.key.as_str()),
        (12, "machine.node[1].latency"),
        "{e}"
    );
    let e = err(&two_nodes("bandwidth = \"1K\""), &[]);
    assert_eq!(
        (e.line, e.key.as_str()),
        (12, "machine.node[1].bandwidth"),
        "{e}"
    );
    let e = err(&two_nodes("[kernel]\nnuma.demotion = true"), &[]);
    assert!(e.key.starts_with("kernel.numa"), "{e}");
    let e = err(&two_nodes("[kernel]\nnuma_balancing = 1"), &[]);
    assert_eq!(e.key, "kernel.numa_balancing", "{e}");
    assert!(e.message.contains("not modelled"), "{e}");
    let e = err(&format!("{}cpunodebind = [2]\n", two_nodes("")), &[]);
    assert_eq!(e.key, "workload[0].cpunodebind", "{e}");
    assert!(e.message.contains("node 2 does not exist"), "{e}");

    let e = err(
        &two_nodes("")
            .replacen("\"64M\"", "\"62M\"", 1)
            .replacen("\"128M\"", "\"126M\"", 1),
        &[],
    );
    assert_eq!(
        (e.line, e.key.as_str()),
        (6, "machine.node[0].memory"),
        "{e}"
    );
    assert!(e.message.contains("multiple of 4M"), "{e}");

    // Valid nodes load.
    reclaimsim::scenario::parse_str(&two_nodes(""), "t.toml", &[]).unwrap();

    // A policy's nodes must exist; a preferred policy names one.
    let policy = |p: &str| {
        format!(
            "[machine]\nmemory = \"128M\"\n\n[[workload]]\nname = \"w\"\nkind = \"anon\"\nsize = \"16M\"\nmempolicy = {p}\n"
        )
    };
    let e = err(&policy(r#"{ mode = "bind", nodes = [0, 2] }"#), &[]);
    assert_eq!(
        (e.line, e.key.as_str()),
        (8, "workload[0].mempolicy.nodes"),
        "{e}"
    );
    assert!(
        e.message
            .contains("node 2 does not exist (the machine has 1)"),
        "{e}"
    );
    let e = err(&policy(r#"{ mode = "preferred", nodes = [0, 0] }"#), &[]);
    assert!(e.message.contains("node 0 is named twice"), "{e}");
    let e = err(&policy(r#"{ mode = "preferred" }"#), &[]);
    assert!(e.message.contains("takes one node"), "{e}");
    let e = err(
        &policy(r#"{ mode = "interleave", nodes = [0], weights = [1] }"#),
        &[],
    );
    assert_eq!(e.key, "workload[0].mempolicy.weights", "{e}");
    let e = err(
        &policy(r#"{ mode = "weighted-interleave", nodes = [0], weights = [3, 1] }"#),
        &[],
    );
    assert!(e.message.contains("a weight per node (1), got 2"), "{e}");
    let e = err(&policy(r#"{ mode = "roundrobin" }"#), &[]);
    assert_eq!(e.key, "workload[0].mempolicy.mode", "{e}");
    assert!(parse_str(
        &policy(r#"{ mode = "interleave", nodes = [0] }"#),
        "q.toml",
        &[]
    )
    .is_ok());
}

/// One node described explicitly, with a policy binding to it, is the machine of no
/// `[[machine.node]]` at all.
#[test]
fn one_explicit_node_is_the_default_machine() {
    let text = "[machine]\nmemory = \"128M\"\nnr_cpus = 2\n\n[[machine.node]]\nmemory = \"128M\"\ncpus = [0, 1]\n\n[[workload]]\nname = \"w\"\nkind = \"anon\"\nsize = \"16M\"\nmempolicy = { mode = \"bind\", nodes = [0] }\n";
    let sc = parse_str(text, "q.toml", &[]).unwrap();
    let cfg = reclaimsim::scenario::mm_config::mm_config(&sc);
    assert_eq!(cfg.node_layout(), {
        let mut plain = cfg.clone();
        plain.nodes.clear();
        plain.node_layout()
    });
    let e = err(&text.replace("cpus = [0, 1]", "cpus = [0]"), &[]);
    assert_eq!((e.line, e.key.as_str()), (5, "machine.node"), "{e}");
    assert!(
        e.message
            .contains("CPU 1 (machine.nr_cpus is 2) is on no node"),
        "{e}"
    );
}

/// Kernel names have dots, and quoting one (`"vm.swappiness" = 30`, as a sysctl is
/// spelled) makes TOML read a single key with a dot in its name: the error shows the
/// key quoted, as the file has it, and says to write it unquoted.
#[test]
fn a_quoted_dotted_kernel_name_says_to_unquote_it() {
    let e = err(&edited("vm.swappiness = 60", "\"vm.swappiness\" = 60"), &[]);
    assert_eq!(
        (e.line, e.key.as_str()),
        (7, "kernel.\"vm.swappiness\""),
        "{e}"
    );
    assert!(
        e.message
            .contains("write it unquoted (vm.swappiness = ...)")
            && e.message.contains("key `swappiness` of table `vm`"),
        "{e}"
    );
    let text = format!("{BASE}\n[[cgroup]]\npath = \"a\"\n\"memory.high\" = \"1G\"\n");
    let e = err(&text, &[]);
    assert_eq!(e.key, "cgroup[0].\"memory.high\"", "{e}");
    assert!(e.message.contains("key `high` of table `memory`"), "{e}");
}

/// DAMOS `migrate_hot`/`migrate_cold` need a `target_nid` of the machine and paddr;
/// `numa_node` is a paddr target's whole region.
#[test]
fn damos_migration_and_node_targets_are_checked() {
    let ctx = |ops: &str, target: &str, scheme: &str| {
        two_nodes(&format!(
            "\n[[damon.kdamonds]]\nstate = \"on\"\n[[damon.kdamonds.contexts]]\noperations = \"{ops}\"\n[[damon.kdamonds.contexts.targets]]\n{target}\n[[damon.kdamonds.contexts.schemes]]\n{scheme}\n"
        ))
    };
    let key = |text: &str| err(text, &[]).key;
    let k = "damon.kdamonds[0].contexts[0]";
    assert_eq!(
        key(&ctx("paddr", "numa_node = 1", "action = \"migrate_hot\"")),
        format!("{k}.schemes[0].target_nid")
    );
    assert_eq!(
        key(&ctx(
            "paddr",
            "numa_node = 1",
            "action = \"migrate_cold\"\ntarget_nid = 2"
        )),
        format!("{k}.schemes[0].target_nid")
    );
    assert_eq!(
        key(&ctx(
            "paddr",
            "numa_node = 1",
            "action = \"pageout\"\ntarget_nid = 0"
        )),
        format!("{k}.schemes[0].target_nid")
    );
    assert_eq!(
        key(&ctx(
            "vaddr",
            "pid_target = \"w\"",
            "action = \"migrate_hot\"\ntarget_nid = 0"
        )),
        format!("{k}.schemes[0].action")
    );
    assert_eq!(
        key(&ctx("paddr", "numa_node = 2", "action = \"stat\"")),
        format!("{k}.targets[0].numa_node")
    );
    assert_eq!(
        key(&ctx(
            "vaddr",
            "pid_target = \"w\"\nnuma_node = 0",
            "action = \"stat\""
        )),
        format!("{k}.targets[0].numa_node")
    );
    // And a good one loads.
    let ok = ctx(
        "paddr",
        "numa_node = 1",
        "action = \"migrate_hot\"\ntarget_nid = 0",
    );
    parse_str(&ok, "q.toml", &[]).unwrap();
}
