//! `trace`: replays a trace file's requests ([`crate::trace`]), one request per
//! operation, in the order the file has them. Where each request's pages are was fixed
//! when the scenario was loaded ([`crate::trace::layout::Layout`]); the file is read
//! again as the run goes (streaming), from the start on each pass with `loop`.
//!
//! Anonymous backing: a request is a load (a store for a write) of each of its pages,
//! present pages at `costs.access_ns` each, absent ones through the fault handler.
//! File backing: a request is one buffered read() (write()) of its pages.
//! With `pacing = "timestamps"` no request starts before its timestamp's offset from
//! the first request's (the next pass's times follow the last's by one unit).

use super::{touch, Ctx, Step, Thread};
use crate::mm::memory::FaultResult;
use crate::mm::{Mm, SpaceKind};
use crate::scenario::{Backing, LoadedTrace, TracePacing, Workload as WorkloadCfg};
use crate::trace::Request;
use crate::trace::Requests;

pub struct Replay {
    trace: LoadedTrace,
    pub space: u32,
    file: bool,
    reader: Option<Requests>,
    /// The request in progress (redone after a sleep in reclaim), and the next one
    /// (read ahead for its timestamp).
    cur: Option<Request>,
    next: Option<Request>,
    passes: u64,
    loop_: bool,
    by_timestamps: bool,
    start_ns: u64,
    /// One pass's span of timestamps, in ns (the first to one unit past the last).
    span_ns: f64,
    /// What stopped the replay (the file changed under the run), for the run's error.
    pub error: Option<String>,
}

impl Replay {
    pub fn new(idx: usize, cfg: &WorkloadCfg, mm: &mut Mm) -> Replay {
        let trace = cfg
            .loaded_trace()
            .expect("loaded with the scenario")
            .clone();
        let file = cfg.backing == Some(Backing::File);
        let pages = trace.pages.max(1);
        let space = if file {
            mm.add_space(SpaceKind::File, format!("{}/trace", cfg.name), pages, None)
        } else {
            mm.add_space(SpaceKind::Anon, cfg.name.clone(), pages, Some(idx))
        };
        if let Some(a) = cfg.advice {
            let advice = crate::scenario::mm_config::advice(a);
            if file {
                mm.generic_fadvise(space, advice);
            } else {
                mm.madvise(space, advice);
            }
        }
        let l = &trace.layout;
        let span_ns = (l.last_time - l.first_time + 1.0) * trace.time_unit_ns;
        Replay {
            space,
            file,
            reader: None,
            cur: None,
            next: None,
            passes: 0,
            loop_: cfg.loop_.unwrap_or(false),
            by_timestamps: cfg.pacing == Some(TracePacing::Timestamps),
            start_ns: cfg.start.0,
            span_ns,
            error: None,
            trace,
        }
    }

    /// The next request of the trace: Ok(None) at its end (without `loop`).
    fn read(&mut self) -> Result<Option<Request>, String> {
        for _ in 0..2 {
            let reader = match &mut self.reader {
                Some(r) => r,
                None => self.reader.insert(
                    crate::trace::open(&self.trace.path, self.trace.format)
                        .map_err(|e| e.to_string())?,
                ),
            };
            match reader.next() {
                Some(r) => return r.map(Some).map_err(|e| e.to_string()),
                None if self.loop_ => {
                    self.reader = None;
                    self.passes += 1;
                }
                None => return Ok(None),
            }
        }
        Err(format!(
            "{}: no requests on pass {}: the file changed since the scenario was loaded",
            self.trace.path.display(),
            self.passes + 1
        ))
    }

    /// When `r` (of the current pass) is due.
    fn due_ns(&self, r: &Request) -> u64 {
        let l = &self.trace.layout;
        let offset =
            (r.time - l.first_time) * self.trace.time_unit_ns + self.passes as f64 * self.span_ns;
        self.start_ns.saturating_add(offset.max(0.0) as u64)
    }

    pub(crate) fn op(&mut self, t: &mut Thread, cx: &mut Ctx, origin: u64) -> Step {
        let r = match (cx.retry, self.cur) {
            (Some(_), Some(r)) => r,
            _ => {
                let next = match self.next.take() {
                    Some(r) => Ok(Some(r)),
                    None => self.read(),
                };
                match next {
                    Ok(Some(r)) => r,
                    Ok(None) => return Step::Finished,
                    Err(e) => return self.fail(e),
                }
            }
        };
        self.cur = Some(r);
        let Some((first, n)) = self.trace.layout.pages_of(&r) else {
            return self.fail(format!(
                "{}: key {} was not in the trace when the scenario was loaded: the file \
                 changed since",
                self.trace.path.display(),
                r.key
            ));
        };
        t.retry = Some((r.key, r.write, origin));
        let step = if self.file {
            let space = self.space;
            if r.write {
                let res = cx.kernel(|mm| mm.filemap_write(space, first, n));
                if !matches!(res, FaultResult::Retry { .. } | FaultResult::Killed) {
                    super::record_pages(t, space, first, n, true);
                }
                Step::Op(res, n as u64 * 4096)
            } else {
                super::read_op(cx, t, space, first, n, true)
            }
        } else {
            self.anon_request(t, cx, first, n, r.write, origin)
        };
        if matches!(
            step,
            Step::Op(FaultResult::Done | FaultResult::Blocked { .. }, _)
        ) {
            self.cur = None;
            if self.by_timestamps {
                match self.read() {
                    Ok(Some(next)) => {
                        t.next_issue_ns = self.due_ns(&next);
                        self.next = Some(next);
                    }
                    Ok(None) => {}
                    Err(e) => return self.fail(e),
                }
            }
        }
        step
    }

    /// Each page of the request in turn; a retry redoes the request (pages already in
    /// are plain accesses then).
    fn anon_request(
        &mut self,
        t: &mut Thread,
        cx: &mut Ctx,
        first: u32,
        n: u32,
        write: bool,
        origin: u64,
    ) -> Step {
        for vpn in first..first + n {
            if let Some(step) = touch(cx, t, self.space, vpn, write, origin) {
                if !matches!(step, Step::Op(FaultResult::Done, _)) {
                    return step;
                }
            }
        }
        Step::Op(FaultResult::Done, n as u64 * 4096)
    }

    fn fail(&mut self, e: String) -> Step {
        self.error = Some(e);
        Step::Finished
    }
}
