//! A workload of several processes (`processes`), each its own mm, and processes
//! that exit and are replaced by new ones (`lifetime`): what each holds of the
//! kernel's memory, what its exit gives back, and how many forks a run makes.

mod common;

const BUILD: &str = r#"
[run]
duration = "3500ms"
[machine]
memory = "1G"
nr_cpus = 4
[[cgroup]]
path = "build"
[[workload]]
name = "cc1"
kind = "anon"
size = "24M"
pattern = "uniform"
init = true
processes = 4
lifetime = "1s"
cgroup = "build"
"#;

/// What one single-threaded process with one 24 MiB mapping holds, by hand from
/// kernel/fork.c's objects (crates/mm/src/fork.rs sizes) plus the 8-byte obj_cgroup
/// pointer memcg accounts with each object (`obj_full_size`): mm_struct 1,344,
/// signal_cache 1,152, sighand_cache 2,112, files_cache 704, one vm_area_struct 176,
/// one task_struct 9,984 = 15,472 B, and six pointers, 48 B. A 16 KiB kernel stack.
/// 24 MiB = 6,144 pages = 12 page-table pages.
const SLAB_PER_PROCESS: u64 = 15_472 + 6 * 8;
const STACK_PER_PROCESS: u64 = 16 * 1024;
const PT_PAGES_PER_PROCESS: u64 = 24 * 1024 / 2048;

fn stat(r: &reclaimsim::report::results::Results, key: &str) -> u64 {
    r.cgroups["build"]["memory"]["stat"][key]
        .as_u64()
        .unwrap_or_else(|| panic!("memory.stat {key}"))
}

/// Four processes at once hold four times one's kernel memory, charged to their
/// cgroup; when they all exit, all of it comes back.
#[test]
fn each_process_holds_its_own_kernel_memory_until_it_exits() {
    let r = common::run_checked(BUILD, &["workload.0.lifetime=\"10s\""]);
    assert_eq!(r.vm("nr_page_table_pages"), 4 * PT_PAGES_PER_PROCESS);
    assert_eq!(r.vm("nr_kernel_stack"), 4 * STACK_PER_PROCESS / 1024);
    assert_eq!(stat(&r, "kernel_stack"), 4 * STACK_PER_PROCESS);
    assert_eq!(stat(&r, "pagetables"), 4 * PT_PAGES_PER_PROCESS * 4096);
    assert_eq!(stat(&r, "slab_unreclaimable"), 4 * SLAB_PER_PROCESS);
    assert_eq!(stat(&r, "anon"), (4 * 24) << 20);
    // One process: a quarter of it all.
    let one = common::run_checked(BUILD, &["workload.0.processes=1"]);
    assert_eq!(stat(&one, "slab_unreclaimable"), SLAB_PER_PROCESS);
    assert_eq!(stat(&one, "kernel_stack"), STACK_PER_PROCESS);
    // Stopped before the run ends: every process exited and gave everything back.
    let gone = common::run_checked(BUILD, &["workload.0.stop=\"2s\""]);
    for key in ["kernel_stack", "pagetables", "slab_unreclaimable", "anon"] {
        assert_eq!(stat(&gone, key), 0, "{key} after every exit");
    }
    assert_eq!(
        (gone.vm("nr_page_table_pages"), gone.vm("nr_kernel_stack")),
        (0, 0)
    );
}

