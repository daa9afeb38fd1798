//! Bitmaps of `u64` words (lib/bitmap.c, include/linux/find.h).

/// The set bits of `words`, in order: `for_each_set_bit` (a CPU mask's CPUs, a set's
/// members), visiting the set words' bits, not every bit.
pub fn for_each_set_bit(words: &[u64]) -> impl Iterator<Item = usize> + '_ {
    words.iter().enumerate().flat_map(|(i, &w)| {
        let mut w = w;
        std::iter::from_fn(move || {
            (w != 0).then(|| {
                let b = w.trailing_zeros() as usize;
                w &= w - 1;
                i * 64 + b
            })
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_set_bit_once_in_order() {
        let mask = [1u64 | 1 << 5 | 1 << 63, 1, 1 << 2];
        assert_eq!(
            for_each_set_bit(&mask).collect::<Vec<_>>(),
            [0, 5, 63, 64, 130]
        );
        assert_eq!(for_each_set_bit(&[0, 0]).count(), 0);
    }
}
