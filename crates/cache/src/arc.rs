//! ARC (Megiddo and Modha, FAST '03) as libCacheSim 0.3.5 runs it, in bytes: T1
//! (seen once) and T2 (seen again) are cached, B1 and B2 their ghosts; the target
//! size p of T1 is a float. A hit in T1 moves to T2's MRU end, in T2 refreshes there.
//! A ghost hit is a miss: B1 raises p by max(|B2|/|B1|, 1) (up to the capacity), B2
//! lowers it by max(|B1|/|B2|, 1); the object then enters T2, else T1. Eviction
//! (`REPLACE`) takes T1's LRU end to B1 when T1 is non-empty and over p (or at p
//! after a B2 hit), or T2 is empty; else T2's to B2. Without a ghost hit in this
//! request, the ghosts are trimmed first: when T1 + B1 would pass the capacity, B1's
//! LRU entry goes (or, with B1 empty, T1's LRU object is evicted outright); when all
//! four lists reach twice the capacity, B2's LRU entry goes. Ghost lists are only
//! trimmed while an eviction is needed, as in libCacheSim.

use super::queue::{Arena, KeyMap, Queue, NIL};
use super::Policy;

const T1: u8 = 0;
const T2: u8 = 1;
const B1: u8 = 2;
const B2: u8 = 3;

pub struct Arc {
    arena: Arena,
    map: KeyMap,
    lists: [Queue; 4],
    capacity: u64,
    p: f64,
    /// This request found its key in B1 or B2 (`ghost_hit`), and its size.
    ghost_hit: Option<(u8, u64)>,
    size: u64,
}

impl Arc {
    pub fn new(capacity: u64) -> Arc {
        Arc {
            arena: Arena::default(),
            map: KeyMap::default(),
            lists: [Queue::default(); 4],
            capacity,
            p: 0.0,
            ghost_hit: None,
            size: 0,
        }
    }

    fn bytes(&self, l: u8) -> u64 {
        self.lists[l as usize].bytes
    }

    /// Moves node `id` to the MRU end of list `to`.
    fn move_to(&mut self, id: u32, to: u8) {
        let from = self.arena.get(id).queue;
        self.lists[from as usize].remove(&mut self.arena, id);
        self.arena.get_mut(id).queue = to;
        self.lists[to as usize].push_head(&mut self.arena, id);
    }

    /// Drops list `l`'s LRU entry entirely (a ghost, or an object evicted outright).
    fn drop_lru(&mut self, l: u8) -> u64 {
        let id = self.lists[l as usize].tail;
        let key = self.arena.get(id).key;
        self.lists[l as usize].remove(&mut self.arena, id);
        self.map.remove(&key);
        self.arena.release(id);
        key
    }

    /// `REPLACE`: T1's or T2's LRU object to its ghost list. Returns its key.
    fn replace(&mut self) -> u64 {
        let t1 = self.bytes(T1);
        let b2_hit = matches!(self.ghost_hit, Some((B2, _)));
        let take_t1 = (t1 > 0 && (t1 as f64 > self.p || (t1 as f64 == self.p && b2_hit)))
            || self.bytes(T2) == 0;
        let (from, to) = if take_t1 { (T1, B1) } else { (T2, B2) };
        let id = self.lists[from as usize].tail;
        let key = self.arena.get(id).key;
        self.move_to(id, to);
        key
    }
}

impl Policy for Arc {
    fn lookup(&mut self, key: u64, size: u64) -> bool {
        self.ghost_hit = None;
        self.size = size;
        let Some(&id) = self.map.get(&key) else {
            return false;
        };
        let q = self.arena.get(id).queue;
        match q {
            T1 => {
                self.move_to(id, T2);
                true
            }
            T2 => {
                self.lists[T2 as usize].move_to_head(&mut self.arena, id);
                true
            }
            _ => {
                let (b1, b2) = (self.bytes(B1) as f64, self.bytes(B2) as f64);
                if q == B1 {
                    let d = (b2 / b1).max(1.0);
                    self.p = (self.p + d).min(self.capacity as f64);
                } else {
                    let d = (b1 / b2).max(1.0);
                    self.p = (self.p - d).max(0.0);
                }
                self.lists[q as usize].remove(&mut self.arena, id);
                self.map.remove(&key);
                self.arena.release(id);
                self.ghost_hit = Some((q, key));
                false
            }
        }
    }

    fn insert(&mut self, key: u64, size: u64) {
        let to = match self.ghost_hit.take() {
            Some((_, k)) if k == key => T2,
            _ => T1,
        };
        let id = self.arena.alloc(key, size);
        self.arena.get_mut(id).queue = to;
        self.lists[to as usize].push_head(&mut self.arena, id);
        self.map.insert(key, id);
    }

    fn evict(&mut self) -> Option<u64> {
        if self.lists[T1 as usize].tail == NIL && self.lists[T2 as usize].tail == NIL {
            return None;
        }
        if self.ghost_hit.is_some() {
            return Some(self.replace());
        }
        let c = self.capacity;
        let (t1, t2, b1, b2) = (
            self.bytes(T1),
            self.bytes(T2),
            self.bytes(B1),
            self.bytes(B2),
        );
        if t1 + b1 + self.size > c {
            if b1 > 0 {
                self.drop_lru(B1);
                Some(self.replace())
            } else {
                Some(self.drop_lru(T1))
            }
        } else {
            if t1 + b1 + t2 + b2 >= 2 * c && b2 > 0 {
                self.drop_lru(B2);
            }
            Some(self.replace())
        }
    }

    fn prefetch(&self, key: u64) {
        self.map.prefetch(key);
    }

    fn occupied(&self) -> u64 {
        self.bytes(T1) + self.bytes(T2)
    }

    fn remove(&mut self, key: u64) {
        if let Some(&id) = self.map.get(&key) {
            let q = self.arena.get(id).queue;
            if q == T1 || q == T2 {
                self.lists[q as usize].remove(&mut self.arena, id);
                self.map.remove(&key);
                self.arena.release(id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::pattern;

    #[test]
    fn arc_by_hand() {
        // 3 slots, p = 0. 1 2 3 → T1 = 3 2 1. 1 hits → T2 = 1, T1 = 3 2. 4: T1 + B1 + 1
        // = 3 ≤ 3, so REPLACE: T1 (2 bytes) > p → T1's LRU 2 to B1 → T1 = 4 3. 1 hits
        // (T2). 5: T1 + B1 + 1 = 4 > 3 and B1 holds 2: 2 dropped, then REPLACE takes 3
        // to B1 → T1 = 5 4. 1 hits. 6: B1 (3) dropped, 4 to B1 → T1 = 6 5. 1 hits.
        // 2: a miss (2 left B1); 5 to B1 after dropping 4. 3: a miss; 6 to B1.
        let f = super::super::policy("arc").unwrap();
        assert_eq!(
            pattern(f, 3, &[1, 2, 3, 1, 4, 1, 5, 1, 6, 1, 2, 3]),
            "mmmhmhmhmhmm"
        );
    }
}
