//! `with-precision`: the precision and rounding in force for the thread evaluating a
//! `with-precision` body, which the arithmetic of big decimals reads (see `numbers`).
//!
//! Inside the body of `(with-precision 5 :rounding HALF_EVEN ...)` every `+ - * /` whose result
//! is a big decimal gives at most that many significant digits, rounded the given way (Java's
//! `MathContext`); a division whose exact decimal expansion does not end, an error outside,
//! gives the rounded quotient instead. The setting belongs to the thread evaluating the body:
//! work handed to `pmap` workers does not see it.

use crate::error::{Error, Result};
use crate::value::{Decimal, MathContext};
use std::cell::Cell;

thread_local! {
    static CONTEXT: Cell<Option<MathContext>> = const { Cell::new(None) };
}

/// The context of the `with-precision` being evaluated, if any.
pub(crate) fn current() -> Option<MathContext> {
    CONTEXT.with(Cell::get)
}

/// Restores the context in force before a `with-precision` body, however the body ends.
struct Restore(Option<MathContext>);

impl Drop for Restore {
    fn drop(&mut self) {
        CONTEXT.with(|c| c.set(self.0));
    }
}

/// Run `body` with `context` in force (`None`: exact arithmetic), then restore what was.
pub(crate) fn with_context<R>(context: Option<MathContext>, body: impl FnOnce() -> R) -> R {
    let _restore = Restore(CONTEXT.with(|c| c.replace(context)));
    body()
}

/// A big-decimal result rounded to the context's digits.
pub(crate) fn round(d: Decimal, mc: MathContext) -> Result<Decimal> {
    crate::value::precision::round(d, mc).map_err(Error::arithmetic)
}

/// `x / y` (y not zero) in the context.
pub(crate) fn divide(x: &Decimal, y: &Decimal, mc: MathContext) -> Result<Decimal> {
    crate::value::precision::divide(x, y, mc).map_err(Error::arithmetic)
}
