//! Grammar: tokens to [`Form`]s, by hand for most programs and with chumsky for the rest.
//!
//! [`parse`] runs three steps over the program:
//!
//! 1. the size check ([`ReadLimits::max_program_bytes`]), before any other work;
//! 2. one linear pass that lexes ([`Lexer`]) and, token by token, checks that delimiters
//!    balance and that nesting stays within [`ReadLimits::max_depth`] — so every bracket
//!    problem gets a precise message naming where the opener is, and the grammar below can
//!    never recurse deeper than the limit;
//! 3. the forms: a hand-written reader ([`Plain`]) for programs made of atoms, collections and
//!    the common prefixes, and otherwise the chumsky grammar over the token slice, which only
//!    has structural errors left to find (a prefix with no form after it, `#'` without a
//!    symbol, a map with an odd number of forms).
//!
//! The grammar runs with chumsky's zero-sized error type first: most programs are well-formed,
//! and tracking expectations costs time on every alternative tried. Only when that run fails
//! does the grammar run again with its own error type (`ReadErr`) to say what was expected
//! where.

use chumsky::DefaultExpected;
use chumsky::error::LabelError;
use chumsky::input::ValueInput;
use chumsky::prelude::*;
use chumsky::util::MaybeRef;

use super::lexer::{Lexer, Tok, closer_for, unescape};
use super::{Form, FormKind, ReadLimits};
use crate::error::{Error, ErrorKind, Result};
use crate::span::{LineIndex, Span};
use crate::value::{Value, intern};

/// Read every top-level form of `src`.
///
/// Errors carry a byte span; [`super::read`] resolves it to `line:column`.
pub fn parse(src: &str, limits: &ReadLimits) -> Result<Vec<Form>> {
    if src.len() > limits.max_program_bytes {
        // Where the limit is crossed: the first character past it.
        let mut at = limits.max_program_bytes;
        while !src.is_char_boundary(at) {
            at -= 1;
        }
        return Err(Error::at(
            ErrorKind::ProgramLimit,
            Span::new(at, at),
            format!(
                "program is {} bytes; the limit is {} bytes: split the work into smaller programs",
                src.len(),
                limits.max_program_bytes
            ),
        ));
    }
    let tokens = tokens(src, limits)?;
    if let Some(forms) = Plain::new(&tokens).program() {
        return Ok(forms);
    }
    let input = tokens.as_slice();
    if let Ok(forms) = grammar::<_, EmptyErr>().parse(input).into_result() {
        return Ok(forms);
    }
    let eoi = Span::new(src.len(), src.len());
    match grammar::<_, ReadErr>().parse(input).into_result() {
        Ok(forms) => Ok(forms),
        Err(errors) => Err(match errors.into_iter().next() {
            Some(err) => err.into_error(src, &tokens),
            None => Error::parse(eoi, "the program could not be read"),
        }),
    }
}

/// A collection opened and not yet closed.
struct Open {
    opener: &'static str,
    closer: char,
    span: Span,
    /// Nesting depth of the forms inside this collection.
    depth: usize,
}

/// Lex `src` and check its delimiters and nesting in the same pass.
///
/// Depth counts open collections and pending prefixes: `'''x` nests like `(quote (quote (quote
/// x)))` and is bounded the same way. A prefix stays pending until the next atom or collection.
fn tokens<'src>(src: &'src str, limits: &ReadLimits) -> Result<Vec<Spanned<'src>>> {
    // Programs average more than three bytes per token.
    let mut tokens = Vec::with_capacity((src.len() / 3 + 8).min(1 << 16));
    let mut stack: Vec<Open> = Vec::new();
    let mut pending = 0usize;
    let too_deep = |depth: usize, span: Span| {
        Error::at(
            ErrorKind::ProgramLimit,
            span,
            format!(
                "nesting depth {depth} exceeds the limit of {}; flatten the program \
                 (bind intermediate results with let, or thread them with ->>)",
                limits.max_depth
            ),
        )
    };
    for token in Lexer::new(src, limits) {
        let (tok, span) = token.map_err(|err| *err)?;
        let base = stack.last().map_or(0, |open| open.depth);
        if let Some(opener) = tok.opener() {
            let depth = base + pending + 1;
            if depth > limits.max_depth {
                return Err(too_deep(depth, span));
            }
            stack.push(Open {
                opener,
                closer: closer_for(tok),
                span,
                depth,
            });
            pending = 0;
        } else if let Some(found) = tok.closer() {
            let Some(open) = stack.pop() else {
                return Err(Error::parse(
                    span,
                    format!("unexpected '{found}': nothing to close"),
                ));
            };
            let expected = open.closer;
            if found != expected {
                let opened = LineIndex::new(src).pos(open.span.start as usize);
                return Err(Error::parse(
                    span,
                    format!(
                        "mismatched delimiter: '{}' opened at {opened} must be closed by '{expected}', found '{found}'",
                        open.opener
                    ),
                ));
            }
            pending = 0;
        } else if tok.is_prefix() {
            pending += 1;
            if base + pending > limits.max_depth {
                return Err(too_deep(base + pending, span));
            }
        } else if !matches!(tok, Tok::VarQuote) {
            pending = 0;
        }
        tokens.push((tok, span));
    }
    if let Some(open) = stack.last() {
        let opened = LineIndex::new(src).pos(open.span.start as usize);
        return Err(Error::parse(
            Span::new(src.len(), src.len()),
            format!("unclosed '{}' opened at {opened}", open.opener),
        ));
    }
    Ok(tokens)
}

