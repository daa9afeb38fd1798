//! LRU, strict: every hit moves the object to the head; the tail is evicted.

use super::queue::{Resident, NIL};
use super::Policy;

#[derive(Default)]
pub struct Lru {
    r: Resident,
}

impl Lru {
    pub fn new(_capacity: u64) -> Lru {
        Lru::default()
    }
}

impl Policy for Lru {
    fn lookup(&mut self, key: u64, _size: u64) -> bool {
        let Some(id) = self.r.find(key) else {
            return false;
        };
        self.r.q.move_to_head(&mut self.r.arena, id);
        true
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
    fn lru_by_hand() {
        // 3 slots. 1 2 3 miss; 4 evicts 1 (least recent); 1 evicts 2; 2 evicts 3;
        // 5 evicts 4; 1 and 2 hit; 3 evicts 5 (order 5 1 2 → 5 oldest); 4 evicts 1;
        // 5 evicts 2.
        let f = super::super::policy("lru").unwrap();
        assert_eq!(
            pattern(f, 3, &[1, 2, 3, 4, 1, 2, 5, 1, 2, 3, 4, 5]),
            "mmmmmmmhhmmm"
        );
        // A hit refreshes: 1 2 3 1 4 evicts 2 (1 was touched), so 1 hits again.
        assert_eq!(pattern(f, 3, &[1, 2, 3, 1, 4, 1, 2]), "mmmhmhm");
    }
}
