//! `run.access_sampling = "skip"` against `each`, whole runs: the same random process,
//! so over seeds the results' counters agree within sampling error (Welch's two-sample
//! statistic on each counter's mean), for each way of taking accesses skip covers.
//! Each case also checks that the runs were under memory pressure (reclaim ran, pages
//! came back), so that agreeing counters mean something.

use reclaimsim::report::results::Results;
use reclaimsim::workload::skip_kv;

mod common;

const SEEDS: u64 = 10;

/// Counters to compare: a vmstat name, or `ops` for the workload `svc` (and, for
/// the cases that ask, `latency_mean`: its operations' mean latency).
const COUNTERS: &[&str] = &[
    "pgfault",
    "pswpout",
    "pswpin",
    "workingset_refault_anon",
    "workingset_activate_anon",
    "pgscan_kswapd",
    "pgsteal_kswapd",
    "ops",
];

fn counter(r: &Results, name: &str) -> f64 {
    match name {
        "ops" => r.workloads["svc"].ops as f64,
        "latency_mean" => r.workloads["svc"].latency_ns.mean,
        // The service's threads' CPU time in user space, and in all.
        "user_ns" => r
            .tasks
            .iter()
            .filter(|(name, _)| name.starts_with("svc/"))
            .map(|(_, t)| t.user_ns as f64)
            .sum(),
        "cpu_ns" => r
            .tasks
            .iter()
            .filter(|(name, _)| name.starts_with("svc/"))
            .map(|(_, t)| (t.user_ns + t.system_ns) as f64)
            .sum(),
        _ => *r.vmstat.get(name).unwrap_or(&0) as f64,
    }
}

/// The counters of `text` over SEEDS seeds under `mode`.
fn runs(text: &str, mode: &str, counters: &[&str]) -> Vec<Vec<f64>> {
    (1..=SEEDS)
        .map(|seed| {
            let sets = [
                format!("run.access_sampling=\"{mode}\""),
                format!("run.seed={seed}"),
            ];
            let sets: Vec<&str> = sets.iter().map(|s| s.as_str()).collect();
            let r = common::run_checked(text, &sets);
            counters.iter().map(|c| counter(&r, c)).collect()
        })
        .collect()
}

fn mean_var(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let m = xs.iter().sum::<f64>() / n;
    let v = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0);
    (m, v)
}

/// Each counter's runs under `each` and `skip`, paired by seed (a seed also decides
/// what is not an access, such as the stats flusher's phase, so the pairs share it):
/// the mean of the pairs' differences within 4.5 standard errors of 0.
fn agree(text: &str, pressure: &[&str]) {
    agree_on(text, pressure, COUNTERS);
}

/// [`agree`] over `counters`.
fn agree_on(text: &str, pressure: &[&str], counters: &[&str]) {
    let (each, skip) = (runs(text, "each", counters), runs(text, "skip", counters));
    assert_ne!(
        each, skip,
        "skipping changed nothing: no access was skipped"
    );
    for (k, name) in counters.iter().enumerate() {
        let d: Vec<f64> = each.iter().zip(&skip).map(|(a, b)| b[k] - a[k]).collect();
        let a: Vec<f64> = each.iter().map(|r| r[k]).collect();
        let ((md, vd), (ma, _)) = (mean_var(&d), mean_var(&a));
        let bound = 4.5 * (vd / d.len() as f64).sqrt();
        assert!(
            md.abs() <= bound,
            "{name}: each {ma:.1}, skip {:.1} on average: {md:.1} apart, bound {bound:.1}",
            ma + md
        );
        if pressure.contains(name) {
            assert!(
                ma > 1000.0,
                "{name}: {ma} under each: no pressure to compare"
            );
        }
    }
}

/// benches/skip/zipf.toml: a zipf set that about fills memory beside a file read
/// sequentially, under reclaim (the file's pages and some of the set's).
const ZIPF: &str = include_str!("../benches/skip/zipf.toml");

#[test]
fn back_to_back_zipf_accesses_agree() {
    agree(ZIPF, &["pswpout", "pswpin", "pgscan_kswapd"]);
}

#[test]
fn paced_zipf_accesses_agree() {
    // Each thread a million accesses a second, one every microsecond.
    let paced = include_str!("../benches/skip/paced.toml");
    agree(paced, &["pswpout", "pswpin", "pgscan_kswapd"]);
}

#[test]
fn paced_uniform_accesses_agree() {
    let paced = include_str!("../benches/skip/paced.toml")
        .replace("pattern = \"zipf\"\nskew = 0.9", "pattern = \"uniform\"")
        .replace("size = \"240M\"", "size = \"232M\"");
    assert!(paced.contains("uniform") && paced.contains("232M"));
    agree(&paced, &["pswpout", "pswpin", "pgscan_kswapd"]);
}

/// paced.toml swept sequentially (each thread its own cursor) with `write_ratio`.
fn paced_sequential(write_ratio: &str) -> String {
    let text = include_str!("../benches/skip/paced.toml")
        .replace("pattern = \"zipf\"\nskew = 0.9", "pattern = \"sequential\"")
        .replace("write_ratio = 0.2", &format!("write_ratio = {write_ratio}"));
    assert!(text.contains("\"sequential\"\nwrite_ratio"));
    text
}

