//! Analysis: forms to the resolved program ([`crate::ir`]).
//!
//! Special forms are checked here, macro-like forms (`->`, `cond`, `when-let`, ...) are rewritten
//! into special forms ([`macros`]), destructuring becomes plain bindings ([`destructure`]), and
//! every symbol is resolved once, in this order:
//!
//! 1. a local binding (`let`, function parameter, ...);
//! 2. a user definition (`def`/`defn`, from this program or an earlier turn);
//! 3. `*1 *2 *3 *e`, when the run has [`RecentValues`];
//! 4. a builtin (so a data key named `count` cannot break `(count xs)`);
//! 5. a tool or a data key of that name (`fetch-users` → `tool/fetch-users`); a name that is both
//!    is an `ambiguous_reference` error when evaluated.
//!
//! `tool/x` and `data/x` always reach the tool or the input, whatever shadows `x`.

mod aliases;
mod catalogue;
mod destructure;
pub(crate) mod differences;
mod doc;
mod library;
mod macros;
mod names;
mod special;
mod suggest;
mod syntax_quote;

pub(crate) use catalogue::{
    CLOJURE_SPECIAL_FORMS, FORMS, FORMS_LEFT_OUT_OF_PROMPT, FormEntry, FormRole, REFUSED, Refusal,
    refused,
};
pub(crate) use library::Library;

use catalogue::Listed;

use crate::context::tools::Tools;
use crate::context::{Binding, Builtin};
use crate::error::{Error, ErrorKind, Result};
use crate::ir::*;
use crate::reader::regex::compile as compile_regex;
use crate::reader::{Form, FormKind, literal_kind};
use crate::recent_values::RecentValues;
use crate::span::Span;
use crate::stack::{STACK_GROW_BY, UNKNOWN_STACK_FLOOR, stack_has_room};
use crate::value::{Keyword, Value, intern};
use arcstr::ArcStr;
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::sync::Arc;

/// What names can resolve to besides locals: the user namespace, tools and data.
pub(crate) struct Scope<'a> {
    /// The builtins.
    pub library: &'a dyn Library,
    pub tools: &'a Tools,
    pub data: &'a BTreeMap<String, Value>,
    /// What `*1 *2 *3 *e` stand for, if the run has them.
    pub recent_values: Option<&'a RecentValues>,
    /// The user namespace, shared with the run's caller until a definition changes it.
    pub globals: &'a mut Arc<Vec<Binding>>,
    pub global_index: &'a mut Arc<FxHashMap<ArcStr, u32>>,
}

/// The analyzed program: one body evaluated in a frame of `frame_size` slots.
pub(crate) struct Analyzed {
    pub body: Expr,
    pub frame_size: u32,
}

/// Analyze a whole program.
pub(crate) fn analyze_program(src: &str, forms: &[Form], scope: Scope<'_>) -> Result<Analyzed> {
    let mut a = Analyzer {
        src,
        scope,
        frames: vec![Frame::top()],
        gensym: 0,
        depth: 0,
        fn_depth: 0,
        stack_floor: UNKNOWN_STACK_FLOOR,
        aliases: FxHashMap::default(),
        refers: FxHashMap::default(),
        defining: Vec::new(),
    };
    // Every definition form names `def`, `defn`, `defn-` or `declare` in the text: a program
    // without them (most programs) needs no walk.
    if src.contains("def") || src.contains("declare") {
        for form in forms {
            a.declare_definitions(form);
        }
    }
    let body = match forms {
        [] => Expr::Const(Value::Nil),
        [form] => a.analyze(form, true)?,
        _ => Expr::Do(a.analyze_operands(forms, true)?.into_boxed_slice()),
    };
    Ok(Analyzed {
        body,
        frame_size: a.frames[0].max_slots,
    })
}

struct Frame {
    /// Visible local names, innermost last.
    locals: Locals,
    next_slot: u32,
    max_slots: u32,
    captures: Vec<(ArcStr, CaptureFrom)>,
    /// Position of each name in `captures`.
    capture_index: FxHashMap<ArcStr, u32>,
    is_fn: bool,
    self_name: Option<ArcStr>,
    /// The `letfn` group this frame's function belongs to: each name's position in the group.
    letfn: Arc<FxHashMap<ArcStr, u32>>,
    /// Slots `recur` assigns in tail position, when there is a target.
    recur: Option<Vec<Slot>>,
}

