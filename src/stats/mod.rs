//! What a run reports over time: PSI, the timeseries. The kernel's own counters and
//! tracepoints are the model's (`mm::vm_event_item`, `mm::trace`), re-exported here
//! under the names the reports use.

pub mod psi;
pub mod series;

pub use crate::mm::trace;
pub use crate::mm::vm_event_item as vmstat;
