//! `format`: the part of Java's `String.format` that programs use, with Java's results.
//!
//! A directive is `%[index$][flags][width][.precision]conversion`. Conversions: `s S` (any value,
//! as `str` shows it, nil as `null`), `d` (integers), `x X o` (integers, negative ones in two's
//! complement), `f e E` (floats only, as in Java: `(format "%.2f" 3)` is an error), `c` (chars),
//! `b B` (truthiness), `n` and `%`. Flags: `-` left-justify, `0` zero-pad, `+` always a sign,
//! space for a positive sign, `,` thousands separators, `(` negatives in parentheses. Floats round
//! half-up on their shortest decimal form, as Java does: `(format "%.2f" 1.005)` is "1.01" and
//! `(format "%.1f" 0.25)` is "0.3".

use super::args::Call;
use super::got;
use crate::error::{Error, ErrorKind, Result};
use crate::eval::{Ctx, EvalResult};
use crate::format::str_of;
use crate::value::Value;

#[derive(Default, Clone, Copy)]
struct Flags {
    left: bool,
    zero: bool,
    plus: bool,
    space: bool,
    group: bool,
    paren: bool,
}

struct Spec {
    /// `n$`: the argument to use (1-based); `<` (previous) is `Some(0)`.
    index: Option<usize>,
    flags: Flags,
    width: Option<usize>,
    precision: Option<usize>,
    conversion: char,
    /// The directive as written, for messages.
    text: String,
}

const DIRECTIVES: &str = "%s, %d, %f, %.2f, %x, %e, %g, %c, %b, %% or %n";

pub(crate) fn format(ctx: &mut Ctx, call: Call, (fmt, values): (&Value, &[Value])) -> EvalResult {
    let Value::Str(fmt) = fmt else {
        return Err(call.expected("a format string first", fmt).into());
    };
    // A directive that does not fit its argument is the caller's mistake, named after it; the
    // text outgrowing the memory budget is a limit.
    let out = render(fmt, values).map_err(|e| match e.kind {
        ErrorKind::Argument => call.error(e.kind, e.message),
        _ => e,
    })?;
    ctx.charge(out.len() + 16)?;
    Ok(Value::from(out))
}

/// Format `args` by `fmt`. An [`ErrorKind::Argument`] error says what is wrong with the format
/// or its arguments, without naming the function.
pub(crate) fn render(fmt: &str, args: &[Value]) -> Result<String> {
    let mut out = String::with_capacity(fmt.len() + 16);
    let mut chars = fmt.char_indices().peekable();
    let mut next_arg = 0usize;
    let mut previous: Option<usize> = None;
    while let Some((start, c)) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let spec = parse_spec(fmt, start, &mut chars)?;
        match spec.conversion {
            '%' => {
                pad(&mut out, "%".into(), &spec);
                continue;
            }
            'n' => {
                out.push('\n');
                continue;
            }
            _ => {}
        }
        let position = match spec.index {
            Some(0) => previous.ok_or_else(|| {
                Error::argument(format!(
                    "{} refers to the previous argument, but there is none",
                    spec.text
                ))
            })?,
            Some(n) => n - 1,
            None => {
                next_arg += 1;
                next_arg - 1
            }
        };
        let arg = args.get(position).ok_or_else(|| {
            Error::argument(format!(
                "not enough arguments: {} in {:?} has no argument ({} given)",
                spec.text,
                fmt,
                args.len()
            ))
        })?;
        previous = Some(position);
        let text = convert(&spec, arg)?;
        pad(&mut out, text, &spec);
        // Many wide fields add up: stop before the text outgrows the memory budget.
        super::check_text(out.len())?;
    }
    Ok(out)
}

