//! A fuzz harness for the command line: generated scenarios and `--set` strings, each
//! run by the real binary in a child process with a short duration and `--check`.
//!
//! A case passes when the child exits 0 with a whole results.json whose virtual time
//! advanced, or exits 2 with one `error:` line that names a key (`FILE:LINE: KEY: ...`
//! with a line of at least 1, or the `--set` flag at fault). Anything else fails it: a
//! panic, a signal (an allocator abort is SIGABRT), exit 1 (an invariant broken under
//! `--check`), a hang (no exit within the time limit while virtual time stopped
//! advancing: a slow run, say `--check` every millisecond on a large machine, is given
//! up to `max_time` as long as its progress lines move), or a peak RSS over the memory
//! bound. Cases come from the shipped scenarios: valid ones perturbed key by key, their
//! text mangled, random TOML built from their keys, and random `--set` strings.
//!
//! `tests/fuzz.rs` runs a fixed number of cases in CI; `cargo run --release --example
//! fuzz -- --minutes N` runs longer.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One generated input: a scenario text and the flags it is run with.
#[derive(Debug, Clone)]
pub struct Case {
    pub id: u64,
    pub kind: &'static str,
    pub text: String,
    /// `--set` strings (before the harness's own duration override).
    pub sets: Vec<String>,
}

/// How a case ended, if it failed.
#[derive(Debug, Clone)]
pub struct Failure {
    pub case: Case,
    pub why: String,
    pub stderr: String,
}

/// Limits a case runs under.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Virtual time each run simulates (`--set run.duration=...`, last so it wins):
    /// one of these, by the case's id.
    pub durations: &'static [&'static str],
    /// A child still running after this is a hang, unless its virtual time still
    /// advances (its `--progress` lines move); such a run may go on up to `max_time`.
    pub timeout: Duration,
    pub max_time: Duration,
    /// Peak resident memory allowed to a child.
    pub max_rss_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            durations: &["100ms", "300ms", "1s"],
            timeout: Duration::from_secs(60),
            max_time: Duration::from_secs(600),
            max_rss_bytes: 2 << 30,
        }
    }
}

/// Values that break naive code: zero, negatives, extremes, wrong types, odd text.
const NASTY: &[&str] = &[
    "0",
    "-1",
    "1",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551615",
    "1e308",
    "-0.0",
    "nan",
    "inf",
    "0.5",
    "\"\"",
    "\"0\"",
    "\"0ns\"",
    "\"1ns\"",
    "\"0B\"",
    "\"1T\"",
    "\"16T\"",
    "\"1P\"",
    "\"-4K\"",
    "\"4X\"",
    "\"a\\u0000b\"",
    "\"a\\nb\"",
    "\"/\"",
    "\"..\"",
    "\"a,b\"",
    "\"\u{e9}\u{1F600}\"",
    "true",
    "[]",
    "[1, 2, 3]",
    "{}",
    "{ a = 1 }",
    "1979-05-27T07:32:00Z",
    "\"max\"",
    "\"zipf\"",
    "\"1s\"",
    "\"100us\"",
];

/// Keys the shipped scenarios leave at their defaults, fuzzed too.
const EXTRA_PATHS: &[&str] = &[
    "costs.access",
    "costs.minor_fault",
    "costs.major_fault",
    "costs.scan_page",
    "costs.reclaim_page",
    "costs.rmap_walk",
    "costs.syscall",
    "costs.copy_page",
    "costs.walk_pte",
    "costs.walk_young",
    "costs.damon_check",
    "costs.tlb_flush",
    "costs.tlb_ipi",
    "run.slice",
    "run.sample_interval",
    "run.seed",
    "machine.nr_cpus",
    "machine.dma32",
    "kernel.hz",
    "kernel.vm.min_free_kbytes",
    "kernel.vm.watermark_scale_factor",
    "kernel.vm.watermark_boost_factor",
    "kernel.vm.page-cluster",
    "kernel.vm.lowmem_reserve_ratio",
    "kernel.vm.extfrag_threshold",
    "kernel.vm.compaction_proactiveness",
    "kernel.vm.compact_unevictable_allowed",
    "kernel.kswapd_compaction",
    "kernel.pcp",
    "kernel.vm.percpu_pagelist_fraction",
    "kernel.vm.percpu_pagelist_high_fraction",
    "kernel.vm.zone_reclaim_mode",
    "kernel.vm.min_unmapped_ratio",
    "kernel.vm.min_slab_ratio",
    "kernel.transparent_hugepage.enabled",
    "kernel.transparent_hugepage.defrag",
    "kernel.lru",
    "kernel.lru_gen.enabled",
    "kernel.lru_gen.min_ttl_ms",
    "kernel.lru_gen.memcg_reclaim",
];

