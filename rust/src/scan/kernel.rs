//! The scan's inner work (docs/kernels.md, "Scan"): each feature's centred contributions, the
//! shuffled rewards walked a tile at a time, and the conjunction search's AND columns. Every
//! float sum runs in the documented order; the layout only changes where values are read.

use std::collections::{BTreeMap, HashMap};

use rayon::prelude::*;

use super::{clamp_unit, sequential_mean, BlockedSum, Conjoin, Mixed, Partials, RowId, ScanOutput};
use crate::rng::Stream;

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

const LANES: usize = 8;
/// Positions per tile of the lanes (64 bytes each): a tile stays in cache while every feature
/// adds its contributions in it.
const TILE: usize = 4096;

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
        let perm = Stream::new(seed, (block * LANES + l) as u64);
        for (rows, &ask) in groups.mixed.iter().zip(&groups.asks) {
            let mut stream = perm.child(ask as u64);
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
///
/// The lanes are independent sums, so wider vector registers add more of them at once: on an
/// x86-64 CPU with AVX-512 or AVX2 (checked at run time) the same code is compiled for them.
/// The operations and their order are unchanged (a multiply, then an add: no FMA is enabled),
/// so every sum is bit-for-bit the one of the portable code.
fn tiled_covariances<I: RowId>(
    items: &[(&[I], &[f64])],
    layout: &Layout,
    lanes: &[f64],
) -> Vec<[f64; LANES]> {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F (checked just above).
            return unsafe { tiled_covariances_avx512(items, layout, lanes) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { tiled_covariances_avx2(items, layout, lanes) };
        }
    }
    tiled_covariances_body(items, layout, lanes)
}

/// [`tiled_covariances`] compiled for AVX-512F. Safety: call it only on a CPU that has it.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn tiled_covariances_avx512<I: RowId>(
    items: &[(&[I], &[f64])],
    layout: &Layout,
    lanes: &[f64],
) -> Vec<[f64; LANES]> {
    tiled_covariances_body(items, layout, lanes)
}

/// [`tiled_covariances`] compiled for AVX2. Safety: call it only on a CPU that has it.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn tiled_covariances_avx2<I: RowId>(
    items: &[(&[I], &[f64])],
    layout: &Layout,
    lanes: &[f64],
) -> Vec<[f64; LANES]> {
    tiled_covariances_body(items, layout, lanes)
}

#[inline(always)]
fn tiled_covariances_body<I: RowId>(
    items: &[(&[I], &[f64])],
    layout: &Layout,
    lanes: &[f64],
) -> Vec<[f64; LANES]> {
    let n_pos = layout.order.len();
    // Per item, the total of the finished blocks and the partial of the current one.
    let mut cov = vec![[0.0f64; LANES]; items.len()];
    let mut part = vec![[0.0f64; LANES]; items.len()];
    // Per item: (index into its groups, offset within that group, index into its values, end of
    // the current block's positions).
    let mut at = vec![(0usize, 0usize, 0usize, 0usize); items.len()];
    let mut lo = 0;
    while lo < n_pos {
        let hi = (lo + TILE).min(n_pos);
        for (((&(gs, vals), total), acc), cursor) in
            items.iter().zip(&mut cov).zip(&mut part).zip(&mut at)
        {
            let mut sum = *acc;
            let (mut s, mut off, mut k, mut block_end) = *cursor;
            while s < gs.len() {
                let g = gs[s].index();
                let rows = layout.rows(g);
                let from = rows.start + off;
                if from >= hi {
                    break;
                }
                // A new block: its partial starts from 0.0 once the last one is added.
                if rows.start >= block_end {
                    for l in 0..LANES {
                        total[l] += sum[l];
                    }
                    sum = [0.0; LANES];
                    block_end = layout.block_end[g];
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
            *cursor = (s, off, k, block_end);
        }
        lo = hi;
    }
    for (total, sum) in cov.iter_mut().zip(&part) {
        for l in 0..LANES {
            total[l] += sum[l];
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

/// The covariance with every lane of the AND of two columns given as position bitmaps, and its
/// correlation denominator: the [`feature_contributions`] of the column with 1.0 where both
/// are non-zero, summed with the lanes as [`tiled_covariances`] sums them, in one pass (the
/// contributions are not stored). Its dense values are 0.0 and 1.0, so a group varies exactly
/// when it holds some but not all of those rows, and its sequential sum is the exact count:
/// the mean is `count / len`. Each lane's sum and the sum of squares run over the positions in
/// ascending order, as they do over stored contributions. With `denom` known (from an earlier
/// permutation block) the sum of squares is not summed again.
fn and_covariances(
    a: &[u64],
    b: &[u64],
    groups: &Mixed,
    layout: &Layout,
    lanes: &[f64],
    denom: Option<f64>,
) -> ([f64; LANES], f64) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F (checked just above).
            return unsafe { and_covariances_avx512(a, b, groups, layout, lanes, denom) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above).
            return unsafe { and_covariances_avx2(a, b, groups, layout, lanes, denom) };
        }
    }
    and_covariances_body(a, b, groups, layout, lanes, denom)
}

/// [`and_covariances`] compiled for AVX-512F. Safety: call it only on a CPU that has it.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn and_covariances_avx512(
    a: &[u64],
    b: &[u64],
    groups: &Mixed,
    layout: &Layout,
    lanes: &[f64],
    denom: Option<f64>,
) -> ([f64; LANES], f64) {
    and_covariances_body(a, b, groups, layout, lanes, denom)
}

/// [`and_covariances`] compiled for AVX2. Safety: call it only on a CPU that has it.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn and_covariances_avx2(
    a: &[u64],
    b: &[u64],
    groups: &Mixed,
    layout: &Layout,
    lanes: &[f64],
    denom: Option<f64>,
) -> ([f64; LANES], f64) {
    and_covariances_body(a, b, groups, layout, lanes, denom)
}

