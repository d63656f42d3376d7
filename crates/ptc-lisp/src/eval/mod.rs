//! The evaluator: a tree-walking interpreter over the resolved program ([`crate::ir`]).
//!
//! Locals live in one value stack (a call pushes a frame, a return truncates it), so calling a
//! closure allocates nothing. This module is the loop over expressions; the other concerns
//! have a file each:
//!
//! - [`call`]: calling functions, keywords, maps, sets, vectors and vars;
//! - [`collections`]: `get` and keyword reads;
//! - [`exceptions`]: `try`, `catch`, `throw`;
//! - [`comprehension`]: `for` and `doseq`;
//! - [`items`]: walking any collection or lazy sequence item by item.
//!
//! The run's context below ([`crate::context`]) holds the state of a run and its limits; the builtins
//! above call back in through [`Ctx::apply`] and [`Items`].

mod call;
mod collections;
mod comprehension;
mod exceptions;
mod items;
pub(crate) mod numbers;
pub(crate) mod precision;
pub(crate) mod reduced;

pub(crate) use crate::error::EXCEPTION_MARKER;
pub(crate) use call::arity_error;
pub(crate) use collections::{get_key, int_value, java_int_value, lookup};
pub(crate) use comprehension::ForState;
pub(crate) use exceptions::throw_value;
pub(crate) use items::{Items, unbounded_error};
// What a builtin sees of a run: builtins import these from the evaluator they call back into.
pub(crate) use crate::context::{Ctx, EvalResult, Flow};

use crate::error::{Error, ErrorKind};
use crate::ir::*;
use crate::span::Span;
use crate::stack::UNKNOWN_STACK_FLOOR;
use crate::value::{ForSeq, Function, LazyKind, LazySeq, Map, Set, Value};
use collections::keyword_get;
use smallvec::SmallVec;
use std::sync::Arc;

/// The closure environment an expression is evaluated in.
pub(crate) struct Env<'a> {
    /// The running closure's arguments, when its parameters are read in place (see
    /// [`ARG_SLOT`]).
    pub args: &'a [Value],
    pub captures: &'a Arc<[Value]>,
    pub self_fn: Option<&'a Function>,
    pub group: Option<&'a Arc<[Arc<Lambda>]>>,
}

impl Ctx {
    /// Run a function or loop body, jumping back to its head on `recur`.
    fn run_body(&mut self, body: &Expr, env: &Env) -> EvalResult {
        loop {
            let result = self.eval(body, env);
            if !matches!(result, Err(Flow::Recur)) {
                return result;
            }
            // `Flow::Recur` owns nothing: skip the out-of-line destructor of the result.
            std::mem::forget(result);
            self.tick()?;
        }
    }

    // -----------------------------------------------------------------------------------------
    // Evaluation
    // -----------------------------------------------------------------------------------------

    pub(crate) fn run_top(&mut self, body: &Expr, frame_size: u32) -> EvalResult {
        // The run may be on another thread than the context's last one.
        self.stack_floor = UNKNOWN_STACK_FLOOR;
        self.stack.clear();
        self.base = 0;
        self.stack.resize(frame_size as usize, Value::Nil);
        let env = Env {
            args: &[],
            captures: no_captures(),
            self_fn: None,
            group: None,
        };
        self.eval(body, &env)
    }

    /// The value of local `slot`: in the frame, or an argument read in place.
    #[inline(always)]
    fn local<'v>(&'v self, slot: Slot, env: &'v Env) -> &'v Value {
        if slot >= ARG_SLOT {
            &env.args[(slot - ARG_SLOT) as usize]
        } else {
            &self.stack[self.base + slot as usize]
        }
    }

    #[inline]
    fn slot(&mut self, slot: Slot) -> &mut Value {
        &mut self.stack[self.base + slot as usize]
    }

