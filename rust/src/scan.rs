//! The within-group correlation scan and its permutation noise floor (docs/kernels.md, "Scan").
//!
//! Every float sum runs in the documented order (mixed groups by ascending id, rows ascending
//! within a group, a row's entries in CSR order), so the results equal the pure backend's.
//! Permutations are independent units (one stream each) and run in parallel. With a
//! [`Conjoin`] search, every permutation also repeats the caller's conjunction search on its
//! shuffled reward, so the floor holds the chosen conjunctions to the same choice.

use std::collections::BTreeMap;

use rayon::prelude::*;

use crate::error::{float_repr, CoreError};
use crate::rng::Stream;

/// A sparse matrix in CSR form with one group id and one reward per row.
pub struct ScanInput<'a> {
    pub indptr: &'a [i64],
    pub indices: &'a [i64],
    pub values: &'a [f64],
    pub n_features: usize,
    pub groups: &'a [i64],
    pub reward: &'a [f64],
}

/// `(rho per feature, max |rho| per permutation, contributing rows per feature)`.
pub type ScanOutput = (Vec<f64>, Vec<f64>, Vec<i64>);

/// The conjunction search repeated under every permutation: the `top` columns of `columns`
/// (distinct ids) with the largest non-zero |rho| against the shuffled reward are paired, and
/// the AND of each pair (1.0 where both columns are non-zero) counts toward the maximum.
#[derive(Clone, Copy, Debug, Default)]
pub struct Conjoin<'a> {
    pub columns: &'a [i64],
    pub top: usize,
}

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

