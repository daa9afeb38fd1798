//! How much of the host's memory a run may need, bounded before it starts.
//!
//! The simulator's big arrays are committed by the host as they are touched (the frame
//! table's blocks are initialised on first use, page tables and the swap map are
//! zeroed allocations, a zipf table stops at 2^20 ranks), so what a run needs follows
//! what it can touch, not what it configures: a frame per page the workloads can make
//! resident, a page-table entry per page they map, an address space per file or
//! mapping, a swap-map entry per page that can be swapped. [`estimate`] adds those bounds up and names the scenario key behind the
//! biggest; [`check`] compares the total with what the host has available, so a run
//! that would not fit is refused before it starts instead of aborting half way.

use crate::scenario::units::Bytes;
use crate::scenario::{Pattern, Scenario, SwapKind, Workload as WorkloadCfg, WorkloadKind};
use crate::workload::pattern::ZIPF_TABLE_RANKS;

const PAGE_SIZE: u64 = 4096;
/// `struct page`-sized frames (`mm::page::Frame`, 28 bytes).
const FRAME_BYTES: u64 = std::mem::size_of::<crate::mm::page::Frame>() as u64;
/// A page-table (or page-cache) entry.
const PTE_BYTES: u64 = 8;
/// A page's entry in an LRU ring (`mm::list::LruList`: 4 bytes, at most twice as many
/// entries as pages; its chunks only where entries are).
const LRU_RING_BYTES: u64 = 8;
/// Per page of its range, a workload's set for a random picker under skip sampling
/// (`workload::skip`, shared by the threads; built only once its accesses settle): a
/// membership bit, a place (4) and a list entry (4, in a buffer up to twice its
/// length).
const SKIP_SET_BYTES: u64 = 13;
/// The same for a zipf picker: a membership bit and a bit by rank, and per block of
/// 64 ranks a tree node and an edge weight (8 each): half a byte, rounded up.
const ZIPF_SKIP_SET_BYTES: u64 = 1;
/// Per page table (512 pages) of a sequential sweep's range under skip sampling, per
/// thread: the table's change count when the thread's sweep last saw it settled.
const SKIP_SEQ_BYTES_PER_TABLE: u64 = 8;
/// Per key, a `kv` workload's set under skip sampling (`workload::skip_kv`): a
/// membership bit, a list entry and a place.
const KV_SKIP_SET_BYTES: u64 = 9;
/// Per page of a fio job's file, its set under skip
/// sampling (`workload::skip_fio`): a membership bit per block and, for at most a
/// quarter of the blocks, a place in the pass (16 bytes).
const FIO_SKIP_SET_BYTES: u64 = 5;
/// Per item (`io_size`) of a `file-read` or `file-write` workload, its set under skip
/// sampling (`workload::skip_file`, built once its reads settle): a membership
/// bit, a place (4) and a list entry (4); at zipf offsets a rank's weight (8) and bit
/// instead.
const FILE_SKIP_SET_BYTES_PER_ITEM: u64 = 9;
/// A swap slot: its entry (8), its memcg (2), its place on the freed-slot stack (4).
const SWAP_SLOT_BYTES: u64 = 14;
/// Building a zipf alias table: weights, scaled weights, probabilities, aliases and the
/// buckets, per rank.
const ZIPF_BUILD_BYTES_PER_RANK: u64 = 40;
/// Frames initialised beyond those in use: one max-order block per zone being split,
/// and the unaligned ends of each zone, initialised at boot.
const FRAME_SLACK_PAGES: u64 = 4 * 1024;
/// An address space (`mm::Space`: a file or a mapping) with its name, and its share of
/// the spaces vector's growth (a doubling vector briefly holds both copies).
const SPACE_BYTES: u64 = 256;
/// The program itself, its statistics and output buffers.
const BASE_BYTES: u64 = 32 << 20;

/// One part of the estimate and the scenario key that sets its size.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    pub what: &'static str,
    pub bytes: u64,
    pub key: String,
}

