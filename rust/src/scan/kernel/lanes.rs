//! The permutation floor's inner loops: the shuffled centred rewards of a block of
//! permutations in lanes, walked a tile at a time by every feature, and the conjunction
//! search's AND columns under the same lanes (docs/kernels.md, "Scan").

use std::collections::BTreeMap;

use super::super::{Mixed, RowId};
use super::{Columns, Layout};
use crate::rng::Stream;

pub(super) const LANES: usize = 8;
/// Positions per tile of the lanes (64 bytes each): a tile stays in cache while every feature
/// adds its contributions in it.
const TILE: usize = 4096;

/// The block's shuffled centred rewards by position, lane `l` at `lanes[p * LANES + l]`.
pub(super) fn shuffled_lanes(
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
pub(super) fn tiled_covariances<I: RowId>(
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
pub(super) fn chosen_pairs(
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
pub(super) fn position_bits<R: RowId>(
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
pub(super) fn and_covariances(
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
