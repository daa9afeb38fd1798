//! Readahead and access advice end to end: mmap reads of a file bigger than its
//! memcg's limit, with the kernel's windows and without them.

mod common;

/// A reader cgroup limited to 64 MiB mapping a 128 MiB file (32768 pages) and
/// reading it page by page in order, `passes` times, with read_ahead_kb = 8192
/// (2048-page windows).
fn mmap_twice_the_limit(advice: &str, passes: u64) -> reclaimsim::report::results::Results {
    let ops = passes * FILE_PAGES;
    let text = format!(
        r#"
[run]
duration = "60s"
stop_when_done = true
[machine]
memory = "1G"
nr_cpus = 2
[machine.storage]
read_ahead_kb = 8192
[[cgroup]]
path = "reader"
memory.max = "64M"
[[workload]]
name = "reader"
kind = "file-read"
cgroup = "reader"
nr_files = 1
file_size = "128M"
mmap = true
pattern = "sequential"
advice = "{advice}"
ops = {ops}
"#
    );
    common::run_checked(&text, &[])
}

const FILE_PAGES: u64 = 32768;

/// With readahead the stream's pages are in the page cache (or on their way) before
/// the reader gets there: a pass takes a major fault where nothing is cached, at
/// page 0 (the first pass's empty cache; later passes find page 0 evicted, the file
/// being twice the limit), and read-around plus the asynchronous windows behind each
/// PG_readahead marker keep ahead of it from there. Fault-around maps 16 cached
/// pages per fault. Under MADV_RANDOM there is no readahead: every page is a major
/// fault of its own, every one a device read.
#[test]
fn an_mmap_stream_takes_a_few_major_faults_and_random_one_per_page() {
    let r = mmap_twice_the_limit("normal", 2);
    let pages = r.workloads["reader"].ops;
    assert_eq!(pages, 2 * FILE_PAGES);
    let majflt = r.vm("pgmajfault");
    assert!(majflt >= 2, "one per pass at page 0: {majflt}");
    assert!(
        majflt <= 36,
        "a few dozen at most over two passes: {majflt}"
    );
    // Fault-around: a fault per 16 pages (the first of a window waits, the rest are
    // mapped around it), give or take the markers a fault must reach itself.
    let faults = r.vm("pgfault");
    assert!(
        faults >= pages / 16 && faults <= pages / 8,
        "{faults} faults for {pages} pages"
    );
    // The second pass's pages were evicted by the limit: refaults, as readahead adds
    // them (up to a window beyond the end of the reads).
    assert!(r.vm("workingset_refault_file") >= FILE_PAGES - 2048);

    let r = mmap_twice_the_limit("random", 2);
    assert_eq!(r.workloads["reader"].ops, 2 * FILE_PAGES);
    assert_eq!(r.vm("pgmajfault"), 2 * FILE_PAGES, "one per page");
    assert_eq!(
        r.vm("pgfault"),
        2 * FILE_PAGES,
        "fault-around finds nothing cached"
    );
    assert_eq!(r.vm("pgpgin"), 4 * 2 * FILE_PAGES, "one page per read");
}

/// MADV_SEQUENTIAL: the stream is read by page_cache_sync_ra's windows, and the
/// mapping has no recency (its pages are evicted first in, first out); as few major
/// faults as without advice.
#[test]
fn madv_sequential_streams_too() {
    let r = mmap_twice_the_limit("sequential", 2);
    assert_eq!(r.workloads["reader"].ops, 2 * FILE_PAGES);
    assert!(r.vm("pgmajfault") <= 36, "{}", r.vm("pgmajfault"));
}

/// Same scenario and seed, same results, with the readahead state and reads in flight.
#[test]
fn readahead_runs_are_deterministic() {
    let a = mmap_twice_the_limit("normal", 1);
    let b = mmap_twice_the_limit("normal", 1);
    assert_eq!(
        serde_json::to_string(&a.vmstat).unwrap(),
        serde_json::to_string(&b.vmstat).unwrap()
    );
}

/// One 200 MiB read() under memory.max = 140M goes through the page cache a batch
/// at a time, as filemap_read does: its pages are charged as readahead brings them,
/// and once the cgroup is at its limit the charges reclaim the pages it has already
/// copied, so it completes as 100 reads of 2 MiB do: one operation, every page of
/// the file read from the device once (pgpgin 200 MiB in KiB, no refault: nothing
/// is evicted before it is copied), no OOM kill, the cgroup never over its limit.
/// The device reads 51200 pages at 2 GiB/s (1908 ns a page): the read cannot take
/// less than 51200 × 1908 ns.
#[test]
fn a_read_bigger_than_the_limit_is_charged_as_it_goes() {
    let text = r#"
[run]
duration = "5s"
stop_when_done = true
[machine]
memory = "1G"
[[cgroup]]
path = "r"
memory.max = "140M"
[[workload]]
name = "reader"
kind = "file-read"
nr_files = 1
file_size = "200M"
io_size = "200M"
pattern = "sequential"
cgroup = "r"
ops = 1
"#;
    let one = common::run_checked(text, &[]);
    let many = common::run_checked(
        &text
            .replace("io_size = \"200M\"", "io_size = \"2M\"")
            .replace("ops = 1", "ops = 100"),
        &[],
    );
    for (r, ops) in [(&one, 1), (&many, 100)] {
        let w = &r.workloads["reader"];
        assert_eq!(w.ops, ops);
        assert_eq!(w.killed_at_ns, None);
        assert_eq!(r.vm("oom_kill"), 0);
        assert_eq!(r.vm("pgpgin"), 200 << 10);
        assert_eq!(r.vm("workingset_refault_file"), 0);
        let m = &r.cgroups["r"]["memory"];
        assert!(m["peak"].as_u64().unwrap() <= 140 << 20);
        assert!(m["events"]["max"].as_u64().unwrap() > 0, "it reclaimed");
    }
    assert!(
        one.workloads["reader"].latency_ns.max >= 51200 * 1908,
        "{}",
        one.workloads["reader"].latency_ns.max
    );
}
