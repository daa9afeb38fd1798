//! Access patterns: which item (page, or file block) the next operation touches.
//!
//! Sampling is on the per-access hot path, so zipf uses a Walker alias table (one
//! random word, one table read: DESIGN.md measured 200 M samples/s against 7 M/s for
//! rand_distr's Zipf), built once per workload and shared by its threads, over at most
//! the first 2^20 ranks; the rest of a larger set is sampled by rejection-inversion.

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
        // Zeroed and advised before it is written, so the host can back it with huge
        // pages from the first write: the hit loop reads it at random.
        let mut buckets = vec![[0u32; 3]; n];
        crate::hint::advise_huge_pages(&buckets);
        for (i, b) in buckets.iter_mut().enumerate() {
            *b = [
                prob[i],
                label(i as u64) as u32,
                label(alias[i] as u64) as u32,
            ];
        }
        AliasTable { buckets }
    }

    /// Starts loading the bucket [`AliasTable::sample`] will read for `word`.
    #[inline(always)]
    pub fn prefetch(&self, word: u64) {
        prefetch(&self.buckets[below(word, self.buckets.len() as u64) as usize]);
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

/// Ranks the alias table covers. Above them (a zipf set over 4 GiB of pages) the tail
/// is sampled by rejection-inversion, so the sampler's memory is bounded (12 MiB of
/// table, ~40 MiB while building it) whatever the size of the set.
pub const ZIPF_TABLE_RANKS: u64 = 1 << 20;

/// Zipf over ranks 1..=n with exponent `s`, ranks scattered over the item range (as
/// YCSB's scrambled zipfian does) so the hot items are not all adjacent.
///
/// Ranks up to [`ZIPF_TABLE_RANKS`] come from an alias table (one random word per
/// sample). For a larger n a first word picks the head with probability
/// H(K, s) / H(n, s) (generalised harmonic numbers), and the tail's ranks come from
/// [`ZipfTail`]: exact in distribution, with memory independent of n.
#[derive(Debug)]
pub struct Zipf {
    table: AliasTable,
    tail: Option<ZipfTail>,
    /// With a tail: P(head) as a threshold on a random u64.
    head_threshold: u64,
    n: u64,
    s: f64,
    stride: u64,
    /// ⌊(2^64 − 1) / n⌋, for [`rem`].
    rem_m: u64,
}

impl Zipf {
    pub fn new(n: u64, s: f64) -> Zipf {
        Zipf::with_table_ranks(n, s, ZIPF_TABLE_RANKS)
    }

    /// As [`Zipf::new`], with the alias table over the first `table_ranks` ranks.
    pub fn with_table_ranks(n: u64, s: f64, table_ranks: u64) -> Zipf {
        let head_n = n.min(table_ranks.max(1));
        let w: Vec<f64> = (1..=head_n).map(|k| (k as f64).powf(-s)).collect();
        let stride = coprime_stride(n);
        let table = AliasTable::new(&w, |r| scatter(r, stride, n));
        let (tail, head_threshold) = if n > head_n {
            let p_head = harmonic(head_n, s) / harmonic(n, s);
            let threshold = (p_head * 18_446_744_073_709_551_616.0) as u64;
            (Some(ZipfTail::new(head_n + 1, n, s)), threshold)
        } else {
            (None, u64::MAX)
        };
        Zipf {
            table,
            tail,
            head_threshold,
            n,
            s,
            stride,
            rem_m: u64::MAX / n.max(1),
        }
    }

    /// What determines the samples this sampler draws from a stream: the number of
    /// items, the exponent and the alias table's size (its construction is
    /// deterministic). Two samplers with the same identity draw the same items.
    pub fn identity(&self) -> [u64; 3] {
        [self.n, self.s.to_bits(), self.table.buckets.len() as u64]
    }

    /// (n, s, stride): item = rank × stride mod n, for samplers that weigh ranks
    /// themselves (`workload::skip`).
    pub fn skip_params(&self) -> (u64, f64, u64) {
        (self.n, self.s, self.stride)
    }

    /// Item for rank index `r` (0 = most popular).
    pub fn item_of_rank(&self, r: u64) -> u64 {
        scatter_m(r, self.stride, self.n, self.rem_m)
    }

    #[inline]
    pub fn sample(&self, rng: &mut impl RngCore) -> u64 {
        self.resolve(self.draw(rng))
    }

    /// A sample's random draws, in [`Zipf::sample`]'s order, without its table read:
    /// the pipelined hit loop draws ahead, prefetches the bucket ([`Zipf::prefetch`])
    /// and reads it later ([`Zipf::resolve`]).
    #[inline]
    pub fn draw(&self, rng: &mut impl RngCore) -> Draw {
        let w = rng.next_u64();
        match &self.tail {
            None => Draw::Alias(w),
            Some(tail) => self.draw_head_or_tail(w, tail, rng),
        }
    }

    fn draw_head_or_tail(&self, w: u64, tail: &ZipfTail, rng: &mut impl RngCore) -> Draw {
        if w < self.head_threshold {
            Draw::Alias(rng.next_u64())
        } else {
            Draw::Item(self.item_of_rank(tail.sample(rng) - 1))
        }
    }

    /// Starts loading the alias bucket a draw will read.
    #[inline(always)]
    pub fn prefetch(&self, d: Draw) {
        if let Draw::Alias(w) = d {
            self.table.prefetch(w);
        }
    }

    /// The item a draw stands for.
    #[inline(always)]
    pub fn resolve(&self, d: Draw) -> u64 {
        match d {
            Draw::Item(i) => i,
            Draw::Alias(w) => self.table.sample(w),
        }
    }
}

/// A sample drawn but maybe not yet looked up: an item, or the random word an alias
/// table turns into one.
#[derive(Debug, Clone, Copy)]
pub enum Draw {
    Item(u64),
    Alias(u64),
}

pub use crate::hint::prefetch;

/// Zipf over the ranks `first..=last` (weights k^-s) by rejection-inversion
/// (Hörmann & Derflinger 1996, "Rejection-inversion to generate variates from
/// monotone discrete distributions"; the sampler of Apache Commons' and rand_distr's
/// Zipf). Rank k owns the interval (F(k+½) − h(k), F(k+½)] of F, the integral of
/// h(x) = x^-s measured from `first`; since h is convex that interval lies inside
/// (F(k−½), F(k+½)], so a uniform u over the union, mapped back through F⁻¹ and
/// rounded, gives k with probability ∝ h(k) once u outside k's own interval is
/// rejected. `first`'s interval is all of its part, so rounding below it is safe.
#[derive(Debug)]
pub struct ZipfTail {
    first: f64,
    last: f64,
    s: f64,
    /// first^(1-s): F's scale.
    scale: f64,
    /// The range of u: (F(first + ½) − h(first), F(last + ½)].
    u_lo: f64,
    u_hi: f64,
    /// Hörmann and Derflinger's squeeze: a rank k > first with k − x at most this is
    /// accepted without evaluating F(k + ½) − h(k) (three of a sample's five libm
    /// calls). See [`ZipfTail::new`].
    squeeze: f64,
    /// F⁻¹ from a table, used where its answer cannot differ from `f_inv`'s.
    fast: Option<FastInverse>,
}

/// F⁻¹ on the tail's range of u by cubic Hermite interpolation between nodes, with a
/// bound on its error: x(u) = (A + B·u)^p (A = first^(1−s), B = 1 − s, p = 1/(1 − s)),
/// so |x⁗| on a segment is |p(p−1)(p−2)(p−3)|·|B|⁴·(A + B·u)^(p−4) at one of its ends,
/// and the interpolation error is at most step⁴/384 of that. A sample whose rank or
/// squeeze decision lies within `delta` (that bound plus room for both ways' rounding)
/// of changing is done the exact way, so the ranks are `f_inv`'s, draw for draw; the
/// table saves the log1p and exp of the others.
///
/// The nodes are evenly spaced in the uniform's 53 bits rather than in u (u is affine
/// in them), 2^m segments: a word's top m of those bits are its segment and the rest
/// its place in it, so no floating-point division or conversion stands between the
/// word and the table read.
#[derive(Debug)]
struct FastInverse {
    /// The bits below the segment number: 53 − m.
    shift: u32,
    /// 2^−shift: a segment's place bits to [0, 1).
    place_scale: f64,
    /// Per segment, in the uniform's order: the polynomial in the place t,
    /// x = c0 + t·(c1 + t·(c2 + t·c3)).
    segments: Vec<[f64; 4]>,
    delta: f64,
}

/// Room for rounding in the table's and `f_inv`'s x (each a few ulps of x times the
/// exponent p; the fast path is off where that could come near this).
const FAST_ROUNDING_ROOM: f64 = 1e-4;
/// The largest interpolation error the table may have, and its most segments (each a
/// power of two).
const FAST_MAX_INTERP_ERROR: f64 = 1e-6;
const FAST_MIN_SEGMENTS_LOG2: u32 = 8;
const FAST_MAX_SEGMENTS_LOG2: u32 = 16;

impl FastInverse {
    fn new(t: &ZipfTail) -> Option<FastInverse> {
        let b = 1.0 - t.s;
        let p = 1.0 / b;
        let (lo, hi) = (t.u_lo, t.u_hi);
        // Conditioning: the table's x rounds by about |p| ulps (a power p of a rounded
        // base), f_inv's by a few, and f_inv reads u rounded to its ulp where the table
        // interpolates the exact u (dx/du = x^s at most last^s); all must stay far
        // below FAST_ROUNDING_ROOM.
        let u_rounding = t.last.powf(t.s) * (lo.abs() + hi.abs()) * f64::EPSILON;
        if b.abs() < 1e-3
            || p.abs() * t.last * 1e-15 > FAST_ROUNDING_ROOM / 10.0
            || u_rounding.is_nan()
            || u_rounding >= FAST_ROUNDING_ROOM / 10.0
        {
            return None;
        }
        let a = t.scale;
        let c4 = (p * (p - 1.0) * (p - 2.0) * (p - 3.0)).abs() * b.powi(4);
        let base = |u: f64| (a + b * u).max(0.0);
        for m in FAST_MIN_SEGMENTS_LOG2..=FAST_MAX_SEGMENTS_LOG2 {
            let n = 1usize << m;
            // Node i at the uniform i/n: u = hi + (i/n)·(lo − hi), as `sample` maps it.
            let du = (lo - hi) / n as f64;
            let u_at = |i: usize| hi + i as f64 * du;
            let worst = (0..n)
                .map(|i| {
                    c4 * base(u_at(i))
                        .powf(p - 4.0)
                        .max(base(u_at(i + 1)).powf(p - 4.0))
                })
                .fold(0.0f64, f64::max);
            let bound = du.powi(4) / 384.0 * worst;
            if bound.is_finite() && bound <= FAST_MAX_INTERP_ERROR {
                // x and dx/dt (= x^s · du) at each node.
                let nodes: Vec<[f64; 2]> = (0..=n)
                    .map(|i| {
                        let x = base(u_at(i)).powf(p);
                        [x, x.powf(t.s) * du]
                    })
                    .collect();
                let segments = nodes
                    .windows(2)
                    .map(|w| {
                        let ([x0, m0], [x1, m1]) = (w[0], w[1]);
                        [
                            x0,
                            m0,
                            3.0 * (x1 - x0) - 2.0 * m0 - m1,
                            2.0 * (x0 - x1) + m0 + m1,
                        ]
                    })
                    .collect();
                let shift = 53 - m;
                return Some(FastInverse {
                    shift,
                    place_scale: 1.0 / (1u64 << shift) as f64,
                    segments,
                    delta: FAST_ROUNDING_ROOM + bound,
                });
            }
        }
        None
    }

    /// x for the uniform of `word`'s top 53 bits.
    #[inline]
    fn x(&self, word: u64) -> f64 {
        let bits = word >> 11;
        let [c0, c1, c2, c3] = self.segments[(bits >> self.shift) as usize];
        // Below 2^53: exact through i64, a single conversion.
        let t = (bits & ((1u64 << self.shift) - 1)) as i64 as f64 * self.place_scale;
        c0 + t * (c1 + t * (c2 + t * c3))
    }
}

/// How far inside the squeeze's bound a sample must fall to skip the full test: far
/// more than the floating-point error of x or of the test, so the squeeze accepts only
/// samples the full test accepts too, and the samples are those of the full test alone.
const SQUEEZE_MARGIN: f64 = 1e-3;
/// Where F(k) / h(k) passes this, the squeeze is off (see [`ZipfTail::new`]).
const MAX_F_OVER_H: f64 = 1e9;

impl ZipfTail {
    pub fn new(first: u64, last: u64, s: f64) -> ZipfTail {
        let first_f = first as f64;
        let mut t = ZipfTail {
            first: first_f,
            last: last as f64,
            s,
            scale: first_f.powf(1.0 - s),
            u_lo: 0.0,
            u_hi: 0.0,
            squeeze: f64::NEG_INFINITY,
            fast: None,
        };
        t.u_lo = t.f(first_f + 0.5) - t.h(first_f);
        t.u_hi = t.f(last as f64 + 0.5);
        // Rank k is accepted exactly when x ≥ k + ½ − d(k), d(k) being the width of the
        // interval below k + ½ over which h integrates to h(k). For h(x) = x^-s, d grows
        // with k (towards 1: h flattens), so d(first + 1) − ½ bounds k − x for every
        // later rank (`tail_squeeze_width_grows` checks it numerically). Only where the
        // full test is well conditioned: its rounding error (F's, about F · 2^-50) must be
        // far below the margin's share of u (SQUEEZE_MARGIN · h), and F/h is largest at
        // the last rank.
        let lastf = last as f64;
        if last > first && t.f(lastf + 0.5) / t.h(lastf) < MAX_F_OVER_H {
            let k0 = first_f + 1.0;
            t.squeeze = k0 - t.f_inv(t.f(k0 + 0.5) - t.h(k0)) - SQUEEZE_MARGIN;
            t.fast = FastInverse::new(&t);
        }
        t
    }

    /// d(k) − ½ as [`ZipfTail::new`] defines it: the largest k − x that accepts rank k.
    #[cfg(test)]
    fn accept_width(&self, k: f64) -> f64 {
        k - self.f_inv(self.f(k + 0.5) - self.h(k))
    }

    fn h(&self, x: f64) -> f64 {
        x.powf(-self.s)
    }

    /// F(x) = ∫_first^x t^-s dt = first^(1-s) · (e^((1-s)L) − 1) / (1 − s), L = ln(x/first),
    /// in a form that stays accurate as s → 1.
    fn f(&self, x: f64) -> f64 {
        let l = (x / self.first).ln();
        self.scale * l * expm1_over_x((1.0 - self.s) * l)
    }

    /// F⁻¹(y) = first · e^L with L = (y / scale) · ln(1 + t) / t, t = (1 − s) y / scale.
    fn f_inv(&self, y: f64) -> f64 {
        let y = y / self.scale;
        let t = ((1.0 - self.s) * y).max(-1.0);
        self.first * (y * ln1p_over_x(t)).exp()
    }

    /// One rank in `first..=last`.
    pub fn sample(&self, rng: &mut impl RngCore) -> u64 {
        loop {
            let word = rng.next_u64();
            let u = self.u_hi + unit_f64(word) * (self.u_lo - self.u_hi);
            if let Some(fast) = &self.fast {
                // The table's x decides when the rank and the squeeze's verdict stay
                // the same anywhere within `delta` of it. Truncation is the floor for
                // the positive values it accepts (k > first).
                let xa = fast.x(word);
                let k = (xa + 0.5) as i64 as f64;
                let frac = xa + 0.5 - k;
                if frac > fast.delta && frac < 1.0 - fast.delta && k > self.first && k <= self.last
                {
                    let gap = k - xa;
                    if gap <= self.squeeze - fast.delta {
                        return k as u64;
                    }
                    if gap > self.squeeze + fast.delta {
                        if u >= self.f(k + 0.5) - self.h(k) {
                            return k as u64;
                        }
                        continue;
                    }
                }
            }
            let x = self.f_inv(u);
            let k = floor_nonneg(x + 0.5).clamp(self.first, self.last);
            if (k > self.first && k - x <= self.squeeze) || u >= self.f(k + 0.5) - self.h(k) {
                return k as u64;
            }
        }
    }

    /// [`ZipfTail::sample`] without the squeeze: the full test for every sample.
    #[cfg(test)]
    fn sample_full_test(&self, rng: &mut impl RngCore) -> u64 {
        loop {
            let u = self.u_hi + unit_f64(rng.next_u64()) * (self.u_lo - self.u_hi);
            let x = self.f_inv(u);
            let k = (x + 0.5).floor().clamp(self.first, self.last);
            if u >= self.f(k + 0.5) - self.h(k) {
                return k as u64;
            }
        }
    }
}

/// (e^x − 1) / x, 1 at 0.
fn expm1_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x / 2.0 * (1.0 + x / 3.0)
    }
}

