//! Macro-like forms, rewritten into special forms before analysis.
//!
//! Generated code refers to builtins through `clojure.core/...` so a local that shadows a
//! builtin's name cannot change what the expansion means, and keeps values in locals whose names
//! contain a space, which no program can write.

use super::Analyzer;
use super::catalogue::Macro;
use crate::error::{Error, ErrorKind, Result};
use crate::reader::{Form, FormKind};
use crate::span::Span;
use crate::value::Value;

pub(super) fn sym(name: &str, span: Span) -> Form {
    Form::new(FormKind::Symbol(arcstr::ArcStr::from(name)), span)
}

pub(super) fn list(items: Vec<Form>, span: Span) -> Form {
    Form::new(FormKind::List(items), span)
}

fn vector(items: Vec<Form>, span: Span) -> Form {
    Form::new(FormKind::Vector(items), span)
}

fn nil(span: Span) -> Form {
    Form::new(FormKind::Nil, span)
}

fn do_body(body: &[Form], span: Span) -> Form {
    match body {
        [only] => only.clone(),
        _ => {
            let mut items = vec![sym("do", span)];
            items.extend(body.iter().cloned());
            list(items, span)
        }
    }
}

/// Put `x` into `step` as its first (`last = false`) or last argument.
fn thread(x: Form, step: &Form, last: bool) -> Form {
    let span = step.span;
    match &step.kind {
        FormKind::List(items) if !items.is_empty() => {
            let mut items = items.clone();
            if last {
                items.push(x);
            } else {
                items.insert(1, x);
            }
            list(items, span)
        }
        _ => list(vec![step.clone(), x], span),
    }
}

/// The operators `where` accepts, written as bare symbols.
fn is_where_operator(name: &str) -> bool {
    matches!(
        name,
        "=" | "==" | "not=" | "!=" | ">" | "<" | ">=" | "<=" | "in" | "includes" | "includes?"
    )
}

/// The `[name expr]` vector that starts `if-let`, `when-first`, `dotimes` and friends.
fn one_binding<'f>(
    form_name: &str,
    args: &'f [Form],
    span: Span,
    shape: &str,
) -> Result<(&'f Form, &'f Form)> {
    let Some(Form {
        kind: FormKind::Vector(binding),
        span: binding_span,
        ..
    }) = args.first()
    else {
        return Err(Error::syntax(
            span,
            format!("{form_name} needs a binding vector: ({form_name} {shape} ...)"),
        ));
    };
    match binding.as_slice() {
        [pattern, expr] => Ok((pattern, expr)),
        _ => Err(Error::syntax(
            *binding_span,
            format!("{form_name} binds exactly one name: {shape}"),
        )),
    }
}

impl<'s, 'a> Analyzer<'s, 'a> {
    fn gensym_form(&mut self, span: Span) -> Form {
        self.gensym += 1;
        sym(&format!(" g{}", self.gensym), span)
    }
}

/// `(where :field > 10)`: the operator is written bare, so it is quoted for the `where`
/// builtin; `in` and `includes` name no function. A user definition called `where` keeps its
/// own meaning. `None` for any other call.
pub(super) fn where_operator(
    a: &Analyzer<'_, '_>,
    name: &str,
    form: &Form,
    items: &[Form],
) -> Option<Form> {
    let span = form.span;
    let args = &items[1..];
    (name == "where"
        && args.len() == 3
        && args[1].as_symbol().is_some_and(is_where_operator)
        && !a.scope.global_index.contains_key("where"))
    .then(|| {
        list(
            vec![
                sym("clojure.core/where", span),
                args[0].clone(),
                list(vec![sym("quote", span), args[1].clone()], args[1].span),
                args[2].clone(),
            ],
            span,
        )
    })
}

