//! The numbers beyond the 64-bit fast types: big integers (`7N`), ratios (`1/3`) and big
//! decimals (`1.50M`), as Clojure has them.
//!
//! They sit behind one shared pointer so that [`Value`] stays two words and the integer and
//! float paths never see them. A big decimal is Java's `BigDecimal`: an unscaled big integer and
//! a scale, value `unscaled × 10^-scale`, so `1.50M` keeps its two decimals when printed.

use super::Value;
use num_bigint::BigInt;
use num_integer::Integer;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};
use std::cmp::Ordering;
use std::sync::Arc;

/// A big integer, a ratio or a big decimal (see [`BigKind`]); cheap to clone.
///
/// ```
/// use ptc_lisp::{BigNumber, pr_str};
/// let third = BigNumber::ratio(2.into(), 6.into()).expect("a non-zero denominator");
/// assert_eq!(pr_str(&third), "1/3");
/// assert_eq!(pr_str(&BigNumber::int(7)), "7N");
/// // Display is what `str` gives.
/// assert_eq!(BigNumber::int(7).to_string(), "7");
/// let price = BigNumber::decimal(150, 2);
/// assert_eq!((pr_str(&price), price.to_string()), ("1.50M".to_string(), "1.50".to_string()));
/// ```
#[derive(Clone)]
pub struct BigNumber(Arc<BigKind>);

/// What a [`BigNumber`] holds.
#[derive(Debug, Clone)]
pub enum BigKind {
    /// A big integer (Clojure's `BigInt`, printed `7N`): stays big whatever its size, as in
    /// Clojure, where `(+ 1N 1)` is `2N`.
    Int(BigInt),
    /// A ratio in lowest terms with a denominator above 1 (printed `1/3`).
    Ratio(BigRational),
    /// A big decimal (printed `1.50M`).
    Decimal(Decimal),
}

/// Java's `BigDecimal`: `unscaled × 10^-scale`.
#[derive(Debug, Clone)]
pub struct Decimal {
    unscaled: BigInt,
    scale: i64,
}

/// The kind of a number, in the order Clojure's arithmetic promotes to: an operation on two
/// numbers is done in the greater kind of the two.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum NumberKind {
    Long,
    BigInt,
    Ratio,
    Decimal,
    Double,
}

impl NumberKind {
    /// The kind of `v`, if it is a number.
    pub(crate) fn of(v: &Value) -> Option<NumberKind> {
        Some(match v {
            Value::Int(_) => NumberKind::Long,
            Value::Float(_) => NumberKind::Double,
            Value::Big(b) => match b.kind() {
                BigKind::Int(_) => NumberKind::BigInt,
                BigKind::Ratio(_) => NumberKind::Ratio,
                BigKind::Decimal(_) => NumberKind::Decimal,
            },
            _ => return None,
        })
    }

    /// Clojure's equality classes: `=` holds only between numbers of one class.
    pub(crate) fn class(self) -> u8 {
        match self {
            NumberKind::Long | NumberKind::BigInt => 0,
            NumberKind::Ratio => 1,
            NumberKind::Decimal => 2,
            NumberKind::Double => 3,
        }
    }
}

impl BigNumber {
    fn new(kind: BigKind) -> BigNumber {
        BigNumber(Arc::new(kind))
    }

    /// A big integer value (`7N`).
    pub fn int(i: impl Into<BigInt>) -> Value {
        Value::Big(BigNumber::new(BigKind::Int(i.into())))
    }

    /// An integer as the smallest value that holds it: a 64-bit integer when it fits, else a
    /// big integer.
    pub fn integer(i: BigInt) -> Value {
        match i.to_i64() {
            Some(small) => Value::Int(small),
            None => BigNumber::int(i),
        }
    }

    /// `numerator / denominator` in lowest terms: a ratio, or a big integer when the
    /// denominator divides the numerator (as Clojure's division of big integers gives).
    /// `None` for a zero denominator.
    pub fn ratio(numerator: BigInt, denominator: BigInt) -> Option<Value> {
        if denominator.is_zero() {
            return None;
        }
        Some(BigNumber::from_rational(BigRational::new(
            numerator,
            denominator,
        )))
    }

    /// A rational as a value: a big integer when whole, a ratio otherwise.
    pub(crate) fn from_rational(r: BigRational) -> Value {
        if r.denom().is_one() {
            BigNumber::int(r.to_integer())
        } else {
            Value::Big(BigNumber::new(BigKind::Ratio(r)))
        }
    }