/// Lifetimes of 1 s, staggered: process k first exits at (k+1)/4 s, then every
/// second, each exit followed by a fork, until the run's end at 3.5 s:
///   k=0: 0.25 1.25 2.25 3.25 (4 exits)   k=1: 0.5 1.5 2.5 (3)
///   k=2: 0.75 1.75 2.75 (3)              k=3: 1.0 2.0 3.0 (3)
/// 13 exits, 13 forks after the first 4: 17 processes. Each writes its 6,144 pages
/// once into an empty mm (`init`), and memory never runs short, so there are no other
/// faults: 17 × 6,144. The 13 that exited left nothing behind: what is held at the
/// end is the 4 live processes' worth.
#[test]
fn processes_exit_and_are_replaced_at_their_lifetime() {
    let r = common::run_checked(BUILD, &[]);
    assert_eq!(r.workloads["cc1"].forks, Some(17));
    assert_eq!(r.vm("pgfault"), 17 * 6144);
    assert_eq!(stat(&r, "slab_unreclaimable"), 4 * SLAB_PER_PROCESS);
    assert_eq!(stat(&r, "kernel_stack"), 4 * STACK_PER_PROCESS);
    assert_eq!(r.vm("nr_page_table_pages"), 4 * PT_PAGES_PER_PROCESS);
    // Every process's threads report under the workload's tasks; all did work.
    for t in ["cc1/0", "cc1.1/0", "cc1.2/0", "cc1.3/0"] {
        assert!(r.tasks[t].ops > 6144, "{t} ran its processes");
    }
    // A workload of one process without a lifetime reports no forks.
    let plain = common::run_checked(
        BUILD,
        &["workload.0.processes=1", "workload.0.lifetime=\"10s\""],
    );
    assert_eq!(plain.workloads["cc1"].forks, None);
}

/// `ops = N` is the workload's, over all its processes: once spent, the process that
/// exits is not replaced (its successor would have nothing to do). Both processes
/// share 20,000 operations, done long before the first lifetime (0.5 s) runs out.
#[test]
fn no_new_process_once_the_work_is_done() {
    let r = common::run_checked(BUILD, &["workload.0.ops=20000", "workload.0.processes=2"]);
    assert_eq!(r.workloads["cc1"].ops, 20_000);
    assert_eq!(r.workloads["cc1"].forks, Some(2));
    assert_eq!(stat(&r, "slab_unreclaimable"), 0, "both exited");
}

/// The same scenario and seed twice: byte-identical results.
#[test]
fn churn_is_deterministic() {
    let a = serde_json::to_string(&common::run_checked(BUILD, &[])).unwrap();
    let b = serde_json::to_string(&common::run_checked(BUILD, &[])).unwrap();
    assert_eq!(a, b);
}

/// Keys that do not apply, and combinations that cannot hold, name file, line and
/// key.
#[test]
fn bad_process_settings_are_rejected() {
    let err = |extra: &str, sets: &[&str]| {
        let text = format!("{BUILD}{extra}");
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        reclaimsim::scenario::parse_str(&text, "t.toml", &sets)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    let fio = "[[workload]]\nname = \"w\"\nkind = \"fio\"\nrw = \"write\"\nsize = \"4M\"\nprocesses = 2\n";
    let after =
        "[[workload]]\nname = \"w\"\nkind = \"anon\"\nsize = \"4M\"\nstart_after = \"cc1\"\n";
    // (extra workload, --set flags, what the message must say). A --set value is
    // named as the flag gave it.
    let damon = "[[damon.kdamonds]]\n[[damon.kdamonds.contexts]]\noperations = \"vaddr\"\n\
                 [[damon.kdamonds.contexts.targets]]\npid_target = \"cc1\"\n";
    let cases: [(&str, &[&str], &[&str]); 7] = [
        (damon, &[], &["pid_target", "a pid names one"]),
        (fio, &[], &["t.toml", "workload[1].processes"]),
        (
            "",
            &["workload.0.processes=0"],
            &["workload.0.processes", "1..=1024"],
        ),
        (
            "",
            &["workload.0.processes=1024", "workload.0.threads=8"],
            &["processes × threads"],
        ),
        (
            "",
            &["workload.0.ops=3"],
            &["ops", "at least `processes` (4)"],
        ),
        (
            "",
            &["workload.0.lifetime=\"0s\""],
            &["workload.0.lifetime", "> 0"],
        ),
        (
            after,
            &[],
            &["workload[1].start_after", "several processes"],
        ),
    ];
    for (extra, sets, needles) in cases {
        let e = err(extra, sets);
        assert!(needles.iter().all(|n| e.contains(n)), "{needles:?}: {e}");
    }
}
