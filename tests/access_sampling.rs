//! `run.access_sampling = "skip"` against `each`, whole runs: the same random process,
//! so over seeds the results' counters agree within sampling error (Welch's two-sample
//! statistic on each counter's mean), for each way of taking accesses skip covers.
//! Each case also checks that the runs were under memory pressure (reclaim ran, pages
//! came back), so that agreeing counters mean something.

use reclaimsim::report::results::Results;

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
    counters.push("latency_mean");
    agree_on(
        include_str!("../benches/skip/kv.toml"),
        &["pswpout", "pswpin", "pgscan_kswapd"],
        &counters,
    );
}
