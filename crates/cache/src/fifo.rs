//! FIFO: objects leave in the order they came; a hit changes nothing.

use super::queue::{Resident, NIL};
use super::Policy;

#[derive(Default)]
pub struct Fifo {
    r: Resident,
}

impl Fifo {
    pub fn new(_capacity: u64) -> Fifo {
        Fifo::default()
    }
}

impl Policy for Fifo {
    fn lookup(&mut self, key: u64, _size: u64) -> bool {
        self.r.find(key).is_some()
    }

    fn insert(&mut self, key: u64, size: u64) {
        self.r.insert_head(key, size);
    }

    fn evict(&mut self) -> Option<u64> {
        let id = self.r.q.tail;
        (id != NIL).then(|| self.r.drop_node(id))
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
    fn fifo_by_hand() {
        // 3 slots: 1 2 3 4 (evicts 1) 1 (evicts 2) 2 (evicts 3) 5 (evicts 4) 1 2 hit
        // 3 (evicts 1) 4 (evicts 2) 5 hits (5 came after 1 and 2).
        let f = super::super::policy("fifo").unwrap();
        assert_eq!(
            pattern(f, 3, &[1, 2, 3, 4, 1, 2, 5, 1, 2, 3, 4, 5]),
            "mmmmmmmhhmmh"
        );
        // A hit does not save 1: 1 2 3 1 4 evicts 1 all the same.
        assert_eq!(pattern(f, 3, &[1, 2, 3, 1, 4, 1]), "mmmhmm");
    }
}
