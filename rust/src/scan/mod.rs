//! The within-group correlation scan and its permutation noise floor (docs/kernels.md, "Scan").
//!
//! Every float sum runs in the documented order (within each block of [`BLOCK`] asks: mixed
//! groups by ascending id, rows ascending within a group, a row's entries in CSR order; then the
//! block partials in block order), so the results equal the pure backend's, and a cluster can
//! sum each block where its rows live ([`within_group_scan_partials`]). Each permutation shuffles
//! each ask with a stream of its own; permutations run in parallel. With a
//! [`Conjoin`] search, every permutation also repeats the caller's conjunction search on its
//! shuffled reward, so the floor holds the chosen conjunctions to the same choice.

mod checks;
mod kernel;

pub use checks::{check_columns, check_conjoin, check_input};

use std::collections::BTreeMap;

use crate::error::CoreError;
use kernel::{block_partials, scan_dispatch, Columns};

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

fn sequential_mean(values: impl Iterator<Item = f64>) -> f64 {
    let mut total = 0.0;
    let mut count = 0usize;
    for v in values {
        total += v;
        count += 1;
    }
    total / count as f64
}

/// A row id as the caller stores it (`array('i')` or `array('q')`), or as a feature keeps it.
pub trait RowId: Copy + Send + Sync {
    fn index(self) -> usize;
    fn from_index(i: usize) -> Self;
}

// Ids are below the row count, which fits every type the callers store them in.
macro_rules! row_id {
    ($($t:ty),*) => {$(
        impl RowId for $t {
            #[inline]
            fn index(self) -> usize {
                self as usize
            }
            #[inline]
            fn from_index(i: usize) -> Self {
                i as $t
            }
        }
    )*};
}

row_id!(i32, i64, u32, usize);

/// A column-major matrix with one group id and one reward per row (docs/kernels.md, "Scan").
///
/// Column `j`'s rows are `rows[ptr[j]..ptr[j + 1]]`, strictly ascending; its values are
/// `values[vptr[j]..vptr[j + 1]]`, one per row, or none at all: then every value is 1.0 (a
/// binary column stores its rows only).
pub struct ColumnInput<'a, R> {
    pub ptr: &'a [i64],
    pub rows: &'a [R],
    pub vptr: &'a [i64],
    pub values: &'a [f64],
    pub groups: &'a [i64],
    pub reward: &'a [f64],
}

/// Asks per block: ask `g` is in block `g / BLOCK`. Every sum across asks runs within a block
/// (asks ascending, rows ascending) from 0.0, then the block partials are added in block order,
/// so a cluster can sum each block where its rows live (docs/kernels.md, "Scan").
pub const BLOCK: i64 = 1024;

/// A sum across asks in the block order: a partial per block, added to the total when the
/// next block begins. Blocks must be entered in ascending order.
#[derive(Clone, Copy)]
struct BlockedSum {
    total: f64,
    part: f64,
    block: u64,
}

impl BlockedSum {
    fn new() -> Self {
        BlockedSum {
            total: 0.0,
            part: 0.0,
            block: u64::MAX,
        }
    }

    /// Start adding the terms of `block` (a no-op while it is the current one).
    #[inline]
    fn enter(&mut self, block: u64) {
        if block != self.block {
            self.total += self.part;
            self.part = 0.0;
            self.block = block;
        }
    }

    #[inline]
    fn add(&mut self, x: f64) {
        self.part += x;
    }

    fn value(&self) -> f64 {
        self.total + self.part
    }
}

/// The mixed groups (ascending id, rows ascending), each one's ask id and block, each row's
/// mixed-group position (`usize::MAX` outside them), the centred reward and its sum of
/// squares.
struct Mixed {
    mixed: Vec<Vec<usize>>,
    asks: Vec<i64>,
    block: Vec<u64>,
    group_of: Vec<usize>,
    centred: Vec<f64>,
    var_r: f64,
}

impl Mixed {
    fn new(mixed: Vec<Vec<usize>>, asks: Vec<i64>, centred: Vec<f64>) -> Self {
        let block: Vec<u64> = asks.iter().map(|&a| (a / BLOCK) as u64).collect();
        let mut var_r = BlockedSum::new();
        let mut group_of = vec![usize::MAX; centred.len()];
        for (g, rows) in mixed.iter().enumerate() {
            var_r.enter(block[g]);
            for &i in rows {
                var_r.add(centred[i] * centred[i]);
                group_of[i] = g;
            }
        }
        Mixed {
            mixed,
            asks,
            block,
            group_of,
            centred,
            var_r: var_r.value(),
        }
    }

