//! Dates: the `java.time.LocalDate` and `java.util.Date` calls data-processing programs make.
//!
//! `(java.time.LocalDate/parse "2024-03-15")` makes a date (`LocalDate/parse` works too);
//! `.plusDays`, `.isBefore`, `compare`, `=` and `sort` work on dates as in Java, and `str` gives
//! `2024-03-15` back. A `java.util.Date` is an instant in milliseconds since 1970, made with
//! `(java.util.Date. millis)` or the `#inst "2024-03-15T10:30:00Z"` literal; it is shown in UTC.
//!
//! Nothing reads the clock: `(java.util.Date.)` and `LocalDate/now` are errors, because a
//! program must give the same result every time it runs. Take today's date from the input data or
//! a tool. Formatting and parsing with patterns (`DateTimeFormatter`) is not available either.

use super::{Builtin, builtin, expect_int, got};
use crate::error::{Error, ErrorKind, Result};
use crate::eval::{Ctx, EvalResult};
use crate::value::date::{WEEKDAYS, parse_iso_day};
use crate::value::{Date, DateKind, Value};

pub(crate) const BUILTINS: &[Builtin] = &[
    builtin!("LocalDate/parse", [1..=2], parse, "(java.time.LocalDate/parse \"yyyy-MM-dd\")", "The date written in ISO form (2024-03-15); an error for anything else.", "(str (java.time.LocalDate/parse \"2024-03-15\"))" => "\"2024-03-15\""),
    builtin!("LocalDate/of", [3], of, "(java.time.LocalDate/of year month day)", "The date year-month-day; an error if there is no such day.", "(str (java.time.LocalDate/of 2024 2 29))" => "\"2024-02-29\""),
    builtin!("LocalDate/ofEpochDay", [1], of_epoch_day, "(java.time.LocalDate/ofEpochDay n)", "The date n days after 1970-01-01.", "(str (java.time.LocalDate/ofEpochDay 365))" => "\"1971-01-01\""),
    builtin!("java.util.Date.", [0..=1], new_date, "(java.util.Date. millis)", "The instant millis milliseconds after 1970-01-01T00:00:00Z (there is no clock: the argument is required).", "(java.util.Date. 0)" => "#inst \"1970-01-01T00:00:00.000-00:00\""),
    builtin!("inst-ms", [1], inst_ms, "(inst-ms instant)", "Milliseconds since 1970-01-01T00:00:00Z of a java.util.Date (or #inst).", "(inst-ms #inst \"1970-01-01T00:00:01Z\")" => "1000"),
    builtin!("inst?", [1], is_inst, "(inst? x)", "True if x is a java.util.Date (or #inst).", "(inst? (java.util.Date. 0))" => "true"),
    builtin!(".plusDays", [2], plus_days, "(.plusDays date n)", "The date n days later (earlier for negative n).", "(str (.plusDays (java.time.LocalDate/parse \"2024-02-28\") 1))" => "\"2024-02-29\""),
    builtin!(".minusDays", [2], minus_days, "(.minusDays date n)", "The date n days earlier.", "(str (.minusDays (java.time.LocalDate/parse \"2024-01-01\") 1))" => "\"2023-12-31\""),
    builtin!(".plusWeeks", [2], plus_weeks, "(.plusWeeks date n)", "The date n weeks later.", "(str (.plusWeeks (java.time.LocalDate/parse \"2024-01-01\") 2))" => "\"2024-01-15\""),
    builtin!(".minusWeeks", [2], minus_weeks, "(.minusWeeks date n)", "The date n weeks earlier.", "(str (.minusWeeks (java.time.LocalDate/parse \"2024-01-15\") 2))" => "\"2024-01-01\""),
    builtin!(".plusMonths", [2], plus_months, "(.plusMonths date n)", "The date n months later; a day past the month's end becomes its last day.", "(str (.plusMonths (java.time.LocalDate/parse \"2024-01-31\") 1))" => "\"2024-02-29\""),
    builtin!(".minusMonths", [2], minus_months, "(.minusMonths date n)", "The date n months earlier.", "(str (.minusMonths (java.time.LocalDate/parse \"2024-03-31\") 1))" => "\"2024-02-29\""),
    builtin!(".plusYears", [2], plus_years, "(.plusYears date n)", "The date n years later (February 29 becomes February 28 in other years).", "(str (.plusYears (java.time.LocalDate/parse \"2024-02-29\") 1))" => "\"2025-02-28\""),
    builtin!(".minusYears", [2], minus_years, "(.minusYears date n)", "The date n years earlier.", "(str (.minusYears (java.time.LocalDate/parse \"2024-05-01\") 4))" => "\"2020-05-01\""),
    builtin!(".isBefore", [2], is_before, "(.isBefore a b)", "True if date a comes before date b.", "(.isBefore (java.time.LocalDate/parse \"2024-01-01\") (java.time.LocalDate/parse \"2024-02-01\"))" => "true"),
    builtin!(".isAfter", [2], is_after, "(.isAfter a b)", "True if date a comes after date b.", "(.isAfter (java.time.LocalDate/parse \"2024-01-01\") (java.time.LocalDate/parse \"2024-02-01\"))" => "false"),
    builtin!(".isEqual", [2], is_equal, "(.isEqual a b)", "True if dates a and b are the same day (instant).", "(.isEqual (java.time.LocalDate/parse \"2024-01-01\") (java.time.LocalDate/of 2024 1 1))" => "true"),
    builtin!(".before", [2], is_before, "(.before a b)", "java.util.Date.before: true if a comes before b.", "(.before (java.util.Date. 1) (java.util.Date. 2))" => "true"),
    builtin!(".after", [2], is_after, "(.after a b)", "java.util.Date.after: true if a comes after b.", "(.after (java.util.Date. 1) (java.util.Date. 2))" => "false"),
    builtin!(".getTime", [1], get_time, "(.getTime instant)", "Milliseconds since 1970-01-01T00:00:00Z of a java.util.Date.", "(.getTime (java.util.Date. 1000))" => "1000"),
    builtin!(".getYear", [1], get_year, "(.getYear date)", "The year of a date.", "(.getYear (java.time.LocalDate/parse \"2024-03-15\"))" => "2024"),
    builtin!(".getMonthValue", [1], get_month_value, "(.getMonthValue date)", "The month of a date, 1 to 12.", "(.getMonthValue (java.time.LocalDate/parse \"2024-03-15\"))" => "3"),
    builtin!(".getDayOfMonth", [1], get_day_of_month, "(.getDayOfMonth date)", "The day of the month of a date, 1 to 31.", "(.getDayOfMonth (java.time.LocalDate/parse \"2024-03-15\"))" => "15"),
    builtin!(".getDayOfYear", [1], get_day_of_year, "(.getDayOfYear date)", "The day of the year of a date, 1 to 366.", "(.getDayOfYear (java.time.LocalDate/parse \"2024-03-01\"))" => "61"),
    builtin!(".getDayOfWeek", [1], get_day_of_week, "(.getDayOfWeek date)", "The weekday of a date as its upper-case English name (a string, unlike Java's enum).", "(str (.getDayOfWeek (java.time.LocalDate/parse \"2024-01-01\")))" => "\"MONDAY\""),
    builtin!(".lengthOfMonth", [1], length_of_month, "(.lengthOfMonth date)", "The number of days in the month of a date.", "(.lengthOfMonth (java.time.LocalDate/parse \"2024-02-10\"))" => "29"),
    builtin!(".isLeapYear", [1], is_leap_year, "(.isLeapYear date)", "True if the year of a date is a leap year.", "(.isLeapYear (java.time.LocalDate/parse \"2023-06-01\"))" => "false"),
    builtin!(".toEpochDay", [1], to_epoch_day, "(.toEpochDay date)", "Days from 1970-01-01 to a date.", "(.toEpochDay (java.time.LocalDate/parse \"1970-01-11\"))" => "10"),
    builtin!(".withDayOfMonth", [2], with_day_of_month, "(.withDayOfMonth date day)", "The date with its day of the month replaced.", "(str (.withDayOfMonth (java.time.LocalDate/parse \"2024-03-15\") 1))" => "\"2024-03-01\""),
    builtin!(".between", [3], between, "(.between java.time.temporal.ChronoUnit/DAYS a b)", "Whole DAYS, WEEKS, MONTHS or YEARS from date a to date b (negative if b is earlier).", "(.between java.time.temporal.ChronoUnit/DAYS (java.time.LocalDate/parse \"2024-01-01\") (java.time.LocalDate/parse \"2024-03-01\"))" => "60"),
];