    /// `eval`, with locals and constants (most operands) read without a call, and numeric
    /// operations dispatched straight to their small functions.
    #[inline(always)]
    fn operand(&mut self, expr: &Expr, env: &Env) -> EvalResult {
        match expr {
            Expr::Local(s) => Ok(self.local(*s, env).clone()),
            Expr::Const(v) => Ok(v.clone()),
            Expr::Op2(o) => match self.op2_in_place(o, env) {
                Some(v) => Ok(v),
                None => self.eval_op2(o, env),
            },
            Expr::Op1(o) => match self.op1_in_place(o, env) {
                Some(v) => Ok(v),
                None => self.eval_op1(o, env),
            },
            _ => self.eval(expr, env),
        }
    }

    /// [`Ctx::operand`], with a field of a record held in a local (`(:price %)`) read without a
    /// call: the operands of comparisons and of `and`/`or` in predicates often are.
    #[inline(always)]
    fn field_operand(&mut self, expr: &Expr, env: &Env) -> EvalResult {
        match expr {
            Expr::KeywordGet(k) if k.default.is_none() => match &k.target {
                Expr::Local(s) => Ok(keyword_get(self.local(*s, env), k).unwrap_or_default()),
                _ => self.eval(expr, env),
            },
            _ => self.operand(expr, env),
        }
    }

