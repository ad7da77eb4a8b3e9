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
use crate::hash::{hash64, pair64};
use crate::rng::GOLDEN;
use crate::tokenize::for_each_raw_token;

const MAGIC: &[u8; 8] = b"WNGRAM01";
/// The header's counts after the magic: n, size, exact entries, grams, posting ids.
const HEADER_WORDS: usize = 5;
const HEADER_LEN: usize = MAGIC.len() + 8 * HEADER_WORDS;
const MIN_TEXTS_PER_TASK: usize = 16;

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

/// A text's tokens, read once for every rule: the normalised form (the lowercase tokens joined
/// by one space), each token's byte span in it, and each token's `hash64`.
#[derive(Debug, Default)]
struct Tokens {
    joined: Vec<u8>,
    spans: Vec<(usize, usize)>,
    hashes: Vec<u64>,
}

impl Tokens {
    fn read(&mut self, text: &str) {
        self.joined.clear();
        self.spans.clear();
        self.hashes.clear();
        for_each_raw_token(text, |token, _| {
            if !self.joined.is_empty() {
                self.joined.push(b' ');
            }
            let start = self.joined.len();
            token.extend_lower(&mut self.joined);
            self.spans.push((start, self.joined.len()));
            self.hashes.push(token.hash());
        });
    }

    /// `hash64` of the normalised form (`None` for a text with no tokens).
    fn normalised_hash(&self) -> Option<u64> {
        (!self.hashes.is_empty()).then(|| hash64(&self.joined))
    }

    /// Tokens `range` as strings (whole UTF-8 scalars, so the conversion never replaces).
    fn strings(&self, range: std::ops::Range<usize>) -> Vec<String> {
        self.spans[range]
            .iter()
            .map(|&(a, b)| String::from_utf8_lossy(&self.joined[a..b]).into_owned())
            .collect()
    }
}

