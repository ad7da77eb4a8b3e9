//! The within-group correlation scan (`crate::scan`, docs/kernels.md "Scan"): a row-major
//! matrix copied in, or a column-major one held in place while the GIL is released.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt, PyTuple};

use super::args::{count_arg, default_empty_tuple, default_int, named_count_arg, seed_arg};
use super::arrays::new_array;
use super::buffers::{float_buffer, held, int_buffer, Held};
use crate::error::CoreError;

/// The within-group correlation scan: `(rho, floor, support)` as `array('d')`, `array('d')`,
/// `array('q')`; with `conjoin` and `top`, each permutation repeats the conjunction search.
#[allow(clippy::too_many_arguments)]
#[pyfunction]
#[pyo3(signature = (indptr, indices, values, n_features, groups, reward, n_perm = default_int(0), seed = default_int(0), conjoin = default_empty_tuple(), top = default_int(0)),
       text_signature = "(indptr, indices, values, n_features, groups, reward, n_perm=0, seed=0, conjoin=(), top=0)")]
pub(super) fn within_group_scan<'py>(
    py: Python<'py>,
    indptr: &Bound<'py, PyAny>,
    indices: &Bound<'py, PyAny>,
    values: &Bound<'py, PyAny>,
    n_features: &Bound<'py, PyAny>,
    groups: &Bound<'py, PyAny>,
    reward: &Bound<'py, PyAny>,
    n_perm: Py<PyAny>,
    seed: Py<PyAny>,
    conjoin: Py<PyAny>,
    top: Py<PyAny>,
) -> PyResult<ScanArrays<'py>> {
    let features_ok = !n_features.is_instance_of::<PyBool>()
        && n_features.is_instance_of::<PyInt>()
        && !n_features.lt(0)?;
    if !features_ok {
        return Err(PyValueError::new_err(format!(
            "n_features must be an int >= 0, got {}",
            n_features.repr()?
        )));
    }
    let n_features = n_features.extract::<usize>()?;
    let (indptr, indices, values) = (
        int_buffer(indptr)?,
        int_buffer(indices)?,
        float_buffer(values)?,
    );
    let (groups, reward) = (int_buffer(groups)?, float_buffer(reward)?);
    let input = crate::scan::ScanInput {
        indptr: &indptr,
        indices: &indices,
        values: &values,
        n_features,
        groups: &groups,
        reward: &reward,
    };
    crate::scan::check_input(&input)?;
    let args = (&n_perm, &seed, &conjoin, &top);
    let got = searched(py, args, n_features, |n_perm, seed, search| {
        crate::scan::within_group_scan(&input, n_perm, seed, search)
    })?;
    scan_arrays(py, got)
}

/// Read `n_perm`, `seed`, `conjoin` (checked against `n_features`) and `top` in the pure
/// backend's order, then run `scan` with them without the GIL: what both scan bindings do after
/// the matrix.
fn searched<T: Send>(
    py: Python<'_>,
    (n_perm, seed, conjoin, top): ScanArgs<'_>,
    n_features: usize,
    scan: impl FnOnce(usize, u64, &crate::scan::Conjoin<'_>) -> Result<T, CoreError> + Send,
) -> PyResult<T> {
    let n_perm = count_arg(n_perm.bind(py))?;
    let seed = seed_arg(seed.bind(py), "seed")?;
    let columns = int_buffer(conjoin.bind(py))?;
    crate::scan::check_conjoin(&columns, n_features)?;
    let top = named_count_arg(top.bind(py), "top")?;
    let search = crate::scan::Conjoin {
        columns: &columns,
        top,
    };
    Ok(py.detach(|| scan(n_perm, seed, &search))?)
}

/// A scan's `(rho, floor, support)` as `array('d')`, `array('d')`, `array('q')`.
type ScanArrays<'py> = (Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>);

fn scan_arrays<'py>(
    py: Python<'py>,
    (rho, floor, support): crate::scan::ScanOutput,
) -> PyResult<ScanArrays<'py>> {
    Ok((
        new_array(py, "d", &rho)?,
        new_array(py, "d", &floor)?,
        new_array(py, "q", &support)?,
    ))
}

