//! The compiler of [`crate::pyre`]: a pattern's syntax tree, checked against the supported
//! subset, then a program for the matching machine.

use crate::error::CoreError;
use crate::hack_text::char_flags;
use crate::pychars::{DECIMAL, SPACE, WORD};
use crate::pyre::fold;

/// A character class: ASCII members (folded) and `pychars` categories, maybe negated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Set {
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
    pub(crate) fn contains(&self, cp: u32) -> bool {
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
pub(crate) enum Inst {
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

/// A compiled program: instructions, group names, possible first characters, and whether
/// every match starts with `\b`.
pub(crate) type Compiled = (Vec<Inst>, Vec<Option<String>>, Option<[u64; 2]>, bool);

/// Compile `pattern` (see [`crate::pyre`] for the subset).
pub(crate) fn compile(pattern: &str) -> Result<Compiled, CoreError> {
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
    Ok((prog, names, first, starts_with_boundary(&node)))
}