impl Frame {
    fn top() -> Frame {
        Frame::new(false, None, no_letfn_group())
    }

    fn new(is_fn: bool, self_name: Option<ArcStr>, letfn: Arc<FxHashMap<ArcStr, u32>>) -> Frame {
        Frame {
            locals: Locals::default(),
            next_slot: 0,
            max_slots: 0,
            captures: Vec::new(),
            capture_index: FxHashMap::default(),
            is_fn,
            self_name,
            letfn,
            recur: None,
        }
    }
}

/// The `letfn` group of a frame outside any: one shared empty map, so that making a frame
/// allocates nothing.
fn no_letfn_group() -> Arc<FxHashMap<ArcStr, u32>> {
    static EMPTY: std::sync::OnceLock<Arc<FxHashMap<ArcStr, u32>>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(Arc::default).clone()
}

/// The local names of a frame, in binding order, with an index so that a lookup costs the
/// same however many names are bound (a program may bind hundreds of thousands: `cond->` and
/// `as->` bind one per step, and a long `let` one per pair).
#[derive(Default)]
struct Locals {
    /// Each binding with the position of the previous binding of the same name.
    log: Vec<(ArcStr, Slot, Option<u32>)>,
    /// The position in `log` of the innermost binding of each name.
    latest: FxHashMap<ArcStr, u32>,
}

impl Locals {
    fn push(&mut self, name: &ArcStr, slot: Slot) {
        let at = self.log.len() as u32;
        let previous = self.latest.insert(name.clone(), at);
        self.log.push((name.clone(), slot, previous));
    }

    fn len(&self) -> usize {
        self.log.len()
    }

    fn is_empty(&self) -> bool {
        self.log.is_empty()
    }

    fn truncate(&mut self, len: usize) {
        while self.log.len() > len {
            let Some((name, _, previous)) = self.log.pop() else {
                break;
            };
            match previous {
                Some(p) => {
                    self.latest.insert(name, p);
                }
                None => {
                    self.latest.remove(&name);
                }
            }
        }
    }

    fn clear(&mut self) {
        self.log.clear();
        self.latest.clear();
    }

    fn get(&self, name: &str) -> Option<Slot> {
        self.latest.get(name).map(|&at| self.log[at as usize].1)
    }

    fn contains(&self, name: &str) -> bool {
        self.latest.contains_key(name)
    }

    fn names(&self) -> impl Iterator<Item = &ArcStr> {
        self.log.iter().map(|(name, _, _)| name)
    }
}

pub(crate) struct Analyzer<'s, 'a> {
    src: &'s str,
    scope: Scope<'a>,
    frames: Vec<Frame>,
    gensym: u32,
    depth: u32,
    /// `depth` where the innermost function's body starts (0 outside functions). Calling a
    /// function checks the stack, so a body counts its nesting for `Deep` marks from there.
    fn_depth: u32,
    /// See [`stack_has_room`].
    stack_floor: usize,
    /// Namespace aliases given by `require` and `ns` so far (`w` → `clojure.walk`).
    aliases: FxHashMap<ArcStr, &'static str>,
    /// Names referred by `require` and `ns` so far (`postwalk` → `clojure.walk/postwalk`).
    refers: FxHashMap<ArcStr, ArcStr>,
    /// The names whose definition (`def`, `defn`, a `let` or `loop` binding) is being analyzed,
    /// innermost last: never the suggestion for a misspelt name inside it.
    defining: Vec<ArcStr>,
}

/// Deepest nesting of a program after macro expansion: `(-> x a b c)` nests as deeply as
/// `(c (b (a x)))`. The reader bounds the nesting of the text; this bounds what expansion makes
/// of it.
pub(crate) const MAX_EXPANDED_DEPTH: u32 = 1_000;

/// Every this many levels of nesting, evaluation may move to a new stack segment.
const DEEP_EVERY: u32 = 8;

fn expansion_too_deep(span: Span) -> Error {
    Error::at(
        ErrorKind::ProgramLimit,
        span,
        format!(
            "the program nests more than {MAX_EXPANDED_DEPTH} levels deep once ->, ->>, cond and \
             similar forms are expanded; split long chains with let"
        ),
    )
}

/// Expressions that evaluate without recursing.
fn is_leaf(expr: &Expr) -> bool {
    matches!(
        expr,
        Expr::Const(_)
            | Expr::Local(_)
            | Expr::Capture(_)
            | Expr::SelfFn
            | Expr::LetfnSibling(_)
            | Expr::Raise(_)
    )
}

