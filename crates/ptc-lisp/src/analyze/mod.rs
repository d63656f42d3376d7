//! Analysis: forms to the resolved program ([`crate::eval::ir`]).
//!
//! Special forms are checked here, macro-like forms (`->`, `cond`, `when-let`, ...) are rewritten
//! into special forms ([`macros`]), destructuring becomes plain bindings ([`destructure`]), and
//! every symbol is resolved once, in this order (NS-004..NS-009):
//!
//! 1. a local binding (`let`, function parameter, ...);
//! 2. a user definition (`def`/`defn`, from this program or an earlier turn);
//! 3. a builtin (so a data key named `count` cannot break `(count xs)`);
//! 4. a tool or a data key of that name (`fetch-users` → `tool/fetch-users`); a name that is both
//!    is an `ambiguous_reference` error when evaluated (NS-007).
//!
//! `tool/x` and `data/x` always reach the tool or the input, whatever shadows `x` (NS-009).

mod catalogue;
mod destructure;
mod library;
mod macros;

pub(crate) use catalogue::{FORMS, FormEntry, FormRole, REFUSED, Refusal, Special};
pub(crate) use library::Library;

use crate::error::{Error, ErrorKind, Result};
use crate::ir::*;
use crate::reader::regex::compile as compile_regex;
use crate::reader::{Form, FormKind, literal_kind};
use crate::runtime::tools::Tools;
use crate::runtime::{Binding, Builtin};
use crate::span::Span;
use crate::stack::{STACK_GROW_BY, UNKNOWN_STACK_FLOOR, stack_has_room};
use crate::value::{Function, Keyword, Value, intern};
use arcstr::ArcStr;
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

