//! Cache hints for the simulator's hot loops.
//!
//! A simulated FTL's inner loops are dominated by random accesses into tables far larger
//! than the CPU caches (a 16 GiB device has a 16 MiB page table). When the loop knows which
//! entries it will touch next (the pages of a GC victim, the next requests of a trace), a
//! prefetch issued early lets those misses overlap instead of queueing one after another.

/// Ask the CPU to bring `slice[index]` into cache. A hint only: no effect on results, and
/// nothing happens if `index` is out of bounds or the target has no prefetch instruction.
#[inline(always)]
pub fn prefetch<T>(slice: &[T], index: usize) {
    #[cfg(target_arch = "x86_64")]
    if index < slice.len() {
        let address = slice.as_ptr().wrapping_add(index).cast::<i8>();
        // SAFETY: PREFETCHT0 is a hint that never dereferences its operand architecturally
        // and cannot fault; the address is in bounds of a live slice anyway. SSE, which
        // provides it, is part of the x86_64 baseline.
        #[allow(unsafe_code)]
        unsafe {
            core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(address);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (slice, index);
}

/// Which of four keys equal `key`, as bits (bit `i` for `keys[i]`): one SSE2 compare on
/// x86_64, where a hash-table bucket's key scan is on the critical path of every probe.
#[inline(always)]
pub fn equal_lanes(keys: &[u32; 4], key: u32) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{
            _mm_castsi128_ps, _mm_cmpeq_epi32, _mm_loadu_si128, _mm_movemask_ps, _mm_set1_epi32,
        };
        // SAFETY: SSE2 is part of the x86_64 baseline; the unaligned load reads the 16
        // bytes of `keys`, a live array of four u32.
        #[allow(unsafe_code)]
        unsafe {
            let lanes = _mm_loadu_si128(keys.as_ptr().cast());
            let equal = _mm_cmpeq_epi32(lanes, _mm_set1_epi32(key as i32));
            _mm_movemask_ps(_mm_castsi128_ps(equal)) as u32
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    equal_lanes_portable(keys, key)
}

/// [`equal_lanes`] without SSE2: the other targets' path, compiled for the tests too, which
/// check it against the SSE2 one.
#[cfg(any(test, not(target_arch = "x86_64")))]
fn equal_lanes_portable(keys: &[u32; 4], key: u32) -> u32 {
    let mut mask = 0;
    for (i, &k) in keys.iter().enumerate() {
        mask |= u32::from(k == key) << i;
    }
    mask
}

/// A vector of `len` copies of `value`, whose memory the kernel is asked to back with huge
/// pages (Linux transparent huge pages, `madvise` mode).
///
/// A 16 MiB table of 4 KiB pages spans 4096 pages, more than the TLB holds, so a random
/// access often pays for a page walk on top of the cache miss, and a software prefetch that
/// misses the TLB may be dropped. With 2 MiB pages the same table is 8 TLB entries. The
/// advice is given before the memory is first touched, so the first faults can already
/// allocate huge pages. Elsewhere, and for small tables, this is `vec![value; len]`.
pub fn huge_page_vec<T: Copy>(len: usize, value: T) -> Vec<T> {
    let mut vec: Vec<T> = Vec::with_capacity(len);
    let bytes = len * std::mem::size_of::<T>();
    #[cfg(target_os = "linux")]
    if bytes >= 4 << 20 {
        const PAGE: usize = 4096;
        let start = (vec.as_ptr() as usize).next_multiple_of(PAGE);
        let end = (vec.as_ptr() as usize + bytes) & !(PAGE - 1);
        if end > start {
            // SAFETY: MADV_HUGEPAGE is advice about how to back memory; it changes neither
            // the contents nor the validity of any byte. The range is page-aligned and lies
            // inside this vector's allocation, which is live for the call.
            #[allow(unsafe_code)]
            let _ = unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE)
            };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = bytes;
    vec.resize(len, value);
    vec
}

#[cfg(test)]
mod tests {
    #[test]
    fn huge_page_vectors_hold_their_values() {
        let v = super::huge_page_vec(3 << 20, 7u32);
        assert_eq!(v.len(), 3 << 20);
        assert!(v.iter().all(|&x| x == 7));
        assert_eq!(super::huge_page_vec(5, 1u8), vec![1u8; 5]);
    }

    #[test]
    fn equal_lanes_marks_every_equal_key() {
        // Both paths: the SSE2 one on x86_64 and the portable one of the other targets.
        for lanes in [super::equal_lanes, super::equal_lanes_portable] {
            assert_eq!(lanes(&[1, 2, 3, 4], 3), 0b0100);
            assert_eq!(lanes(&[7, 0, 7, 0], 7), 0b0101);
            assert_eq!(lanes(&[7, 0, 7, 0], 0), 0b1010);
            assert_eq!(lanes(&[u32::MAX; 4], u32::MAX), 0b1111);
            assert_eq!(lanes(&[1, 2, 3, 4], 5), 0);
        }
    }

    #[test]
    fn prefetch_is_harmless_in_and_out_of_bounds() {
        let values = vec![7u32; 100];
        super::prefetch(&values, 3);
        super::prefetch(&values, 1_000_000);
        super::prefetch::<u32>(&[], 0);
        assert_eq!(values[3], 7);
    }
}
