//! The state of an n-gram index as bytes (docs/kernels.md, "N-grams"): little-endian u64
//! arrays behind a fixed header, the same bytes in both backends, so an index pickles across
//! them.

use super::{posting, too_large, NgramIndex};
use crate::error::CoreError;

const MAGIC: &[u8; 8] = b"WNGRAM01";
/// The header's counts after the magic: n, size, exact entries, grams, posting ids.
const HEADER_WORDS: usize = 5;
const HEADER_LEN: usize = MAGIC.len() + 8 * HEADER_WORDS;

impl NgramIndex {
    /// Serialise (little-endian u64 arrays behind a fixed header; docs/kernels.md).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut exact: Vec<(u64, u64)> = self.exact.iter().map(|(&h, &id)| (h, id)).collect();
        exact.sort_unstable();
        let mut grams: Vec<u64> = self.postings.keys().copied().collect();
        grams.sort_unstable();
        let n_ids: usize = self
            .postings
            .values()
            .map(|&(lo, hi, _)| (hi - lo) as usize)
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
                let (lo, hi, _) = self.postings[h];
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
        if offsets
            .windows(2)
            .any(|w| w[0] > w[1] || w[1] > postings.len() as u64)
        {
            return Err(corrupt());
        }
        index.ids = postings.to_vec();
        for (k, &h) in grams.iter().enumerate() {
            let value = posting(&index.ids, offsets[k] as u32, offsets[k + 1] as u32);
            index.postings.insert(h, value);
        }
        index.build_filter();
        Ok(index)
    }
}