/// How many `%N` parameters `#(...)` may use.
const MAX_ANON_PARAMS: usize = 20;

impl<'s, 'a> Analyzer<'s, 'a> {
    // -----------------------------------------------------------------------------------------
    // Scopes
    // -----------------------------------------------------------------------------------------

    fn frame(&mut self) -> &mut Frame {
        self.frames.last_mut().expect("there is always a frame")
    }

    fn new_slot(&mut self) -> Slot {
        let f = self.frame();
        let slot = f.next_slot;
        f.next_slot += 1;
        f.max_slots = f.max_slots.max(f.next_slot);
        slot
    }

    fn bind(&mut self, name: &ArcStr, slot: Slot) {
        self.frame().locals.push(name, slot);
    }

    fn mark(&mut self) -> (usize, u32) {
        let f = self.frame();
        (f.locals.len(), f.next_slot)
    }

    fn restore(&mut self, mark: (usize, u32)) {
        let f = self.frame();
        f.locals.truncate(mark.0);
        f.next_slot = mark.1;
    }

    fn find_local(&mut self, idx: usize, name: &str) -> Option<Expr> {
        let frame = &self.frames[idx];
        if let Some(slot) = frame.locals.get(name) {
            return Some(Expr::Local(slot));
        }
        if frame.self_name.as_deref() == Some(name) {
            return Some(Expr::SelfFn);
        }
        if let Some(&j) = frame.letfn.get(name) {
            return Some(Expr::LetfnSibling(j));
        }
        if let Some(&i) = frame.capture_index.get(name) {
            return Some(Expr::Capture(i));
        }
        if !frame.is_fn || idx == 0 {
            return None;
        }
        let from = match self.find_local(idx - 1, name)? {
            Expr::Local(s) => CaptureFrom::Local(s),
            Expr::Capture(i) => CaptureFrom::Capture(i),
            Expr::SelfFn => CaptureFrom::SelfFn,
            Expr::LetfnSibling(j) => CaptureFrom::LetfnSibling(j),
            _ => unreachable!("find_local only returns local references"),
        };
        let frame = &mut self.frames[idx];
        let name = intern(name);
        let i = frame.captures.len() as u32;
        frame.captures.push((name.clone(), from));
        frame.capture_index.insert(name, i);
        Some(Expr::Capture(i))
    }

    // -----------------------------------------------------------------------------------------
    // User definitions
    // -----------------------------------------------------------------------------------------

    /// Give every name this program defines a global slot up front, so definitions may refer to
    /// each other in any order.
    fn declare_definitions(&mut self, form: &Form) {
        // Reader depth bounds this recursion; only lists can define anything.
        let items = match &form.kind {
            FormKind::List(items) => items,
            FormKind::Vector(items)
            | FormKind::Map(items)
            | FormKind::Set(items)
            | FormKind::AnonFn(items) => {
                for item in items {
                    self.declare_definitions(item);
                }
                return;
            }
            _ => return,
        };
        let head = items.first().and_then(Form::as_symbol);
        match head {
            Some("quote") => return,
            Some("def" | "defn" | "defn-") => {
                if let Some(name) = items.get(1).and_then(Form::as_symbol) {
                    self.global_slot(name);
                }
            }
            Some("declare") => {
                for item in &items[1..] {
                    if let Some(name) = item.as_symbol() {
                        self.global_slot(name);
                    }
                }
            }
            _ => {}
        }
        for item in items {
            if matches!(
                item.kind,
                FormKind::List(_)
                    | FormKind::Vector(_)
                    | FormKind::Map(_)
                    | FormKind::Set(_)
                    | FormKind::AnonFn(_)
            ) {
                self.declare_definitions(item);
            }
        }
    }

    fn global_slot(&mut self, name: &str) -> Slot {
        if let Some(slot) = self.scope.global_index.get(name) {
            return *slot;
        }
        let slot = self.scope.globals.len() as Slot;
        let name = intern(name);
        Arc::make_mut(self.scope.globals).push(Binding {
            name: name.clone(),
            value: None,
            doc: None,
            params: Vec::new(),
            order: u64::MAX,
        });
        Arc::make_mut(self.scope.global_index).insert(name, slot);
        slot
    }

