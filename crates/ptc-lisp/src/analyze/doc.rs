//! `(doc name)`: the reference of a function, form, tool or user definition, printed. A system
//! prompt can then name a function and leave its details to the model's asking.

use super::Analyzer;
use super::catalogue::{self, Listed};
use super::differences;
use super::suggest::{closest, did_you_mean};
use crate::context::Builtin;
use crate::error::{Error, Result};
use crate::ir::Expr;
use crate::reader::{Form, FormKind};
use crate::value::intern;

impl Analyzer<'_, '_> {
    /// `(doc name)`: a `println` of what `name` is; nil.
    pub(super) fn analyze_doc(&mut self, form: &Form, args: &[Form]) -> Result<Expr> {
        let span = form.span;
        let name = match args {
            [arg] => arg.as_symbol(),
            _ => None,
        }
        .ok_or_else(|| {
            Error::syntax(
                span,
                "doc takes one name, unquoted: (doc map), (doc str/join), (doc tool/search), (doc my-fn)",
            )
        })?
        .to_string();
        let printed = if let Some(local) = name.strip_prefix("user/") {
            self.user_doc(local, span)
        } else if self.scope.global_index.contains_key(name.as_str()) {
            self.user_doc(&name, span)
        } else {
            Form::new(FormKind::Str(self.reference_text(&name)), span)
        };
        let call = Form::new(
            FormKind::List(vec![
                Form::new(FormKind::Symbol(intern("println")), span),
                printed,
            ]),
            span,
        );
        self.analyze(&call, false)
    }

    /// What `(doc name)` prints for anything but a user definition.
    fn reference_text(&self, name: &str) -> String {
        if let Some(tool) = name.strip_prefix("tool/") {
            return match self.scope.tools.specs().find(|s| s.name == tool) {
                Some(spec) => {
                    let mut text = format!("(tool/{}", spec.name);
                    for param in &spec.params {
                        text.push(' ');
                        text.push_str(param);
                    }
                    text.push(')');
                    if let Some(signature) = spec.signature.as_deref().filter(|s| !s.is_empty()) {
                        text.push_str("\n  ");
                        text.push_str(signature);
                    }
                    if !spec.description.trim().is_empty() {
                        text.push_str("\n  ");
                        text.push_str(spec.description.trim());
                    }
                    text
                }
                None => format!("tool/{tool} does not exist"),
            };
        }
        if let Some(input) = name.strip_prefix("data/") {
            return match self.scope.data.get(input) {
                Some(_) => format!("data/{input}: an input of the task, read-only"),
                None => format!("data/{input} does not exist"),
            };
        }
        let core = name.strip_prefix("clojure.core/").unwrap_or(name);
        let dealiased = self.dealias(name);
        let builtin = self.scope.library.builtin(core).or_else(|| {
            dealiased
                .as_deref()
                .and_then(|n| self.scope.library.builtin(n))
        });
        if let Some(builtin) = builtin {
            return builtin_text(builtin);
        }
        match catalogue::lookup(core) {
            Some(Listed::Form(form)) => {
                let mut text = format!("{}\n  {}", form.signature, form.doc);
                if !form.example.is_empty() {
                    text.push_str(&format!(
                        "\n  Example: {} ;=> {}",
                        form.example, form.expected
                    ));
                }
                push_differences(&mut text, form.name);
                text
            }
            Some(Listed::Refused(_)) => catalogue::unsupported_message(core),
            None => {
                let names = self.scope.library.names();
                let mut text = format!("{name} is not a function, form, tool or definition");
                if let Some(near) = closest(name, &names) {
                    text.push_str(&did_you_mean(near));
                }
                text
            }
        }
    }

    /// `(println (str "user/NAME: " docstring))` of a user definition, read when the program runs.
    fn user_doc(&self, name: &str, span: crate::span::Span) -> Form {
        let symbol = |s: &str| Form::new(FormKind::Symbol(intern(s)), span);
        let list = |items: Vec<Form>| Form::new(FormKind::List(items), span);
        let string = |s: &str| Form::new(FormKind::Str(s.to_string()), span);
        // (str "user/NAME: " (or (:doc (meta (var NAME))) "no docstring"))
        list(vec![
            symbol("str"),
            string(&format!("user/{name}: ")),
            list(vec![
                symbol("or"),
                list(vec![
                    Form::new(FormKind::Keyword("doc".to_string()), span),
                    list(vec![
                        symbol("meta"),
                        list(vec![symbol("var"), symbol(name)]),
                    ]),
                ]),
                string("no docstring"),
            ]),
        ])
    }
}

/// A builtin's reference: how it is called, what it does, an example and its result, and how
/// it differs from Clojure's, if it does.
fn builtin_text(builtin: &Builtin) -> String {
    let mut text = format!("{}\n  {}", builtin.signature, builtin.doc);
    if !builtin.example.is_empty() {
        text.push_str(&format!(
            "\n  Example: {} ;=> {}",
            builtin.example, builtin.expected
        ));
    }
    push_differences(&mut text, builtin.name);
    text
}

fn push_differences(text: &mut String, name: &str) {
    for difference in differences::of(name) {
        text.push_str("\n  Unlike Clojure: ");
        text.push_str(difference.note);
        text.push('.');
    }
}
