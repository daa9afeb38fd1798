//! The discrete-event engine: virtual clock, event queue, simulated CPUs and tasks.
//!
//! A task runs a slice (at most `run.slice` of virtual time) when both it and a CPU are
//! free; the earliest-free CPU is taken, ties to the lowest index. Kernel work done in a
//! slice is charged to that task (direct reclaim to the allocating task, background
//! reclaim to kswapd). The engine itself is single-threaded: parallelism is across runs.

pub mod cpus;
pub mod event;

use crate::mm::damon::KdamondNext;
use crate::mm::kcompactd::KcompactdNext;
use crate::mm::kswapd::KswapdNext;
use crate::mm::writeback::FlusherNext;
use crate::mm::{Current, Mm, Out};
use crate::scenario::{self, Scenario};
use crate::stats::psi::{Pressure, Psi, PsiDelta};
use crate::stats::series::TimeSeries;
use crate::workload::{self, SliceEnd, SliceReport, Thread, Workload};
use event::{Event, EventQueue};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskKind {
    Worker {
        workload: usize,
        thread: usize,
    },
    /// kswapdN: node N's.
    Kswapd(usize),
    Flusher,
    /// `kdamond.N`: DAMON's thread for `Mm::damon.kdamonds[N]`.
    Kdamond(usize),
    /// kcompactdN: node N's.
    Kcompactd(usize),
}

#[derive(Debug)]
pub struct Task {
    pub name: String,
    pub kind: TaskKind,
    /// Bumped whenever the task's pending wake-up changes; stale events are ignored.
    gen: u32,
    /// A pending Ready event: (time, is it a timer a wake-up may cut short).
    pending: Option<(u64, bool)>,
    exited: bool,
    /// The CPU it last ran on (PSI attributes its waits there).
    cpu: usize,
    /// Asleep since this time, in a state PSI counts (memstall or iowait) until it
    /// runs again: a wake-up may end the sleep before its timer.
    sleep: Option<(u64, PsiDelta)>,
    /// When its last slice ended: a wake-up cannot make it runnable before that.
    slice_end: u64,
    /// The CPUs it may run on (`kthread_bind_mask`), None: any. On a machine of
    /// several nodes each kswapdN and kcompactdN keeps to node N's CPUs.
    allowed: Option<Vec<usize>>,
    pub user_ns: u64,
    pub system_ns: u64,
}

/// Things that can go wrong in a run that is not the scenario's fault.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error("invariant violated at t={time_ns}ns: {message}")]
    Invariant { time_ns: u64, message: String },
    #[error("timed action {index} at t={time_ns}ns: {message}")]
    Action {
        index: usize,
        time_ns: u64,
        message: String,
    },
    /// A workload could not go on (a trace that changed under the run).
    #[error("workload {name} at t={time_ns}ns: {message}")]
    Workload {
        name: String,
        time_ns: u64,
        message: String,
    },
    #[error("{0}")]
    Output(String),
}

/// Optional observers of a run.
#[derive(Default)]
pub struct RunOptions {
    /// Check every invariant at every sample (and at the end).
    pub check: bool,
    /// Called with (virtual now, virtual end) now and then, for a progress bar.
    pub progress: Option<Box<dyn FnMut(u64, u64)>>,
    /// Set from outside (Ctrl-C) to end the run early: the results then cover the time
    /// simulated so far and say `interrupted`.
    pub interrupt: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// Dump /sys/kernel/debug/lru_gen (Some(true): lru_gen_full) at every sample.
    pub lru_gen: Option<bool>,
    /// The /proc and debugfs views to dump at every sample (`--proc`).
    pub proc_files: Vec<crate::mm::vmstat::ProcFile>,
}

/// A timed action as it was applied: results.json's `actions`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ActionRecord {
    pub time_ns: u64,
    pub key: String,
    pub value: String,
    /// What a cgroup file write did (e.g. "reclaimed 262144 pages"), or what a read
    /// showed (bytes, or "max").
    #[serde(default)]
    pub outcome: Option<String>,
    /// The named open file a memory.peak or memory.swap.peak write or read went
    /// through.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fd: Option<String>,
}

/// Everything a run produces: what it ended with, and what was recorded on the way.
/// The engine returns the simulation itself as its `results` (it measures; it does not
/// format): `report::run_with_series` reads the `Results` from it, and its
/// `report::Run` is this with those in its place.
pub struct RunOutput<R = Simulation> {
    pub results: R,
    pub series: TimeSeries,
    /// The tracepoint lines, if tracing was enabled.
    pub trace: Option<String>,
    /// The lru_gen debugfs file at every sample, if asked for (`--lru-gen`).
    pub lru_gen: Option<String>,
    /// DAMON's monitoring results, if recording (`--damon-record`).
    pub damon_record: Option<crate::mm::damon::Recording>,
    /// Each `--proc` view at every sample, in the order asked for.
    pub proc_files: Vec<(crate::mm::vmstat::ProcFile, String)>,
    /// `--record-accesses`: each thread's trace file and its accesses.
    pub recorded: Vec<(std::path::PathBuf, u64)>,
}

impl<R> RunOutput<R> {
    /// The same output, with what the run ended with turned into `f` of it.
    pub fn map<T>(self, f: impl FnOnce(R) -> T) -> RunOutput<T> {
        RunOutput {
            results: f(self.results),
            series: self.series,
            trace: self.trace,
            lru_gen: self.lru_gen,
            damon_record: self.damon_record,
            proc_files: self.proc_files,
            recorded: self.recorded,
        }
    }
}

pub struct Simulation {
    pub scenario: Scenario,
    pub mm: Mm,
    pub tasks: Vec<Task>,
    pub workloads: Vec<Workload>,
    threads: Vec<Thread>,
    cpus_free_at: cpus::CpuFreeAt,
    /// Per CPU, TLB shootdown IPIs it handled while busy, not yet paid: the next
    /// slice there starts after them.
    irq_debt_ns: Vec<u64>,
    /// Runnable tasks waiting for a CPU, in the order they became runnable.
    runqueue: std::collections::VecDeque<(usize, u32)>,
    /// Per CPU, the free-up of its last slice held back while the run queue was empty
    /// (its time and the sequence number it would have been pushed with), and the
    /// CPUs holding one. A free-up with no task waiting changes nothing, and most
    /// slices of sleeping, paced threads end so: a task joining the run queue pushes
    /// the held ones still to come, in the order they would have had.
    held_free: Vec<Option<(u64, u64)>>,
    held_cpus: Vec<u32>,
    /// False: every free-up is pushed (the test that checks holding them back).
    hold_cpu_frees: bool,
    /// Held free-ups pushed, and dropped (the same test: both happened).
    #[cfg(test)]
    held_frees: (u64, u64),
    /// Some task keeps to some CPUs (`Task::allowed`).
    any_bound: bool,
    queue: EventQueue,
    /// PSI groups by memcg id: 0 is the system (/proc/pressure/memory), the others
    /// each cgroup's memory.pressure.
    psi: Psi,
    /// The system's PSI totals (some, full; us) at the last sample.
    psi_sampled_total_us: [u64; 2],
    /// Each group's pressure as read at the end of the run.
    pressure: Vec<Pressure>,
    series: TimeSeries,
    io_poll_at: Option<u64>,
    /// Each node's kswapd and kcompactd task.
    kswapd_task: Vec<usize>,
    kcompactd_task: Vec<usize>,
    /// Each node's kswapd awake (in balance_pgdat, running or blocked in it) since
    /// this time.
    kswapd_awake_since: Vec<Option<u64>>,
    /// Time the kswapds and kcompactds spent awake (summed over the nodes), for
    /// results.
    pub kswapd_awake_ns: u64,
    pub kcompactd_awake_ns: u64,
    flusher_task: usize,
    /// The task of each kdamond.
    kdamond_tasks: Vec<usize>,
    /// Per workload: the workload whose end it waits for (`start_after`), until it
    /// starts.
    waiting_on: Vec<Option<usize>>,
    actions: Vec<ActionRecord>,
    now: u64,
    slices: u64,
    /// The resolved scenario's digest, taken before timed actions change it.
    scenario_hash: String,
    /// When the periodic memcg statistics flush first ran (`run.memcg_stats_flush_first`,
    /// or drawn from the seed).
    pub memcg_stats_flush_first_ns: u64,
    /// Where the run stopped: the scenario's duration, or earlier if interrupted.
    end_ns: u64,
    interrupted: bool,
    /// What stopped the run (a workload that could not go on), reported after the
    /// event that found it.
    failed: Option<SimError>,
    /// MemTotal - MemFree (pages) integrated over the samples (page-ns), and its peak.
    used_page_ns: u128,
    used_pages_max: u64,
    sampled_at_ns: u64,
}

