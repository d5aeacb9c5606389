//! Page-aligned buffers, safe to hand to `O_DIRECT` and to view as records.
//!
//! The buffer is a `Vec` of 4 KiB pages whose type is aligned to 4 KiB, so the allocation
//! itself is aligned: no over-allocation, no pointer arithmetic and no `unsafe`. `bytemuck`
//! views the same memory as bytes (for I/O) or as records (for sorting).

use bytemuck::{Pod, Zeroable};

/// The alignment `O_DIRECT` needs on Linux for every filesystem flashkit was tried on.
pub const DIRECT_ALIGN: usize = 4096;

#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C, align(4096))]
struct Page([u8; DIRECT_ALIGN]);

/// A zeroed, 4 KiB-aligned buffer whose length is a multiple of 4 KiB.
pub struct AlignedBuf {
    pages: Vec<Page>,
}

impl AlignedBuf {
    /// A zeroed buffer of at least `bytes` bytes (rounded up to 4 KiB).
    ///
    /// The memory comes zeroed from the allocator (`calloc`: fresh pages from the kernel
    /// for large buffers), not written here: filling run formation's four 128 MiB buffers
    /// by hand kept the disk idle for the first 0.2 s of every sort.
    pub fn new(bytes: usize) -> Self {
        AlignedBuf {
            pages: bytemuck::zeroed_vec(bytes.div_ceil(DIRECT_ALIGN)),
        }
    }

    /// [`AlignedBuf::new`], or an error where the memory cannot be had (a `--bw 32G` sort's
    /// buffers panicked the process; `what` says what the buffer is for).
    pub fn try_new(bytes: usize, what: &str) -> Result<Self, crate::EmError> {
        bytemuck::try_zeroed_vec(bytes.div_ceil(DIRECT_ALIGN))
            .map(|pages| AlignedBuf { pages })
            .map_err(|()| {
                crate::EmError::Config(format!(
                    "cannot allocate {bytes} B for {what}: this machine does not have the memory"
                ))
            })
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.pages.len() * DIRECT_ALIGN
    }

    /// Whether the buffer holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }

    /// The bytes.
    pub fn bytes(&self) -> &[u8] {
        bytemuck::cast_slice(&self.pages)
    }

    /// The bytes, mutably.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        bytemuck::cast_slice_mut(&mut self.pages)
    }

    /// The buffer as records (`R`'s size divides 4 KiB, so the cast cannot fail).
    pub fn records<R: Pod>(&self) -> &[R] {
        bytemuck::cast_slice(&self.pages)
    }

    /// The buffer as records, mutably.
    pub fn records_mut<R: Pod>(&mut self) -> &mut [R] {
        bytemuck::cast_slice_mut(&mut self.pages)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_aligned_and_viewable_as_records() {
        let mut buf = AlignedBuf::new(5000);
        assert_eq!(buf.len(), 8192);
        assert_eq!(buf.bytes().as_ptr() as usize % DIRECT_ALIGN, 0);
        buf.records_mut::<u64>()[1] = 0x0102_0304_0506_0708;
        assert_eq!(buf.bytes()[8], 0x08);
        assert_eq!(buf.records::<u32>().len(), 2048);
        assert!(!buf.is_empty() && !AlignedBuf::new(1).is_empty());
        assert!(AlignedBuf::new(0).is_empty());
    }

    #[test]
    fn a_buffer_the_machine_cannot_hold_is_an_error_naming_its_use() {
        let buf = AlignedBuf::try_new(100, "a test").expect("100 B");
        assert_eq!(buf.len(), 4096);
        assert!(buf.bytes().iter().all(|&b| b == 0));
        let error = AlignedBuf::try_new(usize::MAX, "a merge's buffers")
            .err()
            .expect("no machine has this");
        assert!(
            matches!(&error, crate::EmError::Config(m)
                if m.contains(&format!("cannot allocate {} B for a merge's buffers", usize::MAX))),
            "{error}"
        );
    }
}
