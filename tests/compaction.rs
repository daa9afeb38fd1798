//! The write-only sysctls as timed actions: `vm.compact_memory`, `vm.drop_caches`.

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

/// vm.drop_caches = 1 drops the clean, unmapped page cache: a reader that read two
/// 32 MiB files whole (16384 pages) and stopped leaves them all cached; the drop
/// frees every one of them. Dirty pages stay: a writer's unwritten data is kept.
#[test]
fn drop_caches_drops_the_clean_page_cache() {
    let text = r#"
[run]
duration = "3s"
[machine]
memory = "512M"
[kernel]
vm.dirty_expire_centisecs = 100000
vm.dirty_writeback_centisecs = 100000
[[workload]]
name = "reader"
kind = "file-read"
nr_files = 2
file_size = "32M"
pattern = "sequential"
stop = "1s"
[[workload]]
name = "writer"
kind = "file-write"
nr_files = 1
file_size = "1M"
pattern = "sequential"
stop = "1s"
[[action]]
at = "2s"
sysctl = "vm.drop_caches"
value = 3
"#;
    let r = common::run_checked(text, &[]);
    assert_eq!(
        r.actions[0].outcome.as_deref(),
        Some("16384 page cache pages dropped")
    );
    assert_eq!(r.vmstat["drop_pagecache"], 1);
    assert_eq!(r.vmstat["drop_slab"], 1);
    // What is left in the page cache is the writer's dirty megabyte.
    assert_eq!(r.vmstat["nr_file_pages"], 256);
    assert_eq!(r.vmstat["nr_dirty"], 256);
}