impl Simulation {
    pub fn new(scenario: Scenario) -> Simulation {
        let mut mm = Mm::new(crate::scenario::mm_config::mm_config(&scenario));
        let mut tasks = Vec::new();
        let mut workloads = Vec::new();
        let mut threads = Vec::new();
        let mut queue = EventQueue::default();
        // start_after: the workload it waits for (validated: another one, no cycle).
        let waiting_on: Vec<Option<usize>> = scenario
            .workloads
            .iter()
            .map(|cfg| {
                cfg.start_after
                    .as_ref()
                    .and_then(|name| scenario.workloads.iter().position(|o| &o.name == name))
            })
            .collect();
        // A workload of several processes is one engine workload per process (its
        // own mm), its first at the workload's index; validation keeps start_after
        // off them.
        let processes = scenario.processes();
        let waiting_on: Vec<Option<usize>> = processes
            .iter()
            .map(|&(g, k)| if k == 0 { waiting_on[g] } else { None })
            .collect();
        for (i, &(group, process)) in processes.iter().enumerate() {
            let cfg = &scenario.workloads[group];
            let mut w = Workload::new(i, cfg, &scenario, &mut mm);
            w.set_process(group, process, cfg.processes.unwrap_or(1));
            let nr_threads = Workload::nr_threads(cfg) as usize;
            let waits = waiting_on[i].is_some();
            // A workload that starts later is forked then, by its first thread: the
            // others are made by that fork.
            let at_boot = w.start_ns == 0 && !waits;
            for t in 0..nr_threads {
                // Threads waiting for the first one's mapping call are started by it.
                let held = w.threads_held && t > 0;
                let runnable = !waits && (t == 0 || (at_boot && !held));
                let name = if process == 0 {
                    format!("{}/{t}", cfg.name)
                } else {
                    format!("{}.{process}/{t}", cfg.name)
                };
                let rng = crate::rng::task_rng(scenario.run.seed, &name);
                threads.push(w.new_thread(i, t, nr_threads, rng, w.start_ns));
                tasks.push(Task {
                    name,
                    kind: TaskKind::Worker {
                        workload: i,
                        thread: threads.len() - 1,
                    },
                    gen: 0,
                    pending: runnable.then_some((w.start_ns, true)),
                    exited: false,
                    cpu: 0,
                    sleep: None,
                    slice_end: 0,
                    allowed: None,
                    user_ns: 0,
                    system_ns: 0,
                });
                if runnable {
                    queue.push(
                        w.start_ns,
                        Event::Ready {
                            task: (tasks.len() - 1) as u32,
                            gen: 0,
                        },
                    );
                }
            }
            workloads.push(w);
        }
        // Files on a ramdisk live in its pages from the start (validation keeps them
        // within memory).
        let short = mm.brd_populate_files();
        debug_assert_eq!(short, 0, "ramdisk files exceed memory");
        // The process of each workload there from the run's first instant, forked
        // before it: its kernel objects and (unless turned off) its threads' kernel
        // stacks. The others are forked as they start.
        for (w, workload) in workloads.iter_mut().enumerate() {
            if workload.start_ns == 0 && waiting_on[w].is_none() {
                workload.fork_at_boot(w, &mut mm);
            }
        }
        let kernel_task = |name: &str, kind| Task {
            name: name.to_string(),
            kind,
            gen: 0,
            pending: None,
            exited: false,
            cpu: 0,
            sleep: None,
            slice_end: 0,
            allowed: None,
            user_ns: 0,
            system_ns: 0,
        };
        // Node 0's threads and the flusher first (a machine of one node has had
        // these three tasks in this order), then the other nodes' threads.
        let nr_nodes = mm.nr_nodes();
        let mut kswapd_task = vec![0; nr_nodes];
        let mut kcompactd_task = vec![0; nr_nodes];
        tasks.push(kernel_task("kswapd0", TaskKind::Kswapd(0)));
        kswapd_task[0] = tasks.len() - 1;
        tasks.push(kernel_task("flusher", TaskKind::Flusher));
        let flusher_task = tasks.len() - 1;
        tasks.push(kernel_task("kcompactd0", TaskKind::Kcompactd(0)));
        kcompactd_task[0] = tasks.len() - 1;
        for nid in 1..nr_nodes {
            tasks.push(kernel_task(&format!("kswapd{nid}"), TaskKind::Kswapd(nid)));
            kswapd_task[nid] = tasks.len() - 1;
            tasks.push(kernel_task(
                &format!("kcompactd{nid}"),
                TaskKind::Kcompactd(nid),
            ));
            kcompactd_task[nid] = tasks.len() - 1;
        }
        if nr_nodes > 1 {
            // kswapd_run / kcompactd_run bind each to its node's CPUs (a node without
            // CPUs leaves its threads free to run anywhere).
            for nid in 0..nr_nodes {
                let cpus: Vec<usize> = (0..mm.cpu_to_node.len())
                    .filter(|&c| mm.cpu_to_node[c] == nid)
                    .collect();
                if !cpus.is_empty() {
                    tasks[kswapd_task[nid]].allowed = Some(cpus.clone());
                    tasks[kcompactd_task[nid]].allowed = Some(cpus);
                }
            }
        }
        // numactl --cpunodebind: a workload's tasks on its nodes' CPUs.
        for task in tasks.iter_mut() {
            let TaskKind::Worker { workload, .. } = task.kind else {
                continue;
            };
            if let Some(nodes) = &scenario.workloads[processes[workload].0].cpunodebind {
                let cpus: Vec<usize> = (0..mm.cpu_to_node.len())
                    .filter(|&c| nodes.contains(&(mm.cpu_to_node[c] as u32)))
                    .collect();
                // Every CPU is no binding (and keeps the run queue a plain FIFO).
                if cpus.len() < mm.cpu_to_node.len() {
                    task.allowed = Some(cpus);
                }
            }
        }
        let any_bound = tasks.iter().any(|t| t.allowed.is_some());
        // A kernel thread's first timer (a wake-up may cut it short).
        let arm = |tasks: &mut [Task], queue: &mut EventQueue, task: usize, at: u64| {
            tasks[task].pending = Some((at, true));
            queue.push(
                at,
                Event::Ready {
                    task: task as u32,
                    gen: 0,
                },
            );
        };
        // Their first proactive checks (none without proactive compaction).
        if let Some(at) = mm.kcompactd_first_timer() {
            for &task in &kcompactd_task {
                arm(&mut tasks, &mut queue, task, at);
            }
        }
        // The flusher's periodic wake-up.
        let first_flush = mm.cfg.dirty_writeback_interval_ns;
        arm(&mut tasks, &mut queue, flusher_task, first_flush);
        // A thread per kdamond the scenario configures, on or off; those on start
        // now that the workloads' address spaces exist.
        let mut kdamond_tasks = Vec::new();
        for k in 0..mm.damon.kdamonds.len() {
            tasks.push(kernel_task(&format!("kdamond.{k}"), TaskKind::Kdamond(k)));
            kdamond_tasks.push(tasks.len() - 1);
        }
        mm.damon_apply_configs();
        for o in std::mem::take(&mut mm.out) {
            if let crate::mm::Out::WakeKdamond { k, at } = o {
                arm(&mut tasks, &mut queue, kdamond_tasks[k], at);
            }
        }
        // Samples are scheduled one at a time, each by the one before.
        queue.push(scenario.run.sample_interval.0, Event::Sample);
        for (i, a) in scenario.actions.iter().enumerate() {
            queue.push(a.at.0, Event::Action(i as u32));
        }
        // Queued whatever kernel.memcg_stats_flush says: an action may switch it.
        let memcg_stats_flush_first_ns = memcg_stats_flush_first(&scenario.run);
        queue.push(memcg_stats_flush_first_ns, Event::MemcgFlush);
        queue.push(VMSTAT_INTERVAL_NS, Event::VmstatUpdate);
        if mm.cfg.numa_balancing.memory_tiering {
            // Each process's first scan `numa_balancing_scan_delay_ms` (1 s) in.
            for w in 0..mm.mm_spaces.len() {
                queue.push(NUMA_SCAN_DELAY_NS, Event::NumaScan(w as u32));
            }
        }
        if scenario.run.memory_stat_poll.0 > 0 {
            queue.push(scenario.run.memory_stat_poll.0, Event::MemoryStatRead);
        }
        let nr_cpus = scenario.machine.nr_cpus as usize;
        mm.set_nr_tasks(tasks.len());
        let memcg_parents: Vec<Option<usize>> = mm.memcg.cgs.iter().map(|c| c.parent).collect();
        mm.task_names = tasks.iter().map(|t| t.name.clone()).collect();
        mm.workload_task = (0..workloads.len())
            .map(|w| {
                tasks
                    .iter()
                    .position(
                        |t| matches!(t.kind, TaskKind::Worker { workload, .. } if workload == w),
                    )
                    .unwrap_or(0)
            })
            .collect();
        Simulation {
            mm,
            tasks,
            workloads,
            threads,
            cpus_free_at: cpus::CpuFreeAt::new(nr_cpus),
            irq_debt_ns: vec![0; nr_cpus],
            runqueue: std::collections::VecDeque::new(),
            held_free: vec![None; nr_cpus],
            held_cpus: Vec::new(),
            hold_cpu_frees: true,
            #[cfg(test)]
            held_frees: (0, 0),
            any_bound,
            queue,
            psi: Psi::new(nr_cpus, scenario.kernel.hz.0 as u64, &memcg_parents),
            psi_sampled_total_us: [0; 2],
            pressure: Vec::new(),
            series: TimeSeries::default(),
            io_poll_at: None,
            kswapd_task,
            kcompactd_task,
            kswapd_awake_since: vec![None; nr_nodes],
            kswapd_awake_ns: 0,
            kcompactd_awake_ns: 0,
            flusher_task,
            kdamond_tasks,
            waiting_on,
            actions: Vec::new(),
            now: 0,
            slices: 0,
            scenario_hash: scenario::resolved_hash(&scenario),
            memcg_stats_flush_first_ns,
            end_ns: scenario.run.duration.0,
            interrupted: false,
            failed: None,
            used_page_ns: 0,
            used_pages_max: 0,
            sampled_at_ns: 0,
            scenario,
        }
    }

