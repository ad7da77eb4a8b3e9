//! The agent texts lowercased by the pinned one-to-one table, as `_pure.tokenize.lower` does.
//!
//! Each code point maps to one code point ([`crate::tokenize::lower`]), so a text keeps its
//! length in code points and its final reply stays its suffix. Bytes are UTF-8, or WTF-8 when
//! Python's text held lone surrogates (a surrogate has no mapping and is copied as it is).

use std::borrow::Cow;

use rayon::prelude::*;

use crate::tokenize::lower;
use crate::utf8::decode;

/// Append the UTF-8 (or WTF-8, for a surrogate) bytes of `cp` to `out`.
fn push_code_point(out: &mut Vec<u8>, cp: u32) {
    // Truncating casts keep the low bits of each continuation group, as UTF-8 does.
    if cp < 0x80 {
        out.push(cp as u8);
    } else if cp < 0x800 {
        out.extend_from_slice(&[0xC0 | (cp >> 6) as u8, 0x80 | (cp & 0x3F) as u8]);
    } else if cp < 0x1_0000 {
        out.extend_from_slice(&[
            0xE0 | (cp >> 12) as u8,
            0x80 | ((cp >> 6) & 0x3F) as u8,
            0x80 | (cp & 0x3F) as u8,
        ]);
    } else {
        out.extend_from_slice(&[
            0xF0 | (cp >> 18) as u8,
            0x80 | ((cp >> 12) & 0x3F) as u8,
            0x80 | ((cp >> 6) & 0x3F) as u8,
            0x80 | (cp & 0x3F) as u8,
        ]);
    }
}

/// One text lowercased; borrowed when no code point changes.
pub fn lower_text(bytes: &[u8]) -> Cow<'_, [u8]> {
    let mut i = 0;
    // The unchanged prefix is shared; the first code point that changes starts a copy.
    while i < bytes.len() {
        let (cp, len) = decode(bytes, i);
        if lower(cp) != cp {
            break;
        }
        i += len;
    }
    if i == bytes.len() {
        return Cow::Borrowed(bytes);
    }
    let mut out = Vec::with_capacity(bytes.len() + 8);
    out.extend_from_slice(&bytes[..i]);
    while i < bytes.len() {
        let b = bytes[i];
        if b < 0x80 {
            out.push(b.to_ascii_lowercase());
            i += 1;
            continue;
        }
        let (cp, len) = decode(bytes, i);
        let low = lower(cp);
        if low == cp {
            out.extend_from_slice(&bytes[i..i + len]);
        } else {
            push_code_point(&mut out, low);
        }
        i += len;
    }
    Cow::Owned(out)
}

/// Every text lowercased, rows split across threads (each row on its own: order is kept).
pub fn lower_texts<T: AsRef<[u8]> + Sync>(texts: &[T]) -> Vec<Cow<'_, [u8]>> {
    texts
        .par_iter()
        .with_min_len(256)
        .map(|t| lower_text(t.as_ref()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{lower_text, lower_texts};

    #[test]
    fn lowers_each_width_and_keeps_the_rest() {
        assert_eq!(&*lower_text("ÀB İΣ ok".as_bytes()), "àb İσ ok".as_bytes());
        assert!(matches!(
            lower_text(b"all lower"),
            std::borrow::Cow::Borrowed(_)
        ));
        // A lone surrogate (WTF-8) is copied as it is.
        let wtf8 = [b'A', 0xED, 0xA0, 0x80, b'B'];
        assert_eq!(&*lower_text(&wtf8), &[b'a', 0xED, 0xA0, 0x80, b'b']);
        let many = vec!["Zürich CAFÉ"; 1000];
        assert!(lower_texts(&many)
            .iter()
            .all(|t| &**t == "zürich café".as_bytes()));
    }
}
