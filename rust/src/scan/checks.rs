//! The scan's input checks, in the pure backend's order and words (the same `ValueError`
//! messages from either backend).

use super::{ColumnInput, RowId, ScanInput};
use crate::error::{float_repr, CoreError};

/// Check the conjunction candidates: column ids in `[0, n_features)`, none repeated.
pub fn check_conjoin(columns: &[i64], n_features: usize) -> Result<(), CoreError> {
    let mut seen = std::collections::BTreeSet::new();
    for (k, &j) in columns.iter().enumerate() {
        if j < 0 || j as u64 >= n_features as u64 {
            return Err(CoreError::Value(format!(
                "conjoin[{k}] = {j} is outside [0, {n_features})"
            )));
        }
        if !seen.insert(j) {
            return Err(CoreError::Value(format!(
                "conjoin[{k}] = {j} repeats an earlier column"
            )));
        }
    }
    Ok(())
}

/// Check the shapes and values, in the pure backend's order and words.
pub fn check_input(input: &ScanInput<'_>) -> Result<(), CoreError> {
    let value = |msg: String| Err(CoreError::Value(msg));
    let n_rows = input.groups.len();
    if input.reward.len() != n_rows {
        return value(format!(
            "reward has {} values but groups has {n_rows}",
            input.reward.len()
        ));
    }
    if input.indptr.len() != n_rows + 1 || input.indptr[0] != 0 {
        return value(format!(
            "indptr must have {} entries starting at 0, got {}",
            n_rows + 1,
            input.indptr.len()
        ));
    }
    let last = input.indptr[n_rows];
    if input.indices.len() != input.values.len() || last != input.indices.len() as i64 {
        return value(format!(
            "indices ({}) and values ({}) must both have indptr[-1] ({last}) entries",
            input.indices.len(),
            input.values.len()
        ));
    }
    for i in 0..n_rows {
        if input.indptr[i + 1] < input.indptr[i] {
            return value(format!("indptr must not decrease (at row {i})"));
        }
        if input.groups[i] < 0 {
            return value(format!("groups[{i}] must be >= 0, got {}", input.groups[i]));
        }
        if !input.reward[i].is_finite() {
            return value(format!(
                "reward[{i}] must be finite, got {}",
                float_repr(input.reward[i])
            ));
        }
    }
    for (k, &j) in input.indices.iter().enumerate() {
        if j < 0 || j as u64 >= input.n_features as u64 {
            return value(format!(
                "indices[{k}] = {j} is outside [0, {})",
                input.n_features
            ));
        }
    }
    Ok(())
}

/// Check a column-major input, in the pure backend's order and words.
pub fn check_columns<R: RowId + Into<i64>>(input: &ColumnInput<'_, R>) -> Result<(), CoreError> {
    let value = |msg: String| Err(CoreError::Value(msg));
    let n_rows = input.groups.len();
    if input.reward.len() != n_rows {
        return value(format!(
            "reward has {} values but groups has {n_rows}",
            input.reward.len()
        ));
    }
    let partition = |ptr: &[i64], len: usize| {
        ptr.first() == Some(&0)
            && ptr.windows(2).all(|w| w[0] <= w[1])
            && ptr.last().map(|&l| l as u64) == Some(len as u64)
    };
    if !partition(input.ptr, input.rows.len()) {
        return value(format!(
            "ptr must run from 0 to len(rows) ({}) without decreasing",
            input.rows.len()
        ));
    }
    if input.vptr.len() != input.ptr.len() || !partition(input.vptr, input.values.len()) {
        return value(format!(
            "vptr must have {} entries running from 0 to len(values) ({}) without decreasing",
            input.ptr.len(),
            input.values.len()
        ));
    }
    for j in 0..input.ptr.len() - 1 {
        let (lo, hi) = (input.ptr[j] as usize, input.ptr[j + 1] as usize);
        let n_values = input.vptr[j + 1] - input.vptr[j];
        if n_values != 0 && n_values as usize != hi - lo {
            return value(format!(
                "column {j} has {} rows but {n_values} values (give one per row, or none for 1.0)",
                hi - lo
            ));
        }
        let mut last = -1i64;
        for k in lo..hi {
            let r: i64 = input.rows[k].into();
            if r < 0 || r as u64 >= n_rows as u64 {
                return value(format!("rows[{k}] = {r} is outside [0, {n_rows})"));
            }
            if r <= last {
                return value(format!("rows[{k}] = {r} does not ascend within column {j}"));
            }
            last = r;
        }
    }
    check_rows(input.groups, input.reward)
}

/// Every group id >= 0 and every reward finite.
fn check_rows(groups: &[i64], reward: &[f64]) -> Result<(), CoreError> {
    for (i, (&g, &r)) in groups.iter().zip(reward).enumerate() {
        if g < 0 {
            return Err(CoreError::Value(format!(
                "groups[{i}] must be >= 0, got {g}"
            )));
        }
        if !r.is_finite() {
            return Err(CoreError::Value(format!(
                "reward[{i}] must be finite, got {}",
                float_repr(r)
            )));
        }
    }
    Ok(())
}