    /// Runs to the end of the scenario (`report::run` turns what it returns into
    /// results).
    pub fn run(mut self, mut opts: RunOptions) -> Result<RunOutput, SimError> {
        let mut lru_gen = String::new();
        let mut proc_files: Vec<_> = opts
            .proc_files
            .iter()
            .map(|&f| (f, String::new()))
            .collect();
        let mut end = self.scenario.run.duration.0;
        let mut events = 0u64;
        while let Some((t, ev)) = self.queue.pop() {
            if t >= end {
                break;
            }
            events += 1;
            // An atomic load per 4096 events keeps the check off the profile.
            if events.is_multiple_of(4096)
                && opts
                    .interrupt
                    .as_ref()
                    .is_some_and(|i| i.load(std::sync::atomic::Ordering::Relaxed))
            {
                self.interrupted = true;
                end = t.max(self.now);
                break;
            }
            self.now = t;
            self.psi.advance(t);
            match ev {
                Event::Ready { task, gen } => {
                    self.on_ready(task as usize, gen);
                    if self.scenario.run.stop_when_done {
                        if let Some(done) = self.workloads_done_at() {
                            end = end.min(done.max(t));
                        }
                    }
                }
                Event::CpuFree(cpu) => self.on_cpu_free(cpu as usize),
                Event::IoPoll => {
                    self.io_poll_at = None;
                    self.mm.now = t;
                    self.mm.cpu_ns = 0;
                    self.mm.complete_io(t);
                }
                Event::Sample => {
                    self.sample(t);
                    if let Some(full) = opts.lru_gen {
                        self.dump_lru_gen(&mut lru_gen, t, full);
                    }
                    self.dump_proc_files(&mut proc_files, t);
                    self.queue
                        .push(t + self.scenario.run.sample_interval.0, Event::Sample);
                    if opts.check {
                        self.check(t)?;
                    }
                    if let Some(p) = opts.progress.as_mut() {
                        p(t, end);
                    }
                }
                Event::Action(i) => self.apply_action(i as usize, t)?,
                Event::MemcgFlush => {
                    // A kworker's work; as PSI's averaging, on no simulated CPU.
                    self.mm.now = t;
                    if self.mm.cfg.memcg_stats_rstat {
                        self.mm.flush_memcg_stats_dwork();
                    }
                    self.queue.push(
                        t + crate::mm::memcontrol::MEMCG_FLUSH_TIME_NS,
                        Event::MemcgFlush,
                    );
                }
                Event::VmstatUpdate => {
                    // Each CPU's kworker, on no simulated CPU (as the memcg flush).
                    self.mm.now = t;
                    self.mm.vmstat_update();
                    self.queue.push(t + VMSTAT_INTERVAL_NS, Event::VmstatUpdate);
                }
                Event::NumaScan(w) => {
                    // On return to user of the process's task (task_work); its
                    // CPU time is not modelled.
                    self.mm.now = t;
                    let period_ms = self.mm.task_numa_work(w as usize);
                    self.queue
                        .push(t + period_ms.max(1) * 1_000_000, Event::NumaScan(w));
                }
                Event::MemoryStatRead => {
                    self.mm.now = t;
                    for m in 0..self.mm.memcg.cgs.len() {
                        self.mm.memory_stat_read(m);
                    }
                    self.queue.push(
                        t + self.scenario.run.memory_stat_poll.0,
                        Event::MemoryStatRead,
                    );
                }
            }
            self.handle_out();
            self.arm_io_poll();
            if let Some(e) = self.failed.take() {
                return Err(e);
            }
        }
        self.now = end;
        self.end_ns = end;
        self.mm.now = end;
        self.mm.complete_io(end);
        self.sample(end);
        if let Some(full) = opts.lru_gen {
            self.dump_lru_gen(&mut lru_gen, end, full);
        }
        self.dump_proc_files(&mut proc_files, end);
        self.pressure = (0..self.mm.memcg.cgs.len())
            .map(|m| self.psi.show(m, end))
            .collect();
        if opts.check {
            self.check(end)?;
        }
        if let Some(p) = opts.progress.as_mut() {
            p(end, end);
        }
        let mut recorded = Vec::new();
        for t in self.threads.iter_mut() {
            if let Some(r) = t.recorder.take() {
                let n = r.accesses;
                recorded.push((r.finish().map_err(SimError::Output)?, n));
            }
        }
        Ok(RunOutput {
            recorded,
            series: std::mem::take(&mut self.series),
            trace: self.mm.trace.as_ref().map(|t| t.finish()),
            lru_gen: opts.lru_gen.map(|_| lru_gen),
            damon_record: self.mm.damon.recording.take(),
            proc_files,
            results: self,
        })
    }

