//! The special forms: `def`, `defn`, `fn`, `let`, `loop`/`recur`, `letfn`, `case`, `try`,
//! `for`/`doseq` and the rest, checked and turned into the resolved program. Which names are
//! special forms is the catalogue's to say ([`super::catalogue`]).

use super::catalogue::Special;
use super::{Analyzer, Frame, mentions_recur, no_letfn_group};
use crate::error::{Error, ErrorKind, Result};
use crate::ir::*;
use crate::reader::{Form, FormKind};
use crate::value::{Value, intern};
use arcstr::ArcStr;
use rustc_hash::FxHashMap;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

impl<'s, 'a> Analyzer<'s, 'a> {
    // -----------------------------------------------------------------------------------------
    // Special forms
    // -----------------------------------------------------------------------------------------

    /// The special form `special`.
    pub(super) fn special_form(
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
            Special::Def => self.analyze_def(form, args, false)?,
            Special::Defonce => self.analyze_def(form, args, true)?,
            Special::Var => match args {
                [
                    name @ Form {
                        kind: FormKind::Symbol(sym),
                        ..
                    },
                ] => self.analyze(
                    &Form::new(
                        FormKind::Var(sym.strip_prefix("user/").unwrap_or(sym).to_owned()),
                        name.span,
                    ),
                    false,
                )?,
                _ => return Err(Error::syntax(span, "var takes one symbol: (var name)")),
            },
            Special::Unquote => {
                let name = items[0].as_symbol().unwrap_or("unquote");
                return Err(unquote_outside(name, span));
            }
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
                        once: false,
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
            Special::Comment => Expr::Const(Value::Nil),
            Special::Doc => self.analyze_doc(form, args)?,
            Special::Ns => self.analyze_ns(args)?,
            Special::Require => self.analyze_require(form, args)?,
            Special::WithPrecision => self.analyze_with_precision(form, args)?,
            Special::WithOutStr => {
                // The body becomes a function of no arguments for the capturing builtin.
                let mut items = vec![
                    Form::new(FormKind::Symbol(intern("fn")), span),
                    Form::new(FormKind::Vector(Vec::new()), span),
                ];
                items.extend(args.iter().cloned());
                let body = self.analyze(&Form::new(FormKind::List(items), span), false)?;
                super::internal(self.scope.library.capture_output(), vec![body], span)
            }
            Special::Delay => {
                // The body becomes a function of no arguments, kept by the delay.
                let mut items = vec![
                    Form::new(FormKind::Symbol(intern("fn")), span),
                    Form::new(FormKind::Vector(Vec::new()), span),
                ];
                items.extend(args.iter().cloned());
                let body = self.analyze(&Form::new(FormKind::List(items), span), false)?;
                super::internal(self.scope.library.make_delay(), vec![body], span)
            }
        })
    }

    /// `(with-precision digits [:rounding MODE] body ...)`: the body becomes a function of no
    /// arguments for the builtin that sets the precision around it.
    fn analyze_with_precision(&mut self, form: &Form, args: &[Form]) -> Result<Expr> {
        let span = form.span;
        let Some((digits, mut body)) = args.split_first() else {
            return Err(Error::syntax(
                span,
                "with-precision needs a number of digits: (with-precision 10 (/ 1M 3))",
            ));
        };
        let mut mode = "HALF_UP".to_owned();
        if let [key, name, rest @ ..] = body
            && matches!(&key.kind, FormKind::Keyword(k) if k == "rounding")
        {
            let rounding = name
                .as_symbol()
                .filter(|n| crate::value::Rounding::named(n).is_some())
                .ok_or_else(|| {
                    Error::syntax(
                        name.span,
                        format!(":rounding takes {}", crate::value::Rounding::NAMES),
                    )
                })?;
            mode = rounding.rsplit('/').next().unwrap_or(rounding).to_owned();
            body = rest;
        }
        let mut items = vec![
            Form::new(FormKind::Symbol(intern("fn")), span),
            Form::new(FormKind::Vector(Vec::new()), span),
        ];
        items.extend(body.iter().cloned());
        let thunk = self.analyze(&Form::new(FormKind::List(items), span), false)?;
        let digits = self.analyze(digits, false)?;
        let mode = Expr::Const(Value::keyword(&mode));
        Ok(super::internal(
            self.scope.library.with_precision(),
            vec![digits, mode, thunk],
            span,
        ))
    }

    fn analyze_def(&mut self, form: &Form, args: &[Form], once: bool) -> Result<Expr> {
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
        // `(def ^{:doc "..."} name value)`: the docstring may come as metadata.
        let doc = doc.or_else(|| meta_doc(name_form));
        let slot = self.global_slot(name);
        let mut params = Vec::new();
        let value = match value_form {
            Some(v) => {
                if let FormKind::List(items) = &v.kind
                    && matches!(items.first().and_then(Form::as_symbol), Some("fn" | "fn*"))
                {
                    params = self.params_texts(&items[1..]);
                }
                Some(self.analyze_defining(name_form, v)?)
            }
            None => None,
        };
        Ok(Expr::Def(Box::new(DefExpr {
            slot,
            name: intern(name),
            doc: doc.map(|d| ArcStr::from(d.as_str())),
            params,
            value,
            once,
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
        let doc = doc.or_else(|| meta_doc(name_form));
        let slot = self.global_slot(name);
        let params = self.params_texts(rest);
        self.defining.extend(symbol_name(name_form));
        let lambda = self.analyze_fn(form, rest, Some(name));
        self.defining.pop();
        let lambda = lambda?;
        Ok(Expr::Def(Box::new(DefExpr {
            slot,
            name: intern(name),
            doc: doc.map(|d| ArcStr::from(d.as_str())),
            params,
            value: Some(Expr::MakeFn(lambda)),
            once: false,
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
            let conditioned = super::macros::with_conditions(body);
            let body: &[Form] = conditioned.as_deref().unwrap_or(body);
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
            let value = self.analyze_defining(pattern, value)?;
            self.bind_value(pattern, value, &mut bindings)?;
        }
        let body = self.analyze_body(body, tail);
        self.restore(mark);
        Ok(Expr::Let(bindings.into_boxed_slice(), Box::new(body?)))
    }

    /// Analyze `value`, the value given to `name` (a plain symbol, or a destructuring pattern,
    /// which names nothing here), with the name out of the spelling suggestions: in
    /// `(def in-stock (filter in-stock? items))`, `in-stock` is no fix for `in-stock?`.
    fn analyze_defining(&mut self, name: &Form, value: &Form) -> Result<Expr> {
        let Some(name) = symbol_name(name) else {
            return self.analyze(value, false);
        };
        self.defining.push(name);
        let value = self.analyze(value, false);
        self.defining.pop();
        value
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
            inits.push(self.analyze_defining(pattern, value)?);
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

/// The name a plain symbol form stands for (`None` for a destructuring pattern or any other
/// form).
fn symbol_name(form: &Form) -> Option<ArcStr> {
    match &form.kind {
        FormKind::Symbol(name) => Some(name.clone()),
        _ => None,
    }
}

/// The `:doc` string of the metadata written on a definition's name (`^{:doc "..."} name`).
fn meta_doc(name_form: &Form) -> Option<String> {
    let FormKind::Map(items) = &name_form.meta.as_ref()?.kind else {
        return None;
    };
    items.chunks(2).find_map(|pair| match pair {
        [
            Form {
                kind: FormKind::Keyword(k),
                ..
            },
            Form {
                kind: FormKind::Str(doc),
                ..
            },
        ] if k == "doc" => Some(doc.clone()),
        _ => None,
    })
}

/// The error for `~x`, `~@xs`, `(unquote x)` or `(unquote-splicing xs)` outside a syntax-quote.
pub(super) fn unquote_outside(name: &str, span: crate::span::Span) -> Error {
    let shown = if name == "unquote" {
        "~ (unquote)"
    } else {
        "~@ (unquote-splicing)"
    };
    Error::syntax(
        span,
        format!(
            "{shown} only has a meaning inside a syntax-quote, which fills it in: \
             `(f ~x ~@xs) builds (user/f 1 2 3) when x is 1 and xs is [2 3]"
        ),
    )
}
