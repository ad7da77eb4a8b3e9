//! Resampling (`crate::bootstrap`): bootstrap means and the sign-flip permutation null.

use pyo3::prelude::*;

use super::args::{named_count_arg, seed_arg};
use super::arrays::new_array;
use super::buffers::float_buffer;
use crate::error::CoreError;

/// `n_resamples` bootstrap means of `values` (one splitmix64 stream per replicate).
#[pyfunction]
pub(super) fn bootstrap_means<'py>(
    py: Python<'py>,
    values: &Bound<'py, PyAny>,
    n_resamples: &Bound<'py, PyAny>,
    seed: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    one_sample(
        py,
        values,
        n_resamples,
        "n_resamples",
        seed,
        crate::bootstrap::bootstrap_means,
    )
}

/// `n_resamples` unpaired bootstrap values of `mean(b*) - mean(a*)`.
#[pyfunction]
pub(super) fn bootstrap_mean_diff<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    n_resamples: &Bound<'py, PyAny>,
    seed: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let seed = seed_arg(seed, "seed")?;
    let count = named_count_arg(n_resamples, "n_resamples")?;
    let a = float_buffer(a)?;
    crate::bootstrap::check_finite(&a, "a")?;
    let b = float_buffer(b)?;
    let out = py.detach(|| crate::bootstrap::bootstrap_mean_diff(&a, &b, count, seed))?;
    new_array(py, "d", &out)
}

/// `n_perm` sign-flipped means of `diffs` (a paired permutation null).
#[pyfunction]
pub(super) fn sign_flip_means<'py>(
    py: Python<'py>,
    diffs: &Bound<'py, PyAny>,
    n_perm: &Bound<'py, PyAny>,
    seed: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    one_sample(
        py,
        diffs,
        n_perm,
        "n_perm",
        seed,
        crate::bootstrap::sign_flip_means,
    )
}

/// A `crate::bootstrap` kernel over one sample: `(values, count, seed)` to `count` values.
type OneSampleKernel = fn(&[f64], usize, u64) -> Result<Vec<f64>, CoreError>;

/// A one-sample resampling: `seed`, the replicate `count` (named `what` in its errors), then
/// `values` are read in the pure backend's order; `kernel` runs without the GIL.
fn one_sample<'py>(
    py: Python<'py>,
    values: &Bound<'py, PyAny>,
    count: &Bound<'py, PyAny>,
    what: &str,
    seed: &Bound<'py, PyAny>,
    kernel: OneSampleKernel,
) -> PyResult<Bound<'py, PyAny>> {
    let seed = seed_arg(seed, "seed")?;
    let count = named_count_arg(count, what)?;
    let values = float_buffer(values)?;
    let out = py.detach(|| kernel(&values, count, seed))?;
    new_array(py, "d", &out)
}