/// ln(1 + x) / x, 1 at 0.
fn ln1p_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x / 2.0 * (1.0 - 2.0 * x / 3.0)
    }
}

/// `v.floor()` without the library call (x86-64's baseline has no rounding
/// instruction): for 0 <= v < 2^52 truncation is the floor, exactly.
#[inline]
fn floor_nonneg(v: f64) -> f64 {
    if (0.0..4_503_599_627_370_496.0).contains(&v) {
        (v as u64) as f64
    } else {
        v.floor()
    }
}

/// A uniform double in [0, 1) from the top 53 bits of a word.
fn unit_f64(word: u64) -> f64 {
    // Below 2^53: exact through i64, one conversion instead of the unsigned sequence.
    (word >> 11) as i64 as f64 * (1.0 / 9_007_199_254_740_992.0)
}

/// The generalised harmonic number H(n, s) = Σ_{k=1..n} k^-s: the first 64 terms
/// summed, the rest by Euler–Maclaurin (to the B6 term; the remainder is below 1e-16
/// of the sum for any n), so huge n cost no more than small ones.
pub fn harmonic(n: u64, s: f64) -> f64 {
    const DIRECT: u64 = 64;
    let direct: f64 = (1..=n.min(DIRECT)).rev().map(|k| (k as f64).powf(-s)).sum();
    if n <= DIRECT {
        return direct;
    }
    direct + euler_maclaurin_power_sum(DIRECT + 1, n, s)
}