    /// The integer a local, a captured local or a constant holds, read without evaluating.
    #[inline(always)]
    fn peek_int(&self, expr: &Expr, env: &Env) -> Option<i64> {
        let value = match expr {
            Expr::Local(s) => self.local(*s, env),
            Expr::Capture(i) => &env.captures[*i as usize],
            Expr::Const(v) => v,
            _ => return None,
        };
        match value {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// `(op a b)` on integer locals and constants (a loop counter against its bound), read in
    /// place: no copies to make and drop. `None` sends the operation down the general path,
    /// which may read the operands again since reading them has no effects.
    #[inline(always)]
    fn op2_in_place(&self, o: &Op2Expr, env: &Env) -> Option<Value> {
        let (x, y) = (self.peek_int(&o.left, env)?, self.peek_int(&o.right, env)?);
        match o.op {
            Op2::Add => x.checked_add(y).map(Value::Int),
            Op2::Sub => x.checked_sub(y).map(Value::Int),
            Op2::Mul => x.checked_mul(y).map(Value::Int),
            Op2::Lt => Some(Value::Bool(x < y)),
            Op2::Gt => Some(Value::Bool(x > y)),
            Op2::Le => Some(Value::Bool(x <= y)),
            Op2::Ge => Some(Value::Bool(x >= y)),
            Op2::Eq => Some(Value::Bool(x == y)),
        }
    }

    /// `(op a)` on an integer local or constant, read in place (see [`Ctx::op2_in_place`]).
    #[inline(always)]
    fn op1_in_place(&self, o: &Op1Expr, env: &Env) -> Option<Value> {
        let x = self.peek_int(&o.arg, env)?;
        match o.op {
            Op1::Inc => x.checked_add(1).map(Value::Int),
            Op1::Dec => x.checked_sub(1).map(Value::Int),
            Op1::Zero => Some(Value::Bool(x == 0)),
        }
    }

    /// A numeric operation: integers and floats inline, anything else through the builtin.
    #[inline(never)]
    fn eval_op1(&mut self, o: &Op1Expr, env: &Env) -> EvalResult {
        let v = self.operand(&o.arg, env)?;
        if let Value::Int(x) = v {
            let fast = match o.op {
                Op1::Inc => x.checked_add(1).map(Value::Int),
                Op1::Dec => x.checked_sub(1).map(Value::Int),
                Op1::Zero => Some(Value::Bool(x == 0)),
            };
            if let Some(result) = fast {
                v.drop_fast();
                return Ok(result);
            }
        }
        self.call_builtin(o.builtin, &[v])
            .map_err(|f| with_span(f, o.span))
    }

    /// A numeric operation: integers and floats inline, anything else through the builtin.
    #[inline(never)]
    fn eval_op2(&mut self, o: &Op2Expr, env: &Env) -> EvalResult {
        let a = self.field_operand(&o.left, env)?;
        let b = self.field_operand(&o.right, env)?;
        let fast = match (&a, &b) {
            (Value::Int(x), Value::Int(y)) => match o.op {
                Op2::Add => x.checked_add(*y).map(Value::Int),
                Op2::Sub => x.checked_sub(*y).map(Value::Int),
                Op2::Mul => x.checked_mul(*y).map(Value::Int),
                Op2::Lt => Some(Value::Bool(x < y)),
                Op2::Gt => Some(Value::Bool(x > y)),
                Op2::Le => Some(Value::Bool(x <= y)),
                Op2::Ge => Some(Value::Bool(x >= y)),
                Op2::Eq => Some(Value::Bool(x == y)),
            },
            (Value::Float(_) | Value::Int(_), Value::Float(_) | Value::Int(_)) => {
                // At least one float: the same arithmetic the builtins do.
                let (x, y) = (float_of(&a), float_of(&b));
                match o.op {
                    Op2::Add => Some(Value::Float(x + y)),
                    Op2::Sub => Some(Value::Float(x - y)),
                    Op2::Mul => Some(Value::Float(x * y)),
                    Op2::Lt => Some(Value::Bool(x < y)),
                    Op2::Gt => Some(Value::Bool(x > y)),
                    Op2::Le => Some(Value::Bool(x <= y)),
                    Op2::Ge => Some(Value::Bool(x >= y)),
                    // (= 1 1.0) is false: only two floats compare by value here.
                    Op2::Eq => None,
                }
            }
            _ => None,
        };
        if let Some(result) = fast {
            a.drop_fast();
            b.drop_fast();
            return Ok(result);
        }
        self.call_builtin(o.builtin, &[a, b])
            .map_err(|f| with_span(f, o.span))
    }

    pub(crate) fn eval(&mut self, expr: &Expr, env: &Env) -> EvalResult {
        // Expressions in tail position (the branches of `if`, the last of `do`, the body of
        // `let`) are evaluated by this loop rather than by a nested call.
        let mut expr = expr;
        loop {
            return match expr {
                Expr::Const(v) => Ok(v.clone()),
                Expr::Local(s) => Ok(self.local(*s, env).clone()),
                Expr::Capture(i) => Ok(env.captures[*i as usize].clone()),
                Expr::Global {
                    slot,
                    name,
                    fallback,
                    span,
                } => match &self.globals[*slot as usize].value {
                    Some(v) => Ok(v.clone()),
                    None => match fallback {
                        Some(e) => self.eval(e, env),
                        None => Err(Error::at(
                            ErrorKind::UndefinedSymbol,
                            *span,
                            format!(
                                "{name} is declared but has no value yet: define it with def \
                             before using it"
                            ),
                        )
                        .into()),
                    },
                },
                Expr::If(b) => {
                    let truthy = self.operand(&b.0, env)?.into_truthy();
                    expr = if truthy { &b.1 } else { &b.2 };
                    continue;
                }
                Expr::Do(exprs) => {
                    let (last, init) = exprs.split_last().expect("do bodies are never empty");
                    for e in init {
                        self.eval(e, env)?;
                    }
                    expr = last;
                    continue;
                }
                Expr::Let(bindings, body) => {
                    for (slot, e) in bindings.iter() {
                        let v = self.field_operand(e, env)?;
                        Value::store_fast(self.slot(*slot), v);
                    }
                    expr = body;
                    continue;
                }
                Expr::Recur(args, slots) => {
                    // All arguments are evaluated before any slot is assigned.
                    match (&args[..], &slots[..]) {
                        ([a], [sa]) => {
                            let a = self.operand(a, env)?;
                            Value::store_fast(self.slot(*sa), a);
                        }
                        ([a, b], [sa, sb]) => {
                            let a = self.operand(a, env)?;
                            let b = self.operand(b, env)?;
                            Value::store_fast(self.slot(*sa), a);
                            Value::store_fast(self.slot(*sb), b);
                        }
                        _ => {
                            let mut values: SmallVec<[Value; 4]> =
                                SmallVec::with_capacity(args.len());
                            for e in args.iter() {
                                values.push(self.operand(e, env)?);
                            }
                            for (slot, v) in slots.iter().zip(values) {
                                Value::store_fast(self.slot(*slot), v);
                            }
                        }
                    }
                    Err(Flow::Recur)
                }
                Expr::CallBuiltin(c) => {
                    let args = self.eval_args(&c.args, env)?;
                    self.call_builtin(c.builtin, &args)
                        .map_err(|f| with_span(f, c.span))
                }
                Expr::Op1(o) => match self.op1_in_place(o, env) {
                    Some(v) => Ok(v),
                    None => self.eval_op1(o, env),
                },
                Expr::Op2(o) => match self.op2_in_place(o, env) {
                    Some(v) => Ok(v),
                    None => self.eval_op2(o, env),
                },
                Expr::Call(c) => {
                    let f = self.eval(&c.callee, env)?;
                    let args = self.eval_args(&c.args, env)?;
                    self.apply(&f, &args).map_err(|f| with_span(f, c.span))
                }
                Expr::KeywordGet(k) => {
                    // A local or captured map is looked into where it is, not copied out first.
                    let found = match &k.target {
                        Expr::Local(s) => keyword_get(self.local(*s, env), k),
                        Expr::Capture(i) => keyword_get(&env.captures[*i as usize], k),
                        target => {
                            let target = self.operand(target, env)?;
                            keyword_get(&target, k)
                        }
                    };
                    match (found, &k.default) {
                        (Some(v), _) => Ok(v),
                        (None, Some(d)) => self.eval(d, env).map_err(|f| with_span(f, k.span)),
                        (None, None) => Ok(Value::Nil),
                    }
                }
                Expr::And(exprs) => {
                    let mut last = Value::Bool(true);
                    for e in exprs.iter() {
                        std::mem::replace(&mut last, self.field_operand(e, env)?).drop_fast();
                        if !last.truthy() {
                            return Ok(last);
                        }
                    }
                    Ok(last)
                }
                Expr::Or(exprs) => {
                    let mut last = Value::Nil;
                    for e in exprs.iter() {
                        std::mem::replace(&mut last, self.field_operand(e, env)?).drop_fast();
                        if last.truthy() {
                            return Ok(last);
                        }
                    }
                    Ok(last)
                }
                _ => self.eval_cold(expr, env),
            };
        }
    }

    /// The forms that are rarely in a hot loop, kept out of `eval` so its frame stays small.
    #[inline(never)]
    fn eval_cold(&mut self, expr: &Expr, env: &Env) -> EvalResult {
        match expr {
            Expr::SelfFn => Ok(env
                .self_fn
                .map(|f| Value::Fn(f.clone()))
                .unwrap_or_default()),
            Expr::LetfnSibling(j) => Ok(sibling(env, *j)),
            Expr::Raise(err) => Err(Flow::Error(err.clone())),
            Expr::Loop(l) => {
                for (slot, e) in l.slots.iter().zip(l.inits.iter()) {
                    let v = self.eval(e, env)?;
                    *self.slot(*slot) = v;
                }
                self.run_body(&l.body, env)
                    .map_err(|f| with_span(f, l.span))
            }
            Expr::MakeFn(lambda) => {
                let captures = self.capture(&lambda.captures, env);
                self.charge_items(captures.len())?;
                let depth = captured_depth(captures.iter());
                self.check_nesting(depth as usize)?;
                Ok(Value::Fn(Function::closure(
                    lambda.clone(),
                    captures,
                    None,
                    depth,
                )))
            }
            Expr::Letfn(l) => {
                let captures = self.capture(&l.captures, env);
                let depth = captured_depth(captures.iter());
                self.check_nesting(depth as usize)?;
                for (j, slot) in l.slots.iter().enumerate() {
                    let f = Value::Fn(Function::closure(
                        l.lambdas[j].clone(),
                        captures.clone(),
                        Some(l.lambdas.clone()),
                        depth,
                    ));
                    *self.slot(*slot) = f;
                }
                self.eval(&l.body, env)
            }
            Expr::Def(d) => self.eval_def(d, env),
            Expr::Deep(d) => self.with_stack(|ctx| ctx.eval(&d.0, env)),
            Expr::Try(t) => self.eval_try(t, env),
            Expr::Throw(e, span) => {
                let v = self.eval(e, env)?;
                Err(throw_value(v).or_span(*span).into())
            }
            Expr::Return(e) => {
                let v = self.eval(e, env)?;
                Err(Flow::Return(v))
            }
            Expr::Fail(e, span) => {
                let v = self.eval(e, env)?;
                Err(Flow::Fail(Box::new((v, *span))))
            }
            Expr::Case(c) => {
                let subject = self.eval(&c.subject, env)?;
                match c.table.get(&subject) {
                    Some(&i) => self.eval(&c.branches[i], env),
                    None => match &c.default {
                        Some(d) => self.eval(d, env),
                        None => Err(Error::at(
                            ErrorKind::Argument,
                            c.span,
                            // Clojure's message (the value as str shows it), which a program
                            // may catch and compare.
                            format!(
                                "No matching clause: {}",
                                crate::format::render_within(
                                    &subject,
                                    crate::format::Rendering::Str,
                                    400
                                )
                                .unwrap_or_else(|prefix| prefix + "...")
                            ),
                        )
                        .into()),
                    },
                }
            }
            Expr::Vector(items) => {
                self.charge_items(items.len())?;
                let mut out = crate::value::Seq::new();
                for e in items.iter() {
                    out.push_back(self.eval(e, env)?);
                }
                let v = Value::Vector(out);
                self.check_depth(&v)?;
                Ok(v)
            }
            Expr::Map(pairs) => {
                self.charge_items(pairs.len() * 2)?;
                let mut out = Map::new();
                for (k, v) in pairs.iter() {
                    let k = self.eval(k, env)?;
                    let v = self.eval(v, env)?;
                    if out.contains_key(&k) {
                        return Err(duplicate_in_literal("key", "map", &k).into());
                    }
                    out.assoc_mut(k, v);
                }
                let v = Value::Map(out);
                self.check_depth(&v)?;
                Ok(v)
            }
            Expr::Set(items) => {
                self.charge_items(items.len())?;
                let mut out = Set::new();
                for e in items.iter() {
                    let item = self.eval(e, env)?;
                    if out.contains(&item) {
                        return Err(duplicate_in_literal("element", "set", &item).into());
                    }
                    out.insert_mut(item);
                }
                let v = Value::Set(out);
                self.check_depth(&v)?;
                Ok(v)
            }
            Expr::For(f) => {
                let mut out = Vec::new();
                match f.clauses.first() {
                    // `(for [x (range) ...] ...)`: an unbounded sequence, produced on demand.
                    Some(ForClause::Each { coll, .. }) if f.collect && f.lazy_over_first() => {
                        let coll = self.eval(coll, env)?;
                        if let Value::Lazy(source) = coll {
                            let state = ForState {
                                expr: f.clone(),
                                frame: self.stack[self.base..].to_vec(),
                                args: env.args.to_vec(),
                                captures: env.captures.clone(),
                                self_fn: env.self_fn.cloned(),
                                group: env.group.cloned(),
                            };
                            let held_depth = state
                                .frame
                                .iter()
                                .chain(state.captures.iter())
                                .map(Value::depth)
                                .max()
                                .unwrap_or(0);
                            return Ok(Value::Lazy(LazySeq::new(LazyKind::For(ForSeq::new(
                                source, held_depth, state,
                            )))));
                        }
                        self.for_each_item(f, 0, &coll, env, &mut out)?;
                    }
                    _ => {
                        self.eval_for(f, 0, env, &mut out)?;
                    }
                }
                if f.collect {
                    let v = Value::list(out);
                    self.check_depth(&v)?;
                    Ok(v)
                } else {
                    Ok(Value::Nil)
                }
            }
            _ => unreachable!("eval handles every other expression"),
        }
    }

    #[inline]
    fn eval_args(&mut self, args: &[Expr], env: &Env) -> EvalResult<SmallVec<[Value; 4]>> {
        let mut values = SmallVec::with_capacity(args.len());
        for e in args {
            values.push(self.operand(e, env)?);
        }
        Ok(values)
    }

    fn capture(&self, from: &[CaptureFrom], env: &Env) -> Arc<[Value]> {
        from.iter()
            .map(|c| match c {
                CaptureFrom::Local(s) => self.local(*s, env).clone(),
                CaptureFrom::Capture(i) => env.captures[*i as usize].clone(),
                CaptureFrom::SelfFn => env
                    .self_fn
                    .map(|f| Value::Fn(f.clone()))
                    .unwrap_or_default(),
                CaptureFrom::LetfnSibling(j) => sibling(env, *j),
            })
            .collect()
    }

    fn eval_def(&mut self, d: &DefExpr, env: &Env) -> EvalResult {
        if self.worker {
            return Err(Error::unsupported(format!(
                "def of {} inside pmap/pcalls is not supported: define it before the parallel \
                 call",
                d.name
            ))
            .into());
        }
        if d.once && self.globals[d.slot as usize].value.is_some() {
            return Ok(Value::Nil);
        }
        let value = match &d.value {
            Some(e) => Some(self.eval(e, env)?),
            None => None,
        };
        if let Some(v) = &value {
            // Definitions are shown to the model in later turns.
            self.check_export(v, &format!("the value of {}", d.name))?;
        }
        let globals = Arc::make_mut(&mut self.globals);
        let binding = &mut globals[d.slot as usize];
        if binding.order == u64::MAX && value.is_some() {
            binding.order = self.next_order;
            self.next_order += 1;
        }
        if value.is_some() || binding.value.is_none() {
            binding.doc = d.doc.clone();
            binding.params = d.params.clone();
        }
        if let Some(v) = value {
            binding.value = Some(v);
        }
        Ok(Value::Var(crate::value::Symbol::new(&d.name)))
    }
}

#[inline]
fn float_of(v: &Value) -> f64 {
    match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        _ => f64::NAN,
    }
}

/// Sibling `j` of the running closure's letfn group, as a function value.
fn sibling(env: &Env, j: u32) -> Value {
    match env.group {
        Some(group) => Value::Fn(Function::closure(
            group[j as usize].clone(),
            env.captures.clone(),
            Some(group.clone()),
            captured_depth(env.captures.iter()),
        )),
        None => Value::Nil,
    }
}

fn with_span(flow: Flow, span: Span) -> Flow {
    match flow {
        Flow::Error(mut e) => {
            if e.span.is_none() {
                e.span = Some(span);
            }
            Flow::Error(e)
        }
        other => other,
    }
}

/// "got string \"abc\"" for error messages: the type and the value, cut to a readable length.
pub(crate) fn got(v: &Value) -> String {
    match v {
        Value::Nil => "nil".to_string(),
        _ => format!("{} {}", v.type_name(), pr_str_short(v)),
    }
}

/// A value shown in an error message, cut to a readable length.
pub(crate) fn pr_str_short(v: &Value) -> String {
    crate::format::message_text(v, 5, 40, 400)
}

/// A map or set literal whose computed keys or elements came out equal, which Clojure refuses
/// rather than keeping one of them.
fn duplicate_in_literal(what: &str, literal: &str, value: &Value) -> Error {
    Error::new(
        ErrorKind::Argument,
        format!(
            "duplicate {what} {} in {literal} literal",
            crate::format::pr_str(value)
        ),
    )
}
