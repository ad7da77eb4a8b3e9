//! Regular expressions matched exactly as Python's `re` matches them with `re.IGNORECASE`, for
//! the patterns of the trace flags (docs/kernels.md, "Trace flags").
//!
//! A pattern is compiled to a small program and run by a backtracking machine that tries
//! alternatives in order, as `re` does, so a match's start, end and groups are the ones `re`
//! reports. The syntax is the subset those patterns use: literals, `[...]` classes with ranges,
//! `\s \w \d \S \W \D \b ^`, groups `(...)`, `(?:...)`, `(?P<name>...)`, alternation and the
//! quantifiers `? * + {m} {m,} {m,n}`, greedy or lazy. Anything else, a non-ASCII pattern
//! character, or a repeat of what can match empty is refused at compile time, so a pattern is
//! either matched exactly or not at all.
//!
//! Text is code points. `\w`, `\s` and `\d` read the pinned tables ([`crate::pychars`], generated
//! from Python's own classes at the pinned Unicode version, docs/kernels.md).
//! Case-insensitive comparison follows `re`: a text character matches an ASCII letter when its
//! simple lowercase is that letter (`K` and U+212A KELVIN SIGN match `k`, U+0130 matches `i`),
//! plus `re`'s two extra equivalences for ASCII letters (U+0131 with `i`, U+017F with `s`): the
//! generated [`crate::pychars::fold_non_ascii`].

use crate::error::CoreError;
use crate::hack_text::char_flags;
use crate::pychars::{fold_non_ascii, WORD};
use crate::pyre_compile::{compile, Inst};
pub use crate::pyre_text::{code_points, Text};

/// The character `re.IGNORECASE` compares with a pattern's (lowercase) ASCII character.
#[inline]
pub fn fold(cp: u32) -> u32 {
    if cp < 0x80 {
        if (0x41..=0x5A).contains(&cp) {
            cp + 0x20
        } else {
            cp
        }
    } else {
        fold_non_ascii(cp)
    }
}

#[inline]
pub(crate) fn is_word(cp: u32) -> bool {
    if cp < 0x80 {
        (cp as u8).is_ascii_alphanumeric() || cp == 0x5F
    } else {
        char_flags(cp) & WORD != 0
    }
}

/// A compiled pattern (always case-insensitive, as `re.compile(pattern, re.IGNORECASE)`).
#[derive(Debug, Clone)]
pub struct Regex {
    prog: Vec<Inst>,
    names: Vec<Option<String>>,
    /// The folded ASCII characters a match can start with; None when any character can.
    first: Option<[u64; 2]>,
    /// Every match starts with `\b`: only word boundaries are tried.
    at_boundary: bool,
    /// ASCII code points (not folded) that can start a match, when `first` is known.
    lut: [bool; 128],
    /// Every match starts with `\b` then a word character: only word starts are tried.
    word_starts: bool,
    /// When the program opens with an alternation whose branches' first characters are all
    /// known: per ASCII code point (not folded), bit 0 when a branch without a leading `\b` can
    /// start with it, bit 1 when a branch opening with `\b` can. A start where neither applies
    /// fails at that alternation, so it is not tried.
    branch_lut: Option<[u8; 128]>,
}

/// Reusable work space of the matching machine.
#[derive(Debug, Default)]
pub struct Scratch {
    stack: Vec<(usize, usize)>,
    slots: Vec<usize>,
    /// The slots hold a match's groups (a failed run restores every slot it set).
    dirty: bool,
}

const RESTORE: usize = usize::MAX;
const UNSET: usize = usize::MAX;

/// A match: its span and the span of each group (`None` when it did not take part).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Match {
    pub start: usize,
    pub end: usize,
    pub groups: Vec<Option<(usize, usize)>>,
}