/// `ChronoUnit/DAYS` and friends, and `DayOfWeek/MONDAY` and friends, as values.
pub(crate) fn constant(name: &str) -> Option<Value> {
    let (class, field) = name.split_once('/')?;
    match class.rsplit('.').next()? {
        "ChronoUnit" if matches!(field, "DAYS" | "WEEKS" | "MONTHS" | "YEARS") => {
            Some(Value::symbol(&format!("ChronoUnit/{field}")))
        }
        "DayOfWeek" if WEEKDAYS.contains(&field) => Some(Value::string(field)),
        _ => None,
    }
}

fn date_error(message: String) -> Error {
    Error::new(ErrorKind::Argument, message)
}

/// The receiver or argument of a date method.
fn expect_date(method: &str, v: &Value) -> Result<Date> {
    match v {
        Value::Date(d) => Ok(*d),
        Value::Str(s) => Err(Error::type_error(format!(
            "{method} needs a date, got the string {}; make a date with \
             (java.time.LocalDate/parse {})",
            crate::format::pr_str(v),
            crate::format::pr_str(&Value::string(s))
        ))),
        other => Err(Error::type_error(format!(
            "{method} needs a date (java.time.LocalDate/parse \"2024-03-15\"), got {}",
            got(other)
        ))),
    }
}