    // -----------------------------------------------------------------------------------------
    // Forms
    // -----------------------------------------------------------------------------------------

    pub(crate) fn analyze(&mut self, form: &Form, tail: bool) -> Result<Expr> {
        if self.depth >= MAX_EXPANDED_DEPTH {
            return Err(expansion_too_deep(form.span));
        }
        // Each level of nesting takes several large frames (tens of kilobytes in a debug build),
        // so the stack is checked at every level, with room for one level to spare.
        self.depth += 1;
        let result = if stack_has_room(&mut self.stack_floor) {
            self.analyze_inner(form, tail)
        } else {
            let floor = std::mem::replace(&mut self.stack_floor, UNKNOWN_STACK_FLOOR);
            let result = crate::stack::grow(STACK_GROW_BY, || self.analyze_inner(form, tail));
            self.stack_floor = floor;
            result
        };
        self.depth -= 1;
        // Evaluating (and dropping) the result recurses as deeply as it nests: mark every few
        // levels as a place where evaluation may move to a new stack segment.
        let from_fn = self.depth - self.fn_depth;
        let mark = from_fn.is_multiple_of(DEEP_EVERY) && (from_fn > 0 || self.fn_depth == 0);
        match result {
            Ok(expr) if mark && !is_leaf(&expr) => Ok(Expr::Deep(Deep(Box::new(expr)))),
            other => other,
        }
    }

    /// Refuse a macro expansion that would nest `levels` deeper than the form being expanded,
    /// before it is built.
    pub(super) fn check_expansion_depth(&self, levels: usize, span: Span) -> Result<()> {
        if (self.depth as usize).saturating_add(levels) > MAX_EXPANDED_DEPTH as usize {
            return Err(expansion_too_deep(span));
        }
        Ok(())
    }