/// Σ_{k=a..b} k^-s ≈ ∫_a^b x^-s dx + (f(a) + f(b))/2
///   + Σ_{j=1..3} B_2j / (2j)! · (f^(2j-1)(b) − f^(2j-1)(a)), f(x) = x^-s.
fn euler_maclaurin_power_sum(a: u64, b: u64, s: f64) -> f64 {
    let (a, b) = (a as f64, b as f64);
    let l = (b / a).ln();
    let integral = a.powf(1.0 - s) * l * expm1_over_x((1.0 - s) * l);
    // f^(m)(x) = (-s)(-s-1)···(-s-m+1) · x^(-s-m).
    let deriv = |x: f64, m: i32| -> f64 {
        let c: f64 = (0..m).map(|i| -(s + i as f64)).product();
        c * x.powf(-s - m as f64)
    };
    let bernoulli = [(1, 1.0 / 12.0), (3, -1.0 / 720.0), (5, 1.0 / 30_240.0)];
    let corrections: f64 = bernoulli
        .iter()
        .map(|&(m, c)| c * (deriv(b, m) - deriv(a, m)))
        .sum();
    integral + (a.powf(-s) + b.powf(-s)) / 2.0 + corrections
}

fn scatter(r: u64, stride: u64, n: u64) -> u64 {
    scatter_m(r, stride, n, u64::MAX / n)
}

