//! The data structures every policy shares: an arena of nodes linked into queues
//! (doubly linked, head = most recently inserted), and a map from key to node.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

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

/// A multiplicative hash for integer keys: trace object ids and page numbers are
/// already well spread or dense, and SipHash would cost more than the policy.
#[derive(Default, Clone, Copy)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }

    #[inline]
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0 ^ x).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 32)
    }
}

/// Key → node.
pub type KeyMap = HashMap<u64, u32, BuildHasherDefault<KeyHasher>>;
