//! Diversity selection (docs/kernels.md): greedy farthest-point choice over hash-embedding
//! counts. Cosine similarity comes from exact integer dot products and squared norms, then the
//! same few float operations as the pure backend, so picks are identical in both. Dots come
//! from sparse columns, so a pick costs the number of entries sharing a bucket with it.

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
    let mut dots = vec![0i128; n];

    // Fold one chosen row into every open candidate's nearest distance.
    let mut absorb = |pick: usize, chosen: &[bool], nearest: &mut [f64]| {
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