/// What names can resolve to besides locals: the user namespace, tools and data.
pub(crate) struct Scope<'a> {
    /// The builtins.
    pub library: &'a dyn Library,
    pub tools: &'a Tools,
    pub data: &'a BTreeMap<String, Value>,
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
            let result = stacker::grow(STACK_GROW_BY, || self.analyze_inner(form, tail));
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
            FormKind::Deref(_) => {
                return Err(unsupported_form(catalogue::DEREF_SYNTAX, form.span));
            }
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
        })
    }

    /// Analyze `forms` in order; the last is in tail position when `tail` is set. The vector
    /// has exactly the right capacity, so boxing it later does not reallocate.
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
                match catalogue::form(name).map(|f| f.role) {
                    Some(FormRole::Special(special)) => {
                        return self.special_form(special, form, items, tail);
                    }
                    Some(FormRole::Macro(m)) => {
                        let expanded = macros::expand(self, m, name, form, items)?;
                        return self.analyze(&expanded, tail);
                    }
                    Some(FormRole::Reader) | None => {}
                }
                if catalogue::refused(name).is_some_and(|r| r.refusal == Refusal::Always) {
                    return Err(unsupported_form(name, form.span));
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
        // The common case, a call of a builtin nothing shadows, needs no function value.
        let direct = (!shadowed && !self.scope.global_index.contains_key(name))
            .then(|| self.scope.library.builtin(name))
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

impl<'s, 'a> Analyzer<'s, 'a> {
    // -----------------------------------------------------------------------------------------
    // Names
    // -----------------------------------------------------------------------------------------

    fn resolve(&mut self, name: &str, span: Span) -> Result<Expr> {
        let top = self.frames.len() - 1;
        if let Some(local) = self.find_local(top, name) {
            return Ok(local);
        }
        if let Some((ns, local_name)) = split_namespace(name) {
            return self.resolve_qualified(ns, local_name, name, span);
        }
        if let Some(&slot) = self.scope.global_index.get(name) {
            let fallback = self.resolve_unqualified_global_fallback(name, span);
            return Ok(Expr::Global {
                slot,
                name: intern(name),
                fallback: fallback.map(Box::new),
                span,
            });
        }
        if let Some(f) = self.scope.library.function(name) {
            return Ok(Expr::Const(Value::Fn(f)));
        }
        if let Some(expr) = self.resolve_tool_or_data(name, span) {
            return Ok(expr);
        }
        Err(self.undefined(name, span))
    }

    /// What an unbound user definition falls back to: a builtin, tool or data of that name.
    fn resolve_unqualified_global_fallback(&mut self, name: &str, span: Span) -> Option<Expr> {
        if let Some(f) = self.scope.library.function(name) {
            return Some(Expr::Const(Value::Fn(f)));
        }
        self.resolve_tool_or_data(name, span)
    }

    fn resolve_tool_or_data(&mut self, name: &str, span: Span) -> Option<Expr> {
        let tool = self.scope.tools.get(name).cloned();
        let data = self.scope.data.get(name).cloned();
        match (tool, data) {
            (Some(_), Some(_)) => Some(Expr::Raise(Box::new(Error::at(
                ErrorKind::AmbiguousReference,
                span,
                format!(
                    "{name} is ambiguous: it is both tool/{name} and data/{name}; write \
                     tool/{name} or data/{name}"
                ),
            )))),
            (Some(tool), None) => Some(Expr::Const(tool_function(name, tool))),
            (None, Some(value)) => Some(Expr::Const(value)),
            (None, None) => None,
        }
    }

    fn resolve_qualified(&mut self, ns: &str, local: &str, full: &str, span: Span) -> Result<Expr> {
        match ns {
            "tool" => match self.scope.tools.get(local) {
                Some(tool) => Ok(Expr::Const(tool_function(local, tool.clone()))),
                None => Err(Error::at(
                    ErrorKind::UndefinedSymbol,
                    span,
                    format!(
                        "tool/{local} does not exist; available tools: {}",
                        list_or_none(self.scope.tools.specs().map(|s| s.name.as_str()))
                    ),
                )),
            },
            "data" => match self.scope.data.get(local) {
                Some(value) => Ok(Expr::Const(value.clone())),
                None => Err(Error::at(
                    ErrorKind::UndefinedSymbol,
                    span,
                    format!(
                        "data/{local} does not exist; available data: {}",
                        list_or_none(self.scope.data.keys().map(String::as_str))
                    ),
                )),
            },
            "user" => match self.scope.global_index.get(local) {
                Some(&slot) => Ok(Expr::Global {
                    slot,
                    name: intern(local),
                    fallback: None,
                    span,
                }),
                None => Err(self.undefined(full, span)),
            },
            "clojure.core" => match self.scope.library.function(local) {
                Some(f) => Ok(Expr::Const(Value::Fn(f))),
                None => Err(self.undefined(full, span)),
            },
            _ => match self.scope.library.function(full) {
                Some(f) => Ok(Expr::Const(Value::Fn(f))),
                None => match self.scope.library.constant(full) {
                    Some(value) => Ok(Expr::Const(value)),
                    None => Err(self.undefined(full, span)),
                },
            },
        }
    }

    fn undefined(&self, name: &str, span: Span) -> Error {
        let core_name = name.strip_prefix("clojure.core/").unwrap_or(name);
        if catalogue::refused(core_name).is_some() {
            return unsupported_form(core_name, span);
        }
        if name == "." || name == ".." {
            return Error::at(
                ErrorKind::Unsupported,
                span,
                format!(
                    "the ({name} target method) form is not supported; call a method as \
                     (.method target args), e.g. (.toUpperCase s), and chain calls with ->"
                ),
            );
        }
        if name.starts_with('.') || name.ends_with('.') || name.contains('/') {
            let known_ns = name.split('/').next().unwrap_or("");
            if !matches!(known_ns, "tool" | "data" | "user") && name.contains('/') {
                let members = self.scope.library.class_members(known_ns);
                if !members.is_empty() {
                    return Error::at(
                        ErrorKind::UndefinedSymbol,
                        span,
                        format!(
                            "{name} is not available; the supported ones are {}",
                            members.join(" ")
                        ),
                    );
                }
                let java_class = known_ns.starts_with("java.")
                    || known_ns.starts_with(|c: char| c.is_ascii_uppercase());
                return Error::at(
                    if java_class {
                        ErrorKind::Unsupported
                    } else {
                        ErrorKind::UndefinedSymbol
                    },
                    span,
                    format!(
                        "{name} is not available: the namespaces are clojure.string (str/), \
                         clojure.set (set/), tool/, data/ and user/, and the Java classes Math, \
                         Integer, Long, Double, Character, String and java.time.LocalDate"
                    ),
                );
            }
            if name.starts_with('.') && name.len() > 1 {
                return Error::at(
                    ErrorKind::Unsupported,
                    span,
                    format!(
                        "the Java method {name} is not supported; the supported methods are {}; \
                         otherwise use the PTC-Lisp functions (count, get, clojure.string/...)",
                        self.scope.library.method_names().join(" ")
                    ),
                );
            }
            if name.ends_with('.') && name.len() > 1 {
                return Error::at(
                    ErrorKind::Unsupported,
                    span,
                    format!(
                        "constructing Java objects ({name}) is not supported, except \
                         (java.util.Date. millis) and (Exception. message); use maps, vectors \
                         and the PTC-Lisp functions"
                    ),
                );
            }
        }
        let mut candidates: Vec<&str> = self.scope.library.names();
        let locals: Vec<ArcStr> = self
            .frames
            .iter()
            .flat_map(|f| f.locals.names().cloned())
            .filter(|n| !n.starts_with(' '))
            .collect();
        candidates.extend(locals.iter().map(|n| n.as_str()));
        candidates.extend(self.scope.global_index.keys().map(|n| n.as_str()));
        let tool_names: Vec<String> = self
            .scope
            .tools
            .specs()
            .map(|s| format!("tool/{}", s.name))
            .collect();
        let data_names: Vec<String> = self
            .scope
            .data
            .keys()
            .map(|k| format!("data/{k}"))
            .collect();
        candidates.extend(tool_names.iter().map(String::as_str));
        candidates.extend(data_names.iter().map(String::as_str));
        let suggestion = closest(name, &candidates)
            // `coll??` would read as a typo: quote a name that ends in its own `?`.
            .map(|s| {
                if s.ends_with('?') {
                    format!("; did you mean `{s}`?")
                } else {
                    format!("; did you mean {s}?")
                }
            })
            .unwrap_or_default();
        Error::at(
            ErrorKind::UndefinedSymbol,
            span,
            format!("undefined symbol {name}{suggestion}"),
        )
    }
}

/// A tool as a function value (`(map tool/fetch ids)`).
pub(crate) fn tool_function(name: &str, tool: Arc<dyn crate::runtime::tools::Tool>) -> Value {
    let name = ArcStr::from(name);
    let label = format!("tool/{name}");
    Value::Fn(Function::native(&label, move |ctx, args| {
        ctx.call_tool(&name, &tool, args.to_vec())
    }))
}

fn list_or_none<'x>(names: impl Iterator<Item = &'x str>) -> String {
    let names: Vec<&str> = names.collect();
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}

