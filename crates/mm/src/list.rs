//! Lists of frames (`include/linux/list.h` over the frame table), in two layouts.
//!
//! The head end is the youngest (where `list_add` puts pages); reclaim takes from the tail.
//! [`ListHead`] links frames through `Frame::{prev, next}` (the buddy free lists and the
//! swap pools). [`LruList`] keeps the LRU lists as a ring of page numbers instead: the
//! same operations in the same order, but a walk from the tail reads consecutive entries,
//! so the frames a reclaim batch will visit are known, and fetched, ahead of the visit.
//! Reclaim's isolation walk over linked frames was a chain of dependent cache misses.

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

/// An LRU list (`lruvec->lists[lru]`, a generation's `folios[gen][type][zone]`) as a
/// ring of page numbers, head at the front. A page's place in the ring is in its
/// `Frame::prev`: a position that wraps, the ring's entries lying at positions
/// `front_pos..end_pos`. `list_del` from the middle leaves a hole (NIL) that the ends
/// skip and that compaction removes once holes outnumber pages, so each operation stays
/// O(1) amortised and the order of pages is exactly the linked list's.
///
/// The ring's capacity is a power of two and position `p` lives at slot `p & mask`,
/// so a position maps to its slot with an AND and growing keeps every page's recorded
/// position. The slots are held in chunks of up to 2^16: a chunk
/// exists only while the ring's entries reach into it. So a ring takes the memory of
/// its entries, not of its capacity (a single buffer, doubled, was up to twice that:
/// 2 GiB for the 1 TiB machine's 264 M inactive pages), and doubling a large ring
/// moves chunk pointers, not entries.
#[derive(Debug, Clone, Default)]
pub struct LruList {
    /// Chunk `c` holds slots `c << chunk_shift ..`; empty where no entry reaches.
    chunks: Vec<Box<[Pfn]>>,
    /// log2 of a chunk's slots: the whole capacity while it is below a full chunk.
    chunk_shift: u32,
    front_pos: u32,
    end_pos: u32,
    pub len: u64,
}

/// How far ahead of a tail walk frames are fetched: enough to cover a memory latency
/// at a few nanoseconds of work per page.
pub(super) const WALK_PREFETCH_AHEAD: usize = 8;

/// Holes a ring may hold beyond its page count before it is compacted.
const LRU_SLACK_ENTRIES: usize = 64;

/// The smallest capacity a ring allocates.
const MIN_RING_ENTRIES: usize = 16;

/// A full chunk's slots (256 KiB), as a power of two; small in unit tests so that
/// their rings span several.
const RING_CHUNK_SHIFT: u32 = if cfg!(test) { 6 } else { 16 };
#[cfg(test)]
const RING_CHUNK_ENTRIES: usize = 1 << RING_CHUNK_SHIFT;

impl LruList {
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Entries in the ring, holes included.
    #[inline]
    fn ring_len(&self) -> usize {
        self.end_pos.wrapping_sub(self.front_pos) as usize
    }

    /// Slots: a power of two (0 before the first page).
    #[inline]
    fn capacity(&self) -> usize {
        self.chunks.len() << self.chunk_shift
    }

    /// Position `pos`'s chunk and place in it.
    #[inline(always)]
    fn slot(&self, pos: u32) -> (usize, usize) {
        let i = pos as usize & self.capacity().wrapping_sub(1);
        (i >> self.chunk_shift, i & ((1 << self.chunk_shift) - 1))
    }

    /// The entry at position `pos` (which the caller knows lies in the ring, so its
    /// chunk exists).
    #[inline(always)]
    fn at(&self, pos: u32) -> Pfn {
        let (c, k) = self.slot(pos);
        self.chunks[c][k]
    }

    #[inline(always)]
    fn set(&mut self, pos: u32, pfn: Pfn) {
        let (c, k) = self.slot(pos);
        self.chunks[c][k] = pfn;
    }

    /// The oldest page (next to be reclaimed), or NIL.
    #[inline]
    pub fn tail(&self) -> Pfn {
        if self.end_pos == self.front_pos {
            NIL
        } else {
            self.at(self.end_pos.wrapping_sub(1))
        }
    }