#[inline(always)]
fn and_covariances_body(
    a: &[u64],
    b: &[u64],
    groups: &Mixed,
    layout: &Layout,
    lanes: &[f64],
    denom: Option<f64>,
) -> ([f64; LANES], f64) {
    // Set bits ascend in position, so their groups ascend too: count each group's run.
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for (w, (&x, &y)) in a.iter().zip(b).enumerate() {
        let mut word = x & y;
        while word != 0 {
            let p = w * 64 + word.trailing_zeros() as usize;
            word &= word - 1;
            let g = layout.group_at[p];
            match runs.last_mut() {
                Some((current, count)) if *current == g => *count += 1,
                _ => runs.push((g, 1)),
            }
        }
    }
    // The finished blocks' totals and the current block's partials. (A loop, not a closure
    // per group: a closure is compiled without the caller's target features.)
    let (mut total, mut total_sq) = ([0.0f64; LANES], 0.0);
    let mut sum = [0.0f64; LANES];
    let mut var_x = 0.0;
    let mut block_end = 0;
    for (g, count) in runs {
        let span = layout.rows(g);
        if count == span.len() {
            continue;
        }
        if span.start >= block_end {
            for l in 0..LANES {
                total[l] += sum[l];
            }
            total_sq += var_x;
            (sum, var_x, block_end) = ([0.0; LANES], 0.0, layout.block_end[g]);
        }
        let mean = count as f64 / span.len() as f64;
        // The two values a position can take, each the dense value minus the mean.
        let (hit, miss) = (1.0 - mean, 0.0 - mean);
        let rows = lanes[span.start * LANES..span.end * LANES].chunks_exact(LANES);
        // Local copies of the sums, so they stay in registers through the group.
        let (mut acc, mut sq) = (sum, var_x);
        for (p, row) in span.zip(rows) {
            let word = a[p / 64] & b[p / 64];
            let c = if (word >> (p % 64)) & 1 != 0 {
                hit
            } else {
                miss
            };
            for l in 0..LANES {
                acc[l] += c * row[l];
            }
            sq += c * c;
        }
        sum = acc;
        if denom.is_none() {
            var_x = sq;
        }
    }
    for l in 0..LANES {
        total[l] += sum[l];
    }
    let (sum, var_x) = (total, total_sq + var_x);
    let denom = denom.unwrap_or(if var_x > 0.0 && groups.var_r > 0.0 {
        (var_x * groups.var_r).sqrt()
    } else {
        0.0
    });
    (sum, denom)
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
