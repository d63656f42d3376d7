//! Tokens: program text cut into [`Tok`]ens with their byte spans.
//!
//! `logos` recognises the raw shape of each token (`Raw`); [`Lexer`] then turns every raw
//! token into a [`Tok`], converting literals (numbers, characters) and validating the ones that
//! keep borrowing the source (strings, keywords, symbols). All literal errors are therefore
//! found here, with the span of the offending token, and the grammar only deals with structure.
//!
//! Tokens are `Copy` and borrow the source, so lexing allocates nothing beyond the token vector.

use crate::error::{Error, ErrorKind, Result};
use crate::span::{LineIndex, Span};
use crate::value::{BigKind, BigNumber, Decimal, Value};
use logos::Logos;
use num_bigint::BigInt;
use num_traits::ToPrimitive;

use super::ReadLimits;

/// One token. Text-carrying variants borrow the program source.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Tok<'src> {
    /// `(`
    LParen,
    /// `)`
    RParen,
    /// `[`
    LBracket,
    /// `]`
    RBracket,
    /// `{`
    LBrace,
    /// `}`
    RBrace,
    /// `#{`
    SetOpen,
    /// `#(`
    FnOpen,
    /// `'`
    Quote,
    /// `@`
    Deref,
    /// `^`
    Meta,
    /// `#_`
    Discard,
    /// `#'`
    VarQuote,
    /// `#tag`: the tag without its `#`.
    Tag(&'src str),
    /// `` ` `` (syntax-quote).
    SyntaxQuote,
    /// `~` (unquote).
    Unquote,
    /// `~@` (unquote-splicing).
    UnquoteSplicing,
    /// `#:ns` before a map (`#:user{:name "x"}`): the namespace; `::` alone for `#::`.
    NsMap(&'src str),
    /// `nil`
    Nil,
    /// `true` or `false`.
    Bool(bool),
    /// An integer literal, already converted (`42`, `-0x1f`, `7N`).
    Int(i64),
    /// A float literal, already converted (`1.5`, `1e3`, `##NaN`).
    Float(f64),
    /// A literal of a big integer (`7N`, or too large for 64 bits), a ratio (`1/3`) or a big
    /// decimal (`1.5M`): the text, already validated; [`big_literal`] converts it.
    Big(&'src str),
    /// A string literal: the text between the quotes, escapes still in place (already validated).
    Str(&'src str),
    /// `#"..."`: the pattern text between the quotes, exactly as written.
    Regex(&'src str),
    /// A character literal, already converted (`\a`, `\newline`, `\u00e9`).
    Char(char),
    /// A keyword without its colon.
    Keyword(&'src str),
    /// `::name`, auto-resolved in the current namespace (always `user`): the name alone.
    AutoKeyword(&'src str),
    /// A symbol other than `nil`, `true` and `false`, possibly namespaced (`tool/fetch`).
    Symbol(&'src str),
}

impl Tok<'_> {
    /// Whether this token opens a collection, and the text of its opener.
    pub fn opener(self) -> Option<&'static str> {
        match self {
            Tok::LParen => Some("("),
            Tok::LBracket => Some("["),
            Tok::LBrace => Some("{"),
            Tok::SetOpen => Some("#{"),
            Tok::FnOpen => Some("#("),
            _ => None,
        }
    }

    /// Whether this token closes a collection, and which character it is.
    pub fn closer(self) -> Option<char> {
        match self {
            Tok::RParen => Some(')'),
            Tok::RBracket => Some(']'),
            Tok::RBrace => Some('}'),
            _ => None,
        }
    }

    /// Whether this token applies to the form after it (`'x`, `@x`, `^m x`, `#_ x`, `#tag x`).
    pub fn is_prefix(self) -> bool {
        matches!(
            self,
            Tok::Quote
                | Tok::Deref
                | Tok::Meta
                | Tok::Discard
                | Tok::Tag(_)
                | Tok::SyntaxQuote
                | Tok::Unquote
                | Tok::UnquoteSplicing
                | Tok::NsMap(_)
        )
    }
}

/// The closing character a collection opener needs.
pub fn closer_for(opener: Tok<'_>) -> char {
    match opener {
        Tok::LBracket => ']',
        Tok::LBrace | Tok::SetOpen => '}',
        _ => ')',
    }
}

/// Raw token shapes. `sc` is a symbol constituent: what may follow the first character of a
/// symbol, keyword or number. Clojure allows nearly any character there; PTC-Lisp accepts
/// ASCII symbol characters and Unicode letters, digits and marks, and reports anything else
/// (`§`, emoji, invisible characters) as an unexpected character.
#[derive(Logos, Debug, Clone, Copy, PartialEq)]
#[logos(skip r"[\s,\u{FEFF}]+")]
#[logos(skip(r"(;|#!)[^\n]*", allow_greedy = true))]
#[logos(subpattern sc = r"[A-Za-z0-9*+!\-_'?<>=/.&%$|#:\p{L}\p{N}\p{M}]")]
#[logos(subpattern start = r"[A-Za-z*!_?<>=/.&%$|\p{L}]")]
#[logos(subpattern sign_next = r"[A-Za-z*+!\-_'?<>=/.&%$|#:\p{L}\p{M}]")]
enum Raw {
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token("#{")]
    SetOpen,
    #[token("#(")]
    FnOpen,
    #[token("'")]
    Quote,
    #[token("@")]
    Deref,
    #[token("^")]
    Meta,
    #[token("#_")]
    Discard,
    #[token("#'")]
    VarQuote,
    #[regex(r"#[A-Za-z\p{L}](?&sc)*")]
    Tag,
    #[regex(r"##(?&sc)*")]
    Symbolic,
    #[token("`")]
    SyntaxQuote,
    #[token("~")]
    Unquote,
    #[token("~@")]
    UnquoteSplicing,
    #[regex(r"#\?@?")]
    ReaderConditional,
    #[token("#=")]
    ReadEval,
    #[regex(r"#:(?&sc)*")]
    NamespacedMap,
    /// `#` followed by nothing this reader knows.
    #[token("#")]
    Hash,
    /// A string literal, through its closing quote or to the end of the text.
    #[token("\"", quoted_rest)]
    Str(Quoted),
    /// A regex literal, through its closing quote or to the end of the text.
    #[token("#\"", quoted_rest)]
    Regex(Quoted),
    #[regex(r"\\[^\s](?&sc)*")]
    Char,
    /// `\` followed by whitespace or the end of the text.
    #[token("\\")]
    Backslash,
    #[regex(r"[+\-]?[0-9](?&sc)*")]
    Number,
    #[regex(r":(?&sc)*")]
    Keyword,
    #[regex(r"(?&start)(?&sc)*")]
    #[regex(r"[+\-]")]
    #[regex(r"[+\-](?&sign_next)(?&sc)*")]
    Symbol,
}

/// Whether a string or regex literal has its closing quote.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Quoted {
    Closed,
    Unterminated,
}

/// Moves past the rest of a string or regex literal whose opening quote was just read: through
/// the closing quote, or to the end of the text when there is none. (`\` escapes the character
/// after it.)
///
/// A loop rather than a pattern: logos matches an alternation such as `([^"\\]|\\.)*` by
/// recursing once per escape, so in an unoptimized build a literal with a few thousand escapes
/// (a long multi-line text) overflowed the stack.
fn quoted_rest(lex: &mut logos::Lexer<'_, Raw>) -> Quoted {
    let rest = lex.remainder();
    let bytes = rest.as_bytes();
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        match byte {
            b'"' => {
                lex.bump(i + 1);
                return Quoted::Closed;
            }
            // The escaped character may be several bytes long; none of its bytes is a quote
            // or a backslash, so the scan goes on from inside it safely.
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
    lex.bump(rest.len());
    Quoted::Unterminated
}

/// The token stream of one program: yields `(token, span)` pairs, or the first error.
///
/// After an error the iterator is exhausted.
pub struct Lexer<'src> {
    src: &'src str,
    raw: logos::Lexer<'src, Raw>,
    max_number_len: usize,
    done: bool,
}

impl<'src> Lexer<'src> {
    /// A lexer over `src`; `limits` bounds the length of number literals.
    pub fn new(src: &'src str, limits: &ReadLimits) -> Lexer<'src> {
        Lexer {
            src,
            raw: Raw::lexer(src),
            max_number_len: limits.max_number_literal_len,
            done: false,
        }
    }

    fn token(&self, raw: Raw, text: &'src str, span: Span) -> Result<Tok<'src>> {
        Ok(match raw {
            Raw::LParen => Tok::LParen,
            Raw::RParen => Tok::RParen,
            Raw::LBracket => Tok::LBracket,
            Raw::RBracket => Tok::RBracket,
            Raw::LBrace => Tok::LBrace,
            Raw::RBrace => Tok::RBrace,
            Raw::SetOpen => Tok::SetOpen,
            Raw::FnOpen => Tok::FnOpen,
            Raw::Quote => Tok::Quote,
            Raw::Deref => Tok::Deref,
            Raw::Meta => Tok::Meta,
            Raw::Discard => Tok::Discard,
            Raw::VarQuote => Tok::VarQuote,
            Raw::Tag => Tok::Tag(&text[1..]),
            Raw::Symbolic => match text {
                "##NaN" => Tok::Float(f64::NAN),
                "##Inf" => Tok::Float(f64::INFINITY),
                "##-Inf" => Tok::Float(f64::NEG_INFINITY),
                _ => {
                    return Err(Error::parse(
                        span,
                        format!(
                            "unknown symbolic value {text}; the symbolic values are ##NaN, ##Inf and ##-Inf"
                        ),
                    ));
                }
            },
            Raw::SyntaxQuote => Tok::SyntaxQuote,
            Raw::Unquote => Tok::Unquote,
            Raw::UnquoteSplicing => Tok::UnquoteSplicing,
            Raw::ReaderConditional => {
                return Err(Error::parse(
                    span,
                    format!(
                        "reader conditionals ({text}) are not supported; write the Clojure form directly"
                    ),
                ));
            }
            Raw::ReadEval => {
                return Err(Error::parse(span, "read-eval (#=) is not supported"));
            }
            Raw::NamespacedMap => match &text[2..] {
                "" => {
                    return Err(Error::parse(
                        span,
                        "#: needs a namespace before the map, e.g. #:user{:name \"x\"}",
                    ));
                }
                ":" => Tok::NsMap("user"),
                ns if ns.starts_with(':') => {
                    return Err(Error::parse(
                        span,
                        format!(
                            "#::{} resolves a namespace alias, which a map literal cannot use; \
                             write #:{} {{...}} with the full namespace",
                            &ns[1..],
                            &ns[1..]
                        ),
                    ));
                }
                ns => Tok::NsMap(ns),
            },
            Raw::Hash => {
                return Err(Error::parse(
                    span,
                    "unexpected '#': expected #{ (set), #( (function), #\" (regex), \
                     #' (var), #_ (discard) or a tag such as #inst",
                ));
            }
            Raw::Str(Quoted::Closed) => {
                let body = &text[1..text.len() - 1];
                validate_string_escapes(body, span.start as usize + 1)?;
                Tok::Str(body)
            }
            Raw::Regex(Quoted::Closed) => Tok::Regex(&text[2..text.len() - 1]),
            Raw::Str(Quoted::Unterminated) | Raw::Regex(Quoted::Unterminated) => {
                let what = if matches!(raw, Raw::Str(_)) {
                    "string"
                } else {
                    "regex"
                };
                let opened = LineIndex::new(self.src).pos(span.start as usize);
                let end = self.src.len();
                return Err(Error::parse(
                    Span::new(end, end),
                    format!("unterminated {what} starting at {opened}"),
                ));
            }
            Raw::Char => Tok::Char(char_literal(&text[1..], span)?),
            Raw::Backslash => {
                return Err(Error::parse(
                    span,
                    "expected a character after '\\' (write \\space for a space, \\newline for a newline)",
                ));
            }
            Raw::Number => {
                if text.len() > self.max_number_len && text.chars().count() > self.max_number_len {
                    return Err(Error::at(
                        ErrorKind::ProgramLimit,
                        span,
                        format!(
                            "number literal is {} characters long; the limit is {} characters",
                            text.chars().count(),
                            self.max_number_len
                        ),
                    ));
                }
                number(text).map_err(|msg| Error::parse(span, msg))?
            }
            Raw::Keyword if text.starts_with("::") => Tok::AutoKeyword(auto_keyword(text, span)?),
            Raw::Keyword => Tok::Keyword(keyword(text, span)?),
            Raw::Symbol => symbol(text, span)?,
        })
    }
}

impl<'src> Iterator for Lexer<'src> {
    /// Errors are boxed to keep the item, moved once per token, small.
    type Item = Result<(Tok<'src>, Span), Box<Error>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let raw = self.raw.next()?;
        let range = self.raw.span();
        let span = Span::new(range.start, range.end);
        let result = match raw {
            Ok(raw) => {
                let text = self.raw.slice();
                self.token(raw, text, span)
                    .map(|tok| (tok, span))
                    .map_err(Box::new)
            }
            Err(()) => {
                let c = self
                    .src
                    .get(range.start..)
                    .and_then(|rest| rest.chars().next())
                    .unwrap_or('\u{fffd}');
                let end = range.start + c.len_utf8();
                Err(Box::new(Error::parse(
                    Span::new(range.start, end),
                    format!("unexpected character '{}'", c.escape_debug()),
                )))
            }
        };
        if result.is_err() {
            self.done = true;
        }
        Some(result)
    }
}

/// Check the escapes of a string body; `offset` is the byte offset of `body` in the source.
fn validate_string_escapes(body: &str, offset: usize) -> Result<()> {
    if !body.contains('\\') {
        return Ok(());
    }
    let mut chars = body.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c != '\\' {
            continue;
        }
        let Some((_, e)) = chars.next() else {
            // The token regex guarantees a character after every backslash.
            break;
        };
        match e {
            'n' | 't' | 'r' | '"' | '\\' | 'b' | 'f' => {}
            'u' => {
                let after = &body[i + 2..];
                let hex_len = after
                    .char_indices()
                    .nth(4)
                    .map_or(after.len(), |(end, _)| end);
                let hex = &after[..hex_len];
                let escape_span = Span::new(offset + i, offset + i + 2 + hex.len());
                let unit = parse_hex4(hex).ok_or_else(|| {
                    Error::parse(
                        escape_span,
                        format!(
                            "invalid unicode escape \\u{hex} in string: \\u needs exactly 4 hex digits, e.g. \\u00e9"
                        ),
                    )
                })?;
                for _ in 0..4 {
                    chars.next();
                }
                if (0xD800..0xDC00).contains(&unit) {
                    let low = body
                        .get(i + 6..i + 12)
                        .and_then(|s| s.strip_prefix("\\u"))
                        .and_then(parse_hex4);
                    match low {
                        Some(low) if (0xDC00..0xE000).contains(&low) => {
                            for _ in 0..6 {
                                chars.next();
                            }
                        }
                        _ => {
                            return Err(Error::parse(
                                escape_span,
                                format!(
                                    "invalid unicode escape \\u{hex} in string: a high surrogate must be followed by a low surrogate escape (\\uDC00-\\uDFFF)"
                                ),
                            ));
                        }
                    }
                } else if (0xDC00..0xE000).contains(&unit) {
                    return Err(Error::parse(
                        escape_span,
                        format!(
                            "invalid unicode escape \\u{hex} in string: a low surrogate must follow a high surrogate"
                        ),
                    ));
                }
            }
            other => {
                let end = offset + i + 1 + other.len_utf8();
                return Err(Error::parse(
                    Span::new(offset + i, end),
                    format!(
                        "invalid escape \\{} in string; the escapes are \\n \\t \\r \\\" \\\\ \\b \\f and \\uXXXX",
                        other.escape_debug()
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn parse_hex4(hex: &str) -> Option<u32> {
    if hex.len() == 4 && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        u32::from_str_radix(hex, 16).ok()
    } else {
        None
    }
}

/// Resolve the escapes of a string body that the lexer validated.
///
/// Never fails: anything unexpected is kept as written.
pub fn unescape(body: &str) -> String {
    if !body.contains('\\') {
        return body.to_owned();
    }
    let mut out = String::with_capacity(body.len());
    let mut rest = body;
    while let Some(pos) = rest.find('\\') {
        out.push_str(&rest[..pos]);
        rest = &rest[pos + 1..];
        let mut chars = rest.chars();
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        let mut consumed = e.len_utf8();
        match e {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            '"' => out.push('"'),
            '\\' => out.push('\\'),
            'u' => match rest.get(1..5).and_then(parse_hex4) {
                Some(unit) if (0xD800..0xDC00).contains(&unit) => {
                    let low = rest
                        .get(5..11)
                        .and_then(|s| s.strip_prefix("\\u"))
                        .and_then(parse_hex4)
                        .filter(|low| (0xDC00..0xE000).contains(low));
                    match low.and_then(|low| {
                        char::from_u32(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
                    }) {
                        Some(c) => {
                            out.push(c);
                            consumed = 11;
                        }
                        None => {
                            out.push('\u{fffd}');
                            consumed = 5;
                        }
                    }
                }
                Some(unit) => {
                    out.push(char::from_u32(unit).unwrap_or('\u{fffd}'));
                    consumed = 5;
                }
                None => out.push_str("\\u"),
            },
            other => {
                out.push('\\');
                out.push(other);
            }
        }
        rest = &rest[consumed..];
    }
    out.push_str(rest);
    out
}

/// The character of a character literal, given the text after the backslash.
fn char_literal(name: &str, span: Span) -> Result<char> {
    let mut chars = name.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        return Ok(c);
    }
    let named = match name {
        "newline" => Some('\n'),
        "space" => Some(' '),
        "tab" => Some('\t'),
        "return" => Some('\r'),
        "backspace" => Some('\u{8}'),
        "formfeed" => Some('\u{c}'),
        _ => None,
    };
    if let Some(c) = named {
        return Ok(c);
    }
    if let Some(hex) = name.strip_prefix('u')
        && let Some(unit) = parse_hex4(hex)
    {
        return char::from_u32(unit).ok_or_else(|| {
            Error::parse(
                span,
                format!(
                    "invalid character literal \\{name}: \\u{hex} is a surrogate, not a character"
                ),
            )
        });
    }
    if let Some(octal) = name.strip_prefix('o')
        && !octal.is_empty()
        && octal.len() <= 3
        && octal.bytes().all(|b| (b'0'..=b'7').contains(&b))
    {
        let code = u32::from_str_radix(octal, 8).unwrap_or(u32::MAX);
        if code <= 0o377 {
            return char::from_u32(code)
                .ok_or_else(|| Error::parse(span, "invalid octal character"));
        }
    }
    Err(Error::parse(
        span,
        format!(
            "unsupported character literal \\{name}; write a single character (\\a), \\uXXXX, \
             or one of \\newline \\space \\tab \\return \\backspace \\formfeed"
        ),
    ))
}

/// Check the namespace/name structure shared by symbols and keywords.
fn qualified_name_ok(name: &str) -> bool {
    if name == "/" {
        return true;
    }
    let bytes = name.as_bytes();
    if bytes.last() == Some(&b':') {
        return false;
    }
    match bytes.iter().position(|&b| b == b'/') {
        None => true,
        Some(slash) => slash > 0 && slash + 1 < bytes.len(),
    }
}

/// The name of `::name`, which reads as `:user/name` since a program runs in `user`.
fn auto_keyword(text: &str, span: Span) -> Result<&str> {
    let name = &text[2..];
    if name.contains('/') {
        return Err(Error::parse(
            span,
            format!(
                "auto-resolved keywords with an alias ({text}) are not supported; write the \
                 keyword with its namespace in full (:some.namespace/{})",
                name.split_once('/').map_or(name, |(_, local)| local)
            ),
        ));
    }
    if name.is_empty() || !qualified_name_ok(name) || name.starts_with(':') {
        return Err(Error::parse(
            span,
            "expected a keyword name after '::' (e.g. ::name, which reads as :user/name)",
        ));
    }
    Ok(name)
}

fn keyword(text: &str, span: Span) -> Result<&str> {
    let name = &text[1..];
    if let Some(rest) = name.strip_prefix(':') {
        // `:::a` too: the hint must itself be a valid keyword.
        let rest = rest.trim_start_matches(':');
        let hint = if rest.is_empty() { "a" } else { rest };
        return Err(Error::parse(
            span,
            format!("auto-resolved keywords are not supported; write :{hint}"),
        ));
    }
    if name.is_empty() {
        return Err(Error::parse(
            span,
            "expected a keyword name after ':' (e.g. :name)",
        ));
    }
    if !qualified_name_ok(name) {
        return Err(Error::parse(
            span,
            format!(
                "invalid keyword {text}: a qualified keyword is :namespace/name with both parts non-empty"
            ),
        ));
    }
    Ok(name)
}

fn symbol<'src>(text: &'src str, span: Span) -> Result<Tok<'src>> {
    match text {
        "nil" => return Ok(Tok::Nil),
        "true" => return Ok(Tok::Bool(true)),
        "false" => return Ok(Tok::Bool(false)),
        _ => {}
    }
    let bytes = text.as_bytes();
    let leading_dot_number = match bytes {
        [b'.', d, ..] | [b'+' | b'-', b'.', d, ..] => d.is_ascii_digit(),
        _ => false,
    };
    if leading_dot_number {
        let fixed = match text.strip_prefix('-') {
            Some(rest) => format!("-0{rest}"),
            None => format!("0{}", text.trim_start_matches('+')),
        };
        return Err(Error::parse(
            span,
            format!("invalid number {text}; write {fixed}"),
        ));
    }
    if !qualified_name_ok(text) {
        return Err(Error::parse(
            span,
            format!(
                "invalid symbol {text}: a qualified symbol is namespace/name with both parts non-empty"
            ),
        ));
    }
    Ok(Tok::Symbol(text))
}

/// Convert a number token (`[+-]?[0-9]` followed by symbol characters) to an integer or float.
fn number(text: &str) -> std::result::Result<Tok<'_>, String> {
    let (negative, unsigned) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    // Fast path: plain decimal digits that cannot overflow (the common case).
    let digits = unsigned.as_bytes();
    if !digits.is_empty()
        && digits.len() <= 18
        && (digits.len() == 1 || digits[0] != b'0')
        && digits.iter().all(u8::is_ascii_digit)
    {
        let magnitude = digits
            .iter()
            .fold(0i64, |n, &d| n * 10 + i64::from(d - b'0'));
        return Ok(Tok::Int(if negative { -magnitude } else { magnitude }));
    }
    let invalid = || format!("invalid number literal {text}");
    match big_literal(text) {
        Some(Ok(_)) => return Ok(Tok::Big(text)),
        Some(Err(msg)) => return Err(msg),
        None => {}
    }
    if unsigned.contains('/') {
        return Err(invalid());
    }

    let int_body = unsigned;
    let (radix, digits) = if let Some(hex) = int_body
        .strip_prefix("0x")
        .or_else(|| int_body.strip_prefix("0X"))
    {
        (16, hex)
    } else if let Some((r, digits)) = int_body.split_once(['r', 'R'])
        && is_digits(r)
        && !r.starts_with('0')
    {
        match r.parse::<u32>() {
            Ok(radix @ 2..=36) => (radix, digits),
            _ => {
                return Err(format!(
                    "invalid number literal {text}: the radix must be between 2 and 36"
                ));
            }
        }
    } else if int_body.len() > 1 && int_body.starts_with('0') && is_digits(int_body) {
        if int_body.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
            (8, &int_body[1..])
        } else {
            let trimmed = int_body.trim_start_matches('0');
            return Err(format!(
                "invalid number literal {text}: a leading 0 means octal, which has no digits 8 or 9; write {}{}",
                if negative { "-" } else { "" },
                if trimmed.is_empty() { "0" } else { trimmed }
            ));
        }
    } else if is_digits(int_body) {
        (10, int_body)
    } else {
        return float(negative, unsigned).ok_or_else(invalid);
    };

    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return Err(invalid());
    }
    // Too large for 64 bits: `big_literal` took it.
    let magnitude = u64::from_str_radix(digits, radix).map_err(|_| invalid())?;
    let value = if negative {
        0i64.checked_sub_unsigned(magnitude)
    } else {
        i64::try_from(magnitude).ok()
    };
    value.map(Tok::Int).ok_or_else(invalid)
}

/// The value of a number literal that is not a 64-bit integer or a float: a big integer (`7N`,
/// `0xFFN`, or digits beyond 64 bits), a ratio (`1/3`; `4/2` is the integer 2) or a big decimal
/// (`1.50M`, `1e3M`). `None` for any other literal; an error for a malformed one of these
/// shapes.
pub(crate) fn big_literal(text: &str) -> Option<std::result::Result<Value, String>> {
    let (negative, unsigned) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let signed = |i: BigInt| if negative { -i } else { i };
    if let Some((num, den)) = unsigned.split_once('/') {
        if !(is_digits(num) && is_digits(den)) {
            return None;
        }
        let (num, den): (BigInt, BigInt) = (num.parse().ok()?, den.parse().ok()?);
        return Some(match BigNumber::ratio(signed(num), den) {
            None => Err(format!("invalid ratio literal {text}: divide by zero")),
            Some(Value::Big(b)) => Ok(match (b.kind(), b.to_i64()) {
                (BigKind::Int(_), Some(small)) => Value::Int(small),
                _ => Value::Big(b),
            }),
            Some(other) => Ok(other),
        });
    }
    if let Some(body) = unsigned.strip_suffix('M') {
        let shaped = body.starts_with(|c: char| c.is_ascii_digit());
        return shaped.then(|| {
            Decimal::parse(body)
                .map(|d| BigNumber::from_decimal(if negative { d.neg() } else { d }))
                .ok_or_else(|| format!("invalid number literal {text}"))
        });
    }
    let (body, suffixed) = match unsigned.strip_suffix('N') {
        Some(body) => (body, true),
        None => (unsigned, false),
    };
    let (radix, digits) =
        if let Some(hex) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
            (16, hex)
        } else if let Some((r, digits)) = body.split_once(['r', 'R'])
            && is_digits(r)
            && !r.starts_with('0')
        {
            (
                r.parse::<u32>().ok().filter(|r| (2..=36).contains(r))?,
                digits,
            )
        } else if body.len() > 1 && body.starts_with('0') && is_digits(body) {
            (8, &body[1..])
        } else {
            (10, body)
        };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = BigInt::parse_bytes(digits.as_bytes(), radix)?;
    let value = signed(magnitude);
    if suffixed {
        return Some(Ok(BigNumber::int(value)));
    }
    // Without the suffix only what does not fit in 64 bits is big.
    match value.to_i64() {
        Some(_) => None,
        None => Some(Ok(BigNumber::int(value))),
    }
}

/// `digits ('.' digits?)? ([eE] [+-]? digits)? 'M'?`, with at least one of the optional parts.
fn float(negative: bool, unsigned: &str) -> Option<Tok<'static>> {
    let (body, big_decimal) = match unsigned.strip_suffix('M') {
        Some(body) => (body, true),
        None => (unsigned, false),
    };
    let (mantissa, exponent) = match body.split_once(['e', 'E']) {
        Some((m, e)) => (m, Some(e)),
        None => (body, None),
    };
    let (int_part, frac_part) = match mantissa.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (mantissa, None),
    };
    let exponent_ok = exponent.is_none_or(|e| {
        let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
        !digits.is_empty() && is_digits(digits)
    });
    let shaped = !int_part.is_empty()
        && is_digits(int_part)
        && frac_part.is_none_or(|f| f.is_empty() || is_digits(f))
        && exponent_ok
        && (frac_part.is_some() || exponent.is_some() || big_decimal);
    if !shaped {
        return None;
    }
    let magnitude: f64 = body.parse().ok().or_else(|| {
        // Rust's parser rejects "3." followed by an exponent ("3.e5"); Clojure accepts it.
        let mut fixed = String::with_capacity(body.len() + 1);
        fixed.push_str(int_part);
        fixed.push('.');
        fixed.push_str(frac_part.unwrap_or(""));
        fixed.push('0');
        if let Some(e) = exponent {
            fixed.push('e');
            fixed.push_str(e);
        }
        fixed.parse().ok()
    })?;
    Some(Tok::Float(if negative { -magnitude } else { magnitude }))
}

fn is_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn toks(src: &str) -> Vec<Tok<'_>> {
        Lexer::new(src, &ReadLimits::default())
            .map(|r| r.map(|(t, _)| t))
            .collect::<Result<Vec<_>, _>>()
            .unwrap_or_else(|e| panic!("{src}: {}", e.render()))
    }

    #[test]
    fn numbers_convert_at_lex_time() {
        assert_eq!(
            toks("42 -7 +3 0xFF -0x1f 7N 017 2r1010 36rZ 0 -0"),
            vec![
                Tok::Int(42),
                Tok::Int(-7),
                Tok::Int(3),
                Tok::Int(255),
                Tok::Int(-31),
                Tok::Big("7N"),
                Tok::Int(15),
                Tok::Int(10),
                Tok::Int(35),
                Tok::Int(0),
                Tok::Int(0),
            ]
        );
        assert_eq!(
            toks("1.5 -2.0 1e3 1.5E-3 3. 2M 3.e2"),
            vec![
                Tok::Float(1.5),
                Tok::Float(-2.0),
                Tok::Float(1000.0),
                Tok::Float(0.0015),
                Tok::Float(3.0),
                Tok::Big("2M"),
                Tok::Float(300.0),
            ]
        );
        assert_eq!(
            toks("9223372036854775807 -9223372036854775808 9223372036854775808 1/3"),
            vec![
                Tok::Int(i64::MAX),
                Tok::Int(i64::MIN),
                Tok::Big("9223372036854775808"),
                Tok::Big("1/3"),
            ]
        );
    }

    #[test]
    fn big_literals_read_as_clojure_does() {
        let shown = |text: &str| match big_literal(text) {
            Some(Ok(v)) => crate::format::pr_str(&v),
            Some(Err(e)) => format!("error: {e}"),
            None => "none".to_string(),
        };
        let cases = [
            ("7N", "7N"),
            ("-0x10N", "-16N"),
            ("99999999999999999999", "99999999999999999999N"),
            ("-9223372036854775809", "-9223372036854775809N"),
            ("6/8", "3/4"),
            ("-4/2", "-2"),
            ("1/0", "error: invalid ratio literal 1/0: divide by zero"),
            ("1.50M", "1.50M"),
            ("-2M", "-2M"),
            ("1e3M", "1E+3M"),
            ("42", "none"),
            ("1.5", "none"),
        ];
        for (text, expected) in cases {
            assert_eq!(shown(text), expected, "{text}");
        }
    }

    #[test]
    fn unescape_resolves_every_escape() {
        assert_eq!(
            unescape(r#"a\nb\t\r\"\\\b\f\u00e9\uD83D\uDE00"#),
            "a\nb\t\r\"\\\u{8}\u{c}é😀"
        );
        assert_eq!(unescape("plain"), "plain");
    }

    #[test]
    fn literals_with_many_escapes_lex_on_a_default_stack() {
        let lexer = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(|| {
                let body = "line\\n\\\"é\\\\".repeat(50_000);
                let src = format!("\"{body}\" #\"{body}\" \"{body}\\");
                let limits = ReadLimits {
                    max_program_bytes: usize::MAX,
                    ..ReadLimits::default()
                };
                let mut lexer = Lexer::new(&src, &limits);
                assert_eq!(
                    lexer.next().map(|r| r.map(|(t, _)| t)),
                    Some(Ok(Tok::Str(&body)))
                );
                assert_eq!(
                    lexer.next().map(|r| r.map(|(t, _)| t)),
                    Some(Ok(Tok::Regex(&body)))
                );
                let error = lexer
                    .next()
                    .expect("a third token")
                    .expect_err("unterminated");
                assert_eq!(error.message, "unterminated string starting at 1:1100008");
                assert!(lexer.next().is_none());
            })
            .expect("thread");
        lexer.join().expect("no stack overflow");
    }
}
