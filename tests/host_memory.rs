//! Host memory follows what a run touches, not what it configures (issue 9, defect 6):
//! a 1 TiB machine, a 1 TiB zipf set and a 1 TiB swap device run in little host
//! memory, and a run that would not fit is refused before it starts.
//!
//! The peak-RSS test is the only test in this file that runs simulations in-process:
//! VmHWM belongs to the whole test process, and the other tests here only spawn the
//! binary (whose memory is its own).

use reclaimsim::scenario;
use reclaimsim::sim::{RunOptions, Simulation};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_reclaimsim");

/// Before the fixes each of these touched a gigabyte or more: the 1 TiB frame table
/// (8 GiB), the alias table of a 2^28-page zipf set (~10 GiB), the free-slot stack of
/// a 1 TiB swap device (1 GiB), half a million page-cache tables (1 GiB), an OOM-killed
/// 1 TiB mapping's table (2 GiB).
const LIMIT_BYTES: u64 = 256 << 20;

fn run(text: &str, check: bool) -> reclaimsim::report::results::Results {
    let sc = scenario::parse_str(text, "t.toml", &[]).unwrap_or_else(|e| panic!("{e}"));
    reclaimsim::report::run(
        Simulation::new(sc),
        RunOptions {
            check,
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn peak_rss_follows_what_a_run_touches() {
    let hwm = reclaimsim::bench::peak_rss_bytes;
    // A 1 TiB machine running 64 MiB of anonymous memory, invariant checker on (it
    // walks the frame table, so it must skip the blocks never initialised).
    run(
        r#"[run]
duration = "200ms"
sample_interval = "100ms"
[machine]
memory = "1T"
[[workload]]
name = "w"
kind = "anon"
size = "64M"
pattern = "uniform"
"#,
        true,
    );
    assert!(hwm() < LIMIT_BYTES, "1T machine: VmHWM {} MiB", hwm() >> 20);
    // A 1 TiB zipf set for 20 ms: a few thousand pages touched.
    run(
        r#"[run]
duration = "20ms"
sample_interval = "10ms"
[machine]
memory = "1G"
[[workload]]
name = "w"
kind = "anon"
size = "1T"
pattern = "zipf"
skew = 0.99
rate = 100000
"#,
        false,
    );
    assert!(
        hwm() < LIMIT_BYTES,
        "1T zipf set: VmHWM {} MiB",
        hwm() >> 20
    );
    // A 1 TiB zram device under a 256 MiB machine with twice that in use: it swaps.
    run(
        r#"[run]
duration = "300ms"
sample_interval = "100ms"
[machine]
memory = "256M"
[machine.swap]
type = "zram"
size = "1T"
[[workload]]
name = "w"
kind = "anon"
size = "512M"
pattern = "sequential"
"#,
        true,
    );
    assert!(hwm() < LIMIT_BYTES, "1T swap: VmHWM {} MiB", hwm() >> 20);
    // Half a million 1 MiB files, one read: a page-cache table per file allocated up
    // front was 256 entries × 8 B = 2 KiB a file, 1 GiB in all (found by the fuzz
    // harness).
    run(
        r#"[run]
duration = "20ms"
sample_interval = "10ms"
[machine]
memory = "256M"
[[workload]]
name = "f"
kind = "file-read"
nr_files = 500000
file_size = "1M"
io_size = "4K"
pattern = "uniform"
rate = 1000
"#,
        false,
    );
    assert!(hwm() < LIMIT_BYTES, "500k files: VmHWM {} MiB", hwm() >> 20);
    // A 1 TiB mmap-latency mapping faulted in until the OOM killer takes it: zapping
    // it rewrote all 2^28 entries (2 GiB) of its table (found by the fuzz harness).
    let r = run(
        r#"[run]
duration = "300ms"
sample_interval = "100ms"
[machine]
memory = "64M"
[kernel]
reclaim_throttle = "throttle-current"
[[workload]]
name = "mmap"
kind = "mmap-latency"
size = "1T"
"#,
        true,
    );
    // No swap, nothing else to reclaim: the mapping outgrows memory and is killed.
    assert_eq!(r.vmstat["oom_kill"], 1);
    assert!(
        hwm() < LIMIT_BYTES,
        "1T OOM kill: VmHWM {} MiB",
        hwm() >> 20
    );
}

/// A 512 GiB machine under a 1 TiB anonymous set: frames for all of memory,
/// 2^27 × 28 B = 3.5 GiB, the key machine.memory (line 5); page tables for the whole
/// set, 2^28 × 8 B = 2.0 GiB; the frames' LRU ring entries, 2^27 × 8 B = 1.0 GiB; skip
/// sampling's set for its uniform picker, 2^28 × 13 B = 3.25 GiB; with the 32 MiB
/// base, 9.78 GiB.
const TOO_BIG: &str = r#"[run]
duration = "1s"

[machine]
memory = "512G"

[[workload]]
name = "w"
kind = "anon"
size = "1T"
"#;

fn refuse(sets: &[&str]) -> (i32, String, bool) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("big.toml"), TOO_BIG).unwrap();
    let out = Command::new(BIN)
        .current_dir(dir.path())
        .env("RECLAIMSIM_HOST_MEMORY", "2G")
        .args(["run", "big.toml", "--out", "o"])
        .args(sets.iter().flat_map(|s| ["--set", s]))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
    (
        out.status.code().unwrap_or(-1),
        stderr,
        dir.path().join("o").exists(),
    )
}

#[test]
fn a_run_bigger_than_the_host_is_refused_naming_the_key_and_line() {
    let (code, stderr, ran) = refuse(&[]);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(
        stderr,
        "error: big.toml:5: machine.memory: this run may need about 9.8 GiB of host memory \
         (frame table 3.5 GiB, access sampling sets 3.2 GiB, page tables 2.0 GiB, LRU lists \
         1.0 GiB); the host has 2.0 GiB available"
    );
    assert!(!ran, "refused before the run: no output directory");
}

#[test]
fn a_refusal_caused_by_a_set_flag_names_the_flag() {
    // 768 GiB, still below the 1 TiB set: frames for all of memory,
    // 3·2^26 × 28 B = 5.25 GiB, their LRU ring entries at 8 B = 1.5 GiB, 2.0 GiB of
    // page tables and 3.25 GiB of skip set: 12.03 GiB.
    let (code, stderr, _) = refuse(&["machine.memory=768G"]);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(
        stderr,
        "error: --set machine.memory=768G: machine.memory: this run may need about 12.0 GiB \
         of host memory (frame table 5.2 GiB, access sampling sets 3.2 GiB, page tables 2.0 \
         GiB, LRU lists 1.5 GiB); the host has 2.0 GiB available"
    );
}

/// Under `ulimit -v`, a machine whose frame table (28 bytes a page, reserved whole
/// at boot) cannot be mapped is refused with the address space it needs, not a
/// failed allocation: 1 TiB is 2^28 pages, 7.0 GiB of table; 6,000,000 KiB is 5.7 GiB.
#[test]
fn a_frame_table_beyond_the_address_space_limit_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let text = "[machine]\nmemory = \"1G\"\n\n[[workload]]\nname = \"w\"\nkind = \"anon\"\nsize = \"512M\"\n";
    std::fs::write(dir.path().join("s.toml"), text).unwrap();
    let out = Command::new("sh")
        .current_dir(dir.path())
        .args(["-c", "ulimit -v 6000000 && exec \"$0\" \"$@\"", BIN])
        .args(["run", "s.toml", "--out", "o", "--set", "machine.memory=1T"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.starts_with("error: --set machine.memory=1T: machine.memory: this run needs about"),
        "{stderr}"
    );
    assert!(stderr.contains("its frame table takes 7.0 GiB"), "{stderr}");
    assert!(
        stderr.contains("the address-space limit (ulimit -v) is 5.7 GiB"),
        "{stderr}"
    );
    assert!(!dir.path().join("o").exists());
}

#[test]
fn a_sweep_point_bigger_than_the_host_is_refused_before_any_runs() {
    // Point 0 (1 GiB machine): 2.0 GiB of page tables + 3.25 GiB of skip set + 7 MiB of
    // frames + 2 MiB of LRU rings + 32 MiB fits in 6 GiB; point 1 is the 512 GiB
    // machine above, 9.78 GiB.
    let text = format!(
        "{TOO_BIG}\n[sweep]\nmetrics = [\"vmstat.pgfault\"]\n[[sweep.param]]\n\
         key = \"machine.memory\"\nvalues = [\"1G\", \"512G\"]\n"
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("big.toml"), text).unwrap();
    let out = Command::new(BIN)
        .current_dir(dir.path())
        .env("RECLAIMSIM_HOST_MEMORY", "6G")
        .args(["sweep", "big.toml", "--out", "o"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(
        stderr,
        "error: big.toml:5: machine.memory: sweep point 1: this run may need about 9.8 GiB \
         of host memory (frame table 3.5 GiB, access sampling sets 3.2 GiB, page tables 2.0 \
         GiB, LRU lists 1.0 GiB); the host has 6.0 GiB available"
    );
    assert!(!dir.path().join("o").exists(), "no point ran");
}

#[test]
fn a_zone_smaller_than_a_max_order_block_defers_nothing() {
    // Found by the fuzz harness: a 96 KiB DMA32 zone (24 pages) has no whole
    // max-order block to defer; the checker took its empty deferred range for a
    // misaligned one. By hand: DMA32 is pfns 0..24, freed as blocks of 16 and 8 pages
    // and all initialised; Normal is 24..32768: its unaligned head 24..1024 is freed
    // in smaller blocks, and the 31 max-order (1024-page) blocks from 1024 up are
    // deferred; the workload's process, forked as the run is built, takes its few
    // pages from the highest, which deferred_grow_zone initialises first.
    let sc = scenario::parse_str(
        r#"
[run]
duration = "300ms"
[machine]
memory = "128M"
dma32 = "96K"
[[workload]]
name = "fill"
kind = "anon"
size = "100M"
pattern = "sequential"
"#,
        "t.toml",
        &[],
    )
    .unwrap();
    let sim = Simulation::new(sc);
    let z = &sim.mm.zones;
    assert_eq!((z[0].start_pfn, z[0].end_pfn), (0, 24));
    assert_eq!(z[0].nr_deferred_blocks(), 0);
    assert_eq!(z[0].deferred_start_pfn, z[0].deferred_end_pfn);
    assert_eq!(
        (z[0].free_area[4].nr_free, z[0].free_area[3].nr_free),
        (1, 1)
    );
    assert_eq!((z[1].start_pfn, z[1].end_pfn), (24, 32768));
    assert_eq!(
        (
            z[1].deferred_start_pfn,
            z[1].deferred_end_pfn,
            z[1].nr_deferred_blocks()
        ),
        (1024, 32768 - 1024, 30)
    );
    // The run, checker on, initialises deferred blocks as the fill needs them.
    let r = reclaimsim::report::run(
        sim,
        RunOptions {
            check: true,
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(r.vmstat["pgfault"] >= 100 * 256, "{}", r.vmstat["pgfault"]);
}
