//! A cache-line hint for the simulator's pipelined loops (the LRU walks, the hit
//! loops' look-ahead, the swap map, the cache policies' tables). A leaf: it depends on
//! nothing of the project, so the kernel model and the cache policies can use it
//! without reaching up into the engine's modules.

/// Asks the host CPU to start loading the cache line of `p`. A hint only: it never
/// faults and changes no state the simulation can see.
#[inline(always)]
pub fn prefetch<T>(p: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch of any address is harmless; this one is a live reference.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(p as *const T as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
