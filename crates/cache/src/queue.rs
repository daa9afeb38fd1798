//! The data structures every policy shares: an arena of nodes linked into queues
//! (doubly linked, head = most recently inserted), and a map from key to node.

pub const NIL: u32 = u32::MAX;

/// One cached object.
#[derive(Debug, Clone, Copy)]
pub struct Node {
    pub key: u64,
    pub size: u64,
    pub prev: u32,
    pub next: u32,
    /// Per-policy state: a reference count, a visited bit, a frequency.
    pub freq: u32,
    /// Which of a policy's queues holds it.
    pub queue: u8,
}

/// Nodes, reused through a free list.
#[derive(Debug, Default)]
pub struct Arena {
    pub nodes: Vec<Node>,
    free: Vec<u32>,
}

impl Arena {
    pub fn alloc(&mut self, key: u64, size: u64) -> u32 {
        let n = Node {
            key,
            size,
            prev: NIL,
            next: NIL,
            freq: 0,
            queue: 0,
        };
        match self.free.pop() {
            Some(id) => {
                self.nodes[id as usize] = n;
                id
            }
            None => {
                self.nodes.push(n);
                (self.nodes.len() - 1) as u32
            }
        }
    }

    pub fn release(&mut self, id: u32) {
        self.free.push(id);
    }

    #[inline]
    pub fn get(&self, id: u32) -> &Node {
        &self.nodes[id as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, id: u32) -> &mut Node {
        &mut self.nodes[id as usize]
    }
}

/// A queue of arena nodes: `head` is the newest end, `tail` the oldest.
#[derive(Debug, Clone, Copy)]
pub struct Queue {
    pub head: u32,
    pub tail: u32,
    pub len: u64,
    pub bytes: u64,
}

impl Default for Queue {
    fn default() -> Self {
        Queue {
            head: NIL,
            tail: NIL,
            len: 0,
            bytes: 0,
        }
    }
}

impl Queue {
    pub fn push_head(&mut self, a: &mut Arena, id: u32) {
        let old = self.head;
        {
            let n = a.get_mut(id);
            n.prev = NIL;
            n.next = old;
        }
        if old != NIL {
            a.get_mut(old).prev = id;
        } else {
            self.tail = id;
        }
        self.head = id;
        self.len += 1;
        self.bytes += a.get(id).size;
    }

    pub fn remove(&mut self, a: &mut Arena, id: u32) {
        let (prev, next, size) = {
            let n = a.get(id);
            (n.prev, n.next, n.size)
        };
        if prev != NIL {
            a.get_mut(prev).next = next;
        } else {
            self.head = next;
        }
        if next != NIL {
            a.get_mut(next).prev = prev;
        } else {
            self.tail = prev;
        }
        self.len -= 1;
        self.bytes -= size;
    }

    /// Moves `id` (in this queue) to the head.
    pub fn move_to_head(&mut self, a: &mut Arena, id: u32) {
        if self.head != id {
            self.remove(a, id);
            self.push_head(a, id);
        }
    }

    pub fn pop_tail(&mut self, a: &mut Arena) -> Option<u32> {
        let id = self.tail;
        if id == NIL {
            return None;
        }
        self.remove(a, id);
        Some(id)
    }
}

/// What a one-queue policy (LRU, FIFO, CLOCK, SIEVE) holds: its nodes, the key map
/// and the queue.
#[derive(Debug, Default)]
pub struct Resident {
    pub arena: Arena,
    pub map: KeyMap,
    pub q: Queue,
}

impl Resident {
    pub fn find(&self, key: u64) -> Option<u32> {
        self.map.get(&key).copied()
    }

    /// A new object at the head.
    pub fn insert_head(&mut self, key: u64, size: u64) -> u32 {
        let id = self.arena.alloc(key, size);
        self.q.push_head(&mut self.arena, id);
        self.map.insert(key, id);
        id
    }

    /// Drops `key`'s node if there is one; its id was that.
    pub fn remove_key(&mut self, key: u64) -> Option<u32> {
        let id = self.find(key)?;
        self.drop_node(id);
        Some(id)
    }