/// The grammar written out by hand for what programs are mostly made of: atoms, collections,
/// `'`, `@`, `` ` ``, `~`, `~@`, `#'`, `#tag` and `#:ns` forms. It gives up (`None`) at `#_`
/// and `^` and at a map with an odd number of forms, and the chumsky grammar then reads the
/// program or says what is wrong with it. Its forms equal the grammar's (a test reads every
/// program of the test suites both ways); it is several times faster, which matters for the
/// many short programs a host runs.
struct Plain<'t, 'src> {
    tokens: &'t [Spanned<'src>],
    at: usize,
}

impl<'t, 'src> Plain<'t, 'src> {
    fn new(tokens: &'t [Spanned<'src>]) -> Plain<'t, 'src> {
        Plain { tokens, at: 0 }
    }

    /// Every top-level form.
    fn program(mut self) -> Option<Vec<Form>> {
        let mut forms = Vec::new();
        while self.at < self.tokens.len() {
            forms.push(self.form()?);
        }
        Some(forms)
    }

    /// The forms up to the closer `close`, and the whole collection's span from `open`.
    fn items(&mut self, open: Span, close: Tok<'static>) -> Option<(Vec<Form>, Span)> {
        let mut forms = Vec::new();
        loop {
            let &(tok, span) = self.tokens.get(self.at)?;
            if tok.closer().is_some() {
                self.at += 1;
                return (tok == close).then(|| (forms, open.to(span)));
            }
            forms.push(self.form()?);
        }
    }

    fn form(&mut self) -> Option<Form> {
        let &(tok, span) = self.tokens.get(self.at)?;
        self.at += 1;
        if let Some(atom) = atom_form(tok, span) {
            return Some(atom);
        }
        let wrapping = |this: &mut Self, wrap: fn(Box<Form>) -> FormKind| {
            let inner = this.form()?;
            let whole = span.to(inner.span);
            Some(Form::new(wrap(Box::new(inner)), whole))
        };
        match tok {
            Tok::LParen => {
                let (forms, whole) = self.items(span, Tok::RParen)?;
                Some(Form::new(FormKind::List(forms), whole))
            }
            Tok::LBracket => {
                let (forms, whole) = self.items(span, Tok::RBracket)?;
                Some(Form::new(FormKind::Vector(forms), whole))
            }
            Tok::LBrace => {
                let (forms, whole) = self.items(span, Tok::RBrace)?;
                (forms.len() % 2 == 0).then(|| Form::new(FormKind::Map(forms), whole))
            }
            Tok::SetOpen => {
                let (forms, whole) = self.items(span, Tok::RBrace)?;
                Some(Form::new(FormKind::Set(forms), whole))
            }
            Tok::FnOpen => {
                let (forms, whole) = self.items(span, Tok::RParen)?;
                Some(Form::new(FormKind::AnonFn(forms), whole))
            }
            Tok::Quote => wrapping(self, FormKind::Quote),
            Tok::Deref => wrapping(self, FormKind::Deref),
            Tok::SyntaxQuote => wrapping(self, FormKind::SyntaxQuote),
            Tok::Unquote => wrapping(self, FormKind::Unquote),
            Tok::UnquoteSplicing => wrapping(self, FormKind::UnquoteSplicing),
            Tok::VarQuote => {
                let &(Tok::Symbol(name), end) = self.tokens.get(self.at)? else {
                    return None;
                };
                self.at += 1;
                Some(Form::new(FormKind::Var(name.to_owned()), span.to(end)))
            }
            Tok::Tag(tag) => {
                let inner = self.form()?;
                let whole = span.to(inner.span);
                Some(Form::new(
                    FormKind::Tagged(tag.to_owned(), Box::new(inner)),
                    whole,
                ))
            }
            Tok::NsMap(ns) => {
                let inner = self.form()?;
                let whole = span.to(inner.span);
                qualify_keys(ns, inner).map(|map| Form { span: whole, ..map })
            }
            _ => None,
        }
    }
}

