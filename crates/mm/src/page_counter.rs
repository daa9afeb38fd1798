//! Hierarchical page counters and effective protection (mm/page_counter.c, current;
//! kernel-reference §3.1, §3.5).
//!
//! One [`PageCounter`] per memcg, in a tree stored as a vector with parent indices
//! (index 0 is the root). Charging walks up the tree; every usage change propagates
//! the "protected usage" (`min(usage, min)`, `min(usage, low)`) into the parent's
//! `children_*_usage`, which is what effective protection divides among siblings.

/// `PAGE_COUNTER_MAX`: "max" as a value.
pub const PAGE_COUNTER_MAX: u64 = u64::MAX / 2;

#[derive(Debug, Clone)]
pub struct PageCounter {
    pub parent: Option<usize>,
    pub usage: u64,
    pub min: u64,
    pub low: u64,
    pub high: u64,
    pub max: u64,
    /// Effective protection, as last computed by `calculate_protection`.
    pub emin: u64,
    pub elow: u64,
    /// This counter's protected usage as last propagated to the parent.
    pub min_usage: u64,
    pub low_usage: u64,
    /// Σ over children of their protected usage.
    pub children_min_usage: u64,
    pub children_low_usage: u64,
    /// Peak usage since the counter was created (what memory.peak shows through a
    /// file that never wrote to it); no write resets it on cgroup v2.
    pub watermark: u64,
    /// Peak usage since the last write to memory.peak through any open file
    /// (`local_watermark`, v6.12+): a write sets it to the usage of the moment.
    pub local_watermark: u64,
    pub failcnt: u64,
}

impl PageCounter {
    pub fn new(parent: Option<usize>) -> PageCounter {
        PageCounter {
            parent,
            usage: 0,
            min: 0,
            low: 0,
            high: PAGE_COUNTER_MAX,
            max: PAGE_COUNTER_MAX,
            emin: 0,
            elow: 0,
            min_usage: 0,
            low_usage: 0,
            children_min_usage: 0,
            children_low_usage: 0,
            watermark: 0,
            local_watermark: 0,
            failcnt: 0,
        }
    }
}

/// The counters of a memcg tree.
#[derive(Debug, Clone)]
pub struct Counters {
    pub c: Vec<PageCounter>,
}

impl Counters {
    /// A tree with just the root.
    pub fn new() -> Counters {
        Counters {
            c: vec![PageCounter::new(None)],
        }
    }

    pub fn add(&mut self, parent: usize) -> usize {
        self.c.push(PageCounter::new(Some(parent)));
        self.c.len() - 1
    }

    /// `propagate_protected_usage`: push this counter's protected usage to its parent.
    fn propagate_protected_usage(&mut self, i: usize, usage: u64) {
        let Some(p) = self.c[i].parent else {
            return;
        };
        let c = &mut self.c[i];
        let protected_min = usage.min(c.min);
        let protected_low = usage.min(c.low);
        let (dmin, dlow) = (
            protected_min as i64 - c.min_usage as i64,
            protected_low as i64 - c.low_usage as i64,
        );
        c.min_usage = protected_min;
        c.low_usage = protected_low;
        let parent = &mut self.c[p];
        parent.children_min_usage = (parent.children_min_usage as i64 + dmin) as u64;
        parent.children_low_usage = (parent.children_low_usage as i64 + dlow) as u64;
    }

    /// The peaks a charge raises, as `page_counter_charge` does: the all-time
    /// `watermark` can only be behind when `local_watermark` is, since a reset lowers
    /// only the local one, so the global one is compared only then.
    fn raise_watermarks(&mut self, c: usize, usage: u64) {
        let pc = &mut self.c[c];
        if usage > pc.local_watermark {
            pc.local_watermark = usage;
            if usage > pc.watermark {
                pc.watermark = usage;
            }
        }
    }

    /// `page_counter_charge`: unconditional, up the tree.
    pub fn charge(&mut self, i: usize, n: u64) {
        let mut cur = Some(i);
        while let Some(c) = cur {
            let usage = self.c[c].usage + n;
            self.c[c].usage = usage;
            self.propagate_protected_usage(c, usage);
            self.raise_watermarks(c, usage);
            cur = self.c[c].parent;
        }
    }

    /// `page_counter_try_charge`: fails at the first level whose `max` it would
    /// exceed (counting a failure there), undoing what it charged below.
    pub fn try_charge(&mut self, i: usize, n: u64) -> Result<(), usize> {
        let mut cur = Some(i);
        while let Some(c) = cur {
            let new = self.c[c].usage + n;
            if new > self.c[c].max {
                self.c[c].failcnt += 1;
                // Undo the levels below the failing one.
                let mut u = Some(i);
                while let Some(x) = u {
                    if x == c {
                        break;
                    }
                    self.uncharge_one(x, n);
                    u = self.c[x].parent;
                }
                return Err(c);
            }
            self.c[c].usage = new;
            self.propagate_protected_usage(c, new);
            self.raise_watermarks(c, new);
            cur = self.c[c].parent;
        }
        Ok(())
    }

