//! Access patterns: which item (page, or file block) the next operation touches.
//!
//! Sampling is on the per-access hot path, so zipf uses a Walker alias table (one
//! random word, one table read: DESIGN.md measured 200 M samples/s against 7 M/s for
//! rand_distr's Zipf), built once per workload and shared by its threads.

use rand::RngCore;
use rand_pcg::Pcg64Mcg;
use std::sync::Arc;

/// `x` uniform in `0..n` from one random word (Lemire's multiply-shift; the bias is
/// below 2^-32 for the sizes here).
#[inline]
pub fn below(word: u64, n: u64) -> u64 {
    ((word as u128 * n as u128) >> 64) as u64
}

/// A Walker/Vose alias table over `n` outcomes, each bucket holding its acceptance
/// threshold and both outcomes it can return (one cache line read per sample).
#[derive(Debug)]
pub struct AliasTable {
    /// Per bucket: [threshold scaled to 2^32 (u32::MAX: always accept), outcome on
    /// accept, outcome on reject].
    buckets: Vec<[u32; 3]>,
}

impl AliasTable {
    /// Builds the table for weights `w` (Vose's method; deterministic), labelling
    /// outcome `i` as `label(i)`.
    pub fn new(w: &[f64], label: impl Fn(u64) -> u64) -> AliasTable {
        let n = w.len();
        let sum: f64 = w.iter().sum();
        let mut scaled: Vec<f64> = w.iter().map(|x| x * n as f64 / sum).collect();
        let mut prob = vec![u32::MAX; n];
        let mut alias: Vec<u32> = (0..n as u32).collect();
        let mut small: Vec<u32> = Vec::new();
        let mut large: Vec<u32> = Vec::new();
        for (i, &p) in scaled.iter().enumerate() {
            if p < 1.0 {
                small.push(i as u32);
            } else {
                large.push(i as u32);
            }
        }
        while let (Some(s), Some(&l)) = (small.pop(), large.last()) {
            prob[s as usize] = (scaled[s as usize] * 4_294_967_296.0).min(4_294_967_294.0) as u32;
            alias[s as usize] = l;
            scaled[l as usize] -= 1.0 - scaled[s as usize];
            if scaled[l as usize] < 1.0 {
                large.pop();
                small.push(l);
            }
        }
        let buckets = (0..n)
            .map(|i| {
                [
                    prob[i],
                    label(i as u64) as u32,
                    label(alias[i] as u64) as u32,
                ]
            })
            .collect();
        AliasTable { buckets }
    }

    /// One sample from one random word: the high bits pick the bucket, the low 32
    /// bits decide accept or alias.
    #[inline]
    pub fn sample(&self, word: u64) -> u64 {
        let b = &self.buckets[below(word, self.buckets.len() as u64) as usize];
        if (word as u32) < b[0] || b[0] == u32::MAX {
            b[1] as u64
        } else {
            b[2] as u64
        }
    }
}

/// Zipf over ranks 1..=n with exponent `s`, ranks scattered over the item range (as
/// YCSB's scrambled zipfian does) so the hot items are not all adjacent.
#[derive(Debug)]
pub struct Zipf {
    table: AliasTable,
    n: u64,
    stride: u64,
}

impl Zipf {
    pub fn new(n: u64, s: f64) -> Zipf {
        let w: Vec<f64> = (1..=n).map(|k| (k as f64).powf(-s)).collect();
        let stride = coprime_stride(n);
        let table = AliasTable::new(&w, |r| scatter(r, stride, n));
        Zipf { table, n, stride }
    }

    /// Item for rank index `r` (0 = most popular).
    pub fn item_of_rank(&self, r: u64) -> u64 {
        scatter(r, self.stride, self.n)
    }

    #[inline]
    pub fn sample(&self, word: u64) -> u64 {
        self.table.sample(word)
    }
}

fn scatter(r: u64, stride: u64, n: u64) -> u64 {
    (r as u128 * stride as u128 % n as u128) as u64
}