/// A paced sweep's skipped accesses pass their slots in closed form and leave each run
/// as `each` leaves it, byte for byte. Every access a write, the sweep draws nothing.
/// A fifth writes, the draws differ (a settled page's access draws none), but all they
/// decide is a PTE's dirty bit, and an anonymous page's decides nothing here: one read
/// back from the swap device leaves no copy in the swap cache (`do_swap_page` reads it
/// into a new page and frees the slot), so its next eviction writes it either way.
#[test]
fn paced_sequential_sweeps_skipped_are_each_s_byte_for_byte() {
    for (write_ratio, seed) in [("1.0", 1), ("1.0", 2), ("0.2", 1), ("0.2", 2)] {
        let text = paced_sequential(write_ratio);
        let run = |mode: &str| {
            let sets = [
                format!("run.access_sampling=\"{mode}\""),
                format!("run.seed={seed}"),
            ];
            let sets: Vec<&str> = sets.iter().map(|s| s.as_str()).collect();
            common::run_checked(&text, &sets)
        };
        let (each, skip) = (run("each"), run("skip"));
        let what = format!("write_ratio {write_ratio}, seed {seed}");
        assert!(each.vmstat["pswpout"] > 1000, "{what}: under pressure");
        assert_eq!(each.vmstat, skip.vmstat, "{what}");
        assert_eq!(
            serde_json::to_value(&each.workloads).unwrap(),
            serde_json::to_value(&skip.workloads).unwrap(),
            "{what}"
        );
    }
}

#[test]
fn back_to_back_hotcold_accesses_agree() {
    // A fifth of the set takes 95 % of the accesses; the cold rest is what reclaim
    // swaps out and the threads fault back.
    let hotcold = ZIPF.replace(
        "pattern = \"zipf\"\nskew = 0.9",
        "pattern = \"hotcold\"\nhot_fraction = 0.2\nhot_probability = 0.95",
    );
    assert!(hotcold.contains("hotcold"));
    agree(&hotcold, &["pswpout", "pswpin", "pgscan_kswapd"]);
}

/// benches/skip/damon-paced.toml: DAMON_RECLAIM over a paced zipf service that fits
/// in memory, where nearly every access is skipped and what DAMON pages out shows
/// whether it saw the accesses it should.
#[test]
fn paced_zipf_under_damon_reclaim_agrees() {
    agree(
        include_str!("../benches/skip/damon-paced.toml"),
        &["pswpout", "pswpin"],
    );
}

/// benches/skip/kv.toml: memcached's requests beside a stream that keeps reclaim
/// swapping values out. A request that finds its value's pages settled is skipped
/// whole (its time, its latency in its pipelined batch); the others are made.
#[test]
fn kv_requests_agree() {
    let mut counters = COUNTERS.to_vec();
    counters.extend(["latency_mean", "user_ns"]);
    agree_on(
        include_str!("../benches/skip/kv.toml"),
        &["pswpout", "pswpin", "pgscan_kswapd"],
        &counters,
    );
}

/// kv.toml with zipf keys (0.9): a member is drawn by its key's rank weight, and a
/// settled request's value size by the settled keys' weights.
#[test]
fn kv_zipf_requests_agree() {
    let mut counters = COUNTERS.to_vec();
    counters.push("latency_mean");
    let text = include_str!("../benches/skip/kv.toml")
        .replace("pattern = \"uniform\"", "pattern = \"zipf\"\nskew = 0.9");
    assert!(text.contains("zipf"));
    agree_on(&text, &["pswpout", "pswpin", "pgscan_kswapd"], &counters);
}

/// kv.toml paced (100 k requests a second a thread: a batch of 4 every 40 µs, uniform
/// and zipf keys) and thinking (50 µs after each batch): the skipping loop issues each
/// batch as the pacing allows, waiting inside the slice or sleeping past it, as
/// `run_slice`'s loop does.
#[test]
fn paced_kv_requests_agree() {
    let mut counters = COUNTERS.to_vec();
    counters.extend(["latency_mean", "user_ns"]);
    let kv = include_str!("../benches/skip/kv.toml");
    let zipf = kv.replace("pattern = \"uniform\"", "pattern = \"zipf\"\nskew = 0.9");
    for (text, pacing) in [
        (kv, "rate = 100000"),
        (zipf.as_str(), "rate = 100000"),
        (kv, "think_time = \"50us\""),
    ] {
        let text = text.replace(
            "request_time = \"4us\"",
            &format!("request_time = \"4us\"\n{pacing}"),
        );
        assert!(text.contains(pacing));
        agree_on(&text, &["pswpout", "pswpin", "pgscan_kswapd"], &counters);
    }
}

/// kv.toml with hot/cold keys (a fifth of them take 90 % of the requests), the hot
/// set moving half-way (`phase_change`), back to back and paced, and with values
/// not filled beforehand: a member is drawn by its class's chance, a settled
/// request's value size by the settled keys' chances, and the set follows the hot
/// set where it moves.
#[test]
fn kv_hotcold_requests_agree() {
    let mut counters = COUNTERS.to_vec();
    counters.extend(["latency_mean", "user_ns"]);
    let text = include_str!("../benches/skip/kv.toml").replace(
        "pattern = \"uniform\"",
        "pattern = \"hotcold\"\nhot_fraction = 0.2\nhot_probability = 0.9\n\
         phase_change = \"2s\"",
    );
    assert!(text.contains("phase_change"));
    let paced = text.replace(
        "request_time = \"4us\"",
        "request_time = \"4us\"\nrate = 100000",
    );
    assert!(paced.contains("rate = 100000"));
    // Values not filled and the stream cut to 4 MiB: the keys come in as they are
    // first asked for, the new hot set's after the move.
    let unfilled = text
        .replace("fill = true", "fill = false")
        .replace("size = \"320M\"", "size = \"4M\"");
    assert!(unfilled.contains("fill = false") && unfilled.contains("\"4M\""));
    let swapping: &[&str] = &["pswpout", "pswpin", "pgscan_kswapd"];
    for (text, pressure) in [
        (&text, swapping),
        (&paced, swapping),
        (&unfilled, &["pgfault"]),
    ] {
        let before = skip_kv::requests_skipped_here();
        agree_on(text, pressure, &counters);
        assert!(
            skip_kv::requests_skipped_here() > before,
            "no request was skipped"
        );
    }
}

