//! The builtin `with-precision` expands to (not in the registry: programs write the form).

use super::args::{Call, Callable};
use crate::context::Builtin;
use crate::eval::{Ctx, EvalResult};
use crate::value::{MathContext, Rounding, Value};

/// The most digits a `with-precision` may ask for: more would make every rounding compute
/// powers of ten of that size.
const MAX_DIGITS: u32 = 10_000;

/// `(with-precision digits :rounding mode body)`, as the analyzer rewrites it: `body` is a
/// function of no arguments, `mode` a keyword the analyzer checked.
pub(crate) static WITH_PRECISION: Builtin =
    super::builtin!("with-precision", with_precision, "", "", "" => "");

fn with_precision(
    ctx: &mut Ctx,
    call: Call,
    (digits, mode, body): (&Value, &Value, Callable),
) -> EvalResult {
    let digits = match digits {
        Value::Int(n) if (0..=i64::from(MAX_DIGITS)).contains(n) => *n as u32,
        other => {
            return Err(call
                .expected_argument(&format!("a precision of 0 to {MAX_DIGITS} digits"), other)
                .into());
        }
    };
    let rounding = match mode {
        Value::Keyword(k) => Rounding::named(k.as_str()),
        _ => None,
    }
    .ok_or_else(|| call.expected("a rounding mode", mode))?;
    // Precision 0 is Java's unlimited precision: exact results, as outside.
    let context = (digits > 0).then_some(MathContext { digits, rounding });
    crate::eval::precision::with_context(context, || ctx.apply(&body, &[]))
}
