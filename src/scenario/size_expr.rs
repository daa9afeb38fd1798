//! A cgroup write's value computed from the cgroup's state when the action runs, as a
//! script would compute it before writing: sizes and the cgroup's own files joined by
//! `+` and `-` (`"memory.current - 10M"`, `"memory.peak / 2"` is not supported).

use super::units::parse_size;

/// A cgroup file a value may read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CgroupFile {
    Current,
    Peak,
    Min,
    Low,
    High,
    Max,
}

/// The files, as they are named in an expression.
pub const READABLE: [(&str, CgroupFile); 6] = [
    ("memory.current", CgroupFile::Current),
    ("memory.peak", CgroupFile::Peak),
    ("memory.min", CgroupFile::Min),
    ("memory.low", CgroupFile::Low),
    ("memory.high", CgroupFile::High),
    ("memory.max", CgroupFile::Max),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Term {
    Bytes(u64),
    File(CgroupFile),
}

/// Terms with their signs (true: subtract), in order.
pub type SizeExpr = Vec<(bool, Term)>;

/// Whether `s` is an expression (names a cgroup file) rather than a plain size.
pub fn is_expr(s: &str) -> bool {
    s.contains("memory.")
}

/// Parses `memory.current - 10M + 4K`: terms (sizes or readable cgroup files) joined
/// by `+` and `-`.
pub fn parse(s: &str) -> Result<SizeExpr, String> {
    let mut out = Vec::new();
    let mut sub = false;
    let mut expect_term = true;
    for tok in s.split_whitespace().flat_map(split_ops) {
        match (tok, expect_term) {
            ("+" | "-", false) => {
                sub = tok == "-";
                expect_term = true;
            }
            ("+" | "-", true) => return Err(format!("`{s}`: `{tok}` where a term belongs")),
            (_, false) => return Err(format!("`{s}`: `+` or `-` expected before `{tok}`")),
            (t, true) => {
                let term = match READABLE.iter().find(|(n, _)| *n == t) {
                    Some((_, f)) => Term::File(*f),
                    None => Term::Bytes(parse_size(t).map_err(|e| {
                        format!(
                            "`{s}`: `{t}` is neither a size ({e}) nor one of {}",
                            READABLE.map(|(n, _)| n).join(", ")
                        )
                    })?),
                };
                out.push((sub, term));
                expect_term = false;
            }
        }
    }
    if expect_term {
        return Err(format!("`{s}`: a term is missing at the end"));
    }
    Ok(out)
}

/// Splits `a-b+c` into `a`, `-`, `b`, `+`, `c` (a size never contains `+` or `-`;
/// file names contain only dots).
fn split_ops(word: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    for (i, ch) in word.char_indices() {
        if ch == '+' || ch == '-' {
            if i > start {
                parts.push(&word[start..i]);
            }
            parts.push(&word[i..i + 1]);
            start = i + 1;
        }
    }
    if start < word.len() {
        parts.push(&word[start..]);
    }
    parts
}

/// The value in bytes, reading files through `read` (bytes); below zero is 0, as a
/// script writing a negative size would be refused and write nothing smaller.
pub fn eval(expr: &SizeExpr, read: impl Fn(CgroupFile) -> u64) -> u64 {
    let v: i128 = expr
        .iter()
        .map(|&(sub, t)| {
            let x = match t {
                Term::Bytes(b) => b as i128,
                Term::File(f) => read(f) as i128,
            };
            if sub {
                -x
            } else {
                x
            }
        })
        .sum();
    v.clamp(0, u64::MAX as i128) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_evaluates_by_hand() {
        let e = parse("memory.current - 10M").unwrap();
        assert_eq!(
            e,
            vec![
                (false, Term::File(CgroupFile::Current)),
                (true, Term::Bytes(10 << 20))
            ]
        );
        let read = |f| match f {
            CgroupFile::Current => 100 << 20,
            CgroupFile::Peak => 150 << 20,
            _ => 0,
        };
        assert_eq!(eval(&e, read), 90 << 20);
        assert_eq!(
            eval(&parse("memory.peak-memory.current+4K").unwrap(), read),
            (50 << 20) + 4096
        );
        assert_eq!(
            eval(&parse("memory.current - 1G").unwrap(), read),
            0,
            "clamped at 0"
        );
        for bad in [
            "memory.current -",
            "- 10M",
            "memory.current 10M",
            "memory.stat - 1M",
            "memory.current + + 1M",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
