//! The splitmix64 streams (`crate::rng`).

use pyo3::prelude::*;

use super::args::{bound_arg, count_arg, seed_arg};
use crate::rng;

/// The first `count` raw values of the splitmix64 stream `(seed, unit)`.
#[pyfunction]
pub(super) fn splitmix64_stream(
    py: Python<'_>,
    seed: &Bound<'_, PyAny>,
    unit: &Bound<'_, PyAny>,
    count: &Bound<'_, PyAny>,
) -> PyResult<Vec<u64>> {
    let (seed, unit) = stream_key(seed, unit)?;
    let count = count_arg(count)?;
    Ok(py.detach(|| rng::splitmix64_stream(seed, unit, count)))
}

/// `count` floats in [0, 1) from the stream `(seed, unit)`.
#[pyfunction]
pub(super) fn uniform_floats(
    py: Python<'_>,
    seed: &Bound<'_, PyAny>,
    unit: &Bound<'_, PyAny>,
    count: &Bound<'_, PyAny>,
) -> PyResult<Vec<f64>> {
    let (seed, unit) = stream_key(seed, unit)?;
    let count = count_arg(count)?;
    Ok(py.detach(|| rng::uniform_floats(seed, unit, count)))
}

/// `count` ints in [0, bound) from the stream `(seed, unit)`.
#[pyfunction]
pub(super) fn bounded_ints(
    py: Python<'_>,
    seed: &Bound<'_, PyAny>,
    unit: &Bound<'_, PyAny>,
    bound: &Bound<'_, PyAny>,
    count: &Bound<'_, PyAny>,
) -> PyResult<Vec<u64>> {
    let (seed, unit) = stream_key(seed, unit)?;
    let bound = bound_arg(bound)?;
    let count = count_arg(count)?;
    Ok(py.detach(|| rng::bounded_ints(seed, unit, bound, count))?)
}

/// The stream `(seed, unit)`: each any Python int, reduced modulo 2**64.
fn stream_key(seed: &Bound<'_, PyAny>, unit: &Bound<'_, PyAny>) -> PyResult<(u64, u64)> {
    Ok((seed_arg(seed, "seed")?, seed_arg(unit, "unit")?))
}