    /// Appends the lru_gen debugfs view at virtual time `t`.
    fn dump_lru_gen(&mut self, out: &mut String, t: u64, full: bool) {
        self.mm.now = t;
        self.mm.cpu_ns = 0;
        out.push_str(&format!("# t={:.3}s\n", t as f64 / 1e9));
        out.push_str(&self.mm.lru_gen_seq_show(full));
    }

    /// Appends each `--proc` view at virtual time `t`.
    fn dump_proc_files(&self, files: &mut [(crate::mm::vmstat::ProcFile, String)], t: u64) {
        for (f, out) in files.iter_mut() {
            out.push_str(&format!("# t={:.3}s\n", t as f64 / 1e9));
            out.push_str(&self.mm.proc_show(*f));
        }
    }

    /// Records DAMON's monitoring results (`--damon-record`).
    pub fn enable_damon_record(&mut self) {
        self.mm.damon.recording = Some(Default::default());
    }

    /// `--record-accesses`: each workload thread's page accesses to
    /// DIR/WORKLOAD.txt.zst (WORKLOAD.N.txt.zst for thread N of several,
    /// WORKLOAD.pK... for its process K > 0; a later process of a slot with a
    /// `lifetime` goes on in its slot's file). The
    /// workloads' mappings trap every access so that each is seen.
    pub fn enable_record_accesses(&mut self, dir: &std::path::Path) -> Result<(), String> {
        for (wi, w) in self.workloads.iter().enumerate() {
            let nr = self.threads.iter().filter(|t| t.workload == wi).count();
            // A workload's later processes: WORKLOAD.pK (and .N for its threads).
            let base = if w.process > 0 {
                format!("{}.p{}", w.name, w.process)
            } else {
                w.name.clone()
            };
            for t in self.threads.iter_mut().filter(|t| t.workload == wi) {
                let name = if nr > 1 {
                    format!("{base}.{}.txt.zst", t.index)
                } else {
                    format!("{base}.txt.zst")
                };
                let r = crate::trace::record::Recorder::create(&dir.join(name))?;
                t.recorder = Some(Box::new(r));
            }
        }
        for s in self.mm.spaces.iter_mut() {
            if s.owner.is_some() || s.mapper.is_some() {
                s.set_trap();
            }
        }
        self.mm.any_trap = true;
        Ok(())
    }

    /// Turns tracepoints on for this run (`--trace`).
    pub fn enable_trace(&mut self, tracer: crate::stats::trace::Tracer) {
        self.mm.trace = Some(tracer);
    }

    fn check(&self, t: u64) -> Result<(), SimError> {
        self.mm
            .check_invariants()
            .map_err(|message| SimError::Invariant {
                time_ns: t,
                message,
            })
    }

    /// A row of the timeseries. Its PSI columns are what a reader of
    /// /proc/pressure/memory's `total=` lines sees change since the last sample.
    /// When the last workload finished, was killed or failed to fork, once all have.
    fn workloads_done_at(&self) -> Option<u64> {
        self.workloads
            .iter()
            .map(|w| w.killed_at.or(w.finished_at).or(w.fork_failed_at))
            .try_fold(0, |m, at| at.map(|a| a.max(m)))
    }

    fn sample(&mut self, t: u64) {
        // The system's memory footprint as a reader of /proc/meminfo's MemFree sees it,
        // each sample standing for the interval up to it.
        let used = self.mm.managed_pages() - self.mm.nr_free_pages();
        self.used_page_ns += used as u128 * (t - self.sampled_at_ns) as u128;
        self.used_pages_max = self.used_pages_max.max(used);
        self.sampled_at_ns = t;
        let total_us = self.psi.show(0, t).total_us;
        let [some_us, full_us] = [0, 1].map(|s| total_us[s] - self.psi_sampled_total_us[s]);
        self.psi_sampled_total_us = total_us;
        self.series
            .sample(&self.mm, t, some_us * 1000, full_us * 1000);
    }

    fn apply_action(&mut self, i: usize, t: u64) -> Result<(), SimError> {
        let a = self.scenario.actions[i].clone();
        let err = |message: String| SimError::Action {
            index: i,
            time_ns: t,
            message,
        };
        // Validation gave every action but a read its value.
        let value = a
            .value
            .clone()
            .unwrap_or(toml::Value::String(String::new()));
        let (key, outcome) = match (&a.set, &a.cgroup, &a.write) {
            _ if a.sysctl.as_deref() == Some("vm.drop_caches") => {
                // drop_caches_sysctl_handler: bit 0 the page cache, bit 1 the slab
                // shrinkers.
                self.mm.now = t;
                self.mm.cpu_ns = 0;
                let v = value.as_integer().unwrap_or(0);
                let dropped = if v & 1 != 0 {
                    self.mm.drop_pagecache()
                } else {
                    0
                };
                let objects = if v & 2 != 0 { self.mm.drop_slab() } else { 0 };
                (
                    "vm.drop_caches".to_string(),
                    Some(format!(
                        "{dropped} page cache pages dropped, {objects} slab objects freed"
                    )),
                )
            }
            _ if a.sysctl.is_some() => {
                // sysctl_compaction_handler → compact_nodes.
                self.mm.now = t;
                self.mm.cpu_ns = 0;
                let migrated = self.mm.compact_node();
                (
                    "vm.compact_memory".to_string(),
                    Some(format!("{migrated} pages migrated")),
                )
            }
            _ if a.debugfs.is_some() => {
                let text = value.as_str().unwrap_or_default();
                let cmds = crate::mm::lru_gen::parse_lru_gen_cmds(
                    text,
                    self.mm.memcg.cgs.len(),
                    self.mm.nr_nodes(),
                )
                .map_err(err)?;
                self.mm.now = t;
                self.mm.cpu_ns = 0;
                let outcome = self.mm.lru_gen_seq_write(&cmds);
                ("debugfs/lru_gen".to_string(), Some(outcome))
            }
            (Some(set), _, _) => {
                scenario::set_key(&mut self.scenario, set, &value).map_err(err)?;
                self.mm
                    .apply_kernel_settings(crate::scenario::mm_config::mm_config(&self.scenario));
                (set.clone(), None)
            }
            (None, Some(cg), None) if a.read.is_some() => {
                let file = a.read.as_deref().unwrap_or_default();
                let memcg = self
                    .mm
                    .memcg
                    .id_of(cg)
                    .ok_or_else(|| err(format!("no cgroup `{cg}`")))?;
                let shown = self
                    .mm
                    .cgroup_file_show(memcg, file, a.fd.as_deref())
                    .ok_or_else(|| err(format!("cannot read {file}")))?;
                (format!("{cg}/{file}"), Some(shown))
            }
            (None, Some(cg), Some(file)) => {
                let memcg = self
                    .mm
                    .memcg
                    .id_of(cg)
                    .ok_or_else(|| err(format!("no cgroup `{cg}`")))?;
                if let Some(pf) = crate::mm::memcontrol::PeakFile::from_name(file) {
                    let outcome = self.mm.memcg_peak_write(memcg, pf, a.fd.as_deref());
                    (format!("{cg}/{file}"), Some(outcome))
                } else if file == "memory.oom.group" {
                    let group = scenario::validate::oom_group_value(&value)
                        .ok_or_else(|| err(format!("`{value}` is not 0 or 1")))?;
                    let outcome = self.mm.memory_oom_group_write(memcg, group);
                    (format!("{cg}/{file}"), Some(outcome))
                } else {
                    let pages = self.write_pages(memcg, &value).map_err(err)?;
                    self.mm.now = t;
                    self.mm.cpu_ns = 0;
                    let outcome = self.mm.memcg_write(memcg, file, pages);
                    (format!("{cg}/{file}"), Some(outcome))
                }
            }
            _ => return Err(err("an action needs `set`, or `cgroup` and `write`".into())),
        };
        self.actions.push(ActionRecord {
            time_ns: t,
            key,
            value: a
                .value
                .as_ref()
                .map_or_else(String::new, crate::scenario::value_text),
            outcome,
            fd: a.fd.clone(),
        });
        Ok(())
    }