/// `ns/name` split at the first slash, except for the symbol `/` itself.
fn split_namespace(name: &str) -> Option<(&str, &str)> {
    let i = name.find('/')?;
    if i == 0 || i + 1 == name.len() {
        return None;
    }
    Some((&name[..i], &name[i + 1..]))
}

/// The candidate within edit distance 2 (or sharing a long prefix), for "did you mean".
fn closest<'c>(name: &str, candidates: &[&'c str]) -> Option<&'c str> {
    // One- and two-letter names are close to too many others for a guess to help.
    if name.chars().count() <= 2 {
        return None;
    }
    let max = if name.len() <= 4 { 1 } else { 2 };
    candidates
        .iter()
        .filter(|c| **c != name)
        .map(|c| (edit_distance(name, c), *c))
        .filter(|(d, _)| *d <= max)
        .min()
        .map(|(_, c)| c)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > 2 {
        return usize::MAX;
    }
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut cur = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
        }
        prev = cur;
    }
    prev[b.len()]
}

impl<'s, 'a> Analyzer<'s, 'a> {
    // -----------------------------------------------------------------------------------------
    // Special forms
    // -----------------------------------------------------------------------------------------

    /// The special form `special`.
    fn special_form(
        &mut self,
        special: Special,
        form: &Form,
        items: &[Form],
        tail: bool,
    ) -> Result<Expr> {
        let args = &items[1..];
        let span = form.span;
        Ok(match special {
            Special::Quote => match args {
                [x] => Expr::Const(Value::from_form(x)?),
                _ => return Err(Error::syntax(span, "quote takes exactly one form")),
            },
            Special::Do => self.analyze_body(args, tail)?,
            Special::If => match args {
                [test, then] => Expr::If(Box::new((
                    self.analyze(test, false)?,
                    self.analyze(then, tail)?,
                    Expr::Const(Value::Nil),
                ))),
                [test, then, otherwise] => Expr::If(Box::new((
                    self.analyze(test, false)?,
                    self.analyze(then, tail)?,
                    self.analyze(otherwise, tail)?,
                ))),
                _ => {
                    return Err(Error::syntax(
                        span,
                        format!(
                            "if takes a test, a then branch and an optional else branch; got {} \
                             forms (use cond for several branches, do for several expressions)",
                            args.len()
                        ),
                    ));
                }
            },
            // The last operand of `and`/`or` is in tail position, as in Clojure's expansion.
            Special::And => match args {
                [] => Expr::Const(Value::Bool(true)),
                [only] => self.analyze(only, tail)?,
                _ => Expr::And(self.analyze_operands(args, tail)?.into_boxed_slice()),
            },
            Special::Or => match args {
                [] => Expr::Const(Value::Nil),
                [only] => self.analyze(only, tail)?,
                _ => Expr::Or(self.analyze_operands(args, tail)?.into_boxed_slice()),
            },
            Special::Def => self.analyze_def(form, args)?,
            Special::Defn => self.analyze_defn(form, args)?,
            Special::Declare => {
                let mut exprs = Vec::new();
                for name_form in args {
                    let Some(name) = name_form.as_symbol() else {
                        return Err(Error::syntax(name_form.span, "declare takes symbols"));
                    };
                    let slot = self.global_slot(name);
                    exprs.push(Expr::Def(Box::new(DefExpr {
                        slot,
                        name: intern(name),
                        doc: None,
                        params: Vec::new(),
                        value: None,
                    })));
                }
                exprs.push(Expr::Const(Value::Nil));
                Expr::Do(exprs.into_boxed_slice())
            }
            Special::Fn => Expr::MakeFn(self.analyze_fn(form, args, None)?),
            Special::Let => self.analyze_let(form, args, tail)?,
            Special::Loop => self.analyze_loop(form, args)?,
            Special::Recur => self.analyze_recur(form, args, tail)?,
            Special::Letfn => self.analyze_letfn(form, args, tail)?,
            Special::Case => self.analyze_case(form, args, tail)?,
            Special::Try => self.analyze_try(form, args)?,
            Special::Throw => match args {
                [x] => Expr::Throw(Box::new(self.analyze(x, false)?), span),
                _ => return Err(Error::syntax(span, "throw takes exactly one exception")),
            },
            Special::Return => match args {
                [x] => Expr::Return(Box::new(self.analyze(x, false)?)),
                [] => Expr::Return(Box::new(Expr::Const(Value::Nil))),
                _ => {
                    return Err(Error::syntax(
                        span,
                        "return takes one value; wrap several in a map or vector",
                    ));
                }
            },
            Special::Fail => match args {
                [x] => Expr::Fail(Box::new(self.analyze(x, false)?), span),
                _ => return Err(Error::syntax(span, "fail takes one reason")),
            },
            Special::For => self.analyze_for(form, args, true)?,
            Special::Doseq => self.analyze_for(form, args, false)?,
            Special::Comment | Special::Ns => Expr::Const(Value::Nil),
        })
    }

