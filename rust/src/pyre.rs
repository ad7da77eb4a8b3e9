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
//! Text is code points. `\w`, `\s` and `\d` read Python's own tables ([`crate::pychars`]).
//! Case-insensitive comparison follows `re`: a text character matches an ASCII letter when its
//! simple lowercase is that letter (`K` and U+212A KELVIN SIGN match `k`, U+0130 matches `i`),
//! plus `re`'s two extra equivalences for ASCII letters (U+0131 with `i`, U+017F with `s`).

use crate::error::CoreError;
use crate::hack_text::char_flags;
use crate::pychars::{DECIMAL, SPACE, WORD};

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
        match cp {
            0x130 | 0x131 => 0x69,
            0x17F => 0x73,
            0x212A => 0x6B,
            _ => cp,
        }
    }
}

#[inline]
fn is_word(cp: u32) -> bool {
    if cp < 0x80 {
        (cp as u8).is_ascii_alphanumeric() || cp == 0x5F
    } else {
        char_flags(cp) & WORD != 0
    }
}

/// A character class: ASCII members (folded) and `pychars` categories, maybe negated.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Set {
    bits: [u64; 2],
    cats: u8,
    negated: bool,
}

impl Set {
    fn add(&mut self, cp: u32) {
        let f = fold(cp);
        self.bits[(f >> 6) as usize] |= 1 << (f & 63);
    }

    #[inline]
    fn contains(&self, cp: u32) -> bool {
        let f = fold(cp);
        let member = (f < 128 && self.bits[(f >> 6) as usize] & (1 << (f & 63)) != 0)
            || (self.cats != 0 && char_flags(cp) & self.cats != 0);
        member != self.negated
    }
}

#[derive(Debug, Clone)]
enum Node {
    Char(u32),
    Set(Set),
    Start,
    WordBoundary,
    Concat(Vec<Node>),
    Alt(Vec<Node>),
    Group(Option<usize>, Box<Node>),
    Repeat {
        node: Box<Node>,
        min: u32,
        max: Option<u32>,
        greedy: bool,
    },
}

impl Node {
    fn nullable(&self) -> bool {
        match self {
            Node::Char(_) | Node::Set(_) => false,
            Node::Start | Node::WordBoundary => true,
            Node::Concat(v) => v.iter().all(Node::nullable),
            Node::Alt(v) => v.iter().any(Node::nullable),
            Node::Group(_, n) => n.nullable(),
            Node::Repeat { node, min, .. } => *min == 0 || node.nullable(),
        }
    }
}

struct Parser<'a> {
    chars: Vec<char>,
    at: usize,
    names: &'a mut Vec<Option<String>>,
    source: &'a str,
}