/// kv.toml's clients asking for keys in turn (`pattern = "sequential"`, memtier's
/// S:S): nothing is drawn but each request's set decision, which a run draws as the
/// request would, so skipping gives `each`'s results byte for byte: back to back,
/// paced and thinking, under both LRUs, beside the stream that keeps reclaim swapping
/// values out, and with keys few enough to stay settled between passes.
#[test]
fn kv_requests_in_turn_skipped_are_each_s_byte_for_byte() {
    let kv = include_str!("../benches/skip/kv.toml")
        .replace("pattern = \"uniform\"", "pattern = \"sequential\"");
    assert!(kv.contains("\"sequential\"\nset_ratio"));
    let skipped_here = reclaimsim::workload::skip_kv::requests_skipped_here;
    for lru in ["classic", "mglru"] {
        let lru = format!("kernel.lru=\"{lru}\"");
        for pacing in [
            "",
            "workload.1.rate=100000",
            "workload.1.think_time=\"50us\"",
        ] {
            let sets: Vec<&str> = [lru.as_str(), pacing]
                .into_iter()
                .filter(|s| !s.is_empty())
                .collect();
            exact_runs(&kv, &sets, skipped_here);
            // 20 k keys (39 MiB): their pages stay young between passes.
            let few: Vec<&str> = sets
                .iter()
                .copied()
                .chain(["workload.1.keys=20000"])
                .collect();
            let (skipped, ops) = exact_runs(&kv, &few, skipped_here);
            assert!(
                skipped * 2 > ops,
                "{few:?}: {skipped} of {ops} requests skipped"
            );
        }
    }
}

/// benches/skip/file.toml: a service reading 4 KiB at uniform offsets of three files,
/// paced, beside an anon set and a stream under which reclaim deactivates and evicts
/// its page cache. The reads of settled items pass in closed form (their slots, their
/// latency, each file's `prev_pos` where its last one ended); the others are made.
#[test]
fn paced_uniform_file_reads_agree() {
    file_reads_agree(
        include_str!("../benches/skip/file.toml"),
        &["workingset_refault_file", "pgscan_kswapd"],
    );
}

/// file.toml's service back to back (no `rate`), 2 s: its reads far outrun the
/// others', and reclaim deactivates its pages under it.
#[test]
fn back_to_back_uniform_file_reads_agree() {
    let text = back_to_back(include_str!("../benches/skip/file.toml"));
    file_reads_agree(&text, &["pgscan_kswapd", "pgdeactivate"]);
}

/// file.toml (or a variant of it) with its service back to back for 2 s.
fn back_to_back(paced: &str) -> String {
    let text = paced
        .replace("duration = \"4s\"", "duration = \"2s\"")
        .replace("threads = 2\nrate = 100000\n", "threads = 2\n");
    assert!(!text.contains("100000") && text.contains("\"2s\""));
    text
}

/// [`file_reads_agree`] for a variant of file.toml's service, paced and
/// [`back_to_back`] (`b2b_pressure` the counters that show its pressure).
fn paced_and_back_to_back_agree(paced: &str, b2b_pressure: &[&str]) {
    file_reads_agree(paced, &["workingset_refault_file", "pgscan_kswapd"]);
    file_reads_agree(&back_to_back(paced), b2b_pressure);
}

/// file.toml's service reading at zipf offsets (0.9 over the three files' items),
/// paced and back to back: a member's read is drawn by its item's rank weight, the
/// run's gap by the members' share of the weight, and each file's `prev_pos` by the
/// picker's chances among the settled items.
#[test]
fn zipf_file_reads_agree() {
    let paced = include_str!("../benches/skip/file.toml").replace(
        "pattern = \"uniform\"\nthreads = 2",
        "pattern = \"zipf\"\nskew = 0.9\nthreads = 2",
    );
    assert!(paced.contains("zipf"));
    paced_and_back_to_back_agree(&paced, &["pgscan_kswapd", "pgdeactivate"]);
}

/// file.toml's service loading its files through their mappings at uniform offsets
/// (`mmap = true`), paced and back to back: a run of loads of settled items costs
/// their accesses as user time and leaves nothing behind.
#[test]
fn uniform_mmap_file_reads_agree() {
    let paced = include_str!("../benches/skip/file.toml").replacen(
        "kind = \"file-read\"",
        "kind = \"file-read\"\nmmap = true",
        1,
    );
    assert!(paced.contains("mmap = true"));
    paced_and_back_to_back_agree(&paced, &["pgscan_kswapd"]);
}

/// file.toml's service writing at uniform offsets (`file-write`): a write of an item
/// whose pages are cached and dirty changes nothing while the writer's throttling is
/// quiet, so its runs pass in closed form as reads' do (no file position to leave).
/// 4 MiB files stay dirty between the flusher's rounds; the hog and the stream press
/// on memory as for the reads.
#[test]
fn uniform_file_writes_agree() {
    let text = include_str!("../benches/skip/file.toml")
        .replacen("kind = \"file-read\"", "kind = \"file-write\"", 1)
        .replace("file_size = \"40M\"", "file_size = \"4M\"");
    assert!(text.contains("file-write") && text.contains("\"4M\""));
    let mut counters = COUNTERS.to_vec();
    counters.extend(["nr_dirtied", "nr_written", "latency_mean"]);
    let before = reclaimsim::workload::skip_file::reads_skipped_here();
    agree_on(&text, &["pgscan_kswapd", "nr_dirtied"], &counters);
    let skipped = reclaimsim::workload::skip_file::reads_skipped_here() - before;
    assert!(skipped > 100_000, "{skipped} writes made in closed form");
}

/// file.toml's service reading at hot/cold offsets (a fifth of the items take 95 %
/// of the reads), the hot set moving at 1 s, paced and back to back: a run skips in
/// one phase of the hot set (a slice before the move, or any after it), its members
/// drawn by class chance, the backward draw of `prev_pos` by the picker in that phase.
#[test]
fn hotcold_file_reads_agree() {
    let paced = include_str!("../benches/skip/file.toml").replace(
        "pattern = \"uniform\"\nthreads = 2",
        "pattern = \"hotcold\"\nhot_fraction = 0.2\nhot_probability = 0.95\n\
         phase_change = \"1s\"\nthreads = 2",
    );
    assert!(paced.contains("hotcold"));
    paced_and_back_to_back_agree(&paced, &["pgscan_kswapd", "pgdeactivate"]);
}

