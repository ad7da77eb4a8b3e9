//! Diversity selection (docs/kernels.md): greedy farthest-point choice over hash-embedding
//! counts. Cosine similarity comes from exact integer dot products and squared norms, then the
//! same few float operations as the pure backend, so picks are identical in both. Dots come
//! from sparse columns, so a pick costs the number of entries sharing a bucket with it.

use rayon::prelude::*;

use crate::rng::Stream;

/// `dot / sqrt(float(norm_a * norm_b))` with the integers exact (as Python computes it).
#[inline]
fn cosine(dot: i128, norm_a: i128, norm_b: i128) -> f64 {
    let denom = match norm_a.checked_mul(norm_b) {
        Some(product) => product as f64,
        // Only for astronomically large counts; Python's exact product may round differently.
        None => norm_a as f64 * norm_b as f64,
    };
    dot as f64 / denom.sqrt()
}

/// Pick up to `k` rows of `counts` (`n * dim`, row-major), each the farthest (cosine) from
/// everything chosen so far; `anchors` are already chosen (they repel and are never returned).
///
/// Candidate `i`'s score is its distance to the nearest chosen row plus
/// `Stream(seed, i).uniform() * noise` (no noise when `noise == 0`); ties go to the lowest index.
/// `dim >= 1`, `counts.len() % dim == 0` and every anchor `< n` are the caller's checks.
pub fn select_diverse(
    counts: &[i64],
    dim: usize,
    k: usize,
    seed: u64,
    noise: f64,
    anchors: &[usize],
) -> Vec<usize> {
    let n = counts.len() / dim;
    if n == 0 {
        return Vec::new();
    }
    if let Some(picks) = select_small(counts, dim, k, seed, noise, anchors) {
        return picks;
    }
    // Sparse rows and columns: every dot product is an exact integer sum over shared buckets.
    let mut rows: Vec<Vec<(usize, i128)>> = Vec::with_capacity(n);
    let mut columns: Vec<Vec<(usize, i128)>> = vec![Vec::new(); dim];
    for (i, row) in counts.chunks_exact(dim).enumerate() {
        let nonzero: Vec<(usize, i128)> = row
            .iter()
            .enumerate()
            .filter(|&(_, &c)| c != 0)
            .map(|(b, &c)| (b, i128::from(c)))
            .collect();
        for &(b, c) in &nonzero {
            columns[b].push((i, c));
        }
        rows.push(nonzero);
    }
    let norms: Vec<i128> = rows
        .iter()
        .map(|row| row.iter().map(|&(_, c)| c * c).sum())
        .collect();
    let mut dots = vec![0i128; n];
    // Fold one chosen row into every open candidate's nearest distance.
    let absorb = |pick: usize, chosen: &[bool], nearest: &mut [f64]| {
        dots.fill(0);
        for &(b, c) in &rows[pick] {
            for &(j, cj) in &columns[b] {
                dots[j] += c * cj;
            }
        }
        let pnorm = norms[pick];
        for j in 0..n {
            if chosen[j] {
                continue;
            }
            let distance = if pnorm == 0 || norms[j] == 0 {
                1.0
            } else {
                1.0 - cosine(dots[j], pnorm, norms[j])
            };
            if distance < nearest[j] {
                nearest[j] = distance;
            }
        }
    };
    greedy(n, k, seed, noise, anchors, absorb)
}

/// The greedy loop both paths share: `absorb(pick, chosen, nearest)` folds one chosen row into
/// every open candidate's nearest distance; anchors are absorbed first (first occurrence, in
/// order), then each pick is the open candidate with the highest `nearest + jitter`, ties to
/// the lowest index.
fn greedy(
    n: usize,
    k: usize,
    seed: u64,
    noise: f64,
    anchors: &[usize],
    mut absorb: impl FnMut(usize, &[bool], &mut [f64]),
) -> Vec<usize> {
    let jitter: Vec<f64> = (0..n)
        .map(|i| {
            if noise != 0.0 {
                Stream::new(seed, i as u64).uniform() * noise
            } else {
                0.0
            }
        })
        .collect();
    let mut chosen = vec![false; n];
    let mut order = Vec::new();
    for &a in anchors {
        if !chosen[a] {
            chosen[a] = true;
            order.push(a);
        }
    }
    let mut nearest = vec![1.0f64; n];
    for &a in &order {
        absorb(a, &chosen, &mut nearest);
    }
    let mut picks = Vec::new();
    while picks.len() < k {
        let mut best: Option<usize> = None;
        let mut best_score = f64::NEG_INFINITY;
        for j in 0..n {
            if !chosen[j] {
                let score = nearest[j] + jitter[j];
                if score > best_score {
                    best = Some(j);
                    best_score = score;
                }
            }
        }
        let Some(best) = best else { break };
        chosen[best] = true;
        picks.push(best);
        absorb(best, &chosen, &mut nearest);
    }
    picks
}

