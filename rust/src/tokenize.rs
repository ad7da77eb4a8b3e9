//! The one tokenisation rule both backends share (docs/kernels.md, "Tokens").
//!
//! Normalise the text ([`crate::normalize`]: default-ignorables removed, NFKC), lowercase each
//! code point by the generated one-to-one table, then classify the lowered code point: a token is
//! a maximal run of word code points, or a single code point of an unspaced script. Everything
//! else only separates tokens. A token holding a Cyrillic or Greek letter drawn like a Latin one
//! (`CONFUSABLE`) is folded to Latin when every code point in it is Latin, a mark, a number or
//! such a letter (`FOLD_OK`). ASCII takes a table-free fast path.

use crate::hash::{hash64, hash64_ascii_lower};
use crate::normalize::{in_ranges, normalize};
pub use crate::token_class::{class, confusable, lower};
use crate::token_class::{tables, ASCII_CLASS, ASCII_LOWER_BIT, OTHER};
use crate::unicode_data::{DIGIT, FOLD_OK, UNSPACED, WORD};

/// The token that stands for any all-digit token when `numbers` is on.
pub const NUM_TOKEN: &str = "<num>";

/// One token, as handed to a visitor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Token<'a> {
    /// ASCII letters and digits straight from the text, not yet lowercased: the lowercase
    /// bytes are `b | 0x20` (see [`crate::hash::hash64_ascii_lower`]).
    Ascii(&'a [u8]),
    /// Lowercase UTF-8 bytes (any script).
    Lowered(&'a [u8]),
}

impl Token<'_> {
    /// `hash64` of the token's lowercase bytes.
    #[inline]
    pub fn hash(&self) -> u64 {
        match *self {
            Token::Ascii(raw) => hash64_ascii_lower(raw),
            Token::Lowered(bytes) => hash64(bytes),
        }
    }

    /// Append the token's lowercase UTF-8 bytes to `out`.
    #[inline]
    pub fn extend_lower(&self, out: &mut Vec<u8>) {
        match *self {
            Token::Ascii(raw) => out.extend(raw.iter().map(|&c| c | ASCII_LOWER_BIT)),
            Token::Lowered(bytes) => out.extend_from_slice(bytes),
        }
    }
}

/// Decode the UTF-8 scalar starting at `bytes[i]` (a non-ASCII lead byte of valid UTF-8);
/// return it and its length in bytes.
#[inline]
fn decode(bytes: &[u8], i: usize) -> (u32, usize) {
    let b0 = u32::from(bytes[i]);
    if b0 < 0xE0 {
        (((b0 & 0x1F) << 6) | (u32::from(bytes[i + 1]) & 0x3F), 2)
    } else if b0 < 0xF0 {
        let cp = ((b0 & 0x0F) << 12)
            | ((u32::from(bytes[i + 1]) & 0x3F) << 6)
            | (u32::from(bytes[i + 2]) & 0x3F);
        (cp, 3)
    } else {
        let cp = ((b0 & 0x07) << 18)
            | ((u32::from(bytes[i + 1]) & 0x3F) << 12)
            | ((u32::from(bytes[i + 2]) & 0x3F) << 6)
            | (u32::from(bytes[i + 3]) & 0x3F);
        (cp, 4)
    }
}

/// The UTF-8 encoding of the scalar `cp` (every code point in the tables is a scalar value).
#[inline]
fn encode(cp: u32, tmp: &mut [u8; 4]) -> &[u8] {
    let c = char::from_u32(cp).unwrap_or(char::REPLACEMENT_CHARACTER);
    c.encode_utf8(tmp).as_bytes()
}

/// The folded form of the token `span` (raw text) when it holds a confusable code point and
/// every code point in it may be folded; `None` otherwise.
fn fold(span: &str) -> Option<Vec<u8>> {
    let ok = |c: char| {
        let cp = c as u32;
        cp < 0x80 || confusable(cp).is_some() || in_ranges(FOLD_OK, cp)
    };
    if !span.chars().all(ok) {
        return None;
    }
    let mut tmp = [0u8; 4];
    let mut out = Vec::with_capacity(span.len());
    for c in span.chars() {
        let cp = c as u32;
        out.extend_from_slice(encode(
            confusable(cp).unwrap_or_else(|| lower(cp)),
            &mut tmp,
        ));
    }
    Some(out)
}

