//! Intrusive doubly-linked lists of frames (`include/linux/list.h` over the frame table).
//!
//! The head end is the youngest (where `list_add` puts pages); reclaim takes from the tail.

use super::page::{Frame, Pfn, NIL};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListHead {
    pub head: Pfn,
    pub tail: Pfn,
    pub len: u64,
}

impl Default for ListHead {
    fn default() -> Self {
        ListHead {
            head: NIL,
            tail: NIL,
            len: 0,
        }
    }
}

impl ListHead {
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// `list_add`: insert at the head (youngest end).
    #[inline]
    pub fn add_head(&mut self, frames: &mut [Frame], pfn: Pfn) {
        let old = self.head;
        let f = &mut frames[pfn as usize];
        f.prev = NIL;
        f.next = old;
        if old == NIL {
            self.tail = pfn;
        } else {
            frames[old as usize].prev = pfn;
        }
        self.head = pfn;
        self.len += 1;
    }

    /// `list_add_tail`: insert at the tail (next to be reclaimed).
    #[inline]
    pub fn add_tail(&mut self, frames: &mut [Frame], pfn: Pfn) {
        let old = self.tail;
        let f = &mut frames[pfn as usize];
        f.next = NIL;
        f.prev = old;
        if old == NIL {
            self.head = pfn;
        } else {
            frames[old as usize].next = pfn;
        }
        self.tail = pfn;
        self.len += 1;
    }

    /// `list_del`. The caller guarantees `pfn` is on this list.
    #[inline]
    pub fn del(&mut self, frames: &mut [Frame], pfn: Pfn) {
        let (prev, next) = {
            let f = &frames[pfn as usize];
            (f.prev, f.next)
        };
        if prev == NIL {
            self.head = next;
        } else {
            frames[prev as usize].next = next;
        }
        if next == NIL {
            self.tail = prev;
        } else {
            frames[next as usize].prev = prev;
        }
        let f = &mut frames[pfn as usize];
        f.prev = NIL;
        f.next = NIL;
        self.len -= 1;
    }

    pub fn pop_head(&mut self, frames: &mut [Frame]) -> Option<Pfn> {
        let h = self.head;
        if h == NIL {
            return None;
        }
        self.del(frames, h);
        Some(h)
    }

    /// Walks from head to tail (for the invariant checker and tests).
    pub fn iter<'a>(&self, frames: &'a [Frame]) -> impl Iterator<Item = Pfn> + 'a {
        let mut cur = self.head;
        std::iter::from_fn(move || {
            if cur == NIL {
                None
            } else {
                let p = cur;
                cur = frames[p as usize].next;
                Some(p)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_del_order() {
        let mut frames = vec![Frame::EMPTY; 4];
        let mut l = ListHead::default();
        l.add_head(&mut frames, 0);
        l.add_head(&mut frames, 1);
        l.add_tail(&mut frames, 2);
        assert_eq!(l.iter(&frames).collect::<Vec<_>>(), vec![1, 0, 2]);
        l.del(&mut frames, 0);
        assert_eq!(l.iter(&frames).collect::<Vec<_>>(), vec![1, 2]);
        assert_eq!((l.head, l.tail, l.len), (1, 2, 2));
        assert_eq!(l.pop_head(&mut frames), Some(1));
        l.del(&mut frames, 2);
        assert!(l.is_empty());
        assert_eq!((l.head, l.tail), (NIL, NIL));
    }
}