/// Scenario keys seen in the corpus, with the table they sit in, for random TOML and
/// `--set` paths.
#[derive(Debug, Default, Clone)]
pub struct Corpus {
    pub texts: Vec<String>,
    /// Dotted leaf paths (`kernel.vm.swappiness`, `workload[0].size`).
    pub paths: Vec<String>,
}

impl Corpus {
    /// The shipped scenarios in `dir` (`scenarios/`), without their `[sweep]` tables
    /// (a run ignores them; sweeps are too slow to fuzz here).
    pub fn load(dir: &Path) -> std::io::Result<Corpus> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .collect();
        files.sort();
        let mut c = Corpus::default();
        for f in files {
            let text = std::fs::read_to_string(&f)?;
            let text = match text.find("\n[sweep") {
                Some(i) => text[..i].to_string(),
                None => text,
            };
            if let Ok(doc) = text.parse::<toml_edit::DocumentMut>() {
                leaf_paths(doc.as_item(), String::new(), &mut c.paths);
            }
            c.texts.push(text);
        }
        // Keys with defaults that the shipped scenarios do not spell out.
        c.paths.extend(EXTRA_PATHS.iter().map(|p| p.to_string()));
        c.paths.sort();
        c.paths.dedup();
        Ok(c)
    }
}

fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_string()
    } else {
        format!("{prefix}.{key}")
    }
}

fn leaf_paths(item: &toml_edit::Item, prefix: String, out: &mut Vec<String>) {
    match item {
        toml_edit::Item::Table(t) => {
            for (k, v) in t.iter() {
                leaf_paths(v, join(&prefix, k), out);
            }
        }
        toml_edit::Item::ArrayOfTables(a) => {
            for (i, t) in a.iter().enumerate() {
                for (k, v) in t.iter() {
                    leaf_paths(v, join(&format!("{prefix}[{i}]"), k), out);
                }
            }
        }
        toml_edit::Item::Value(toml_edit::Value::InlineTable(t)) => {
            for (k, v) in t.iter() {
                leaf_paths(&toml_edit::Item::Value(v.clone()), join(&prefix, k), out);
            }
        }
        toml_edit::Item::Value(_) => out.push(prefix),
        toml_edit::Item::None => {}
    }
}

/// The case generator: deterministic from its seed.
pub struct Generator {
    rng: Pcg64Mcg,
    corpus: Corpus,
    next_id: u64,
}