    /// A big decimal `unscaled × 10^-scale` (`Decimal::new(150, 2)` is `1.50M`).
    pub fn decimal(unscaled: impl Into<BigInt>, scale: i64) -> Value {
        Value::Big(BigNumber::new(BigKind::Decimal(Decimal::new(
            unscaled.into(),
            scale,
        ))))
    }

    pub(crate) fn from_decimal(d: Decimal) -> Value {
        Value::Big(BigNumber::new(BigKind::Decimal(d)))
    }

    /// What the number is.
    pub fn kind(&self) -> &BigKind {
        &self.0
    }

    /// The nearest float (infinite when too large for one).
    pub fn to_f64(&self) -> f64 {
        match self.kind() {
            BigKind::Int(i) => i.to_f64().unwrap_or(f64::NAN),
            BigKind::Ratio(r) => ratio_to_f64(r),
            BigKind::Decimal(d) => d.to_f64(),
        }
    }

    /// The value as a 64-bit integer, for a big integer that fits.
    pub fn to_i64(&self) -> Option<i64> {
        match self.kind() {
            BigKind::Int(i) => i.to_i64(),
            _ => None,
        }
    }

    /// The value as an unsigned 64-bit integer, for a big integer that fits.
    pub fn to_u64(&self) -> Option<u64> {
        match self.kind() {
            BigKind::Int(i) => i.to_u64(),
            _ => None,
        }
    }

    /// The exact value as a rational.
    pub(crate) fn to_rational(&self) -> BigRational {
        match self.kind() {
            BigKind::Int(i) => BigRational::from_integer(i.clone()),
            BigKind::Ratio(r) => r.clone(),
            BigKind::Decimal(d) => d.to_rational(),
        }
    }

    /// Bytes the number's digits take, for the memory budget.
    pub(crate) fn heap_bytes(&self) -> usize {
        let bits = match self.kind() {
            BigKind::Int(i) => i.bits(),
            BigKind::Ratio(r) => r.numer().bits() + r.denom().bits(),
            BigKind::Decimal(d) => d.unscaled.bits(),
        };
        std::mem::size_of::<BigKind>() + (bits as usize).div_ceil(8)
    }

    /// The type name used in error messages.
    pub(crate) fn type_name(&self) -> &'static str {
        match self.kind() {
            BigKind::Int(_) => "big integer",
            BigKind::Ratio(_) => "ratio",
            BigKind::Decimal(_) => "big decimal",
        }
    }

    /// The text `str` gives: `7`, `1/3`, `1.50`.
    pub fn to_text(&self) -> String {
        match self.kind() {
            BigKind::Int(i) => i.to_string(),
            BigKind::Ratio(r) => format!("{}/{}", r.numer(), r.denom()),
            BigKind::Decimal(d) => d.to_string(),
        }
    }

    /// The text `pr-str` gives: `7N`, `1/3`, `1.50M`.
    pub fn to_literal(&self) -> String {
        match self.kind() {
            BigKind::Int(i) => format!("{i}N"),
            BigKind::Ratio(_) => self.to_text(),
            BigKind::Decimal(d) => format!("{d}M"),
        }
    }

    pub(crate) fn hash_key(&self) -> u64 {
        let mut h = rustc_hash::FxHasher::default();
        use std::hash::{Hash, Hasher};
        match self.kind() {
            // Equal to the same 64-bit integer, so hashed as it is.
            BigKind::Int(i) => match i.to_i64() {
                Some(small) => return super::hash_value(&Value::Int(small)),
                None => (13u8, i.to_signed_bytes_le()).hash(&mut h),
            },
            BigKind::Ratio(r) => (
                14u8,
                r.numer().to_signed_bytes_le(),
                r.denom().to_signed_bytes_le(),
            )
                .hash(&mut h),
            BigKind::Decimal(d) => {
                let d = d.stripped();
                (15u8, d.unscaled.to_signed_bytes_le(), d.scale).hash(&mut h)
            }
        }
        h.finish()
    }
}

impl PartialEq for BigNumber {
    /// Numerically, as Clojure's `=` on two numbers of the same class (`1.5M` and `1.50M` are
    /// equal).
    fn eq(&self, other: &BigNumber) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
            || numbers_equal(&Value::Big(self.clone()), &Value::Big(other.clone()))
    }
}

impl std::fmt::Debug for BigNumber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_literal())
    }
}