/// file.toml's service reading its three files in turn (4 KiB at a time, from each
/// thread's cursor, wrapping): nothing is drawn, so skipping the reads of settled
/// items gives `each`'s results byte for byte (each file's `prev_pos` where the run
/// left it decides readahead at the next miss). Files of 4 MiB, cached and settled
/// after a few passes (nearly every read skipped); the 40 MiB files under reclaim,
/// paced and back to back; under both LRUs. The hog sweeps (a uniform one's draws
/// differ under skip once its pages settle), and the stream (sequential too) is
/// skipped the same way.
#[test]
fn sequential_file_reads_skipped_are_each_s_byte_for_byte() {
    sequential_file_ios_skipped_are_each_s_byte_for_byte("kind = \"file-read\"");
}

/// The same service loading its files through their mappings (`mmap = true`), in
/// turn: a load of pages whose entries are present and young (and their PMD
/// entries) changes nothing, as an anonymous page's access, and leaves no file
/// position. Byte for byte, the files cached and mapped, and under reclaim whose
/// rmap walks age and unmap them.
#[test]
fn sequential_mmap_file_reads_skipped_are_each_s_byte_for_byte() {
    sequential_file_ios_skipped_are_each_s_byte_for_byte("kind = \"file-read\"\nmmap = true");
}

/// The same service as a `file-write` workload writing its files in turn: a write()
/// of pages cached and already dirty changes nothing while the writer's dirty
/// throttling would not look at the global state, as for fio's writes, and a write
/// leaves no file position. Byte for byte, with the files small enough to stay dirty
/// (most writes skipped) and under reclaim that cleans and evicts them.
#[test]
fn sequential_file_writes_skipped_are_each_s_byte_for_byte() {
    sequential_file_ios_skipped_are_each_s_byte_for_byte("kind = \"file-write\"");
}

/// file.toml's service in turn, its `kind = "file-read"` line replaced by `kind`.
fn sequential_file_ios_skipped_are_each_s_byte_for_byte(kind: &str) {
    let paced = include_str!("../benches/skip/file.toml")
        .replace(
            "pattern = \"uniform\"\nthreads = 2",
            "pattern = \"sequential\"\nthreads = 2",
        )
        .replacen("kind = \"file-read\"", kind, 1);
    let back_to_back = paced.replace("threads = 2\nrate = 100000\n", "threads = 2\n");
    assert!(paced.contains("\"sequential\"\nthreads = 2") && !back_to_back.contains("100000"));
    let runs = |text: &str, sets: &[&str]| {
        exact_runs(
            text,
            sets,
            reclaimsim::workload::skip_file::reads_skipped_here,
        )
    };
    let sweep = "workload.1.pattern=\"sequential\"";
    for lru in ["classic", "mglru"] {
        let lru = format!("kernel.lru=\"{lru}\"");
        let lru = lru.as_str();
        let small = [lru, sweep, "workload.0.file_size=\"4M\""];
        for text in [&paced, &back_to_back] {
            let (skipped, ops) = runs(text, &small);
            assert!(
                skipped * 2 > ops,
                "{kind} {lru}: {skipped} of {ops} skipped"
            );
        }
        // Reclaim evicting the files' pages (under each, some 170 k refaults in 4 s):
        // runs of cached reads end at a miss, where the file's `prev_pos` decides
        // readahead's window (sequential, or the cached run behind it).
        let evict = [
            lru,
            sweep,
            "machine.memory=\"320M\"",
            "workload.1.size=\"200M\"",
        ];
        let short: Vec<&str> = evict
            .iter()
            .copied()
            .chain(["run.duration=\"2s\""])
            .collect();
        // (Measured: 13 to 80 % of the reads skipped; writes dirty a page cleaned
        // or evicted since nearly every time, so few of them are.)
        for (text, sets) in [(&paced, &evict[..]), (&back_to_back, &short[..])] {
            let (skipped, ops) = runs(text, sets);
            assert!(
                kind.contains("file-write") || skipped * 20 > ops,
                "{lru}: {skipped} of {ops} reads skipped"
            );
        }
    }
}