/// Rewrite the macro-like form `m`, written as `name`.
pub(super) fn expand(
    a: &mut Analyzer<'_, '_>,
    m: Macro,
    name: &str,
    form: &Form,
    items: &[Form],
) -> Result<Form> {
    let span = form.span;
    let args = &items[1..];
    let need = |n: usize, usage: &str| -> Result<()> {
        if args.len() < n {
            Err(Error::syntax(span, format!("{name} needs {usage}")))
        } else {
            Ok(())
        }
    };
    Ok(match m {
        Macro::When => {
            need(1, "a test: (when test body...)")?;
            list(
                vec![sym("if", span), args[0].clone(), do_body(&args[1..], span)],
                span,
            )
        }
        Macro::WhenNot => {
            need(1, "a test: (when-not test body...)")?;
            list(
                vec![
                    sym("if", span),
                    args[0].clone(),
                    nil(span),
                    do_body(&args[1..], span),
                ],
                span,
            )
        }
        Macro::IfNot => {
            if !(2..=3).contains(&args.len()) {
                return Err(Error::syntax(
                    span,
                    "if-not takes a test, a then and an optional else",
                ));
            }
            let otherwise = args.get(2).cloned().unwrap_or_else(|| nil(span));
            list(
                vec![sym("if", span), args[0].clone(), otherwise, args[1].clone()],
                span,
            )
        }
        Macro::Cond => {
            if !args.len().is_multiple_of(2) {
                return Err(Error::syntax(
                    span,
                    "cond needs pairs of test and expression; end with :else for a default",
                ));
            }
            a.check_expansion_depth(args.len() / 2, span)?;
            let mut result = nil(span);
            for pair in args.chunks(2).rev() {
                result = list(
                    vec![sym("if", span), pair[0].clone(), pair[1].clone(), result],
                    span,
                );
            }
            result
        }
        Macro::Condp => {
            need(
                2,
                "a predicate and an expression: (condp = x 1 \"one\" \"other\")",
            )?;
            a.check_expansion_depth(args.len(), span)?;
            let pred = a.gensym_form(span);
            let value = a.gensym_form(span);
            // Clauses are `test result` or `test :>> f` (f gets the predicate's result).
            let mut clauses: Vec<(Form, Option<Form>)> = Vec::new();
            let mut rest = &args[2..];
            let mut default = None;
            loop {
                match rest {
                    [test, arrow, f, more @ ..] if matches!(&arrow.kind, FormKind::Keyword(k) if k == ">>") =>
                    {
                        clauses.push((test.clone(), Some(f.clone())));
                        rest = more;
                    }
                    [test, result, more @ ..] => {
                        clauses.push((test.clone(), None));
                        clauses.push((result.clone(), None));
                        rest = more;
                    }
                    [last] => {
                        default = Some(last.clone());
                        break;
                    }
                    [] => break,
                }
            }
            // No match and no default: an argument error naming the value, as Clojure's
            // IllegalArgumentException "No matching clause: 9" (thrown as a caught exception
            // of that kind would be rethrown).
            let mut result = default.unwrap_or_else(|| {
                let keyword = |k: &str| Form::new(FormKind::Keyword(k.into()), span);
                let message = list(
                    vec![
                        sym("clojure.core/str", span),
                        Form::new(FormKind::Str("No matching clause: ".into()), span),
                        value.clone(),
                    ],
                    span,
                );
                let exception = Form::new(
                    FormKind::Map(vec![
                        keyword(crate::error::EXCEPTION_MARKER),
                        Form::new(FormKind::Bool(true), span),
                        keyword("kind"),
                        keyword(ErrorKind::Argument.as_str()),
                        keyword("message"),
                        message,
                    ]),
                    span,
                );
                list(vec![sym("throw", span), exception], span)
            });
            let mut i = clauses.len();
            while i > 0 {
                let (test, then) = match &clauses[i - 1] {
                    (test, Some(f)) => {
                        i -= 1;
                        let hit = a.gensym_form(span);
                        let test = list(vec![pred.clone(), test.clone(), value.clone()], span);
                        result = list(
                            vec![
                                sym("if-let", span),
                                vector(vec![hit.clone(), test], span),
                                list(vec![f.clone(), hit], span),
                                result,
                            ],
                            span,
                        );
                        continue;
                    }
                    (then, None) => {
                        i -= 2;
                        (clauses[i].0.clone(), then.clone())
                    }
                };
                let test = list(vec![pred.clone(), test, value.clone()], span);
                result = list(vec![sym("if", span), test, then, result], span);
            }
            list(
                vec![
                    sym("let", span),
                    vector(vec![pred, args[0].clone(), value, args[1].clone()], span),
                    result,
                ],
                span,
            )
        }
        Macro::IfLet | Macro::WhenLet | Macro::IfSome | Macro::WhenSome => {
            let is_if = name.starts_with("if");
            let some = name.ends_with("some");
            let (pattern, expr) = one_binding(name, args, span, "[x expr]")?;
            let (then, otherwise) = if is_if {
                if !(2..=3).contains(&args.len()) {
                    return Err(Error::syntax(
                        span,
                        format!("{name} takes a binding, a then and an optional else"),
                    ));
                }
                (
                    args[1].clone(),
                    args.get(2).cloned().unwrap_or_else(|| nil(span)),
                )
            } else {
                (do_body(&args[1..], span), nil(span))
            };
            let temp = a.gensym_form(span);
            let test = if some {
                list(vec![sym("clojure.core/some?", span), temp.clone()], span)
            } else {
                temp.clone()
            };
            let inner = list(
                vec![
                    sym("let", span),
                    vector(vec![pattern.clone(), temp.clone()], span),
                    then,
                ],
                span,
            );
            list(
                vec![
                    sym("let", span),
                    vector(vec![temp, expr.clone()], span),
                    list(vec![sym("if", span), test, inner, otherwise], span),
                ],
                span,
            )
        }
        Macro::WhenFirst => {
            let (pattern, coll) = one_binding(name, args, span, "[x coll]")?;
            let temp = a.gensym_form(span);
            list(
                vec![
                    sym("when-let", span),
                    vector(
                        vec![
                            temp.clone(),
                            list(vec![sym("clojure.core/seq", span), coll.clone()], span),
                        ],
                        span,
                    ),
                    list(
                        vec![
                            sym("let", span),
                            vector(
                                vec![
                                    pattern.clone(),
                                    list(vec![sym("clojure.core/first", span), temp], span),
                                ],
                                span,
                            ),
                            do_body(&args[1..], span),
                        ],
                        span,
                    ),
                ],
                span,
            )
        }
        Macro::Thread | Macro::ThreadLast => {
            need(1, "a value to thread")?;
            a.check_expansion_depth(args.len(), span)?;
            let last = name == "->>";
            args[1..]
                .iter()
                .fold(args[0].clone(), |acc, step| thread(acc, step, last))
        }
        Macro::ThreadAs => {
            need(2, "a value and a name: (as-> x $ (f $) ...)")?;
            let name_form = args[1].clone();
            let mut bindings = vec![name_form.clone(), args[0].clone()];
            for step in &args[2..] {
                bindings.push(name_form.clone());
                bindings.push(step.clone());
            }
            list(
                vec![sym("let", span), vector(bindings, span), name_form],
                span,
            )
        }
        Macro::SomeThread | Macro::SomeThreadLast => {
            need(1, "a value to thread")?;
            a.check_expansion_depth(args.len().saturating_mul(3), span)?;
            let last = name == "some->>";
            let mut result: Option<Form> = None;
            let temps: Vec<Form> = (0..args.len()).map(|_| a.gensym_form(span)).collect();
            // Built inside out: the innermost step returns the last value.
            for i in (0..args.len()).rev() {
                let value = if i == 0 {
                    args[0].clone()
                } else {
                    thread(temps[i - 1].clone(), &args[i], last)
                };
                let body = match result.take() {
                    None => temps[i].clone(),
                    Some(next) => list(
                        vec![
                            sym("if", span),
                            list(vec![sym("clojure.core/nil?", span), temps[i].clone()], span),
                            nil(span),
                            next,
                        ],
                        span,
                    ),
                };
                result = Some(list(
                    vec![
                        sym("let", span),
                        vector(vec![temps[i].clone(), value], span),
                        body,
                    ],
                    span,
                ));
            }
            result.expect("at least one step")
        }
        Macro::CondThread | Macro::CondThreadLast => {
            need(1, "a value to thread")?;
            let clauses = &args[1..];
            if !clauses.len().is_multiple_of(2) {
                return Err(Error::syntax(
                    span,
                    format!("{name} needs pairs of test and step"),
                ));
            }
            let last = name == "cond->>";
            let temp = a.gensym_form(span);
            let mut bindings = vec![temp.clone(), args[0].clone()];
            for pair in clauses.chunks(2) {
                bindings.push(temp.clone());
                bindings.push(list(
                    vec![
                        sym("if", span),
                        pair[0].clone(),
                        thread(temp.clone(), &pair[1], last),
                        temp.clone(),
                    ],
                    span,
                ));
            }
            list(vec![sym("let", span), vector(bindings, span), temp], span)
        }
        Macro::Assert => {
            if !(1..=2).contains(&args.len()) {
                return Err(Error::syntax(
                    span,
                    "assert takes a test and an optional message: (assert (pos? n) \"n must be positive\")",
                ));
            }
            let test = &args[0];
            let shown = Value::from_form(test)
                .map(|v| crate::format::pr_str(&v))
                .unwrap_or_else(|_| "the assertion".to_string());
            let text = |t: String| Form::new(FormKind::Str(t), span);
            let message = match args.get(1) {
                None => text(format!("Assert failed: {shown}")),
                Some(m) => list(
                    vec![
                        sym("clojure.core/str", span),
                        text("Assert failed: ".to_string()),
                        m.clone(),
                        text(format!("\n{shown}")),
                    ],
                    span,
                ),
            };
            list(
                vec![
                    sym("if", span),
                    test.clone(),
                    nil(span),
                    list(
                        vec![
                            sym("throw", span),
                            list(vec![sym("Exception.", span), message], span),
                        ],
                        span,
                    ),
                ],
                span,
            )
        }
        Macro::Pvalues => {
            let mut calls = vec![sym("clojure.core/pcalls", span)];
            for expr in args {
                calls.push(list(
                    vec![sym("fn", span), vector(Vec::new(), span), expr.clone()],
                    span,
                ));
            }
            list(calls, span)
        }
        Macro::Amap | Macro::Areduce => {
            // Arrays are vectors: amap builds its result with assoc, areduce threads its
            // accumulator through a loop.
            let is_map = m == Macro::Amap;
            let shape = if is_map {
                "(amap a i ret expr)"
            } else {
                "(areduce a i acc init expr)"
            };
            let ([array, index, ret, rest @ ..], true) =
                (args, args.len() == if is_map { 4 } else { 5 })
            else {
                return Err(Error::syntax(span, format!("{name} is written {shape}")));
            };
            let held = a.gensym_form(span);
            let (start, next) = if is_map {
                (
                    list(vec![sym("clojure.core/aclone", span), held.clone()], span),
                    list(
                        vec![
                            sym("clojure.core/assoc", span),
                            ret.clone(),
                            index.clone(),
                            rest[0].clone(),
                        ],
                        span,
                    ),
                )
            } else {
                (rest[0].clone(), rest[1].clone())
            };
            let test = list(
                vec![
                    sym("clojure.core/<", span),
                    index.clone(),
                    list(vec![sym("clojure.core/alength", span), held.clone()], span),
                ],
                span,
            );
            let step = list(
                vec![
                    sym("recur", span),
                    list(vec![sym("clojure.core/inc", span), index.clone()], span),
                    next,
                ],
                span,
            );
            list(
                vec![
                    sym("let", span),
                    vector(vec![held, array.clone()], span),
                    list(
                        vec![
                            sym("loop", span),
                            vector(
                                vec![
                                    index.clone(),
                                    Form::new(FormKind::Int(0), span),
                                    ret.clone(),
                                    start,
                                ],
                                span,
                            ),
                            list(vec![sym("if", span), test, step, ret.clone()], span),
                        ],
                        span,
                    ),
                ],
                span,
            )
        }
        Macro::Memfn => {
            need(1, "a method name: (memfn toUpperCase)")?;
            let Some(method) = args[0].as_symbol() else {
                return Err(Error::syntax(
                    args[0].span,
                    format!(
                        "memfn needs a method name, got {}: (memfn toUpperCase)",
                        args[0].describe()
                    ),
                ));
            };
            let target = a.gensym_form(span);
            let mut params = vec![target.clone()];
            params.extend(args[1..].iter().cloned());
            let mut call = vec![sym(&format!(".{method}"), span), target];
            call.extend(args[1..].iter().cloned());
            list(
                vec![sym("fn", span), vector(params, span), list(call, span)],
                span,
            )
        }
        Macro::Doto => {
            need(1, "a value: (doto x (f a) ...)")?;
            let x = a.gensym_form(span);
            let mut body = vec![
                sym("let", span),
                vector(vec![x.clone(), args[0].clone()], span),
            ];
            for step in &args[1..] {
                body.push(thread(x.clone(), step, false));
            }
            body.push(x);
            list(body, span)
        }
        Macro::Dotimes => {
            let (counter, n) = one_binding(name, args, span, "[i n]")?;
            let limit = a.gensym_form(span);
            // Clojure counts to (long n): a fractional count is truncated.
            let count = list(vec![sym("clojure.core/long", span), n.clone()], span);
            list(
                vec![
                    sym("let", span),
                    vector(vec![limit.clone(), count], span),
                    list(
                        vec![
                            sym("loop", span),
                            vector(
                                vec![counter.clone(), Form::new(FormKind::Int(0), span)],
                                span,
                            ),
                            list(
                                vec![
                                    sym("when", span),
                                    list(
                                        vec![sym("clojure.core/<", span), counter.clone(), limit],
                                        span,
                                    ),
                                    do_body(&args[1..], span),
                                    list(
                                        vec![
                                            sym("recur", span),
                                            list(
                                                vec![
                                                    sym("clojure.core/inc", span),
                                                    counter.clone(),
                                                ],
                                                span,
                                            ),
                                        ],
                                        span,
                                    ),
                                ],
                                span,
                            ),
                        ],
                        span,
                    ),
                ],
                span,
            )
        }
    })
}