impl Generator {
    pub fn new(corpus: Corpus, seed: u64) -> Generator {
        Generator {
            rng: Pcg64Mcg::seed_from_u64(seed),
            corpus,
            next_id: 0,
        }
    }

    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.rng.gen_range(0..xs.len())]
    }

    fn nasty(&mut self) -> String {
        self.pick(NASTY).to_string()
    }

    /// A value near `old` that validation may well accept: a number scaled, a size or a
    /// time with another magnitude. Valid-but-odd inputs are where hangs and aborts
    /// hide; nasty ones mostly test the messages.
    fn plausible(&mut self, old: &toml_edit::Value) -> String {
        const FACTORS: [f64; 9] = [0.0, 0.001, 0.1, 0.5, 1.5, 2.0, 10.0, 1000.0, 1e6];
        let f = *self.pick(&FACTORS);
        match old {
            toml_edit::Value::Integer(i) => format!("{}", (*i.value() as f64 * f) as i64),
            toml_edit::Value::Float(x) => format!("{}", x.value() * f),
            toml_edit::Value::String(text) => {
                let t = text.value();
                let unit = t.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
                let sizes = ["0", "1", "4K", "1M", "64M", "1G", "16G", "1T", "3T"];
                let times = ["0ns", "1ns", "1us", "100us", "1ms", "50ms", "1s", "100s"];
                let pick = match unit {
                    "K" | "M" | "G" | "T" | "B" => self.pick(&sizes).to_string(),
                    "ns" | "us" | "ms" | "s" => self.pick(&times).to_string(),
                    _ => t.to_string(),
                };
                format!("\"{pick}\"")
            }
            _ => self.nasty(),
        }
    }

    pub fn next_case(&mut self) -> Case {
        self.next_id += 1;
        let id = self.next_id;
        let base = self.pick(&self.corpus.texts.clone()).clone();
        let (kind, text, sets) = match self.rng.gen_range(0..10) {
            0..=2 => ("nudge", self.nudge(&base), Vec::new()),
            3..=4 => ("perturb", self.perturb(&base), Vec::new()),
            5 => ("mangle", self.mangle(&base), Vec::new()),
            6 => ("random-toml", self.random_toml(), Vec::new()),
            _ => {
                let n = self.rng.gen_range(1..=3);
                let sets = (0..n).map(|_| self.random_set()).collect();
                ("set", base, sets)
            }
        };
        Case {
            id,
            kind,
            text,
            sets,
        }
    }

    /// Sets one or two values of a valid scenario to plausible other magnitudes
    /// (including keys it leaves at their defaults): inputs that often still validate.
    fn nudge(&mut self, text: &str) -> String {
        let Ok(mut doc) = text.parse::<toml_edit::DocumentMut>() else {
            return text.to_string();
        };
        let mut paths = Vec::new();
        leaf_paths(doc.as_item(), String::new(), &mut paths);
        paths.extend(EXTRA_PATHS.iter().map(|p| p.to_string()));
        for _ in 0..self.rng.gen_range(1..=2) {
            let path = self.pick(&paths).clone();
            let segs = split_path(&path);
            let old = leaf_value(doc.as_item(), &segs).unwrap_or_else(|| {
                // A default: a time or a count, by the key's table.
                if path.starts_with("costs.") || path.starts_with("run.") {
                    toml_edit::Value::from("100ns")
                } else {
                    toml_edit::Value::from(100)
                }
            });
            let value = self.plausible(&old);
            ensure_tables(&mut doc, &segs);
            edit_path(doc.as_item_mut(), &segs, 9, &value);
        }
        doc.to_string()
    }

    /// Replaces one to three values of a valid scenario with nasty ones, or removes a
    /// key, or adds an unknown one.
    fn perturb(&mut self, text: &str) -> String {
        let Ok(mut doc) = text.parse::<toml_edit::DocumentMut>() else {
            return text.to_string();
        };
        let mut paths = Vec::new();
        leaf_paths(doc.as_item(), String::new(), &mut paths);
        for _ in 0..self.rng.gen_range(1..=3) {
            if paths.is_empty() {
                break;
            }
            let path = self.pick(&paths).clone();
            let action = self.rng.gen_range(0..10);
            let segs = split_path(&path);
            let value = match leaf_value(doc.as_item(), &segs) {
                Some(old) if self.rng.gen_bool(0.6) => self.plausible(&old),
                _ => self.nasty(),
            };
            edit_path(doc.as_item_mut(), &segs, action, &value);
        }
        doc.to_string()
    }

    /// Byte-level damage: a truncation, a duplicated line, a control character.
    fn mangle(&mut self, text: &str) -> String {
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        if lines.is_empty() {
            return String::new();
        }
        let i = self.rng.gen_range(0..lines.len());
        match self.rng.gen_range(0..6) {
            0 => lines.truncate(i),
            1 => {
                let l = lines[i].clone();
                lines.insert(i, l);
            }
            2 => {
                let l = &mut lines[i];
                let cut = l
                    .char_indices()
                    .nth(l.chars().count() / 2)
                    .map_or(0, |c| c.0);
                l.truncate(cut);
            }
            3 => lines[i].push('\u{0}'),
            4 => lines.insert(i, "[run]".into()),
            _ => lines[i] = lines[i].replace('=', "=="),
        }
        lines.join("\n")
    }

    /// TOML assembled from the corpus's keys with random values (mostly nasty).
    fn random_toml(&mut self) -> String {
        let mut s = String::new();
        let n = self.rng.gen_range(1..12);
        for _ in 0..n {
            let path = self.pick(&self.corpus.paths.clone()).clone();
            let value = if self.rng.gen_bool(0.5) {
                self.nasty()
            } else {
                format!("{}", self.rng.gen_range(0..1000))
            };
            // Written as a dotted key at the top level: TOML allows it for plain
            // tables; `workload[0]` style paths become quoted keys, also fine input.
            let key: Vec<String> = split_path(&path)
                .iter()
                .map(|seg| match seg {
                    PathSeg::Key(k) => format!("\"{k}\""),
                    PathSeg::Index(i) => format!("\"{i}\""),
                })
                .collect();
            s.push_str(&format!("{} = {value}\n", key.join(".")));
        }
        s
    }

    /// A `--set` string: a known path or a malformed one, a nasty or plain value.
    fn random_set(&mut self) -> String {
        let path = match self.rng.gen_range(0..8) {
            0 => "workload[99999999999999999999].size".to_string(),
            1 => "a..b".to_string(),
            2 => "workload.-1.size".to_string(),
            3 => ["x"; 2000].join("."),
            4 => "kernel.vm".to_string(),
            _ => self.pick(&self.corpus.paths.clone()).clone(),
        };
        let value = match self.rng.gen_range(0..4) {
            0 => String::new(),
            1 => format!("{}", self.rng.gen_range(0..100_000)),
            _ => self.nasty(),
        };
        if self.rng.gen_range(0..20) == 0 {
            path // no `=` at all
        } else {
            format!("{path}={value}")
        }
    }
}

