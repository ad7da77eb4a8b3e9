//! Resampling (`crate::bootstrap`): bootstrap means and the sign-flip permutation null.

use pyo3::prelude::*;

use super::args::{named_count_arg, seed_arg};
use super::arrays::new_array;
use super::buffers::float_buffer;

/// `n_resamples` bootstrap means of `values` (one splitmix64 stream per replicate).
#[pyfunction]
pub(super) fn bootstrap_means<'py>(
    py: Python<'py>,
    values: &Bound<'py, PyAny>,
    n_resamples: &Bound<'py, PyAny>,
    seed: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let seed = seed_arg(seed, "seed")?;
    let count = named_count_arg(n_resamples, "n_resamples")?;
    let values = float_buffer(values)?;
    let out = py.detach(|| crate::bootstrap::bootstrap_means(&values, count, seed))?;
    new_array(py, "d", &out)
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
    let seed = seed_arg(seed, "seed")?;
    let count = named_count_arg(n_perm, "n_perm")?;
    let diffs = float_buffer(diffs)?;
    let out = py.detach(|| crate::bootstrap::sign_flip_means(&diffs, count, seed))?;
    new_array(py, "d", &out)
}
