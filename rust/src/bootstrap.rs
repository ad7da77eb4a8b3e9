//! Bootstrap and sign-flip resampling (docs/kernels.md, "Resampling").
//!
//! Replicate (or permutation) `r` draws from its own stream `Stream(seed, r)` and sums in draw
//! order from 0.0, so replicates run in parallel and still equal the pure backend bit for bit.

use rayon::prelude::*;

use crate::error::{float_repr, CoreError};
use crate::rng::Stream;

// Replicates per rayon task: a replicate can be as small as one draw.
const MIN_REPLICATES_PER_TASK: usize = 16;

/// Every value finite, else `ValueError("<what>[i] is not finite (nan); ...")`.
pub fn check_finite(values: &[f64], what: &str) -> Result<(), CoreError> {
    match values.iter().position(|v| !v.is_finite()) {
        None => Ok(()),
        Some(i) => Err(CoreError::Value(format!(
            "{what}[{i}] is not finite ({}); drop or fix it before resampling",
            float_repr(values[i])
        ))),
    }
}

/// Sum `values.len()` draws with replacement, in draw order, from `stream`.
#[inline]
fn resample_sum(values: &[f64], stream: &mut Stream) -> f64 {
    let n = values.len() as u64;
    let mut total = 0.0;
    for _ in 0..n {
        total += values[stream.below(n) as usize];
    }
    total
}

fn per_replicate<F: Fn(usize) -> f64 + Sync>(count: usize, one: F) -> Vec<f64> {
    let mut out = vec![0.0; count];
    out.par_iter_mut()
        .enumerate()
        .with_min_len(MIN_REPLICATES_PER_TASK)
        .for_each(|(r, slot)| *slot = one(r));
    out
}

/// `n_resamples` bootstrap means of `values`: replicate `r` sums `len` draws from
/// `Stream(seed, r)`, then divides once by `len`.
pub fn bootstrap_means(
    values: &[f64],
    n_resamples: usize,
    seed: u64,
) -> Result<Vec<f64>, CoreError> {
    check_finite(values, "values")?;
    if values.is_empty() {
        return Err(CoreError::Value(
            "values is empty: a bootstrap needs at least one value".into(),
        ));
    }
    let n = values.len() as f64;
    Ok(per_replicate(n_resamples, |r| {
        resample_sum(values, &mut Stream::new(seed, r as u64)) / n
    }))
}

/// `n_resamples` unpaired bootstrap values of `mean(b*) - mean(a*)`: one stream per replicate,
/// `a`'s draws first, then `b`'s from the same stream.
pub fn bootstrap_mean_diff(
    a: &[f64],
    b: &[f64],
    n_resamples: usize,
    seed: u64,
) -> Result<Vec<f64>, CoreError> {
    check_finite(a, "a")?;
    check_finite(b, "b")?;
    if a.is_empty() || b.is_empty() {
        return Err(CoreError::Value(
            "a and b must both be non-empty for an unpaired bootstrap".into(),
        ));
    }
    let (na, nb) = (a.len() as f64, b.len() as f64);
    Ok(per_replicate(n_resamples, |r| {
        let mut stream = Stream::new(seed, r as u64);
        let sum_a = resample_sum(a, &mut stream);
        let sum_b = resample_sum(b, &mut stream);
        sum_b / nb - sum_a / na
    }))
}

/// `n_perm` sign-flipped means of `diffs`: permutation `p` takes one value of `Stream(seed, p)`
/// per difference, in order, and flips its sign when the top bit is 1.
pub fn sign_flip_means(diffs: &[f64], n_perm: usize, seed: u64) -> Result<Vec<f64>, CoreError> {
    check_finite(diffs, "diffs")?;
    if diffs.is_empty() {
        return Err(CoreError::Value(
            "diffs is empty: a sign-flip test needs at least one paired difference".into(),
        ));
    }
    let n = diffs.len() as f64;
    Ok(per_replicate(n_perm, |p| {
        let mut stream = Stream::new(seed, p as u64);
        let mut total = 0.0;
        for &v in diffs {
            total += if stream.next_u64() >> 63 == 1 { -v } else { v };
        }
        total / n
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_values_give_constant_means() {
        assert_eq!(bootstrap_means(&[2.0, 2.0], 3, 0).unwrap(), vec![2.0; 3]);
        assert_eq!(
            bootstrap_mean_diff(&[0.0], &[1.0], 2, 3).unwrap(),
            vec![1.0; 2]
        );
    }

    #[test]
    fn sign_flips_keep_magnitude_for_equal_diffs() {
        for m in sign_flip_means(&[1.0, 1.0], 50, 4).unwrap() {
            assert!(m == 1.0 || m == 0.0 || m == -1.0);
        }
    }

    #[test]
    fn bad_input_is_named() {
        let err = bootstrap_means(&[1.0, f64::NAN], 1, 0).unwrap_err();
        assert_eq!(
            err.to_string(),
            "values[1] is not finite (nan); drop or fix it before resampling"
        );
        assert!(bootstrap_means(&[], 1, 0).is_err());
        assert!(sign_flip_means(&[], 1, 0).is_err());
        assert!(bootstrap_mean_diff(&[1.0], &[], 1, 0).is_err());
    }

    #[test]
    fn replicates_do_not_depend_on_how_many_are_asked_for() {
        let few = bootstrap_means(&[1.0, 5.0, 9.0], 3, 11).unwrap();
        let many = bootstrap_means(&[1.0, 5.0, 9.0], 300, 11).unwrap();
        assert_eq!(few[..], many[..3]);
    }
}