    fn analyze_inner(&mut self, form: &Form, tail: bool) -> Result<Expr> {
        if let Some(meta) = &form.meta
            && matches!(
                form.kind,
                FormKind::Vector(_) | FormKind::Map(_) | FormKind::Set(_)
            )
        {
            return self.analyze_with_meta(form, meta);
        }
        Ok(match &form.kind {
            literal_kind!() => Expr::Const(Value::from_literal(form).unwrap_or_default()),
            FormKind::Regex(p) => Expr::Const(Value::Regex(
                compile_regex(p).map_err(|e| e.or_span(form.span))?,
            )),
            FormKind::Symbol(name) => self.resolve(name, form.span)?,
            // `[1 2 3]`, `[:a :b]`: built at once, without an expression per item.
            FormKind::Vector(items) => {
                match items
                    .iter()
                    .map(Value::from_literal)
                    .collect::<Option<Vec<_>>>()
                {
                    Some(values) => Expr::Const(Value::vector(values)),
                    None => {
                        let exprs = self.analyze_all(items)?;
                        match constants(&exprs) {
                            Some(values) => Expr::Const(Value::vector(values)),
                            None => Expr::Vector(exprs.into_boxed_slice()),
                        }
                    }
                }
            }
            FormKind::Map(items) => {
                let exprs = self.analyze_all(items)?;
                if let Some(values) = constants(&exprs) {
                    let mut map = crate::value::Map::new();
                    for (i, pair) in values.chunks(2).enumerate() {
                        if map.contains_key(&pair[0]) {
                            return Err(Error::syntax(
                                items[2 * i].span,
                                format!(
                                    "duplicate key {} in map literal",
                                    crate::format::pr_str(&pair[0])
                                ),
                            ));
                        }
                        map.assoc_mut(pair[0].clone(), pair.get(1).cloned().unwrap_or_default());
                    }
                    return Ok(Expr::Const(Value::Map(map)));
                }
                // Literal keys repeat visibly, so they are refused here, with their place, as
                // Clojure's reader refuses them; computed keys are checked when the map is built.
                let mut literal_keys = crate::value::Set::new();
                for key in items.iter().step_by(2) {
                    if let Some(value) = Value::from_literal(key) {
                        if literal_keys.contains(&value) {
                            return Err(Error::syntax(
                                key.span,
                                format!(
                                    "duplicate key {} in map literal",
                                    crate::format::pr_str(&value)
                                ),
                            ));
                        }
                        literal_keys.insert_mut(value);
                    }
                }
                let mut pairs = Vec::with_capacity(exprs.len() / 2);
                let mut it = exprs.into_iter();
                while let (Some(k), Some(v)) = (it.next(), it.next()) {
                    pairs.push((k, v));
                }
                Expr::Map(pairs.into_boxed_slice())
            }
            FormKind::Set(items) => {
                let exprs = self.analyze_all(items)?;
                match constants(&exprs) {
                    Some(values) => {
                        let mut set = crate::value::Set::new();
                        for (item, form) in values.into_iter().zip(items) {
                            if set.contains(&item) {
                                return Err(Error::syntax(
                                    form.span,
                                    format!(
                                        "duplicate element {} in set literal",
                                        crate::format::pr_str(&item)
                                    ),
                                ));
                            }
                            set.insert_mut(item);
                        }
                        Expr::Const(Value::Set(set))
                    }
                    None => Expr::Set(exprs.into_boxed_slice()),
                }
            }
            FormKind::Quote(inner) => Expr::Const(Value::from_form(inner)?),
            FormKind::AnonFn(body) => {
                let fn_form = macros::anon_fn_to_fn(form, body, MAX_ANON_PARAMS)?;
                self.analyze(&fn_form, tail)?
            }
            FormKind::Var(name) => {
                if !self.scope.global_index.contains_key(name.as_str()) {
                    return Err(Error::at(
                        ErrorKind::UndefinedSymbol,
                        form.span,
                        format!("#'{name}: there is no user definition named {name}"),
                    ));
                }
                Expr::Const(Value::Var(crate::value::Symbol::new(name)))
            }
            // `@x` is `(deref x)`: the value of a delay (there are no other references).
            FormKind::Deref(inner) => {
                let call = Form::new(
                    FormKind::List(vec![
                        Form::new(FormKind::Symbol(intern("clojure.core/deref")), form.span),
                        (**inner).clone(),
                    ]),
                    form.span,
                );
                return self.analyze(&call, tail);
            }
            FormKind::Tagged(tag, inner) if tag == "uuid" => Expr::Const(
                crate::reader::uuid_literal(&Value::from_form(inner)?)
                    .map_err(|e| e.with_span(form.span))?,
            ),
            FormKind::Tagged(tag, inner) if tag == "inst" || tag == "object" => Expr::Const(
                crate::reader::date_literal(tag, inner)
                    .map_err(|message| Error::syntax(form.span, message))?,
            ),
            FormKind::Tagged(tag, _) => {
                return Err(Error::syntax(
                    form.span,
                    format!("tagged literal #{tag} is not supported"),
                ));
            }
            FormKind::List(items) => self.analyze_list(form, items, tail)?,
            FormKind::SyntaxQuote(inner) => {
                let expanded = self.expand_syntax_quote(inner)?;
                self.analyze(&expanded, tail)?
            }
            FormKind::Unquote(_) | FormKind::UnquoteSplicing(_) => {
                return Err(syntax_quote::unquote_form_outside(form));
            }
        })
    }

    /// Analyze `forms` in order; the last is in tail position when `tail` is set. The vector
    /// has exactly the right capacity, so boxing it later does not reallocate.
    /// A collection literal written with metadata (`^{:source :api} [1 2]`): the collection
    /// carrying the evaluated metadata map, built once when both are constants.
    fn analyze_with_meta(&mut self, form: &Form, meta: &Form) -> Result<Expr> {
        let bare = Form {
            kind: form.kind.clone(),
            span: form.span,
            meta: None,
        };
        let value = self.analyze_inner(&bare, false)?;
        let meta = self.analyze(&meta_to_evaluate(meta), false)?;
        if let (Expr::Const(v), Expr::Const(Value::Map(m))) = (&value, &meta)
            && let Some(with_meta) = v.with_meta(Some(m.clone()))
        {
            return Ok(Expr::Const(with_meta));
        }
        match self.scope.library.builtin("with-meta") {
            Some(with_meta) => Ok(internal(with_meta, vec![value, meta], form.span)),
            None => Err(Error::syntax(
                form.span,
                "metadata on a collection literal needs the with-meta builtin",
            )),
        }
    }

    fn analyze_operands(&mut self, forms: &[Form], tail: bool) -> Result<Vec<Expr>> {
        let mut exprs = Vec::with_capacity(forms.len());
        let last = forms.len().saturating_sub(1);
        for (i, f) in forms.iter().enumerate() {
            exprs.push(self.analyze(f, tail && i == last)?);
        }
        Ok(exprs)
    }