/// Random small fio, `file-read` (read() or mmap) and `file-write` (in turn) services beside a sweeping hog and a
/// stream, each run under each and under skip: results and timeseries byte for byte,
/// as both kinds skip exactly. The cases draw what the hand-made ones fix: block and
/// item sizes that need not divide the file, pacing from slots far apart to faster
/// than an I/O, `ops` caps, ramps and stops, one to three jobs, threads and files,
/// one to four CPUs, both LRUs, and machines from roomy to evicting the files.
#[test]
fn random_fio_and_file_read_services_skip_exactly() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(39);
    let (mut fio_skipped, mut file_skipped) = (0, 0);
    for case in 0..24 {
        let fio = case % 2 == 0;
        let mut svc = if fio {
            let rw = ["randread", "read", "randwrite", "write", "randrw"][rng.gen_range(0..5)];
            format!(
                "kind = \"fio\"\nrw = \"{rw}\"\nbs = \"{}K\"\nsize = \"{}K\"\nnumjobs = {}\n",
                [4, 8, 12][rng.gen_range(0..3)],
                rng.gen_range(256..24 * 1024),
                rng.gen_range(1..4),
            )
        } else {
            format!(
                "{}\nnr_files = {}\nfile_size = \"{}K\"\nio_size = \"{}K\"\n\
                 pattern = \"sequential\"\nthreads = {}\n",
                [
                    "kind = \"file-read\"",
                    "kind = \"file-write\"",
                    "kind = \"file-read\"\nmmap = true",
                ][rng.gen_range(0..3)],
                rng.gen_range(1..4),
                rng.gen_range(256..16 * 1024),
                [4, 8, 16][rng.gen_range(0..3)],
                rng.gen_range(1..4),
            )
        };
        if svc.contains("randrw") {
            svc.push_str(&format!("rwmixread = {}\n", rng.gen_range(0..=100)));
        }
        match rng.gen_range(0..4) {
            0 => {}
            1 => svc.push_str("rate = 2000\n"),
            2 => svc.push_str("rate = 50000\n"),
            _ => svc.push_str("rate = 5000000\n"),
        }
        if rng.gen_bool(0.25) {
            svc.push_str(&format!("ops = {}\n", rng.gen_range(1_000..300_000)));
        }
        if fio && rng.gen_bool(0.3) {
            svc.push_str("ramp_time = \"300ms\"\n");
        }
        if rng.gen_bool(0.3) {
            svc.push_str(&format!("stop = \"{}ms\"\n", rng.gen_range(200..1400)));
        }
        let memory = [96, 160, 256][rng.gen_range(0..3)];
        let lru = ["classic", "mglru"][rng.gen_range(0..2)];
        let cpus = rng.gen_range(1..5);
        let text = format!(
            r#"
[run]
duration = "1500ms"
[machine]
memory = "{memory}M"
nr_cpus = {cpus}
[kernel]
lru = "{lru}"
[machine.swap]
type = "zram"
size = "256M"
[[workload]]
name = "svc"
{svc}
[[workload]]
name = "hog"
kind = "anon"
size = "{}M"
pattern = "sequential"
rate = 100000
start = "500ms"
[[workload]]
name = "stream"
kind = "file-read"
nr_files = 1
file_size = "512M"
io_size = "64K"
pattern = "sequential"
rate = 400
"#,
            memory / 2
        );
        let counter = if fio {
            reclaimsim::workload::skip_fio::ios_skipped_here
        } else {
            reclaimsim::workload::skip_file::reads_skipped_here
        };
        // Shown if the case fails, to run it again.
        eprintln!("case {case}, run.seed = {}:{text}", case + 1);
        let seed = format!("run.seed={}", case + 1);
        let (skipped, _) = exact_runs(&text, &[seed.as_str()], counter);
        if fio {
            fio_skipped += skipped;
        } else {
            file_skipped += skipped;
        }
    }
    assert!(fio_skipped > 100_000, "{fio_skipped} fio I/Os skipped");
    assert!(file_skipped > 100_000, "{file_skipped} reads skipped");
}

/// [`agree_on`] for a `file-read` service, with the file LRU's counters and the
/// reads' mean latency, and some reads made in closed form.
fn file_reads_agree(text: &str, pressure: &[&str]) {
    let mut counters = COUNTERS.to_vec();
    counters.extend([
        "workingset_refault_file",
        "pgactivate",
        "pgdeactivate",
        "latency_mean",
        "cpu_ns",
    ]);
    let before = reclaimsim::workload::skip_file::reads_skipped_here();
    agree_on(text, pressure, &counters);
    let skipped = reclaimsim::workload::skip_file::reads_skipped_here() - before;
    assert!(skipped > 100_000, "{skipped} reads made in closed form");
}

/// `text` run under each and under skip with `sets`: the results (but for the
/// provenance, which names the mode) and the timeseries byte for byte, and how many
/// reads skipping made in closed form, with the workload `svc`'s operations.
fn fio_runs(text: &str, sets: &[&str]) -> (u64, u64) {
    exact_runs(text, sets, reclaimsim::workload::skip_fio::ios_skipped_here)
}

/// [`fio_runs`] with the count of operations made in closed form read from
/// `skipped_here` (the skipping module's count on this host thread).
fn exact_runs(text: &str, sets: &[&str], skipped_here: fn() -> u64) -> (u64, u64) {
    let mut outs = Vec::new();
    for mode in ["each", "skip"] {
        let mode = format!("run.access_sampling=\"{mode}\"");
        let all: Vec<&str> = sets.iter().copied().chain([mode.as_str()]).collect();
        let before = skipped_here();
        let out = common::run_checked_series(text, &all);
        let skipped = skipped_here() - before;
        outs.push((out, skipped));
    }
    let (skip, skipped) = outs.pop().unwrap();
    let (each, none) = outs.pop().unwrap();
    assert_eq!(none, 0, "each skipped reads");
    let mut skip_results = skip.results;
    skip_results.provenance = each.results.provenance.clone();
    same_lines(
        &reclaimsim::report::results_json(&each.results),
        &reclaimsim::report::results_json(&skip_results),
        &format!("results.json, {sets:?}"),
    );
    same_lines(
        &each.series.to_csv(),
        &skip.series.to_csv(),
        &format!("timeseries.csv, {sets:?}"),
    );
    (skipped, each.results.workloads["svc"].ops)
}

/// `text` with `sets` and the jobs paced: their slots further apart than a slice
/// (each I/O a sleep and a wake-up), closer (the job waits for them on its CPU), and
/// closer than an I/O takes (it runs behind its pacing), each byte for byte.
/// benches/skip/fio.toml's jobs without pressure: the hog small and sweeping (a
/// uniform one's draws differ under skip, and its faults, at other instants, would
/// move the jobs' CPU time by a fault's cost), the stream nearly still.
const QUIET_FIO: [&str; 3] = [
    "workload.1.size=\"4M\"",
    "workload.1.pattern=\"sequential\"",
    "workload.2.rate=1",
];

/// [`fio_runs`] of the jobs alone ([`QUIET_FIO`], `lru` and `sets`) with a ramp:
/// their files cached after the first passes, nearly every I/O is skipped.
fn quiet_fio_runs(fio: &str, lru: &str, sets: &[&str]) {
    let quiet: Vec<&str> = [lru, "workload.0.ramp_time=\"1s\""]
        .into_iter()
        .chain(QUIET_FIO)
        .chain(sets.iter().copied())
        .collect();
    let (skipped, ops) = fio_runs(fio, &quiet);
    assert!(
        skipped * 10 > ops * 9,
        "{quiet:?}: {skipped} of {ops} I/Os skipped"
    );
}