/// A token with its byte span: what the grammar reads. chumsky's own spans are then token
/// indices, which [`ReadErr::into_error`] maps back to bytes.
type Spanned<'src> = (Tok<'src>, Span);

/// What the grammar expected where it failed; a bit set in [`ReadErr`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    Form,
    QuoteForm,
    DerefForm,
    MetaForm,
    DiscardForm,
    TagForm,
    SyntaxQuoteForm,
    UnquoteForm,
    NsMapForm,
    VarSymbol,
    CloseParen,
    CloseBracket,
    CloseBrace,
    End,
}

impl Expect {
    const ALL: [Expect; 14] = [
        Expect::Form,
        Expect::QuoteForm,
        Expect::DerefForm,
        Expect::MetaForm,
        Expect::DiscardForm,
        Expect::TagForm,
        Expect::SyntaxQuoteForm,
        Expect::UnquoteForm,
        Expect::NsMapForm,
        Expect::VarSymbol,
        Expect::CloseParen,
        Expect::CloseBracket,
        Expect::CloseBrace,
        Expect::End,
    ];

    fn bit(self) -> u16 {
        1 << (self as u16)
    }

    fn describe(self) -> &'static str {
        match self {
            Expect::Form => "a form",
            Expect::QuoteForm => "a form after ' (quote)",
            Expect::DerefForm => "a form after @ (deref)",
            Expect::MetaForm => "a metadata form after ^",
            Expect::DiscardForm => "a form for #_ to discard",
            Expect::TagForm => "a form after the tag (e.g. #inst \"2024-01-01T00:00:00Z\")",
            Expect::SyntaxQuoteForm => "a form after ` (syntax-quote)",
            Expect::UnquoteForm => "a form after ~ or ~@ (unquote)",
            Expect::NsMapForm => "a map after #:ns (e.g. #:user{:name \"x\"})",
            Expect::VarSymbol => "a symbol after #' (e.g. #'inc)",
            Expect::CloseParen => "')'",
            Expect::CloseBracket => "']'",
            Expect::CloseBrace => "'}'",
            Expect::End => "end of input",
        }
    }
}

/// The grammar's error type: cheap to create and merge (no allocation) because chumsky makes
/// one for every alternative that does not match.
#[derive(Debug, Clone, PartialEq)]
struct ReadErr {
    /// Where, in token indices.
    at: SimpleSpan,
    /// `false` when the grammar ran into the end of the input.
    found_token: bool,
    expected: u16,
    /// A complete message with its byte span, for errors the grammar words itself.
    custom: Option<(Span, String)>,
}

