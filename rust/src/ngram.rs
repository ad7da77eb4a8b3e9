//! The n-gram index of an eval set (docs/kernels.md, "N-grams"): build once, scan many texts.
//!
//! Token hashes are `hash64` of the shared tokenizer's tokens; an n-gram's hash folds them left
//! to right with `pair64`. Postings map each n-gram hash to the ascending ids of the eval texts
//! holding it; `exact` maps the hash of a text's normalised form (tokens joined by one space) to
//! the lowest id with that form. A text is tokenised once for both rules ([`NgramIndex::check`]);
//! texts are independent and split across threads, results in text order.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use rayon::prelude::*;

use crate::error::CoreError;
use crate::hash::pair64;
use crate::rng::GOLDEN;

mod filter;
mod state;
mod tokens;

use filter::Filter;
use tokens::Tokens;

const MIN_TEXTS_PER_TASK: usize = 16;
/// One eval text read for the index: its normalised hash, n-gram hashes and prefix hashes.
type EvalText = (u64, Vec<u64>, Vec<u64>);
/// Tokens in an n-gram's prefix that a second filter checks first (for n above it): the first
/// step of an n-gram's hash, so a text position whose prefix is in no eval n-gram costs one
/// `pair64` instead of `n - 1`.
const PREFIX: usize = 2;

/// A hasher for keys that are already 64-bit hashes or small ids: one multiply, no random seed.
#[derive(Default, Clone, Copy)]
pub struct MulHasher(u64);

impl Hasher for MulHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(GOLDEN);
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = x.wrapping_mul(GOLDEN);
    }
}

type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<MulHasher>>;

/// Check `n`: at least 1.
pub fn check_n(n: usize) -> Result<usize, CoreError> {
    if n == 0 {
        return Err(CoreError::Value("n must be at least 1, got 0".into()));
    }
    Ok(n)
}

/// The hash of every n-gram of `hashes` (`pair64` folded left to right), in position order.
pub fn gram_hashes(hashes: &[u64], n: usize) -> Vec<u64> {
    if n == 0 || hashes.len() < n {
        return Vec::new();
    }
    (0..=hashes.len() - n)
        .map(|start| {
            hashes[start + 1..start + n]
                .iter()
                .fold(hashes[start], |h, &t| pair64(h, t))
        })
        .collect()
}

/// Per-thread scratch space of a check: reused from one text to the next.
#[derive(Debug, Default)]
pub struct Scratch {
    tokens: Tokens,
    /// The n-gram hashes of the text that pass the filter, with their positions.
    candidates: Vec<(usize, u64)>,
    /// Per eval id: (covered tokens, end of the merged windows, first shared position).
    hits: FastMap<u64, (usize, usize, usize)>,
}

/// One scanned text: best eval id (-1 for none), covered and total tokens, a shared n-gram.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanHit {
    pub best: i64,
    pub covered: i64,
    pub total: i64,
    pub shared: Vec<String>,
}

/// One checked text: the lowest eval id with the same normalised form (-1 for none) and its
/// n-gram scan, both from one tokenisation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    pub exact: i64,
    pub hit: ScanHit,
}

/// Postings from token n-grams to eval-text ids.
#[derive(Debug, Clone, Default)]
pub struct NgramIndex {
    n: usize,
    size: usize,
    exact: FastMap<u64, u64>,
    /// N-gram hash -> the range of its eval ids in `ids`.
    /// With the range, its first id when it is the only one (else [`SEVERAL`]): most n-grams
    /// are in one eval text, and reading the id here spares a load from `ids`.
    postings: FastMap<u64, (u32, u32, u32)>,
    ids: Vec<u64>,
    /// A Bloom filter of the n-gram hashes: most n-grams of a train text are in no eval text,
    /// and this answers them from a small table instead of a lookup in the large map.
    filter: Filter,
    /// A Bloom filter of the n-grams' prefix hashes (the `pair64` of their first two tokens),
    /// for n above [`PREFIX`]; built with the index (`None` in an index read from bytes, which
    /// does not hold them: the same answers, without the shortcut).
    prefix: Option<Filter>,
}

/// A posting's third value when it holds several ids (or one too large for 32 bits).
const SEVERAL: u32 = u32::MAX;