    /// The entry `k` places from the tail, holes included (NIL for a hole or past the
    /// head): what a walk from the tail will reach soon, to prefetch.
    #[inline]
    pub fn peek_from_tail(&self, k: usize) -> Pfn {
        if k < self.ring_len() {
            self.at(self.end_pos.wrapping_sub(k as u32 + 1))
        } else {
            NIL
        }
    }

    /// A walk from the tail is at the tail: fetch the frame it reaches
    /// `WALK_PREFETCH_AHEAD` pages later, so the walk's misses overlap instead of
    /// following one another.
    #[inline]
    pub fn prefetch_walk(&self, frames: &[Frame]) {
        let ahead = self.peek_from_tail(WALK_PREFETCH_AHEAD);
        if ahead != NIL {
            crate::hint::prefetch(&frames[ahead as usize]);
        }
    }

    /// A walk of about `count` pages from the tail is about to start: fetch the frames
    /// of the last `count` entries and `WALK_PREFETCH_AHEAD` more now, so its misses
    /// overlap from the first page on. Returns how many entries that covers: a walk
    /// need not fetch ahead ([`LruList::prefetch_walk`]) before it nears their end (it
    /// goes further only past holes).
    pub fn prefetch_tail(&self, frames: &[Frame], count: usize) -> usize {
        let n = (count + WALK_PREFETCH_AHEAD).min(self.ring_len());
        for k in 0..n {
            let p = self.at(self.end_pos.wrapping_sub(k as u32 + 1));
            if p != NIL {
                crate::hint::prefetch(&frames[p as usize]);
            }
        }
        n
    }

    /// Room for an entry at position `pos` (the new front or end): a full ring doubles
    /// its capacity, and the slot's chunk is allocated if no entry reached it yet.
    #[inline]
    fn reserve_at(&mut self, pos: u32) {
        if self.ring_len() == self.capacity() {
            self.resize((2 * self.capacity()).max(MIN_RING_ENTRIES));
        }
        let (c, _) = self.slot(pos);
        if self.chunks[c].is_empty() {
            self.chunks[c] = vec![NIL; 1 << self.chunk_shift].into_boxed_slice();
        }
    }

    /// The chunks the ring's entries reach, in ring order, by their first position.
    fn live_chunk_starts(&self) -> impl Iterator<Item = u32> {
        let step = 1u32 << self.chunk_shift;
        let first = self.front_pos & !(step - 1);
        let n = if self.ring_len() == 0 {
            0
        } else {
            (self.end_pos.wrapping_sub(first) as usize).div_ceil(step as usize)
        };
        (0..n as u32).map(move |k| first.wrapping_add(k.wrapping_mul(step)))
    }

    /// A capacity of `size` slots (a power of two, at least the ring's entries):
    /// every entry keeps its position. Between capacities of whole chunks the chunks
    /// move (when each lands in a slot of its own); otherwise the entries are copied.
    #[cold]
    fn resize(&mut self, size: usize) {
        debug_assert!(size.is_power_of_two() && size >= self.ring_len());
        let shift = size.trailing_zeros().min(RING_CHUNK_SHIFT);
        let mut chunks: Vec<Box<[Pfn]>> = vec![Box::default(); size >> shift];
        let new_mask = size - 1;
        let starts: Vec<u32> = self.live_chunk_starts().collect();
        if shift == self.chunk_shift && shift == RING_CHUNK_SHIFT && starts.len() <= chunks.len() {
            // A ring as long as its capacity with an unaligned front has its first and
            // last chunks in one slot: the first move takes a copy.
            let wraps = starts.len() > self.chunks.len();
            for (k, &start) in starts.iter().enumerate() {
                let (c, _) = self.slot(start);
                let chunk = if wraps && k == 0 {
                    self.chunks[c].clone()
                } else {
                    std::mem::take(&mut self.chunks[c])
                };
                chunks[(start as usize & new_mask) >> shift] = chunk;
            }
        } else {
            let mut pos = self.front_pos;
            while pos != self.end_pos {
                let i = pos as usize & new_mask;
                let chunk = &mut chunks[i >> shift];
                if chunk.is_empty() {
                    *chunk = vec![NIL; 1 << shift].into_boxed_slice();
                }
                chunk[i & ((1 << shift) - 1)] = self.at(pos);
                pos = pos.wrapping_add(1);
            }
        }
        self.chunks = chunks;
        self.chunk_shift = shift;
    }