#[derive(Debug, Clone)]
enum PathSeg {
    Key(String),
    Index(usize),
}

fn split_path(path: &str) -> Vec<PathSeg> {
    let mut out = Vec::new();
    for part in path.split('.') {
        match part.split_once('[') {
            Some((k, rest)) => {
                out.push(PathSeg::Key(k.to_string()));
                if let Ok(i) = rest.trim_end_matches(']').parse() {
                    out.push(PathSeg::Index(i));
                }
            }
            None => out.push(PathSeg::Key(part.to_string())),
        }
    }
    out
}

/// Creates the tables above a plain dotted path (`kernel.vm.x` needs [kernel] and
/// its `vm`), so a default key can be set.
fn ensure_tables(doc: &mut toml_edit::DocumentMut, path: &[PathSeg]) {
    let mut t = doc.as_table_mut();
    for seg in &path[..path.len().saturating_sub(1)] {
        let PathSeg::Key(k) = seg else {
            return;
        };
        let entry = t
            .entry(k)
            .or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()));
        match entry.as_table_mut() {
            Some(next) => t = next,
            None => return,
        }
    }
}

/// The value at `path`, if it is a plain value.
fn leaf_value(item: &toml_edit::Item, path: &[PathSeg]) -> Option<toml_edit::Value> {
    let mut cur = item;
    for seg in path {
        cur = match (seg, cur) {
            (PathSeg::Key(k), toml_edit::Item::Table(t)) => t.get(k)?,
            (PathSeg::Key(k), toml_edit::Item::Value(toml_edit::Value::InlineTable(t))) => {
                return t.get(k).cloned()
            }
            (PathSeg::Index(i), toml_edit::Item::ArrayOfTables(a)) => {
                // The rest of the path is a key of that table.
                let t = a.get(*i)?;
                let PathSeg::Key(k) = path.last()? else {
                    return None;
                };
                return t.get(k).and_then(|i| i.as_value()).cloned();
            }
            _ => return None,
        };
    }
    cur.as_value().cloned()
}