/// The host memory a run may need: the sum of its parts plus a fixed base.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    pub parts: Vec<Part>,
}

impl Estimate {
    pub fn total_bytes(&self) -> u64 {
        BASE_BYTES + self.parts.iter().map(|p| p.bytes).sum::<u64>()
    }

    /// The biggest part (the one whose key to blame).
    pub fn biggest(&self) -> Option<&Part> {
        self.parts.iter().max_by_key(|p| p.bytes)
    }

    /// `frame table 8.0 GiB, page tables 1.2 GiB`: the parts of at least 5% of the
    /// total, biggest first, the same kind summed.
    pub fn breakdown(&self) -> String {
        let mut by_kind: Vec<(&str, u64)> = Vec::new();
        for p in &self.parts {
            match by_kind.iter_mut().find(|(w, _)| *w == p.what) {
                Some((_, b)) => *b += p.bytes,
                None => by_kind.push((p.what, p.bytes)),
            }
        }
        by_kind.sort_by_key(|&(_, b)| std::cmp::Reverse(b));
        let total = self.total_bytes();
        let shown: Vec<String> = by_kind
            .iter()
            .filter(|(_, b)| *b * 20 >= total)
            .map(|(w, b)| format!("{w} {}", gib(*b)))
            .collect();
        shown.join(", ")
    }
}

/// A run that would not fit in the host's memory.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "this run may need about {} of host memory ({}); the host has {} available",
    gib(.estimate.total_bytes()),
    .estimate.breakdown(),
    gib(*.available_bytes)
)]
pub struct TooBig {
    /// The scenario key behind the biggest part.
    pub key: String,
    pub estimate: Estimate,
    pub available_bytes: u64,
}

/// `9.3 GiB`, or `120 MiB` below a GiB.
fn gib(bytes: u64) -> String {
    if bytes < 1 << 30 {
        format!("{} MiB", bytes.div_ceil(1 << 20))
    } else {
        format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
    }
}

/// What a workload maps: its pages, and the key that sets their number; its address
/// spaces (files or mappings), and the key that sets theirs.
struct Mapped {
    pages: u64,
    anon: bool,
    key: String,
    spaces: u64,
    spaces_key: String,
}

fn mapped(i: usize, w: &WorkloadCfg) -> Mapped {
    let k = |name: &str| format!("workload[{i}].{name}");
    let pages = |b: Option<Bytes>| b.map_or(0, |b| b.0.div_ceil(PAGE_SIZE));
    let (pages, anon, key) = match w.kind {
        WorkloadKind::Anon => (pages(w.size), true, k("size")),
        WorkloadKind::FileRead | WorkloadKind::FileWrite => (
            w.nr_files.unwrap_or(1) as u64 * pages(w.file_size),
            false,
            k("file_size"),
        ),
        WorkloadKind::Kv => {
            let bytes = w.keys.unwrap_or(1) * w.value_size.map_or(0, |b| b.0);
            (bytes.div_ceil(PAGE_SIZE), true, k("keys"))
        }
        WorkloadKind::Fio => (
            w.numjobs.unwrap_or(1) as u64 * pages(w.size),
            false,
            k("size"),
        ),
        WorkloadKind::MmapLatency => (w.threads as u64 * pages(w.size), true, k("size")),
        WorkloadKind::AnonHog => match w.max_size {
            Some(m) if m.0 > w.size.map_or(0, |s| s.0) => (pages(Some(m)), true, k("max_size")),
            _ => (pages(w.size), true, k("size")),
        },
        WorkloadKind::Phases => {
            let (steps, _, _) = w.phase_program();
            let (j, p) = steps
                .iter()
                .enumerate()
                .max_by_key(|(_, p)| p.offset.0.saturating_add(p.size.0))
                .map_or((0, 0), |(j, p)| {
                    (j, p.offset.0.saturating_add(p.size.0).div_ceil(PAGE_SIZE))
                });
            let key = if w.config.is_some() {
                k("config")
            } else {
                k(&format!("phase[{j}].size"))
            };
            (p, true, key)
        }
        // Slab pages live in the frame table; objects are a heap entry each.
        WorkloadKind::Slab | WorkloadKind::Highalloc => (1, false, k("kind")),
        WorkloadKind::Masim => {
            let bytes: u64 = w
                .masim()
                .into_iter()
                .flat_map(|m| &m.regions)
                .map(|r| r.size)
                .sum();
            (bytes.div_ceil(PAGE_SIZE), true, k("config"))
        }
        WorkloadKind::Trace => (
            w.loaded_trace().map_or(0, |t| t.pages),
            w.backing != Some(crate::scenario::Backing::File),
            k("trace"),
        ),
    };
    let (spaces, spaces_key) = match w.kind {
        WorkloadKind::FileRead | WorkloadKind::FileWrite => {
            (w.nr_files.unwrap_or(1) as u64, k("nr_files"))
        }
        WorkloadKind::Fio => (w.numjobs.unwrap_or(1) as u64, k("numjobs")),
        WorkloadKind::MmapLatency => (w.threads as u64, k("threads")),
        WorkloadKind::Masim => (w.masim().map_or(1, |m| m.regions.len() as u64), key.clone()),
        _ => (1, key.clone()),
    };
    // Each process maps its own.
    let nr_processes = w.processes.unwrap_or(1) as u64;
    Mapped {
        pages: pages.max(1) * nr_processes,
        anon,
        key,
        spaces: spaces * nr_processes,
        spaces_key,
    }
}

