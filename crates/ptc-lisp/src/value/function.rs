//! Function values as the value layer sees them: a handle with a name, an identity and the
//! nesting depth of the values the function holds.
//!
//! What calling a function does is known only to the layers above: they put their own
//! representation behind the handle ([`Function::new`]) and take it back out by its type
//! ([`Function::body`]). The one kind of function this layer makes itself is a function read back
//! from its printed form `#fn[name]` (a value stored in a serialized step), which can be shown
//! and compared but not called.

use arcstr::ArcStr;
use std::any::{Any, TypeId};
use std::sync::Arc;

/// A function value: a builtin, a closure, a function made by a builtin (`comp`, `partial`,
/// ...) or a host tool, or a function read back from its printed form.
///
/// Functions compare equal only to themselves, except that a function read back from its
/// printed form (`#fn[name]`) equals any function printed the same way.
#[derive(Clone)]
pub struct Function(Arc<FnCell>);

struct FnCell {
    /// How deeply values nest inside the values the function holds (see
    /// [`Value::depth`](super::Value::depth)).
    depth: u32,
    /// The type of `body`, compared where a function is called without a call through `body`'s
    /// table of methods.
    body_type: TypeId,
    /// Shared by the copies `with-meta` makes, which differ only in their metadata.
    body: Arc<dyn FnBody>,
    /// Metadata attached with `with-meta`.
    meta: Option<super::Map>,
}

/// What the value layer needs of a function's representation; the layers above implement it.
pub(crate) trait FnBody: Any + Send + Sync {
    /// A name for messages and printing: the builtin or `defn` name, or `fn`.
    fn name(&self) -> &str;
}

/// A function read back from its printed form `#fn[name]`.
struct ReadBack(ArcStr);

impl FnBody for ReadBack {
    fn name(&self) -> &str {
        &self.0
    }
}

impl Function {
    /// A function whose representation is `body`, holding values nested `depth` deep.
    pub(crate) fn new<T: FnBody>(body: T, depth: u32) -> Function {
        Function(Arc::new(FnCell {
            depth,
            body_type: TypeId::of::<T>(),
            body: Arc::new(body),
            meta: None,
        }))
    }

    /// The function a printed form stands for: `#fn[name]` as written, e.g. in a stored step.
    /// It prints as it was printed and equals any function printed the same way, but calling it
    /// is an error.
    ///
    /// ```
    /// use ptc_lisp::{Function, Value, pr_str};
    /// let f = Value::Fn(Function::read_back("#fn[adults]"));
    /// assert_eq!(pr_str(&f), "#fn[adults]");
    /// ```
    pub fn read_back(printed: &str) -> Function {
        Function::new(ReadBack(ArcStr::from(printed)), 0)
    }

    /// The representation of type `T` a layer above put behind the handle, if it is one.
    #[inline(always)]
    pub(crate) fn body<T: FnBody>(&self) -> Option<&T> {
        if self.0.body_type != TypeId::of::<T>() {
            return None;
        }
        let body: *const dyn FnBody = &*self.0.body;
        // SAFETY: `body_type` is the type `body` was made from (`Function::new` sets both and
        // nothing changes them), so `body` points at a `T`.
        Some(unsafe { &*body.cast::<T>() })
    }

    /// For a function read back from its printed form, that form (`#fn[name]`).
    pub fn read_back_text(&self) -> Option<&str> {
        self.body::<ReadBack>().map(|r| r.0.as_str())
    }

    /// A name for messages: the builtin or `defn` name, `fn` for an anonymous function, the
    /// printed form for a function read back.
    pub fn name(&self) -> &str {
        self.0.body.name()
    }

    /// Whether `self` and `other` are the same function (not merely equal).
    pub fn ptr_eq(&self, other: &Function) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// The address of the function, for ordering functions that are not equal.
    pub(crate) fn addr(&self) -> usize {
        Arc::as_ptr(&self.0) as usize
    }

    /// The name inside the printed form `#fn[NAME]`.
    pub(crate) fn shown_name(&self) -> &str {
        match self.read_back_text() {
            Some(text) => text
                .strip_prefix("#fn[")
                .and_then(|t| t.strip_suffix(']'))
                .unwrap_or(text),
            None => self.name(),
        }
    }

    /// Whether one of the two is a function read back from a stored step (`#fn[...]`) and both
    /// print the same: the read-back value stands for the function that was printed.
    pub fn same_as_read_back(&self, other: &Function) -> bool {
        (self.read_back_text().is_some() || other.read_back_text().is_some())
            && self.shown_name() == other.shown_name()
    }

    /// The metadata attached with `with-meta`, if any.
    pub fn meta(&self) -> Option<&super::Map> {
        self.0.meta.as_ref()
    }

    /// The same function carrying `meta`: a new function value (not `identical?` to this one)
    /// that calls the same code.
    pub(crate) fn with_meta(&self, meta: Option<super::Map>) -> Function {
        let depth = self.0.depth.max(meta.as_ref().map_or(0, |m| 1 + m.depth()));
        Function(Arc::new(FnCell {
            depth,
            body_type: self.0.body_type,
            body: self.0.body.clone(),
            meta,
        }))
    }

    /// How deeply values nest inside the values this function holds (see
    /// [`Value::depth`](super::Value::depth)).
    #[inline]
    pub(crate) fn depth(&self) -> u32 {
        self.0.depth
    }
}
