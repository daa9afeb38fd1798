//! When each simulated CPU is next free, with the earliest-free CPU found in O(1) and
//! kept in O(log CPUs) per change: a wake-up costs the same on a 1024-CPU machine as
//! on a 4-CPU one (a scan of every CPU per wake-up did not).

/// A tournament tree over the CPUs' free times: each inner node holds the smaller of
/// its children as (free time, CPU), so the root is the earliest-free CPU, the lowest
/// index among those free at the same time (the order the engine has always used).
#[derive(Debug, Clone)]
pub struct CpuFreeAt {
    /// Leaves at `leaves..leaves + nr_cpus` (padding leaves never win: u64::MAX);
    /// node i's children are 2i and 2i + 1; the root is node 1.
    tree: Vec<(u64, u32)>,
    leaves: usize,
}

impl CpuFreeAt {
    /// `nr_cpus` CPUs, all free at time 0.
    pub fn new(nr_cpus: usize) -> CpuFreeAt {
        let leaves = nr_cpus.max(1).next_power_of_two();
        let mut tree = vec![(u64::MAX, u32::MAX); 2 * leaves];
        for cpu in 0..nr_cpus {
            tree[leaves + cpu] = (0, cpu as u32);
        }
        for i in (1..leaves).rev() {
            tree[i] = tree[2 * i].min(tree[2 * i + 1]);
        }
        CpuFreeAt { tree, leaves }
    }

    /// When `cpu` is next free.
    pub fn get(&self, cpu: usize) -> u64 {
        self.tree[self.leaves + cpu].0
    }

    pub fn set(&mut self, cpu: usize, free_at: u64) {
        let mut i = self.leaves + cpu;
        self.tree[i].0 = free_at;
        while i > 1 {
            i /= 2;
            self.tree[i] = self.tree[2 * i].min(self.tree[2 * i + 1]);
        }
    }

    /// The earliest-free CPU and when it is free (the lowest index on ties).
    pub fn earliest(&self) -> (usize, u64) {
        let (t, cpu) = self.tree[1];
        (cpu as usize, t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// The tree answers as a scan of every CPU does (earliest time, lowest index on
    /// ties), through random updates, for CPU counts that are and are not powers of two.
    #[test]
    fn earliest_is_the_scans_answer() {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(9);
        for n in [1usize, 2, 3, 4, 7, 16, 100, 1024] {
            let mut tree = CpuFreeAt::new(n);
            let mut plain = vec![0u64; n];
            for _ in 0..5_000 {
                let cpu = rng.gen_range(0..n);
                // Few distinct times, so ties are common.
                let t = rng.gen_range(0..8u64) * 1000;
                tree.set(cpu, t);
                plain[cpu] = t;
                let want = plain
                    .iter()
                    .copied()
                    .enumerate()
                    .min_by_key(|&(i, f)| (f, i))
                    .unwrap();
                assert_eq!(tree.earliest(), want, "{n} CPUs");
                assert_eq!(tree.get(cpu), t);
            }
        }
    }
}