impl Parser<'_> {
    fn error(&self, what: &str) -> CoreError {
        CoreError::Value(format!(
            "pattern {:?}: {what} at position {} is not supported",
            self.source, self.at
        ))
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn alternation(&mut self) -> Result<Node, CoreError> {
        let mut alts = vec![self.concat()?];
        while self.eat('|') {
            alts.push(self.concat()?);
        }
        Ok(if alts.len() == 1 {
            alts.pop().unwrap_or(Node::Concat(vec![]))
        } else {
            Node::Alt(alts)
        })
    }

    fn concat(&mut self) -> Result<Node, CoreError> {
        let mut items = Vec::new();
        while let Some(c) = self.peek() {
            if c == '|' || c == ')' {
                break;
            }
            let atom = self.atom()?;
            items.push(self.quantified(atom)?);
        }
        Ok(Node::Concat(items))
    }

    fn number(&mut self) -> Option<u32> {
        let start = self.at;
        while matches!(self.peek(), Some('0'..='9')) {
            self.at += 1;
        }
        (self.at > start)
            .then(|| self.chars[start..self.at].iter().collect::<String>())?
            .parse()
            .ok()
    }

    fn quantified(&mut self, atom: Node) -> Result<Node, CoreError> {
        let (min, max) = match self.peek() {
            Some('*') => (0, None),
            Some('+') => (1, None),
            Some('?') => (0, Some(1)),
            Some('{') => {
                let save = self.at;
                self.at += 1;
                let lo = self.number();
                let bounds = if self.eat('}') {
                    lo.map(|m| (m, Some(m)))
                } else if self.eat(',') {
                    let hi = self.number();
                    if self.eat('}') {
                        Some((lo.unwrap_or(0), hi))
                    } else {
                        None
                    }
                } else {
                    None
                };
                match bounds {
                    Some((lo, hi)) => {
                        self.at -= 1;
                        (lo, hi)
                    }
                    None => {
                        self.at = save;
                        return Err(self.error("a '{' that is not a repeat"));
                    }
                }
            }
            _ => return Ok(atom),
        };
        self.at += 1;
        let greedy = !self.eat('?');
        if matches!(self.peek(), Some('*' | '+' | '?' | '{')) {
            return Err(self.error("a repeated repeat"));
        }
        if atom.nullable() {
            return Err(self.error("a repeat of what can match empty"));
        }
        if max.is_some_and(|m| m < min) {
            return Err(self.error("a repeat with max < min"));
        }
        Ok(Node::Repeat {
            node: Box::new(atom),
            min,
            max,
            greedy,
        })
    }

    fn category(&self, c: char) -> Option<(u8, bool)> {
        match c {
            's' => Some((SPACE, false)),
            'w' => Some((WORD, false)),
            'd' => Some((DECIMAL, false)),
            'S' => Some((SPACE, true)),
            'W' => Some((WORD, true)),
            'D' => Some((DECIMAL, true)),
            _ => None,
        }
    }

    /// An escaped literal (`\n`, `\t`, or escaped ASCII punctuation).
    fn escaped_literal(&self, c: char) -> Result<u32, CoreError> {
        match c {
            'n' => Ok(10),
            't' => Ok(9),
            'r' => Ok(13),
            c if c.is_ascii_punctuation() || c == ' ' => Ok(c as u32),
            _ => Err(self.error("this escape")),
        }
    }

    fn literal(&self, c: char) -> Result<u32, CoreError> {
        if c.is_ascii() {
            Ok(c as u32)
        } else {
            Err(self.error("a non-ASCII character"))
        }
    }

    fn atom(&mut self) -> Result<Node, CoreError> {
        let c = self.peek().ok_or_else(|| self.error("the end"))?;
        self.at += 1;
        match c {
            '(' => {
                let index = if self.eat('?') {
                    if self.eat(':') {
                        None
                    } else if self.eat('P') && self.eat('<') {
                        let start = self.at;
                        while self.peek().is_some_and(|c| c != '>') {
                            self.at += 1;
                        }
                        let name: String = self.chars[start..self.at].iter().collect();
                        if !self.eat('>') {
                            return Err(self.error("an unclosed group name"));
                        }
                        self.names.push(Some(name));
                        Some(self.names.len() - 1)
                    } else {
                        return Err(self.error("this group kind"));
                    }
                } else {
                    self.names.push(None);
                    Some(self.names.len() - 1)
                };
                let inner = self.alternation()?;
                if !self.eat(')') {
                    return Err(self.error("an unclosed group"));
                }
                Ok(Node::Group(index, Box::new(inner)))
            }
            '[' => self.class(),
            '^' => Ok(Node::Start),
            '\\' => {
                let e = self
                    .peek()
                    .ok_or_else(|| self.error("a trailing backslash"))?;
                self.at += 1;
                if e == 'b' {
                    return Ok(Node::WordBoundary);
                }
                if let Some((cat, negated)) = self.category(e) {
                    return Ok(Node::Set(Set {
                        bits: [0; 2],
                        cats: cat,
                        negated,
                    }));
                }
                Ok(Node::Char(fold(self.escaped_literal(e)?)))
            }
            '.' | '$' | '*' | '+' | '?' | '{' | ')' | ']' => {
                self.at -= 1;
                Err(self.error(&format!("{c:?}")))
            }
            c => Ok(Node::Char(fold(self.literal(c)?))),
        }
    }

    fn class(&mut self) -> Result<Node, CoreError> {
        let mut set = Set {
            bits: [0; 2],
            cats: 0,
            negated: self.eat('^'),
        };
        let mut first = true;
        loop {
            let c = self.peek().ok_or_else(|| self.error("an unclosed class"))?;
            self.at += 1;
            if c == ']' && !first {
                break;
            }
            first = false;
            let lo = if c == '\\' {
                let e = self
                    .peek()
                    .ok_or_else(|| self.error("a trailing backslash"))?;
                self.at += 1;
                if let Some((cat, negated)) = self.category(e) {
                    if negated || cat != SPACE {
                        return Err(self.error("this category in a class"));
                    }
                    set.cats |= cat;
                    continue;
                }
                self.escaped_literal(e)?
            } else {
                self.literal(c)?
            };
            let range =
                self.peek() == Some('-') && self.chars.get(self.at + 1).is_some_and(|&n| n != ']');
            if range {
                self.at += 1;
                let h = self.peek().ok_or_else(|| self.error("an unclosed class"))?;
                self.at += 1;
                let hi = if h == '\\' {
                    let e = self
                        .peek()
                        .ok_or_else(|| self.error("a trailing backslash"))?;
                    self.at += 1;
                    self.escaped_literal(e)?
                } else {
                    self.literal(h)?
                };
                if hi < lo {
                    return Err(self.error("a reversed range"));
                }
                (lo..=hi).for_each(|cp| set.add(cp));
            } else {
                set.add(lo);
            }
        }
        Ok(Node::Set(set))
    }
}

