pub mod psi;
pub mod series;
pub mod trace;
pub mod vmstat;
