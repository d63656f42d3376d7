//! Rounding of big decimals to a number of significant digits, as Java's `MathContext` does:
//! the arithmetic behind `with-precision`.

use super::Decimal;
use num_bigint::{BigInt, Sign};
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{Signed, Zero};
use std::cmp::Ordering;

/// Why a rounding failed, in words for the error message.
pub(crate) type RoundingError = &'static str;

/// How a result is rounded to its digits (Java's `RoundingMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rounding {
    Ceiling,
    Floor,
    HalfUp,
    HalfDown,
    HalfEven,
    Up,
    Down,
    Unnecessary,
}

impl Rounding {
    /// The mode named `name` (`FLOOR`, `RoundingMode/FLOOR`, `java.math.RoundingMode/FLOOR`).
    pub(crate) fn named(name: &str) -> Option<Rounding> {
        let bare = name.rsplit('/').next().unwrap_or(name);
        Some(match bare {
            "CEILING" => Rounding::Ceiling,
            "FLOOR" => Rounding::Floor,
            "HALF_UP" => Rounding::HalfUp,
            "HALF_DOWN" => Rounding::HalfDown,
            "HALF_EVEN" => Rounding::HalfEven,
            "UP" => Rounding::Up,
            "DOWN" => Rounding::Down,
            "UNNECESSARY" => Rounding::Unnecessary,
            _ => return None,
        })
    }

    /// The names a program may write, for error messages.
    pub(crate) const NAMES: &'static str =
        "CEILING, FLOOR, HALF_UP, HALF_DOWN, HALF_EVEN, UP, DOWN or UNNECESSARY";
}

/// Significant digits and rounding of big-decimal results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MathContext {
    pub digits: u32,
    pub rounding: Rounding,
}

/// The largest power of ten a rounding computes; beyond it the result is out of range.
const MAX_SHIFT: u64 = 100_000;

fn digit_count(n: &BigInt) -> u64 {
    if n.is_zero() {
        1
    } else {
        n.magnitude().to_string().len() as u64
    }
}

fn ten_pow(n: u64) -> BigInt {
    num_traits::pow(BigInt::from(10), n as usize)
}

/// `n / d` (d > 0) rounded to an integer by `mode`.
fn round_div(n: &BigInt, d: &BigInt, mode: Rounding) -> Result<BigInt, RoundingError> {
    let (q, r) = n.div_rem(d);
    if r.is_zero() {
        return Ok(q);
    }
    let away = if n.sign() == Sign::Minus {
        &q - 1
    } else {
        &q + 1
    };
    let half = (r.abs() * BigInt::from(2)).cmp(d);
    let up = match mode {
        Rounding::Down => false,
        Rounding::Up => true,
        Rounding::Ceiling => n.sign() != Sign::Minus,
        Rounding::Floor => n.sign() == Sign::Minus,
        Rounding::HalfUp => half != Ordering::Less,
        Rounding::HalfDown => half == Ordering::Greater,
        Rounding::HalfEven => half == Ordering::Greater || (half == Ordering::Equal && q.is_odd()),
        Rounding::Unnecessary => {
            return Err(
                "rounding necessary: the result has more digits than with-precision allows \
                 and the rounding mode is UNNECESSARY",
            );
        }
    };
    Ok(if up { away } else { q })
}

/// The rational `r` rounded to the context's significant digits.
fn round_rational(
    r: &BigRational,
    preferred_scale: i64,
    mc: MathContext,
) -> Result<Decimal, RoundingError> {
    if r.is_zero() {
        return Ok(Decimal::new(BigInt::zero(), preferred_scale));
    }
    let (n, d) = (r.numer().abs(), r.denom().clone());
    // The exponent of the leading digit: 10^e <= |r| < 10^(e+1).
    let mut e = digit_count(&n) as i64 - digit_count(&d) as i64;
    let below = if e >= 0 {
        n < &d * ten_pow(e as u64)
    } else {
        &n * ten_pow(e.unsigned_abs()) < d
    };
    if below {
        e -= 1;
    }
    let mut scale = i64::from(mc.digits) - 1 - e;
    if scale.unsigned_abs() > MAX_SHIFT {
        return Err("the result's exponent is too far from its digits to round");
    }
    let scaled = |scale: i64| -> Result<BigInt, RoundingError> {
        if scale >= 0 {
            round_div(&(r.numer() * ten_pow(scale as u64)), r.denom(), mc.rounding)
        } else {
            round_div(
                r.numer(),
                &(r.denom() * ten_pow(scale.unsigned_abs())),
                mc.rounding,
            )
        }
    };
    let mut unscaled = scaled(scale)?;
    // Rounding up may carry into one more digit (9.99 to 10.0): drop it.
    if digit_count(&unscaled) > u64::from(mc.digits) {
        scale -= 1;
        unscaled = scaled(scale)?;
    }
    Ok(Decimal::new(unscaled, scale))
}

/// A big-decimal result rounded to the context's digits (unchanged when it fits them).
pub(crate) fn round(d: Decimal, mc: MathContext) -> Result<Decimal, RoundingError> {
    if digit_count(d.unscaled()) <= u64::from(mc.digits) {
        return Ok(d);
    }
    round_rational(&d.to_rational(), d.scale(), mc)
}

/// `x / y` (y not zero) in the context: the exact quotient when it fits the digits, else the
/// rounded one.
pub(crate) fn divide(x: &Decimal, y: &Decimal, mc: MathContext) -> Result<Decimal, RoundingError> {
    let preferred = x.scale() - y.scale();
    let q = x.to_rational() / y.to_rational();
    if let Some(exact) = Decimal::of_rational(&q, preferred)
        && digit_count(exact.unscaled()) <= u64::from(mc.digits)
    {
        return Ok(exact);
    }
    round_rational(&q, preferred, mc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn dec(text: &str) -> Decimal {
        Decimal::parse(text).expect("a decimal")
    }

    #[test]
    fn quotients_are_rounded_to_the_digits() {
        let mc = |digits, rounding| MathContext { digits, rounding };
        let cases = [
            ("1", "3", mc(5, Rounding::HalfUp), "0.33333"),
            ("2", "3", mc(2, Rounding::Floor), "0.66"),
            ("2", "3", mc(2, Rounding::HalfUp), "0.67"),
            ("-2", "3", mc(2, Rounding::Floor), "-0.67"),
            ("1", "4", mc(5, Rounding::HalfUp), "0.25"),
            ("100", "3", mc(2, Rounding::HalfUp), "33"),
            ("1000", "3", mc(2, Rounding::HalfUp), "3.3E+2"),
            ("2", "3", mc(1, Rounding::HalfEven), "0.7"),
            ("1", "8", mc(2, Rounding::HalfEven), "0.12"),
            ("1", "8", mc(2, Rounding::HalfUp), "0.13"),
        ];
        for (x, y, mc, expected) in cases {
            let q = divide(&dec(x), &dec(y), mc).expect("no error");
            assert_eq!(q.to_string(), expected, "{x}/{y} {mc:?}");
        }
        assert!(divide(&dec("1"), &dec("3"), mc(2, Rounding::Unnecessary)).is_err());
        let rounded = round(dec("9.996"), mc(3, Rounding::HalfUp)).map(|d| d.to_string());
        assert_eq!(rounded.ok(), Some("10.0".to_owned()));
    }
}
