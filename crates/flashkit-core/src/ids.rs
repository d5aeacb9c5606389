//! Typed identifiers. Each is a `u32` newtype: the compiler, not a code review, keeps a
//! logical page number out of a physical-page slot.

use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, $prefix:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub u32);

        impl $name {
            /// The id as an index into a table.
            #[inline(always)]
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }
    };
}

id_type!(
    /// A logical page number: the unit the host addresses, after the host adapter has
    /// turned byte offsets into pages.
    Lpn,
    "lpn "
);
id_type!(
    /// A physical page number: `block * pages_per_block + offset` on the device.
    Ppn,
    "ppn "
);
id_type!(
    /// A physical erase block.
    BlockId,
    "block "
);

/// What a programmed page carries in its out-of-band area in this model: the logical page
/// it holds and the host write sequence number that produced the data. A read that returns
/// the latest stamp for its Lpn has returned the latest data; that is what the reference
/// model checks, without storing payload bytes.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
pub struct Stamp {
    /// The logical page whose data this is.
    pub lpn: Lpn,
    /// The host write that produced it (one number per host request).
    pub seq: u64,
}

impl Stamp {
    /// A stamp for `lpn` written by host write `seq`.
    pub fn new(lpn: Lpn, seq: u64) -> Self {
        Stamp { lpn, seq }
    }
}

/// A run of logical pages `[start, start + count)`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct PageRange {
    /// First logical page.
    pub start: Lpn,
    /// Number of pages; zero is an empty range.
    pub count: u32,
}

impl PageRange {
    /// The range `[start, start + count)`.
    pub fn new(start: Lpn, count: u32) -> Self {
        PageRange { start, count }
    }

    /// A single page.
    pub fn one(lpn: Lpn) -> Self {
        PageRange {
            start: lpn,
            count: 1,
        }
    }

    /// One past the last page, as a u64 so that it cannot overflow.
    pub fn end(self) -> u64 {
        u64::from(self.start.0) + u64::from(self.count)
    }

    /// The pages of the range in order.
    pub fn iter(self) -> impl Iterator<Item = Lpn> {
        (self.start.0..self.start.0 + self.count).map(Lpn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A range's end and pages (found by mutation testing: only other crates used them).
    #[test]
    fn a_range_ends_past_its_last_page_and_lists_its_pages() {
        let range = PageRange::new(Lpn(5), 3);
        assert_eq!(range.end(), 8);
        assert_eq!(range.iter().collect::<Vec<_>>(), [Lpn(5), Lpn(6), Lpn(7)]);
        assert_eq!(PageRange::new(Lpn(u32::MAX), 1).end(), 1 << 32);
        assert_eq!(PageRange::one(Lpn(9)).iter().collect::<Vec<_>>(), [Lpn(9)]);
    }
}