impl ReadErr {
    fn into_error(self, src: &str, tokens: &[Spanned<'_>]) -> Error {
        if let Some((span, message)) = self.custom {
            let end = src.len();
            let span = Span::new((span.start as usize).min(end), (span.end as usize).min(end));
            return Error::parse(span, message);
        }
        let expected: Vec<&str> = Expect::ALL
            .iter()
            .filter(|e| self.expected & e.bit() != 0)
            .map(|e| e.describe())
            .collect();
        let expected = if expected.is_empty() {
            "a form".to_owned()
        } else {
            expected.join(" or ")
        };
        let (span, found) = match tokens.get(self.at.start) {
            Some(&(_, span)) if self.found_token => {
                let text = src.get(span.range()).unwrap_or("");
                let mut shown: String = text.chars().take(40).collect();
                if shown.len() < text.len() {
                    shown.push_str("...");
                }
                (span, format!("'{shown}'"))
            }
            _ => (Span::new(src.len(), src.len()), "end of input".to_owned()),
        };
        Error::parse(span, format!("expected {expected}, found {found}"))
    }
}

fn expectation_bit(expected: DefaultExpected<'_, Spanned<'_>>) -> u16 {
    match expected {
        DefaultExpected::Token(tok) => match tok.0 {
            Tok::RParen => Expect::CloseParen.bit(),
            Tok::RBracket => Expect::CloseBracket.bit(),
            Tok::RBrace => Expect::CloseBrace.bit(),
            _ => Expect::Form.bit(),
        },
        DefaultExpected::EndOfInput => Expect::End.bit(),
        _ => Expect::Form.bit(),
    }
}

impl<'t, 'src: 't, I> chumsky::error::Error<'t, I> for ReadErr
where
    I: ValueInput<'t, Token = Spanned<'src>, Span = SimpleSpan>,
{
    fn merge(mut self, other: ReadErr) -> ReadErr {
        match (&self.custom, &other.custom) {
            (Some(_), _) => self,
            (None, Some(_)) => other,
            (None, None) => {
                self.expected |= other.expected;
                self
            }
        }
    }
}

impl<'t, 'src: 't, I> LabelError<'t, I, DefaultExpected<'t, Spanned<'src>>> for ReadErr
where
    I: ValueInput<'t, Token = Spanned<'src>, Span = SimpleSpan>,
{
    fn expected_found<E: IntoIterator<Item = DefaultExpected<'t, Spanned<'src>>>>(
        expected: E,
        found: Option<MaybeRef<'t, Spanned<'src>>>,
        at: SimpleSpan,
    ) -> ReadErr {
        ReadErr {
            at,
            found_token: found.is_some(),
            expected: expected
                .into_iter()
                .fold(0, |bits, e| bits | expectation_bit(e)),
            custom: None,
        }
    }
}

impl<'t, 'src: 't, I> LabelError<'t, I, Expect> for ReadErr
where
    I: ValueInput<'t, Token = Spanned<'src>, Span = SimpleSpan>,
{
    fn expected_found<E: IntoIterator<Item = Expect>>(
        expected: E,
        found: Option<MaybeRef<'t, Spanned<'src>>>,
        at: SimpleSpan,
    ) -> ReadErr {
        ReadErr {
            at,
            found_token: found.is_some(),
            expected: expected.into_iter().fold(0, |bits, e| bits | e.bit()),
            custom: None,
        }
    }

    fn label_with(&mut self, label: Expect) {
        if self.custom.is_none() {
            self.expected = label.bit();
        }
    }
}

/// The forms of a sequence with the `#_`-discarded ones (`None`) left out.
struct Items(Vec<Form>);

impl FromIterator<Option<Form>> for Items {
    fn from_iter<T: IntoIterator<Item = Option<Form>>>(iter: T) -> Items {
        Items(iter.into_iter().flatten().collect())
    }
}

/// What the grammar needs of its error type. The grammar runs first with chumsky's
/// zero-sized [`EmptyErr`], which keeps the common, successful parse cheap, and only when that
/// fails a second time with [`ReadErr`] to explain why.
trait GrammarError<'t, I: ValueInput<'t>>:
    chumsky::error::Error<'t, I> + LabelError<'t, I, Expect>
{
    fn custom(span: Span, message: impl FnOnce() -> String) -> Self;
}

impl<'t, 'src: 't, I> GrammarError<'t, I> for ReadErr
where
    I: ValueInput<'t, Token = Spanned<'src>, Span = SimpleSpan>,
{
    fn custom(span: Span, message: impl FnOnce() -> String) -> ReadErr {
        ReadErr {
            at: SimpleSpan::from(0..0),
            found_token: true,
            expected: 0,
            custom: Some((span, message())),
        }
    }
}

impl<'t, I: ValueInput<'t>> GrammarError<'t, I> for EmptyErr {
    fn custom(_: Span, _: impl FnOnce() -> String) -> EmptyErr {
        EmptyErr::default()
    }
}

type Extra<E> = extra::Err<E>;

// The grammar is LL(1): at every choice the alternatives start with different tokens, and what
// follows a repetition cannot start like the repeated part. chumsky backtracks whenever an
// alternative fails, even after it consumed input; with alternatives that share a first token,
// a failing nested form would be re-read once per alternative at every level, which is
// exponential in the nesting depth (`(#_(#_(#_ ...` took seconds in an earlier version).