    fn analyze_def(&mut self, form: &Form, args: &[Form]) -> Result<Expr> {
        let (name_form, rest) = args
            .split_first()
            .ok_or_else(|| Error::syntax(form.span, "def needs a name: (def name value)"))?;
        let name = name_form
            .as_symbol()
            .filter(|n| !n.contains('/') || *n == "/")
            .ok_or_else(|| {
                Error::syntax(
                    name_form.span,
                    format!(
                        "def needs a plain symbol as its name, got {}",
                        name_form.describe()
                    ),
                )
            })?;
        let (doc, value_form) = match rest {
            [] => (None, None),
            [value] => (None, Some(value)),
            [doc_form, value] => match &doc_form.kind {
                FormKind::Str(doc) => (Some(doc.clone()), Some(value)),
                _ => {
                    return Err(Error::syntax(
                        doc_form.span,
                        "(def name \"docstring\" value): the docstring must be a string",
                    ));
                }
            },
            _ => {
                return Err(Error::syntax(
                    form.span,
                    "def takes a name, an optional docstring and one value",
                ));
            }
        };
        let slot = self.global_slot(name);
        let mut params = Vec::new();
        let value = match value_form {
            Some(v) => {
                if let FormKind::List(items) = &v.kind
                    && matches!(items.first().and_then(Form::as_symbol), Some("fn" | "fn*"))
                {
                    params = self.params_texts(&items[1..]);
                }
                Some(self.analyze(v, false)?)
            }
            None => None,
        };
        Ok(Expr::Def(Box::new(DefExpr {
            slot,
            name: intern(name),
            doc: doc.map(|d| ArcStr::from(d.as_str())),
            params,
            value,
        })))
    }

    fn analyze_defn(&mut self, form: &Form, args: &[Form]) -> Result<Expr> {
        let (name_form, mut rest) = args.split_first().ok_or_else(|| {
            Error::syntax(form.span, "defn needs a name: (defn name [params] body)")
        })?;
        let name = name_form.as_symbol().ok_or_else(|| {
            Error::syntax(
                name_form.span,
                format!(
                    "defn needs a symbol as its name, got {}",
                    name_form.describe()
                ),
            )
        })?;
        let mut doc = None;
        if let Some((
            Form {
                kind: FormKind::Str(d),
                ..
            },
            more,
        )) = rest.split_first()
            && !more.is_empty()
        {
            doc = Some(d.clone());
            rest = more;
        }
        if let Some((
            Form {
                kind: FormKind::Map(_),
                ..
            },
            more,
        )) = rest.split_first()
            && !more.is_empty()
        {
            rest = more;
        }
        if rest.is_empty() {
            return Err(Error::syntax(
                form.span,
                format!("defn {name} needs a parameter vector and a body: (defn {name} [x] ...)"),
            ));
        }
        let slot = self.global_slot(name);
        let params = self.params_texts(rest);
        let lambda = self.analyze_fn(form, rest, Some(name))?;
        Ok(Expr::Def(Box::new(DefExpr {
            slot,
            name: intern(name),
            doc: doc.map(|d| ArcStr::from(d.as_str())),
            params,
            value: Some(Expr::MakeFn(lambda)),
        })))
    }

    /// The parameter vectors of a function definition as written, whitespace collapsed.
    fn params_texts(&self, fn_rest: &[Form]) -> Vec<String> {
        let rest = match fn_rest.first() {
            Some(f) if f.as_symbol().is_some() => &fn_rest[1..],
            _ => fn_rest,
        };
        let text = |f: &Form| {
            self.src
                .get(f.span.range())
                .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
                .unwrap_or_default()
        };
        match rest.first().map(|f| &f.kind) {
            Some(FormKind::Vector(_)) => vec![text(&rest[0])],
            _ => rest
                .iter()
                .filter_map(|arity| match &arity.kind {
                    FormKind::List(items) => items.first().map(text),
                    _ => None,
                })
                .collect(),
        }
    }

