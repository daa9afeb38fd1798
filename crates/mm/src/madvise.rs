//! Access advice: madvise(2) on a mapping (mm/madvise.c `madvise_behavior`: MADV_RANDOM
//! and MADV_SEQUENTIAL set VM_RAND_READ / VM_SEQ_READ) and posix_fadvise(2) on a file
//! (mm/fadvise.c `generic_fadvise`: FADV_RANDOM sets FMODE_RANDOM, FADV_SEQUENTIAL
//! doubles the file's readahead window, FADV_NOREUSE sets FMODE_NOREUSE). A space has
//! one mapping or one open file, so one [`Advice`] stands for both.

use super::{Advice, Mm};

impl Mm {
    /// madvise(2) over the whole of `space` (an anonymous mapping, or a file's mmap).
    pub fn madvise(&mut self, space: u32, advice: Advice) {
        self.spaces[space as usize].advice = advice;
    }

    /// posix_fadvise(2) over the whole of file `space`.
    pub fn generic_fadvise(&mut self, space: u32, advice: Advice) {
        let bdi_ra_pages = self.cfg.ra_pages as u64;
        let s = &mut self.spaces[space as usize];
        s.advice = advice;
        s.ra.ra_pages = match advice {
            Advice::Sequential => bdi_ra_pages * 2,
            Advice::Normal => bdi_ra_pages,
            Advice::Random | Advice::NoReuse => s.ra.ra_pages,
        };
    }
}