impl Regex {
    /// Compile `pattern` as `re.compile(pattern, re.IGNORECASE)` would.
    ///
    /// # Errors
    /// `CoreError::Value` when the pattern uses syntax outside the supported subset.
    pub fn new(pattern: &str) -> Result<Regex, CoreError> {
        let (prog, names, first, at_boundary) = compile(pattern)?;
        let mut lut = [false; 128];
        let mut word_starts = at_boundary && first.is_some();
        if let Some(bits) = &first {
            for (cp, slot) in lut.iter_mut().enumerate() {
                let f = fold(cp as u32);
                *slot = bits[(f >> 6) as usize] & (1 << (f & 63)) != 0;
                word_starts &= !*slot || is_word(cp as u32);
            }
        }
        let branch_lut = match prog.first() {
            Some(Inst::Alt(branches)) if first.is_some() => {
                let mut table = Some([0u8; 128]);
                for (bits, target) in branches {
                    let (Some(bits), Some(t)) = (bits, table.as_mut()) else {
                        table = None;
                        break;
                    };
                    let flag = if matches!(prog.get(*target), Some(Inst::WordBoundary)) {
                        2
                    } else {
                        1
                    };
                    for (cp, slot) in t.iter_mut().enumerate() {
                        let f = fold(cp as u32);
                        if bits[(f >> 6) as usize] & (1 << (f & 63)) != 0 {
                            *slot |= flag;
                        }
                    }
                }
                table
            }
            _ => None,
        };
        Ok(Regex {
            prog,
            names,
            first,
            at_boundary,
            lut,
            word_starts,
            branch_lut,
        })
    }

    /// The group names, by group number minus one (None for an unnamed group).
    pub fn names(&self) -> &[Option<String>] {
        &self.names
    }

    /// Run the machine at `start`; the match end, with the group slots left in `scratch`.
    fn run(&self, text: &[u32], start: usize, scratch: &mut Scratch) -> Option<usize> {
        let n = text.len();
        let stack = &mut scratch.stack;
        let slots = &mut scratch.slots;
        stack.clear();
        if scratch.dirty || slots.len() != 2 * self.names.len() {
            slots.clear();
            slots.resize(2 * self.names.len(), UNSET);
            scratch.dirty = false;
        }
        stack.push((0, start));
        while let Some((mut pc, mut pos)) = stack.pop() {
            if pc == RESTORE {
                // (RESTORE, slot) is followed on the stack by the slot's old value.
                let old = stack.pop().map_or(UNSET, |(_, v)| v);
                slots[pos] = old;
                continue;
            }
            loop {
                match &self.prog[pc] {
                    Inst::Char(c) => {
                        if pos < n && fold(text[pos]) == *c {
                            pc += 1;
                            pos += 1;
                        } else {
                            break;
                        }
                    }
                    Inst::Set(s) => {
                        if pos < n && s.contains(text[pos]) {
                            pc += 1;
                            pos += 1;
                        } else {
                            break;
                        }
                    }
                    Inst::Alt(branches) => {
                        let f = if pos < n { fold(text[pos]) } else { u32::MAX };
                        let can = |first: &Option<[u64; 2]>| match first {
                            None => true,
                            Some(bits) => f < 128 && bits[(f >> 6) as usize] & (1 << (f & 63)) != 0,
                        };
                        for (first, target) in branches.iter().rev() {
                            if can(first) {
                                stack.push((*target, pos));
                            }
                        }
                        break;
                    }
                    Inst::Split(a, b) => {
                        stack.push((*b, pos));
                        pc = *a;
                    }
                    Inst::Jmp(a) => pc = *a,
                    Inst::Save(k) => {
                        stack.push((0, slots[*k]));
                        stack.push((RESTORE, *k));
                        slots[*k] = pos;
                        pc += 1;
                    }
                    Inst::Start => {
                        if pos == 0 {
                            pc += 1;
                        } else {
                            break;
                        }
                    }
                    Inst::WordBoundary => {
                        let before = pos > 0 && is_word(text[pos - 1]);
                        let after = pos < n && is_word(text[pos]);
                        if before != after {
                            pc += 1;
                        } else {
                            break;
                        }
                    }
                    Inst::Match => {
                        scratch.dirty = true;
                        return Some(pos);
                    }
                }
            }
        }
        None
    }

    fn matched(&self, start: usize, end: usize, scratch: &Scratch) -> Match {
        let groups = (0..self.names.len())
            .map(|g| {
                let (a, b) = (scratch.slots[2 * g], scratch.slots[2 * g + 1]);
                (a != UNSET && b != UNSET).then_some((a, b))
            })
            .collect();
        Match { start, end, groups }
    }

    /// `pattern.match(text, pos)`: a match starting exactly at `pos`.
    pub fn match_at(&self, text: &[u32], pos: usize, scratch: &mut Scratch) -> Option<Match> {
        let end = self.run(text, pos, scratch)?;
        Some(self.matched(pos, end, scratch))
    }

    #[inline(always)]
    fn may_start(&self, text: &[u32], start: usize) -> bool {
        if let Some(bits) = &self.first {
            let Some(&c) = text.get(start) else {
                return false;
            };
            let ok = if c < 128 {
                self.lut[c as usize]
            } else {
                let f = fold(c);
                f < 128 && bits[(f >> 6) as usize] & (1 << (f & 63)) != 0
            };
            if !ok {
                return false;
            }
        }
        !self.at_boundary
            || (start > 0 && is_word(text[start - 1]))
                != (start < text.len() && is_word(text[start]))
    }