    fn uncharge_one(&mut self, c: usize, n: u64) {
        let usage = self.c[c].usage.saturating_sub(n);
        self.c[c].usage = usage;
        self.propagate_protected_usage(c, usage);
    }

    /// `page_counter_uncharge`, up the tree.
    pub fn uncharge(&mut self, i: usize, n: u64) {
        let mut cur = Some(i);
        while let Some(c) = cur {
            self.uncharge_one(c, n);
            cur = self.c[c].parent;
        }
    }

    /// `page_counter_set_min` / `_set_low`: a new setting re-propagates the protected
    /// usage.
    pub fn set_protection(&mut self, i: usize, min: u64, low: u64) {
        self.c[i].min = min;
        self.c[i].low = low;
        let usage = self.c[i].usage;
        self.propagate_protected_usage(i, usage);
    }

    /// `page_counter_calculate_protection(root, counter, recursive)`: the effective
    /// protection of `i` for reclaim targeting `root`. Relies on the parent having been
    /// computed earlier in the same pre-order walk, as the kernel does.
    pub fn calculate_protection(&mut self, root: usize, i: usize, recursive: bool) {
        if i == root {
            return;
        }
        let usage = self.c[i].usage;
        if usage == 0 {
            return; // the kernel leaves stale values
        }
        let p = self.c[i].parent.expect("non-root has a parent");
        if p == root {
            // First level below the reclaim root: the declared values, uncapped.
            self.c[i].emin = self.c[i].min;
            self.c[i].elow = self.c[i].low;
            return;
        }
        let parent = &self.c[p];
        let (pu, pemin, pelow, cmin, clow) = (
            parent.usage,
            parent.emin,
            parent.elow,
            parent.children_min_usage,
            parent.children_low_usage,
        );
        let (min, low) = (self.c[i].min, self.c[i].low);
        self.c[i].emin = effective_protection(usage, pu, min, pemin, cmin, recursive);
        self.c[i].elow = effective_protection(usage, pu, low, pelow, clow, recursive);
    }
}

impl Default for Counters {
    fn default() -> Self {
        Counters::new()
    }
}