    /// A cgroup size write's value in pages: `max`, a size, or an expression of the
    /// cgroup's files computed now, as a script would.
    fn write_pages(&self, memcg: usize, value: &toml::Value) -> Result<u64, String> {
        Ok(match value {
            toml::Value::String(v) if v == "max" => crate::mm::page_counter::PAGE_COUNTER_MAX,
            toml::Value::String(v) if scenario::size_expr::is_expr(v) => {
                let expr = scenario::size_expr::parse(v)?;
                let c = &self.mm.memcg.counters.c[memcg];
                let bytes = |p: u64| p.saturating_mul(4096);
                scenario::size_expr::eval(&expr, |f| {
                    use scenario::size_expr::CgroupFile as F;
                    bytes(match f {
                        F::Current => c.usage,
                        F::Peak => c.watermark,
                        F::Min => c.min,
                        F::Low => c.low,
                        F::High => c.high,
                        F::Max => c.max,
                    })
                }) / 4096
            }
            toml::Value::String(v) => scenario::units::parse_size(v)? / 4096,
            toml::Value::Integer(n) => *n as u64 / 4096,
            other => return Err(format!("`{other}` is not a size")),
        })
    }

    fn arm_io_poll(&mut self) {
        if let Some(t) = self.mm.wb.next_completion() {
            if self.io_poll_at.is_none_or(|armed| t < armed) {
                self.queue.push(t.max(self.now), Event::IoPoll);
                self.io_poll_at = Some(t.max(self.now));
            }
        }
    }

    /// Requests kernel code made: wake-ups and OOM kills.
    fn handle_out(&mut self) {
        for o in std::mem::take(&mut self.mm.out) {
            match o {
                Out::WakeKswapd { nid, at } => self.wake(self.kswapd_task[nid], at),
                Out::WakeKcompactd { nid, at } => self.wake(self.kcompactd_task[nid], at),
                Out::WakeFlusher { at } => self.wake(self.flusher_task, at),
                Out::WakeKdamond { k, at } => self.wake(self.kdamond_tasks[k], at),
                Out::TlbShootdown { cpus, ns, .. } => {
                    // Each CPU it interrupted (running a user task then) handles the
                    // IPI: its next slice starts that much later (a slice runs as one
                    // step, so the interruption is paid where the CPU resumes).
                    for cpu in cpus {
                        if let Some(debt) = self.irq_debt_ns.get_mut(cpu as usize) {
                            *debt += ns;
                        }
                    }
                }
                Out::WakeTask { task, at } => {
                    let at = at.max(self.tasks[task].slice_end);
                    self.wake(task, at);
                }
                Out::OomKill { workload } => {
                    self.workloads[workload].killed_at = Some(self.now);
                    for task in 0..self.tasks.len() {
                        let t = &mut self.tasks[task];
                        if matches!(t.kind, TaskKind::Worker { workload: w, .. } if w == workload) {
                            t.exited = true;
                            t.pending = None;
                            t.gen += 1;
                            self.end_sleep(task, self.now);
                        }
                    }
                    self.start_waiting_workloads(self.now);
                }
            }
        }
    }

    /// `wake_up`: make a sleeping task runnable now; cuts a timer short.
    fn wake(&mut self, task: usize, at: u64) {
        let at = at.max(self.now);
        let t = &mut self.tasks[task];
        // Already runnable, or a timer fires no later than this wake-up would.
        if t.exited
            || t.pending
                .is_some_and(|(when, wakeable)| !wakeable || when <= at)
        {
            return;
        }
        t.gen += 1;
        t.pending = Some((at, false));
        self.queue.push(
            at,
            Event::Ready {
                task: task as u32,
                gen: t.gen,
            },
        );
    }

    fn set_timer(&mut self, task: usize, at: u64, wakeable: bool) {
        let t = &mut self.tasks[task];
        t.gen += 1;
        t.pending = Some((at, wakeable));
        self.queue.push(
            at,
            Event::Ready {
                task: task as u32,
                gen: t.gen,
            },
        );
    }

    /// The PSI group a task's states count in (`task_psi_group`): its workload's
    /// cgroup; kernel threads are in the root. Ancestors follow from the group.
    fn task_psi_group(&self, task: usize) -> usize {
        match self.tasks[task].kind {
            TaskKind::Worker { workload, .. } => self.mm.workload_memcg[workload],
            _ => 0,
        }
    }

    /// A sleeping task runs again (or exits) at `now`: its PSI sleep state ends, and
    /// so does any reclaim throttle it was in.
    fn end_sleep(&mut self, task: usize, now: u64) {
        let cpu = self.tasks[task].cpu;
        if let Some((since, d)) = self.tasks[task].sleep.take() {
            // An OOM kill can end a sleep that, in the task's own time, has not begun.
            let now = now.max(since);
            let group = self.task_psi_group(task);
            self.psi.record(now, cpu, group, d.negated());
        }
        self.mm.throttle_finish(task, cpu, now);
    }

    fn on_ready(&mut self, task: usize, gen: u32) {
        if self.tasks[task].gen != gen || self.tasks[task].exited {
            return;
        }
        self.end_sleep(task, self.now);
        // The earliest-free CPU (of those it may use), lowest index on ties; if none
        // is free (or others are already waiting), join the run queue.
        let (cpu, free_at) = match &self.tasks[task].allowed {
            None => self.cpus_free_at.earliest(),
            Some(cpus) => cpus
                .iter()
                .map(|&c| (c, self.cpus_free_at.get(c)))
                .min_by_key(|&(c, t)| (t, c))
                .expect("a bound task has CPUs"),
        };
        // Waiters come first, but only those that may take this CPU (with no bound
        // task every waiter may): a CPU free now has none, unless its CpuFree at this
        // instant is still to come.
        let waiter = if self.any_bound {
            self.runqueue.iter().any(|&(t, g)| {
                let t = &self.tasks[t];
                t.gen == g && !t.exited && t.allowed.as_ref().is_none_or(|c| c.contains(&cpu))
            })
        } else {
            !self.runqueue.is_empty()
        };
        if free_at > self.now || waiter {
            if self.runqueue.is_empty() {
                self.push_held_frees();
            }
            self.runqueue.push_back((task, gen));
            return;
        }
        self.run_on(cpu, task);
    }