#[derive(Debug, Clone)]
enum Inst {
    Char(u32),
    Set(Set),
    /// Alternatives in order, each with the folded ASCII characters it can start with (None:
    /// any, or it can match empty); only those the next character can start are tried.
    Alt(Vec<(Option<[u64; 2]>, usize)>),
    Split(usize, usize),
    Jmp(usize),
    Save(usize),
    Start,
    WordBoundary,
    Match,
}

fn emit(node: &Node, prog: &mut Vec<Inst>) {
    match node {
        Node::Char(c) => prog.push(Inst::Char(*c)),
        Node::Set(s) => prog.push(Inst::Set(s.clone())),
        Node::Start => prog.push(Inst::Start),
        Node::WordBoundary => prog.push(Inst::WordBoundary),
        Node::Concat(items) => items.iter().for_each(|n| emit(n, prog)),
        Node::Alt(alts) => {
            let at = prog.len();
            prog.push(Inst::Jmp(0));
            let mut branches = Vec::new();
            let mut jumps = Vec::new();
            for alt in alts {
                branches.push((first_of(alt), prog.len()));
                emit(alt, prog);
                jumps.push(prog.len());
                prog.push(Inst::Jmp(0));
            }
            let end = prog.len();
            for j in jumps {
                prog[j] = Inst::Jmp(end);
            }
            prog[at] = Inst::Alt(branches);
        }
        Node::Group(index, inner) => match index {
            Some(g) => {
                prog.push(Inst::Save(2 * g));
                emit(inner, prog);
                prog.push(Inst::Save(2 * g + 1));
            }
            None => emit(inner, prog),
        },
        Node::Repeat {
            node,
            min,
            max,
            greedy,
        } => {
            for _ in 0..*min {
                emit(node, prog);
            }
            let split = |body: usize, out: usize| {
                if *greedy {
                    Inst::Split(body, out)
                } else {
                    Inst::Split(out, body)
                }
            };
            match max {
                None => {
                    let top = prog.len();
                    prog.push(Inst::Jmp(0));
                    emit(node, prog);
                    prog.push(Inst::Jmp(top));
                    let out = prog.len();
                    prog[top] = split(top + 1, out);
                }
                Some(max) => {
                    let mut holes = Vec::new();
                    for _ in *min..*max {
                        holes.push(prog.len());
                        prog.push(Inst::Jmp(0));
                        emit(node, prog);
                    }
                    let out = prog.len();
                    for h in holes {
                        prog[h] = split(h + 1, out);
                    }
                }
            }
        }
    }
}

