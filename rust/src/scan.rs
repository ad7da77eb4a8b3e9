//! The within-group correlation scan and its permutation noise floor (docs/kernels.md, "Scan").
//!
//! Every float sum runs in the documented order (mixed groups by ascending id, rows ascending
//! within a group, a row's entries in CSR order), so the results equal the pure backend's.
//! Permutations are independent units (one stream each) and run in parallel. With a
//! [`Conjoin`] search, every permutation also repeats the caller's conjunction search on its
//! shuffled reward, so the floor holds the chosen conjunctions to the same choice.

use std::collections::{BTreeMap, HashMap};

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

/// A row id as the caller stores it (`array('i')` or `array('q')`), or as a feature keeps it.
pub trait RowId: Copy + Send + Sync {
    fn index(self) -> usize;
    fn from_index(i: usize) -> Self;
}

impl RowId for i32 {
    #[inline]
    fn index(self) -> usize {
        self as usize
    }
    #[inline]
    fn from_index(i: usize) -> Self {
        i as i32
    }
}

impl RowId for i64 {
    #[inline]
    fn index(self) -> usize {
        self as usize
    }
    #[inline]
    fn from_index(i: usize) -> Self {
        i as i64
    }
}

impl RowId for u32 {
    #[inline]
    fn index(self) -> usize {
        self as usize
    }
    #[inline]
    fn from_index(i: usize) -> Self {
        i as u32
    }
}

impl RowId for usize {
    #[inline]
    fn index(self) -> usize {
        self
    }
    #[inline]
    fn from_index(i: usize) -> Self {
        i
    }
}

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

/// The mixed groups (ascending id, rows ascending), each row's mixed-group position
/// (`usize::MAX` outside them), the centred reward and its sum of squares.
struct Mixed {
    mixed: Vec<Vec<usize>>,
    group_of: Vec<usize>,
    centred: Vec<f64>,
    var_r: f64,
}

fn mixed_groups(groups: &[i64], reward: &[f64]) -> Mixed {
    let n_rows = groups.len();
    let mut members: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
    for (i, &g) in groups.iter().enumerate() {
        members.entry(g).or_default().push(i);
    }
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
    let mut group_of = vec![usize::MAX; n_rows];
    for (g, rows) in mixed.iter().enumerate() {
        for &i in rows {
            group_of[i] = g;
        }
    }
    Mixed {
        mixed,
        group_of,
        centred,
        var_r,
    }
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

/// The checked column-major cells the scan reads.
struct Columns<'a, R> {
    ptr: &'a [i64],
    rows: &'a [R],
    vptr: &'a [i64],
    values: &'a [f64],
}

impl<R: RowId> Columns<'_, R> {
    fn n_features(&self) -> usize {
        self.ptr.len() - 1
    }

    /// Column `j`'s `(row, 0.0 + value)` cells on rows of mixed groups, rows ascending.
    fn cells<'s>(
        &'s self,
        j: usize,
        group_of: &'s [usize],
    ) -> impl Iterator<Item = (usize, f64)> + 's {
        let rows = &self.rows[self.ptr[j] as usize..self.ptr[j + 1] as usize];
        let values = &self.values[self.vptr[j] as usize..self.vptr[j + 1] as usize];
        rows.iter().enumerate().filter_map(move |(k, &r)| {
            let i = r.index();
            (group_of[i] != usize::MAX).then(|| (i, 0.0 + values.get(k).copied().unwrap_or(1.0)))
        })
    }
}

/// One feature's centred contributions and its correlation denominator. A feature contributes
/// every row of each mixed group where it varies: `groups` (ascending) names those groups and
/// `values` holds their rows' centred values end to end, so the rows are implied by
/// [`Layout`]'s positions (the rows of the mixed groups laid end to end).
struct Feature<I> {
    groups: Vec<I>,
    values: Vec<f64>,
    denom: f64,
}

/// The rows of the mixed groups by position: `start[g]..start[g + 1]` are group `g`'s.
struct Layout {
    order: Vec<usize>,
    start: Vec<usize>,
    pos_of: Vec<usize>,
    group_at: Vec<usize>,
}

impl Layout {
    fn new(groups: &Mixed) -> Self {
        let mut order = Vec::new();
        let mut start = vec![0];
        let mut pos_of = vec![usize::MAX; groups.group_of.len()];
        let mut group_at = Vec::new();
        for (g, rows) in groups.mixed.iter().enumerate() {
            for &i in rows {
                pos_of[i] = order.len();
                order.push(i);
                group_at.push(g);
            }
            start.push(order.len());
        }
        Layout {
            order,
            start,
            pos_of,
            group_at,
        }
    }