/// Python's `min(1.0, max(-1.0, x))` (NaN-aware the way Python's builtins are).
#[inline]
fn clamp_unit(x: f64) -> f64 {
    let lifted = if x > -1.0 { x } else { -1.0 };
    if lifted < 1.0 {
        lifted
    } else {
        1.0
    }
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

fn sequential_mean(values: impl Iterator<Item = f64>) -> f64 {
    let mut total = 0.0;
    let mut count = 0usize;
    for v in values {
        total += v;
        count += 1;
    }
    total / count as f64
}

/// One feature's centred contributions (row ids and values) and its correlation denominator.
struct Feature {
    rows: Vec<usize>,
    values: Vec<f64>,
    denom: f64,
}

/// The scan: `rho` per feature, the permutation noise floor, and support per feature.
pub fn within_group_scan(
    input: &ScanInput<'_>,
    n_perm: usize,
    seed: u64,
    search: &Conjoin<'_>,
) -> Result<ScanOutput, CoreError> {
    check_input(input)?;
    check_conjoin(search.columns, input.n_features)?;
    let n_rows = input.groups.len();

    // Mixed groups, by ascending id, each with its rows ascending.
    let mut members: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
    for (i, &g) in input.groups.iter().enumerate() {
        members.entry(g).or_default().push(i);
    }
    let reward = input.reward;
    let mut centred = vec![0.0f64; n_rows];
    let mut mixed: Vec<Vec<usize>> = Vec::new();
    for rows in members.into_values() {
        if rows.len() < 2 {
            continue;
        }
        let first = reward[rows[0]];
        if rows.iter().all(|&i| reward[i] == first) {
            continue;
        }
        let mean = sequential_mean(rows.iter().map(|&i| reward[i]));
        for &i in &rows {
            centred[i] = reward[i] - mean;
        }
        mixed.push(rows);
    }
    let mut var_r = 0.0;
    for rows in &mixed {
        for &i in rows {
            var_r += centred[i] * centred[i];
        }
    }

    // Which mixed group (by position) each row belongs to.
    let mut group_of = vec![usize::MAX; n_rows];
    for (g, rows) in mixed.iter().enumerate() {
        for &i in rows {
            group_of[i] = g;
        }
    }

    // Per feature, (row, summed value) in ascending row order; duplicates add from 0.0.
    let mut cells: Vec<Vec<(usize, f64)>> = vec![Vec::new(); input.n_features];
    for (i, &g) in group_of.iter().enumerate() {
        if g == usize::MAX {
            continue;
        }
        for k in input.indptr[i] as usize..input.indptr[i + 1] as usize {
            let col = &mut cells[input.indices[k] as usize];
            match col.last_mut() {
                Some((row, sum)) if *row == i => *sum += input.values[k],
                _ => col.push((i, 0.0 + input.values[k])),
            }
        }
    }

    let features: Vec<Feature> = cells
        .par_iter()
        .map_init(
            || vec![0.0f64; n_rows],
            |scratch, col| feature_contributions(col, &mixed, &group_of, var_r, scratch),
        )
        .collect();

    let mut rho = vec![0.0; input.n_features];
    let mut support = vec![0i64; input.n_features];
    for (j, f) in features.iter().enumerate() {
        if f.denom > 0.0 {
            let mut cov = 0.0;
            for (&i, &c) in f.rows.iter().zip(&f.values) {
                cov += c * centred[i];
            }
            rho[j] = clamp_unit(cov / f.denom);
        }
        support[j] = f.rows.len() as i64;
    }

    let active: Vec<(usize, &Feature)> = features
        .iter()
        .enumerate()
        .filter(|(_, f)| f.denom > 0.0)
        .collect();
    let mut is_candidate = vec![false; input.n_features];
    if search.top >= 2 {
        for &j in search.columns {
            is_candidate[j as usize] = true;
        }
    }
    // Permutations in blocks of LANES: lane l of a block accumulates permutation p's covariance
    // with exactly the scalar sequence of operations (same order, no fused multiply-add), so the
    // lanes only let the independent sums share one pass over the feature's rows.
    let mut floor = vec![0.0; n_perm];
    floor
        .par_chunks_mut(LANES)
        .enumerate()
        .for_each(|(block, slots)| {
            let width = slots.len();
            let mut shuffled = centred.clone();
            let mut lanes = vec![0.0f64; n_rows * LANES];
            for (l, _) in slots.iter().enumerate() {
                shuffled.copy_from_slice(&centred);
                let mut stream = Stream::new(seed, (block * LANES + l) as u64);
                for rows in &mixed {
                    for k in (1..rows.len()).rev() {
                        let m = stream.below(k as u64 + 1) as usize;
                        shuffled.swap(rows[k], rows[m]);
                    }
                }
                for (i, &v) in shuffled.iter().enumerate() {
                    lanes[i * LANES + l] = v;
                }
            }
            let mut top = [0.0f64; LANES];
            let mut strong: [Vec<(f64, usize)>; LANES] = Default::default();
            for &(j, f) in &active {
                let cov = lane_covariances(f, &lanes);
                for l in 0..width {
                    let value = clamp_unit(cov[l] / f.denom).abs();
                    if value > top[l] {
                        top[l] = value;
                    }
                    if is_candidate[j] && value > 0.0 {
                        strong[l].push((value, j));
                    }
                }
            }
            if strong.iter().any(|s| s.len() >= 2) {
                let pairs = chosen_pairs(&mut strong, search.top);
                let mut scratch = vec![0.0f64; n_rows];
                let groups = Groups {
                    mixed: &mixed,
                    group_of: &group_of,
                    var_r,
                };
                for ((a, b), lanes_of) in pairs {
                    let col = and_column(&cells[a], &cells[b]);
                    let Some((denom, cov)) = and_covariances(&col, &groups, &lanes, &mut scratch)
                    else {
                        continue;
                    };
                    for l in (0..width).filter(|l| lanes_of & (1 << l) != 0) {
                        let value = clamp_unit(cov[l] / denom).abs();
                        if value > top[l] {
                            top[l] = value;
                        }
                    }
                }
            }
            slots.copy_from_slice(&top[..width]);
        });
    Ok((rho, floor, support))
}

const LANES: usize = 8;

/// One feature's covariance with the shuffled reward of every lane (rows in order, no FMA).
fn lane_covariances(f: &Feature, lanes: &[f64]) -> [f64; LANES] {
    let mut cov = [0.0f64; LANES];
    for (&i, &c) in f.rows.iter().zip(&f.values) {
        let row = &lanes[i * LANES..i * LANES + LANES];
        for l in 0..LANES {
            cov[l] += c * row[l];
        }
    }
    cov
}

/// Per lane, the `top` strongest candidates (|rho| descending, then column ascending); returns
/// every pair of them once, keyed `(low column, high column)`, with a bit per lane that wants it.
fn chosen_pairs(
    strong: &mut [Vec<(f64, usize)>; LANES],
    top: usize,
) -> BTreeMap<(usize, usize), u16> {
    let mut pairs = BTreeMap::new();
    for (l, cands) in strong.iter_mut().enumerate() {
        cands.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)));
        cands.truncate(top);
        for (x, &(_, a)) in cands.iter().enumerate() {
            for &(_, b) in &cands[x + 1..] {
                *pairs.entry((a.min(b), a.max(b))).or_insert(0u16) |= 1 << l;
            }
        }
    }
    pairs
}

/// The rows (ascending) of the AND of two columns: where both hold a non-zero value.
fn and_column(a: &[(usize, f64)], b: &[(usize, f64)]) -> Vec<usize> {
    let (mut x, mut y) = (0, 0);
    let mut out = Vec::new();
    while x < a.len() && y < b.len() {
        match a[x].0.cmp(&b[y].0) {
            std::cmp::Ordering::Less => x += 1,
            std::cmp::Ordering::Greater => y += 1,
            std::cmp::Ordering::Equal => {
                if a[x].1 != 0.0 && b[y].1 != 0.0 {
                    out.push(a[x].0);
                }
                x += 1;
                y += 1;
            }
        }
    }
    out
}

