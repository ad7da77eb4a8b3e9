//! A one-hash Bloom filter over 64-bit hashes (bit `h >> shift`): no false negatives, so it only
//! ever spares a lookup and never changes an answer.

/// Bits of a filter: one per key hash's top bits.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    words: Vec<u64>,
    shift: u32,
}

impl Filter {
    /// A filter of `bits_per_key` bits per key (a power of two in `[2**10, max_bits]`) holding
    /// every hash of `keys`.
    pub fn new(
        keys: impl ExactSizeIterator<Item = u64>,
        bits_per_key: usize,
        max_bits: usize,
    ) -> Self {
        let bits = (keys.len() * bits_per_key)
            .clamp(1 << 10, max_bits)
            .next_power_of_two();
        let mut filter = Filter {
            words: vec![0u64; bits / 64],
            shift: 64 - bits.trailing_zeros(),
        };
        for h in keys {
            let bit = h >> filter.shift;
            filter.words[(bit >> 6) as usize] |= 1 << (bit & 63);
        }
        filter
    }

    /// Whether `h` may be one of the keys (no false negatives).
    #[inline]
    pub fn may_hold(&self, h: u64) -> bool {
        let bit = h >> self.shift;
        self.words[(bit >> 6) as usize] >> (bit & 63) & 1 == 1
    }

    /// Ask the CPU to bring the word of `h` into the cache (a hint; no effect on results).
    #[inline]
    pub fn prefetch(&self, h: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            let word = &self.words[((h >> self.shift) >> 6) as usize];
            // SAFETY: `_mm_prefetch` only hints the cache; the address is a valid element.
            unsafe {
                use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
                _mm_prefetch::<_MM_HINT_T0>((word as *const u64).cast::<i8>());
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = h;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_every_key() {
        let keys: Vec<u64> = (0..5000u64).map(crate::rng::mix64).collect();
        let filter = Filter::new(keys.iter().copied(), 4, 1 << 22);
        assert!(keys.iter().all(|&h| filter.may_hold(h)));
        let others = (5000..15000u64).map(crate::rng::mix64);
        assert!(others.filter(|&h| filter.may_hold(h)).count() < 5000);
    }
}