/// `#(+ % %2)` as `(fn [%1 %2] (+ %1 %2))`; `%&` becomes a rest parameter.
pub(super) fn anon_fn_to_fn(form: &Form, body: &[Form], max_params: usize) -> Result<Form> {
    let span = form.span;
    let mut max = 0usize;
    let mut rest = false;
    let mut body: Vec<Form> = body.to_vec();
    for item in &mut body {
        rename_params(item, &mut max, &mut rest, max_params)?;
    }
    let mut params: Vec<Form> = (1..=max).map(|i| sym(&format!("%{i}"), span)).collect();
    if rest {
        params.push(sym("&", span));
        params.push(sym("%&", span));
    }
    Ok(list(
        vec![sym("fn", span), vector(params, span), list(body, span)],
        span,
    ))
}

fn rename_params(form: &mut Form, max: &mut usize, rest: &mut bool, limit: usize) -> Result<()> {
    match &mut form.kind {
        FormKind::Symbol(s) if s.starts_with('%') => {
            if s == "%" {
                *s = arcstr::literal!("%1");
                *max = (*max).max(1);
            } else if s == "%&" {
                *rest = true;
            } else if let Some(n) = s[1..]
                .parse::<usize>()
                .ok()
                .filter(|_| s[1..].bytes().all(|b| b.is_ascii_digit()))
            {
                if n == 0 || n > limit {
                    return Err(Error::syntax(
                        form.span,
                        format!("{s}: #(...) functions take parameters %1 to %{limit}"),
                    ));
                }
                *max = (*max).max(n);
            } else if s[1..].bytes().all(|b| b.is_ascii_digit()) {
                return Err(Error::syntax(
                    form.span,
                    format!("{s}: #(...) functions take parameters %1 to %{limit}"),
                ));
            }
            Ok(())
        }
        FormKind::AnonFn(_) => Err(Error::syntax(
            form.span,
            "#(...) cannot contain another #(...); write the inner one as (fn [x] ...)",
        )),
        FormKind::Quote(_) => Ok(()),
        FormKind::List(items)
        | FormKind::Vector(items)
        | FormKind::Map(items)
        | FormKind::Set(items) => {
            for item in items {
                rename_params(item, max, rest, limit)?;
            }
            Ok(())
        }
        FormKind::Deref(inner) | FormKind::Tagged(_, inner) => {
            rename_params(inner, max, rest, limit)
        }
        _ => Ok(()),
    }
}