    fn analyze_all(&mut self, forms: &[Form]) -> Result<Vec<Expr>> {
        self.analyze_operands(forms, false)
    }

    /// A body of forms (`do`, `let`, `fn` bodies): the last form is in tail position.
    fn analyze_body(&mut self, forms: &[Form], tail: bool) -> Result<Expr> {
        match forms {
            [] => Ok(Expr::Const(Value::Nil)),
            [only] => self.analyze(only, tail),
            _ => Ok(Expr::Do(
                self.analyze_operands(forms, tail)?.into_boxed_slice(),
            )),
        }
    }

    fn analyze_list(&mut self, form: &Form, items: &[Form], tail: bool) -> Result<Expr> {
        let Some(head) = items.first() else {
            return Ok(Expr::Const(Value::empty_list()));
        };
        if let Some(name) = head.as_symbol() {
            let is_local = self.frames.len() > 1 || !self.frames[0].locals.is_empty();
            let shadowed = is_local && self.is_local_name(name);
            if !shadowed {
                match catalogue::lookup(name) {
                    Some(Listed::Form(entry)) => match entry.role {
                        FormRole::Special(special) => {
                            return self.special_form(special, form, items, tail);
                        }
                        FormRole::Macro(m) => {
                            let expanded = macros::expand(self, m, name, form, items)?;
                            return self.analyze(&expanded, tail);
                        }
                        FormRole::Reader => {}
                    },
                    Some(Listed::Refused(r)) if r.refusal == Refusal::Always => {
                        return Err(unsupported_form(name, form.span));
                    }
                    Some(Listed::Refused(_)) | None => {}
                }
                if let Some(rewritten) = macros::where_operator(self, name, form, items) {
                    return self.analyze(&rewritten, tail);
                }
            }
            return self.analyze_call_to_symbol(name, shadowed, form, items);
        }
        if let FormKind::Keyword(k) = &head.kind {
            return match &items[1..] {
                [target] => Ok(Expr::KeywordGet(Box::new(KeywordGet::new(
                    Keyword::new(k),
                    self.analyze(target, false)?,
                    None,
                    form.span,
                )))),
                [target, default] => Ok(Expr::KeywordGet(Box::new(KeywordGet::new(
                    Keyword::new(k),
                    self.analyze(target, false)?,
                    Some(self.analyze(default, false)?),
                    form.span,
                )))),
                _ => Err(Error::at(
                    ErrorKind::Arity,
                    form.span,
                    format!(
                        "(:{k} ...) takes a map and an optional default, got {} arguments",
                        items.len() - 1
                    ),
                )),
            };
        }
        let callee = self.analyze(head, false)?;
        let args = self.analyze_all(&items[1..])?;
        Ok(Expr::Call(Box::new(CallExpr {
            callee,
            args: args.into_boxed_slice(),
            span: form.span,
        })))
    }

    fn is_local_name(&self, name: &str) -> bool {
        self.frames.iter().rev().any(|f| {
            f.locals.contains(name)
                || f.self_name.as_deref() == Some(name)
                || f.letfn.contains_key(name)
        })
    }