    /// `(fn name? [params] body...)` or `(fn name? ([params] body...) ...)`. `def_name` is set
    /// for `defn`, whose function refers to itself through its global, not a local name.
    pub(crate) fn analyze_fn(
        &mut self,
        form: &Form,
        args: &[Form],
        def_name: Option<&str>,
    ) -> Result<Arc<Lambda>> {
        let (self_name, rest) = match args.first() {
            Some(f) if def_name.is_none() => match f.as_symbol() {
                Some(n) => (Some(intern(n)), &args[1..]),
                None => (None, args),
            },
            _ => (None, args),
        };
        let arity_forms: Vec<(&Form, &[Form])> = match rest.first().map(|f| &f.kind) {
            Some(FormKind::Vector(_)) => vec![(&rest[0], &rest[1..])],
            Some(FormKind::List(_)) => rest
                .iter()
                .map(|arity| match &arity.kind {
                    FormKind::List(items)
                        if matches!(items.first().map(|f| &f.kind), Some(FormKind::Vector(_))) =>
                    {
                        Ok((&items[0], &items[1..]))
                    }
                    _ => Err(Error::syntax(
                        arity.span,
                        "each arity of a multi-arity fn is a list: ([x] ...) ([x y] ...)",
                    )),
                })
                .collect::<Result<_>>()?,
            _ => {
                return Err(Error::syntax(
                    form.span,
                    "fn needs a parameter vector: (fn [x] ...)",
                ));
            }
        };
        self.frames
            .push(Frame::new(true, self_name.clone(), no_letfn_group()));
        let result = self.analyze_arities(&arity_forms);
        let frame = self.frames.pop().expect("pushed above");
        let arities = result?;
        let mut seen_fixed = Vec::new();
        let mut variadic_count = 0;
        for a in &arities {
            if a.variadic {
                variadic_count += 1;
            } else if seen_fixed.contains(&a.fixed) {
                return Err(Error::syntax(
                    form.span,
                    format!("fn has two arities with {} parameters", a.fixed),
                ));
            } else {
                seen_fixed.push(a.fixed);
            }
        }
        if variadic_count > 1 {
            return Err(Error::syntax(
                form.span,
                "fn can have only one variadic arity",
            ));
        }
        Ok(Arc::new(Lambda {
            name: self_name.or_else(|| def_name.map(intern)),
            arities,
            captures: frame.captures.iter().map(|(_, c)| *c).collect(),
            last_return: AtomicU64::new(0),
        }))
    }

    fn analyze_arities(&mut self, arity_forms: &[(&Form, &[Form])]) -> Result<Vec<ArityBody>> {
        let outer_fn_depth = std::mem::replace(&mut self.fn_depth, self.depth);
        let result = self.analyze_arity_bodies(arity_forms);
        self.fn_depth = outer_fn_depth;
        result
    }

    fn analyze_arity_bodies(&mut self, arity_forms: &[(&Form, &[Form])]) -> Result<Vec<ArityBody>> {
        let mut arities = Vec::new();
        for (params_form, body) in arity_forms {
            let FormKind::Vector(params) = &params_form.kind else {
                unreachable!("checked by the caller")
            };
            {
                let f = self.frame();
                f.locals.clear();
                f.next_slot = 0;
            }
            let mut fixed_patterns = Vec::new();
            let mut rest_pattern = None;
            let mut i = 0;
            while i < params.len() {
                if params[i].as_symbol() == Some("&") {
                    match &params[i + 1..] {
                        [rest] => rest_pattern = Some(rest),
                        _ => {
                            return Err(Error::syntax(
                                params_form.span,
                                "& must be followed by exactly one parameter",
                            ));
                        }
                    }
                    break;
                }
                fixed_patterns.push(&params[i]);
                i += 1;
            }
            // Without `recur` the parameters are never rebound: they are read where the caller
            // holds the arguments. (A `recur` that a macro expands to has a loop of its own.)
            let args_in_place = !mentions_recur(body);
            let mut slots: Vec<Slot> = (0..fixed_patterns.len())
                .map(|i| {
                    if args_in_place {
                        ARG_SLOT + i as Slot
                    } else {
                        self.new_slot()
                    }
                })
                .collect();
            if rest_pattern.is_some() {
                slots.push(self.new_slot());
            }
            let mut bindings = Vec::new();
            for (pattern, slot) in fixed_patterns
                .iter()
                .copied()
                .chain(rest_pattern)
                .zip(slots.iter().copied())
            {
                self.bind_pattern(pattern, slot, &mut bindings)?;
            }
            self.frame().recur = (!args_in_place).then(|| slots.clone());
            let body_expr = self.analyze_body(body, true)?;
            let body_expr = if bindings.is_empty() {
                body_expr
            } else {
                Expr::Let(bindings.into_boxed_slice(), Box::new(body_expr))
            };
            let params_text = self
                .src
                .get(params_form.span.range())
                .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
                .unwrap_or_default();
            arities.push(ArityBody {
                fixed: fixed_patterns.len(),
                variadic: rest_pattern.is_some(),
                args_in_place,
                frame_size: self.frame().max_slots,
                body: body_expr,
                params_text,
            });
            self.frame().max_slots = 0;
        }
        Ok(arities)
    }

