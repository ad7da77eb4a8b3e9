//! The scan's inner work (docs/kernels.md, "Scan"): each feature's centred contributions, the
//! shuffled rewards walked a tile at a time, and the conjunction search's AND columns. Every
//! float sum runs in the documented order; the layout only changes where values are read.

use std::collections::{BTreeMap, HashMap};

use rayon::prelude::*;

use super::{clamp_unit, sequential_mean, BlockedSum, Conjoin, Mixed, Partials, RowId, ScanOutput};

mod lanes;
use lanes::{
    and_covariances, chosen_pairs, position_bits, shuffled_lanes, tiled_covariances, LANES,
};

/// The checked column-major cells the scan reads.
pub(super) struct Columns<'a, R> {
    pub(super) ptr: &'a [i64],
    pub(super) rows: &'a [R],
    pub(super) vptr: &'a [i64],
    pub(super) values: &'a [f64],
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
    var_x: f64,
    denom: f64,
}

/// The rows of the mixed groups by position: `start[g]..start[g + 1]` are group `g`'s; the
/// positions of its block end at `block_end[g]` (blocks are runs of groups).
struct Layout {
    order: Vec<usize>,
    start: Vec<usize>,
    pos_of: Vec<usize>,
    group_at: Vec<usize>,
    block_end: Vec<usize>,
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
        let mut block_end = vec![order.len(); groups.mixed.len()];
        for g in (0..groups.mixed.len().saturating_sub(1)).rev() {
            if groups.block[g] != groups.block[g + 1] {
                block_end[g] = start[g + 1];
            } else {
                block_end[g] = block_end[g + 1];
            }
        }
        Layout {
            order,
            start,
            pos_of,
            group_at,
            block_end,
        }
    }

    /// Group `g`'s positions.
    fn rows(&self, g: usize) -> std::ops::Range<usize> {
        self.start[g]..self.start[g + 1]
    }
}

/// The scan with each feature's positions kept as `u32` when they fit (less memory).
pub(super) fn scan_dispatch<R: RowId>(
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
            rho[j] = clamp_unit(centred_covariance(f, groups, &layout) / f.denom);
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
                for &((a, b), lanes_of) in &pairs {
                    let known = pair_denoms
                        .lock()
                        .ok()
                        .and_then(|d| d.get(&(a, b)).copied());
                    if known == Some(0.0) {
                        continue;
                    }
                    let (cov, denom) =
                        and_covariances(&bits[&a], &bits[&b], groups, &layout, &lanes, known);
                    if known.is_none() {
                        if let Ok(mut d) = pair_denoms.lock() {
                            d.insert((a, b), denom);
                        }
                    }
                    if denom > 0.0 {
                        for l in (0..width).filter(|l| lanes_of & (1 << l) != 0) {
                            let value = clamp_unit(cov[l] / denom).abs();
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
    let mut var_x = BlockedSum::new();
    let mut at = 0;
    for g in &varying {
        let g = g.index();
        var_x.enter(groups.block[g]);
        for &c in &values[at..at + groups.mixed[g].len()] {
            var_x.add(c * c);
        }
        at += groups.mixed[g].len();
    }
    let var_x = var_x.value();
    let denom = if var_x > 0.0 && groups.var_r > 0.0 {
        (var_x * groups.var_r).sqrt()
    } else {
        0.0
    };
    Feature {
        groups: varying,
        values,
        var_x,
        denom,
    }
}

/// A feature's covariance with the centred (unshuffled) reward, summed in the block order.
fn centred_covariance<I: RowId>(f: &Feature<I>, groups: &Mixed, layout: &Layout) -> f64 {
    let mut cov = BlockedSum::new();
    let mut at = 0;
    for g in &f.groups {
        let g = g.index();
        cov.enter(groups.block[g]);
        for p in layout.rows(g) {
            cov.add(f.values[at] * groups.centred[layout.order[p]]);
            at += 1;
        }
    }
    cov.value()
}

/// Each of `blocks`' partial sums (see [`Partials`]): the scan's sums over that block's mixed
/// groups alone, which are its partials (a sum over one block is 0.0 plus its partial).
pub(super) fn block_partials<R: RowId>(
    columns: &Columns<'_, R>,
    all: &Mixed,
    blocks: &[i64],
    n_perm: usize,
    seed: u64,
) -> Partials {
    let n_features = columns.n_features();
    let n_rows = all.group_of.len();
    let n_blocks = blocks.len();
    let mut out = Partials {
        blocks: blocks.to_vec(),
        var_r: vec![0.0; n_blocks],
        support: vec![0; n_blocks * n_features],
        var_x: vec![0.0; n_blocks * n_features],
        cov: vec![0.0; n_blocks * n_features],
        perm_cov: vec![0.0; n_blocks * n_features * n_perm],
    };
    for (k, &b) in blocks.iter().enumerate() {
        let groups = all.only_block(b as u64);
        let layout = Layout::new(&groups);
        let features: Vec<Feature<usize>> = (0..n_features)
            .into_par_iter()
            .map_init(
                || vec![0.0f64; n_rows],
                |scratch, j| {
                    feature_contributions(|| columns.cells(j, &groups.group_of), &groups, scratch)
                },
            )
            .collect();
        out.var_r[k] = groups.var_r;
        let row = k * n_features;
        for (j, f) in features.iter().enumerate() {
            out.support[row + j] = f.values.len() as i64;
            out.var_x[row + j] = f.var_x;
            out.cov[row + j] = centred_covariance(f, &groups, &layout);
        }
        let varying: Vec<usize> = (0..n_features)
            .filter(|&j| !features[j].values.is_empty())
            .collect();
        let items: Vec<(&[usize], &[f64])> = varying
            .iter()
            .map(|&j| (features[j].groups.as_slice(), features[j].values.as_slice()))
            .collect();
        let chunks: Vec<Vec<[f64; LANES]>> = (0..n_perm.div_ceil(LANES))
            .into_par_iter()
            .map(|chunk| {
                let width = LANES.min(n_perm - chunk * LANES);
                let lanes = shuffled_lanes(&groups, &layout, seed, chunk, width);
                tiled_covariances(&items, &layout, &lanes)
            })
            .collect();
        for (chunk, covs) in chunks.iter().enumerate() {
            for (&j, cov) in varying.iter().zip(covs) {
                let at = (row + j) * n_perm + chunk * LANES;
                let width = LANES.min(n_perm - chunk * LANES);
                out.perm_cov[at..at + width].copy_from_slice(&cov[..width]);
            }
        }
    }
    out
}