/// A `LocalDate` receiver: calendar methods do not apply to instants.
fn expect_day(method: &str, v: &Value) -> Result<Date> {
    let d = expect_date(method, v)?;
    match d.kind() {
        DateKind::Day(_) => Ok(d),
        DateKind::Instant(_) => Err(Error::type_error(format!(
            "{method} is a LocalDate method, called on a java.util.Date; make a LocalDate with \
             (java.time.LocalDate/parse \"2024-03-15\")"
        ))),
    }
}

fn out_of_range(method: &str) -> Error {
    date_error(format!(
        "{method}: the resulting date is out of range (years up to {})",
        crate::value::date::MAX_YEAR
    ))
}

fn parse(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    if args.len() == 2 {
        return Err(Error::unsupported(
            "LocalDate/parse with a formatter is not supported: only ISO dates (2024-03-15) \
             parse; take other formats apart with re-matches or clojure.string/split and build \
             the date with (java.time.LocalDate/of year month day)",
        )
        .into());
    }
    match &args[0] {
        Value::Str(s) => Ok(Value::Date(parse_iso_day(s).map_err(|message| {
            date_error(format!(
                "LocalDate/parse: {message} (DateTimeParseException); dates are written \
                 yyyy-MM-dd"
            ))
        })?)),
        other => Err(Error::type_error(format!(
            "LocalDate/parse expects a string such as \"2024-03-15\", got {}",
            got(other)
        ))
        .into()),
    }
}

fn of(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let y = expect_int("LocalDate/of", &args[0])?;
    let m = expect_int("LocalDate/of", &args[1])?;
    let d = expect_int("LocalDate/of", &args[2])?;
    Date::from_ymd(y, m, d).map(Value::Date).ok_or_else(|| {
        date_error(format!(
            "LocalDate/of: there is no date {y}-{m:02}-{d:02} (DateTimeException)"
        ))
        .into()
    })
}

fn of_epoch_day(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let n = expect_int("LocalDate/ofEpochDay", &args[0])?;
    Date::day(n)
        .map(Value::Date)
        .ok_or_else(|| out_of_range("LocalDate/ofEpochDay").into())
}

fn new_date(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    match args.first() {
        None => Err(Error::unsupported(
            "(java.util.Date.) would read the clock, and a program must give the same result \
             every time it runs; take the current date or time from the input data or a tool, \
             or give milliseconds: (java.util.Date. 1700000000000)",
        )
        .into()),
        Some(Value::Int(ms)) => Date::instant(*ms)
            .map(Value::Date)
            .ok_or_else(|| out_of_range("java.util.Date.").into()),
        Some(other) => Err(Error::type_error(format!(
            "java.util.Date. expects milliseconds since 1970 (an integer), got {}; for a date \
             string use (java.time.LocalDate/parse s) or #inst \"2024-03-15T10:30:00Z\"",
            got(other)
        ))
        .into()),
    }
}

fn expect_instant(method: &str, v: &Value) -> Result<i64> {
    match v {
        Value::Date(d) => match d.kind() {
            DateKind::Instant(ms) => Ok(ms),
            DateKind::Day(_) => Err(Error::type_error(format!(
                "{method} needs a java.util.Date, got a LocalDate; use .toEpochDay for a day \
                 count"
            ))),
        },
        other => Err(Error::type_error(format!(
            "{method} needs a java.util.Date, got {}",
            got(other)
        ))),
    }
}

fn inst_ms(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    Ok(Value::Int(expect_instant("inst-ms", &args[0])?))
}

fn is_inst(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    Ok(Value::Bool(matches!(
        &args[0],
        Value::Date(d) if matches!(d.kind(), DateKind::Instant(_))
    )))
}

fn get_time(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    Ok(Value::Int(expect_instant(".getTime", &args[0])?))
}

fn shift_days(method: &str, args: &[Value], factor: i64) -> EvalResult {
    let d = expect_date(method, &args[0])?;
    let n = expect_int(method, &args[1])?;
    n.checked_mul(factor)
        .and_then(|days| d.plus_days(days))
        .map(Value::Date)
        .ok_or_else(|| out_of_range(method).into())
}

fn plus_days(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    shift_days(".plusDays", args, 1)
}