    fn binding_pairs<'f>(
        &self,
        form: &Form,
        vector: &'f Form,
        what: &str,
    ) -> Result<Vec<(&'f Form, &'f Form)>> {
        let FormKind::Vector(items) = &vector.kind else {
            return Err(Error::syntax(
                vector.span,
                format!("{what} needs a binding vector: ({what} [name value ...] body)"),
            ));
        };
        if items.len() % 2 != 0 {
            return Err(Error::syntax(
                form.span,
                format!(
                    "{what} bindings come in pairs: [name value ...]; found an odd number of forms"
                ),
            ));
        }
        Ok(items.chunks(2).map(|p| (&p[0], &p[1])).collect())
    }

    fn analyze_let(&mut self, form: &Form, args: &[Form], tail: bool) -> Result<Expr> {
        let Some((vector, body)) = args.split_first() else {
            return Err(Error::syntax(
                form.span,
                "let needs a binding vector: (let [x 1] ...)",
            ));
        };
        let pairs = self.binding_pairs(form, vector, "let")?;
        let mark = self.mark();
        let mut bindings = Vec::new();
        for (pattern, value) in pairs {
            let value = self.analyze(value, false)?;
            self.bind_value(pattern, value, &mut bindings)?;
        }
        let body = self.analyze_body(body, tail);
        self.restore(mark);
        Ok(Expr::Let(bindings.into_boxed_slice(), Box::new(body?)))
    }

    /// Bind `pattern` to the value of `value`: a plain symbol gets its own slot, a
    /// destructuring pattern a hidden slot it is taken apart from.
    pub(crate) fn bind_value(
        &mut self,
        pattern: &Form,
        value: Expr,
        out: &mut Vec<(Slot, Expr)>,
    ) -> Result<()> {
        let slot = self.new_slot();
        out.push((slot, value));
        self.bind_pattern(pattern, slot, out)
    }

    fn analyze_loop(&mut self, form: &Form, args: &[Form]) -> Result<Expr> {
        let Some((vector, body)) = args.split_first() else {
            return Err(Error::syntax(
                form.span,
                "loop needs a binding vector: (loop [i 0] ...)",
            ));
        };
        let pairs = self.binding_pairs(form, vector, "loop")?;
        let mark = self.mark();
        let mut slots = Vec::new();
        let mut inits = Vec::new();
        let mut destructure = Vec::new();
        for (pattern, value) in pairs {
            inits.push(self.analyze(value, false)?);
            let slot = self.new_slot();
            slots.push(slot);
            self.bind_pattern(pattern, slot, &mut destructure)?;
        }
        let saved_recur = self.frame().recur.replace(slots.clone());
        let body = self.analyze_body(body, true);
        self.frame().recur = saved_recur;
        self.restore(mark);
        let body = body?;
        let body = if destructure.is_empty() {
            body
        } else {
            Expr::Let(destructure.into_boxed_slice(), Box::new(body))
        };
        Ok(Expr::Loop(Box::new(LoopExpr {
            slots: slots.into_boxed_slice(),
            inits: inits.into_boxed_slice(),
            body,
            span: form.span,
        })))
    }

    fn analyze_recur(&mut self, form: &Form, args: &[Form], tail: bool) -> Result<Expr> {
        let Some(target) = self.frame().recur.clone() else {
            return Err(Error::syntax(
                form.span,
                "recur is only allowed inside loop or fn (for a reduction over a collection use \
                 reduce)",
            ));
        };
        if !tail {
            return Err(Error::syntax(
                form.span,
                "recur must be in tail position: the last thing its loop or fn does (not inside \
                 another call, let bindings or try)",
            ));
        }
        if args.len() != target.len() {
            return Err(Error::at(
                ErrorKind::Arity,
                form.span,
                format!(
                    "recur passes {} value{} but its loop or fn binds {}",
                    args.len(),
                    if args.len() == 1 { "" } else { "s" },
                    target.len()
                ),
            ));
        }
        let args = self.analyze_all(args)?;
        Ok(Expr::Recur(
            args.into_boxed_slice(),
            target.into_boxed_slice(),
        ))
    }

    fn analyze_letfn(&mut self, form: &Form, args: &[Form], tail: bool) -> Result<Expr> {
        let Some((
            Form {
                kind: FormKind::Vector(fns),
                ..
            },
            body,
        )) = args.split_first()
        else {
            return Err(Error::syntax(
                form.span,
                "letfn needs a vector of functions: (letfn [(f [x] ...) (g [y] ...)] body)",
            ));
        };
        let mut names = Vec::new();
        let mut specs = Vec::new();
        for f in fns {
            match &f.kind {
                FormKind::List(items) if items.first().and_then(Form::as_symbol).is_some() => {
                    names.push(intern(items[0].as_symbol().expect("checked")));
                    specs.push((f, &items[1..]));
                }
                _ => {
                    return Err(Error::syntax(
                        f.span,
                        "each letfn function is (name [params] body...)",
                    ));
                }
            }
        }
        // Members share one capture list: each starts with the captures found so far.
        let mut captures: Vec<(ArcStr, CaptureFrom)> = Vec::new();
        let mut capture_index: FxHashMap<ArcStr, u32> = FxHashMap::default();
        let mut group: FxHashMap<ArcStr, u32> = FxHashMap::default();
        for (j, name) in names.iter().enumerate() {
            group.entry(name.clone()).or_insert(j as u32);
        }
        let group = Arc::new(group);
        let mut lambdas = Vec::new();
        for ((f, rest), name) in specs.iter().zip(&names) {
            let arity_forms: Vec<(&Form, &[Form])> = match rest.first().map(|f| &f.kind) {
                Some(FormKind::Vector(_)) => vec![(&rest[0], &rest[1..])],
                _ => rest
                    .iter()
                    .map(|arity| match &arity.kind {
                        FormKind::List(items)
                            if matches!(
                                items.first().map(|f| &f.kind),
                                Some(FormKind::Vector(_))
                            ) =>
                        {
                            Ok((&items[0], &items[1..]))
                        }
                        _ => Err(Error::syntax(
                            f.span,
                            "letfn function needs a parameter vector",
                        )),
                    })
                    .collect::<Result<_>>()?,
            };
            let mut frame = Frame::new(true, None, group.clone());
            frame.captures = std::mem::take(&mut captures);
            frame.capture_index = std::mem::take(&mut capture_index);
            self.frames.push(frame);
            let result = self.analyze_arities(&arity_forms);
            let frame = self.frames.pop().expect("pushed above");
            captures = frame.captures;
            capture_index = frame.capture_index;
            lambdas.push((name.clone(), result?));
        }
        let capture_from: Box<[CaptureFrom]> = captures.iter().map(|(_, c)| *c).collect();
        let lambdas: Arc<[Arc<Lambda>]> = lambdas
            .into_iter()
            .map(|(name, arities)| {
                Arc::new(Lambda {
                    name: Some(name),
                    arities,
                    captures: capture_from.clone(),
                    last_return: AtomicU64::new(0),
                })
            })
            .collect();
        let mark = self.mark();
        let slots: Vec<Slot> = names
            .iter()
            .map(|n| {
                let s = self.new_slot();
                self.bind(n, s);
                s
            })
            .collect();
        let body = self.analyze_body(body, tail);
        self.restore(mark);
        Ok(Expr::Letfn(Box::new(LetfnExpr {
            slots: slots.into_boxed_slice(),
            lambdas,
            captures: capture_from,
            body: body?,
        })))
    }

    fn analyze_case(&mut self, form: &Form, args: &[Form], tail: bool) -> Result<Expr> {
        let Some((subject, clauses)) = args.split_first() else {
            return Err(Error::syntax(
                form.span,
                "case needs an expression and clauses",
            ));
        };
        let subject = self.analyze(subject, false)?;
        let (pairs, default) = if clauses.len() % 2 == 1 {
            (&clauses[..clauses.len() - 1], clauses.last())
        } else {
            (clauses, None)
        };
        let mut table = FxHashMap::default();
        let mut branches = Vec::new();
        for pair in pairs.chunks(2) {
            let index = branches.len();
            let tests: Vec<Value> = match &pair[0].kind {
                FormKind::List(items) => {
                    items.iter().map(Value::from_form).collect::<Result<_>>()?
                }
                _ => vec![Value::from_form(&pair[0])?],
            };
            for test in tests {
                if table.insert(test.clone(), index).is_some() {
                    return Err(Error::syntax(
                        pair[0].span,
                        format!(
                            "duplicate case test constant {}",
                            crate::format::pr_str(&test)
                        ),
                    ));
                }
            }
            branches.push(self.analyze(&pair[1], tail)?);
        }
        let default = default.map(|d| self.analyze(d, tail)).transpose()?;
        Ok(Expr::Case(Box::new(CaseExpr {
            subject,
            table,
            branches,
            default,
            span: form.span,
        })))
    }

    fn analyze_try(&mut self, form: &Form, args: &[Form]) -> Result<Expr> {
        let mut body_forms = Vec::new();
        let mut catches = Vec::new();
        let mut finally = None;
        for item in args {
            let head = match &item.kind {
                FormKind::List(items) => items.first().and_then(Form::as_symbol),
                _ => None,
            };
            match head {
                Some("catch") => {
                    let FormKind::List(items) = &item.kind else {
                        unreachable!()
                    };
                    let (Some(class), Some(binding)) = (items.get(1), items.get(2)) else {
                        return Err(Error::syntax(
                            item.span,
                            "catch needs a class and a name: (catch Exception e ...)",
                        ));
                    };
                    let filter = catch_filter(class)?;
                    let FormKind::Symbol(name) = &binding.kind else {
                        return Err(Error::syntax(binding.span, "catch binds a plain symbol"));
                    };
                    let mark = self.mark();
                    let slot = self.new_slot();
                    self.bind(name, slot);
                    let body = self.analyze_body(&items[3..], false);
                    self.restore(mark);
                    catches.push(Catch {
                        filter,
                        slot,
                        body: body?,
                    });
                }
                Some("finally") => {
                    let FormKind::List(items) = &item.kind else {
                        unreachable!()
                    };
                    finally = Some(self.analyze_body(&items[1..], false)?);
                }
                _ => {
                    if !catches.is_empty() || finally.is_some() {
                        return Err(Error::syntax(
                            item.span,
                            "the body of try comes before its catch and finally clauses",
                        ));
                    }
                    body_forms.push(item.clone());
                }
            }
        }
        let _ = form;
        let body = self.analyze_body(&body_forms, false)?;
        Ok(Expr::Try(Box::new(TryExpr {
            body,
            catches,
            finally,
        })))
    }

    fn analyze_for(&mut self, form: &Form, args: &[Form], collect: bool) -> Result<Expr> {
        let what = if collect { "for" } else { "doseq" };
        let Some((vector, body)) = args.split_first() else {
            return Err(Error::syntax(
                form.span,
                format!("{what} needs a binding vector"),
            ));
        };
        let pairs = self.binding_pairs(form, vector, what)?;
        if pairs
            .first()
            .is_some_and(|(p, _)| matches!(&p.kind, FormKind::Keyword(_)))
        {
            return Err(Error::syntax(
                vector.span,
                format!("{what} must start with a binding, not a modifier"),
            ));
        }
        let mark = self.mark();
        let mut clauses = Vec::new();
        let result = (|| {
            for (pattern, value) in pairs {
                match &pattern.kind {
                    FormKind::Keyword(k) if k == "let" => {
                        let inner = self.binding_pairs(form, value, ":let")?;
                        let mut bindings = Vec::new();
                        for (p, v) in inner {
                            let v = self.analyze(v, false)?;
                            self.bind_value(p, v, &mut bindings)?;
                        }
                        clauses.push(ForClause::Let(bindings.into_boxed_slice()));
                    }
                    FormKind::Keyword(k) if k == "when" => {
                        clauses.push(ForClause::When(self.analyze(value, false)?))
                    }
                    FormKind::Keyword(k) if k == "while" => {
                        clauses.push(ForClause::While(self.analyze(value, false)?))
                    }
                    FormKind::Keyword(k) => {
                        return Err(Error::syntax(
                            pattern.span,
                            format!("unknown {what} modifier :{k}; use :let, :when or :while"),
                        ));
                    }
                    _ => {
                        let coll = self.analyze(value, false)?;
                        let slot = self.new_slot();
                        let mut destructure = Vec::new();
                        self.bind_pattern(pattern, slot, &mut destructure)?;
                        clauses.push(ForClause::Each {
                            slot,
                            coll,
                            destructure: destructure.into_boxed_slice(),
                        });
                    }
                }
            }
            self.analyze_body(body, false)
        })();
        self.restore(mark);
        Ok(Expr::For(Arc::new(ForExpr {
            clauses,
            body: result?,
            collect,
        })))
    }
}