/// `effective_protection`: a child's share of its parent's effective protection.
/// Overcommitted siblings split it in proportion to their protected usage; otherwise
/// each keeps its own claim, and with `memory_recursiveprot` the unclaimed rest is
/// spread by unprotected usage.
pub fn effective_protection(
    usage: u64,
    parent_usage: u64,
    setting: u64,
    parent_effective: u64,
    siblings_protected: u64,
    recursive: bool,
) -> u64 {
    let protected = usage.min(setting);
    if siblings_protected > parent_effective {
        return (protected as u128 * parent_effective as u128 / siblings_protected as u128) as u64;
    }
    let mut ep = protected;
    if recursive
        && parent_effective > siblings_protected
        && parent_usage > siblings_protected
        && usage > protected
    {
        let unclaimed =
            (parent_effective - siblings_protected) as u128 * (usage - protected) as u128;
        ep += (unclaimed / (parent_usage - siblings_protected) as u128) as u64;
    }
    ep
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: u64 = 262_144; // pages per GiB

    /// Builds root → parent → children with (low, usage) each; returns the counters
    /// and the children's indices after a protection walk for global reclaim.
    fn two_levels(
        parent: (u64, u64),
        children: &[(u64, u64)],
        recursive: bool,
    ) -> (Counters, Vec<usize>) {
        let mut t = Counters::new();
        let p = t.add(0);
        t.set_protection(p, 0, parent.0);
        let kids: Vec<usize> = children
            .iter()
            .map(|&(low, usage)| {
                let k = t.add(p);
                t.set_protection(k, 0, low);
                t.charge(k, usage);
                k
            })
            .collect();
        // Any parent usage beyond its children's is its own.
        let own = parent.1 - children.iter().map(|c| c.1).sum::<u64>();
        t.charge(p, own);
        t.calculate_protection(0, p, recursive);
        for &k in &kids {
            t.calculate_protection(0, k, recursive);
        }
        (t, kids)
    }

    #[test]
    fn first_level_gets_its_declared_values() {
        // root → A (low 10G, usage 15G), B (low 5G, usage 2G): at the first level below
        // the reclaim root the declared values stand, even B's unused claim.
        let mut t = Counters::new();
        let a = t.add(0);
        let b = t.add(0);
        t.set_protection(a, G, 10 * G);
        t.set_protection(b, 0, 5 * G);
        t.charge(a, 15 * G);
        t.charge(b, 2 * G);
        t.calculate_protection(0, a, false);
        t.calculate_protection(0, b, false);
        assert_eq!((t.c[a].emin, t.c[a].elow), (G, 10 * G));
        assert_eq!(t.c[b].elow, 5 * G);
        // The root's children_low_usage: min(15,10) + min(2,5) = 12G.
        assert_eq!(t.c[0].children_low_usage, 12 * G);
        assert_eq!(t.c[0].usage, 17 * G);
    }

    #[test]
    fn overcommitted_siblings_share_in_proportion() {
        // P (low 10G, usage 20G) → C1 (low 8G, usage 8G), C2 (low 8G, usage 4G),
        // C3 (low 0, usage 8G). Claimed: 8 + 4 + 0 = 12G > 10G, so each gets
        // protected × 10/12: C1 = 8·10/12 = 6.667G, C2 = 4·10/12 = 3.333G, C3 = 0.
        let (t, k) = two_levels(
            (10 * G, 20 * G),
            &[(8 * G, 8 * G), (8 * G, 4 * G), (0, 8 * G)],
            false,
        );
        assert_eq!(t.c[k[0]].elow, 8 * G * 10 / 12);
        assert_eq!(t.c[k[1]].elow, 4 * G * 10 / 12);
        assert_eq!(t.c[k[2]].elow, 0);
    }

    #[test]
    fn undercommitted_siblings_keep_their_claims() {
        // P (low 20G, usage 20G) → C1 (low 4G, usage 8G), C2 (low 0, usage 12G).
        // Claimed 4G < 20G: C1 keeps 4G, C2 nothing.
        let (t, k) = two_levels((20 * G, 20 * G), &[(4 * G, 8 * G), (0, 12 * G)], false);
        assert_eq!((t.c[k[0]].elow, t.c[k[1]].elow), (4 * G, 0));
        // memory_recursiveprot: the unclaimed 20 − 4 = 16G goes by unprotected usage
        // over the parent's unprotected usage (20 − 4 = 16G):
        // C1 = 4 + 16·(8−4)/16 = 8G; C2 = 0 + 16·12/16 = 12G.
        let (t, k) = two_levels((20 * G, 20 * G), &[(4 * G, 8 * G), (0, 12 * G)], true);
        assert_eq!((t.c[k[0]].elow, t.c[k[1]].elow), (8 * G, 12 * G));
    }

    #[test]
    fn nested_levels_are_capped_by_the_parent() {
        // root → A (low 10G) → B (low 10G) → C (low 10G, usage 5G), D (low 10G, usage
        // 5G); A's and B's usage are their children's (10G). A: 10G (first level).
        // B: claims min(10,10) = 10G ≤ A's 10G → 10G. C, D: 5 + 5 = 10G ≤ 10G → 5G each.
        // Lower A's low to 6G: B gets min(10,10)·6/10 = 6G, and C, D 5·6/10 = 3G each.
        for (a_low, want_b, want_c) in [(10 * G, 10 * G, 5 * G), (6 * G, 6 * G, 3 * G)] {
            let mut t = Counters::new();
            let a = t.add(0);
            let b = t.add(a);
            let c = t.add(b);
            let d = t.add(b);
            t.set_protection(a, 0, a_low);
            t.set_protection(b, 0, 10 * G);
            t.set_protection(c, 0, 10 * G);
            t.set_protection(d, 0, 10 * G);
            t.charge(c, 5 * G);
            t.charge(d, 5 * G);
            for i in [a, b, c, d] {
                t.calculate_protection(0, i, false);
            }
            assert_eq!(t.c[b].elow, want_b);
            assert_eq!((t.c[c].elow, t.c[d].elow), (want_c, want_c));
        }
    }

    #[test]
    fn reclaim_below_the_root_ignores_the_target_and_restarts_levels() {
        // Limit reclaim of A: A itself is unprotected (its e-values are not touched) and
        // its children are the first level: declared values.
        let mut t = Counters::new();
        let a = t.add(0);
        let c = t.add(a);
        t.set_protection(a, 0, G);
        t.set_protection(c, 0, 3 * G);
        t.charge(c, 2 * G);
        t.calculate_protection(a, a, false);
        t.calculate_protection(a, c, false);
        assert_eq!(t.c[a].elow, 0);
        assert_eq!(t.c[c].elow, 3 * G);
    }

    #[test]
    fn try_charge_stops_at_max_and_undoes() {
        // root → A (max 100) → B. B has 90; charging 20 fails at A, counts a failure
        // there and leaves every usage as it was.
        let mut t = Counters::new();
        let a = t.add(0);
        let b = t.add(a);
        t.c[a].max = 100;
        t.charge(b, 90);
        assert_eq!(t.try_charge(b, 20), Err(a));
        assert_eq!((t.c[b].usage, t.c[a].usage, t.c[0].usage), (90, 90, 90));
        assert_eq!(t.c[a].failcnt, 1);
        assert_eq!(t.try_charge(b, 10), Ok(()));
        assert_eq!(
            (t.c[b].usage, t.c[a].usage, t.c[0].usage, t.c[a].watermark),
            (100, 100, 100, 100)
        );
        t.uncharge(b, 60);
        assert_eq!((t.c[b].usage, t.c[0].usage), (40, 40));
    }
}
