//! splitmix64 streams: one independent stream per `(seed, unit)` (docs/kernels.md, "Random numbers").

use crate::error::CoreError;

/// The splitmix64 increment (the golden ratio in 64 bits).
pub const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;
const TWO_POW_MINUS_53: f64 = 1.0 / 9_007_199_254_740_992.0;

/// The splitmix64 finaliser: a bijection on `u64`.
#[inline]
pub fn mix64(z: u64) -> u64 {
    let z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    let z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The splitmix64 stream of one independent unit of work.
#[derive(Debug, Clone)]
pub struct Stream {
    state: u64,
}

impl Stream {
    /// The stream of `unit` under `seed` (both already reduced modulo 2**64).
    pub fn new(seed: u64, unit: u64) -> Self {
        Stream {
            state: mix64(seed.wrapping_add(mix64(unit.wrapping_add(GOLDEN)))),
        }
    }

    /// The stream of `unit` under this stream's starting state as seed: the scan shuffles ask
    /// `g` under permutation `p` with `Stream::new(seed, p).child(g)` (docs/kernels.md, "Scan").
    pub fn child(&self, unit: u64) -> Self {
        Stream::new(self.state, unit)
    }

    /// The next raw 64-bit value.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN);
        mix64(self.state)
    }

    /// A float in [0, 1) with 53 random bits.
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * TWO_POW_MINUS_53
    }

    /// An int in [0, bound) by Lemire's multiply-shift with rejection; `bound` must be >= 1.
    #[inline]
    pub fn below(&mut self, bound: u64) -> u64 {
        debug_assert!(bound >= 1);
        let n = u128::from(bound);
        let mut m = u128::from(self.next_u64()) * n;
        let mut low = m as u64;
        if low < bound {
            let threshold = bound.wrapping_neg() % bound;
            while low < threshold {
                m = u128::from(self.next_u64()) * n;
                low = m as u64;
            }
        }
        (m >> 64) as u64
    }
}

/// Check a bound for [`Stream::below`]: at least 1.
pub fn check_bound(bound: u64) -> Result<u64, CoreError> {
    if bound == 0 {
        return Err(CoreError::Value("bound must be at least 1, got 0".into()));
    }
    Ok(bound)
}

/// The first `count` raw values of the stream `(seed, unit)`.
pub fn splitmix64_stream(seed: u64, unit: u64, count: usize) -> Vec<u64> {
    let mut stream = Stream::new(seed, unit);
    (0..count).map(|_| stream.next_u64()).collect()
}

/// `count` floats in [0, 1) from the stream `(seed, unit)`.
pub fn uniform_floats(seed: u64, unit: u64, count: usize) -> Vec<f64> {
    let mut stream = Stream::new(seed, unit);
    (0..count).map(|_| stream.uniform()).collect()
}

/// `count` ints in [0, bound) from the stream `(seed, unit)`.
pub fn bounded_ints(seed: u64, unit: u64, bound: u64, count: usize) -> Result<Vec<u64>, CoreError> {
    let bound = check_bound(bound)?;
    let mut stream = Stream::new(seed, unit);
    Ok((0..count).map(|_| stream.below(bound)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_reference_values() {
        // The published splitmix64 sequence for state 0 starts with 0xE220A8397B1DCDAF.
        let mut s = Stream { state: 0 };
        assert_eq!(s.next_u64(), 0xE220_A839_7B1D_CDAF);
    }

    #[test]
    fn below_stays_in_range_and_one_is_always_zero() {
        let mut s = Stream::new(7, 3);
        for bound in [1u64, 2, 3, 10, (1 << 63) + 1, u64::MAX] {
            for _ in 0..100 {
                let v = s.below(bound);
                assert!(v < bound);
                if bound == 1 {
                    assert_eq!(v, 0);
                }
            }
        }
    }

    #[test]
    fn uniform_in_unit_interval() {
        assert!(uniform_floats(1, 2, 1000)
            .iter()
            .all(|&x| (0.0..1.0).contains(&x)));
    }

    #[test]
    fn zero_bound_is_an_error() {
        assert_eq!(
            bounded_ints(0, 0, 0, 1).unwrap_err(),
            CoreError::Value("bound must be at least 1, got 0".into())
        );
    }
}