    /// The run queue is about to hold a task: every held free-up still to come goes
    /// into the event queue with its own place. One at or before now was, in the
    /// order of events, handled before this wake-up, with nobody waiting: dropped.
    fn push_held_frees(&mut self) {
        for cpu in self.held_cpus.drain(..) {
            if let Some((end, seq)) = self.held_free[cpu as usize].take() {
                if end > self.now {
                    self.queue.push_at_seq(end, seq, Event::CpuFree(cpu));
                }
                #[cfg(test)]
                if end > self.now {
                    self.held_frees.0 += 1;
                } else {
                    self.held_frees.1 += 1;
                }
            }
        }
    }

    /// A CPU finished a slice: the longest-waiting runnable task that may run on it
    /// gets it.
    fn on_cpu_free(&mut self, cpu: usize) {
        if self.cpus_free_at.get(cpu) > self.now {
            return; // taken by a task that became runnable at this very time
        }
        let mut i = 0;
        while i < self.runqueue.len() {
            let (task, gen) = self.runqueue[i];
            let t = &self.tasks[task];
            if t.gen != gen || t.exited {
                self.runqueue.remove(i);
                continue;
            }
            if t.allowed.as_ref().is_some_and(|c| !c.contains(&cpu)) {
                i += 1;
                continue;
            }
            self.runqueue.remove(i);
            self.run_on(cpu, task);
            return;
        }
    }

    fn run_on(&mut self, cpu: usize, task: usize) {
        self.tasks[task].pending = None;
        self.tasks[task].cpu = cpu;
        self.mm.current_task = task;
        self.mm.set_current_cpu(cpu);
        self.slices += 1;
        // The IPIs this CPU handled during the last slice delay this one, on this
        // task's time.
        let irq_ns = std::mem::take(&mut self.irq_debt_ns[cpu]);
        self.tasks[task].system_ns += irq_ns;
        let start = self.now + irq_ns;
        // A kernel thread runs in lazy TLB mode: shootdowns skip its CPU.
        self.mm.cpu_user_until[cpu] = 0;
        let slice = self.scenario.run.slice.0;
        let end = match self.tasks[task].kind {
            TaskKind::Worker { workload, thread } => {
                self.run_worker(task, workload, thread, cpu, start, slice)
            }
            TaskKind::Kswapd(nid) => {
                self.mm.enter_kthread(Current::Kswapd(nid), start);
                let next = self.mm.kswapd_run(slice);
                let end = start + self.mm.cpu_ns;
                let since = *self.kswapd_awake_since[nid].get_or_insert(start);
                if matches!(next, KswapdNext::NapUntil(_) | KswapdNext::Sleep) {
                    self.kswapd_awake_ns += end - since;
                    self.kswapd_awake_since[nid] = None;
                }
                self.tasks[task].system_ns += self.mm.cpu_ns;
                self.psi.interval(start, end, cpu, 0, PsiDelta::STALL_RUN);
                match next {
                    KswapdNext::Run => self.set_timer(task, progress_after(start, end), false),
                    KswapdNext::NapUntil(t) => self.set_timer(task, t.max(end), true),
                    KswapdNext::Sleep => {}
                    KswapdNext::BlockedUntil(t) => {
                        let wakeable = self.mm.reclaim_wait.is_wakeable(task, t.max(end));
                        self.set_timer(task, t.max(end), wakeable);
                    }
                }
                end
            }
            TaskKind::Flusher => {
                self.mm.enter_kthread(Current::Flusher, start);
                let next = self.mm.wb_writeback();
                let end = start + self.mm.cpu_ns;
                self.tasks[task].system_ns += self.mm.cpu_ns;
                self.psi.interval(start, end, cpu, 0, PsiDelta::RUN);
                match next {
                    FlusherNext::RunAt(t) => {
                        self.set_timer(task, t.max(progress_after(start, end)), true)
                    }
                    FlusherNext::SleepUntil(t) => self.set_timer(task, t.max(end), true),
                }
                end
            }
            TaskKind::Kcompactd(nid) => {
                self.mm.enter_kthread(Current::Kcompactd(nid), start);
                let next = self.mm.kcompactd_run();
                // Even a look at the scores takes time.
                let end = start + self.mm.cpu_ns.max(1);
                self.tasks[task].system_ns += end - start;
                self.kcompactd_awake_ns += end - start;
                let stalled = self.mm.stall_ns > 0;
                self.psi.interval(
                    start,
                    end,
                    cpu,
                    0,
                    if stalled {
                        PsiDelta::STALL_RUN
                    } else {
                        PsiDelta::RUN
                    },
                );
                match next {
                    KcompactdNext::SleepUntil(t) => self.set_timer(task, t.max(end), true),
                    KcompactdNext::Sleep => {}
                }
                end
            }
            TaskKind::Kdamond(k) => {
                self.mm.enter_kthread(Current::Kdamond(k), start);
                self.mm.damon.psi_some_total_us = self.psi.avgs_total_us(0)[0];
                let next = self.mm.kdamond_run(k);
                let end = start + self.mm.cpu_ns;
                self.tasks[task].system_ns += self.mm.cpu_ns;
                self.psi.interval(start, end, cpu, 0, PsiDelta::RUN);
                let blocked = self.mm.blocked_until.take().unwrap_or(0);
                match next {
                    KdamondNext::SleepUntil(t) => {
                        self.set_timer(task, t.max(blocked).max(progress_after(start, end)), true)
                    }
                    KdamondNext::Stop => {}
                }
                end
            }
        };
        self.tasks[task].slice_end = end;
        if matches!(self.tasks[task].kind, TaskKind::Worker { .. }) {
            self.mm.cpu_user_until[cpu] = end;
        }
        self.cpus_free_at.set(cpu, end);
        if self.runqueue.is_empty() && self.hold_cpu_frees {
            let seq = self.queue.next_seq();
            if self.held_free[cpu].replace((end, seq)).is_none() {
                self.held_cpus.push(cpu as u32);
            }
        } else {
            debug_assert!(
                self.held_free[cpu].is_none(),
                "pushed when the queue filled"
            );
            self.queue.push(end, Event::CpuFree(cpu as u32));
        }
    }

