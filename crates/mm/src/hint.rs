//! Hints to the host, which change no state the simulation can see: a cache-line
//! prefetch for the pipelined loops (the LRU walks, the hit loops' look-ahead, the
//! swap map, the cache policies' tables), and huge-page advice for the big tables. A
//! leaf: it depends on nothing of the project, so the kernel model and the cache
//! policies use it without reaching up into the engine's modules.

/// Asks the host CPU to start loading the cache line(s) of `p`. A hint only: it never
/// faults and changes no state the simulation can see.
#[inline(always)]
pub fn prefetch<T>(p: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch of any address is harmless; this one is a live reference.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let first = p as *const T as *const i8;
        _mm_prefetch::<_MM_HINT_T0>(first);
        // A value whose size is not a multiple of its alignment (a 28-byte frame) may
        // straddle two cache lines: fetch its last byte's too (decided at compile time).
        if std::mem::size_of::<T>() > std::mem::align_of::<T>() {
            _mm_prefetch::<_MM_HINT_T0>(first.wrapping_add(std::mem::size_of::<T>() - 1));
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Asks the host to back `v` with transparent huge pages (`madvise(MADV_HUGEPAGE)` on
/// the 2 MiB-aligned part of it): the hit path's random reads of a big table then
/// miss the host's TLB far less often. Only for tables that are written densely (the
/// host commits 2 MiB, not 4 KiB, at a first write); results do not depend on it.
pub fn advise_huge_pages<T>(v: &[T]) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = v.as_ptr() as usize;
        let end = start + std::mem::size_of_val(v);
        let (lo, hi) = (start.next_multiple_of(HUGE), end / HUGE * HUGE);
        if hi > lo {
            // SAFETY: the range lies inside `v`'s allocation; MADV_HUGEPAGE changes
            // how the host backs those pages, never their contents. A failure (no
            // THP on the host) only leaves the 4 KiB pages.
            unsafe {
                libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_HUGEPAGE);
            }
        }
    }
}