fn minus_days(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    shift_days(".minusDays", args, -1)
}

fn plus_weeks(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    shift_days(".plusWeeks", args, 7)
}

fn minus_weeks(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    shift_days(".minusWeeks", args, -7)
}

fn shift_months(method: &str, args: &[Value], factor: i64) -> EvalResult {
    let d = expect_day(method, &args[0])?;
    let n = expect_int(method, &args[1])?;
    n.checked_mul(factor)
        .and_then(|months| d.plus_months(months))
        .map(Value::Date)
        .ok_or_else(|| out_of_range(method).into())
}

fn plus_months(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    shift_months(".plusMonths", args, 1)
}

fn minus_months(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    shift_months(".minusMonths", args, -1)
}

fn plus_years(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    shift_months(".plusYears", args, 12)
}

fn minus_years(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    shift_months(".minusYears", args, -12)
}

fn ordered(method: &str, args: &[Value]) -> Result<std::cmp::Ordering> {
    let a = expect_date(method, &args[0])?;
    let b = expect_date(method, &args[1])?;
    a.compare(b).ok_or_else(|| {
        Error::type_error(format!(
            "{method}: cannot compare a LocalDate with a java.util.Date; convert one of them"
        ))
    })
}

fn is_before(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    Ok(Value::Bool(ordered(".isBefore", args)?.is_lt()))
}

fn is_after(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    Ok(Value::Bool(ordered(".isAfter", args)?.is_gt()))
}

fn is_equal(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    Ok(Value::Bool(ordered(".isEqual", args)?.is_eq()))
}

fn get_year(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    Ok(Value::Int(expect_day(".getYear", &args[0])?.ymd().0))
}

fn get_month_value(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    Ok(Value::Int(expect_day(".getMonthValue", &args[0])?.ymd().1))
}

fn get_day_of_month(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    Ok(Value::Int(expect_day(".getDayOfMonth", &args[0])?.ymd().2))
}

fn get_day_of_year(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let d = expect_day(".getDayOfYear", &args[0])?;
    let (year, _, _) = d.ymd();
    let first = crate::value::date::days_from_civil(year, 1, 1);
    Ok(Value::Int(d.epoch_day() - first + 1))
}

fn get_day_of_week(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let d = expect_day(".getDayOfWeek", &args[0])?;
    Ok(Value::string(WEEKDAYS[(d.weekday() - 1) as usize]))
}

fn length_of_month(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let (y, m, _) = expect_day(".lengthOfMonth", &args[0])?.ymd();
    Ok(Value::Int(crate::value::date::days_in_month(y, m)))
}

fn is_leap_year(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let (y, _, _) = expect_day(".isLeapYear", &args[0])?.ymd();
    Ok(Value::Bool(crate::value::date::is_leap_year(y)))
}

fn to_epoch_day(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    Ok(Value::Int(expect_day(".toEpochDay", &args[0])?.epoch_day()))
}

fn with_day_of_month(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let (y, m, _) = expect_day(".withDayOfMonth", &args[0])?.ymd();
    let day = expect_int(".withDayOfMonth", &args[1])?;
    Date::from_ymd(y, m, day).map(Value::Date).ok_or_else(|| {
        date_error(format!(
            ".withDayOfMonth: there is no date {y}-{m:02}-{day:02} (DateTimeException)"
        ))
        .into()
    })
}

/// Whole months from `a` to `b`, as `LocalDate.until` counts them.
fn months_between(a: Date, b: Date) -> i64 {
    let (ya, ma, da) = a.ymd();
    let (yb, mb, db) = b.ymd();
    let mut months = (yb * 12 + mb) - (ya * 12 + ma);
    if months > 0 && db < da {
        months -= 1;
    } else if months < 0 && db > da {
        months += 1;
    }
    months
}

fn between(_ctx: &mut Ctx, args: &[Value]) -> EvalResult {
    let unit = match &args[0] {
        Value::Symbol(s) => s.as_str().strip_prefix("ChronoUnit/").unwrap_or(""),
        _ => "",
    };
    if unit.is_empty() {
        return Err(Error::type_error(format!(
            ".between is a ChronoUnit method: (.between java.time.temporal.ChronoUnit/DAYS a b), \
             with DAYS, WEEKS, MONTHS or YEARS; got {}",
            got(&args[0])
        ))
        .into());
    }
    let a = expect_day(".between", &args[1])?;
    let b = expect_day(".between", &args[2])?;
    let days = b.epoch_day() - a.epoch_day();
    Ok(Value::Int(match unit {
        "DAYS" => days,
        "WEEKS" => days / 7,
        "MONTHS" => months_between(a, b),
        _ => months_between(a, b) / 12,
    }))
}