    /// Group `g`'s positions.
    fn rows(&self, g: usize) -> std::ops::Range<usize> {
        self.start[g]..self.start[g + 1]
    }
}

/// The scan with each feature's positions kept as `u32` when they fit (less memory).
fn scan_dispatch<R: RowId>(
    columns: &Columns<'_, R>,
    groups: &Mixed,
    n_perm: usize,
    seed: u64,
    search: &Conjoin<'_>,
) -> ScanOutput {
    if groups.group_of.len() <= u32::MAX as usize {
        scan_columns::<R, u32>(columns, groups, n_perm, seed, search)
    } else {
        scan_columns::<R, usize>(columns, groups, n_perm, seed, search)
    }
}

fn scan_columns<R: RowId, I: RowId>(
    columns: &Columns<'_, R>,
    groups: &Mixed,
    n_perm: usize,
    seed: u64,
    search: &Conjoin<'_>,
) -> ScanOutput {
    let n_features = columns.n_features();
    let n_rows = groups.group_of.len();
    let layout = Layout::new(groups);

    let features: Vec<Feature<I>> = (0..n_features)
        .into_par_iter()
        .map_init(
            || vec![0.0f64; n_rows],
            |scratch, j| {
                feature_contributions(|| columns.cells(j, &groups.group_of), groups, scratch)
            },
        )
        .collect();

    let mut rho = vec![0.0; n_features];
    let mut support = vec![0i64; n_features];
    for (j, f) in features.iter().enumerate() {
        if f.denom > 0.0 {
            let mut cov = 0.0;
            let rows = f.groups.iter().flat_map(|g| layout.rows(g.index()));
            for (p, &c) in rows.zip(&f.values) {
                cov += c * groups.centred[layout.order[p]];
            }
            rho[j] = clamp_unit(cov / f.denom);
        }
        support[j] = f.values.len() as i64;
    }

    let active: Vec<(usize, &Feature<I>)> = features
        .iter()
        .enumerate()
        .filter(|(_, f)| f.denom > 0.0)
        .collect();
    let mut is_candidate = vec![false; n_features];
    if search.top >= 2 {
        for &j in search.columns {
            is_candidate[j as usize] = true;
        }
    }
    // Permutations in blocks of LANES: lane l of a block accumulates permutation p's covariance
    // with exactly the scalar sequence of operations (same order, no fused multiply-add), so the
    // lanes only let the independent sums share one pass over the feature's rows.
    // An AND column's denominator does not depend on the permutation: each is summed once.
    let pair_denoms: std::sync::Mutex<HashMap<(usize, usize), f64>> = Default::default();
    let mut floor = vec![0.0; n_perm];
    floor
        .par_chunks_mut(LANES)
        .enumerate()
        .for_each(|(block, slots)| {
            let width = slots.len();
            let lanes = shuffled_lanes(groups, &layout, seed, block, width);
            let mut top = [0.0f64; LANES];
            let mut strong: [Vec<(f64, usize)>; LANES] = Default::default();
            let items: Vec<(&[I], &[f64])> = active
                .iter()
                .map(|(_, f)| (f.groups.as_slice(), f.values.as_slice()))
                .collect();
            let covs = tiled_covariances(&items, &layout, &lanes);
            for (&(j, f), cov) in active.iter().zip(&covs) {
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
                let pairs: Vec<((usize, usize), u16)> =
                    chosen_pairs(&mut strong, search.top).into_iter().collect();
                // Each paired column's non-zero cells as a bitmap by position.
                let mut bits: BTreeMap<usize, Vec<u64>> = BTreeMap::new();
                for &((a, b), _) in &pairs {
                    for j in [a, b] {
                        bits.entry(j)
                            .or_insert_with(|| position_bits(columns, j, groups, &layout));
                    }
                }
                let mut rest = pairs.as_slice();
                while !rest.is_empty() {
                    // A batch of AND columns, their contributions held at most PAIR_BATCH long.
                    let mut batch: Vec<(Feature<I>, u16)> = Vec::new();
                    let mut held = 0usize;
                    while let Some((&((a, b), lanes_of), tail)) = rest.split_first() {
                        if held >= PAIR_BATCH && !batch.is_empty() {
                            break;
                        }
                        rest = tail;
                        let known = pair_denoms
                            .lock()
                            .ok()
                            .and_then(|d| d.get(&(a, b)).copied());
                        if known == Some(0.0) {
                            continue;
                        }
                        let f =
                            and_contributions::<I>(&bits[&a], &bits[&b], groups, &layout, known);
                        if known.is_none() {
                            if let Ok(mut d) = pair_denoms.lock() {
                                d.insert((a, b), f.denom);
                            }
                        }
                        if f.denom > 0.0 {
                            held += f.values.len();
                            batch.push((f, lanes_of));
                        }
                    }
                    let items: Vec<(&[I], &[f64])> = batch
                        .iter()
                        .map(|(f, _)| (f.groups.as_slice(), f.values.as_slice()))
                        .collect();
                    let covs = tiled_covariances(&items, &layout, &lanes);
                    for ((f, lanes_of), cov) in batch.iter().zip(&covs) {
                        for l in (0..width).filter(|l| lanes_of & (1 << l) != 0) {
                            let value = clamp_unit(cov[l] / f.denom).abs();
                            if value > top[l] {
                                top[l] = value;
                            }
                        }
                    }
                }
            }
            slots.copy_from_slice(&top[..width]);
        });
    (rho, floor, support)
}

