//! Loader tests. Line numbers in expectations are counted by hand from `FULL` (1-based); the
//! error cases edit one line of it in place so the numbering holds.

use super::units::{Bytes, Nanos};
use super::*;

const FULL: &str = r#"# A full scenario.
[run]
duration = "20s"
seed = 7

[machine]
memory = "8G"
nr_cpus = 4
swap = { type = "zram", size = "4G" }

[kernel]
vm.watermark_scale_factor = 100
HZ = 250

[[workload]]
name = "db"
kind = "anon"
size = "6G"
pattern = "zipf"
skew = 0.9

[[workload]]
name = "scan"
kind = "file-read"
nr_files = 4
file_size = "1G"
start = "1s"

[[action]]
at = "5s"
set = "kernel.vm.swappiness"
value = 100
"#;

fn parse(text: &str, sets: &[&str]) -> Result<Scenario, ScenarioError> {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    parse_str(text, "q.toml", &sets)
}

/// `FULL` with one substring replaced (which must be there).
fn edit(from: &str, to: &str) -> String {
    assert!(FULL.contains(from), "{from}");
    FULL.replacen(from, to, 1)
}

fn fails(text: &str, sets: &[&str]) -> ScenarioError {
    match parse(text, sets) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e,
    }
}

/// Asserts line and key, and that the message contains `part`.
fn check(e: &ScenarioError, line: usize, key: &str, part: &str) {
    assert_eq!((e.line, e.key.as_str()), (line, key), "{e}");
    assert!(e.message.contains(part), "{e}");
    assert_eq!(e.file, "q.toml");
}

#[test]
fn full_scenario_with_defaults() {
    let sc = parse(FULL, &[]).unwrap();
    assert_eq!(sc.run.duration, Nanos(20_000_000_000));
    assert_eq!(sc.run.slice, Nanos(100_000));
    assert_eq!(sc.machine.memory, Bytes(8 << 30));
    assert_eq!(sc.machine.swap.kind, SwapKind::Zram);
    assert_eq!(sc.machine.swap.compression_ratio, 3.0);
    assert_eq!(sc.kernel.vm.swappiness, 60);
    assert_eq!(sc.kernel.vm.watermark_scale_factor, 100);
    assert_eq!(sc.kernel.hz.0, 250);
    assert_eq!(sc.workloads.len(), 2);
    assert_eq!(sc.workloads[0].pattern, Some(Pattern::Zipf));
    assert_eq!(sc.workloads[1].io_size, Some(Bytes(4096)));
    assert_eq!(sc.workloads[1].threads, 1);
    assert_eq!(sc.actions[0].value, Some(toml::Value::Integer(100)));
}

#[test]
fn unknown_keys_name_key_and_line() {
    let e = fails(&edit("vm.watermark_scale_factor", "vm.swapiness"), &[]);
    assert_eq!(
        e.to_string(),
        "q.toml:12: kernel.vm.swapiness: unknown key (did you mean `swappiness`?)"
    );
    let e = fails(&edit("start =", "strat ="), &[]);
    check(&e, 27, "workload[1].strat", "did you mean `start`");
    let e = fails(&edit("seed = 7", "color = 7"), &[]);
    check(&e, 4, "run.color", "expected one of `duration`");
}

