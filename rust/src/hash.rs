//! The stable 64-bit text hash shared by both backends (docs/kernels.md, "Hashing").

use crate::rng::{mix64, GOLDEN};

const HASH_SEED: u64 = 0x243F_6A88_85A3_08D3;

/// The stable 64-bit hash of a byte string (the UTF-8 bytes of a token).
#[inline]
pub fn hash64(data: &[u8]) -> u64 {
    let mut h = HASH_SEED ^ (data.len() as u64).wrapping_mul(GOLDEN);
    let mut chunks = data.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        h = mix64(h ^ u64::from_le_bytes(word));
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut word = [0u8; 8];
        word[..rest.len()].copy_from_slice(rest);
        h = mix64(h ^ u64::from_le_bytes(word));
    }
    mix64(h)
}

/// `hash64` of the lowercase of `data`, where `data` holds only ASCII letters and digits:
/// setting the 0x20 bit of every byte lowercases letters and leaves digits as they are, so no
/// lowercase copy is needed.
#[inline]
pub fn hash64_ascii_lower(data: &[u8]) -> u64 {
    const LOWER_BITS: u64 = 0x2020_2020_2020_2020;
    debug_assert!(data.iter().all(u8::is_ascii_alphanumeric));
    let mut h = HASH_SEED ^ (data.len() as u64).wrapping_mul(GOLDEN);
    let mut chunks = data.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        h = mix64(h ^ (u64::from_le_bytes(word) | LOWER_BITS));
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut word = [0u8; 8];
        word[..rest.len()].copy_from_slice(rest);
        let mask = u64::MAX >> (8 * (8 - rest.len()));
        h = mix64(h ^ (u64::from_le_bytes(word) | (LOWER_BITS & mask)));
    }
    mix64(h)
}

/// [`hash64_ascii_lower`] of `text[start..end]`, reading the last partial word straight from
/// `text` when it has 8 bytes there (one load, masked) instead of copying it out.
#[inline]
pub fn hash64_ascii_lower_in(text: &[u8], start: usize, end: usize) -> u64 {
    const LOWER_BITS: u64 = 0x2020_2020_2020_2020;
    let len = end - start;
    let mut h = HASH_SEED ^ (len as u64).wrapping_mul(GOLDEN);
    let mut at = start;
    while at + 8 <= end {
        let word = u64::from_le_bytes(text[at..at + 8].try_into().unwrap_or_default());
        h = mix64(h ^ (word | LOWER_BITS));
        at += 8;
    }
    let rest = end - at;
    if rest > 0 {
        let mask = u64::MAX >> (8 * (8 - rest));
        let word = match text.get(at..at + 8) {
            Some(word) => u64::from_le_bytes(word.try_into().unwrap_or_default()) & mask,
            None => {
                let mut word = [0u8; 8];
                word[..rest].copy_from_slice(&text[at..end]);
                u64::from_le_bytes(word)
            }
        };
        h = mix64(h ^ (word | (LOWER_BITS & mask)));
    }
    mix64(h)
}

/// The hash of the bigram `a b` from the two token hashes.
#[inline]
pub fn pair64(a: u64, b: u64) -> u64 {
    mix64(a.wrapping_mul(GOLDEN) ^ b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_and_space_differ_and_padding_is_not_confused_with_nul() {
        assert_ne!(hash64(b""), hash64(b" "));
        assert_ne!(hash64(b"a"), hash64(b"a\0"));
        assert_eq!(hash64(b"order"), hash64(b"order"));
    }

    #[test]
    fn ascii_lower_hash_in_a_text_equals_the_hash_of_the_slice() {
        let text = b"AbC123 ABCDEFGHI 0123456789abcdefXYZ z";
        for start in 0..text.len() {
            for end in start..=text.len() {
                let raw = &text[start..end];
                if raw.iter().all(u8::is_ascii_alphanumeric) {
                    assert_eq!(
                        hash64_ascii_lower_in(text, start, end),
                        hash64_ascii_lower(raw)
                    );
                }
            }
        }
    }

    #[test]
    fn ascii_lower_hash_equals_hash_of_lowercase() {
        for word in [
            "",
            "a",
            "Z",
            "AbC123",
            "ABCDEFGH",
            "ABCDEFGHI",
            "0123456789abcdefXYZ",
        ] {
            let lowered = word.to_ascii_lowercase();
            assert_eq!(
                hash64_ascii_lower(word.as_bytes()),
                hash64(lowered.as_bytes()),
                "{word}"
            );
        }
    }

    #[test]
    fn pair_is_ordered() {
        assert_ne!(pair64(1, 2), pair64(2, 1));
    }
}