/// The value of a posting: its range in `ids` and its only id, if it has one.
fn posting(ids: &[u64], lo: u32, hi: u32) -> (u32, u32, u32) {
    let only = if hi == lo.wrapping_add(1) {
        u32::try_from(ids[lo as usize]).unwrap_or(SEVERAL)
    } else {
        SEVERAL
    };
    (lo, hi, only)
}

/// Too many postings for the index's 32-bit offsets.
fn too_large() -> CoreError {
    CoreError::Value(
        "the n-gram index would hold more than 2**32 postings; split the eval set".into(),
    )
}

impl NgramIndex {
    /// Build the index of `texts` with n-grams of `n` tokens.
    pub fn new<S: AsRef<str> + Sync>(texts: &[S], n: usize) -> Result<Self, CoreError> {
        let n = check_n(n)?;
        let per_text: Vec<Option<EvalText>> = texts
            .par_iter()
            .with_min_len(MIN_TEXTS_PER_TASK)
            .map_init(Tokens::default, |tokens, text| {
                tokens.read(text.as_ref());
                let exact = tokens.normalised_hash()?;
                let h = &tokens.hashes;
                let prefixes = if n > PREFIX && h.len() >= n {
                    (0..=h.len() - n).map(|p| pair64(h[p], h[p + 1])).collect()
                } else {
                    Vec::new()
                };
                Some((exact, gram_hashes(&tokens.hashes, n), prefixes))
            })
            .collect();
        let mut index = NgramIndex {
            n,
            size: texts.len(),
            ..Default::default()
        };
        let total = per_text.iter().flatten().map(|(_, g, _)| g.len()).sum();
        let mut pairs: Vec<(u64, u64)> = Vec::with_capacity(total);
        let mut prefixes: Vec<u64> = Vec::new();
        for (eval_id, item) in per_text.into_iter().enumerate() {
            let Some((exact, grams, heads)) = item else {
                continue;
            };
            prefixes.extend(heads);
            let eval_id = eval_id as u64;
            index.exact.entry(exact).or_insert(eval_id);
            pairs.extend(grams.into_iter().map(|h| (h, eval_id)));
        }
        // Sorted by (n-gram, id), duplicates dropped: each n-gram's ids ascending and distinct.
        pairs.par_sort_unstable();
        pairs.dedup();
        index.ids.reserve_exact(pairs.len());
        index.postings.reserve(pairs.len());
        let mut start = 0;
        while start < pairs.len() {
            let h = pairs[start].0;
            let mut end = start;
            while end < pairs.len() && pairs[end].0 == h {
                index.ids.push(pairs[end].1);
                end += 1;
            }
            let range = (u32::try_from(start), u32::try_from(end));
            let (Ok(lo), Ok(hi)) = range else {
                return Err(too_large());
            };
            index.postings.insert(h, posting(&index.ids, lo, hi));
            start = end;
        }
        index.build_filter();
        if n > PREFIX {
            prefixes.par_sort_unstable();
            prefixes.dedup();
            // About 8 bits per prefix (at most 1 MiB): ~12% of absent prefixes pass.
            index.prefix = Some(Filter::new(prefixes.into_iter(), 8, 1 << 23));
        }
        Ok(index)
    }

    fn build_filter(&mut self) {
        // About 4 bits per n-gram, at most 512 KiB: a table that stays in the core's cache
        // (one cache miss per n-gram otherwise) passes ~15% of absent n-grams to the map.
        self.filter = Filter::new(self.postings.keys().copied(), 4, 1 << 22);
    }

    /// The n-gram length in tokens.
    pub fn n(&self) -> usize {
        self.n
    }

    /// How many eval texts the index was built from.
    pub fn size(&self) -> usize {
        self.size
    }

    /// How many distinct n-grams are indexed.
    pub fn grams(&self) -> usize {
        self.postings.len()
    }

    /// Per text, the lowest eval id with the same normalised text, else -1.
    pub fn exact<S: AsRef<str> + Sync>(&self, texts: &[S]) -> Vec<i64> {
        self.check(texts).into_iter().map(|c| c.exact).collect()
    }

    /// Scan every text against the index (see [`ScanHit`]).
    pub fn scan<S: AsRef<str> + Sync>(&self, texts: &[S]) -> Vec<ScanHit> {
        self.check(texts).into_iter().map(|c| c.hit).collect()
    }