/// The zipf samplers a workload builds: (ranks, key).
fn zipf_sets(i: usize, w: &WorkloadCfg, m: &Mapped) -> Vec<(u64, String)> {
    let zipf = w.pattern == Some(Pattern::Zipf);
    match w.kind {
        WorkloadKind::Phases => w
            .phase_program()
            .0
            .iter()
            .enumerate()
            .filter(|(_, p)| p.pattern == Pattern::Zipf)
            .map(|(j, p)| {
                let ranks = p.size.0.div_ceil(PAGE_SIZE);
                let key = if w.config.is_some() {
                    format!("workload[{i}].config")
                } else {
                    format!("workload[{i}].phase[{j}].size")
                };
                (ranks, key)
            })
            .collect(),
        WorkloadKind::Kv if zipf => vec![(w.keys.unwrap_or(1), m.key.clone())],
        WorkloadKind::Anon | WorkloadKind::FileRead | WorkloadKind::FileWrite if zipf => {
            vec![(m.pages, m.key.clone())]
        }
        _ => Vec::new(),
    }
}

/// An upper bound on the host memory `sc` can make the simulator touch, by part.
pub fn estimate(sc: &Scenario) -> Estimate {
    let maps: Vec<Mapped> = sc
        .workloads
        .iter()
        .enumerate()
        .map(|(i, w)| mapped(i, w))
        .collect();
    let mut parts = Vec::new();
    for (m, (i, w)) in maps.iter().zip(sc.workloads.iter().enumerate()) {
        parts.push(Part {
            what: "page tables",
            bytes: m.pages * PTE_BYTES,
            key: m.key.clone(),
        });
        parts.push(Part {
            what: "address spaces",
            bytes: m.spaces * SPACE_BYTES,
            key: m.spaces_key.clone(),
        });
        for (ranks, key) in zipf_sets(i, w, m) {
            parts.push(Part {
                what: "zipf tables",
                bytes: ranks.min(ZIPF_TABLE_RANKS) * ZIPF_BUILD_BYTES_PER_RANK,
                key,
            });
        }
    }
    if sc.run.access_sampling == crate::scenario::AccessSampling::Skip {
        for (m, w) in maps.iter().zip(&sc.workloads) {
            if matches!(w.kind, WorkloadKind::Anon | WorkloadKind::Phases) {
                let only_sweeps = match w.kind {
                    WorkloadKind::Phases => {
                        w.phases.iter().all(|p| p.pattern == Pattern::Sequential)
                    }
                    _ => w.pattern == Some(Pattern::Sequential),
                };
                let only_zipf = match w.kind {
                    WorkloadKind::Phases => w.phases.iter().all(|p| p.pattern == Pattern::Zipf),
                    _ => w.pattern == Some(Pattern::Zipf),
                };
                let bytes = if only_sweeps {
                    w.threads as u64 * m.pages.div_ceil(512) * SKIP_SEQ_BYTES_PER_TABLE
                } else if only_zipf {
                    m.pages * ZIPF_SKIP_SET_BYTES
                } else {
                    m.pages * SKIP_SET_BYTES
                };
                parts.push(Part {
                    what: "access sampling sets",
                    bytes,
                    key: m.key.clone(),
                });
            } else if let (WorkloadKind::Kv, Some(keys)) = (w.kind, w.keys) {
                parts.push(Part {
                    what: "access sampling sets",
                    bytes: keys * KV_SKIP_SET_BYTES,
                    key: m.key.clone(),
                });
            } else if w.kind == WorkloadKind::Fio {
                parts.push(Part {
                    what: "access sampling sets",
                    bytes: m.pages * FIO_SKIP_SET_BYTES,
                    key: m.key.clone(),
                });
            } else if matches!(w.kind, WorkloadKind::FileRead | WorkloadKind::FileWrite) {
                let io_pages = w.io_size.map_or(1, |b| b.0.div_ceil(PAGE_SIZE)).max(1);
                parts.push(Part {
                    what: "access sampling sets",
                    bytes: m.pages / io_pages * FILE_SKIP_SET_BYTES_PER_ITEM,
                    key: m.key.clone(),
                });
            }
        }
    }
    let frames = frame_table(sc, &maps);
    parts.push(Part {
        what: "LRU lists",
        bytes: frames.bytes / FRAME_BYTES * LRU_RING_BYTES,
        key: frames.key.clone(),
    });
    parts.push(frames);
    if let Some(p) = swap_map(sc, &maps) {
        parts.push(p);
    }
    parts.retain(|p| p.bytes > 0);
    Estimate { parts }
}