/// Clojure's `=` between two numbers: same equality class and same value (`(= 1 1N)` is true,
/// `(= 1/2 0.5)` and `(= 1 1M)` are false).
pub(crate) fn numbers_equal(a: &Value, b: &Value) -> bool {
    match (NumberKind::of(a), NumberKind::of(b)) {
        (Some(x), Some(y)) if x.class() == y.class() => {
            super::compare_numbers(a, b) == Some(Ordering::Equal)
        }
        _ => false,
    }
}

/// Compare two numbers of which at least one is big: exactly, unless one is a float, which
/// compares as Clojure does, in floats.
pub(crate) fn compare_big(a: &Value, b: &Value) -> Option<Ordering> {
    let (x, y) = (NumberKind::of(a)?, NumberKind::of(b)?);
    if x == NumberKind::Double || y == NumberKind::Double {
        return to_f64(a).partial_cmp(&to_f64(b));
    }
    match (a, b) {
        (Value::Big(p), Value::Big(q)) => match (p.kind(), q.kind()) {
            (BigKind::Int(m), BigKind::Int(n)) => Some(m.cmp(n)),
            _ => Some(p.to_rational().cmp(&q.to_rational())),
        },
        (Value::Int(i), Value::Big(q)) => Some(compare_int(*i, q)),
        (Value::Big(p), Value::Int(i)) => Some(compare_int(*i, p).reverse()),
        _ => None,
    }
}

fn compare_int(i: i64, q: &BigNumber) -> Ordering {
    match q.kind() {
        BigKind::Int(n) => BigInt::from(i).cmp(n),
        _ => BigRational::from_integer(i.into()).cmp(&q.to_rational()),
    }
}

/// A ratio as a float the way Clojure's `Ratio.doubleValue` makes one: the quotient rounded to
/// 16 significant digits (half to even, Java's `MathContext.DECIMAL64`), then the float nearest
/// that decimal. So (double 2/3) is 0.6666666666666667 and (double 10/3) is 3.333333333333333.
fn ratio_to_f64(r: &BigRational) -> f64 {
    let negative = r.is_negative();
    let (n, d) = (r.numer().abs(), r.denom().abs());
    if n.is_zero() {
        return 0.0;
    }
    let digits = |x: &BigInt| x.to_string().len() as i64;
    // n/d * 10^k should have exactly 16 digits before the point.
    let mut k = 16 - (digits(&n) - digits(&d));
    let (low, high) = (ten_pow(15), ten_pow(16));
    let (q, r, divisor) = loop {
        let (num, den) = if k >= 0 {
            (&n * ten_pow(k as u64), d.clone())
        } else {
            (n.clone(), &d * ten_pow((-k) as u64))
        };
        let (q, r) = num.div_rem(&den);
        if q >= high {
            k -= 1;
        } else if q < low {
            k += 1;
        } else {
            break (q, r, den);
        }
    };
    let twice = &r * BigInt::from(2);
    let q = match twice.cmp(&divisor) {
        Ordering::Greater => q + 1,
        Ordering::Equal if q.is_odd() => q + 1,
        _ => q,
    };
    let text = format!("{}{q}e{}", if negative { "-" } else { "" }, -k);
    text.parse().unwrap_or(f64::NAN)
}

/// The nearest float of any number (NaN for a value that is not one).
pub(crate) fn to_f64(v: &Value) -> f64 {
    match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        Value::Big(b) => b.to_f64(),
        _ => f64::NAN,
    }
}

/// The exact value of an integer, ratio or decimal as a rational.
pub(crate) fn to_rational(v: &Value) -> Option<BigRational> {
    match v {
        Value::Int(i) => Some(BigRational::from_integer((*i).into())),
        Value::Big(b) => Some(b.to_rational()),
        _ => None,
    }
}

/// The integer of a 64-bit or big integer.
pub(crate) fn to_bigint(v: &Value) -> Option<BigInt> {
    match v {
        Value::Int(i) => Some((*i).into()),
        Value::Big(b) => match b.kind() {
            BigKind::Int(i) => Some(i.clone()),
            _ => None,
        },
        _ => None,
    }
}

fn ten_pow(n: u64) -> BigInt {
    num_traits::pow(BigInt::from(10), n as usize)
}

impl Decimal {
    /// `unscaled × 10^-scale`.
    pub fn new(unscaled: BigInt, scale: i64) -> Decimal {
        Decimal { unscaled, scale }
    }

    /// The digits without the decimal point, with the sign.
    pub fn unscaled(&self) -> &BigInt {
        &self.unscaled
    }

