//! A text as [`crate::pyre`] reads it: code points, as Python's `str` indexes them, and the
//! positions where a word starts.

use crate::pyre::is_word;

/// A text as code points, with the positions where a word starts (read when needed).
#[derive(Debug, Default)]
pub struct Text {
    pub cps: Vec<u32>,
    pub(crate) starts: Vec<u32>,
    starts_known: bool,
}

impl Text {
    /// Read `bytes` (UTF-8 or WTF-8) into this text, reusing its buffers.
    pub fn fill(&mut self, bytes: &[u8]) {
        code_points(bytes, &mut self.cps);
        self.starts_known = false;
    }

    /// Read code points into this text, reusing its buffers.
    pub fn fill_cps(&mut self, cps: &[u32]) {
        self.cps.clear();
        self.cps.extend_from_slice(cps);
        self.starts_known = false;
    }

    pub(crate) fn ensure_starts(&mut self) {
        if !self.starts_known {
            self.starts.clear();
            let mut prev = false;
            for (i, &c) in self.cps.iter().enumerate() {
                let w = is_word(c);
                if w && !prev {
                    self.starts.push(i as u32);
                }
                prev = w;
            }
            self.starts_known = true;
        }
    }
}

/// The code points of a UTF-8 (or WTF-8) text, as Python's `str` indexes them.
pub fn code_points(bytes: &[u8], out: &mut Vec<u32>) {
    out.clear();
    if bytes.is_ascii() {
        out.extend(bytes.iter().map(|&b| u32::from(b)));
        return;
    }
    let mut i = 0;
    while i < bytes.len() {
        let (cp, len) = crate::utf8::decode(bytes, i);
        out.push(cp);
        i += len;
    }
}