    /// Frees the chunks the ring's entries no longer reach (after its tail or front
    /// left a chunk).
    #[cold]
    fn release_chunks(&mut self) {
        let mut live = vec![false; self.chunks.len()];
        for start in self.live_chunk_starts() {
            live[self.slot(start).0] = true;
        }
        for (chunk, live) in self.chunks.iter_mut().zip(live) {
            if !live && !chunk.is_empty() {
                *chunk = Box::default();
            }
        }
    }

    /// After the ring's ends moved from `old_front..old_end`: a chunk they left is
    /// freed. Chunks are whole only in a large ring; a small one keeps its buffer. A
    /// large ring emptied gives up its capacity too: refilled, it grows from a small
    /// buffer again, rather than take a whole chunk each time it turns non-empty.
    #[inline]
    fn ends_moved(&mut self, old_front: u32, old_end: u32) {
        let shift = self.chunk_shift;
        if shift != RING_CHUNK_SHIFT {
            return;
        }
        if self.front_pos == self.end_pos {
            self.chunks = Vec::new();
            self.chunk_shift = 0;
        } else if old_front >> shift != self.front_pos >> shift
            || old_end.wrapping_sub(1) >> shift != self.end_pos.wrapping_sub(1) >> shift
        {
            self.release_chunks();
        }
    }

    /// `list_add`: insert at the head (youngest end).
    #[inline]
    pub fn add_head(&mut self, frames: &mut [Frame], pfn: Pfn) {
        self.reserve_at(self.front_pos.wrapping_sub(1));
        self.front_pos = self.front_pos.wrapping_sub(1);
        self.set(self.front_pos, pfn);
        frames[pfn as usize].prev = self.front_pos;
        self.len += 1;
    }

    /// `list_add_tail`: insert at the tail (next to be reclaimed).
    #[inline]
    pub fn add_tail(&mut self, frames: &mut [Frame], pfn: Pfn) {
        self.reserve_at(self.end_pos);
        self.set(self.end_pos, pfn);
        frames[pfn as usize].prev = self.end_pos;
        self.end_pos = self.end_pos.wrapping_add(1);
        self.len += 1;
    }

    /// `list_del`. The caller guarantees `pfn` is on this list.
    #[inline]
    pub fn del(&mut self, frames: &mut [Frame], pfn: Pfn) {
        let pos = frames[pfn as usize].prev;
        debug_assert!(
            (pos.wrapping_sub(self.front_pos) as usize) < self.ring_len() && self.at(pos) == pfn,
            "pfn {pfn} not at its place"
        );
        self.set(pos, NIL);
        self.len -= 1;
        let (old_front, old_end) = (self.front_pos, self.end_pos);
        if pos.wrapping_add(1) == self.end_pos {
            // From the tail, as reclaim takes pages: drop it and the holes before it.
            self.end_pos = pos;
            while self.end_pos != self.front_pos && self.at(self.end_pos.wrapping_sub(1)) == NIL {
                self.end_pos = self.end_pos.wrapping_sub(1);
            }
        }
        if pos == self.front_pos {
            while self.front_pos != self.end_pos && self.at(self.front_pos) == NIL {
                self.front_pos = self.front_pos.wrapping_add(1);
            }
        }
        self.ends_moved(old_front, old_end);
        if self.ring_len() > 2 * self.len as usize + LRU_SLACK_ENTRIES {
            self.compact(frames);
        }
    }