/// A stride near n·φ that is coprime with n: r ↦ r·stride mod n is a permutation.
fn coprime_stride(n: u64) -> u64 {
    if n <= 2 {
        return 1;
    }
    let mut s = ((n as f64) * 0.618_033_988_75) as u64 | 1;
    while gcd(s, n) != 1 {
        s += 2;
    }
    s % n
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The pattern of one workload, shared by its threads.
#[derive(Debug, Clone)]
pub enum Sampler {
    Sequential {
        n: u64,
    },
    Uniform {
        n: u64,
    },
    Zipf(Arc<Zipf>),
    HotCold {
        n: u64,
        hot_n: u64,
        hot_prob_u32: u32,
        phase_change_ns: Option<u64>,
    },
}

impl Sampler {
    pub fn items(&self) -> u64 {
        match self {
            Sampler::Sequential { n } | Sampler::Uniform { n } | Sampler::HotCold { n, .. } => *n,
            Sampler::Zipf(z) => z.n,
        }
    }

    /// Next item for a thread whose sequential cursor is `cursor`, at time `now`.
    #[inline]
    pub fn next(&self, rng: &mut Pcg64Mcg, cursor: &mut u64, now: u64) -> u64 {
        match self {
            Sampler::Sequential { n } => {
                let i = *cursor;
                *cursor = if i + 1 >= *n { 0 } else { i + 1 };
                i
            }
            Sampler::Uniform { n } => below(rng.next_u64(), *n),
            Sampler::Zipf(z) => z.sample(rng.next_u64()),
            Sampler::HotCold {
                n,
                hot_n,
                hot_prob_u32,
                phase_change_ns,
            } => {
                let w = rng.next_u64();
                // Before the phase change the hot set is the first hot_n items; after it,
                // the hot set moves to the middle of the range.
                let base = match phase_change_ns {
                    Some(t) if now >= *t => n / 2,
                    _ => 0,
                };
                let i = if (w as u32) < *hot_prob_u32 {
                    below(w, *hot_n)
                } else {
                    hot_n + below(w, n - hot_n)
                };
                (base + i) % n
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::rng::task_rng;

    #[test]
    fn alias_table_matches_weights() {
        // Weights 1:2:3:4 → probabilities 0.1, 0.2, 0.3, 0.4.
        let t = AliasTable::new(&[1.0, 2.0, 3.0, 4.0], |i| i);
        let mut rng = task_rng(7, "alias");
        let mut counts = [0u64; 4];
        let n = 400_000;
        for _ in 0..n {
            counts[t.sample(rng.next_u64()) as usize] += 1;
        }
        for (i, &c) in counts.iter().enumerate() {
            let p = c as f64 / n as f64;
            let want = (i + 1) as f64 / 10.0;
            assert!((p - want).abs() < 0.005, "outcome {i}: {p} vs {want}");
        }
    }

    #[test]
    fn zipf_rank_one_share() {
        // s = 1, n = 100: p(rank 1) = 1/H_100 = 1/5.18738 = 0.19277.
        let z = Zipf::new(100, 1.0);
        let mut rng = task_rng(7, "zipf");
        let top = z.item_of_rank(0);
        let n = 400_000;
        let hits = (0..n).filter(|_| z.sample(rng.next_u64()) == top).count();
        let p = hits as f64 / n as f64;
        assert!((p - 0.19277).abs() < 0.004, "{p}");
    }

    #[test]
    fn scramble_is_a_permutation() {
        for n in [1u64, 2, 10, 97, 1000, 4096] {
            let z = Zipf::new(n, 0.99);
            let mut seen = vec![false; n as usize];
            for r in 0..n {
                let i = z.item_of_rank(r) as usize;
                assert!(!seen[i]);
                seen[i] = true;
            }
        }
    }

    #[test]
    fn hotcold_share_and_phase_change() {
        // 20% of 1000 items get 80% of accesses; after the phase change the hot set is
        // items 500..700.
        let s = Sampler::HotCold {
            n: 1000,
            hot_n: 200,
            hot_prob_u32: (0.8 * 4_294_967_296.0) as u32,
            phase_change_ns: Some(100),
        };
        let mut rng = task_rng(1, "hc");
        let mut c = 0;
        let n = 200_000;
        let mut hot_before = 0;
        let mut hot_after = 0;
        for _ in 0..n {
            if s.next(&mut rng, &mut c, 0) < 200 {
                hot_before += 1;
            }
            let i = s.next(&mut rng, &mut c, 100);
            if (500..700).contains(&i) {
                hot_after += 1;
            }
        }
        for h in [hot_before, hot_after] {
            let p = h as f64 / n as f64;
            assert!((p - 0.8).abs() < 0.01, "{p}");
        }
    }

    #[test]
    fn sequential_wraps() {
        let s = Sampler::Sequential { n: 3 };
        let mut rng = task_rng(1, "s");
        let mut c = 0;
        let v: Vec<u64> = (0..5).map(|_| s.next(&mut rng, &mut c, 0)).collect();
        assert_eq!(v, vec![0, 1, 2, 0, 1]);
    }
}