    /// How many digits stand after the decimal point (negative: zeros before it).
    pub fn scale(&self) -> i64 {
        self.scale
    }

    /// Read Java's decimal syntax: `1.50`, `-2`, `1e3`, `.5` (no sign handling of `M`).
    pub fn parse(text: &str) -> Option<Decimal> {
        let (mantissa, exponent) = match text.split_once(['e', 'E']) {
            Some((m, e)) => (m, e.strip_prefix('+').unwrap_or(e).parse::<i64>().ok()?),
            None => (text, 0),
        };
        let (negative, mantissa) = match mantissa.as_bytes().first() {
            Some(b'-') => (true, &mantissa[1..]),
            Some(b'+') => (false, &mantissa[1..]),
            _ => (false, mantissa),
        };
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if (int.is_empty() && frac.is_empty()) || !digits(int) || !digits(frac) {
            return None;
        }
        let mut unscaled: BigInt = format!("{int}{frac}").parse().ok()?;
        if negative {
            unscaled = -unscaled;
        }
        let scale = (frac.len() as i64).checked_sub(exponent)?;
        Some(Decimal { unscaled, scale })
    }

    pub(crate) fn of_int(i: BigInt) -> Decimal {
        Decimal {
            unscaled: i,
            scale: 0,
        }
    }

    pub(crate) fn to_rational(&self) -> BigRational {
        if self.scale >= 0 {
            BigRational::new(self.unscaled.clone(), ten_pow(self.scale as u64))
        } else {
            BigRational::from_integer(&self.unscaled * ten_pow(self.scale.unsigned_abs()))
        }
    }

    fn to_f64(&self) -> f64 {
        // Through the text, which Rust's float parser rounds correctly.
        self.to_string().parse().unwrap_or(f64::NAN)
    }

    /// The same value with `scale` (at least the current one): more trailing zeros.
    fn rescaled(&self, scale: i64) -> Decimal {
        let by = (scale - self.scale).max(0) as u64;
        Decimal {
            unscaled: &self.unscaled * ten_pow(by),
            scale: self.scale + by as i64,
        }
    }

    /// The same value without trailing zeros in the unscaled digits.
    fn stripped(&self) -> Decimal {
        if self.unscaled.is_zero() {
            return Decimal {
                unscaled: BigInt::zero(),
                scale: 0,
            };
        }
        let mut d = self.clone();
        let ten = BigInt::from(10);
        loop {
            let (q, r) = d.unscaled.div_rem(&ten);
            if !r.is_zero() {
                return d;
            }
            d.unscaled = q;
            d.scale -= 1;
        }
    }

    pub(crate) fn add(&self, other: &Decimal) -> Decimal {
        let scale = self.scale.max(other.scale);
        Decimal {
            unscaled: self.rescaled(scale).unscaled + other.rescaled(scale).unscaled,
            scale,
        }
    }

    pub(crate) fn neg(&self) -> Decimal {
        Decimal {
            unscaled: -&self.unscaled,
            scale: self.scale,
        }
    }

    pub(crate) fn mul(&self, other: &Decimal) -> Decimal {
        Decimal {
            unscaled: &self.unscaled * &other.unscaled,
            scale: self.scale + other.scale,
        }
    }

    /// Java's `divideToIntegralValue`: the quotient rounded toward zero, at the preferred scale
    /// `self.scale - other.scale` when that scale can hold it (trailing zeros are dropped down
    /// to it, or added up to it). `other` must not be zero.
    pub(crate) fn divide_to_integral(&self, other: &Decimal) -> Decimal {
        use num_integer::Integer;
        let preferred = self.scale - other.scale;
        // self / other = (a * 10^-s) / (b * 10^-t); truncated as a rational.
        let exact = self.to_rational() / other.to_rational();
        let mut q = Decimal::new(exact.trunc().to_integer(), 0);
        // Drop trailing zeros while the scale is above the preferred one (a zero drops all
        // the way), then pad up to it.
        while q.scale > preferred {
            let (div, rem) = q.unscaled.div_rem(&BigInt::from(10));
            if !rem.is_zero() {
                break;
            }
            q = Decimal::new(div, q.scale - 1);
        }
        if q.scale < preferred {
            q = q.rescaled(preferred);
        }
        q
    }

    pub(crate) fn is_zero(&self) -> bool {
        self.unscaled.is_zero()
    }