    /// `list_del` of the tail, the page reclaim's walk takes next: returns it (NIL if
    /// the list is empty). The tail's place is known, so its frame is not read.
    #[inline]
    pub fn pop_tail(&mut self, frames: &mut [Frame]) -> Pfn {
        if self.end_pos == self.front_pos {
            return NIL;
        }
        let old_end = self.end_pos;
        self.end_pos = self.end_pos.wrapping_sub(1);
        let pfn = self.at(self.end_pos);
        self.len -= 1;
        while self.end_pos != self.front_pos && self.at(self.end_pos.wrapping_sub(1)) == NIL {
            self.end_pos = self.end_pos.wrapping_sub(1);
        }
        self.ends_moved(self.front_pos, old_end);
        if self.ring_len() > 2 * self.len as usize + LRU_SLACK_ENTRIES {
            self.compact(frames);
        }
        pfn
    }

    /// Drops the holes and renumbers the pages; gives back memory a shrunken list no
    /// longer needs.
    #[cold]
    fn compact(&mut self, frames: &mut [Frame]) {
        // Stable, in place, in ring order: the k-th page moves to position front + k,
        // never ahead of the entry being read, so nothing unread is overwritten.
        let mut to = self.front_pos;
        let mut pos = self.front_pos;
        while pos != self.end_pos {
            let p = self.at(pos);
            if p != NIL {
                self.set(to, p);
                frames[p as usize].prev = to;
                to = to.wrapping_add(1);
            }
            pos = pos.wrapping_add(1);
        }
        let old_end = self.end_pos;
        self.end_pos = to;
        self.ends_moved(self.front_pos, old_end);
        let n = self.ring_len();
        let want = (2 * n).next_power_of_two().max(MIN_RING_ENTRIES);
        if self.capacity() > 4 * n + LRU_SLACK_ENTRIES && want < self.capacity() {
            self.resize(want);
        }
    }

