//! CLOCK (second chance) with an n-bit reference counter, as libCacheSim's `Clock`:
//! a new object enters at the head with its counter at 0; a hit raises it (up to
//! 2^n − 1); eviction looks at the tail: a non-zero counter is decremented and the
//! object goes round to the head, a zero counter is evicted. One bit by default.

use super::queue::{Resident, NIL};
use super::Policy;

pub struct Clock {
    r: Resident,
    max_freq: u32,
}

impl Clock {
    pub fn new(_capacity: u64) -> Clock {
        Clock::with_bits(1)
    }

    pub fn with_bits(bits: u32) -> Clock {
        Clock {
            r: Resident::default(),
            max_freq: (1 << bits) - 1,
        }
    }
}

impl Policy for Clock {
    fn lookup(&mut self, key: u64, _size: u64) -> bool {
        let Some(id) = self.r.find(key) else {
            return false;
        };
        let n = self.r.arena.get_mut(id);
        n.freq = (n.freq + 1).min(self.max_freq);
        true
    }

    fn insert(&mut self, key: u64, size: u64) {
        self.r.insert_head(key, size);
    }

    fn evict(&mut self) -> Option<u64> {
        loop {
            let id = self.r.q.tail;
            if id == NIL {
                return None;
            }
            let n = self.r.arena.get_mut(id);
            if n.freq == 0 {
                return Some(self.r.drop_node(id));
            }
            n.freq -= 1;
            self.r.q.move_to_head(&mut self.r.arena, id);
        }
    }

    fn prefetch(&self, key: u64) {
        self.r.map.prefetch(key);
    }

    fn occupied(&self) -> u64 {
        self.r.q.bytes
    }

    fn remove(&mut self, key: u64) {
        self.r.remove_key(key);
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::pattern;

    #[test]
    fn clock_by_hand() {
        // 3 slots, 1-bit. 1 2 3 miss (queue head→tail: 3 2 1, bits 0). 1 hits (bit 1).
        // 4: tail 1 has its bit: cleared, 1 to the head (1 3 2); tail 2 has none:
        // evicted → 4 1 3. 1 hits (bit 1). 5: tail 3 evicted → 5 4 1. 1 hits. 6: tail 1
        // (bit 1) goes round cleared (1 5 4), 4 evicted → 6 1 5. 1 hits (bit 1). 2:
        // tail 5 evicted → 2 6 1. 3: tail 1 goes round (1 2 6), 6 evicted → 3 1 2.
        let f = super::super::policy("clock").unwrap();
        assert_eq!(
            pattern(f, 3, &[1, 2, 3, 1, 4, 1, 5, 1, 6, 1, 2, 3]),
            "mmmhmhmhmhmm"
        );
    }
}