/// The folded ASCII characters a match of `node` can start with; None when it can start with
/// any character or match empty.
fn first_of(node: &Node) -> Option<[u64; 2]> {
    fn walk(node: &Node, bits: &mut [u64; 2]) -> Option<bool> {
        // Some(nullable) when the first characters are all in `bits`; None for "any".
        match node {
            Node::Char(c) => {
                if *c >= 128 {
                    return None;
                }
                bits[(*c >> 6) as usize] |= 1 << (c & 63);
                Some(false)
            }
            Node::Set(s) => {
                if s.negated || s.cats != 0 {
                    return None;
                }
                bits[0] |= s.bits[0];
                bits[1] |= s.bits[1];
                Some(false)
            }
            Node::Start | Node::WordBoundary => Some(true),
            Node::Concat(items) => {
                for item in items {
                    if !walk(item, bits)? {
                        return Some(false);
                    }
                }
                Some(true)
            }
            Node::Alt(alts) => {
                let mut nullable = false;
                for alt in alts {
                    nullable |= walk(alt, bits)?;
                }
                Some(nullable)
            }
            Node::Group(_, inner) => walk(inner, bits),
            Node::Repeat { node, min, .. } => Some(walk(node, bits)? || *min == 0),
        }
    }
    let mut bits = [0u64; 2];
    match walk(node, &mut bits) {
        Some(false) => Some(bits),
        _ => None,
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
}

/// A text as code points, with the positions where a word starts (read when needed).
#[derive(Debug, Default)]
pub struct Text {
    pub cps: Vec<u32>,
    starts: Vec<u32>,
    starts_known: bool,
}

impl Text {
    /// Read `bytes` (UTF-8 or WTF-8) into this text, reusing its buffers.
    pub fn fill(&mut self, bytes: &[u8]) {
        code_points(bytes, &mut self.cps);
        self.starts_known = false;
    }

    fn ensure_starts(&mut self) {
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
        let mut names = Vec::new();
        let mut parser = Parser {
            chars: pattern.chars().collect(),
            at: 0,
            names: &mut names,
            source: pattern,
        };
        let node = parser.alternation()?;
        if parser.at != parser.chars.len() {
            return Err(parser.error("an unbalanced ')'"));
        }
        let mut prog = Vec::new();
        emit(&node, &mut prog);
        prog.push(Inst::Match);
        let first = first_chars(&prog);
        let at_boundary = starts_with_boundary(&node);
        let mut lut = [false; 128];
        let mut word_starts = at_boundary && first.is_some();
        if let Some(bits) = &first {
            for (cp, slot) in lut.iter_mut().enumerate() {
                let f = fold(cp as u32);
                *slot = bits[(f >> 6) as usize] & (1 << (f & 63)) != 0;
                word_starts &= !*slot || is_word(cp as u32);
            }
        }
        Ok(Regex {
            prog,
            names,
            first,
            at_boundary,
            lut,
            word_starts,
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

/// True when every match of `node` begins with a `\b` assertion.
fn starts_with_boundary(node: &Node) -> bool {
    match node {
        Node::WordBoundary => true,
        Node::Concat(items) => items.first().is_some_and(starts_with_boundary),
        Node::Alt(alts) => alts.iter().all(starts_with_boundary),
        Node::Group(_, inner) => starts_with_boundary(inner),
        _ => false,
    }
}

/// The folded ASCII characters that can start a match, or None when a match can start with any
/// character (or match empty). Assertions are passed over, so this is a superset.
fn first_chars(prog: &[Inst]) -> Option<[u64; 2]> {
    let mut bits = [0u64; 2];
    let mut seen = vec![false; prog.len()];
    let mut todo = vec![0usize];
    while let Some(pc) = todo.pop() {
        if std::mem::replace(&mut seen[pc], true) {
            continue;
        }
        match &prog[pc] {
            Inst::Char(c) => {
                if *c >= 128 {
                    return None;
                }
                bits[(*c >> 6) as usize] |= 1 << (c & 63);
            }
            Inst::Set(s) => {
                if s.negated || s.cats != 0 {
                    return None;
                }
                bits[0] |= s.bits[0];
                bits[1] |= s.bits[1];
            }
            Inst::Split(a, b) => {
                todo.push(*a);
                todo.push(*b);
            }
            Inst::Alt(branches) => todo.extend(branches.iter().map(|(_, t)| *t)),
            Inst::Jmp(a) => todo.push(*a),
            Inst::Save(_) | Inst::Start | Inst::WordBoundary => todo.push(pc + 1),
            Inst::Match => return None,
        }
    }
    Some(bits)
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
        let b = bytes[i];
        let (len, init) = if b < 0x80 {
            (1, u32::from(b))
        } else if b < 0xE0 {
            (2, u32::from(b & 0x1F))
        } else if b < 0xF0 {
            (3, u32::from(b & 0x0F))
        } else {
            (4, u32::from(b & 0x07))
        };
        let end = (i + len).min(bytes.len());
        out.push(
            bytes[i + 1..end]
                .iter()
                .fold(init, |acc, &c| (acc << 6) | u32::from(c & 0x3F)),
        );
        i = end;
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
