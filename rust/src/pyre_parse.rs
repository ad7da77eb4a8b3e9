//! The parser of [`crate::pyre`]'s patterns: a syntax tree, checked against the supported
//! subset as it is read.

use crate::error::CoreError;
use crate::hack_text::char_flags;
use crate::pychars::{DECIMAL, SPACE, WORD};
use crate::pyre::fold;

/// A character class: ASCII members (folded) and `pychars` categories, maybe negated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Set {
    pub(crate) bits: [u64; 2],
    pub(crate) cats: u8,
    pub(crate) negated: bool,
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

/// A pattern's syntax tree.
#[derive(Debug, Clone)]
pub(crate) enum Node {
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
    pub(crate) fn nullable(&self) -> bool {
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

/// The syntax tree of `pattern` and its group names (None for an unnamed group).
pub(crate) fn parse(pattern: &str) -> Result<(Node, Vec<Option<String>>), CoreError> {
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
    Ok((node, names))
}