    /// From head to tail (for the invariant checker and tests).
    pub fn iter(&self) -> impl Iterator<Item = Pfn> + '_ {
        (0..self.ring_len())
            .map(|k| self.at(self.front_pos.wrapping_add(k as u32)))
            .filter(|&p| p != NIL)
    }

    /// The ring's own invariants: ends are pages, `len` counts the pages, and each
    /// page's recorded place is where it is.
    pub fn check(&self, frames: &[Frame]) -> Result<(), String> {
        if self.ring_len() > self.capacity() {
            return Err("an LRU ring holds more entries than its capacity".into());
        }
        let live: usize = self.live_chunk_starts().count();
        let held = self.chunks.iter().filter(|c| !c.is_empty()).count();
        if self.chunk_shift == RING_CHUNK_SHIFT && held > live {
            return Err(format!("an LRU ring holds {held} chunks for {live} in use"));
        }
        if self.ring_len() > 0
            && (self.at(self.front_pos) == NIL || self.at(self.end_pos.wrapping_sub(1)) == NIL)
        {
            return Err("an LRU ring ends in a hole".into());
        }
        let mut n = 0u64;
        for i in 0..self.ring_len() {
            let p = self.at(self.front_pos.wrapping_add(i as u32));
            if p == NIL {
                continue;
            }
            n += 1;
            let at = frames[p as usize].prev.wrapping_sub(self.front_pos) as usize;
            if at != i {
                return Err(format!("frame {p} is at ring place {i} but records {at}"));
            }
        }
        if n != self.len {
            return Err(format!(
                "an LRU ring holds {n} pages but counts {}",
                self.len
            ));
        }
        Ok(())
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

    /// The ring is the linked list: the same order after any sequence of adds at
    /// either end and deletions anywhere, through compactions and position wrap-around.
    #[test]
    fn lru_ring_is_the_linked_list() {
        use rand::{Rng, SeedableRng};
        let n = 300usize;
        let mut fa = vec![Frame::EMPTY; n];
        let mut fb = vec![Frame::EMPTY; n];
        let mut on = vec![false; n];
        let mut linked = ListHead::default();
        // Positions wrap during the test.
        let mut ring = LruList {
            front_pos: u32::MAX - 40,
            end_pos: u32::MAX - 40,
            ..LruList::default()
        };
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(7);
        for step in 0..200_000 {
            let pfn = rng.gen_range(0..n);
            if on[pfn] {
                linked.del(&mut fa, pfn as Pfn);
                ring.del(&mut fb, pfn as Pfn);
            } else if rng.gen_bool(0.5) {
                linked.add_head(&mut fa, pfn as Pfn);
                ring.add_head(&mut fb, pfn as Pfn);
            } else {
                linked.add_tail(&mut fa, pfn as Pfn);
                ring.add_tail(&mut fb, pfn as Pfn);
            }
            on[pfn] = !on[pfn];
            assert_eq!(ring.tail(), linked.tail, "step {step}");
            assert_eq!(ring.len, linked.len);
            if step % 997 == 0 {
                let want: Vec<Pfn> = linked.iter(&fa).collect();
                assert_eq!(ring.iter().collect::<Vec<_>>(), want, "step {step}");
                ring.check(&fb).unwrap();
                assert!(ring.ring_len() <= 2 * ring.len as usize + LRU_SLACK_ENTRIES);
            }
        }
        // Drain from the tail as reclaim does; the peeked entries are the next tails.
        while linked.tail != NIL {
            let ahead = ring.peek_from_tail(1);
            let t = ring.tail();
            assert_eq!(t, linked.tail);
            linked.del(&mut fa, t);
            if linked.len % 2 == 0 {
                assert_eq!(ring.pop_tail(&mut fb), t);
            } else {
                ring.del(&mut fb, t);
            }
            if linked.len % 97 == 0 {
                ring.check(&fb).unwrap();
            }
            if ahead != NIL {
                assert_eq!(ring.tail(), ahead);
            }
        }
        assert!(ring.is_empty() && ring.ring_len() == 0);
    }

    /// A ring that slides (pages in at the head, out at the tail, as a steady LRU
    /// does) holds the chunks its entries reach, never its whole capacity; and a full
    /// ring with an unaligned front (its first and last chunk sharing a slot) keeps
    /// its order through a doubling.
    #[test]
    fn lru_ring_holds_only_the_chunks_its_entries_reach() {
        let n = 20 * RING_CHUNK_ENTRIES;
        let mut frames = vec![Frame::EMPTY; n];
        let mut ring = LruList {
            front_pos: 37,
            end_pos: 37,
            ..LruList::default()
        };
        let mut want = std::collections::VecDeque::new();
        let live = 3 * RING_CHUNK_ENTRIES + 5;
        for p in 0..live as Pfn {
            ring.add_head(&mut frames, p);
            want.push_front(p);
        }
        ring.check(&frames).unwrap();
        for p in live as Pfn..n as Pfn {
            assert_eq!(ring.pop_tail(&mut frames), want.pop_back().unwrap());
            ring.add_head(&mut frames, p);
            want.push_front(p);
            let held = ring.chunks.iter().filter(|c| !c.is_empty()).count();
            assert!(held <= live / RING_CHUNK_ENTRIES + 2, "{held} chunks held");
        }
        ring.check(&frames).unwrap();
        assert!(ring.iter().eq(want.iter().copied()));
        // Fill to the capacity exactly, then one more: the doubling with the front's
        // chunk shared.
        let mut fill = ring.capacity() - ring.ring_len();
        assert!(!(ring.front_pos as usize).is_multiple_of(RING_CHUNK_ENTRIES));
        for p in 0..n as Pfn {
            if ring.iter().any(|q| q == p) {
                continue;
            }
            ring.add_tail(&mut frames, p);
            want.push_back(p);
            if fill == 0 {
                break;
            }
            fill -= 1;
        }
        ring.check(&frames).unwrap();
        assert!(ring.iter().eq(want.iter().copied()));
        // Emptied, a large ring gives up its chunks and capacity; it fills again.
        while let Some(p) = want.pop_back() {
            assert_eq!(ring.pop_tail(&mut frames), p);
        }
        assert_eq!((ring.capacity(), ring.chunks.len()), (0, 0));
        ring.add_head(&mut frames, 5);
        ring.check(&frames).unwrap();
        assert_eq!((ring.tail(), ring.capacity()), (5, MIN_RING_ENTRIES));
    }
}