#[test]
fn bad_values_name_key_and_line() {
    let e = fails(&edit(r#"size = "6G""#, r#"size = "4X""#), &[]);
    check(&e, 18, "workload[0].size", "unknown unit `X`");
    let e = fails(&edit(r#"size = "6G""#, r#"size = "-1G""#), &[]);
    check(&e, 18, "workload[0].size", "negative");
    let e = fails(&edit(r#"size = "6G""#, "size = -5"), &[]);
    check(&e, 18, "workload[0].size", "negative");
    let e = fails(&edit("nr_cpus = 4", r#"nr_cpus = "four""#), &[]);
    check(
        &e,
        8,
        "machine.nr_cpus",
        "expected a non-negative integer, got a string (\"four\")",
    );
    let e = fails(&edit(r#"type = "zram""#, r#"type = "zramm""#), &[]);
    check(&e, 9, "machine.swap.type", "did you mean `zram`");
    let e = fails(&edit(r#"duration = "20s""#, "duration = 20"), &[]);
    check(&e, 3, "run.duration", "no unit");
}

#[test]
fn missing_keys() {
    let start = FULL.find("[machine]").unwrap();
    let end = FULL.find("[kernel]").unwrap();
    let text = FULL.replace(&FULL[start..end], "");
    check(&fails(&text, &[]), 0, "machine", "missing required key");
    // A missing key points at its table's header.
    let e = fails(&edit(r#"kind = "anon""#, ""), &[]);
    check(&e, 15, "workload[0].kind", "missing required key");
}

#[test]
fn syntax_error_has_line() {
    let e = fails(&edit("HZ = 250", "HZ = 25 0"), &[]);
    check(&e, 13, "kernel.HZ", "");
    let e = fails(&edit("nr_files = 4", "nr_files = "), &[]);
    check(&e, 25, "workload[1].nr_files", "");
}

#[test]
fn duplicate_workload_name() {
    let e = fails(&edit(r#"name = "scan""#, r#"name = "db""#), &[]);
    check(&e, 23, "workload[1].name", "duplicate workload name `db`");
}

#[test]
fn set_forms() {
    let sc = parse(
        FULL,
        &[
            "kernel.vm.swappiness=10",
            "workload[1].pattern=\"sequential\"",
            "workload.0.pattern = hotcold",
            "workload[0].skew=",
            "machine.memory=16G",
            "workload.1.nr_files=8",
            "workload[1].mmap=true",
            "kernel.vm.page-cluster=0",
            "kernel.vm.lowmem_reserve_ratio=[256, 32]",
            "kernel.vm.dirty_ratio=30",
            "run.slice=1ms",
        ],
    );
    // `skew=` sets an empty string: not a number.
    let e = sc.unwrap_err();
    check(&e, 0, "workload[0].skew", "expected a number, got a string");
    assert_eq!(e.flag.as_deref(), Some("--set workload[0].skew="));

    let sc = parse(
        FULL,
        &[
            "kernel.vm.swappiness=10",
            "workload[1].pattern=\"sequential\"",
            "machine.memory=16G",
            "workload.1.nr_files=8",
            "workload[1].mmap=true",
            "kernel.vm.page-cluster=0",
            "kernel.vm.lowmem_reserve_ratio=[256, 32]",
            "run.slice=1ms",
            "workload[0].skew=1.5",
        ],
    )
    .unwrap();
    assert_eq!(sc.kernel.vm.swappiness, 10);
    assert_eq!(sc.workloads[1].pattern, Some(Pattern::Sequential));
    assert_eq!(sc.machine.memory, Bytes(16 << 30));
    assert_eq!(sc.workloads[1].nr_files, Some(8));
    assert_eq!(sc.workloads[1].mmap, Some(true));
    assert_eq!(sc.kernel.vm.page_cluster, 0);
    assert_eq!(sc.kernel.vm.lowmem_reserve_ratio, vec![256, 32]);
    assert_eq!(sc.run.slice, Nanos(1_000_000));
    assert_eq!(sc.workloads[0].skew, Some(1.5));
}

#[test]
fn set_errors() {
    let e = fails(FULL, &["kernel.vm.swapiness=10"]);
    assert_eq!(
        e.to_string(),
        "--set kernel.vm.swapiness=10: kernel.vm.swapiness: unknown key (did you mean \
         `swappiness`?)"
    );
    check(
        &fails(FULL, &["kernel.foo.bar=1"]),
        0,
        "kernel.foo",
        "unknown key",
    );
    check(&fails(FULL, &["kernel.vm.swappiness"]), 0, "", "KEY=VALUE");
    check(&fails(FULL, &["a..b=1"]), 0, "a..b", "malformed");
    check(
        &fails(FULL, &["workload[5].size=1G"]),
        0,
        "workload[5].size",
        "out of range",
    );
    check(
        &fails(FULL, &["machine.memory.x=1"]),
        0,
        "machine.memory.x",
        "not a table",
    );
    check(
        &fails(FULL, &["machine.memory=4X"]),
        0,
        "machine.memory",
        "unknown unit",
    );
    let e = fails(FULL, &["kernel.vm.swappiness=500"]);
    check(&e, 0, "kernel.vm.swappiness", "must be in 0..=200, got 500");
    assert_eq!(e.flag.as_deref(), Some("--set kernel.vm.swappiness=500"));
    // Later flags win.
    let sc = parse(
        FULL,
        &["kernel.vm.swappiness=500", "kernel.vm.swappiness=0"],
    )
    .unwrap();
    assert_eq!(sc.kernel.vm.swappiness, 0);
}

#[test]
fn semantic_errors_point_at_their_key() {
    let cases: &[(&str, &str, usize, &str, &str)] = &[
        (
            "nr_cpus = 4",
            "nr_cpus = 0",
            8,
            "machine.nr_cpus",
            "1..=1024",
        ),
        (
            r#"memory = "8G""#,
            r#"memory = "1M""#,
            7,
            "machine.memory",
            "at least 64M",
        ),
        (
            r#"size = "4G" }"#,
            "size = 0 }",
            9,
            "machine.swap.size",
            "> 0",
        ),
        (
            "HZ = 250",
            "HZ = 200",
            13,
            "kernel.HZ",
            "100, 250, 300 or 1000",
        ),
        (
            "vm.watermark_scale_factor = 100",
            "vm.dirty_background_ratio = 20",
            12,
            "kernel.vm.dirty_background_ratio",
            "below dirty_ratio (20)",
        ),
        (
            "pattern = \"zipf\"",
            "pattern = \"uniform\"",
            20,
            "workload[0].skew",
            "unless pattern = \"zipf\"",
        ),
        ("skew = 0.9", "skew = -1.0", 20, "workload[0].skew", "> 0"),
        (
            "skew = 0.9",
            "nr_files = 2",
            20,
            "workload[0].nr_files",
            "for kind \"anon\"",
        ),
        (
            "nr_files = 4",
            "mmap = true",
            22,
            "workload[1].nr_files",
            "required",
        ),
        (
            "start = \"1s\"",
            "start = \"20s\"",
            27,
            "workload[1].start",
            "before the end",
        ),
        (
            "start = \"1s\"",
            "io_size = \"6K\"",
            27,
            "workload[1].io_size",
            "multiple of 4K",
        ),
        (
            "start = \"1s\"",
            "write_ratio = 0.5",
            27,
            "workload[1].write_ratio",
            "not allowed",
        ),
        (
            "at = \"5s\"",
            "at = \"1m\"",
            30,
            "action[0].at",
            "before the end",
        ),
        (
            "set = \"kernel.vm.swappiness\"",
            "set = \"machine.memory\"",
            31,
            "action[0].set",
            "only keys under `kernel.`",
        ),
        (
            "set = \"kernel.vm.swappiness\"",
            "set = \"kernel.vm.swapiness\"",
            31,
            "action[0].set",
            "did you mean `swappiness`",
        ),
        (
            "skew = 0.9",
            "advice = \"noreuse\"",
            20,
            "workload[0].advice",
            "file advice",
        ),
        (
            "skew = 0.9",
            "advice = \"sometimes\"",
            20,
            "workload[0].advice",
            "sometimes",
        ),
        (
            "seed = 7",
            "memory_stat_poll = \"10us\"",
            4,
            "run.memory_stat_poll",
            "at least 1ms",
        ),
        (
            "HZ = 250",
            "memcg_stats_flush = \"lazy\"",
            13,
            "kernel.memcg_stats_flush",
            "lazy",
        ),
        (
            "HZ = 250",
            "fault_around_bytes = 4194304",
            13,
            "kernel.fault_around_bytes",
            "0..=2097152",
        ),
        (
            "value = 100",
            "value = 201",
            32,
            "action[0].value",
            "kernel.vm.swappiness: must",
        ),
        (
            "value = 100",
            "value = \"x\"",
            32,
            "action[0].value",
            "expected a non-negative integer, got a string (\"x\")",
        ),
    ];
    for (from, to, line, key, part) in cases {
        check(&fails(&edit(from, to), &[]), *line, key, part);
    }
    let e = fails(
        &edit("start = \"1s\"", "rate = 10.0\nthink_time = \"1ms\""),
        &[],
    );
    check(
        &e,
        28,
        "workload[1].think_time",
        "cannot be combined with rate",
    );
    let e = fails(
        &edit("[[workload]]", "[[nothing]]").replace("[[workload]]", "[[nothing]]"),
        &[],
    );
    check(&e, 15, "nothing", "unknown key");
}

#[test]
fn actions_apply_in_time_order() {
    // dirty_ratio 5 is valid only once dirty_background_ratio is below it, which the
    // earlier action (written later in the file) does.
    let text = format!(
        "{FULL}\n[[action]]\nat = \"3s\"\nset = \"kernel.vm.dirty_ratio\"\nvalue = 5\n\
         \n[[action]]\nat = \"2s\"\nset = \"kernel.vm.dirty_background_ratio\"\nvalue = 2\n"
    );
    parse(&text, &[]).unwrap();
    let bad = text.replace("at = \"2s\"", "at = \"4s\"");
    let e = fails(&bad, &[]);
    check(&e, 37, "action[1].value", "below dirty_ratio (5)");
}

#[test]
fn memory_rounds_down_to_pages() {
    let sc = parse(FULL, &["machine.memory=67108865"]).unwrap();
    assert_eq!(sc.machine.memory, Bytes(64 << 20));
}

#[test]
fn set_key_changes_only_that_key() {
    let sc = parse(FULL, &[]).unwrap();
    let before = toml::Value::try_from(&sc).unwrap();
    let mut after = sc.clone();
    set_key(
        &mut after,
        "kernel.vm.swappiness",
        &toml::Value::Integer(150),
    )
    .unwrap();
    assert_eq!(after.kernel.vm.swappiness, 150);
    let mut want = before.clone();
    want["kernel"]["vm"]["swappiness"] = toml::Value::Integer(150);
    assert_eq!(toml::Value::try_from(&after).unwrap(), want);

    set_key(
        &mut after,
        "kernel.vm.page-cluster",
        &toml::Value::Integer(0),
    )
    .unwrap();
    set_key(&mut after, "workload.1.rate", &toml::Value::Float(100.0)).unwrap();
    assert_eq!(after.kernel.vm.page_cluster, 0);
    assert_eq!(after.workloads[1].rate, Some(100.0));
}

#[test]
fn set_key_errors_leave_scenario_alone() {
    let mut sc = parse(FULL, &[]).unwrap();
    let before = toml::Value::try_from(&sc).unwrap();
    let e = set_key(&mut sc, "kernel.vm.swapiness", &1.into()).unwrap_err();
    assert!(e.contains("kernel.vm.swapiness: unknown key"), "{e}");
    let e = set_key(&mut sc, "kernel.vm.swappiness", &201.into()).unwrap_err();
    assert_eq!(e, "kernel.vm.swappiness: must be in 0..=200, got 201");
    let e = set_key(&mut sc, "kernel.vm.swappiness", &(-1).into()).unwrap_err();
    assert_eq!(e, "kernel.vm.swappiness: must be at least 0, got -1");
    assert_eq!(toml::Value::try_from(&sc).unwrap(), before);
}

#[test]
fn suggestions() {
    assert_eq!(suggest("hz", &["HZ", "vm"]), Some("HZ"));
    assert_eq!(
        suggest("page_cluster", &["page-cluster"]),
        Some("page-cluster")
    );
    assert_eq!(suggest("xyz", &["swappiness"]), None);
    assert_eq!(edit_distance("kitten", "sitting"), 3);
    assert_eq!(edit_distance("strat", "start"), 1);
}

#[test]
fn mglru_keys_and_debugfs_writes_are_checked_where_they_are_written() {
    // kernel.lru_gen.enabled as sysfs takes it: a number, hex, y/n.
    let with = |extra: &str| edit("HZ = 250", &format!("HZ = 250\nlru = \"mglru\"\n{extra}"));
    for (v, bits) in [
        ("7", 7),
        ("\"0x0003\"", 3),
        ("\"y\"", 7),
        ("\"n\"", 0),
        ("1", 1),
    ] {
        let sc = parse(&with(&format!("lru_gen.enabled = {v}")), &[]).unwrap();
        assert_eq!(sc.kernel.lru_gen.enabled.0, bits, "{v}");
    }
    // Line 15 is the added key (under `[kernel]` at line 11, after HZ and lru).
    check(
        &fails(&with("lru_gen.enabled = 8"), &[]),
        15,
        "kernel.lru_gen.enabled",
        "expected 0 to 7",
    );
    check(
        &fails(&with("lru_gen.memcg_reclaim = \"lru\""), &[]),
        15,
        "kernel.lru_gen.memcg_reclaim",
        "iter",
    );
    // A debugfs write: the memcg id must exist (root 1, no others here), node 0.
    let debugfs = |value: &str| {
        with("").replace(
            "set = \"kernel.vm.swappiness\"\nvalue = 100",
            &format!("debugfs = \"lru_gen\"\nvalue = \"{value}\""),
        )
    };
    let sc = parse(&debugfs("+ 1 0 7; - 1 0 3 max 100"), &[]).unwrap();
    assert_eq!(sc.actions[0].debugfs.as_deref(), Some("lru_gen"));
    for (value, part) in [
        ("+ 2 0 7", "no memcg with id 2"),
        ("+ 1 1 7", "no node 1 (the machine has one node, 0)"),
        ("* 1 0 7", "neither + (age) nor - (evict)"),
        ("- 1 0 3 201", "swappiness must be 0 to 200"),
        ("+ 1 0 7 2", "can_swap must be 0 or 1"),
        ("+ 1 0", "expected `+ memcg node seq"),
    ] {
        // The action's value is on line 34 (two lines added above it).
        check(&fails(&debugfs(value), &[]), 34, "action[0].value", part);
    }
    // lru_gen exists only with MGLRU.
    let classic = debugfs("+ 1 0 7").replace("lru = \"mglru\"\n", "");
    check(
        &fails(&classic, &[]),
        32,
        "action[0].debugfs",
        "multi-gen LRU",
    );
}

#[test]
fn cgroup_reads_and_named_files_are_checked_where_they_are_written() {
    // FULL plus cgroup `app` and, as action[1] (and action[2]), the block given.
    let with = |block: &str| format!("{FULL}\n[[cgroup]]\npath = \"app\"\n\n{block}");
    // The 1-based line of the `nth` (0-based) occurrence of `needle` in `text`.
    let line_of = |text: &str, needle: &str, nth: usize| {
        let at = text.match_indices(needle).nth(nth).expect(needle).0;
        text[..at].lines().count() + 1
    };
    let peak = "[[action]]\nat = \"6s\"\ncgroup = \"app\"\nwrite = \"memory.peak\"\n";
    let read = "[[action]]\nat = \"6s\"\ncgroup = \"app\"\nread = \"memory.peak\"\n";
    let ok = with(&format!(
        "{peak}fd = \"A.1\"\nvalue = \"reset\"\n\n{read}fd = \"A.1\"\n\n{read}"
    ));
    let sc = parse(&ok, &[]).unwrap();
    assert_eq!(sc.actions[2].value, None);
    assert_eq!(sc.actions[1].fd.as_deref(), Some("A.1"));
    let cases: &[(String, &str, usize, &str, &str)] = &[
        // A missing key points at its table's header.
        (with(peak), "[[action]]", 1, "action[1].value", "missing"),
        (
            with(&format!("{peak}value = \"\"\n")),
            "value = \"\"",
            0,
            "action[1].value",
            "any non-empty string",
        ),
        (
            with("[[action]]\nat = \"6s\"\ncgroup = \"app\"\nwrite = \"memory.reclaim\"\nfd = \"A\"\nvalue = \"1M\"\n"),
            "fd = \"A\"",
            0,
            "action[1].fd",
            "only a cgroup's memory.peak or memory.swap.peak",
        ),
        (
            with(&format!("{peak}fd = \"a b\"\nvalue = \"x\"\n")),
            "fd = ",
            0,
            "action[1].fd",
            "holds ` `",
        ),
        (
            with(&format!(
                "{peak}fd = \"A\"\nvalue = \"x\"\n\n[[action]]\nat = \"6s\"\ncgroup = \"app\"\nread = \"memory.swap.peak\"\nfd = \"A\"\n"
            )),
            "fd = ",
            1,
            "action[2].fd",
            "`A` is already open on app/memory.peak (action[1])",
        ),
        (
            with(&format!("{read}value = 1\n")),
            "value = 1\n",
            0,
            "action[1].value",
            "a read writes nothing",
        ),
        (
            with("[[action]]\nat = \"6s\"\ncgroup = \"app\"\nread = \"memory.stat\"\n"),
            "read = ",
            0,
            "action[1].read",
            "`memory.stat` cannot be read",
        ),
        (
            with("[[action]]\nat = \"6s\"\ncgroup = \"/\"\nread = \"memory.current\"\n"),
            "read = ",
            0,
            "action[1].read",
            "the root cgroup has no memory.current",
        ),
        (
            with("[[action]]\nat = \"6s\"\ncgroup = \"/\"\nwrite = \"memory.peak\"\nvalue = \"x\"\n"),
            "write = ",
            0,
            "action[1].write",
            "the root cgroup has no memory.peak",
        ),
        (
            with(&format!("{peak}read = \"memory.peak\"\nvalue = \"x\"\n")),
            "[[action]]",
            1,
            "action[1]",
            "not both",
        ),
    ];
    for (text, needle, nth, key, part) in cases {
        check(&fails(text, &[]), line_of(text, needle, *nth), key, part);
    }
}

#[test]
fn oom_keys_are_checked_where_they_are_written() {
    let line_of =
        |text: &str, needle: &str| text[..text.rfind(needle).expect(needle)].lines().count() + 1;
    // oom_score_adj on any workload kind, -1000..=1000.
    let ok = edit("skew = 0.9", "skew = 0.9\noom_score_adj = -1000");
    assert_eq!(
        parse(&ok, &[]).unwrap().workloads[0].oom_score_adj,
        Some(-1000)
    );
    let bad = edit("skew = 0.9", "skew = 0.9\noom_score_adj = 1001");
    check(
        &fails(&bad, &[]),
        line_of(&bad, "oom_score_adj"),
        "workload[0].oom_score_adj",
        "must be in -1000..=1000, got 1001",
    );
    // memory.oom.group: 0 or 1, in the file and written by an action.
    let cg = |group: &str, action: &str| {
        format!("{FULL}\n[[cgroup]]\npath = \"app\"\nmemory.oom.group = {group}\n\n{action}")
    };
    let sc = parse(&cg("1", ""), &[]).unwrap();
    assert_eq!(sc.cgroups[0].memory.oom.group, 1);
    let bad = cg("2", "");
    check(
        &fails(&bad, &[]),
        line_of(&bad, "memory.oom.group"),
        "cgroup[0].memory.oom.group",
        "must be 0 or 1, got 2",
    );
    let write = |cgroup: &str, value: &str| {
        cg(
            "0",
            &format!(
                "[[action]]\nat = \"6s\"\ncgroup = \"{cgroup}\"\nwrite = \"memory.oom.group\"\nvalue = {value}\n"
            ),
        )
    };
    for value in ["1", "0", "\"1\""] {
        parse(&write("app", value), &[]).unwrap();
    }
    for value in ["2", "\"on\"", "true"] {
        let bad = write("app", value);
        check(
            &fails(&bad, &[]),
            line_of(&bad, "value = "),
            "action[1].value",
            "memory.oom.group takes 0 or 1",
        );
    }
    let bad = write("/", "1");
    check(
        &fails(&bad, &[]),
        line_of(&bad, "write = "),
        "action[1].write",
        "the root cgroup has no memory.oom.group",
    );
}