/// The form of a literal, keyword or symbol token; `None` for any other token.
fn atom_form(tok: Tok<'_>, span: Span) -> Option<Form> {
    let kind = match tok {
        Tok::Nil => FormKind::Nil,
        Tok::Bool(b) => FormKind::Bool(b),
        Tok::Int(i) => FormKind::Int(i),
        Tok::Float(f) => FormKind::Float(f),
        Tok::Big(text) => match super::lexer::big_literal(text) {
            Some(Ok(Value::Big(b))) => FormKind::Big(b),
            Some(Ok(Value::Int(i))) => FormKind::Int(i),
            // The lexer converted this text already; nothing else can come back.
            _ => FormKind::Nil,
        },
        Tok::Str(body) => FormKind::Str(unescape(body)),
        Tok::Char(c) => FormKind::Char(c),
        Tok::Keyword(k) => FormKind::Keyword(k.to_owned()),
        Tok::AutoKeyword(k) => FormKind::Keyword(format!("user/{k}")),
        Tok::Symbol(s) => FormKind::Symbol(intern(s)),
        Tok::Regex(r) => FormKind::Regex(r.to_owned()),
        _ => return None,
    };
    Some(Form::new(kind, span))
}

/// A literal, keyword or symbol: a form made of one token.
fn atom<'t, 'src: 't, I, E>() -> impl Parser<'t, I, Form, Extra<E>> + Clone
where
    I: ValueInput<'t, Token = Spanned<'src>, Span = SimpleSpan>,
    E: GrammarError<'t, I>,
{
    chumsky::primitive::select(|(tok, span): Spanned<'src>, _| atom_form(tok, span))
}

/// One token of the given kind (a delimiter or prefix), giving its span.
fn token<'t, 'src: 't, I, E>(kind: Tok<'static>) -> impl Parser<'t, I, Span, Extra<E>> + Clone
where
    I: ValueInput<'t, Token = Spanned<'src>, Span = SimpleSpan>,
    E: GrammarError<'t, I>,
{
    any()
        .filter(move |(tok, _): &Spanned<'src>| *tok == kind)
        .map(|(_, span)| span)
}

/// A run of `#_ form` (discarded) and `^meta` prefixes: at least one. The output is the
/// metadata forms of the run, outermost first, for the form after the run (see [`with_meta`]).
///
/// The run is a loop, not recursion, so `^:a ^:b ^:c x` costs no stack.
fn prefixes<'t, 'src: 't, I, E, P>(form: P) -> impl Parser<'t, I, Vec<Form>, Extra<E>> + Clone
where
    I: ValueInput<'t, Token = Spanned<'src>, Span = SimpleSpan>,
    E: GrammarError<'t, I>,
    P: Parser<'t, I, Form, Extra<E>> + Clone,
{
    let discard = token(Tok::Discard)
        .ignore_then(form.clone().labelled(Expect::DiscardForm))
        .to(None);
    let meta = token(Tok::Meta)
        .ignore_then(form.labelled(Expect::MetaForm))
        .map(Some);
    discard
        .or(meta)
        .repeated()
        .at_least(1)
        .collect::<Items>()
        .map(|items| items.0)
}

/// `form` carrying the metadata forms `metas` (outermost first) merged into one map form, as
/// Clojure's reader merges them: `^:k` is `{:k true}`, `^Name` and `^"Name"` are `{:tag Name}`,
/// and an outer prefix's entries replace an inner one's.
fn with_meta(mut form: Form, metas: Vec<Form>) -> std::result::Result<Form, (Span, String)> {
    let (Some(first), Some(last)) = (metas.first(), metas.last()) else {
        return Ok(form);
    };
    let span = first.span.to(last.span);
    let mut entries: Vec<(Form, Form)> = Vec::new();
    // Keys by their printed kind: a long run of prefixes stays linear.
    let mut index: rustc_hash::FxHashMap<String, usize> = rustc_hash::FxHashMap::default();
    let mut assoc = |key: Form, value: Form| {
        let id = format!("{:?}", key.kind);
        match index.get(&id) {
            Some(&i) => entries[i].1 = value,
            None => {
                index.insert(id, entries.len());
                entries.push((key, value));
            }
        }
    };
    let pairs = |forms: Vec<Form>| {
        let mut it = forms.into_iter();
        std::iter::from_fn(move || Some((it.next()?, it.next()?)))
    };
    if let Some(old) = form.meta.take()
        && let FormKind::Map(items) = old.kind
    {
        pairs(items).for_each(|(k, v)| assoc(k, v));
    }
    for meta in metas.into_iter().rev() {
        let at = meta.span;
        match meta.kind {
            FormKind::Keyword(_) => assoc(meta, Form::new(FormKind::Bool(true), at)),
            FormKind::Symbol(_) | FormKind::Str(_) => {
                assoc(Form::new(FormKind::Keyword("tag".into()), at), meta)
            }
            FormKind::Map(items) => pairs(items).for_each(|(k, v)| assoc(k, v)),
            _ => {
                return Err((
                    at,
                    format!(
                        "metadata must be a keyword, symbol, string or map (^:private, ^String, \
                         ^{{:doc \"...\"}}), found {}",
                        meta.describe()
                    ),
                ));
            }
        }
    }
    let items = entries.into_iter().flat_map(|(k, v)| [k, v]).collect();
    form.meta = Some(Box::new(Form::new(FormKind::Map(items), span)));
    Ok(form)
}

/// A map form read after `#:ns`, its keys qualified: `:k` becomes `:ns/k`, `:_/k` becomes `:k`,
/// keys that have a namespace already stay as they are (and so do symbols the same way).
fn qualify_keys(ns: &str, map: Form) -> Option<Form> {
    let Form {
        kind: FormKind::Map(items),
        span,
        meta,
    } = map
    else {
        return None;
    };
    let qualify = |name: &str| -> Option<String> {
        if let Some(bare) = name.strip_prefix("_/") {
            Some(bare.to_owned())
        } else if name.contains('/') {
            None
        } else {
            Some(format!("{ns}/{name}"))
        }
    };
    let items = items
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            if i % 2 == 1 {
                return item;
            }
            let kind = match &item.kind {
                FormKind::Keyword(k) => qualify(k).map(FormKind::Keyword),
                FormKind::Symbol(s) => qualify(s).map(|s| FormKind::Symbol(intern(&s))),
                _ => None,
            };
            match kind {
                Some(kind) => Form { kind, ..item },
                None => item,
            }
        })
        .collect();
    Some(Form {
        kind: FormKind::Map(items),
        span,
        meta,
    })
}

