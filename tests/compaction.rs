//! Compaction from the outside: the `vm.compact_memory` timed action.

mod common;

/// Writing 1 to vm.compact_memory compacts every zone whole: the migrate scanner
/// looks at pages, what it isolates migrates, and the action's outcome counts the
/// pages migrated (the run's pgmigrate_success: nothing else migrates here). The
/// invariant checker runs at every sample.
#[test]
fn compact_memory_compacts_every_zone() {
    let text = r#"
[run]
duration = "4s"
[machine]
memory = "512M"
nr_cpus = 2
[[workload]]
name = "cache"
kind = "file-read"
nr_files = 4
file_size = "80M"
pattern = "uniform"
stop = "2s"
[[workload]]
name = "maps"
kind = "mmap-latency"
size = "16M"
stop = "2s"
[[action]]
at = "2500ms"
sysctl = "vm.compact_memory"
value = 1
"#;
    let r = common::run_checked(text, &[]);
    let migrated = r.vmstat["pgmigrate_success"];
    assert!(migrated > 0);
    assert!(
        r.vmstat["compact_migrate_scanned"] > 100_000,
        "the whole 512 MiB zone"
    );
    assert!(r.vmstat["compact_isolated"] >= migrated);
    assert_eq!(r.actions[0].key, "vm.compact_memory");
    assert_eq!(
        r.actions[0].outcome.as_deref(),
        Some(format!("{migrated} pages migrated").as_str())
    );
    // Without the action nothing migrates.
    let quiet = text.replace(
        "[[action]]\nat = \"2500ms\"\nsysctl = \"vm.compact_memory\"\nvalue = 1\n",
        "",
    );
    assert_eq!(
        common::run_checked(&quiet, &[]).vmstat["pgmigrate_success"],
        0
    );
    // Only 1, only that sysctl.
    for (bad, key) in [
        ("value = 1", "value = 2"),
        (
            "sysctl = \"vm.compact_memory\"",
            "sysctl = \"vm.drop_cachez\"",
        ),
    ] {
        let e = reclaimsim::scenario::parse_str(&text.replace(bad, key), "s.toml", &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("action[0]"), "{e}");
    }
}