    /// The start and end of `pattern.search(text, pos)`, with the group slots in `scratch`.
    fn search_span(
        &self,
        text: &mut Text,
        pos: usize,
        scratch: &mut Scratch,
    ) -> Option<(usize, usize)> {
        if self.word_starts {
            text.ensure_starts();
            let starts = &text.starts;
            let from = starts.partition_point(|&s| (s as usize) < pos);
            for &start in &starts[from..] {
                let start = start as usize;
                let c = text.cps[start];
                if c < 128 && !self.lut[c as usize] {
                    continue;
                }
                if self.may_start(&text.cps, start) {
                    if let Some(end) = self.run(&text.cps, start, scratch) {
                        return Some((start, end));
                    }
                }
            }
            return None;
        }
        let cps = &text.cps;
        if let Some(table) = &self.branch_lut {
            for start in pos..cps.len() {
                let c = cps[start];
                if c < 128 {
                    let can = table[c as usize];
                    let viable = can & 1 != 0
                        || (can & 2 != 0 && (start > 0 && is_word(cps[start - 1])) != is_word(c));
                    if !viable {
                        continue;
                    }
                }
                if self.may_start(cps, start) {
                    if let Some(end) = self.run(cps, start, scratch) {
                        return Some((start, end));
                    }
                }
            }
            // A match at the end of the text would start with no character: `first` is known,
            // so none can.
            return None;
        }
        for start in pos..=cps.len() {
            if self.first.is_some()
                && cps
                    .get(start)
                    .is_some_and(|&c| c < 128 && !self.lut[c as usize])
            {
                continue;
            }
            if self.may_start(cps, start) {
                if let Some(end) = self.run(cps, start, scratch) {
                    return Some((start, end));
                }
            }
        }
        None
    }

    /// `pattern.search(text, pos)`.
    pub fn search_at(&self, text: &mut Text, pos: usize, scratch: &mut Scratch) -> Option<Match> {
        let (start, end) = self.search_span(text, pos, scratch)?;
        Some(self.matched(start, end, scratch))
    }

    /// `pattern.search(text) is not None`.
    pub fn is_match(&self, text: &mut Text, scratch: &mut Scratch) -> bool {
        self.search_span(text, 0, scratch).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(t: &str) -> Text {
        let mut out = Text::default();
        out.fill(t.as_bytes());
        out
    }

    fn find(p: &str, t: &str) -> Option<(usize, usize)> {
        let re = Regex::new(p).unwrap();
        re.search_at(&mut text(t), 0, &mut Scratch::default())
            .map(|m| (m.start, m.end))
    }

    #[test]
    fn searches_like_re() {
        assert_eq!(find(r"\btests?\s+pass\b", "All TESTS pass."), Some((4, 14)));
        assert_eq!(find(r"\btests?\s+pass\b", "tests passed"), None);
        assert_eq!(find(r"a|ab", "ab"), Some((0, 1)));
        assert_eq!(find(r"x{2,}", "xxxx"), Some((0, 4)));
        assert_eq!(find(r"[^.]{0,3}?b", "aab"), Some((0, 3)));
        assert_eq!(
            find(r"(?:^|[/\\])tests?[/\\]", "src/tests/x"),
            Some((3, 10))
        );
        assert_eq!(find(r"sk", "\u{17f}\u{212a}"), Some((0, 2)));
        assert_eq!(find(r"\bi\b", "\u{130}"), Some((0, 1)));
        assert_eq!(find(r"\w+", "é1_"), Some((0, 3)));
    }

    #[test]
    fn groups_are_the_taken_branch() {
        let re = Regex::new(r"\b(?:I|we)\s+(?:(?P<a>sent)|(?P<b>booked))\b").unwrap();
        let m = re
            .search_at(&mut text("so we booked it"), 0, &mut Scratch::default())
            .unwrap();
        assert_eq!(m.groups, vec![None, Some((6, 12))]);
        assert_eq!(re.names()[1].as_deref(), Some("b"));
    }

    #[test]
    fn refuses_what_it_cannot_match_exactly() {
        for p in [r"a.b", r"(?=a)", r"(?:a?)*", r"\1", "é", r"a$", r"[\w]"] {
            assert!(Regex::new(p).is_err(), "{p}");
        }
    }
}