fn catch_filter(class: &Form) -> Result<CatchFilter> {
    use crate::error::ErrorKind as K;
    let name = match &class.kind {
        FormKind::Symbol(s) => s.as_str(),
        FormKind::Keyword(k) if k == "default" => return Ok(CatchFilter::Any),
        _ => {
            return Err(Error::syntax(
                class.span,
                "catch needs an exception class such as Exception or ExceptionInfo",
            ));
        }
    };
    let short = name.rsplit('.').next().unwrap_or(name);
    Ok(match short {
        "Exception" | "Throwable" | "Error" | "RuntimeException" => CatchFilter::Any,
        "ExceptionInfo" => CatchFilter::ExInfo,
        "ArithmeticException" => CatchFilter::Kinds(&[K::Arithmetic]),
        "IndexOutOfBoundsException"
        | "ArrayIndexOutOfBoundsException"
        | "StringIndexOutOfBoundsException" => CatchFilter::Kinds(&[K::Index]),
        "IllegalArgumentException" | "NumberFormatException" => {
            CatchFilter::Kinds(&[K::Argument, K::Arity])
        }
        "ClassCastException" | "NullPointerException" => CatchFilter::Kinds(&[K::Type]),
        "ArityException" => CatchFilter::Kinds(&[K::Arity]),
        _ => {
            return Err(Error::syntax(
                class.span,
                format!(
                    "unknown exception class {name}; use Exception (catches everything), \
                     ExceptionInfo, ArithmeticException, IndexOutOfBoundsException, \
                     IllegalArgumentException or ClassCastException"
                ),
            ));
        }
    })
}

/// A static builtin not in the registry, for code the analyzer generates.
pub(crate) fn internal(builtin: &'static Builtin, args: Vec<Expr>, span: Span) -> Expr {
    Expr::CallBuiltin(Box::new(CallBuiltin {
        builtin,
        args: args.into_boxed_slice(),
        span,
    }))
}