/// Frames initialised: at most every page the workloads map (plus a zram pool holding
/// their anon pages compressed) and a few blocks of slack, at most all of memory.
fn frame_table(sc: &Scenario, maps: &[Mapped]) -> Part {
    let memory_pages = sc.machine.memory.0 / PAGE_SIZE;
    let mapped: u64 = maps.iter().map(|m| m.pages).sum();
    let anon: u64 = maps.iter().filter(|m| m.anon).map(|m| m.pages).sum();
    let zram = match sc.machine.swap.kind {
        SwapKind::Zram => {
            let slots = sc.machine.swap.size.0 / PAGE_SIZE;
            (anon.min(slots) as f64 / sc.machine.swap.compression_ratio.max(1.0)).ceil() as u64
        }
        _ => 0,
    };
    let usable = mapped + zram + FRAME_SLACK_PAGES;
    let key = if memory_pages <= usable {
        "machine.memory".to_string()
    } else {
        maps.iter()
            .max_by_key(|m| m.pages)
            .map_or_else(|| "machine.memory".to_string(), |m| m.key.clone())
    };
    Part {
        what: "frame table",
        bytes: usable.min(memory_pages) * FRAME_BYTES,
        key,
    }
}

/// Swap slots used: at most one per anon page mapped, at most the device's.
fn swap_map(sc: &Scenario, maps: &[Mapped]) -> Option<Part> {
    if sc.machine.swap.kind == SwapKind::None {
        return None;
    }
    let slots = sc.machine.swap.size.0 / PAGE_SIZE;
    let anon: u64 = maps.iter().filter(|m| m.anon).map(|m| m.pages).sum();
    let key = if slots <= anon {
        "machine.swap.size".to_string()
    } else {
        maps.iter()
            .filter(|m| m.anon)
            .max_by_key(|m| m.pages)
            .map_or_else(|| "machine.swap.size".to_string(), |m| m.key.clone())
    };
    Some(Part {
        what: "swap map",
        bytes: slots.min(anon) * SWAP_SLOT_BYTES,
        key,
    })
}