/// A function body whose first form is a condition map (`{:pre [(pos? x)] :post [(> % x)]}`,
/// followed by at least one more form) as the body that checks them: each `:pre` test is
/// asserted before the rest runs, each `:post` test after it, with `%` bound to the result.
/// `None` for a body without conditions.
pub(super) fn with_conditions(body: &[Form]) -> Option<Vec<Form>> {
    let (first, rest) = body.split_first()?;
    let FormKind::Map(entries) = &first.kind else {
        return None;
    };
    if rest.is_empty() {
        return None;
    }
    let span = first.span;
    let tests = |key: &str| -> Vec<Form> {
        entries
            .chunks(2)
            .filter(|kv| matches!(&kv[0].kind, FormKind::Keyword(k) if k == key))
            .filter_map(|kv| kv.get(1))
            .flat_map(|v| match &v.kind {
                FormKind::Vector(items) => items.clone(),
                _ => vec![v.clone()],
            })
            .map(|test| list(vec![sym("assert", test.span), test], span))
            .collect()
    };
    let (pre, post) = (tests("pre"), tests("post"));
    if pre.is_empty() && post.is_empty() {
        return None;
    }
    let mut out = pre;
    if post.is_empty() {
        out.extend(rest.iter().cloned());
    } else {
        let result = sym("%", span);
        let mut checked = vec![
            sym("let", span),
            vector(vec![result.clone(), do_body(rest, span)], span),
        ];
        checked.extend(post);
        checked.push(result);
        out.push(list(checked, span));
    }
    Some(out)
}