/// Returns the I/Os skipped and made at each rate.
fn paced_fio_runs(text: &str, lru: &str, sets: &[&str]) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    for rate in [5_000, 40_000, 10_000_000] {
        let rate = format!("workload.0.rate={rate}");
        let all: Vec<&str> = [lru, rate.as_str()]
            .into_iter()
            .chain(sets.iter().copied())
            .collect();
        out.push(fio_runs(text, &all));
    }
    out
}

/// `each` and `skip` the same text, or a panic naming the first line that differs.
fn same_lines(each: &str, skip: &str, what: &str) {
    if let Some((i, (a, b))) = each
        .lines()
        .zip(skip.lines())
        .enumerate()
        .find(|(_, (a, b))| a != b)
    {
        panic!("{what}: line {}: each {a:?}, skip {b:?}", i + 1);
    }
    assert_eq!(each.lines().count(), skip.lines().count(), "{what}: lines");
}

/// A fio read job reads its blocks in a fixed order (a permutation per pass, or in
/// turn), with no random stream to draw from, so skipping the reads that change
/// nothing gives `each`'s results byte for byte: without memory pressure (nearly every
/// read skipped), under global reclaim taking the jobs' page cache
/// (benches/skip/fio.toml), in a memcg at its limit with readahead on (fadvise
/// normal), an `ops` cap and DAMON_RECLAIM's paddr scheme taking referenced bits, and
/// with a `stop` and a ramp, under the classic LRU and MGLRU.
fn fio_reads_skipped_are_each_s_byte_for_byte(rw: &str) {
    let fio = include_str!("../benches/skip/fio.toml").replace("\"randread\"", rw);
    let fio = fio.as_str();
    // Paced jobs read less, so the hog's pages settle: it sweeps, as its uniform
    // draws would differ under skip.
    let extra: &[&str] = &["workload.1.pattern=\"sequential\""];
    for lru in ["classic", "mglru"] {
        let lru = format!("kernel.lru=\"{lru}\"");
        quiet_fio_runs(fio, &lru, &[]);
        let (skipped, ops) = fio_runs(fio, &[lru.as_str()]);
        assert!(
            skipped * 20 > ops,
            "{rw} {lru}: {skipped} of {ops} reads skipped"
        );
        let stopped = [lru.as_str(), "workload.0.stop=\"2500ms\""];
        fio_runs(fio, &stopped);
        paced_fio_runs(fio, &lru, extra);
        // Paced without pressure (nor a ramp), files of 16 MiB: once reads have
        // settled their pages (a few passes), they are skipped.
        let small: Vec<&str> = QUIET_FIO
            .into_iter()
            .chain(["workload.0.size=\"16M\""])
            .collect();
        for (skipped, ops) in paced_fio_runs(fio, &lru, &small) {
            assert!(
                skipped * 5 > ops,
                "{rw} {lru}: {skipped} of {ops} paced reads skipped"
            );
        }
    }
    memcg_fio_runs(rw, "100M", "advice = \"normal\"\n");
}

/// [`fio_runs`] under both LRUs of two fio jobs of `size` (`rw`, `extra` lines
/// added) in a cgroup at its limit of 150 MiB beside a stream, with an `ops` cap and
/// DAMON_RECLAIM's paddr scheme taking referenced bits, on 512 MiB.
fn memcg_fio_runs(rw: &str, size: &str, extra: &str) {
    let memcg = format!(
        r#"
[run]
duration = "3s"
[machine]
memory = "512M"
nr_cpus = 2
[machine.swap]
type = "zram"
size = "1G"
[[cgroup]]
path = "io"
memory.max = "150M"
[[workload]]
name = "svc"
kind = "fio"
rw = {rw}
size = "{size}"
numjobs = 2
ops = 1500000
{extra}cgroup = "io"
[[workload]]
name = "stream"
kind = "file-read"
nr_files = 1
file_size = "1G"
io_size = "128K"
pattern = "sequential"
rate = 300
cgroup = "io"
[damon_reclaim]
enabled = true
min_age = 200000
wmarks_high = 1000
wmarks_mid = 999
wmarks_low = 0
"#
    );
    fio_runs(&memcg, &[]);
    fio_runs(&memcg, &["kernel.lru=\"mglru\""]);
}

#[test]
fn random_fio_reads_skipped_are_each_s_byte_for_byte() {
    fio_reads_skipped_are_each_s_byte_for_byte("\"randread\"");
}

/// A sequential job's pass is its blocks in turn; its reads are settled as a random
/// job's are, and readahead's marks (async readahead at the marked page) keep the
/// reads that start a window one by one.
#[test]
fn sequential_fio_reads_skipped_are_each_s_byte_for_byte() {
    fio_reads_skipped_are_each_s_byte_for_byte("\"read\"");
}

