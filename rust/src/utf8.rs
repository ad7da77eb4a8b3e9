//! UTF-8 read leniently, one code point at a time, as the text kernels walk `str` bytes.

/// The code point at `bytes[i]` and its length in bytes (UTF-8 or WTF-8, read leniently).
#[inline]
pub fn decode(bytes: &[u8], i: usize) -> (u32, usize) {
    let b = bytes[i];
    if b < 0x80 {
        return (u32::from(b), 1);
    }
    let (len, init) = if b < 0xE0 {
        (2, u32::from(b & 0x1F))
    } else if b < 0xF0 {
        (3, u32::from(b & 0x0F))
    } else {
        (4, u32::from(b & 0x07))
    };
    let end = (i + len).min(bytes.len());
    let cp = bytes[i + 1..end]
        .iter()
        .fold(init, |acc, &c| (acc << 6) | u32::from(c & 0x3F));
    (cp, end - i)
}

#[cfg(test)]
mod tests {
    use super::decode;

    #[test]
    fn decodes_each_width_and_a_cut_sequence() {
        let text = "aé€😀".as_bytes();
        let (mut i, mut got) = (0, Vec::new());
        while i < text.len() {
            let (cp, len) = decode(text, i);
            got.push(cp);
            i += len;
        }
        assert_eq!(got, "aé€😀".chars().map(u32::from).collect::<Vec<_>>());
        assert_eq!(decode(&[0xE2, 0x82], 0), (0x82 | (0x02 << 6), 2)); // cut short: what is there
    }
}