/// Applies one edit at `path`: action 0 removes the key, 1 adds an unknown sibling,
/// anything else sets `value` (falling back to a string if it is not TOML).
fn edit_path(item: &mut toml_edit::Item, path: &[PathSeg], action: u32, value: &str) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut cur = item;
    for seg in parents {
        cur = match (seg, cur) {
            (PathSeg::Key(k), toml_edit::Item::Table(t)) => match t.get_mut(k) {
                Some(v) => v,
                None => return,
            },
            (PathSeg::Index(i), toml_edit::Item::ArrayOfTables(a)) => match a.get_mut(*i) {
                Some(t) => {
                    // Tables in an array of tables are not Items; edit the leaf here.
                    let rest = &path[path.len() - 1..];
                    if let [PathSeg::Key(k)] = rest {
                        apply(t, k, action, value);
                    }
                    return;
                }
                None => return,
            },
            _ => return,
        };
    }
    if let (PathSeg::Key(k), toml_edit::Item::Table(t)) = (last, cur) {
        apply(t, k, action, value);
    }
}

fn apply(t: &mut toml_edit::Table, key: &str, action: u32, value: &str) {
    match action {
        0 => {
            t.remove(key);
        }
        1 => {
            t.insert(
                &format!("{key}_typo"),
                toml_edit::value(toml_edit::Value::from(1)),
            );
        }
        _ => {
            let v = format!("v = {value}")
                .parse::<toml_edit::DocumentMut>()
                .ok()
                .and_then(|d| d.get("v").and_then(|i| i.as_value()).cloned())
                .unwrap_or_else(|| toml_edit::Value::from(value));
            t.insert(key, toml_edit::value(v));
        }
    }
}

/// How a passing case ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    /// Exit 0 with a whole result.
    Ran,
    /// Exit 2 with a message naming a key.
    Rejected,
}