/// The variable that overrides the host's available memory (a size: `3G`), for tests
/// and for keeping a run well inside a shared machine.
pub const HOST_MEMORY_ENV: &str = "RECLAIMSIM_HOST_MEMORY";

/// Memory the host can give a new process: `RECLAIMSIM_HOST_MEMORY` if set and valid,
/// else MemAvailable from /proc/meminfo; `None` if neither is known.
pub fn available_bytes() -> Option<u64> {
    if let Ok(v) = std::env::var(HOST_MEMORY_ENV) {
        if let Ok(b) = crate::scenario::units::parse_size(v.trim()) {
            return Some(b);
        }
    }
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    mem_available(&meminfo)
}

/// MemAvailable (kB) of a /proc/meminfo text, in bytes.
fn mem_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// A run whose frame table would not fit in the process's address-space limit
/// (`ulimit -v`): the table is reserved whole at boot (28 bytes a page of
/// `machine.memory`), though the host commits only what the run touches.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "this run needs about {} of address space: its frame table takes {} (28 bytes a page \
     of machine.memory, reserved at boot) and it may touch about {} more; the \
     address-space limit (ulimit -v) is {}",
    gib(*.needed_bytes),
    gib(*.frame_table_bytes),
    gib(.needed_bytes - .frame_table_bytes),
    gib(*.limit_bytes)
)]
pub struct AddressSpace {
    pub needed_bytes: u64,
    pub frame_table_bytes: u64,
    pub limit_bytes: u64,
}

/// Why a run does not fit the host.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HostLimit {
    #[error(transparent)]
    Memory(#[from] TooBig),
    #[error(transparent)]
    AddressSpace(#[from] AddressSpace),
}

impl HostLimit {
    /// The scenario key to blame.
    pub fn key(&self) -> &str {
        match self {
            HostLimit::Memory(t) => &t.key,
            HostLimit::AddressSpace(_) => "machine.memory",
        }
    }
}

/// The soft RLIMIT_AS in bytes (None: unlimited or unknown).
fn address_space_limit() -> Option<u64> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given and nothing else.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut r) } != 0 || r.rlim_cur == libc::RLIM_INFINITY
    {
        return None;
    }
    Some(r.rlim_cur)
}

/// Refuses a run whose frame table and estimate exceed the address-space limit, or
/// whose estimate exceeds the host's available memory (an unknown amount lets it run).
pub fn check(sc: &Scenario) -> Result<(), HostLimit> {
    let estimate = estimate(sc);
    if let Some(limit_bytes) = address_space_limit() {
        let frame_table_bytes = sc.machine.memory.pages() * FRAME_BYTES;
        let needed_bytes = frame_table_bytes + estimate.total_bytes();
        if needed_bytes > limit_bytes {
            return Err(AddressSpace {
                needed_bytes,
                frame_table_bytes,
                limit_bytes,
            }
            .into());
        }
    }
    let Some(available_bytes) = available_bytes() else {
        return Ok(());
    };
    if estimate.total_bytes() <= available_bytes {
        return Ok(());
    }
    let key = estimate
        .biggest()
        .map_or_else(|| "machine.memory".to_string(), |p| p.key.clone());
    Err(TooBig {
        key,
        estimate,
        available_bytes,
    }
    .into())
}