fn parse_spec(
    fmt: &str,
    start: usize,
    chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>,
) -> Result<Spec> {
    let mut index = None;
    let mut flags = Flags::default();
    let mut width = None;
    let mut precision = None;
    let number = |chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>| {
        let mut n: Option<usize> = None;
        while let Some(&(_, d)) = chars.peek() {
            let Some(digit) = d.to_digit(10) else { break };
            n = Some(
                n.unwrap_or(0)
                    .saturating_mul(10)
                    .saturating_add(digit as usize),
            );
            chars.next();
        }
        n
    };
    if chars.peek().map(|&(_, c)| c) == Some('<') {
        chars.next();
        index = Some(0);
    }
    // Flags, then width; a leading number followed by `$` is an argument index instead.
    loop {
        match chars.peek().map(|&(_, c)| c) {
            Some('-') => flags.left = true,
            Some('0') => flags.zero = true,
            Some('+') => flags.plus = true,
            Some(' ') => flags.space = true,
            Some(',') => flags.group = true,
            Some('(') => flags.paren = true,
            Some('#') => {
                return Err(Error::argument(format!(
                    "the # flag is not supported (in {:?})",
                    fmt
                )));
            }
            Some('1'..='9') => {
                let n = number(chars);
                if chars.peek().map(|&(_, c)| c) == Some('$') && index.is_none() {
                    chars.next();
                    index = n;
                    continue;
                }
                width = n;
                break;
            }
            _ => break,
        }
        chars.next();
    }
    if chars.peek().map(|&(_, c)| c) == Some('.') {
        chars.next();
        precision = Some(number(chars).ok_or_else(|| {
            Error::argument(format!(
                "a precision needs digits after the dot, as in %.2f (in {fmt:?})"
            ))
        })?);
    }
    let Some((end, conversion)) = chars.next() else {
        return Err(Error::argument(format!(
            "{fmt:?} ends with an unfinished directive; write %% for a percent sign"
        )));
    };
    let text = fmt[start..end + conversion.len_utf8()].to_string();
    let spec = Spec {
        index,
        flags,
        width,
        precision,
        conversion,
        text,
    };
    check_spec(&spec)?;
    Ok(spec)
}

/// The widest field and the longest precision a directive may ask for.
const MAX_WIDTH: usize = 10_000;

fn check_spec(spec: &Spec) -> Result<()> {
    let f = spec.flags;
    if spec.width.unwrap_or(0) > MAX_WIDTH || spec.precision.unwrap_or(0) > MAX_WIDTH {
        return Err(Error::argument(format!(
            "{} asks for more than {MAX_WIDTH} characters",
            spec.text
        )));
    }
    let numeric = matches!(
        spec.conversion,
        'd' | 'x' | 'X' | 'o' | 'f' | 'e' | 'E' | 'g' | 'G'
    );
    if !matches!(
        spec.conversion,
        's' | 'S'
            | 'd'
            | 'x'
            | 'X'
            | 'o'
            | 'f'
            | 'e'
            | 'E'
            | 'g'
            | 'G'
            | 'c'
            | 'C'
            | 'b'
            | 'B'
            | '%'
            | 'n'
    ) {
        return Err(Error::argument(format!(
            "unknown directive {}; use {DIRECTIVES}",
            spec.text
        )));
    }
    if (f.left || f.zero) && spec.width.is_none() && spec.conversion != 'n' {
        return Err(Error::argument(format!(
            "{} needs a width for its - or 0 flag, as in %-8s or %05d",
            spec.text
        )));
    }
    if f.left && f.zero {
        return Err(Error::argument(format!(
            "{} cannot both left-justify (-) and zero-pad (0)",
            spec.text
        )));
    }
    if (f.zero || f.plus || f.space || f.paren) && !numeric
        || f.group && !matches!(spec.conversion, 'd' | 'f')
    {
        return Err(Error::argument(format!(
            "the flags of {} do not apply to %{}",
            spec.text, spec.conversion
        )));
    }
    if spec.precision.is_some() && matches!(spec.conversion, 'd' | 'x' | 'X' | 'o' | 'c' | 'C') {
        return Err(Error::argument(format!(
            "{} cannot have a precision; it is for %f, %e and %s",
            spec.text
        )));
    }
    Ok(())
}

/// Justify `text` in the directive's width (zero padding is done by the number formatting).
fn pad(out: &mut String, text: String, spec: &Spec) {
    let len = text.chars().count();
    let fill = spec.width.unwrap_or(0).saturating_sub(len);
    if spec.flags.left {
        out.push_str(&text);
        out.extend(std::iter::repeat_n(' ', fill));
    } else {
        out.extend(std::iter::repeat_n(' ', fill));
        out.push_str(&text);
    }
}