    fn run_worker(
        &mut self,
        task: usize,
        wi: usize,
        ti: usize,
        cpu: usize,
        start: u64,
        slice: u64,
    ) -> u64 {
        self.mm.current = Current::Task(task);
        self.mm.current_workload = Some(wi);
        // lru_gen_use_mm at context switch: its mm ran since MGLRU last walked it.
        self.mm.mm_ran[wi] = !0;
        self.mm.mm_cpumask_set(wi, cpu);
        let mut rep = SliceReport::default();
        let was_forked = self.workloads[wi].forked_at.is_some();
        let held_before = self.workloads[wi].threads_held;
        let end_kind = workload::run_slice(
            &mut self.workloads[wi],
            &mut self.threads[ti],
            &mut self.mm,
            start,
            slice,
            &mut rep,
        );
        let end = rep.end_ns.max(start);
        // The first thread's mapping call returned (or the thread is gone without
        // it): the threads that waited for it start.
        if self.workloads[wi].threads_held
            && (self.workloads[wi].populated_at.is_some()
                || matches!(end_kind, SliceEnd::Exit | SliceEnd::AllocFailed))
        {
            let at = self.workloads[wi].populated_at.take().unwrap_or(end);
            self.workloads[wi].threads_held = false;
            // After a failed fork they never existed.
            if self.workloads[wi].fork_failed_at.is_none() {
                let others: Vec<usize> = self.workload_tasks(wi).skip(1).collect();
                for other in others {
                    self.queue_thread(other, at);
                }
            }
        }
        if let Some(message) = self.workloads[wi].error() {
            self.failed.get_or_insert(SimError::Workload {
                name: self.workloads[wi].name.clone(),
                time_ns: end,
                message: message.to_string(),
            });
        }
        if let (false, false, Some(at)) = (was_forked, held_before, self.workloads[wi].forked_at) {
            // The fork made the other threads: they run from its end.
            let others: Vec<usize> = self.workload_tasks(wi).filter(|&o| o != task).collect();
            for other in others {
                self.queue_thread(other, at);
            }
        }
        let t = &mut self.tasks[task];
        t.user_ns += rep.user_ns;
        t.system_ns += rep.system_ns;
        // PSI: the workload's cgroup (and so its ancestors and the system).
        let group = self.task_psi_group(task);
        // A slice with stalls records as one batch, in time order (the stalls lie
        // within the run, one after another): the run's end after its stalls, where
        // `interval` would record it second. Only changes of this task at one instant
        // trade places, which leaves PSI as it was (no time passes between them).
        let batch = !rep.stalls.is_empty() && end > start;
        if batch {
            self.psi.begin_batch();
            self.psi.record(start, cpu, group, PsiDelta::RUN);
        } else {
            self.psi.interval(start, end, cpu, group, PsiDelta::RUN);
        }
        for s in &rep.stalls {
            // Stalled while on the CPU: memstall, and not productive.
            let (s_start, s_end) = (s.start_ns, s.start_ns + s.len_ns);
            self.psi
                .interval(s_start, s_end, cpu, group, PsiDelta::MEMSTALL_ENTER);
        }
        if batch {
            self.psi.record(end, cpu, group, PsiDelta::RUN.negated());
        }
        // A sleep's state starts now and ends when the task runs again.
        if let SliceEnd::Blocked { memstall, .. } = end_kind {
            self.psi.record(end, cpu, group, sleep_state(memstall));
        }
        if batch {
            self.psi.end_batch();
        }
        if let SliceEnd::Blocked { memstall, .. } = end_kind {
            self.tasks[task].sleep = Some((end, sleep_state(memstall)));
        }
        match end_kind {
            SliceEnd::Preempted => self.set_timer(task, progress_after(start, end), false),
            SliceEnd::SleepUntil(t) => self.set_timer(task, t, false),
            SliceEnd::Blocked { until_ns, .. } => {
                // Throttled in reclaim: a wake-up may end the sleep early.
                let until_ns = until_ns.max(progress_after(start, end));
                let wakeable = self.mm.reclaim_wait.is_wakeable(task, until_ns);
                self.set_timer(task, until_ns, wakeable)
            }
            SliceEnd::Exit => {
                self.tasks[task].exited = true;
                if self.workloads[wi].forked_at.is_none() {
                    // Stopped before it started, or its fork failed: the threads the
                    // process would have made never exist.
                    for other in self.workload_tasks(wi).collect::<Vec<_>>() {
                        let o = &mut self.tasks[other];
                        o.exited = true;
                        o.pending = None;
                        o.gen += 1;
                    }
                }
                // A workload done before the run's end exits; one stopped by the end
                // of the run (its duration, or stop_when_done's last workload) is
                // still there when the results are taken.
                let run_ends = end >= self.scenario.run.duration.0
                    || (self.scenario.run.stop_when_done
                        && (0..self.workloads.len()).all(|w| self.workload_done(w)));
                if !run_ends && self.workload_done(wi) {
                    self.mm.now = end;
                    self.mm.exit_workload(wi);
                    if self.workloads[wi].respawns_at(end) {
                        self.respawn(wi, end);
                    }
                }
                self.start_waiting_workloads(end);
            }
            SliceEnd::AllocFailed => {
                // The allocation failed and the OOM killer found nothing else to kill:
                // the fault kills the faulting process (pagefault_out_of_memory).
                self.mm.now = end;
                self.mm.oom_kill_workload(wi);
                self.tasks[task].exited = true;
                self.start_waiting_workloads(end);
            }
        }
        end
    }

    /// Every thread of workload `w` has exited.
    fn workload_done(&self, w: usize) -> bool {
        self.tasks.iter().all(|t| {
            !matches!(t.kind, TaskKind::Worker { workload, .. } if workload == w) || t.exited
        })
    }

    /// `start_after`: every workload waiting for one whose threads have all exited
    /// starts now (or at its `start`, if later).
    fn start_waiting_workloads(&mut self, now: u64) {
        for w in 0..self.waiting_on.len() {
            let Some(before) = self.waiting_on[w] else {
                continue;
            };
            if !self.workload_done(before) {
                continue;
            }
            self.waiting_on[w] = None;
            let at = now.max(self.workloads[w].start_ns);
            self.workloads[w].delay_start(at);
            // Its first thread forks the process, which makes the others (or, with
            // a populating mapping call, which starts them when the call returns).
            self.queue_thread(self.mm.workload_task[w], at);
        }
    }

    /// A process `lifetime` ran out and the process exited at `at`: a new one takes
    /// its place (`fork` by the workload's launcher, here its first thread), with
    /// fresh threads and an empty mm; what the old threads counted stays theirs.
    fn respawn(&mut self, w: usize, at: u64) {
        self.mm.revive_workload(w);
        self.workloads[w].respawn(at);
        let nr = self.workload_tasks(w).count();
        for (index, task) in self
            .workload_tasks(w)
            .collect::<Vec<_>>()
            .into_iter()
            .enumerate()
        {
            let TaskKind::Worker { thread, .. } = self.tasks[task].kind else {
                unreachable!("workload tasks are workers");
            };
            let old = &mut self.threads[thread];
            let mut fresh = self.workloads[w].new_thread(w, index, nr, old.rng.clone(), at);
            fresh.ops = old.ops;
            fresh.last_op_ns = old.last_op_ns;
            // `--record-accesses`: the slot's file goes on with the new process.
            fresh.recorder = old.recorder.take();
            self.threads[thread] = fresh;
            let t = &mut self.tasks[task];
            t.exited = false;
            t.pending = None;
            t.gen += 1;
        }
        // Its first thread forks the process, which makes the others.
        self.queue_thread(self.mm.workload_task[w], at);
    }

