pub mod bench;
pub mod mm;
pub mod report;
pub mod scenario;
pub mod sim;
pub mod stats;
pub mod workload;