/// The same choice as [`select_diverse`] when every squared norm is below 2^31 (so every product
/// of two norms fits in `i64` and every dot in `i64`): compact `u32`/`i64` sparse columns, and
/// integer-to-float conversions that round exactly as the `i128` path (and Python) do. `None`
/// when the counts are too large for it.
fn select_small(
    counts: &[i64],
    dim: usize,
    k: usize,
    seed: u64,
    noise: f64,
    anchors: &[usize],
) -> Option<Vec<usize>> {
    const LIMIT: i64 = (1 << 31) - 1;
    let n = counts.len() / dim;
    if n > u32::MAX as usize {
        return None;
    }
    let mut starts: Vec<u32> = Vec::with_capacity(n + 1);
    let mut row_b: Vec<u32> = Vec::new();
    let mut row_c: Vec<i64> = Vec::new();
    let mut norms: Vec<i64> = Vec::with_capacity(n);
    let mut col_len = vec![0usize; dim];
    starts.push(0);
    for row in counts.chunks_exact(dim) {
        let mut norm: i64 = 0;
        for (b, &c) in row.iter().enumerate() {
            if c != 0 {
                if !(-LIMIT..=LIMIT).contains(&c) {
                    return None;
                }
                norm = norm.checked_add(c * c).filter(|&x| x <= LIMIT)?;
                row_b.push(b as u32);
                row_c.push(c);
                col_len[b] += 1;
            }
        }
        norms.push(norm);
        starts.push(u32::try_from(row_b.len()).ok()?);
    }
    // Columns as one flat buffer: (row, count) pairs of bucket b at col_start[b]..col_start[b+1].
    let mut col_start = vec![0usize; dim + 1];
    for b in 0..dim {
        col_start[b + 1] = col_start[b] + col_len[b];
    }
    let mut fill = col_start.clone();
    let mut col_j = vec![0u32; row_b.len()];
    let mut col_c = vec![0i32; row_b.len()];
    for i in 0..n {
        for e in starts[i] as usize..starts[i + 1] as usize {
            let b = row_b[e] as usize;
            col_j[fill[b]] = i as u32;
            col_c[fill[b]] = row_c[e] as i32; // |c| <= 46341: c * c <= 2^31 - 1
            fill[b] += 1;
        }
    }
    // Candidates split into contiguous parts, one per thread: each part's dots are exact integer
    // sums over its own slice of every column (columns list rows ascending), and each
    // candidate's distance is its own few float operations, so the split changes nothing.
    let chunk = n.div_ceil(rayon::current_num_threads().max(1)).max(4096);
    let parts = n.div_ceil(chunk);
    // cut[b * (parts + 1) + t]: where part t starts in column b.
    let mut cut = vec![0usize; dim * (parts + 1)];
    for b in 0..dim {
        let (lo, hi) = (col_start[b], col_start[b + 1]);
        for t in 0..=parts {
            let first_row = (t * chunk).min(n) as u32;
            cut[b * (parts + 1) + t] = lo + col_j[lo..hi].partition_point(|&j| j < first_row);
        }
    }
    // Every partial dot is bounded by the product of the two norms' square roots (Cauchy-Schwarz
    // on absolute values), below 2^31: i32 sums are exact.
    let mut dots = vec![0i32; n];
    // One part's work for one chosen row: its dots with the part's candidates, then distances.
    let absorb_part =
        |pick: usize, t: usize, chosen: &[bool], nearest: &mut [f64], dots: &mut [i32]| {
            let pnorm = norms[pick];
            let base = t * chunk;
            dots.fill(0);
            for e in starts[pick] as usize..starts[pick + 1] as usize {
                let b = row_b[e] as usize;
                let c = row_c[e] as i32; // |c| <= 46340
                let (lo, hi) = (cut[b * (parts + 1) + t], cut[b * (parts + 1) + t + 1]);
                for (&j, &cj) in col_j[lo..hi].iter().zip(&col_c[lo..hi]) {
                    dots[j as usize - base] += c * cj;
                }
            }
            for (o, (near, &dot)) in nearest.iter_mut().zip(dots.iter()).enumerate() {
                let j = base + o;
                if chosen[j] || norms[j] == 0 {
                    continue;
                }
                // The same operations as `cosine`: exact integer product, rounded once.
                let distance = 1.0 - f64::from(dot) / ((pnorm * norms[j]) as f64).sqrt();
                if distance < *near {
                    *near = distance;
                }
            }
        };
    let absorb = |pick: usize, chosen: &[bool], nearest: &mut [f64], dots: &mut [i32]| {
        if norms[pick] == 0 {
            return; // distance 1.0 never lowers a nearest distance (they start at 1.0)
        }
        if parts == 1 {
            // Small batches (the engine's 64 candidates): a pool round trip would cost more
            // than the work.
            absorb_part(pick, 0, chosen, nearest, dots);
            return;
        }
        dots.par_chunks_mut(chunk)
            .zip(nearest.par_chunks_mut(chunk))
            .enumerate()
            .for_each(|(t, (dots, nearest))| absorb_part(pick, t, chosen, nearest, dots));
    };
    Some(greedy(
        n,
        k,
        seed,
        noise,
        anchors,
        |pick, chosen, nearest| absorb(pick, chosen, nearest, &mut dots),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docstring_examples() {
        let counts = [1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1];
        assert_eq!(select_diverse(&counts, 3, 3, 0, 0.0, &[]), vec![0, 2, 3]);
        assert_eq!(select_diverse(&counts, 3, 1, 0, 0.0, &[0]), vec![2]);
    }

    #[test]
    fn asks_for_more_than_there_are() {
        let counts = [1, 2, 3, 4];
        assert_eq!(select_diverse(&counts, 2, 5, 0, 0.0, &[]), vec![0, 1]);
        assert!(select_diverse(&[], 4, 3, 0, 0.0, &[]).is_empty());
    }

    #[test]
    fn noise_is_seeded() {
        let counts: Vec<i64> = (0..60).map(|x| (x * 7 % 5) as i64).collect();
        let a = select_diverse(&counts, 3, 6, 9, 0.5, &[]);
        assert_eq!(a, select_diverse(&counts, 3, 6, 9, 0.5, &[]));
        assert_eq!(a.len(), 6);
    }
}