fn mismatch(spec: &Spec, arg: &Value, hint: &str) -> Error {
    Error::argument(format!("{} cannot format {}; {hint}", spec.text, got(arg)))
}

fn convert(spec: &Spec, arg: &Value) -> Result<String> {
    Ok(match spec.conversion {
        's' | 'S' => {
            let mut text = match arg {
                Value::Nil => "null".to_string(),
                other => str_of(other),
            };
            if let Some(p) = spec.precision {
                text = text.chars().take(p).collect();
            }
            if spec.conversion == 'S' {
                text = text.to_uppercase();
            }
            text
        }
        'b' | 'B' => {
            let mut text = arg.truthy().to_string();
            if let Some(p) = spec.precision {
                text.truncate(p);
            }
            if spec.conversion == 'B' {
                text = text.to_uppercase();
            }
            text
        }
        'c' | 'C' => match arg {
            Value::Char(c) if spec.conversion == 'C' => c.to_uppercase().collect(),
            Value::Char(c) => c.to_string(),
            Value::Nil => "null".to_string(),
            other => return Err(mismatch(spec, other, "%c takes a char such as \\a")),
        },
        'd' => match arg {
            Value::Int(i) => signed(spec, i.unsigned_abs().to_string(), *i < 0),
            Value::Nil => "null".to_string(),
            other => {
                return Err(mismatch(
                    spec,
                    other,
                    "%d takes an integer; use %.0f for a float or convert with (long x)",
                ));
            }
        },
        'x' | 'X' | 'o' => match arg {
            Value::Int(i) => {
                let bits = *i as u64;
                let digits = match spec.conversion {
                    'x' => format!("{bits:x}"),
                    'X' => format!("{bits:X}"),
                    _ => format!("{bits:o}"),
                };
                zero_pad(spec, String::new(), digits)
            }
            Value::Nil => "null".to_string(),
            other => {
                return Err(mismatch(
                    spec,
                    other,
                    "%x and %o take an integer; convert with (long x)",
                ));
            }
        },
        'f' | 'e' | 'E' | 'g' | 'G' => match arg {
            Value::Float(f) if !f.is_finite() => {
                if f.is_nan() {
                    "NaN".to_string()
                } else if *f > 0.0 {
                    if spec.flags.plus {
                        "+Infinity".to_string()
                    } else {
                        "Infinity".to_string()
                    }
                } else if spec.flags.paren {
                    "(Infinity)".to_string()
                } else {
                    "-Infinity".to_string()
                }
            }
            Value::Float(f) => {
                let precision = spec.precision.unwrap_or(6);
                // Java keeps the sign of -0.0 and of negatives that round to zero.
                let negative = f.is_sign_negative();
                let digits = match spec.conversion {
                    'f' => fixed(f.abs(), precision),
                    'e' => scientific(f.abs(), precision),
                    'E' => scientific(f.abs(), precision).to_uppercase(),
                    'g' => general(f.abs(), precision),
                    _ => general(f.abs(), precision).to_uppercase(),
                };
                signed(spec, digits, negative)
            }
            // Java formats a BigDecimal exactly, rounding half up: (format "%.1f" 0.25M) is
            // "0.3".
            Value::Big(b) if matches!(b.kind(), crate::value::BigKind::Decimal(_)) => {
                let crate::value::BigKind::Decimal(d) = b.kind() else {
                    unreachable!("matched a decimal")
                };
                let text = d.unscaled().magnitude().to_string();
                let digits: Vec<u8> = text.bytes().map(|c| c - b'0').collect();
                let point = digits.len() as i64 - d.scale();
                let precision = spec.precision.unwrap_or(6);
                let negative = d.unscaled().sign() == num_bigint::Sign::Minus;
                let text = match spec.conversion {
                    'f' => fixed_digits(digits, point, precision),
                    'e' => scientific_digits(digits, point, precision),
                    'E' => scientific_digits(digits, point, precision).to_uppercase(),
                    'g' => general_decimal(d, digits, point, precision),
                    _ => general_decimal(d, digits, point, precision).to_uppercase(),
                };
                signed(spec, text, negative)
            }
            // Java prints null, cut to the precision as for %s: (format "%.3f" nil) is "nul".
            Value::Nil => "null".chars().take(spec.precision.unwrap_or(4)).collect(),
            other => {
                return Err(mismatch(
                    spec,
                    other,
                    "%f, %e and %g take a float; convert with (double x) or use %d for integers",
                ));
            }
        },
        other => unreachable!("checked conversion {other}"),
    })
}