    /// The tasks of workload `w`'s threads, first thread first.
    fn workload_tasks(&self, w: usize) -> impl Iterator<Item = usize> + '_ {
        (0..self.tasks.len()).filter(
            move |&t| matches!(self.tasks[t].kind, TaskKind::Worker { workload, .. } if workload == w),
        )
    }

    /// A workload thread that did not exist becomes runnable at `at`, its first
    /// operation due then.
    fn queue_thread(&mut self, task: usize, at: u64) {
        let TaskKind::Worker { thread, .. } = self.tasks[task].kind else {
            unreachable!("only workload threads are started");
        };
        self.threads[thread].next_issue_ns = at;
        self.tasks[task].pending = Some((at, true));
        let gen = self.tasks[task].gen;
        self.queue.push(
            at,
            Event::Ready {
                task: task as u32,
                gen,
            },
        );
    }

    pub fn now(&self) -> u64 {
        self.now
    }

    /// The virtual time the run ended at: the scenario's duration unless interrupted.
    pub fn end_ns(&self) -> u64 {
        self.end_ns
    }

    /// MemTotal - MemFree over the run (pages): the mean over the samples, and the peak.
    pub fn memory_used_pages(&self) -> (f64, u64) {
        let mean = if self.sampled_at_ns > 0 {
            self.used_page_ns as f64 / self.sampled_at_ns as f64
        } else {
            0.0
        };
        (mean, self.used_pages_max)
    }

    pub fn interrupted(&self) -> bool {
        self.interrupted
    }

    /// The digest of the scenario as it was when the run began.
    pub fn scenario_hash(&self) -> &str {
        &self.scenario_hash
    }

    /// /proc/pressure/memory (`memcg` 0) or a cgroup's memory.pressure, as read at the
    /// end of the run.
    /// The kswapds' time awake up to `now` (a balance_pgdat still going counts to
    /// now), summed over the nodes.
    pub fn kswapd_awake_ns(&self) -> u64 {
        self.kswapd_awake_ns
            + self
                .kswapd_awake_since
                .iter()
                .flatten()
                .map(|&t| self.now.saturating_sub(t))
                .sum::<u64>()
    }

    pub fn pressure(&self, memcg: usize) -> Pressure {
        self.pressure.get(memcg).copied().unwrap_or_default()
    }

    pub fn series(&self) -> &TimeSeries {
        &self.series
    }

    pub fn actions(&self) -> &[ActionRecord] {
        &self.actions
    }

    pub fn slices(&self) -> u64 {
        self.slices
    }

    /// A workload thread's state (the `thread` of a `TaskKind::Worker`).
    pub fn thread(&self, i: usize) -> &Thread {
        &self.threads[i]
    }
}

/// `numa_balancing_scan_delay_ms`: a process's first NUMA scan, 1 s after it starts.
const NUMA_SCAN_DELAY_NS: u64 = 1_000_000_000;

/// `vm.stat_interval` (HZ jiffies): how often each CPU's `vmstat_update` runs.
const VMSTAT_INTERVAL_NS: u64 = 1_000_000_000;

/// When `flush_memcg_stats_dwork` first runs: `run.memcg_stats_flush_first`, or a time
/// in (0, FLUSH_TIME] drawn from the seed. The kernel queues the work when the root
/// memcg comes online at boot and every FLUSH_TIME after, so a run that starts a while
/// after boot meets it at an arbitrary point of its period.
fn memcg_stats_flush_first(run: &scenario::Run) -> u64 {
    use rand::Rng;
    let period_ns = crate::mm::memcontrol::MEMCG_FLUSH_TIME_NS;
    run.memcg_stats_flush_first.map_or_else(
        || crate::rng::task_rng(run.seed, "flush_memcg_stats_dwork").gen_range(1..=period_ns),
        |t| t.0,
    )
}

/// What PSI counts a blocked task as: a memory stall, or waiting for I/O.
/// The earliest a task whose slice ran `start..end` may run again by its own doing
/// (preempted, a retry, more work): after a slice that took no time, 1ns later, so no
/// task can run slice after slice at one virtual instant.
fn progress_after(start: u64, end: u64) -> u64 {
    end.max(start + 1)
}

fn sleep_state(memstall: bool) -> PsiDelta {
    if memstall {
        PsiDelta::STALL_WAIT
    } else {
        PsiDelta::IOWAIT
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A shootdown's IPIs: each CPU named owes the handling time, and the next slice
    /// there pays it first, as that task's system time (kswapd's slice here: it starts
    /// 700 ns late). A CPU not named owes nothing.
    #[test]
    fn an_interrupted_cpu_pays_the_ipi_at_its_next_slice() {
        let text = "[machine]\nmemory = \"64M\"\nnr_cpus = 2\n\
                    [[workload]]\nname = \"a\"\nkind = \"anon\"\nsize = \"1M\"\n";
        let sc = crate::scenario::parse_str(text, "t.toml", &[]).unwrap();
        let mut sim = Simulation::new(sc);
        sim.mm.out.push(Out::TlbShootdown {
            cpus: vec![1],
            at: 0,
            ns: 700,
        });
        sim.handle_out();
        assert_eq!(sim.irq_debt_ns, [0, 700]);
        let kswapd = sim.kswapd_task[0];
        let before = sim.tasks[kswapd].system_ns;
        sim.run_on(1, kswapd);
        assert_eq!(sim.irq_debt_ns, [0, 0]);
        assert!(sim.tasks[kswapd].system_ns >= before + 700);
        assert!(sim.tasks[kswapd].slice_end >= 700);
        // A kernel thread's CPU is lazy: the next shootdown skips it.
        assert_eq!(sim.mm.cpu_user_until[1], 0);
    }

    /// Holding back the free-ups nobody waits for leaves a run as pushing each one
    /// does: the same trace line for line, timeseries, tasks' times and PSI. The
    /// scenario keeps the run queue filling and draining (more paced and unpaced
    /// threads than CPUs, sleeps shorter and longer than a slice, kswapd and direct
    /// reclaim, swap-outs, I/O, a workload bound to one node's CPUs, so that a CPU can
    /// sit idle while a task waits for another), and the run with holding both pushes
    /// held free-ups and drops them.
    #[test]
    fn held_cpu_frees_leave_the_run_as_pushed_ones() {
        let text = "[run]\nduration = \"600ms\"\nsample_interval = \"50ms\"\n\
                    [machine]\nmemory = \"96M\"\nnr_cpus = 3\n\
                    [machine.swap]\ntype = \"zram\"\nsize = \"64M\"\n\
                    [[machine.node]]\nmemory = \"48M\"\ncpus = [0]\n\
                    [[machine.node]]\nmemory = \"48M\"\ncpus = [1, 2]\n\
                    [[workload]]\nname = \"z\"\nkind = \"anon\"\nsize = \"40M\"\n\
                    pattern = \"zipf\"\nthreads = 3\nrate = 20000\ncpunodebind = [1]\n\
                    [[workload]]\nname = \"r\"\nkind = \"file-read\"\nnr_files = 2\n\
                    file_size = \"24M\"\npattern = \"sequential\"\nthreads = 2\nrate = 4000\n\
                    [[workload]]\nname = \"h\"\nkind = \"anon\"\nsize = \"64M\"\n";
        let run = |hold: bool| {
            let sc = crate::scenario::parse_str(text, "t.toml", &[]).unwrap();
            let mut sim = Simulation::new(sc);
            sim.hold_cpu_frees = hold;
            sim.enable_trace(crate::stats::trace::Tracer::parse("all", usize::MAX).unwrap());
            let mut out = sim.run(RunOptions::default()).unwrap();
            let end = out.results.now;
            let tasks: Vec<_> = (out.results.tasks.iter())
                .map(|t| (t.user_ns, t.system_ns, t.slice_end))
                .collect();
            let psi = format!("{:?}", out.results.psi.show(0, end));
            let held = out.results.held_frees;
            let seen = (out.trace.take(), format!("{:?}", out.series), tasks, psi);
            (seen, held, out.results.slices)
        };
        let (pushed, none, slices) = run(false);
        let (held, (pushed_later, dropped), held_slices) = run(true);
        assert_eq!(none, (0, 0));
        assert!(pushed_later > 0 && dropped > 0, "{pushed_later} {dropped}");
        assert!(slices > 1000);
        assert_eq!(slices, held_slices);
        let lines = pushed.0.as_ref().map_or(0, |t| t.lines().count());
        assert!(lines > 1000, "{lines} trace lines");
        assert!(pushed == held, "the runs differ");
    }
}