    /// [`NgramIndex::exact`] and [`NgramIndex::scan`] of every text from one tokenisation,
    /// texts split across threads, results in text order.
    pub fn check<S: AsRef<str> + Sync>(&self, texts: &[S]) -> Vec<Check> {
        texts
            .par_iter()
            .with_min_len(MIN_TEXTS_PER_TASK)
            .map_init(Scratch::default, |scratch, text| {
                self.check_one(text.as_ref(), scratch)
            })
            .collect()
    }

    /// [`NgramIndex::check`] of one text, with the caller's (per-thread) scratch space.
    pub fn check_one(&self, text: &str, scratch: &mut Scratch) -> Check {
        let n = self.n;
        let Scratch {
            tokens,
            candidates,
            hits,
        } = scratch;
        tokens.read(text);
        let exact = tokens
            .normalised_hash()
            .and_then(|h| self.exact.get(&h))
            .map_or(-1, |&id| id as i64);
        let hashes = &tokens.hashes;
        let total = hashes.len();
        hits.clear();
        candidates.clear();
        if total >= n && !self.postings.is_empty() {
            // Every n-gram's hash (skipping those whose prefix no eval n-gram has), asking for
            // its filter word as soon as it is known; then the filter for each (independent
            // loads the CPU overlaps), then the map for the few that pass.
            for pos in 0..=total - n {
                let mut h = hashes[pos];
                let mut from = pos + 1;
                if let Some(prefix) = &self.prefix {
                    h = pair64(h, hashes[pos + 1]);
                    if !prefix.may_hold(h) {
                        continue;
                    }
                    from = pos + PREFIX;
                }
                let h = hashes[from..pos + n].iter().fold(h, |h, &t| pair64(h, t));
                self.filter.prefetch(h);
                candidates.push((pos, h));
            }
            candidates.retain(|&(_, h)| self.filter.may_hold(h));
            for &(pos, h) in candidates.iter() {
                let Some(&(lo, hi, only)) = self.postings.get(&h) else {
                    continue;
                };
                let one = [u64::from(only)];
                let ids = if only == SEVERAL {
                    &self.ids[lo as usize..hi as usize]
                } else {
                    &one[..]
                };
                let stop = pos + n;
                for &eval_id in ids {
                    let entry = hits.entry(eval_id).or_insert((0, 0, pos));
                    if stop > entry.1 {
                        entry.0 += stop - pos.max(entry.1);
                    }
                    entry.1 = entry.1.max(stop);
                }
            }
        }
        // Most covered tokens; ties to the lowest id (independent of map order).
        let best = hits
            .iter()
            .map(|(&id, &(covered, _, first))| (covered, std::cmp::Reverse(id), first))
            .max();
        let hit = match best {
            Some((covered, std::cmp::Reverse(id), first)) => ScanHit {
                best: id as i64,
                covered: covered as i64,
                total: total as i64,
                shared: tokens.strings(first..first + n),
            },
            None => ScanHit {
                best: -1,
                covered: 0,
                total: total as i64,
                shared: Vec::new(),
            },
        };
        Check { exact, hit }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docstring_example() {
        let index = NgramIndex::new(&["where is my order 4412 it was due yesterday"], 3).unwrap();
        let hits = index.scan(&["hi, where is my order 4412?", "refund please"]);
        assert_eq!(hits[0].best, 0);
        assert_eq!(hits[0].covered, 5);
        assert_eq!(hits[0].total, 6);
        assert_eq!(hits[0].shared, ["where", "is", "my"]);
        assert_eq!(hits[1].best, -1);
        assert_eq!(
            index.exact(&["Where is my ORDER 4412: it was due yesterday!"]),
            vec![0]
        );
    }

    #[test]
    fn bytes_round_trip() {
        let index = NgramIndex::new(&["a b c d", "b c d e", "", "a b c d"], 2).unwrap();
        let again = NgramIndex::from_bytes(&index.to_bytes()).unwrap();
        assert_eq!(again.to_bytes(), index.to_bytes());
        assert_eq!(again.scan(&["x b c d"]), index.scan(&["x b c d"]));
        assert!(NgramIndex::from_bytes(b"nonsense").is_err());
        let bytes = index.to_bytes();
        assert!(NgramIndex::from_bytes(&bytes[..bytes.len() - 8]).is_err());
    }

    #[test]
    fn ties_go_to_the_lowest_id() {
        let index = NgramIndex::new(&["x y z", "a b c", "a b c"], 2).unwrap();
        assert_eq!(index.scan(&["a b c"])[0].best, 1);
        assert_eq!(index.exact(&["A B C", "q"]), vec![1, -1]);
    }
}
