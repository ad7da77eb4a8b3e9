//! A text's tokens as the n-gram index reads them: the normalised form, spans and hashes.
//!
//! A text of ASCII only takes a path of its own: normalisation leaves ASCII as it is, and the
//! shared rule's ASCII tokens are the maximal runs of letters and digits, lowercased, so the
//! loop below gives the tokens [`crate::tokenize::for_each_raw_token`] gives (a test compares
//! them on every ASCII byte) without its per-token dispatch.

use crate::hash::{hash64, hash64_ascii_lower_in};
use crate::tokenize::for_each_raw_token;

/// Lowercases an ASCII letter and leaves a digit as it is.
const ASCII_LOWER_BIT: u8 = 0x20;

/// Per byte: an ASCII letter or digit (the bytes an ASCII token is made of).
static ALNUM: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 128 {
        table[b] = (b as u8).is_ascii_alphanumeric();
        b += 1;
    }
    table
};

/// A text's tokens, read once for every rule: the normalised form (the lowercase tokens joined
/// by one space), each token's byte span in it, and each token's `hash64`.
#[derive(Debug, Default)]
pub struct Tokens {
    pub joined: Vec<u8>,
    pub spans: Vec<(usize, usize)>,
    pub hashes: Vec<u64>,
}

impl Tokens {
    /// Read the tokens of `text` (replacing what was read before).
    pub fn read(&mut self, text: &str) {
        self.joined.clear();
        self.spans.clear();
        self.hashes.clear();
        if text.is_ascii() {
            self.read_ascii(text.as_bytes());
            return;
        }
        self.read_general(text);
    }

    /// The shared rule's reading, through [`for_each_raw_token`].
    pub(super) fn read_general(&mut self, text: &str) {
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

    fn read_ascii(&mut self, bytes: &[u8]) {
        self.joined.reserve(bytes.len());
        let n = bytes.len();
        let mut i = 0;
        let mut len = 0;
        loop {
            while i < n && !ALNUM[bytes[i] as usize] {
                i += 1;
            }
            if i == n {
                break;
            }
            let start = i;
            while i < n && ALNUM[bytes[i] as usize] {
                i += 1;
            }
            let token = &bytes[start..i];
            if len > 0 {
                self.joined.push(b' ');
                len += 1;
            }
            self.spans.push((len, len + token.len()));
            self.joined.extend_from_slice(token);
            self.joined[len..]
                .iter_mut()
                .for_each(|c| *c |= ASCII_LOWER_BIT);
            len += token.len();
            self.hashes.push(hash64_ascii_lower_in(bytes, start, i));
        }
    }

    /// `hash64` of the normalised form (`None` for a text with no tokens).
    pub fn normalised_hash(&self) -> Option<u64> {
        (!self.hashes.is_empty()).then(|| hash64(&self.joined))
    }

    /// Tokens `range` as strings (whole UTF-8 scalars, so the conversion never replaces).
    pub fn strings(&self, range: std::ops::Range<usize>) -> Vec<String> {
        self.spans[range]
            .iter()
            .map(|&(a, b)| String::from_utf8_lossy(&self.joined[a..b]).into_owned())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ascii_path_reads_as_the_general_one() {
        let every: String = (0u8..128).map(char::from).collect();
        let mut state = 7u64;
        let mut texts = vec![every.clone(), String::new(), " ".into(), "A".into()];
        for _ in 0..300 {
            let text: String = (0..40)
                .map(|_| {
                    state = crate::rng::mix64(state.wrapping_add(crate::rng::GOLDEN));
                    let pick = every.as_bytes()[(state % 128) as usize];
                    char::from(if state >> 60 < 6 {
                        b'a' + (state >> 8) as u8 % 26
                    } else {
                        pick
                    })
                })
                .collect();
            texts.push(text);
        }
        let mut fast = Tokens::default();
        for text in &texts {
            fast.read(text);
            let mut general = Tokens::default();
            general.read_general(text);
            assert_eq!(fast.joined, general.joined, "{text:?}");
            assert_eq!(
                (&fast.spans, &fast.hashes),
                (&general.spans, &general.hashes)
            );
        }
    }
}
