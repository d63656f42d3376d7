//! Calling values: functions (builtins, closures, natives), keywords, symbols, maps, sets,
//! vectors and vars, and the arity errors of calls.

use super::collections::{get_key, keyword_get_hinted, lookup};
use super::{Env, pr_str_short};
use crate::context::{Builtin, Ctx, EvalResult};
use crate::error::{Error, ErrorKind};
use crate::ir::*;
use crate::value::{Function, Value};

impl Ctx {
    /// Call any callable value: a function, keyword, map, set, vector or var.
    pub fn apply(&mut self, f: &Value, args: &[Value]) -> EvalResult {
        match f {
            Value::Fn(func) => self.apply_fn(func, args),
            Value::Keyword(k) => match args {
                [m] => Ok(keyword_get_hinted(m, f, &self.keyword_hint).unwrap_or_default()),
                [m, default] => Ok(get_key(m, f).unwrap_or_else(|| default.clone())),
                _ => Err(arity_error(&format!(":{}", k.as_str()), args.len(), "1 or 2").into()),
            },
            // `('a m)`: a symbol looks itself up, as a keyword does.
            Value::Symbol(sym) => match args {
                [m] => Ok(get_key(m, f).unwrap_or_default()),
                [m, default] => Ok(get_key(m, f).unwrap_or_else(|| default.clone())),
                _ => Err(arity_error(sym.as_str(), args.len(), "1 or 2").into()),
            },
            Value::Map(m) => match args {
                [k] => Ok(lookup(m, k).cloned().unwrap_or_default()),
                [k, default] => Ok(lookup(m, k).cloned().unwrap_or_else(|| default.clone())),
                _ => Err(arity_error("a map", args.len(), "1 or 2").into()),
            },
            Value::Set(s) => match args {
                [x] => Ok(s.get(x).cloned().unwrap_or_default()),
                _ => Err(arity_error("a set", args.len(), "1").into()),
            },
            // An integer index by its Java `intValue`, as Clojure's vectors take one.
            Value::Vector(v) => match args {
                [k] if let Some(i) = super::collections::int_value(k) => usize::try_from(i)
                    .ok()
                    .and_then(|i| v.get(i))
                    .cloned()
                    .ok_or_else(|| {
                        Error::index(format!(
                            "index {i} out of bounds for a vector of {} items",
                            v.len()
                        ))
                        .into()
                    }),
                [other] => Err(Error::type_error(format!(
                    "a vector called as a function needs an integer index, got {}",
                    other.type_name()
                ))
                .into()),
                _ => Err(arity_error("a vector", args.len(), "1").into()),
            },
            Value::Var(sym) => {
                let value = self
                    .globals
                    .iter()
                    .find(|b| b.name.as_str() == sym.name())
                    .and_then(|b| b.value.clone());
                match value {
                    Some(v) => self.apply(&v, args),
                    None => Err(Error::new(
                        ErrorKind::UndefinedSymbol,
                        format!("#'{} is not defined", sym.as_str()),
                    )
                    .into()),
                }
            }
            other => Err(Error::type_error(format!(
                "{} is not a function: {} cannot be called",
                pr_str_short(other),
                other.type_name()
            ))
            .into()),
        }
    }

    /// [`Ctx::apply`] to one argument, with a keyword (`(map :price rows)`, `(group-by
    /// :category rows)`) looked up without the general call.
    #[inline]
    pub fn apply1(&mut self, f: &Value, arg: &Value) -> EvalResult {
        match f {
            Value::Fn(func) => self.apply_fn(func, std::slice::from_ref(arg)),
            Value::Keyword(_) => {
                Ok(keyword_get_hinted(arg, f, &self.keyword_hint).unwrap_or_default())
            }
            _ => self.apply(f, std::slice::from_ref(arg)),
        }
    }

    #[inline]
    pub fn apply_fn(&mut self, func: &Function, args: &[Value]) -> EvalResult {
        match func.repr() {
            FnRepr::Builtin(b) => self.call_builtin(b, args),
            FnRepr::Closure(c) => self.call_closure(func, c, args),
            FnRepr::Native(n) => {
                // Natives that wrap functions (`fnil`, `partial`, `comp`, ...) call them in
                // turn, so a chain of them recurses like nested calls do.
                self.tick()?;
                self.enter_call()?;
                let result = self.with_stack(|ctx| (n.f)(ctx, args));
                self.depth -= 1;
                let value = result?;
                self.check_depth(&value)?;
                Ok(value)
            }
            FnRepr::ReadBack if func.read_back_text().is_none() => Err(Error::type_error(format!(
                "a {} is not a function and cannot be called; (force d) or @d gives its value",
                func.name()
            ))
            .into()),
            FnRepr::ReadBack => Err(Error::type_error(format!(
                "{} was read back from a printed value and cannot be called",
                func.name()
            ))
            .into()),
        }
    }

    #[inline]
    pub(crate) fn call_builtin(&mut self, b: &'static Builtin, args: &[Value]) -> EvalResult {
        // The entry checks the arguments, counts the step, runs the builtin and settles what
        // it used (see `builtins::args::invoke`).
        (b.f)(self, b, args)
    }

    #[inline]
    pub(crate) fn call_closure(
        &mut self,
        func: &Function,
        c: &Closure,
        args: &[Value],
    ) -> EvalResult {
        let Some(arity) = c.lambda.arity_for(args.len()) else {
            return Err(closure_arity_error(&c.lambda, args.len()).into());
        };
        self.check_call_depth()?;
        self.tick()?;
        self.with_stack(|ctx| ctx.run_closure(func, c, arity, args))
    }

    pub(crate) fn run_closure(
        &mut self,
        func: &Function,
        c: &Closure,
        arity: &ArityBody,
        args: &[Value],
    ) -> EvalResult {
        {
            let new_base = self.stack.len();
            if !arity.args_in_place {
                self.stack.extend_from_slice(&args[..arity.fixed]);
            }
            if arity.variadic {
                let rest = &args[arity.fixed..];
                self.stack.push(if rest.is_empty() {
                    Value::Nil
                } else {
                    Value::list(rest.iter().cloned())
                });
            }
            let frame_end = new_base + arity.frame_size as usize;
            if self.stack.len() < frame_end {
                self.stack.resize(frame_end, Value::Nil);
            }
            let saved_base = self.base;
            self.base = new_base;
            self.depth += 1;
            let env = Env {
                args: if arity.args_in_place {
                    &args[..arity.fixed]
                } else {
                    &[]
                },
                captures: &c.captures,
                self_fn: Some(func),
                group: c.group.as_ref(),
            };
            let result = self.run_body(&arity.body, &env);
            self.stack.truncate(new_base);
            self.base = saved_base;
            self.depth -= 1;
            if let Ok(v) = &result {
                c.note_return(v);
            }
            result
        }
    }
}

pub(crate) fn arity_error(name: &str, got: usize, expected: &str) -> Error {
    Error::arity(format!(
        "{name} called with {got} argument{}, expects {expected}",
        if got == 1 { "" } else { "s" }
    ))
}

fn closure_arity_error(lambda: &Lambda, got: usize) -> Error {
    let name = lambda.name.as_deref().unwrap_or("fn");
    Error::arity(format!(
        "{name} called with {got} argument{}; its parameter list{} {}",
        if got == 1 { "" } else { "s" },
        if lambda.arities.len() == 1 {
            " is"
        } else {
            "s are"
        },
        lambda.describe_arities()
    ))
}