/// Apply sign flags, grouping and zero padding to the digits of a number's magnitude.
fn signed(spec: &Spec, magnitude: String, negative: bool) -> String {
    let magnitude = if spec.flags.group {
        group_thousands(&magnitude)
    } else {
        magnitude
    };
    let (prefix, suffix) = if negative && spec.flags.paren {
        ("(", ")")
    } else if negative {
        ("-", "")
    } else if spec.flags.plus {
        ("+", "")
    } else if spec.flags.space {
        (" ", "")
    } else {
        ("", "")
    };
    zero_pad(spec, prefix.to_string(), magnitude + suffix)
}

/// `prefix` + `digits`, with zeros between them up to the width when the 0 flag is set.
fn zero_pad(spec: &Spec, prefix: String, digits: String) -> String {
    let mut text = prefix;
    if spec.flags.zero
        && let Some(width) = spec.width
    {
        let len = text.chars().count() + digits.chars().count();
        text.extend(std::iter::repeat_n('0', width.saturating_sub(len)));
    }
    text.push_str(&digits);
    text
}

/// `1234567.5` → `1,234,567.5`.
fn group_thousands(number: &str) -> String {
    let (int, rest) = match number.find('.') {
        Some(i) => number.split_at(i),
        None => (number, ""),
    };
    let mut out = String::with_capacity(number.len() + int.len() / 3);
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out.push_str(rest);
    out
}

/// The shortest decimal digits that read back as `f` (finite, non-negative) and the position of
/// the decimal point relative to them: `f = 0.DIGITS × 10^point`.
fn shortest_digits(f: f64) -> (Vec<u8>, i64) {
    if f == 0.0 {
        return (vec![0], 1);
    }
    // Java writes the smallest float with two digits, as Double.MIN_VALUE reads: 4.9E-324.
    if f.abs() == f64::from_bits(1) {
        return (vec![4, 9], -323);
    }
    let text = format!("{f:e}");
    let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
    let digits: Vec<u8> = mantissa
        .bytes()
        .filter(u8::is_ascii_digit)
        .map(|b| b - b'0')
        .collect();
    (digits, exp.parse::<i64>().unwrap_or(0) + 1)
}

/// Keep the first `keep` digits, rounding half-up; returns the digits and the new point.
fn round_half_up(mut digits: Vec<u8>, mut point: i64, keep: i64) -> (Vec<u8>, i64) {
    if keep < 0 {
        return (Vec::new(), point);
    }
    let keep = keep as usize;
    if digits.len() <= keep {
        return (digits, point);
    }
    let round_up = digits[keep] >= 5;
    digits.truncate(keep);
    if round_up {
        let mut i = keep;
        loop {
            if i == 0 {
                digits.insert(0, 1);
                point += 1;
                break;
            }
            i -= 1;
            if digits[i] == 9 {
                digits[i] = 0;
            } else {
                digits[i] += 1;
                break;
            }
        }
    }
    (digits, point)
}

/// `%.Nf` of a finite, non-negative float.
fn fixed(f: f64, precision: usize) -> String {
    let (digits, point) = shortest_digits(f);
    fixed_digits(digits, point, precision)
}

/// `%.Nf` of the number `0.d1d2d3... × 10^point`, rounded half up.
fn fixed_digits(digits: Vec<u8>, point: i64, precision: usize) -> String {
    let (digits, point) = round_half_up(digits, point, point + precision as i64);
    let digit = |i: i64| -> char {
        if i >= 0 && (i as usize) < digits.len() {
            (b'0' + digits[i as usize]) as char
        } else {
            '0'
        }
    };
    let mut out = String::new();
    if point <= 0 {
        out.push('0');
    } else {
        for i in 0..point {
            out.push(digit(i));
        }
    }
    if precision > 0 {
        out.push('.');
        for i in 0..precision as i64 {
            out.push(digit(point + i));
        }
    }
    out
}