/// The mixed groups (by position), each row's group position, and the reward's sum of squares.
struct Groups<'a> {
    mixed: &'a [Vec<usize>],
    group_of: &'a [usize],
    var_r: f64,
}

/// An AND column's `denom` and its covariance with every lane, or None when `denom` is 0.
///
/// The same floats as [`feature_contributions`] then [`lane_covariances`] on the column with
/// value 1.0 on `rows`: the dense values are 0.0 and 1.0, so a group varies exactly when it
/// holds some but not all of `rows`, its sequential sum is the exact count, and each centred
/// value `c` is added to `var_x` and to the lanes in the same row order, in one pass and
/// without storing the contributions.
fn and_covariances(
    rows: &[usize],
    groups: &Groups<'_>,
    lanes: &[f64],
    scratch: &mut [f64],
) -> Option<(f64, [f64; LANES])> {
    let mut touched: Vec<usize> = rows.iter().map(|&i| groups.group_of[i]).collect();
    touched.sort_unstable();
    touched.dedup();
    for &i in rows {
        scratch[i] = 1.0;
    }
    let mut var_x = 0.0;
    let mut cov = [0.0f64; LANES];
    for &g in &touched {
        let members = &groups.mixed[g];
        let count = members.iter().filter(|&&i| scratch[i] != 0.0).count();
        if count == members.len() {
            continue;
        }
        let mean = sequential_mean(members.iter().map(|&i| scratch[i]));
        for &i in members {
            let c = scratch[i] - mean;
            var_x += c * c;
            let row = &lanes[i * LANES..i * LANES + LANES];
            for l in 0..LANES {
                cov[l] += c * row[l];
            }
        }
    }
    for &i in rows {
        scratch[i] = 0.0;
    }
    if var_x > 0.0 && groups.var_r > 0.0 {
        Some(((var_x * groups.var_r).sqrt(), cov))
    } else {
        None
    }
}

/// Centre one feature within every mixed group where it varies (groups in order).
fn feature_contributions(
    col: &[(usize, f64)],
    mixed: &[Vec<usize>],
    group_of: &[usize],
    var_r: f64,
    scratch: &mut [f64],
) -> Feature {
    let mut rows_j = Vec::new();
    let mut vals_j = Vec::new();
    // Only groups holding an entry can vary: elsewhere every value is 0.0.
    let mut touched: Vec<usize> = col.iter().map(|&(i, _)| group_of[i]).collect();
    touched.sort_unstable();
    touched.dedup();
    // The column scattered into an all-zero row buffer (reset before returning): a row's value
    // is its entry, or 0.0 where it has none.
    for &(i, v) in col {
        scratch[i] = v;
    }
    let mut dense = Vec::new();
    for &g in &touched {
        let rows = &mixed[g];
        dense.clear();
        dense.extend(rows.iter().map(|&i| scratch[i]));
        let first = dense[0];
        if dense.iter().all(|&v| v == first) {
            continue;
        }
        let mean = sequential_mean(dense.iter().copied());
        rows_j.extend_from_slice(rows);
        vals_j.extend(dense.iter().map(|&v| v - mean));
    }
    for &(i, _) in col {
        scratch[i] = 0.0;
    }
    let mut var_x = 0.0;
    for &c in &vals_j {
        var_x += c * c;
    }
    let denom = if var_x > 0.0 && var_r > 0.0 {
        (var_x * var_r).sqrt()
    } else {
        0.0
    };
    Feature {
        rows: rows_j,
        values: vals_j,
        denom,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docstring_example() {
        let input = ScanInput {
            indptr: &[0, 1, 1, 1, 2],
            indices: &[0, 0],
            values: &[1.0, 1.0],
            n_features: 1,
            groups: &[0, 0, 1, 1],
            reward: &[1.0, 0.0, 0.0, 1.0],
        };
        let (rho, floor, support) = within_group_scan(&input, 2, 0, &Conjoin::default()).unwrap();
        assert_eq!(rho, vec![1.0]);
        assert_eq!(floor.len(), 2);
        assert_eq!(support, vec![4]);
    }

    #[test]
    fn uniform_groups_take_no_part() {
        let input = ScanInput {
            indptr: &[0, 1, 1],
            indices: &[0],
            values: &[1.0],
            n_features: 1,
            groups: &[0, 0],
            reward: &[1.0, 1.0],
        };
        let (rho, floor, support) = within_group_scan(&input, 3, 0, &Conjoin::default()).unwrap();
        assert_eq!((rho, floor, support), (vec![0.0], vec![0.0; 3], vec![0]));
    }

    #[test]
    fn bad_index_is_named() {
        let input = ScanInput {
            indptr: &[0, 1],
            indices: &[5],
            values: &[1.0],
            n_features: 2,
            groups: &[0],
            reward: &[1.0],
        };
        let err = within_group_scan(&input, 0, 0, &Conjoin::default()).unwrap_err();
        assert_eq!(err.to_string(), "indices[0] = 5 is outside [0, 2)");
    }
}