/// `n_perm`, `seed`, `conjoin` and `top` of a scan, as given.
type ScanArgs<'a> = (&'a Py<PyAny>, &'a Py<PyAny>, &'a Py<PyAny>, &'a Py<PyAny>);

/// Check the matrix, then the other arguments (the pure backend's order), then scan without
/// the GIL.
fn scan_held<R: crate::scan::RowId + Into<i64>>(
    py: Python<'_>,
    input: &crate::scan::ColumnInput<'_, R>,
    args: ScanArgs<'_>,
) -> PyResult<crate::scan::ScanOutput> {
    crate::scan::check_columns(input)?;
    searched(py, args, input.ptr.len() - 1, |n_perm, seed, search| {
        crate::scan::within_group_scan_columns(input, n_perm, seed, search)
    })
}

/// The scan of a column-major matrix read in place (`within_group_scan`'s results for the
/// same cells): column `j`'s rows are `rows[ptr[j]:ptr[j+1]]`, its values
/// `values[vptr[j]:vptr[j+1]]` (one per row, or none: all 1.0).
#[allow(clippy::too_many_arguments)]
#[pyfunction]
#[pyo3(signature = (ptr, rows, vptr, values, groups, reward, n_perm = default_int(0), seed = default_int(0), conjoin = default_empty_tuple(), top = default_int(0)),
       text_signature = "(ptr, rows, vptr, values, groups, reward, n_perm=0, seed=0, conjoin=(), top=0)")]
pub(super) fn within_group_scan_columns<'py>(
    py: Python<'py>,
    ptr: &Bound<'py, PyAny>,
    rows: &Bound<'py, PyAny>,
    vptr: &Bound<'py, PyAny>,
    values: &Bound<'py, PyAny>,
    groups: &Bound<'py, PyAny>,
    reward: &Bound<'py, PyAny>,
    n_perm: Py<PyAny>,
    seed: Py<PyAny>,
    conjoin: Py<PyAny>,
    top: Py<PyAny>,
) -> PyResult<ScanArrays<'py>> {
    let args = (&n_perm, &seed, &conjoin, &top);
    let got = HeldMatrix::read_held(
        [ptr, rows, vptr, values, groups, reward],
        |input| scan_held(py, input, args),
        |input| scan_held(py, input, args),
    )?;
    scan_arrays(py, got)
}

/// A column-major matrix's arrays held in place: `ptr`, `rows` (`'i'` or `'q'`), `vptr`,
/// `values`, `groups`, `reward`.
struct HeldMatrix<'py>([Held<'py>; 6]);