/// Runs one case with the binary at `bin` in `work` (a scratch directory).
pub fn run_case(bin: &Path, work: &Path, case: &Case, limits: &Limits) -> Result<Pass, Failure> {
    let fail = |why: String, stderr: String| Failure {
        case: case.clone(),
        why,
        stderr,
    };
    let _ = std::fs::remove_dir_all(work);
    std::fs::create_dir_all(work).map_err(|e| fail(format!("scratch dir: {e}"), String::new()))?;
    let file = work.join("case.toml");
    std::fs::write(&file, &case.text).map_err(|e| fail(format!("write: {e}"), String::new()))?;
    let out = work.join("out");
    let stderr_path = work.join("stderr.txt");
    let mut cmd = Command::new(bin);
    cmd.current_dir(work)
        .args([
            "run",
            "case.toml",
            "--out",
            "out",
            "-q",
            "--check",
            "--progress",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(
            std::fs::File::create(&stderr_path)
                .map_err(|e| fail(format!("stderr file: {e}"), String::new()))?,
        );
    for s in &case.sets {
        cmd.arg("--set").arg(s);
    }
    cmd.arg("--set").arg(format!(
        "run.duration={}",
        limits.durations[case.id as usize % limits.durations.len().max(1)]
    ));
    let child = cmd
        .spawn()
        .map_err(|e| fail(format!("spawn: {e}"), String::new()))?;
    let pid = child.id() as i32;
    let simulated = || last_progress(&std::fs::read_to_string(&stderr_path).unwrap_or_default());
    let mut waited = limits.timeout;
    let mut outcome = wait_with_rusage(pid, limits.timeout);
    // Past the limit: slow but advancing is not a hang; wait on while it advances.
    while outcome.is_none() && waited < limits.max_time {
        let before = simulated();
        let step = Duration::from_secs(10);
        outcome = wait_with_rusage(pid, step);
        waited += step;
        if outcome.is_none() && simulated() <= before {
            break;
        }
    }
    let (status, max_rss_bytes) = match outcome {
        Some(x) => x,
        None => {
            let _ = Command::new("kill")
                .args(["-9", &child.id().to_string()])
                .status();
            let _ = wait_with_rusage(child.id() as i32, Duration::from_secs(10));
            let stderr = std::fs::read_to_string(&stderr_path).unwrap_or_default();
            return Err(fail(
                format!(
                    "hang: no exit within {waited:?}, virtual time at {:.3} s",
                    last_progress(&stderr)
                ),
                stderr,
            ));
        }
    };
    let stderr = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    if max_rss_bytes > limits.max_rss_bytes {
        return Err(fail(
            format!("peak RSS {} MiB over the bound", max_rss_bytes >> 20),
            stderr,
        ));
    }
    match status {
        Exit::Signal(sig) => Err(fail(format!("killed by signal {sig}"), stderr)),
        _ if stderr.contains("panicked at") => Err(fail("panic".into(), stderr)),
        Exit::Code(0) => check_results(&out.join("results.json"))
            .map(|_| Pass::Ran)
            .map_err(|w| fail(w, stderr)),
        Exit::Code(2) => check_message(&stderr)
            .map(|_| Pass::Rejected)
            .map_err(|w| fail(w, stderr)),
        Exit::Code(c) => Err(fail(format!("exit status {c}"), stderr)),
    }
}

/// The virtual time of the last `progress: X of Y s simulated` line (0 if none).
fn last_progress(stderr: &str) -> f64 {
    stderr
        .lines()
        .rev()
        .find_map(|l| {
            l.strip_prefix("progress: ")?
                .split(' ')
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or(0.0)
}

/// A successful run wrote a whole results.json whose virtual time advanced.
fn check_results(path: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("results.json: {e}"))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("results.json does not parse: {e}"))?;
    match v["duration_ns"].as_u64() {
        Some(t) if t > 0 => Ok(()),
        _ => Err("results.json: virtual time did not advance".into()),
    }
}

/// A rejected input gets one `error:` line naming a key: `case.toml:LINE: KEY: ...` with
/// LINE >= 1, or the command-line flag at fault.
pub fn check_message(stderr: &str) -> Result<(), String> {
    let Some(line) = stderr.lines().find(|l| l.starts_with("error: ")) else {
        return Err("exit 2 without an `error:` line".into());
    };
    let msg = &line["error: ".len()..];
    if msg.contains("--set") || msg.contains("--seed") || msg.contains("--trace") {
        return Ok(());
    }
    let Some(rest) = msg.strip_prefix("case.toml") else {
        return Err("the message names neither the file nor a flag".into());
    };
    // `case.toml:LINE: KEY: ...`, or `case.toml: KEY: ...` for a key the file lacks
    // (a missing table has no line to point at).
    let after = match rest.strip_prefix(':') {
        Some(r) if r.starts_with(' ') => r,
        Some(r) => {
            let digits: String = r.chars().take_while(char::is_ascii_digit).collect();
            match digits.parse::<u64>() {
                Ok(0) => return Err("the message gives line 0".into()),
                Ok(_) => r[digits.len()..].strip_prefix(':').unwrap_or(""),
                Err(_) => return Err("the message gives no line".into()),
            }
        }
        None => return Err("the message names neither the file nor a flag".into()),
    };
    let key = after
        .strip_prefix(' ')
        .and_then(|r| r.split_once(": "))
        .map(|(k, _)| k);
    match key {
        Some(k) if !k.trim().is_empty() => Ok(()),
        _ => Err("the message names no key".into()),
    }
}

enum Exit {
    Code(i32),
    Signal(i32),
}

/// Waits for `pid` (polling, so a hang is seen) and returns how it ended with its
/// peak RSS; None if it is still running after `timeout`.
fn wait_with_rusage(pid: i32, timeout: Duration) -> Option<(Exit, u64)> {
    let started = Instant::now();
    loop {
        let mut status = 0;
        // SAFETY: plain wait4 on our own child with valid out-pointers.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if r == pid {
            let exit = if libc::WIFSIGNALED(status) {
                Exit::Signal(libc::WTERMSIG(status))
            } else {
                Exit::Code(libc::WEXITSTATUS(status))
            };
            // ru_maxrss is in KiB on Linux.
            return Some((exit, usage.ru_maxrss as u64 * 1024));
        }
        if r < 0 || started.elapsed() >= timeout {
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Saves a failing case to `dir/case-ID/` (scenario, flags, stderr, reason).
pub fn save_failure(dir: &Path, f: &Failure) -> std::io::Result<PathBuf> {
    let d = dir.join(format!("case-{}", f.case.id));
    std::fs::create_dir_all(&d)?;
    std::fs::write(d.join("case.toml"), &f.case.text)?;
    std::fs::write(d.join("sets.txt"), f.case.sets.join("\n"))?;
    std::fs::write(d.join("stderr.txt"), &f.stderr)?;
    std::fs::write(d.join("why.txt"), format!("{} ({})\n", f.why, f.case.kind))?;
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_lines_give_the_virtual_time_reached() {
        let err = "progress: 0.120 of 1.000 s simulated (12%), 2s wall, about 15s left\n\
                   progress: 0.250 of 1.000 s simulated (25%), 4s wall, about 12s left\n";
        assert_eq!(last_progress(err), 0.25);
        assert_eq!(last_progress("error: x\n"), 0.0);
    }

    #[test]
    fn messages_that_name_a_key_pass() {
        assert!(check_message("error: case.toml:7: machine.memory: bad\n").is_ok());
        assert!(check_message("error: --set a.b=1: unknown key\n").is_ok());
        assert!(check_message("error: case.toml:0: x: bad\n").is_err());
        assert!(check_message("error: case.toml:3: bad\n").is_err());
        assert!(check_message("error: case.toml: machine: missing required key\n").is_ok());
        assert!(check_message("error: case.toml: bad\n").is_err());
        assert!(check_message("error: something broke\n").is_err());
        assert!(check_message("nothing\n").is_err());
    }

    #[test]
    fn paths_and_edits_reach_arrays_of_tables() {
        let mut doc = "[run]\nseed = 1\n[[workload]]\nname = \"a\"\nsize = \"1M\"\n"
            .parse::<toml_edit::DocumentMut>()
            .unwrap();
        let mut paths = Vec::new();
        leaf_paths(doc.as_item(), String::new(), &mut paths);
        assert_eq!(paths, ["run.seed", "workload[0].name", "workload[0].size"]);
        edit_path(
            doc.as_item_mut(),
            &split_path("workload[0].size"),
            5,
            "\"1T\"",
        );
        assert!(doc.to_string().contains("size = \"1T\""), "{doc}");
        edit_path(doc.as_item_mut(), &split_path("run.seed"), 0, "");
        assert!(!doc.to_string().contains("seed"), "{doc}");
    }

    #[test]
    fn the_generator_is_deterministic() {
        let corpus = Corpus {
            texts: vec!["[run]\nseed = 1\n[machine]\nmemory = \"64M\"\n".into()],
            paths: vec!["run.seed".into(), "machine.memory".into()],
        };
        let mut a = Generator::new(corpus.clone(), 5);
        let mut b = Generator::new(corpus, 5);
        for _ in 0..50 {
            let (x, y) = (a.next_case(), b.next_case());
            assert_eq!((x.text, x.sets), (y.text, y.sets));
        }
    }
}