const LANES: usize = 8;
/// Positions per tile of the lanes (64 bytes each): a tile stays in cache while every feature
/// adds its contributions in it.
const TILE: usize = 4096;
/// AND-column contributions held at once per thread (12 or 16 bytes each).
const PAIR_BATCH: usize = 1 << 20;

/// The block's shuffled centred rewards by position, lane `l` at `lanes[p * LANES + l]`.
fn shuffled_lanes(
    groups: &Mixed,
    layout: &Layout,
    seed: u64,
    block: usize,
    width: usize,
) -> Vec<f64> {
    let mut shuffled = groups.centred.clone();
    let mut lanes = vec![0.0f64; layout.order.len() * LANES];
    for l in 0..width {
        shuffled.copy_from_slice(&groups.centred);
        let mut stream = Stream::new(seed, (block * LANES + l) as u64);
        for rows in &groups.mixed {
            for k in (1..rows.len()).rev() {
                let m = stream.below(k as u64 + 1) as usize;
                shuffled.swap(rows[k], rows[m]);
            }
        }
        for (p, &i) in layout.order.iter().enumerate() {
            lanes[p * LANES + l] = shuffled[i];
        }
    }
    lanes
}

/// Each item's covariance with every lane: per item `(groups, values)`, `cov[l] += c *
/// lane[p][l]` over its contributions in order (no FMA). Positions are walked a tile at a time,
/// every item resuming where it stopped, so each item's sums run in exactly their order.
fn tiled_covariances<I: RowId>(
    items: &[(&[I], &[f64])],
    layout: &Layout,
    lanes: &[f64],
) -> Vec<[f64; LANES]> {
    let n_pos = layout.order.len();
    let mut cov = vec![[0.0f64; LANES]; items.len()];
    // Per item: (index into its groups, offset within that group, index into its values).
    let mut at = vec![(0usize, 0usize, 0usize); items.len()];
    let mut lo = 0;
    while lo < n_pos {
        let hi = (lo + TILE).min(n_pos);
        for ((&(gs, vals), acc), cursor) in items.iter().zip(&mut cov).zip(&mut at) {
            let mut sum = *acc;
            let (mut s, mut off, mut k) = *cursor;
            while s < gs.len() {
                let rows = layout.rows(gs[s].index());
                let from = rows.start + off;
                if from >= hi {
                    break;
                }
                let to = rows.end.min(hi);
                let n = to - from;
                let lane_rows = lanes[from * LANES..to * LANES].chunks_exact(LANES);
                for (&c, row) in vals[k..k + n].iter().zip(lane_rows) {
                    for l in 0..LANES {
                        sum[l] += c * row[l];
                    }
                }
                k += n;
                if to == rows.end {
                    s += 1;
                    off = 0;
                } else {
                    off += n;
                    break;
                }
            }
            *acc = sum;
            *cursor = (s, off, k);
        }
        lo = hi;
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

/// Column `j`'s non-zero cells on rows of mixed groups, as a bitmap by position.
fn position_bits<R: RowId>(
    columns: &Columns<'_, R>,
    j: usize,
    groups: &Mixed,
    layout: &Layout,
) -> Vec<u64> {
    let mut bits = vec![0u64; layout.order.len().div_ceil(64)];
    for (i, v) in columns.cells(j, &groups.group_of) {
        if v != 0.0 {
            let p = layout.pos_of[i];
            bits[p / 64] |= 1 << (p % 64);
        }
    }
    bits
}

/// The contributions of the AND of two columns given as position bitmaps: the
/// [`feature_contributions`] of the column with 1.0 where both are non-zero. Its dense values
/// are 0.0 and 1.0, so a group varies exactly when it holds some but not all of those rows,
/// and its sequential sum is the exact count: the mean is `count / len`. With `denom` known
/// (from an earlier permutation block) the sum of squares is not summed again.
fn and_contributions<I: RowId>(
    a: &[u64],
    b: &[u64],
    groups: &Mixed,
    layout: &Layout,
    denom: Option<f64>,
) -> Feature<I> {
    let mut f = Feature {
        groups: Vec::new(),
        values: Vec::new(),
        denom: 0.0,
    };
    let mut var_x = 0.0;
    let both = |p: usize| a[p / 64] & b[p / 64] & (1 << (p % 64)) != 0;
    let mut emit = |g: usize, count: usize, f: &mut Feature<I>| {
        let span = layout.rows(g);
        if count == span.len() {
            return;
        }
        let mean = count as f64 / span.len() as f64;
        let start = f.values.len();
        f.values
            .extend(span.map(|p| if both(p) { 1.0 } else { 0.0 } - mean));
        if denom.is_none() {
            for &c in &f.values[start..] {
                var_x += c * c;
            }
        }
        f.groups.push(I::from_index(g));
    };
    // Set bits ascend in position, so their groups ascend too: count each group's run.
    let (mut current, mut count) = (usize::MAX, 0usize);
    for (w, (&x, &y)) in a.iter().zip(b).enumerate() {
        let mut word = x & y;
        while word != 0 {
            let p = w * 64 + word.trailing_zeros() as usize;
            word &= word - 1;
            let g = layout.group_at[p];
            if g != current {
                if current != usize::MAX {
                    emit(current, count, &mut f);
                }
                (current, count) = (g, 0);
            }
            count += 1;
        }
    }
    if current != usize::MAX {
        emit(current, count, &mut f);
    }
    f.denom = denom.unwrap_or(if var_x > 0.0 && groups.var_r > 0.0 {
        (var_x * groups.var_r).sqrt()
    } else {
        0.0
    });
    f
}

/// Centre one feature within every mixed group where it varies (groups in order).
///
/// `cells()` yields the column's `(row, value)` cells on rows of mixed groups, rows ascending
/// (read twice: to scatter and to reset `scratch`, which is all 0.0 before and after).
fn feature_contributions<I: RowId, C: Iterator<Item = (usize, f64)>>(
    cells: impl Fn() -> C,
    groups: &Mixed,
    scratch: &mut [f64],
) -> Feature<I> {
    let mut varying: Vec<I> = Vec::new();
    let mut values = Vec::new();
    // Only groups holding an entry can vary: elsewhere every value is 0.0.
    let mut touched: Vec<usize> = Vec::new();
    for (i, v) in cells() {
        scratch[i] = v;
        touched.push(groups.group_of[i]);
    }
    touched.sort_unstable();
    touched.dedup();
    let mut dense = Vec::new();
    for &g in &touched {
        let rows = &groups.mixed[g];
        dense.clear();
        dense.extend(rows.iter().map(|&i| scratch[i]));
        let first = dense[0];
        if dense.iter().all(|&v| v == first) {
            continue;
        }
        let mean = sequential_mean(dense.iter().copied());
        varying.push(I::from_index(g));
        values.extend(dense.iter().map(|&v| v - mean));
    }
    for (i, _) in cells() {
        scratch[i] = 0.0;
    }
    let mut var_x = 0.0;
    for &c in &values {
        var_x += c * c;
    }
    let denom = if var_x > 0.0 && groups.var_r > 0.0 {
        (var_x * groups.var_r).sqrt()
    } else {
        0.0
    };
    Feature {
        groups: varying,
        values,
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
    fn columns_give_the_csr_results() {
        // Feature 0 binary (rows only) on rows 0 and 3, feature 1 valued on rows 1 and 3.
        let csr = ScanInput {
            indptr: &[0, 1, 2, 2, 4],
            indices: &[0, 1, 0, 1],
            values: &[1.0, 2.0, 1.0, 0.5],
            n_features: 2,
            groups: &[0, 0, 1, 1],
            reward: &[1.0, 0.0, 0.0, 1.0],
        };
        let columns = ColumnInput {
            ptr: &[0, 2, 4],
            rows: &[0i32, 3, 1, 3],
            vptr: &[0, 0, 2],
            values: &[2.0, 0.5],
            groups: &[0, 0, 1, 1],
            reward: &[1.0, 0.0, 0.0, 1.0],
        };
        let search = Conjoin {
            columns: &[0, 1],
            top: 2,
        };
        let want = within_group_scan(&csr, 9, 3, &search).unwrap();
        let got = within_group_scan_columns(&columns, 9, 3, &search).unwrap();
        assert_eq!(got, want);
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