/// A fio write job writes its blocks in the same fixed order, and a write() of pages
/// already cached and dirty changes nothing while the writer's dirty throttling would
/// not look at the global state, so skipping such writes gives `each`'s results byte
/// for byte: files below the background threshold (their pages stay dirty between
/// the flusher's expiry rounds, nearly every write skipped), files over it beside the
/// hog and the stream (the flusher and reclaim cleaning and taking pages as the jobs
/// write, the dirty limit pausing the writers), in a memcg at its limit with
/// DAMON_RECLAIM, and with a `stop` and a ramp, under the classic LRU and MGLRU.
fn fio_writes_skipped_are_each_s_byte_for_byte(rw: &str) {
    let fio = include_str!("../benches/skip/fio.toml").replace("\"randread\"", rw);
    let fio = fio.as_str();
    let extra: &[&str] = &[
        "workload.0.size=\"16M\"",
        "workload.1.pattern=\"sequential\"",
    ];
    for lru in ["classic", "mglru"] {
        let lru = format!("kernel.lru=\"{lru}\"");
        quiet_fio_runs(fio, &lru, &["workload.0.size=\"16M\""]);
        // Reclaim beside the jobs: small files stay dirty, larger ones are cleaned by
        // the flusher between writes. The hog sweeps: with the jobs' files this small
        // a uniform hog's pages settle, and its draws would differ under skip.
        // (Measured: at 16M over 80 % of the writes are skipped, at 32M 1 to 10 %.)
        for size in ["16M", "32M"] {
            let size = format!("workload.0.size=\"{size}\"");
            let sweep = "workload.1.pattern=\"sequential\"";
            let (skipped, ops) = fio_runs(fio, &[lru.as_str(), size.as_str(), sweep]);
            if size.contains("16M") {
                assert!(
                    skipped * 2 > ops,
                    "{rw} {lru}: {skipped} of {ops} writes skipped"
                );
            }
        }
        let stopped = [lru.as_str(), "workload.0.stop=\"2500ms\""];
        fio_runs(fio, &stopped);
        // Paced writers skip at every rate (measured: 28 to 97 % of their writes).
        for (skipped, ops) in paced_fio_runs(fio, &lru, extra) {
            assert!(
                skipped * 5 > ops,
                "{rw} {lru}: {skipped} of {ops} paced writes skipped"
            );
        }
    }
    memcg_fio_runs(rw, "32M", "");
}

#[test]
fn random_fio_writes_skipped_are_each_s_byte_for_byte() {
    fio_writes_skipped_are_each_s_byte_for_byte("\"randwrite\"");
}

#[test]
fn sequential_fio_writes_skipped_are_each_s_byte_for_byte() {
    fio_writes_skipped_are_each_s_byte_for_byte("\"write\"");
}

/// A `randrw` job draws each I/O's kind from its thread's stream, so skipping must
/// draw them as the I/Os it makes would, and a block is skipped only when it is
/// settled for both kinds (cached, dirty, and marked as a read leaves it). Byte for
/// byte again: small files alone (nearly every I/O skipped), beside reclaim, with a
/// `stop`, paced at each rate, and in a memcg at its limit with DAMON_RECLAIM, at
/// mixes of 5 % and 70 % reads (the default is 50), under both LRUs.
#[test]
fn random_fio_mixed_reads_and_writes_skipped_are_each_s_byte_for_byte() {
    let fio = include_str!("../benches/skip/fio.toml").replace("\"randread\"", "\"randrw\"");
    let fio = fio.as_str();
    let small = "workload.0.size=\"16M\"";
    let sweep = "workload.1.pattern=\"sequential\"";
    for lru in ["classic", "mglru"] {
        let lru = format!("kernel.lru=\"{lru}\"");
        for mix in ["5", "70"] {
            let mix = format!("workload.0.rwmixread={mix}");
            quiet_fio_runs(fio, &lru, &[small, mix.as_str()]);
            let (skipped, ops) = fio_runs(fio, &[lru.as_str(), small, sweep, mix.as_str()]);
            assert!(
                skipped * 2 > ops,
                "{mix} {lru}: {skipped} of {ops} I/Os skipped beside reclaim"
            );
        }
        fio_runs(fio, &[lru.as_str(), "workload.0.stop=\"2500ms\""]);
        // Files of 4 MiB, so that even at 5 k I/Os a second each block is read often
        // enough in the run (twice under the classic LRU, and once more) to settle.
        let tiny = "workload.0.size=\"4M\"";
        for (skipped, ops) in paced_fio_runs(fio, &lru, &[tiny, sweep]) {
            // Measured: 22 % (MGLRU at 5 k a second) to 99 % skipped.
            assert!(
                skipped * 10 > ops,
                "{lru}: {skipped} of {ops} paced I/Os skipped"
            );
        }
    }
    memcg_fio_runs("\"randrw\"", "32M", "rwmixread = 70\n");
}

/// `masim-stairs.toml` with `sets` under each and under skip: the results, the
/// timeseries and DAMON's aggregated regions (the trace) the same, byte for byte,
/// with `swapped` pages swapped out at least.
fn masim_byte_for_byte(sets: &[String], swapped: u64) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/masim-stairs.toml");
    byte_for_byte(&path, sets, swapped, Some("damon_aggregated"));
}

/// The scenario at `path` with `sets` under each and under skip: the results, the
/// timeseries and the tracepoint `trace` (if any) the same, byte for byte, with
/// `swapped` pages swapped out at least.
fn byte_for_byte(path: &std::path::Path, sets: &[String], swapped: u64, trace: Option<&str>) {
    use reclaimsim::scenario;
    use reclaimsim::sim::{RunOptions, Simulation};
    use reclaimsim::stats::trace::Tracer;
    let run = |mode: &str| {
        let mut sets = sets.to_vec();
        sets.push(format!("run.access_sampling=\"{mode}\""));
        let sc = scenario::load(path, &sets).unwrap_or_else(|e| panic!("{e}"));
        let mut sim = Simulation::new(sc);
        if let Some(event) = trace {
            sim.enable_trace(Tracer::parse(event, 1_000_000).unwrap());
        }
        let opts = RunOptions {
            check: true,
            ..Default::default()
        };
        reclaimsim::report::run_with_series(sim, opts).unwrap()
    };
    let (each, skip) = (run("each"), run("skip"));
    assert!(each.results.vmstat["pswpout"] > swapped, "under pressure");
    assert_eq!(each.results.vmstat, skip.results.vmstat);
    assert_eq!(
        serde_json::to_value(&each.results.workloads).unwrap(),
        serde_json::to_value(&skip.results.workloads).unwrap()
    );
    assert_eq!(each.series.to_csv(), skip.series.to_csv());
    if let Some(event) = trace {
        let (te, ts) = (each.trace.unwrap(), skip.trace.unwrap());
        assert!(te.contains(event));
        assert_eq!(te, ts);
    }
}

