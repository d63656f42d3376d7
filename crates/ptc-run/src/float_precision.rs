//! `float_precision`: the floats of a run's returned value rounded to a number of decimals.

use ptc_lisp::Value;

/// `value` with every float in it (in collections too, map keys included) rounded to `digits`
/// decimals, half away from zero. Non-finite floats and floats too large to carry a fraction
/// stay as they are.
pub(crate) fn round_floats(value: &Value, digits: u32) -> Value {
    match value {
        Value::Float(f) => Value::Float(round(*f, digits)),
        Value::List(items) => Value::list(items.iter().map(|v| round_floats(v, digits))),
        Value::Vector(items) => Value::vector(items.iter().map(|v| round_floats(v, digits))),
        Value::Set(items) => Value::set(items.iter().map(|v| round_floats(v, digits))),
        Value::Map(map) => Value::map(
            map.iter()
                .map(|(k, v)| (round_floats(k, digits), round_floats(v, digits))),
        ),
        other => other.clone(),
    }
}

fn round(f: f64, digits: u32) -> f64 {
    let scale = 10f64.powi(i32::try_from(digits).unwrap_or(i32::MAX));
    let scaled = f * scale;
    if !scaled.is_finite() || scaled.abs() >= 2f64.powi(52) {
        return f;
    }
    scaled.round() / scale
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use ptc_lisp::{pr_str, read_value};

    fn rounded(text: &str, digits: u32) -> String {
        pr_str(&round_floats(&read_value(text).expect("a value"), digits))
    }

    #[test]
    fn floats_are_rounded_wherever_they_are() {
        assert_eq!(
            rounded("{:total 12.3456 :items [1.004 2 -0.125] :ok true}", 2),
            "{:total 12.35, :items [1.0 2 -0.13], :ok true}"
        );
        assert_eq!(rounded("0.6666", 0), "1.0");
        assert_eq!(rounded("1.0E300", 2), "1.0E300");
        assert_eq!(rounded("##NaN", 2), "##NaN");
    }
}
