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
    assert!(
        e.message.contains("--set workload[1].hot_fraction=[]"),
        "{e}"
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
        "q.toml:0: kernel.vm.no_such: unknown key (expected one of `swappiness`, \
         `min_free_kbytes`, `watermark_scale_factor`, `lowmem_reserve_ratio`, \
         `dirty_background_ratio`, `dirty_ratio`, `dirty_bytes`, `dirty_background_bytes`, \
         `dirty_expire_centisecs`, `dirty_writeback_centisecs`, `page-cluster`) \
         (from `--set kernel.vm.no_such=1`)"
    );
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
