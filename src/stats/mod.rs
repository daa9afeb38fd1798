pub mod psi;
pub mod series;
pub mod vmstat;