    /// Drops node `id` from the queue, the map and the arena; its key.
    pub fn drop_node(&mut self, id: u32) -> u64 {
        let key = self.arena.get(id).key;
        self.q.remove(&mut self.arena, id);
        self.map.remove(&key);
        self.arena.release(id);
        key
    }
}

/// Key → node: open addressing with linear probing, at most half full, removal by
/// backward shift (no tombstones). Hand-written rather than a `HashMap` because the
/// simulator prefetches a request's slot a few requests ahead ([`KeyMap::prefetch`]):
/// the cache question is memory-bound, one or two misses per request.
#[derive(Debug, Clone)]
pub struct KeyMap {
    slots: Vec<(u64, u32)>,
    shift: u32,
    len: usize,
}

impl Default for KeyMap {
    fn default() -> Self {
        KeyMap::with_capacity_log2(4)
    }
}

impl KeyMap {
    fn with_capacity_log2(bits: u32) -> KeyMap {
        KeyMap {
            slots: vec![(0, NIL); 1 << bits],
            shift: 64 - bits,
            len: 0,
        }
    }

    /// Fibonacci hashing: the product's top bits.
    #[inline]
    fn home(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> self.shift) as usize
    }

    #[inline]
    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Starts loading `key`'s home slot.
    #[inline]
    pub fn prefetch(&self, key: u64) {
        prefetch(&self.slots[self.home(key)]);
    }

    #[inline]
    pub fn get(&self, key: &u64) -> Option<&u32> {
        let mut i = self.home(*key);
        loop {
            let s = &self.slots[i];
            if s.1 == NIL {
                return None;
            }
            if s.0 == *key {
                return Some(&s.1);
            }
            i = (i + 1) & self.mask();
        }
    }

    pub fn contains_key(&self, key: &u64) -> bool {
        self.get(key).is_some()
    }

    /// Inserts or replaces; returns the old value.
    pub fn insert(&mut self, key: u64, val: u32) -> Option<u32> {
        debug_assert_ne!(val, NIL);
        if (self.len + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let mut i = self.home(key);
        loop {
            let s = &mut self.slots[i];
            if s.1 == NIL {
                *s = (key, val);
                self.len += 1;
                return None;
            }
            if s.0 == key {
                return Some(std::mem::replace(&mut s.1, val));
            }
            i = (i + 1) & self.mask();
        }
    }

    /// Removes `key`; the run after it shifts back so that no probe breaks.
    pub fn remove(&mut self, key: &u64) -> Option<u32> {
        let mask = self.mask();
        let mut i = self.home(*key);
        loop {
            let s = self.slots[i];
            if s.1 == NIL {
                return None;
            }
            if s.0 == *key {
                break;
            }
            i = (i + 1) & mask;
        }
        let val = self.slots[i].1;
        let mut j = i;
        loop {
            j = (j + 1) & mask;
            let s = self.slots[j];
            if s.1 == NIL {
                break;
            }
            // Move s back to the hole at i unless its home lies cyclically in (i, j].
            let h = self.home(s.0);
            let stays = if i <= j {
                i < h && h <= j
            } else {
                i < h || h <= j
            };
            if !stays {
                self.slots[i] = s;
                i = j;
            }
        }
        self.slots[i] = (0, NIL);
        self.len -= 1;
        Some(val)
    }

    fn grow(&mut self) {
        let bits = 64 - self.shift + 1;
        let old = std::mem::replace(self, KeyMap::with_capacity_log2(bits));
        for (k, v) in old.slots {
            if v != NIL {
                self.insert(k, v);
            }
        }
    }
}

/// Asks the host CPU to start loading `p`'s cache line: a hint that changes nothing
/// the simulation can see (the kernel model's `hint::prefetch`, which this crate does
/// not depend on).
#[inline(always)]
fn prefetch<T>(p: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch of any address is harmless; this one is a live reference.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(p as *const T as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The map against std's HashMap under random inserts and removes (keys from a
        /// small range, so collisions, runs and wrap-around happen).
        #[test]
        fn keymap_is_a_map(ops in proptest::collection::vec((any::<bool>(), 0u64..64, 0u32..1000), 0..400)) {
            let mut m = KeyMap::default();
            let mut r = std::collections::HashMap::new();
            for (ins, k, v) in ops {
                let k = k.wrapping_mul(0x1000_0000_0000_0001);
                if ins {
                    prop_assert_eq!(m.insert(k, v), r.insert(k, v));
                } else {
                    prop_assert_eq!(m.remove(&k), r.remove(&k));
                }
                prop_assert_eq!(m.len(), r.len());
            }
            for (k, v) in &r {
                prop_assert_eq!(m.get(k), Some(v));
            }
        }
    }
}