/// An unpaced `anon-hog` writing its region page after page (`stress --vm-keep`)
/// skips as a sequential sweep once the region grows no more: stutterp's hog beside
/// its fio jobs and mmap-latency workers, on a smaller machine so that it is swapped
/// out and faulted back as it sweeps; then one that grows part-way (taken access by
/// access while it grows).
#[test]
fn anon_hog_sweeps_skipped_are_each_s_byte_for_byte() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/stutterp.toml");
    let mut sets = vec![
        "run.duration=\"6s\"".to_string(),
        "machine.memory=\"352M\"".to_string(),
        "workload.2.size=\"300M\"".to_string(),
        "workload.1.numjobs=2".to_string(),
        "workload.1.size=\"50M\"".to_string(),
        "kernel.reclaim_throttle=\"throttle\"".to_string(),
    ];
    byte_for_byte(&path, &sets, 1000, None);
    sets.push("workload.2.grow_by=\"10M\"".to_string());
    sets.push("workload.2.grow_every=\"1s\"".to_string());
    sets.push("workload.2.max_size=\"340M\"".to_string());
    byte_for_byte(&path, &sets, 1000, None);
}

/// masim's page-stride lines are sequential sweeps of their region: skipped, they
/// pass settled runs without a look and, reading or writing only (nothing drawn), leave
/// the run exactly as `each` does, with the stairs on a 96 MiB machine with zram, so
/// the regions are reclaimed and faulted back as they are swept.
#[test]
fn masim_page_stride_lines_skipped_are_each_s_byte_for_byte() {
    let sets = [
        "run.duration=25s",
        "machine.memory=96M",
        "machine.swap.type=\"zram\"",
        "machine.swap.size=\"256M\"",
    ];
    masim_byte_for_byte(&sets.map(String::from), 1000);
}

/// A line with a stride below a page touches each page several times in a row;
/// skipped, the repeats after a page's first access are counted without a look, so
/// the run is `each`'s byte for byte: strides of 64 bytes (64 a page), 3000 (one or
/// two a page) and 256, over a region with a partial last page, reading and writing,
/// under reclaim with zram.
#[test]
fn masim_short_stride_lines_skipped_are_each_s_byte_for_byte() {
    let cfg = "a, 150000000\nb, 67108864\n\nwarm\n5000\na, 0, 64, 1, wo\nb, 0, 3000, 1, ro\n\n\
               hot\n20000\na, 0, 64, 3, ro\nb, 0, 256, 1, rw\n";
    masim_lines_byte_for_byte(cfg, "160M", 10_000);
}

/// [`masim_byte_for_byte`] with the masim configuration `cfg` for 12 s on a machine
/// of `memory` with 256 MiB of zram.
fn masim_lines_byte_for_byte(cfg: &str, memory: &str, swapped: u64) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lines.cfg");
    std::fs::write(&path, cfg).unwrap();
    let sets = [
        format!("workload.0.config=\"{}\"", path.display()),
        "run.duration=12s".to_string(),
        format!("machine.memory={memory}"),
        "machine.swap.type=\"zram\"".to_string(),
        "machine.swap.size=\"256M\"".to_string(),
    ];
    masim_byte_for_byte(&sets, swapped);
}

/// A line with a stride past a page touches another page each time, the same pages
/// every pass; skipped, its settled accesses are counted without a change and page
/// tables whose line entries were seen settled pass without a look, so the run is
/// `each`'s byte for byte: strides of 8 KiB and 20 KiB, then 12289 bytes (not a
/// multiple of a page) and 2 MiB (a page table each), over a region with a partial
/// last page, reading and writing, under reclaim with zram.
#[test]
fn masim_long_stride_lines_skipped_are_each_s_byte_for_byte() {
    let cfg = "a, 150000000\nb, 67108864\n\nwarm\n5000\na, 0, 8192, 1, wo\nb, 0, 20480, 1, ro\n\n\
               hot\n20000\na, 0, 12289, 3, rw\nb, 0, 2097152, 1, ro\n";
    masim_lines_byte_for_byte(cfg, "96M", 1000);
}

/// masim's random lines: each access a byte offset uniform over its region, so the
/// region's whole pages equally often and a last partial page by its bytes. Skipped,
/// a line is the uniform sampler over a region of whole pages and a two-class one
/// over the other: region `a` (150 000 000 bytes, a partial last page) takes three
/// in four batches, `b` (64 MiB) the rest, beside a file read sequentially, under
/// reclaim as with zipf.
#[test]
fn masim_random_lines_agree() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("random.cfg");
    std::fs::write(
        &cfg,
        "a, 150000000\nb, 67108864\n\nrandom\n60000\na, 1, 4096, 3\nb, 1, 4096, 1\n",
    )
    .unwrap();
    let text = ZIPF.replace(
        "kind = \"anon\"\nsize = \"240M\"\npattern = \"zipf\"\nskew = 0.9\nwrite_ratio = 0.2\nthreads = 2",
        &format!("kind = \"masim\"\nconfig = \"{}\"", cfg.display()),
    );
    assert!(text.contains("masim"));
    agree(&text, &["pswpout", "pswpin", "pgscan_kswapd"]);
}

/// Paced hot/cold threads: a run of slots in one phase of the hot set (the slice
/// before the phase change, or any after it) skips as the unpaced sampler does, its
/// skipped slots passing in closed form; the hot set moves at 1 s, so the runs cover
/// both phases and the faults the move brings.
#[test]
fn paced_hotcold_accesses_agree() {
    let paced = include_str!("../benches/skip/paced.toml").replace(
        "pattern = \"zipf\"\nskew = 0.9",
        "pattern = \"hotcold\"\nhot_fraction = 0.2\nhot_probability = 0.95\nphase_change = \"1s\"",
    );
    assert!(paced.contains("hotcold"));
    agree(&paced, &["pswpout", "pswpin", "pgscan_kswapd"]);
}