    /// A call whose head is the symbol `name`; `shadowed` says whether a local binds it.
    fn analyze_call_to_symbol(
        &mut self,
        name: &str,
        shadowed: bool,
        form: &Form,
        items: &[Form],
    ) -> Result<Expr> {
        let span = form.span;
        // `(data/products)`: models call inputs as if they were functions. No input is a
        // function, so Clojure would throw here, and reading the value changes the meaning of
        // no valid program.
        if let (false, [_], Some(key)) = (shadowed, items, name.strip_prefix("data/"))
            && let Some(value) = self.scope.data.get(key)
            && !matches!(value, Value::Fn(_))
        {
            return Ok(Expr::Const(value.clone()));
        }
        let aliased = (!shadowed && !self.scope.global_index.contains_key(name))
            .then(|| self.dealias(name))
            .flatten();
        let builtin_name = aliased.as_deref().unwrap_or(name);
        // The common case, a call of a builtin nothing shadows, needs no function value.
        let direct = (!shadowed && !self.scope.global_index.contains_key(name))
            .then(|| self.scope.library.builtin(builtin_name))
            .flatten();
        let callee = match direct {
            Some(_) => None,
            // A call of something outside the subset (`(rand)`, `(.hashCode s)`) points at the
            // call's opening parenthesis, as `(atom 1)` and every other refused form do.
            None => Some(self.resolve(name, items[0].span).map_err(|e| {
                if e.kind == ErrorKind::Unsupported {
                    e.with_span(span)
                } else {
                    e
                }
            })?),
        };
        let args = self.analyze_all(&items[1..])?.into_boxed_slice();
        let builtin = match (&callee, direct) {
            (_, Some(b)) => Some(b),
            (Some(Expr::Const(Value::Fn(f))), None) => match f.repr() {
                FnRepr::Builtin(b) => Some(*b),
                _ => None,
            },
            _ => None,
        };
        if let Some(builtin) = builtin {
            if let (Some(op), 1) = (Op1::of(builtin.name), args.len()) {
                let arg = args.into_vec().pop().expect("one argument");
                return Ok(Expr::Op1(Box::new(Op1Expr {
                    op,
                    arg,
                    builtin,
                    span,
                })));
            }
            if let (Some(op), 2) = (Op2::of(builtin.name), args.len()) {
                let mut args = args.into_vec();
                let right = args.pop().expect("two arguments");
                let left = args.pop().expect("two arguments");
                return Ok(Expr::Op2(Box::new(Op2Expr {
                    op,
                    left,
                    right,
                    builtin,
                    span,
                })));
            }
            return Ok(Expr::CallBuiltin(Box::new(CallBuiltin {
                builtin,
                args,
                span,
            })));
        }
        let callee = callee.expect("resolved when it is not a direct builtin call");
        Ok(Expr::Call(Box::new(CallExpr { callee, args, span })))
    }
}

/// Whether the symbol `recur` appears anywhere in `forms`, quoted or not.
fn mentions_recur(forms: &[Form]) -> bool {
    let mut pending = vec![forms];
    while let Some(forms) = pending.pop() {
        for form in forms {
            match &form.kind {
                FormKind::Symbol(name) if name.as_str() == "recur" => return true,
                FormKind::List(items)
                | FormKind::Vector(items)
                | FormKind::Map(items)
                | FormKind::Set(items)
                | FormKind::AnonFn(items) => pending.push(items),
                FormKind::Quote(inner) | FormKind::Deref(inner) | FormKind::Tagged(_, inner) => {
                    pending.push(std::slice::from_ref(inner))
                }
                _ => {}
            }
        }
    }
    false
}

fn constants(exprs: &[Expr]) -> Option<Vec<Value>> {
    exprs
        .iter()
        .map(|e| match e {
            Expr::Const(v) => Some(v.clone()),
            _ => None,
        })
        .collect()
}

pub(crate) fn unsupported_form(what: &str, span: Span) -> Error {
    Error::at(
        ErrorKind::Unsupported,
        span,
        catalogue::unsupported_message(what),
    )
}

/// A static builtin not in the registry, for code the analyzer generates.
pub(crate) fn internal(builtin: &'static Builtin, args: Vec<Expr>, span: Span) -> Expr {
    Expr::CallBuiltin(Box::new(CallBuiltin {
        builtin,
        args: args.into_boxed_slice(),
        span,
    }))
}

/// The metadata map of a literal as an expression: a `:tag` symbol (`^String`) is data, not a
/// name to resolve, and a `java.lang` class is named in full as Clojure prints it.
fn meta_to_evaluate(meta: &Form) -> Form {
    let FormKind::Map(items) = &meta.kind else {
        return meta.clone();
    };
    let mut items = items.clone();
    for pair in items.chunks_mut(2) {
        if let [key, value] = pair
            && matches!(&key.kind, FormKind::Keyword(k) if k == "tag")
            && let FormKind::Symbol(name) = &value.kind
        {
            let full = match name.as_str() {
                "String" | "Object" | "Long" | "Integer" | "Double" | "Float" | "Short"
                | "Byte" | "Boolean" | "Character" | "Number" | "Math" | "Exception"
                | "Throwable" | "CharSequence" | "Comparable" | "Iterable" | "Runnable" => {
                    intern(&format!("java.lang.{name}"))
                }
                _ => name.clone(),
            };
            let span = value.span;
            *value = Form::new(
                FormKind::Quote(Box::new(Form::new(FormKind::Symbol(full), span))),
                span,
            );
        }
    }
    Form::new(FormKind::Map(items), meta.span)
}