/// [`scatter`] with `m` = ⌊(2^64 − 1) / n⌋ given (see [`rem`]).
#[inline]
fn scatter_m(r: u64, stride: u64, n: u64, m: u64) -> u64 {
    mul_rem(r, stride, n, m)
}

/// (a · b) mod n with `m` = ⌊(2^64 − 1) / n⌋ given (see [`rem`]), without a division
/// while the product fits in 64 bits.
#[inline]
pub(crate) fn mul_rem(r: u64, stride: u64, n: u64, m: u64) -> u64 {
    // The same value in 64 bits when the product fits (always, for sets below 2^32
    // items): a 128-bit remainder is a library call on the tail's path.
    match r.checked_mul(stride) {
        Some(p) => rem(p, n, m),
        None => (r as u128 * stride as u128 % n as u128) as u64,
    }
}

/// `a % n` by Barrett reduction with `m` = ⌊(2^64 − 1) / n⌋: the quotient estimate
/// ⌊a·m / 2^64⌋ is at most two below the true one, so at most two subtractions correct
/// the remainder. A multiply instead of a 64-bit division (tens of cycles) on the
/// zipf tail's path; `m` is kept per set (`Zipf::rem_m`).
#[inline]
fn rem(a: u64, n: u64, m: u64) -> u64 {
    let q = ((a as u128 * m as u128) >> 64) as u64;
    let mut r = a - q * n;
    while r >= n {
        r -= n;
    }
    r
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
            Sampler::Zipf(z) => z.sample(rng),
            Sampler::HotCold {
                n,
                hot_n,
                hot_prob_u32,
                phase_change_ns,
            } => {
                let base = hot_lo(*n, *phase_change_ns, now);
                hotcold_item(rng.next_u64(), *n, *hot_n, *hot_prob_u32, base)
            }
        }
    }
}

