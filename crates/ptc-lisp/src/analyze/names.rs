//! Name resolution: every symbol is resolved once, in this order: a local binding, a user
//! definition, a recent value (`*1 *2 *3 *e`, when the run has them), a builtin, then a
//! tool or a data key of that name; `tool/x`, `data/x`, `user/x`
//! and namespaced builtins (`str/join`, `Math/abs`) resolve directly. A name that resolves to
//! nothing is an error that says what is available or suggests the closest name.

use super::catalogue;
use super::{Analyzer, suggest, unsupported_form};
use crate::context::tools::ToolHandler;
use crate::error::{Error, ErrorKind, Result};
use crate::ir::Expr;
use crate::span::Span;
use crate::value::{Function, Value, intern};
use arcstr::ArcStr;

impl<'s, 'a> Analyzer<'s, 'a> {
    // -----------------------------------------------------------------------------------------
    // Names
    // -----------------------------------------------------------------------------------------

    pub(super) fn resolve(&mut self, name: &str, span: Span) -> Result<Expr> {
        let top = self.frames.len() - 1;
        if let Some(local) = self.find_local(top, name) {
            return Ok(local);
        }
        if let Some((ns, local_name)) = split_namespace(name) {
            if let Some(full) = self.dealias(name)
                && let Some((ns, local_name)) = split_namespace(&full)
            {
                return self.resolve_qualified(ns, local_name, &full, span);
            }
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
        if let Some(value) = self.scope.recent_values.and_then(|r| r.get(name)) {
            return Ok(Expr::Const(value.clone()));
        }
        if let Some(full) = self.dealias(name)
            && let Some((ns, local_name)) = split_namespace(&full)
        {
            return self.resolve_qualified(ns, local_name, &full, span);
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
        let tool = self.scope.tools.handler(name).cloned();
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
            "tool" => match self.scope.tools.handler(local) {
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
                if let Some((ns, local)) = name.split_once('/')
                    && let Some(suggestion) = suggest::namespaced(self.scope.library, ns, local)
                {
                    return Error::at(
                        ErrorKind::UndefinedSymbol,
                        span,
                        format!(
                            "undefined symbol {name}{}",
                            suggest::did_you_mean(&suggestion)
                        ),
                    );
                }
                let prefix = format!("{known_ns}/");
                let names = self.scope.library.names();
                let mut offered: Vec<&str> = names
                    .iter()
                    .filter_map(|n| n.strip_prefix(&prefix))
                    .collect();
                let local = name.split_once('/').map_or("", |(_, l)| l);
                if offered.is_empty()
                    && !known_ns.contains('.')
                    && let Some(full) = names.iter().find(|n| {
                        n.starts_with("clojure.")
                            && n.split_once('/').is_some_and(|(_, l)| l == local)
                    })
                {
                    let ns = full.split_once('/').map_or("", |(ns, _)| ns);
                    return Error::at(
                        ErrorKind::UndefinedSymbol,
                        span,
                        format!(
                            "undefined symbol {name}: {known_ns} is not an alias in this program \
                             (an alias given by require lasts until its program ends); write \
                             (require '[{ns} :as {known_ns}]) first, or {full}"
                        ),
                    );
                }
                if !offered.is_empty() {
                    offered.sort_unstable();
                    return Error::at(
                        ErrorKind::UndefinedSymbol,
                        span,
                        format!(
                            "undefined symbol {name}; {known_ns} offers {}",
                            offered.join(" ")
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
                         clojure.set (set/), clojure.walk, clojure.edn, tool/, data/ and user/ \
                         (give one an alias with (require '[clojure.walk :as w])), and the Java \
                         classes Math, Integer, Long, Double, Character, String and \
                         java.time.LocalDate"
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
                         (java.util.Date. millis) and exceptions such as (Exception. message) \
                         or (IllegalArgumentException. message); use maps, vectors and the \
                         PTC-Lisp functions"
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
        candidates.retain(|c| !self.defining.iter().any(|d| d == c));
        let suggestion = suggest::closest(name, &candidates)
            .map(suggest::did_you_mean)
            .unwrap_or_default();
        Error::at(
            ErrorKind::UndefinedSymbol,
            span,
            format!("undefined symbol {name}{suggestion}"),
        )
    }
}

/// A tool as a function value (`(map tool/fetch ids)`).
pub(crate) fn tool_function(name: &str, tool: ToolHandler) -> Value {
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