/// Hand the finished token in `buf` to `emit` (folded when `conf` and the fold applies).
#[inline]
fn finish<F: FnMut(Token<'_>, bool)>(
    span: &[u8],
    buf: &mut Vec<u8>,
    digits: bool,
    conf: bool,
    emit: &mut F,
) {
    // Token spans are whole UTF-8 scalars of a `&str`, so this never fails.
    match conf.then(|| fold(std::str::from_utf8(span).unwrap_or_default())) {
        Some(Some(folded)) => emit(Token::Lowered(&folded), digits),
        _ => emit(Token::Lowered(buf), digits),
    }
    buf.clear();
}

/// The general path, from byte `i` of `bytes` with the token so far in `buf` (lowercase, begun
/// at byte `start`): code point by code point until the token ends and the next byte is ASCII,
/// when the fast path can take over again. Returns the position reached.
#[inline(never)]
fn slow_path<F: FnMut(Token<'_>, bool)>(
    bytes: &[u8],
    mut i: usize,
    buf: &mut Vec<u8>,
    mut digits: bool,
    mut start: usize,
    emit: &mut F,
) -> usize {
    let mut tmp = [0u8; 4];
    let tables = tables();
    let mut conf = false;
    while i < bytes.len() {
        let b = bytes[i];
        let (cp, len, cls, is_conf) = if b < 0x80 {
            (
                u32::from(b | ASCII_LOWER_BIT),
                1,
                ASCII_CLASS[b as usize],
                false,
            )
        } else {
            let (cp, len) = decode(bytes, i);
            let (cp, cls, is_conf) = tables.lookup(cp);
            (cp, len, cls, is_conf)
        };
        if cls == WORD || cls == DIGIT {
            if buf.is_empty() {
                start = i;
            }
            conf |= is_conf;
            digits &= cls == DIGIT;
            if len == 1 {
                buf.push(cp as u8);
            } else {
                buf.extend_from_slice(encode(cp, &mut tmp));
            }
            i += len;
            continue;
        }
        // A separator or an unspaced code point ends the token.
        if !buf.is_empty() {
            finish(&bytes[start..i], buf, digits, conf, emit);
            digits = true;
            conf = false;
        }
        i += len;
        if cls == UNSPACED {
            emit(Token::Lowered(encode(cp, &mut tmp)), false);
        }
        if i < bytes.len() && bytes[i] < 0x80 {
            return i;
        }
    }
    if !buf.is_empty() {
        finish(&bytes[start..], buf, digits, conf, emit);
    }
    i
}

/// Call `emit(token, all_digits)` for every token of `text`, in order. Runs of ASCII letters
/// and digits are handed over as slices of the text, without copying; anything else goes
/// through the Unicode tables.
#[inline]
pub fn for_each_raw_token<F: FnMut(Token<'_>, bool)>(text: &str, mut emit: F) {
    let text = normalize(text);
    let bytes = text.as_bytes();
    let n = bytes.len();
    let mut buf: Vec<u8> = Vec::new();
    let mut i = 0;
    while i < n {
        let b = bytes[i];
        if b >= 0x80 {
            i = slow_path(bytes, i, &mut buf, true, i, &mut emit);
            continue;
        }
        if ASCII_CLASS[b as usize] == OTHER {
            i += 1;
            continue;
        }
        let start = i;
        let mut digits = true;
        while i < n && bytes[i] < 0x80 {
            let cls = ASCII_CLASS[bytes[i] as usize];
            if cls == OTHER {
                break;
            }
            digits &= cls == DIGIT;
            i += 1;
        }
        if i < n && bytes[i] >= 0x80 {
            // The word may go on in another script: continue it on the general path.
            buf.clear();
            buf.extend(bytes[start..i].iter().map(|&c| c | ASCII_LOWER_BIT));
            i = slow_path(bytes, i, &mut buf, digits, start, &mut emit);
        } else {
            emit(Token::Ascii(&bytes[start..i]), digits);
        }
    }
}

/// Call `emit(token, all_digits)` for every token of `text` as lowercase UTF-8 bytes.
#[inline]
pub fn for_each_token_bytes<F: FnMut(&[u8], bool)>(text: &str, mut emit: F) {
    let mut lowered: Vec<u8> = Vec::new();
    for_each_raw_token(text, |token, all_digits| match token {
        Token::Lowered(bytes) => emit(bytes, all_digits),
        Token::Ascii(raw) => {
            lowered.clear();
            lowered.extend(raw.iter().map(|&c| c | ASCII_LOWER_BIT));
            emit(&lowered, all_digits);
        }
    });
}