/// `%.Ne` of a finite, non-negative float: `1.234560e+01`.
fn scientific(f: f64, precision: usize) -> String {
    let (digits, point) = shortest_digits(f);
    scientific_digits(digits, point, precision)
}

/// `%.Ne` of the number `0.d1d2d3... × 10^point`, rounded half up; the exponent is the point's
/// (a zero float has point 1, so e+00; Java gives the zero decimal 0.0M e-01).
fn scientific_digits(digits: Vec<u8>, point: i64, precision: usize) -> String {
    let (digits, point) = round_half_up(digits, point, precision as i64 + 1);
    let exponent = point - 1;
    let digit = |i: usize| digits.get(i).map_or('0', |d| (b'0' + d) as char);
    let mut out = String::new();
    out.push(digit(0));
    if precision > 0 {
        out.push('.');
        for i in 1..=precision {
            out.push(digit(i));
        }
    }
    out.push('e');
    out.push(if exponent < 0 { '-' } else { '+' });
    out.push_str(&format!("{:02}", exponent.unsigned_abs()));
    out
}

/// `%.Ng` of a finite, non-negative float, as Java writes it: N significant digits (6 by
/// default), fixed notation when the rounded value is at least 10^-4 and below 10^N, else
/// scientific; trailing zeros are kept.
fn general(f: f64, precision: usize) -> String {
    let significant = precision.max(1);
    if f == 0.0 {
        return fixed(f, significant - 1);
    }
    let (digits, point) = shortest_digits(f);
    let (_, point) = round_half_up(digits, point, significant as i64);
    if (-3..=significant as i64).contains(&point) {
        fixed(f, (significant as i64 - point) as usize)
    } else {
        scientific(f, significant - 1)
    }
}