/// Per-thread scratch space of a check: reused from one text to the next.
#[derive(Debug, Default)]
pub struct Scratch {
    tokens: Tokens,
    /// The n-gram hashes of the text, in position order.
    grams: Vec<u64>,
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
    postings: FastMap<u64, (u32, u32)>,
    ids: Vec<u64>,
    /// A one-hash Bloom filter of the n-gram hashes (bit `h >> shift`, about 16 bits per
    /// n-gram): most n-grams of a train text are in no eval text, and this answers them from
    /// a small table instead of a lookup in the large map.
    filter: Vec<u64>,
    shift: u32,
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
        let per_text: Vec<Option<(u64, Vec<u64>)>> = texts
            .par_iter()
            .with_min_len(MIN_TEXTS_PER_TASK)
            .map_init(Tokens::default, |tokens, text| {
                tokens.read(text.as_ref());
                let exact = tokens.normalised_hash()?;
                Some((exact, gram_hashes(&tokens.hashes, n)))
            })
            .collect();
        let mut index = NgramIndex {
            n,
            size: texts.len(),
            ..Default::default()
        };
        let total = per_text.iter().flatten().map(|(_, g)| g.len()).sum();
        let mut pairs: Vec<(u64, u64)> = Vec::with_capacity(total);
        for (eval_id, item) in per_text.into_iter().enumerate() {
            let Some((exact, grams)) = item else { continue };
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
            index.postings.insert(h, (lo, hi));
            start = end;
        }
        index.build_filter();
        Ok(index)
    }

    fn build_filter(&mut self) {
        // About 4 bits per n-gram, at most 512 KiB: a table that stays in the core's cache
        // (one cache miss per n-gram otherwise) passes ~15% of absent n-grams to the map.
        let bits = (self.postings.len() * 4)
            .clamp(1 << 10, 1 << 22)
            .next_power_of_two();
        self.shift = 64 - bits.trailing_zeros();
        self.filter = vec![0u64; bits / 64];
        for &h in self.postings.keys() {
            let bit = h >> self.shift;
            self.filter[(bit >> 6) as usize] |= 1 << (bit & 63);
        }
    }

    /// Ask the CPU to bring the filter word of `h` into the cache (a hint; no effect on results).
    #[inline]
    fn prefetch(&self, h: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            let word = &self.filter[((h >> self.shift) >> 6) as usize];
            // SAFETY: `_mm_prefetch` only hints the cache; the address is a valid element.
            unsafe {
                use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
                _mm_prefetch::<_MM_HINT_T0>((word as *const u64).cast::<i8>());
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = h;
    }

    /// Whether the n-gram hash `h` may be indexed (no false negatives).
    #[inline]
    fn may_hold(&self, h: u64) -> bool {
        let bit = h >> self.shift;
        self.filter[(bit >> 6) as usize] >> (bit & 63) & 1 == 1
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
            grams,
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
            // Every n-gram's hash first, asking for its filter word as soon as it is known;
            // then the filter for every n-gram (independent loads the CPU overlaps: the table
            // is larger than the core's cache on a busy machine), then the map for the few
            // that pass.
            grams.clear();
            for pos in 0..=total - n {
                let h = hashes[pos + 1..pos + n]
                    .iter()
                    .fold(hashes[pos], |h, &t| pair64(h, t));
                self.prefetch(h);
                grams.push(h);
            }
            for (pos, &h) in grams.iter().enumerate() {
                if self.may_hold(h) {
                    candidates.push((pos, h));
                }
            }
            for &(pos, h) in candidates.iter() {
                let Some(&(lo, hi)) = self.postings.get(&h) else {
                    continue;
                };
                let ids = &self.ids[lo as usize..hi as usize];
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

    /// Serialise (little-endian u64 arrays behind a fixed header; docs/kernels.md).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut exact: Vec<(u64, u64)> = self.exact.iter().map(|(&h, &id)| (h, id)).collect();
        exact.sort_unstable();
        let mut grams: Vec<u64> = self.postings.keys().copied().collect();
        grams.sort_unstable();
        let n_ids: usize = self
            .postings
            .values()
            .map(|&(lo, hi)| (hi - lo) as usize)
            .sum();
        let body = 2 * exact.len() + 2 * grams.len() + 1 + n_ids;
        let mut out = Vec::with_capacity(HEADER_LEN + 8 * body);
        out.extend_from_slice(MAGIC);
        let mut put = |x: u64| out.extend_from_slice(&x.to_le_bytes());
        for x in [
            self.n as u64,
            self.size as u64,
            exact.len() as u64,
            grams.len() as u64,
            n_ids as u64,
        ] {
            put(x);
        }
        exact.iter().for_each(|&(h, _)| put(h));
        exact.iter().for_each(|&(_, id)| put(id));
        grams.iter().for_each(|&h| put(h));
        let mut offset = 0u64;
        put(0);
        let ranges: Vec<(usize, usize)> = grams
            .iter()
            .map(|h| {
                let (lo, hi) = self.postings[h];
                (lo as usize, hi as usize)
            })
            .collect();
        for &(lo, hi) in &ranges {
            offset += (hi - lo) as u64;
            put(offset);
        }
        for &(lo, hi) in &ranges {
            self.ids[lo..hi].iter().for_each(|&id| put(id));
        }
        out
    }

    /// Rebuild an index from [`NgramIndex::to_bytes`] output.
    pub fn from_bytes(data: &[u8]) -> Result<Self, CoreError> {
        if data.len() < HEADER_LEN || &data[..8] != MAGIC {
            return Err(CoreError::Value(
                "not an NgramIndex state (bad header): rebuild with NgramIndex(texts)".into(),
            ));
        }
        if (data.len() - HEADER_LEN) % 8 != 0 {
            // What `array("Q").frombytes` says in the pure backend.
            return Err(CoreError::Value(
                "bytes length not a multiple of item size".into(),
            ));
        }
        let word = |k: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&data[8 + 8 * k..16 + 8 * k]);
            u64::from_le_bytes(b)
        };
        let (n, size, n_exact, n_grams, n_ids) = (word(0), word(1), word(2), word(3), word(4));
        let corrupt =
            || CoreError::Value("NgramIndex state is truncated or corrupt; rebuild it".into());
        let body = (data.len() - HEADER_LEN) / 8;
        let expected = (|| {
            2u64.checked_mul(n_exact)?
                .checked_add(n_grams)?
                .checked_add(n_grams.checked_add(1)?)?
                .checked_add(n_ids)
        })();
        if expected != Some(body as u64) || n == 0 {
            return Err(corrupt());
        }
        let arr: Vec<u64> = (0..body).map(|k| word(HEADER_WORDS + k)).collect();
        let (n_exact, n_grams) = (n_exact as usize, n_grams as usize);
        let (hashes, rest) = arr.split_at(n_exact);
        let (ids, rest) = rest.split_at(n_exact);
        let (grams, rest) = rest.split_at(n_grams);
        let (offsets, postings) = rest.split_at(n_grams + 1);
        let mut index = NgramIndex {
            n: usize::try_from(n).map_err(|_| corrupt())?,
            size: usize::try_from(size).map_err(|_| corrupt())?,
            ..Default::default()
        };
        index.exact = hashes.iter().copied().zip(ids.iter().copied()).collect();
        if postings.len() > u32::MAX as usize {
            return Err(too_large());
        }
        for (k, &h) in grams.iter().enumerate() {
            let (lo, hi) = (offsets[k], offsets[k + 1]);
            if lo > hi || hi > postings.len() as u64 {
                return Err(corrupt());
            }
            index.postings.insert(h, (lo as u32, hi as u32));
        }
        index.ids = postings.to_vec();
        index.build_filter();
        Ok(index)
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
