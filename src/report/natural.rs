//! Natural order for names that carry numbers: `w/2` before `w/10`, `mmap-2/3` before
//! `mmap-10/0`, as a reader counts rather than as bytes compare.

use std::cmp::Ordering;

/// Compares `a` and `b` piece by piece: runs of ASCII digits as numbers (of any length:
/// no parse, so no overflow), everything else character by character. Names equal that
/// way (`w/02` and `w/2`) fall back to plain byte order, so the order is total.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (mut x, mut y) = (a.as_bytes(), b.as_bytes());
    loop {
        match (x.first(), y.first()) {
            (None, None) => return a.cmp(b),
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(p), Some(q)) if p.is_ascii_digit() && q.is_ascii_digit() => {
                let (m, rest_x) = split_digits(x);
                let (n, rest_y) = split_digits(y);
                let ord = cmp_digit_runs(m, n);
                if ord != Ordering::Equal {
                    return ord;
                }
                (x, y) = (rest_x, rest_y);
            }
            (Some(p), Some(q)) => {
                if p != q {
                    return p.cmp(q);
                }
                (x, y) = (&x[1..], &y[1..]);
            }
        }
    }
}

/// The leading run of digits of `s`, and the rest.
fn split_digits(s: &[u8]) -> (&[u8], &[u8]) {
    let n = s.iter().take_while(|c| c.is_ascii_digit()).count();
    s.split_at(n)
}

/// Two digit runs by value: without leading zeros the shorter is smaller, and equal
/// lengths compare as bytes.
fn cmp_digit_runs(m: &[u8], n: &[u8]) -> Ordering {
    let strip = |d: &[u8]| -> usize { d.iter().take_while(|&&c| c == b'0').count() };
    let (m, n) = (&m[strip(m)..], &n[strip(n)..]);
    m.len().cmp(&n.len()).then_with(|| m.cmp(n))
}

#[cfg(test)]
mod tests {
    use super::natural_cmp;
    use std::cmp::Ordering::*;

    #[test]
    fn digit_runs_compare_as_numbers() {
        assert_eq!(natural_cmp("w/2", "w/10"), Less);
        assert_eq!(natural_cmp("w/10", "w/2"), Greater);
        assert_eq!(natural_cmp("mmap-2/3", "mmap-10/0"), Less);
        assert_eq!(natural_cmp("mmap-10/0", "mmap-10/1"), Less);
        assert_eq!(natural_cmp("mmap-4", "mmap-12"), Less);
        // Letters still compare as bytes; a prefix sorts first.
        assert_eq!(natural_cmp("flusher", "kswapd0"), Less);
        assert_eq!(natural_cmp("mmap", "mmap-1"), Less);
        assert_eq!(natural_cmp("a9", "b1"), Less);
        // A digit run against a letter: bytes ('1' < 'a').
        assert_eq!(natural_cmp("w1", "wa"), Less);
    }

    #[test]
    fn long_runs_and_leading_zeros() {
        // Beyond u64: compared by length, then digits.
        assert_eq!(
            natural_cmp("x99999999999999999999", "x100000000000000000000"),
            Less
        );
        // Equal values: byte order breaks the tie, so the order stays total.
        assert_eq!(natural_cmp("w/02", "w/2"), Less);
        assert_eq!(natural_cmp("w/007", "w/8"), Less);
        assert_eq!(natural_cmp("same", "same"), Equal);
    }

    #[test]
    fn sorts_a_task_list() {
        let mut names = vec![
            "w/10",
            "kswapd0",
            "w/2",
            "mmap-10/0",
            "w/1",
            "mmap-2/3",
            "flusher",
        ];
        names.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(
            names,
            [
                "flusher",
                "kswapd0",
                "mmap-2/3",
                "mmap-10/0",
                "w/1",
                "w/2",
                "w/10"
            ]
        );
    }
}