/// `%.Ng` of a big decimal's magnitude as Java writes it: fixed notation when the value is
/// exactly zero (of scale 0) or at least 10^-4 and below 10^N, with the digits after the point
/// that N significant digits leave; scientific otherwise (so 0.0M is `0.00000e-01`).
fn general_decimal(
    d: &crate::value::Decimal,
    digits: Vec<u8>,
    point: i64,
    precision: usize,
) -> String {
    use num_traits::Zero;
    let significant = precision.max(1) as i64;
    let zero = d.unscaled().is_zero();
    // The exponent of the leading digit, from the unscaled digits as written.
    let exponent = point - 1;
    let fixed_range = !zero && exponent >= -4 && exponent < significant;
    if (zero && d.scale() == 0) || fixed_range {
        fixed_digits(digits, point, (significant - exponent - 1).max(0) as usize)
    } else {
        scientific_digits(digits, point, significant as usize - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn fmt(f: &str, args: &[Value]) -> String {
        render(f, args).unwrap_or_else(|e| format!("error: {}", e.message))
    }

    // Expected values are what Clojure 1.11 (Java 17, US locale) gives.
    #[test]
    fn floats_round_half_up_like_java() {
        let cases: &[(&str, f64, &str)] = &[
            ("%g", 1.5, "1.50000"),
            ("%g", 123456789.0, "1.23457e+08"),
            ("%.3g", 0.000123456, "0.000123"),
            ("%.3g", 1234.5, "1.23e+03"),
            ("%g", 0.0, "0.00000"),
            ("%G", 1e-10, "1.00000E-10"),
            ("%.2g", 99.9, "1.0e+02"),
            ("%.2f", 1.23456, "1.23"),
            ("%.2f", 1.005, "1.01"),
            ("%.1f", 0.25, "0.3"),
            ("%.0f", 2.5, "3"),
            ("%.0f", 0.5, "1"),
            ("%.2f", 0.125, "0.13"),
            ("%.1f", 0.05, "0.1"),
            ("%.3f", 2.0E-3, "0.002"),
            ("%.2f", 1e20, "100000000000000000000.00"),
            ("%.2f", -0.5, "-0.50"),
            ("%f", 1.23456, "1.234560"),
            ("%.3f", 1234567.891, "1234567.891"),
            ("%.2f", 0.004, "0.00"),
            ("%.2f", 0.005, "0.01"),
            ("%.2f", 9.999, "10.00"),
            ("%e", 12345.678, "1.234568e+04"),
            ("%10.3e|", 0.000123, " 1.230e-04|"),
            ("%.2e", 0.0, "0.00e+00"),
            ("%E", 0.5, "5.000000E-01"),
            ("%05.1f", -2.345, "-02.3"),
            ("%,.2f", 1234567.891, "1,234,567.89"),
            ("%8.2f|", 1.23456, "    1.23|"),
            ("%.2f", f64::NEG_INFINITY, "-Infinity"),
            ("%f", f64::NAN, "NaN"),
        ];
        for (f, x, expected) in cases {
            assert_eq!(fmt(f, &[Value::Float(*x)]), *expected, "{f} of {x}");
        }
    }

    #[test]
    fn integers_strings_and_flags() {
        let cases: &[(&str, Value, &str)] = &[
            ("%d", Value::Int(-7), "-7"),
            ("%,d", Value::Int(1234567), "1,234,567"),
            ("%,d", Value::Int(-1234), "-1,234"),
            ("%05d", Value::Int(-42), "-0042"),
            ("%03d", Value::Int(7), "007"),
            ("[%5d]", Value::Int(42), "[   42]"),
            ("%-5d|", Value::Int(3), "3    |"),
            ("%+d", Value::Int(5), "+5"),
            ("% d", Value::Int(5), " 5"),
            ("%(d", Value::Int(-5), "(5)"),
            ("%x", Value::Int(255), "ff"),
            ("%X", Value::Int(255), "FF"),
            ("%x", Value::Int(-1), "ffffffffffffffff"),
            ("%o", Value::Int(8), "10"),
            ("%s", Value::Nil, "null"),
            ("%10s|", Value::Nil, "      null|"),
            ("[%-5s]", Value::string("ab"), "[ab   ]"),
            ("%.3s", Value::string("abcdef"), "abc"),
            ("%S", Value::string("abc"), "ABC"),
            ("%s", Value::keyword("status"), ":status"),
            (
                "%s",
                Value::vector([1.into(), Value::string("a")]),
                "[1 \"a\"]",
            ),
            ("%s", Value::Float(1e10), "1.0E10"),
            ("%s", Value::Char('a'), "a"),
            ("%b", Value::Nil, "false"),
            ("%b", Value::Int(0), "true"),
            ("%c", Value::Char('x'), "x"),
            ("%d%%", Value::Int(50), "50%"),
        ];
        for (f, x, expected) in cases {
            assert_eq!(fmt(f, std::slice::from_ref(x)), *expected, "{f} of {x:?}");
        }
        assert_eq!(
            fmt("%2$s %1$s %<s", &[Value::string("a"), Value::string("b")]),
            "b a a"
        );
        assert_eq!(fmt("a%nb", &[]), "a\nb");
    }

    #[test]
    fn java_refusals_are_errors() {
        assert_eq!(
            fmt("%d", &[Value::Float(1.5)]),
            "error: %d cannot format float 1.5; %d takes an integer; use %.0f for a \
             float or convert with (long x)"
        );
        assert_eq!(
            fmt("%.2f", &[Value::Int(3)]),
            "error: %.2f cannot format integer 3; %f, %e and %g take a float; convert with \
             (double x) or use %d for integers"
        );
        assert_eq!(
            fmt("%s and %s", &[Value::string("one")]),
            "error: not enough arguments: %s in \"%s and %s\" has no argument (1 given)"
        );
        assert_eq!(
            fmt("%q", &[Value::Int(1)]),
            "error: unknown directive %q; use %s, %d, %f, %.2f, %x, %e, %g, %c, %b, %% or %n"
        );
        assert_eq!(
            fmt("100%", &[]),
            "error: \"100%\" ends with an unfinished directive; write %% for a percent \
             sign"
        );
        assert!(fmt("%-d", &[Value::Int(1)]).starts_with("error:"));
        assert_eq!(
            fmt("%99999999999999999999d", &[Value::Int(1)]),
            "error: %99999999999999999999d asks for more than 10000 characters"
        );
        assert!(fmt("%.100000f", &[Value::Float(1.0)]).starts_with("error:"));
        assert!(fmt("%c", &[Value::Int(65)]).starts_with("error:"));
    }
}