impl<'py> HeldMatrix<'py> {
    /// Hold the arrays, call `narrow` or `wide` with the matrix (see [`Self::read`]), then let
    /// the arrays go; an error in letting go comes before the call's own.
    fn read_held<T>(
        arrays: [&Bound<'py, PyAny>; 6],
        narrow: impl FnOnce(&crate::scan::ColumnInput<'_, i32>) -> PyResult<T>,
        wide: impl FnOnce(&crate::scan::ColumnInput<'_, i64>) -> PyResult<T>,
    ) -> PyResult<T> {
        let matrix = HeldMatrix::new(arrays)?;
        let got = matrix.read(narrow, wide);
        matrix.release()?;
        got
    }

    fn new([ptr, rows, vptr, values, groups, reward]: [&Bound<'py, PyAny>; 6]) -> PyResult<Self> {
        Ok(HeldMatrix([
            held(ptr, &["q"], "q")?,
            held(rows, &["i", "q"], "q")?,
            held(vptr, &["q"], "q")?,
            held(values, &["d"], "d")?,
            held(groups, &["q"], "q")?,
            held(reward, &["d"], "d")?,
        ]))
    }

    /// Call `narrow` or `wide` (the same code for either row type) with the matrix.
    fn read<T>(
        &self,
        narrow: impl FnOnce(&crate::scan::ColumnInput<'_, i32>) -> T,
        wide: impl FnOnce(&crate::scan::ColumnInput<'_, i64>) -> T,
    ) -> T {
        let [ptr, rows, vptr, values, groups, reward] = &self.0;
        // SAFETY: each slice's type is its array's typecode ('q': i64, 'i': i32, 'd': f64).
        unsafe {
            let (ptr, vptr, values, groups, reward) = (
                ptr.slice::<i64>(),
                vptr.slice::<i64>(),
                values.slice::<f64>(),
                groups.slice::<i64>(),
                reward.slice::<f64>(),
            );
            if rows.typecode == "i" {
                narrow(&crate::scan::ColumnInput {
                    ptr,
                    rows: rows.slice::<i32>(),
                    vptr,
                    values,
                    groups,
                    reward,
                })
            } else {
                wide(&crate::scan::ColumnInput {
                    ptr,
                    rows: rows.slice::<i64>(),
                    vptr,
                    values,
                    groups,
                    reward,
                })
            }
        }
    }

    fn release(&self) -> PyResult<()> {
        for h in &self.0 {
            h.release()?;
        }
        Ok(())
    }
}

/// Check the matrix, then `n_perm` and `seed`, then sum each block's partials without the GIL.
fn partials_held<R: crate::scan::RowId + Into<i64>>(
    py: Python<'_>,
    input: &crate::scan::ColumnInput<'_, R>,
    n_perm: &Bound<'_, PyAny>,
    seed: &Bound<'_, PyAny>,
) -> PyResult<crate::scan::Partials> {
    crate::scan::check_columns(input)?;
    let (n_perm, seed) = (count_arg(n_perm)?, seed_arg(seed, "seed")?);
    Ok(py.detach(|| crate::scan::partials_checked(input, n_perm, seed)))
}

/// Each block's partial sums of the scan of a column-major matrix (docs/kernels.md, "Scan"):
/// `(blocks, var_r, support, var_x, cov, perm_cov)` as `array('q')`, `array('d')`,
/// `array('q')`, `array('d')`, `array('d')`, `array('d')`.
#[allow(clippy::too_many_arguments)]
#[pyfunction]
#[pyo3(signature = (ptr, rows, vptr, values, groups, reward, n_perm = default_int(0), seed = default_int(0)),
       text_signature = "(ptr, rows, vptr, values, groups, reward, n_perm=0, seed=0)")]
pub(super) fn within_group_scan_partials<'py>(
    py: Python<'py>,
    ptr: &Bound<'py, PyAny>,
    rows: &Bound<'py, PyAny>,
    vptr: &Bound<'py, PyAny>,
    values: &Bound<'py, PyAny>,
    groups: &Bound<'py, PyAny>,
    reward: &Bound<'py, PyAny>,
    n_perm: Py<PyAny>,
    seed: Py<PyAny>,
) -> PyResult<Bound<'py, PyTuple>> {
    let (n_perm, seed) = (n_perm.bind(py), seed.bind(py));
    let got = HeldMatrix::read_held(
        [ptr, rows, vptr, values, groups, reward],
        |input| partials_held(py, input, n_perm, seed),
        |input| partials_held(py, input, n_perm, seed),
    )?;
    PyTuple::new(
        py,
        [
            new_array(py, "q", &got.blocks)?,
            new_array(py, "d", &got.var_r)?,
            new_array(py, "q", &got.support)?,
            new_array(py, "d", &got.var_x)?,
            new_array(py, "d", &got.cov)?,
            new_array(py, "d", &got.perm_cov)?,
        ],
    )
}
