//! Namespace aliases and referred names: `(require '[clojure.walk :as w :refer [postwalk]])`
//! and the `:require` clause of `ns` name the namespaces PTC-Lisp offers, which are all loaded
//! already. An alias or a referred name holds from its form to the end of the program, since
//! names are resolved while the program is analysed, in order.

use super::Analyzer;
use crate::error::{Error, ErrorKind, Result};
use crate::ir::Expr;
use crate::reader::{Form, FormKind};
use crate::span::Span;
use crate::value::{Value, intern};
use arcstr::ArcStr;

/// The namespaces a program may require; every one is loaded before the program starts.
const NAMESPACES: &[&str] = &[
    "clojure.core",
    "clojure.string",
    "clojure.set",
    "clojure.walk",
    "clojure.edn",
];

const REQUIRE_SHAPES: &str = "write (require '[clojure.string :as s]), (require '[clojure.set :refer [union]]) or \
     (require 'clojure.walk)";

impl<'s, 'a> Analyzer<'s, 'a> {
    /// `(require 'ns ...)`: each argument a quoted library spec. The value is nil.
    pub(super) fn analyze_require(&mut self, form: &Form, args: &[Form]) -> Result<Expr> {
        if args.is_empty() {
            return Err(Error::at(
                ErrorKind::Arity,
                form.span,
                format!("require needs a library spec: {REQUIRE_SHAPES}"),
            ));
        }
        for arg in args {
            match &arg.kind {
                FormKind::Quote(spec) => self.require_spec(spec)?,
                // Flags such as :reload change nothing: every namespace is loaded once.
                FormKind::Keyword(_) => {}
                _ => {
                    return Err(Error::syntax(
                        arg.span,
                        format!(
                            "require takes quoted library specs, got {}: {REQUIRE_SHAPES}",
                            arg.describe()
                        ),
                    ));
                }
            }
        }
        Ok(Expr::Const(Value::Nil))
    }

    /// `(ns name (:require spec ...) ...)`: the `:require` clauses give aliases; every other
    /// part changes nothing, since a program has one namespace, `user`.
    pub(super) fn analyze_ns(&mut self, args: &[Form]) -> Result<Expr> {
        for clause in args.iter().skip(1) {
            if let FormKind::List(items) = &clause.kind
                && let Some(FormKind::Keyword(k)) = items.first().map(|f| &f.kind)
                && k == "require"
            {
                for spec in &items[1..] {
                    self.require_spec(spec)?;
                }
            }
        }
        Ok(Expr::Const(Value::Nil))
    }

    /// One library spec: `clojure.set` or `[clojure.string :as s :refer [join]]`.
    fn require_spec(&mut self, spec: &Form) -> Result<()> {
        match &spec.kind {
            FormKind::Symbol(ns) => self.available_namespace(ns, spec.span).map(|_| ()),
            FormKind::Keyword(_) => Ok(()),
            FormKind::Vector(items) | FormKind::List(items) => {
                let Some((first, options)) = items.split_first() else {
                    return Err(Error::syntax(
                        spec.span,
                        format!("an empty library spec: {REQUIRE_SHAPES}"),
                    ));
                };
                let Some(ns) = first.as_symbol() else {
                    return Err(Error::syntax(
                        first.span,
                        format!(
                            "a library spec starts with the namespace's name, got {}: \
                             {REQUIRE_SHAPES}",
                            first.describe()
                        ),
                    ));
                };
                let ns = self.available_namespace(ns, first.span)?;
                if options.len() % 2 != 0 {
                    return Err(Error::syntax(
                        spec.span,
                        format!("a library spec's options come in pairs: {REQUIRE_SHAPES}"),
                    ));
                }
                for pair in options.chunks(2) {
                    self.require_option(ns, &pair[0], &pair[1])?;
                }
                Ok(())
            }
            _ => Err(Error::syntax(
                spec.span,
                format!(
                    "a library spec is a symbol or a vector, got {}: {REQUIRE_SHAPES}",
                    spec.describe()
                ),
            )),
        }
    }

    fn require_option(&mut self, ns: &'static str, key: &Form, value: &Form) -> Result<()> {
        let option = match &key.kind {
            FormKind::Keyword(k) => k.as_str(),
            _ => "",
        };
        match (option, &value.kind) {
            ("as" | "as-alias", FormKind::Symbol(alias)) if !alias.contains('/') => {
                self.aliases.insert(alias.clone(), ns);
                Ok(())
            }
            ("refer", FormKind::Keyword(all)) if all == "all" => Ok(()),
            ("refer", FormKind::Vector(names) | FormKind::List(names)) => {
                for name in names {
                    let Some(local) = name.as_symbol().filter(|n| !n.contains('/')) else {
                        return Err(Error::syntax(
                            name.span,
                            format!(":refer lists plain names, got {}", name.describe()),
                        ));
                    };
                    let full = format!("{ns}/{local}");
                    if self.scope.library.builtin(&full).is_none() {
                        return Err(Error::at(
                            ErrorKind::UndefinedSymbol,
                            name.span,
                            format!("{full} does not exist, so it cannot be referred"),
                        ));
                    }
                    self.refers.insert(intern(local), intern(&full));
                }
                Ok(())
            }
            _ => Err(Error::syntax(
                key.span,
                format!("library spec options are :as alias and :refer [names]: {REQUIRE_SHAPES}"),
            )),
        }
    }

    /// `ns` as one of [`NAMESPACES`], or an error naming them.
    fn available_namespace(&self, ns: &str, span: Span) -> Result<&'static str> {
        NAMESPACES
            .iter()
            .copied()
            .find(|n| *n == ns)
            .ok_or_else(|| {
                Error::at(
                    ErrorKind::Unsupported,
                    span,
                    format!(
                        "the namespace {ns} is not available: a program can use {}, which are \
                     loaded already",
                        NAMESPACES.join(", ")
                    ),
                )
            })
    }

    /// The full name `name` stands for through an alias (`w/postwalk` →
    /// `clojure.walk/postwalk`) or a referred name (`postwalk`), if it is written that way.
    /// Locals and user definitions are the caller's to rule out first.
    pub(super) fn dealias(&self, name: &str) -> Option<ArcStr> {
        if self.aliases.is_empty() && self.refers.is_empty() {
            return None;
        }
        match name.split_once('/') {
            Some((ns, local)) if !ns.is_empty() && !local.is_empty() => {
                let target = self.aliases.get(ns)?;
                Some(intern(&format!("{target}/{local}")))
            }
            Some(_) => None,
            None => self.refers.get(name).cloned(),
        }
    }
}