/// Call `emit(token, all_digits)` for every token of `text` as a `&str`.
#[inline]
pub fn for_each_token<F: FnMut(&str, bool)>(text: &str, mut emit: F) {
    for_each_token_bytes(text, |token, all_digits| {
        // Tokens are whole UTF-8 encoded scalars, so this never fails.
        emit(std::str::from_utf8(token).unwrap_or_default(), all_digits)
    });
}

/// The tokens of `text`; with `numbers`, an all-digit token becomes `<num>`.
pub fn tokenize(text: &str, numbers: bool) -> Vec<String> {
    let mut out = Vec::new();
    for_each_token(text, |token, all_digits| {
        if numbers && all_digits {
            out.push(NUM_TOKEN.to_owned());
        } else {
            out.push(token.to_owned());
        }
    });
    out
}

/// Call `emit(hash)` with the `hash64` of every token of `text` in the embedder's view
/// (all-digit tokens are `<num>`, whose hash is `num_hash`), without copying ASCII tokens.
#[inline]
pub fn for_each_token_hash<F: FnMut(u64)>(text: &str, num_hash: u64, mut emit: F) {
    for_each_raw_token(text, |token, all_digits| {
        emit(if all_digits { num_hash } else { token.hash() })
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(text: &str) -> Vec<String> {
        tokenize(text, false)
    }

    #[test]
    fn ascii_words_lowercase_and_separate() {
        assert_eq!(
            toks("Where's order #4412?"),
            ["where", "s", "order", "4412"]
        );
        assert_eq!(tokenize("Order 4412 a1", true), ["order", "<num>", "a1"]);
        assert!(toks("  ,.;  ").is_empty());
    }

    #[test]
    fn unspaced_scripts_give_one_token_per_code_point() {
        assert_eq!(toks("注文abc確認"), ["注", "文", "abc", "確", "認"]);
        assert_eq!(
            toks("สวัสดี").len(),
            "สวัสดี"
                .chars()
                .filter(|&c| class(c as u32) == UNSPACED)
                .count()
        );
    }

    #[test]
    fn greek_sigma_has_no_context_rule_and_other_scripts_are_words() {
        assert_eq!(toks("ΟΔΟΣ"), ["οδοσ"]);
        assert_eq!(toks("Привет, café"), ["привет", "café"]);
    }

    #[test]
    fn non_ascii_digits_are_numbers() {
        assert_eq!(tokenize("٣٤ x", true), ["<num>", "x"]);
    }

    #[test]
    fn words_switching_script_mid_token_stay_one_token() {
        assert_eq!(
            toks("CAFÉ café Zürich ÀB1 a注b"),
            ["café", "café", "zürich", "àb1", "a", "注", "b"]
        );
        assert_eq!(toks("abc\u{212A}def x"), ["abckdef", "x"]);
        assert_eq!(tokenize("12٣ 1x٣", true), ["<num>", "1x٣"]);
        assert_eq!(toks("é,a"), ["é", "a"]);
    }

    #[test]
    fn hashes_of_raw_ascii_tokens_equal_hashes_of_lowered_tokens() {
        for text in [
            "Hello WORLD 12345678 ABCDEFGHIJ x",
            "Mixed ÀB1 Ünïcode 注文 1٣",
        ] {
            let mut a = Vec::new();
            for_each_token_hash(text, 7, |h| a.push(h));
            let mut b = Vec::new();
            for_each_token(text, |t, d| {
                b.push(if d { 7 } else { hash64(t.as_bytes()) })
            });
            assert_eq!(a, b, "{text}");
        }
    }

    #[test]
    fn evasions_give_the_plain_tokens() {
        let plain = toks("the contamination of cafe\u{301} dog NOTE");
        assert_eq!(plain, ["the", "contamination", "of", "café", "dog", "note"]);
        for text in [
            "the conta\u{200B}mination of café dog NOTE",
            "the contami\u{AD}nation of cafe\u{301} d\u{43E}g \u{39D}\u{39F}TE",
            "\u{FF54}\u{FF48}\u{FF45} contamination of café \u{501}og NOTE",
        ] {
            assert_eq!(toks(text), plain, "{text:?}");
        }
        // Only tokens that could be Latin are folded: real Cyrillic and Greek words stay.
        assert_eq!(toks("Привет κόσμος сор"), ["привет", "κόσμος", "cop"]);
    }
}