    /// The exact decimal of a rational as Java's `BigDecimal.divide` gives it: the smallest
    /// scale not below `preferred_scale` that holds the value exactly, or `None` when the
    /// decimal expansion does not end (a denominator with a prime factor other than 2 and 5).
    pub(crate) fn of_rational(r: &BigRational, preferred_scale: i64) -> Option<Decimal> {
        let mut q = r.denom().clone();
        let (two, five) = (BigInt::from(2), BigInt::from(5));
        let (mut twos, mut fives) = (0u64, 0u64);
        while q.is_even() {
            q /= &two;
            twos += 1;
        }
        while (&q % &five).is_zero() {
            q /= &five;
            fives += 1;
        }
        if !q.is_one() {
            return None;
        }
        let k = twos.max(fives);
        let unscaled = r.numer() * (ten_pow(k) / r.denom());
        let mut d = Decimal {
            unscaled,
            scale: k as i64,
        };
        let ten = BigInt::from(10);
        while d.scale > preferred_scale {
            let (q, rem) = d.unscaled.div_rem(&ten);
            if !rem.is_zero() {
                break;
            }
            d.unscaled = q;
            d.scale -= 1;
        }
        Some(d.rescaled(preferred_scale))
    }

    /// `self / other` exactly, as Java's `BigDecimal.divide(BigDecimal)`; `None` when the
    /// expansion does not end. The divisor must not be zero.
    pub(crate) fn div(&self, other: &Decimal) -> Option<Decimal> {
        let preferred = self.scale - other.scale;
        if self.is_zero() {
            return Some(Decimal {
                unscaled: BigInt::zero(),
                scale: preferred,
            });
        }
        Decimal::of_rational(&(self.to_rational() / other.to_rational()), preferred)
    }

    pub(crate) fn abs(&self) -> Decimal {
        Decimal {
            unscaled: self.unscaled.abs(),
            scale: self.scale,
        }
    }
}

impl std::fmt::Display for Decimal {
    /// Java's `BigDecimal.toString`: plain digits unless the scale is negative or the number
    /// is below 10^-6, then scientific (`1E+3`, `1.5E-7`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let digits = self.unscaled.magnitude().to_string();
        let sign = if self.unscaled.is_negative() { "-" } else { "" };
        let adjusted = -self.scale + (digits.len() as i64 - 1);
        if self.scale == 0 {
            return write!(f, "{sign}{digits}");
        }
        if self.scale > 0 && adjusted >= -6 {
            let scale = self.scale as usize;
            return if digits.len() > scale {
                let (int, frac) = digits.split_at(digits.len() - scale);
                write!(f, "{sign}{int}.{frac}")
            } else {
                write!(f, "{sign}0.{}{digits}", "0".repeat(scale - digits.len()))
            };
        }
        let (first, rest) = digits.split_at(1);
        let point = if rest.is_empty() { "" } else { "." };
        let exp_sign = if adjusted >= 0 { "+" } else { "" };
        write!(f, "{sign}{first}{point}{rest}E{exp_sign}{adjusted}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn decimals_print_as_java_does() {
        let cases = [
            ("1.50", "1.50"),
            ("1", "1"),
            ("-0.5", "-0.5"),
            ("1e3", "1E+3"),
            ("1.0E10", "1.0E+10"),
            ("0.0000001", "1E-7"),
            ("0.000001", "0.000001"),
            ("123.456e-2", "1.23456"),
            (".5", "0.5"),
        ];
        for (text, shown) in cases {
            assert_eq!(Decimal::parse(text).unwrap().to_string(), shown, "{text}");
        }
    }

    #[test]
    fn decimal_division_is_exact_or_refused() {
        let d = |s: &str| Decimal::parse(s).unwrap();
        assert_eq!(d("1").div(&d("4")).unwrap().to_string(), "0.25");
        assert_eq!(d("1.00").div(&d("2")).unwrap().to_string(), "0.50");
        assert_eq!(d("100").div(&d("1")).unwrap().to_string(), "100");
        assert!(d("1").div(&d("3")).is_none());
    }

    #[test]
    fn equal_numbers_hash_alike() {
        let big_one = BigNumber::int(1);
        assert!(numbers_equal(&big_one, &Value::Int(1)));
        assert_eq!(
            super::super::hash_value(&big_one),
            super::super::hash_value(&Value::Int(1))
        );
        let (a, b) = (BigNumber::decimal(15, 1), BigNumber::decimal(150, 2));
        assert!(numbers_equal(&a, &b));
        assert_eq!(super::super::hash_value(&a), super::super::hash_value(&b));
        assert!(!numbers_equal(&BigNumber::decimal(1, 0), &Value::Int(1)));
    }
}