    /// The mixed groups of one block only (its sums are that block's partials).
    fn only_block(&self, block: u64) -> Mixed {
        let keep: Vec<usize> = (0..self.mixed.len())
            .filter(|&g| self.block[g] == block)
            .collect();
        Mixed::new(
            keep.iter().map(|&g| self.mixed[g].clone()).collect(),
            keep.iter().map(|&g| self.asks[g]).collect(),
            self.centred.clone(),
        )
    }
}

fn mixed_groups(groups: &[i64], reward: &[f64]) -> Mixed {
    let n_rows = groups.len();
    let mut members: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
    for (i, &g) in groups.iter().enumerate() {
        members.entry(g).or_default().push(i);
    }
    let mut centred = vec![0.0f64; n_rows];
    let mut mixed: Vec<Vec<usize>> = Vec::new();
    let mut asks = Vec::new();
    for (ask, rows) in members {
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
        asks.push(ask);
    }
    Mixed::new(mixed, asks, centred)
}

/// The scan of a CSR matrix: `rho` per feature, the permutation noise floor, and support.
///
/// The rows of each feature are gathered (duplicates in a row add from 0.0, in CSR order) into
/// a column-major copy, then scanned as [`within_group_scan_columns`] scans.
pub fn within_group_scan(
    input: &ScanInput<'_>,
    n_perm: usize,
    seed: u64,
    search: &Conjoin<'_>,
) -> Result<ScanOutput, CoreError> {
    check_input(input)?;
    check_conjoin(search.columns, input.n_features)?;
    let groups = mixed_groups(input.groups, input.reward);
    // Per feature, (row, summed value) in ascending row order, rows of mixed groups only.
    let mut cells: Vec<Vec<(usize, f64)>> = vec![Vec::new(); input.n_features];
    for (i, &g) in groups.group_of.iter().enumerate() {
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
    let mut ptr = vec![0i64];
    let mut rows = Vec::new();
    let mut values = Vec::new();
    for col in cells {
        rows.extend(col.iter().map(|&(i, _)| i as i64));
        values.extend(col.iter().map(|&(_, v)| v));
        ptr.push(rows.len() as i64);
    }
    let columns = Columns {
        ptr: &ptr,
        rows: &rows,
        vptr: &ptr,
        values: &values,
    };
    Ok(scan_dispatch(&columns, &groups, n_perm, seed, search))
}

/// The scan of a column-major matrix, read in place: the same results as
/// [`within_group_scan`] on the same cells.
pub fn within_group_scan_columns<R: RowId + Into<i64>>(
    input: &ColumnInput<'_, R>,
    n_perm: usize,
    seed: u64,
    search: &Conjoin<'_>,
) -> Result<ScanOutput, CoreError> {
    check_columns(input)?;
    check_conjoin(search.columns, input.ptr.len() - 1)?;
    let groups = mixed_groups(input.groups, input.reward);
    let columns = Columns {
        ptr: input.ptr,
        rows: input.rows,
        vptr: input.vptr,
        values: input.values,
    };
    Ok(scan_dispatch(&columns, &groups, n_perm, seed, search))
}

/// Each block's partial sums of a scan (docs/kernels.md, "Scan"), for blocks holding a row,
/// ascending: per block the reward's sum of squares; per block and feature (`b * n_features +
/// j`) the rows where it varies, its sum of squares and its covariance with the centred reward;
/// per block, feature and permutation (`(b * n_features + j) * n_perm + p`) its covariance with
/// that permutation's shuffled reward.
pub struct Partials {
    pub blocks: Vec<i64>,
    pub var_r: Vec<f64>,
    pub support: Vec<i64>,
    pub var_x: Vec<f64>,
    pub cov: Vec<f64>,
    pub perm_cov: Vec<f64>,
}

/// The partial sums of each block of a column-major matrix's scan: added in block order, the
/// sums [`within_group_scan_columns`] makes (the rows should hold whole blocks).
pub fn within_group_scan_partials<R: RowId + Into<i64>>(
    input: &ColumnInput<'_, R>,
    n_perm: usize,
    seed: u64,
) -> Result<Partials, CoreError> {
    check_columns(input)?;
    Ok(partials_checked(input, n_perm, seed))
}

/// [`within_group_scan_partials`] of a checked input.
pub fn partials_checked<R: RowId + Into<i64>>(
    input: &ColumnInput<'_, R>,
    n_perm: usize,
    seed: u64,
) -> Partials {
    let groups = mixed_groups(input.groups, input.reward);
    let blocks: std::collections::BTreeSet<i64> = input.groups.iter().map(|&g| g / BLOCK).collect();
    let columns = Columns {
        ptr: input.ptr,
        rows: input.rows,
        vptr: input.vptr,
        values: input.values,
    };
    block_partials(
        &columns,
        &groups,
        &blocks.into_iter().collect::<Vec<_>>(),
        n_perm,
        seed,
    )
}

#[cfg(test)]
mod tests;