/// The first item of a hot/cold sampler's hot set at time `now`: before the phase
/// change the hot set is the first `hot_n` items; after it, it moves to the middle of
/// the range.
#[inline]
pub fn hot_lo(n: u64, phase_change_ns: Option<u64>, now: u64) -> u64 {
    match phase_change_ns {
        Some(t) if now >= t => n / 2,
        _ => 0,
    }
}

/// A hot/cold sampler's item for the random word `w`, its hot set starting at `base`:
/// hot with chance `hot_prob_u32` / 2^32 (the word's low half), then uniform within
/// the class.
#[inline]
pub fn hotcold_item(w: u64, n: u64, hot_n: u64, hot_prob_u32: u32, base: u64) -> u64 {
    let i = if (w as u32) < hot_prob_u32 {
        below(w, hot_n)
    } else {
        hot_n + below(w, n - hot_n)
    };
    (base + i) % n
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::task_rng;

    /// Barrett's remainder is the remainder, at the edges and at random.
    #[test]
    fn rem_is_the_remainder() {
        let mut rng = task_rng(4, "rem");
        let edges = [
            1u64,
            2,
            3,
            7,
            1 << 32,
            (1 << 32) + 1,
            u64::MAX / 3,
            u64::MAX - 1,
            u64::MAX,
        ];
        for &n in &edges {
            for &a in &edges {
                assert_eq!(rem(a, n, u64::MAX / n), a % n, "{a} % {n}");
            }
        }
        for _ in 0..1_000_000 {
            let n = (rng.next_u64() >> (rng.next_u64() % 64)).max(1);
            let a = rng.next_u64() >> (rng.next_u64() % 64);
            assert_eq!(rem(a, n, u64::MAX / n), a % n, "{a} % {n}");
        }
    }

    /// The 64-bit scatter is the 128-bit one, where the product fits and where not.
    #[test]
    fn scatter_is_the_wide_remainder() {
        let mut rng = task_rng(3, "scatter");
        for _ in 0..100_000 {
            let n = rng.next_u64() >> (rng.next_u64() % 64) | 3;
            let (r, stride) = (rng.next_u64() % n, coprime_stride(n));
            let wide = (r as u128 * stride as u128 % n as u128) as u64;
            assert_eq!(scatter(r, stride, n), wide, "r {r} stride {stride} n {n}");
        }
    }

    /// The squeeze's premise: the accepting width d(k) − ½ never shrinks as k grows
    /// checked where h bends most (small first ranks) and for the exponents scenarios use.
    #[test]
    fn tail_squeeze_width_grows() {
        for s in [0.1, 0.5, 0.8, 0.99, 1.0, 1.01, 1.2, 2.0, 3.0] {
            for first in [2u64, 3, 10, 1000, 1 << 20] {
                let t = ZipfTail::new(first, first + 1_000_000, s);
                let mut prev = t.accept_width(first as f64 + 1.0);
                for i in 2..2000u64 {
                    let k = (first + i * i / 4) as f64;
                    if t.f(k + 0.5) / t.h(k) >= MAX_F_OVER_H {
                        break; // too ill-conditioned to evaluate; the squeeze is off
                    }
                    let w = t.accept_width(k);
                    // Within the evaluation's rounding (far below SQUEEZE_MARGIN).
                    assert!(w >= prev - 1e-6, "s {s} first {first} k {k}: {w} < {prev}");
                    prev = w;
                }
            }
        }
    }

    /// With the squeeze the tail gives, draw for draw, the ranks of the full test alone
    /// (and leaves the random stream where the full test leaves it).
    #[test]
    fn tail_squeeze_changes_no_sample() {
        for s in [0.5, 0.8, 0.9, 0.99, 1.0, 1.01, 1.2, 2.0] {
            for (first, last) in [
                (2u64, 100u64),
                (11, 1 << 16),
                ((1 << 20) + 1, 12_582_912),
                ((1 << 20) + 1, 100_000_000),
            ] {
                let t = ZipfTail::new(first, last, s);
                let (mut a, mut b) = (task_rng(7, "squeeze"), task_rng(7, "squeeze"));
                for _ in 0..200_000 {
                    assert_eq!(t.sample(&mut a), t.sample_full_test(&mut b), "s {s}");
                }
                assert_eq!(a.next_u64(), b.next_u64());
            }
        }
        // The case the squeeze is for (a 48 GiB set at 0.8) has it on.
        assert!(ZipfTail::new((1 << 20) + 1, 12_582_912, 0.8).squeeze > 0.0);
    }

    /// The interpolated inverse is on where the hit path needs it, within its bound of
    /// the exact one, and decides nearly every sample (few fall back).
    #[test]
    fn tail_fast_inverse_is_close_and_used() {
        for (first, last, s) in [
            ((1u64 << 20) + 1, 12_582_912u64, 0.8),
            ((1 << 20) + 1, 12_582_912, 0.99),
            ((1 << 20) + 1, 12_582_912, 1.2),
            (11, 1 << 16, 0.5),
        ] {
            let t = ZipfTail::new(first, last, s);
            let fast = t
                .fast
                .as_ref()
                .unwrap_or_else(|| panic!("fast inverse off for s {s}"));
            let mut rng = task_rng(5, "fast");
            let mut worst = 0f64;
            for _ in 0..100_000 {
                let word = rng.next_u64();
                let u = t.u_hi + unit_f64(word) * (t.u_lo - t.u_hi);
                worst = worst.max((fast.x(word) - t.f_inv(u)).abs());
            }
            assert!(
                worst < fast.delta / 10.0,
                "s {s}: off by {worst}, delta {}",
                fast.delta
            );
        }
        // Too ill-conditioned (or s = 1): off.
        assert!(ZipfTail::new(2, 1 << 30, 1.0).fast.is_none());
    }

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
        let hits = (0..n).filter(|_| z.sample(&mut rng) == top).count();
        let p = hits as f64 / n as f64;
        assert!((p - 0.19277).abs() < 0.004, "{p}");
    }

    /// Σ k^-s for k in `lo..=hi`, summed directly, smallest terms first.
    fn direct_sum(lo: u64, hi: u64, s: f64) -> f64 {
        (lo..=hi).rev().map(|k| (k as f64).powf(-s)).sum()
    }

    /// Pearson's chi-square of `counts` against probabilities `p` over `n` samples.
    fn chi_square(counts: &[u64], p: &[f64], n: u64) -> f64 {
        counts
            .iter()
            .zip(p)
            .map(|(&c, &p)| {
                let e = p * n as f64;
                (c as f64 - e).powi(2) / e
            })
            .sum()
    }

    #[test]
    fn harmonic_matches_direct_sums_and_the_asymptotic_series() {
        for (n, s) in [
            (1_000_000, 0.99),
            (3_000_001, 1.0),
            (65, 0.5),
            (2_000_000, 1.5),
        ] {
            let (got, want) = (harmonic(n, s), direct_sum(1, n, s));
            assert!(
                ((got - want) / want).abs() < 1e-12,
                "H({n}, {s}) {got} vs {want}"
            );
        }
        // H(n, 1) = ln n + γ + 1/(2n) − 1/(12n²) + …: for n = 10^12,
        // 27.631021115928547 + 0.5772156649015329 + 5e-13.
        let got = harmonic(1_000_000_000_000, 1.0);
        assert!((got - 28.208_236_780_830_08).abs() < 1e-11, "{got}");
    }

    #[test]
    fn zipf_tail_matches_exact_probabilities() {
        // Ranks 5..=60, s = 1.1: each rank's share is k^-1.1 / Σ.
        let t = ZipfTail::new(5, 60, 1.1);
        let total = direct_sum(5, 60, 1.1);
        let p: Vec<f64> = (5..=60).map(|k| (k as f64).powf(-1.1) / total).collect();
        let mut counts = vec![0u64; 56];
        let mut rng = task_rng(3, "tail");
        let n = 1_000_000;
        for _ in 0..n {
            counts[(t.sample(&mut rng) - 5) as usize] += 1;
        }
        // 55 degrees of freedom: the 0.1% critical value is 93.2.
        let chi = chi_square(&counts, &p, n);
        assert!(chi < 93.2, "chi-square {chi}");
        let p5 = counts[0] as f64 / n as f64;
        assert!(
            (p5 - p[0]).abs() < 4.0 * (p[0] / n as f64).sqrt(),
            "{p5} vs {}",
            p[0]
        );
    }

    /// Samples `z` and counts ranks (0-based) through the inverse of its scatter.
    fn rank_counts(z: &Zipf, n_items: u64, samples: u64, bin: impl Fn(u64) -> usize) -> Vec<u64> {
        let mut rank_of = vec![0u32; n_items as usize];
        for r in 0..n_items {
            rank_of[z.item_of_rank(r) as usize] = r as u32;
        }
        let mut counts = vec![0u64; bin(n_items - 1) + 1];
        let mut rng = task_rng(11, "zipf-wide");
        for _ in 0..samples {
            counts[bin(rank_of[z.sample(&mut rng) as usize] as u64)] += 1;
        }
        counts
    }

    #[test]
    fn zipf_beyond_the_table_matches_exact_distribution() {
        // n = 2^22 > ZIPF_TABLE_RANKS, s = 0.99. Bins of ranks [2^j, 2^(j+1)) (1-based);
        // exact bin masses from direct sums.
        let (n, s) = (1u64 << 22, 0.99);
        let z = Zipf::new(n, s);
        assert!(z.tail.is_some());
        let total = direct_sum(1, n, s);
        let bin = |r0: u64| (64 - (r0 + 1).leading_zeros() - 1) as usize;
        let p: Vec<f64> = (0..=21)
            .map(|j| direct_sum(1 << j, (2u64 << j) - 1, s) / total)
            .collect();
        let samples = 2_000_000;
        let counts = rank_counts(&z, n, samples, bin);
        // 21 degrees of freedom: the 0.1% critical value is 46.8.
        let chi = chi_square(&counts, &p, samples);
        assert!(chi < 46.8, "chi-square {chi}: {counts:?}");
        // Head mass (ranks ≤ 2^20, the table's) and the tail beyond it, within 4σ.
        let head_p = direct_sum(1, ZIPF_TABLE_RANKS, s) / total;
        let head = counts[..=19].iter().sum::<u64>() as f64 / samples as f64;
        let sd = (head_p * (1.0 - head_p) / samples as f64).sqrt();
        assert!((head - head_p).abs() < 4.0 * sd, "head {head} vs {head_p}");
    }

    #[test]
    fn zipf_small_table_steep_skew_matches_exact_ranks() {
        // A 64-rank table over 5000 ranks, s = 1.5: ranks 1..=70 one by one (covering
        // the table's edge), the rest in one bin.
        let (n, s) = (5000u64, 1.5);
        let z = Zipf::with_table_ranks(n, s, 64);
        let total = direct_sum(1, n, s);
        let bin = |r0: u64| r0.min(70) as usize;
        let mut p: Vec<f64> = (1..=70).map(|k| (k as f64).powf(-s) / total).collect();
        p.push(direct_sum(71, n, s) / total);
        let samples = 1_000_000;
        let counts = rank_counts(&z, n, samples, bin);
        // 70 degrees of freedom: the 0.1% critical value is 112.3.
        let chi = chi_square(&counts, &p, samples);
        assert!(chi < 112.3, "chi-square {chi}");
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
