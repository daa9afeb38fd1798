//! SIEVE (Zhang et al., NSDI '24): a FIFO queue with a visited bit and a hand. New
//! objects enter at the head, unvisited; a hit sets the bit; eviction moves the hand
//! from where it stopped (at first the tail) toward the head, clearing bits, and
//! evicts the first object without one; the hand stays at that object's newer
//! neighbour (wrapping to the tail past the head). Objects never move.

use super::queue::{Resident, NIL};
use super::Policy;

pub struct Sieve {
    r: Resident,
    hand: u32,
}

impl Sieve {
    pub fn new(_capacity: u64) -> Sieve {
        Sieve {
            r: Resident::default(),
            hand: NIL,
        }
    }
}

impl Policy for Sieve {
    fn lookup(&mut self, key: u64, _size: u64) -> bool {
        let Some(id) = self.r.find(key) else {
            return false;
        };
        self.r.arena.get_mut(id).freq = 1;
        true
    }

    fn insert(&mut self, key: u64, size: u64) {
        self.r.insert_head(key, size);
    }

    fn evict(&mut self) -> Option<u64> {
        let tail = self.r.q.tail;
        if tail == NIL {
            return None;
        }
        let mut id = if self.hand == NIL { tail } else { self.hand };
        loop {
            let n = self.r.arena.get_mut(id);
            if n.freq == 0 {
                break;
            }
            n.freq = 0;
            id = if n.prev == NIL { tail } else { n.prev };
        }
        self.hand = self.r.arena.get(id).prev;
        Some(self.r.drop_node(id))
    }

    fn prefetch(&self, key: u64) {
        self.r.map.prefetch(key);
    }

    fn occupied(&self) -> u64 {
        self.r.q.bytes
    }

    fn remove(&mut self, key: u64) {
        // The hand moves on to the newer neighbour, as after an eviction.
        if let Some(id) = self.r.find(key) {
            if self.hand == id {
                self.hand = self.r.arena.get(id).prev;
            }
            self.r.drop_node(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::pattern;

    #[test]
    fn sieve_by_hand() {
        // 3 slots (head→tail). 1 2 3 miss: 3 2 1. 1 hits (v). 4: hand at the tail 1,
        // visited: cleared, hand to 2, unvisited: evicted; hand at 3. → 4 3 1. 1 hits
        // (v). 5: hand 3 unvisited: evicted, hand at 4 → 5 4 1. 1 hits. 6: hand 4
        // unvisited: evicted, hand at 5 → 6 5 1. 1 hits. 2: hand 5 evicted, hand at 6
        // → 2 6 1. 3: hand 6 evicted, hand at 2 → 3 2 1: 1 stays throughout.
        let f = super::super::policy("sieve").unwrap();
        assert_eq!(
            pattern(f, 3, &[1, 2, 3, 1, 4, 1, 5, 1, 6, 1, 2, 3]),
            "mmmhmhmhmhmm"
        );
        // The hand wraps: 2 slots, 1 and 2 both visited. 3: the hand clears 1, then 2,
        // wraps to the tail and evicts 1; it stays at 2 → 3 2. 1: 2 (cleared) goes,
        // hand at 3 → 1 3. 2: 3 goes → 2 1.
        assert_eq!(pattern(f, 2, &[1, 2, 1, 2, 3, 1, 2]), "mmhhmmm");
    }
}
