//! List comprehensions: `for` and `doseq`, eagerly over finite collections and lazily over a
//! lazy first sequence.

use super::{Env, Items};
use crate::context::{Ctx, EvalResult};
use crate::ir::{ForClause, ForExpr, Lambda};
use crate::value::{Function, Value};
use std::sync::Arc;

/// A `for` over a lazy first sequence, with what it needs to produce items later: the frame
/// and closure environment it was evaluated in (see [`ForSeq`](crate::value::ForSeq)).
pub struct ForState {
    pub(crate) expr: Arc<ForExpr>,
    pub(crate) frame: Vec<Value>,
    pub(crate) args: Vec<Value>,
    pub(crate) captures: Arc<[Value]>,
    pub(crate) self_fn: Option<Function>,
    pub(crate) group: Option<Arc<[Arc<Lambda>]>>,
}

impl Ctx {
    /// Run the `for` clauses after binding clause `i` (an `Each`) to each item of `coll`.
    pub(crate) fn for_each_item(
        &mut self,
        f: &ForExpr,
        i: usize,
        coll: &Value,
        env: &Env,
        out: &mut Vec<Value>,
    ) -> EvalResult<()> {
        let mut items = Items::new(coll)?;
        while let Some(item) = items.next(self)? {
            self.bind_for_item(f, i, item.into_owned(), env)?;
            if !self.eval_for(f, i + 1, env, out)? {
                break;
            }
        }
        Ok(())
    }

    /// Bind the slot (and destructured names) of `Each` clause `i` to `item`.
    pub(crate) fn bind_for_item(
        &mut self,
        f: &ForExpr,
        i: usize,
        item: Value,
        env: &Env,
    ) -> EvalResult<()> {
        if let Some(ForClause::Each {
            slot, destructure, ..
        }) = f.clauses.get(i)
        {
            *self.slot(*slot) = item;
            for (s, e) in destructure.iter() {
                let v = self.eval(e, env)?;
                *self.slot(*s) = v;
            }
        }
        Ok(())
    }

    /// The values one item of an unbounded `for` produces: its first binding set to `item`,
    /// the rest of the clauses run in a copy of the frame the `for` was evaluated in.
    pub(crate) fn for_item(
        &mut self,
        lazy: &ForState,
        item: Value,
        out: &mut Vec<Value>,
    ) -> EvalResult<()> {
        let saved_base = self.base;
        let new_base = self.stack.len();
        self.stack.extend_from_slice(&lazy.frame);
        self.base = new_base;
        let env = Env {
            args: &lazy.args,
            captures: &lazy.captures,
            self_fn: lazy.self_fn.as_ref(),
            group: lazy.group.as_ref(),
        };
        let result = match self.bind_for_item(&lazy.expr, 0, item, &env) {
            Ok(()) => self.eval_for(&lazy.expr, 1, &env, out).map(|_| ()),
            Err(e) => Err(e),
        };
        self.stack.truncate(new_base);
        self.base = saved_base;
        result
    }

    pub(crate) fn eval_for(
        &mut self,
        f: &ForExpr,
        i: usize,
        env: &Env,
        out: &mut Vec<Value>,
    ) -> EvalResult<bool> {
        // Returns false when a `:while` clause stopped the enclosing binding.
        let Some(clause) = f.clauses.get(i) else {
            self.tick()?;
            let v = self.eval(&f.body, env)?;
            if f.collect {
                // Charged as it grows: a long `for` must not collect past the budget.
                self.charge_items(1)?;
                out.push(v);
            }
            return Ok(true);
        };
        match clause {
            ForClause::Each { coll, .. } => {
                let coll = self.eval(coll, env)?;
                self.for_each_item(f, i, &coll, env, out)?;
                Ok(true)
            }
            ForClause::Let(bindings) => {
                for (s, e) in bindings.iter() {
                    let v = self.eval(e, env)?;
                    *self.slot(*s) = v;
                }
                self.eval_for(f, i + 1, env, out)
            }
            ForClause::When(test) => {
                if self.eval(test, env)?.truthy() {
                    self.eval_for(f, i + 1, env, out)
                } else {
                    Ok(true)
                }
            }
            ForClause::While(test) => {
                if self.eval(test, env)?.truthy() {
                    self.eval_for(f, i + 1, env, out)
                } else {
                    Ok(false)
                }
            }
        }
    }
}