/// The contents of a collection (or of the whole program), without the discarded forms.
///
/// `compound` is every form but atoms and prefixed forms; `form` is any form. Atoms, most of
/// any program, are tried first. Before anything else a look-ahead for a closer (or the end)
/// makes the exit from a sequence one failed token comparison.
fn items<'t, 'src: 't, I, E, C, F>(
    compound: C,
    form: F,
) -> impl Parser<'t, I, Vec<Form>, Extra<E>> + Clone
where
    I: ValueInput<'t, Token = Spanned<'src>, Span = SimpleSpan>,
    E: GrammarError<'t, I>,
    C: Parser<'t, I, Form, Extra<E>> + Clone,
    F: Parser<'t, I, Form, Extra<E>> + Clone,
{
    let not_a_closer = any()
        .filter(|(tok, _): &Spanned<'src>| tok.closer().is_none())
        .rewind();
    // What ends the sequence, looked at but not consumed.
    let closer_or_end = any()
        .filter(|(tok, _): &Spanned<'src>| tok.closer().is_some())
        .map(|(tok, span): Spanned<'src>| (tok.closer(), span))
        // The grammar does not know the text's length; `into_error` clamps this to it.
        .or(end().to((None, Span::new(u32::MAX as usize, u32::MAX as usize))))
        .rewind();
    // Prefixes may end a sequence (`(a #_b)`), unless they hold metadata with nothing to
    // attach it to.
    let prefixed_item = prefixes(form)
        .then(
            atom()
                .or(compound.clone())
                .map(Ok)
                .or(closer_or_end.map(Err)),
        )
        .try_map(|(metas, form), _| match form {
            Ok(form) => with_meta(form, metas)
                .map(Some)
                .map_err(|(span, message)| E::custom(span, || message)),
            Err((found, span)) if !metas.is_empty() => Err(E::custom(span, || {
                let found = found.map_or("end of input".to_owned(), |c| format!("'{c}'"));
                format!("expected a form for the ^metadata to attach to, found {found}")
            })),
            Err(_) => Ok(None),
        });
    atom()
        .map(Some)
        .or(not_a_closer.ignore_then(compound.map(Some).or(prefixed_item)))
        .repeated()
        .collect::<Items>()
        .map(|items| items.0)
}

/// Any form, for the places that take exactly one: an atom, a compound form, or prefixes
/// followed by one of those.
fn any_form<'t, 'src: 't, I, E, C>(compound: C) -> impl Parser<'t, I, Form, Extra<E>> + Clone
where
    I: ValueInput<'t, Token = Spanned<'src>, Span = SimpleSpan>,
    E: GrammarError<'t, I> + 't,
    C: Parser<'t, I, Form, Extra<E>> + Clone + 't,
{
    recursive(move |form| {
        let core = atom().or(compound.clone());
        choice((
            atom(),
            compound,
            prefixes(form)
                .then(core.labelled(Expect::Form))
                .try_map(|(metas, form), _| {
                    with_meta(form, metas).map_err(|(span, message)| E::custom(span, || message))
                }),
        ))
    })
}

fn grammar<'t, 'src: 't, I, E>() -> impl Parser<'t, I, Vec<Form>, Extra<E>>
where
    I: ValueInput<'t, Token = Spanned<'src>, Span = SimpleSpan>,
    E: GrammarError<'t, I> + 't,
{
    // Every form but atoms and prefixed forms. `recursive` hands the definition a weak handle
    // to itself; a handle from `Recursive::declare` would be strong and leak the whole grammar
    // through the cycle.
    let compound = recursive(|compound| {
        let form = any_form(compound.clone());

        let items = items(compound.clone(), form.clone()).boxed();
        let seq = |open: Tok<'static>, close: Tok<'static>, label: Expect| {
            token(open)
                .then(items.clone())
                .then(token(close).labelled(label))
                .map(|((open, forms), close)| (forms, open.to(close)))
        };

        let wrapping = |tok: Tok<'static>, label: Expect, wrap: fn(Box<Form>) -> FormKind| {
            token(tok)
                .then(form.clone().labelled(label))
                .map(move |(span, inner)| {
                    let span = span.to(inner.span);
                    Form::new(wrap(Box::new(inner)), span)
                })
        };

        choice((
            seq(Tok::LParen, Tok::RParen, Expect::CloseParen)
                .map(|(forms, span)| Form::new(FormKind::List(forms), span)),
            seq(Tok::LBracket, Tok::RBracket, Expect::CloseBracket)
                .map(|(forms, span)| Form::new(FormKind::Vector(forms), span)),
            seq(Tok::LBrace, Tok::RBrace, Expect::CloseBrace).try_map(
                |(forms, span): (Vec<Form>, Span), _| {
                    if forms.len() % 2 == 0 {
                        Ok(Form::new(FormKind::Map(forms), span))
                    } else {
                        Err(E::custom(span, || {
                            format!(
                                "map literal must contain an even number of forms, found {}: \
                                 every key needs a value",
                                forms.len()
                            )
                        }))
                    }
                },
            ),
            seq(Tok::SetOpen, Tok::RBrace, Expect::CloseBrace)
                .map(|(forms, span)| Form::new(FormKind::Set(forms), span)),
            seq(Tok::FnOpen, Tok::RParen, Expect::CloseParen)
                .map(|(forms, span)| Form::new(FormKind::AnonFn(forms), span)),
            wrapping(Tok::Quote, Expect::QuoteForm, FormKind::Quote),
            wrapping(Tok::Deref, Expect::DerefForm, FormKind::Deref),
            wrapping(
                Tok::SyntaxQuote,
                Expect::SyntaxQuoteForm,
                FormKind::SyntaxQuote,
            ),
            wrapping(Tok::Unquote, Expect::UnquoteForm, FormKind::Unquote),
            wrapping(
                Tok::UnquoteSplicing,
                Expect::UnquoteForm,
                FormKind::UnquoteSplicing,
            ),
            select! { (Tok::NsMap(ns), span) => (ns, span) }
                .then(form.clone().labelled(Expect::NsMapForm))
                .try_map(|((ns, span), inner), _| {
                    let whole = span.to(inner.span);
                    let inner_span = inner.span;
                    qualify_keys(ns, inner)
                        .map(|map| Form { span: whole, ..map })
                        .ok_or_else(|| {
                            E::custom(inner_span, || {
                                format!(
                                    "#:{ns} must be followed by a map, e.g. #:{ns}{{:name \"x\"}}"
                                )
                            })
                        })
                }),
            token(Tok::VarQuote)
                .then(select! { (Tok::Symbol(s), span) => (s, span) }.labelled(Expect::VarSymbol))
                .map(|(open, (name, span))| {
                    Form::new(FormKind::Var(name.to_owned()), open.to(span))
                }),
            select! { (Tok::Tag(tag), span) => (tag, span) }
                .then(form.clone().labelled(Expect::TagForm))
                .map(|((tag, span), inner)| {
                    let span = span.to(inner.span);
                    Form::new(FormKind::Tagged(tag.to_owned(), Box::new(inner)), span)
                }),
        ))
        .labelled(Expect::Form)
    });

    let form = any_form(compound.clone());
    items(compound, form).then_ignore(end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_carry_their_spans() {
        let forms = parse("(inc 1) :done", &ReadLimits::default()).unwrap();
        assert_eq!(forms.len(), 2);
        assert_eq!(forms[1].kind, FormKind::Keyword("done".into()));
        assert_eq!(forms[1].span.range(), 8..13);
        let err = parse("(inc 1", &ReadLimits::default()).unwrap_err();
        assert_eq!(err.message, "unclosed '(' opened at 1:1");
    }
    use pretty_assertions::assert_eq;

    /// Every program of the language's test suites (conformance cases, adversarial programs,
    /// reader cases), read by the hand-written grammar and by chumsky's: wherever the first
    /// reads a program, both give the same forms.
    #[test]
    fn the_hand_written_grammar_reads_what_the_chumsky_grammar_reads() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
        let mut files = Vec::new();
        let mut dirs = vec![root];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    dirs.push(path);
                } else if matches!(
                    path.extension().and_then(|e| e.to_str()),
                    Some("cases" | "txt")
                ) {
                    files.push(path);
                }
            }
        }
        let limits = ReadLimits::default();
        let (mut both, mut handed_over) = (0, 0);
        for file in &files {
            let text = std::fs::read_to_string(file).unwrap();
            let programs = text.split("\n;; ====").chain(text.split("\n---\n"));
            for program in programs {
                let Ok(tokens) = tokens(program, &limits) else {
                    continue;
                };
                // Compared as printed: `##NaN` is not equal to itself.
                let by_chumsky = grammar::<_, EmptyErr>()
                    .parse(tokens.as_slice())
                    .into_result()
                    .ok()
                    .map(|forms| format!("{forms:?}"));
                match Plain::new(&tokens).program() {
                    Some(forms) => {
                        let by_hand = Some(format!("{forms:?}"));
                        assert_eq!(by_hand, by_chumsky, "{}: {program}", file.display());
                        both += 1;
                    }
                    None => handed_over += 1,
                }
            }
        }
        assert!(both > 1000, "{both} programs read both ways");
        assert!(handed_over > 10, "{handed_over} programs handed over");
    }

    #[test]
    fn what_the_hand_written_grammar_leaves_to_chumsky() {
        let limits = ReadLimits::default();
        for (program, read) in [
            (
                "(a [b {:c #{d}}] #(e %) 'f @g `(h ~i ~@j) #'k #inst \"x\" #:n{:o 1})",
                true,
            ),
            ("(a #_b)", false),
            ("^:private x", false),
            ("{:a}", false),
            ("#'(x)", false),
            ("'", false),
        ] {
            let tokens = tokens(program, &limits).unwrap();
            assert_eq!(Plain::new(&tokens).program().is_some(), read, "{program}");
        }
    }

    #[test]
    fn spans_cover_whole_forms() {
        let forms = parse("(a [b]) 'c", &ReadLimits::default()).unwrap_or_default();
        let spans: Vec<_> = forms.iter().map(|f| f.span.range()).collect();
        assert_eq!(spans, vec![0..7, 8..10]);
        let FormKind::List(items) = &forms[0].kind else {
            panic!("expected a list, got {:?}", forms[0]);
        };
        assert_eq!(items[1].span.range(), 3..6);
    }
}
