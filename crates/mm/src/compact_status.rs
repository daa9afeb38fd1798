//! What direct compaction and the allocator share (include/linux/compaction.h): the
//! outcome of a compaction attempt and the priorities the allocator escalates
//! through. A leaf, so the allocator names them without importing compaction, which
//! itself calls into the allocator.

/// `MAX_COMPACT_RETRIES`: `should_compact_retry`'s budget.
pub const MAX_COMPACT_RETRIES: u32 = 16;

/// `enum compact_priority`: lower is more aggressive.
pub const COMPACT_PRIO_SYNC_FULL: u32 = 0;
pub const MIN_COMPACT_PRIORITY: u32 = COMPACT_PRIO_SYNC_FULL;
pub const COMPACT_PRIO_SYNC_LIGHT: u32 = 1;
pub const MIN_COMPACT_COSTLY_PRIORITY: u32 = COMPACT_PRIO_SYNC_LIGHT;
pub const DEF_COMPACT_PRIORITY: u32 = COMPACT_PRIO_SYNC_LIGHT;
pub const COMPACT_PRIO_ASYNC: u32 = 2;
pub const INIT_COMPACT_PRIORITY: u32 = COMPACT_PRIO_ASYNC;

/// `enum compact_result`, in the kernel's order: when zones are combined the bigger one
/// wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CompactResult {
    /// No zone was suitable (the fragmentation index says lack of memory).
    NotSuitableZone,
    /// Not enough order-0 memory to compact into: reclaim first.
    Skipped,
    /// Backed off after recent failures.
    Deferred,
    /// Not used on its own: a run that has not found the page yet continues.
    NoSuitablePage,
    /// Still running.
    Continue,
    /// The scanners met over the whole zone without producing the page.
    Complete,
    /// The scanners met, but part of the zone was skipped (cached positions, skip bits).
    PartialSkipped,
    /// Aborted: too many isolated pages, no free pages left, a throttle.
    Contended,
    /// A free block of the order is there (or the zone passes its watermark).
    Success,
}

impl CompactResult {
    /// The kernel's `compaction_status_string`.
    pub fn name(self) -> &'static str {
        match self {
            CompactResult::NotSuitableZone => "not_suitable_zone",
            CompactResult::Skipped => "skipped",
            CompactResult::Deferred => "deferred",
            CompactResult::NoSuitablePage => "no_suitable_page",
            CompactResult::Continue => "continue",
            CompactResult::Complete => "complete",
            CompactResult::PartialSkipped => "partial_skipped",
            CompactResult::Contended => "contended",
            CompactResult::Success => "success",
        }
    }

    /// `compaction_failed`: the whole zone was tried.
    pub fn failed(self) -> bool {
        self == CompactResult::Complete
    }

    /// `compaction_needs_reclaim`.
    pub fn needs_reclaim(self) -> bool {
        self == CompactResult::Skipped
    }

    /// `compaction_withdrawn`: gave up early; a harder try may do better.
    pub fn withdrawn(self) -> bool {
        matches!(
            self,
            CompactResult::Deferred | CompactResult::Contended | CompactResult::PartialSkipped
        )
    }
}