/// [`check`] for a scenario loaded from `path` with `sets`: the refusal names the
/// file, line and key as a loader error does.
pub fn check_file(
    sc: &Scenario,
    path: &std::path::Path,
    sets: &[String],
) -> Result<(), crate::scenario::ScenarioError> {
    check(sc).map_err(|e| crate::scenario::error_at_key(path, sets, e.key(), e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sc(extra: &str) -> Scenario {
        let text = format!(
            "[machine]\nmemory = \"1T\"\n[[workload]]\nname = \"w\"\nkind = \"anon\"\nsize = \"1G\"\n{extra}"
        );
        crate::scenario::parse_str(&text, "t.toml", &[]).unwrap()
    }

    #[test]
    fn a_big_machine_with_a_small_workload_needs_frames_for_the_workload_only() {
        // 1 GiB mapped = 262144 pages; frames for those plus 4096 slack at 28 B, and
        // the page table at 8 B a page; no swap; every access taken.
        let e = estimate(&sc("[run]\naccess_sampling = \"each\"\n"));
        let frames = e.parts.iter().find(|p| p.what == "frame table").unwrap();
        assert_eq!(frames.bytes, (262_144 + 4096) * 28);
        assert_eq!(frames.key, "workload[0].size");
        let pt = e.parts.iter().find(|p| p.what == "page tables").unwrap();
        assert_eq!(pt.bytes, 262_144 * 8);
        // Those frames' LRU ring entries at 8 B (4 B, twice over for holes); one
        // mapping: one address space.
        let lru = e.parts.iter().find(|p| p.what == "LRU lists").unwrap();
        assert_eq!(lru.bytes, 266_240 * 8);
        assert_eq!(
            e.total_bytes(),
            (32 << 20) + (266_240 * (28 + 8)) + 262_144 * 8 + 256
        );
        // Skipping accesses (the default) adds the workload's set over its range (one,
        // whatever the threads), 13 B a page for its uniform picker.
        let e = estimate(&sc("threads = 2\n"));
        let sets = e
            .parts
            .iter()
            .find(|p| p.what == "access sampling sets")
            .unwrap();
        assert_eq!(
            (sets.bytes, sets.key.as_str()),
            (262_144 * 13, "workload[0].size")
        );
        // A zipf picker keeps two bits per page and 16 B per 64: rounded up, 1 B.
        let e = estimate(&sc("pattern = \"zipf\"\n"));
        let sets = e.parts.iter().find(|p| p.what == "access sampling sets");
        assert_eq!(sets.map(|p| p.bytes), Some(262_144));
        // A sequential sweep keeps 8 B per page table and thread: 512 tables, 3 threads.
        let e = estimate(&sc("pattern = \"sequential\"\nthreads = 3\n"));
        let sets = e.parts.iter().find(|p| p.what == "access sampling sets");
        assert_eq!(sets.map(|p| p.bytes), Some(3 * 512 * 8));
    }

    #[test]
    fn a_million_small_files_need_a_struct_each() {
        // 10^6 files of 1 MiB: 256 pages each in the page-cache tables, and one address
        // space per file, blamed on nr_files.
        let text = "[machine]\nmemory = \"1G\"\n[[workload]]\nname = \"f\"\nkind = \"file-read\"\nnr_files = 1000000\n\
                    file_size = \"1M\"\nio_size = \"4K\"\npattern = \"uniform\"\n";
        let s = crate::scenario::parse_str(text, "t.toml", &[]).unwrap();
        let e = estimate(&s);
        let part = |w: &str| e.parts.iter().find(|p| p.what == w).unwrap().clone();
        assert_eq!(part("address spaces").bytes, 1_000_000 * 256);
        assert_eq!(part("address spaces").key, "workload[0].nr_files");
        assert_eq!(part("page tables").bytes, 1_000_000 * 256 * 8);
        // Skipping reads: 9 B an item (a bit, a place, a list entry), 256 M items of
        // one page; for 64 KiB reads, 16 M items.
        assert_eq!(part("access sampling sets").bytes, 256_000_000 * 9);
        let s = crate::scenario::parse_str(text, "t.toml", &["workload.0.io_size=\"64K\"".into()])
            .unwrap();
        let sets = estimate(&s)
            .parts
            .into_iter()
            .find(|p| p.what == "access sampling sets");
        assert_eq!(sets.map(|p| p.bytes), Some(16_000_000 * 9));
        // Loading through an mmap skips the same items.
        let s =
            crate::scenario::parse_str(text, "t.toml", &["workload.0.mmap=true".into()]).unwrap();
        let e = estimate(&s);
        let sets = e.parts.iter().find(|p| p.what == "access sampling sets");
        assert_eq!(sets.map(|p| p.bytes), Some(256_000_000 * 9));
    }

    #[test]
    fn a_workload_bigger_than_memory_blames_machine_memory_and_the_biggest_part() {
        // 64 GiB of memory under a 1 TiB zipf set: frames for all 64 GiB (448 MiB of
        // table) but 2 GiB of page table for the 2^28-page mapping.
        let text = "[machine]\nmemory = \"64G\"\n[machine.swap]\ntype = \"zram\"\nsize = \"16G\"\n\
                    [[workload]]\nname = \"w\"\nkind = \"anon\"\nsize = \"1T\"\npattern = \"zipf\"\n";
        let s = crate::scenario::parse_str(text, "t.toml", &[]).unwrap();
        let e = estimate(&s);
        let part = |w: &str| e.parts.iter().find(|p| p.what == w).unwrap().clone();
        assert_eq!(part("frame table").bytes, (64u64 << 30) / 4096 * 28);
        assert_eq!(part("frame table").key, "machine.memory");
        assert_eq!(part("page tables").bytes, (1u64 << 28) * 8);
        // 16 GiB of swap = 4M slots, fewer than the anon pages: the device bounds it.
        assert_eq!(part("swap map").bytes, (4u64 << 20) * 14);
        assert_eq!(part("swap map").key, "machine.swap.size");
        // The zipf table stops at 2^20 ranks.
        assert_eq!(part("zipf tables").bytes, (1 << 20) * 40);
        assert_eq!(e.biggest().unwrap().key, "workload[0].size");
    }

    #[test]
    fn fio_jobs_count_their_sets() {
        // Two jobs of 100 MiB: 51200 pages at 5 B, whatever their mix.
        let text = "[machine]\nmemory = \"1G\"\n[[workload]]\nname = \"f\"\nkind = \"fio\"\n\
                    rw = \"write\"\nsize = \"100M\"\nnumjobs = 2\n";
        let sets = |sets: &[String]| {
            let s = crate::scenario::parse_str(text, "t.toml", sets).unwrap();
            let e = estimate(&s);
            e.parts
                .into_iter()
                .find(|p| p.what == "access sampling sets")
                .map(|p| p.bytes)
        };
        assert_eq!(sets(&[]), Some(51_200 * 5));
        for rw in ["read", "randread", "randwrite", "randrw"] {
            let rw = format!("workload.0.rw=\"{rw}\"");
            assert_eq!(sets(&[rw]), Some(51_200 * 5));
        }
    }

    #[test]
    fn file_reads_and_writes_count_their_sets() {
        // Two files of 64 MiB read 16 KiB at a time: 8192 items at 9 B.
        let text = "[machine]\nmemory = \"1G\"\n[[workload]]\nname = \"f\"\nkind = \"file-read\"\n\
                    nr_files = 2\nfile_size = \"64M\"\nio_size = \"16K\"\n";
        let sets = |sets: &[&str]| {
            let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
            let s = crate::scenario::parse_str(text, "t.toml", &sets).unwrap();
            estimate(&s)
                .parts
                .into_iter()
                .find(|p| p.what == "access sampling sets")
                .map(|p| p.bytes)
        };
        for pattern in ["uniform", "sequential", "zipf", "hotcold"] {
            let pattern = format!("workload.0.pattern=\"{pattern}\"");
            assert_eq!(sets(&[&pattern]), Some(8192 * 9), "{pattern}");
        }
        assert_eq!(sets(&["workload.0.mmap=true"]), Some(8192 * 9));
        assert_eq!(sets(&["workload.0.kind=\"file-write\""]), Some(8192 * 9));
        assert_eq!(sets(&["run.access_sampling=\"each\""]), None);
    }

    #[test]
    fn mem_available_is_read_in_kib() {
        let text = "MemTotal:       32000000 kB\nMemAvailable:    3250000 kB\n";
        assert_eq!(mem_available(text), Some(3_250_000 * 1024));
        assert_eq!(mem_available("MemTotal: 1 kB\n"), None);
    }
}
