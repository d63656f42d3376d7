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

use super::args::{Arg, Call};
use super::{Builtin, builtin, got};
use crate::error::{Error, ErrorKind, Result};
use crate::eval::{Ctx, EvalResult};
use crate::value::date::{WEEKDAYS, parse_iso_day};
use crate::value::{Date, DateKind, Value};

pub(crate) const BUILTINS: &[Builtin] = &[
    builtin!("LocalDate/parse", parse, "(java.time.LocalDate/parse \"yyyy-MM-dd\")", "The date written in ISO form (2024-03-15); an error for anything else.", "(str (java.time.LocalDate/parse \"2024-03-15\"))" => "\"2024-03-15\""),
    builtin!("LocalDate/of", of, "(java.time.LocalDate/of year month day)", "The date year-month-day; an error if there is no such day.", "(str (java.time.LocalDate/of 2024 2 29))" => "\"2024-02-29\""),
    builtin!("LocalDate/ofEpochDay", of_epoch_day, "(java.time.LocalDate/ofEpochDay n)", "The date n days after 1970-01-01.", "(str (java.time.LocalDate/ofEpochDay 365))" => "\"1971-01-01\""),
    builtin!("java.util.Date.", new_date, "(java.util.Date. millis)", "The instant millis milliseconds after 1970-01-01T00:00:00Z (there is no clock: the argument is required).", "(java.util.Date. 0)" => "#inst \"1970-01-01T00:00:00.000-00:00\""),
    builtin!("inst-ms", inst_ms, "(inst-ms instant)", "Milliseconds since 1970-01-01T00:00:00Z of a java.util.Date (or #inst).", "(inst-ms #inst \"1970-01-01T00:00:01Z\")" => "1000"),
    builtin!("inst?", is_inst, "(inst? x)", "True if x is a java.util.Date (or #inst).", "(inst? (java.util.Date. 0))" => "true"),
    builtin!(".plusDays", plus_days, "(.plusDays date n)", "The date n days later (earlier for negative n).", "(str (.plusDays (java.time.LocalDate/parse \"2024-02-28\") 1))" => "\"2024-02-29\""),
    builtin!(".minusDays", minus_days, "(.minusDays date n)", "The date n days earlier.", "(str (.minusDays (java.time.LocalDate/parse \"2024-01-01\") 1))" => "\"2023-12-31\""),
    builtin!(".plusWeeks", plus_weeks, "(.plusWeeks date n)", "The date n weeks later.", "(str (.plusWeeks (java.time.LocalDate/parse \"2024-01-01\") 2))" => "\"2024-01-15\""),
    builtin!(".minusWeeks", minus_weeks, "(.minusWeeks date n)", "The date n weeks earlier.", "(str (.minusWeeks (java.time.LocalDate/parse \"2024-01-15\") 2))" => "\"2024-01-01\""),
    builtin!(".plusMonths", plus_months, "(.plusMonths date n)", "The date n months later; a day past the month's end becomes its last day.", "(str (.plusMonths (java.time.LocalDate/parse \"2024-01-31\") 1))" => "\"2024-02-29\""),
    builtin!(".minusMonths", minus_months, "(.minusMonths date n)", "The date n months earlier.", "(str (.minusMonths (java.time.LocalDate/parse \"2024-03-31\") 1))" => "\"2024-02-29\""),
    builtin!(".plusYears", plus_years, "(.plusYears date n)", "The date n years later (February 29 becomes February 28 in other years).", "(str (.plusYears (java.time.LocalDate/parse \"2024-02-29\") 1))" => "\"2025-02-28\""),
    builtin!(".minusYears", minus_years, "(.minusYears date n)", "The date n years earlier.", "(str (.minusYears (java.time.LocalDate/parse \"2024-05-01\") 4))" => "\"2020-05-01\""),
    builtin!(".isBefore", is_before, "(.isBefore a b)", "True if date a comes before date b.", "(.isBefore (java.time.LocalDate/parse \"2024-01-01\") (java.time.LocalDate/parse \"2024-02-01\"))" => "true"),
    builtin!(".isAfter", is_after, "(.isAfter a b)", "True if date a comes after date b.", "(.isAfter (java.time.LocalDate/parse \"2024-01-01\") (java.time.LocalDate/parse \"2024-02-01\"))" => "false"),
    builtin!(".isEqual", is_equal, "(.isEqual a b)", "True if dates a and b are the same day (instant).", "(.isEqual (java.time.LocalDate/parse \"2024-01-01\") (java.time.LocalDate/of 2024 1 1))" => "true"),
    builtin!(".before", is_before, "(.before a b)", "java.util.Date.before: true if a comes before b.", "(.before (java.util.Date. 1) (java.util.Date. 2))" => "true"),
    builtin!(".after", is_after, "(.after a b)", "java.util.Date.after: true if a comes after b.", "(.after (java.util.Date. 1) (java.util.Date. 2))" => "false"),
    builtin!(".getTime", get_time, "(.getTime instant)", "Milliseconds since 1970-01-01T00:00:00Z of a java.util.Date.", "(.getTime (java.util.Date. 1000))" => "1000"),
    builtin!(".getYear", get_year, "(.getYear date)", "The year of a date.", "(.getYear (java.time.LocalDate/parse \"2024-03-15\"))" => "2024"),
    builtin!(".getMonthValue", get_month_value, "(.getMonthValue date)", "The month of a date, 1 to 12.", "(.getMonthValue (java.time.LocalDate/parse \"2024-03-15\"))" => "3"),
    builtin!(".getDayOfMonth", get_day_of_month, "(.getDayOfMonth date)", "The day of the month of a date, 1 to 31.", "(.getDayOfMonth (java.time.LocalDate/parse \"2024-03-15\"))" => "15"),
    builtin!(".getDayOfYear", get_day_of_year, "(.getDayOfYear date)", "The day of the year of a date, 1 to 366.", "(.getDayOfYear (java.time.LocalDate/parse \"2024-03-01\"))" => "61"),
    builtin!(".getDayOfWeek", get_day_of_week, "(.getDayOfWeek date)", "The weekday of a date as its upper-case English name (a string, unlike Java's enum).", "(str (.getDayOfWeek (java.time.LocalDate/parse \"2024-01-01\")))" => "\"MONDAY\""),
    builtin!(".lengthOfMonth", length_of_month, "(.lengthOfMonth date)", "The number of days in the month of a date.", "(.lengthOfMonth (java.time.LocalDate/parse \"2024-02-10\"))" => "29"),
    builtin!(".isLeapYear", is_leap_year, "(.isLeapYear date)", "True if the year of a date is a leap year.", "(.isLeapYear (java.time.LocalDate/parse \"2023-06-01\"))" => "false"),
    builtin!(".toEpochDay", to_epoch_day, "(.toEpochDay date)", "Days from 1970-01-01 to a date.", "(.toEpochDay (java.time.LocalDate/parse \"1970-01-11\"))" => "10"),
    builtin!(".withDayOfMonth", with_day_of_month, "(.withDayOfMonth date day)", "The date with its day of the month replaced.", "(str (.withDayOfMonth (java.time.LocalDate/parse \"2024-03-15\") 1))" => "\"2024-03-01\""),
    builtin!(".between", between, "(.between java.time.temporal.ChronoUnit/DAYS a b)", "Whole DAYS, WEEKS, MONTHS or YEARS from date a to date b (negative if b is earlier).", "(.between java.time.temporal.ChronoUnit/DAYS (java.time.LocalDate/parse \"2024-01-01\") (java.time.LocalDate/parse \"2024-03-01\"))" => "60"),
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

/// The receiver or argument of a date method: a `LocalDate` or a `java.util.Date`.
impl Arg<'_> for Date {
    fn from_arg(call: Call, value: &Value) -> Result<Self> {
        match value {
            Value::Date(d) => Ok(*d),
            Value::Str(s) => Err(Error::type_error(format!(
                "{call} needs a date, got the string {}; make a date with \
                 (java.time.LocalDate/parse {})",
                crate::format::pr_str(value),
                crate::format::pr_str(&Value::string(s))
            ))),
            other => Err(Error::type_error(format!(
                "{call} needs a date (java.time.LocalDate/parse \"2024-03-15\"), got {}",
                got(other)
            ))),
        }
    }
}

/// A `LocalDate` receiver: calendar methods do not apply to instants.
struct Day(Date);

impl Arg<'_> for Day {
    fn from_arg(call: Call, value: &Value) -> Result<Self> {
        let d = Date::from_arg(call, value)?;
        match d.kind() {
            DateKind::Day(_) => Ok(Day(d)),
            DateKind::Instant(_) => Err(Error::type_error(format!(
                "{call} is a LocalDate method, called on a java.util.Date; make a LocalDate with \
                 (java.time.LocalDate/parse \"2024-03-15\")"
            ))),
        }
    }
}

/// The milliseconds of a `java.util.Date`.
struct Instant(i64);

impl Arg<'_> for Instant {
    fn from_arg(call: Call, value: &Value) -> Result<Self> {
        match value {
            Value::Date(d) => match d.kind() {
                DateKind::Instant(ms) => Ok(Instant(ms)),
                DateKind::Day(_) => Err(Error::type_error(format!(
                    "{call} needs a java.util.Date, got a LocalDate; use .toEpochDay for a day \
                     count"
                ))),
            },
            other => Err(Error::type_error(format!(
                "{call} needs a java.util.Date, got {}",
                got(other)
            ))),
        }
    }
}

fn out_of_range(call: Call) -> Error {
    call.error(
        ErrorKind::Argument,
        format_args!(
            "the resulting date is out of range (years up to {})",
            crate::value::date::MAX_YEAR
        ),
    )
}

/// `(LocalDate/parse s)`; `(LocalDate/parse s formatter)` is refused.
fn parse(_: &mut Ctx, call: Call, (text, formatter): (&Value, Option<&Value>)) -> EvalResult {
    if formatter.is_some() {
        return Err(Error::unsupported(
            "LocalDate/parse with a formatter is not supported: only ISO dates (2024-03-15) \
             parse; take other formats apart with re-matches or clojure.string/split and build \
             the date with (java.time.LocalDate/of year month day)",
        )
        .into());
    }
    match text {
        Value::Str(s) => Ok(Value::Date(parse_iso_day(s).map_err(|message| {
            call.error(
                ErrorKind::Argument,
                format_args!("{message} (DateTimeParseException); dates are written yyyy-MM-dd"),
            )
        })?)),
        other => Err(call
            .expected("a string such as \"2024-03-15\"", other)
            .into()),
    }
}

fn of(_: &mut Ctx, call: Call, (y, m, d): (i64, i64, i64)) -> EvalResult {
    Date::from_ymd(y, m, d).map(Value::Date).ok_or_else(|| {
        call.error(
            ErrorKind::Argument,
            format_args!("there is no date {y}-{m:02}-{d:02} (DateTimeException)"),
        )
        .into()
    })
}

fn of_epoch_day(_: &mut Ctx, call: Call, n: i64) -> EvalResult {
    Date::day(n)
        .map(Value::Date)
        .ok_or_else(|| out_of_range(call).into())
}

fn new_date(_: &mut Ctx, call: Call, millis: Option<&Value>) -> EvalResult {
    match millis {
        None => Err(Error::unsupported(
            "(java.util.Date.) would read the clock, and a program must give the same result \
             every time it runs; take the current date or time from the input data or a tool, \
             or give milliseconds: (java.util.Date. 1700000000000)",
        )
        .into()),
        Some(Value::Int(ms)) => Date::instant(*ms)
            .map(Value::Date)
            .ok_or_else(|| out_of_range(call).into()),
        Some(other) => Err(call
            .expected_with(
                "milliseconds since 1970 (an integer)",
                other,
                "; for a date string use (java.time.LocalDate/parse s) or #inst \
                 \"2024-03-15T10:30:00Z\"",
            )
            .into()),
    }
}

fn inst_ms(_: &mut Ctx, _: Call, Instant(ms): Instant) -> EvalResult {
    Ok(Value::Int(ms))
}

fn is_inst(_: &mut Ctx, _: Call, x: &Value) -> EvalResult {
    Ok(Value::Bool(matches!(
        x,
        Value::Date(d) if matches!(d.kind(), DateKind::Instant(_))
    )))
}

fn get_time(_: &mut Ctx, _: Call, Instant(ms): Instant) -> EvalResult {
    Ok(Value::Int(ms))
}

fn shift_days(call: Call, (d, n): (Date, i64), factor: i64) -> EvalResult {
    n.checked_mul(factor)
        .and_then(|days| d.plus_days(days))
        .map(Value::Date)
        .ok_or_else(|| out_of_range(call).into())
}

fn plus_days(_: &mut Ctx, call: Call, args: (Date, i64)) -> EvalResult {
    shift_days(call, args, 1)
}

fn minus_days(_: &mut Ctx, call: Call, args: (Date, i64)) -> EvalResult {
    shift_days(call, args, -1)
}

fn plus_weeks(_: &mut Ctx, call: Call, args: (Date, i64)) -> EvalResult {
    shift_days(call, args, 7)
}

fn minus_weeks(_: &mut Ctx, call: Call, args: (Date, i64)) -> EvalResult {
    shift_days(call, args, -7)
}

fn shift_months(call: Call, (Day(d), n): (Day, i64), factor: i64) -> EvalResult {
    n.checked_mul(factor)
        .and_then(|months| d.plus_months(months))
        .map(Value::Date)
        .ok_or_else(|| out_of_range(call).into())
}

fn plus_months(_: &mut Ctx, call: Call, args: (Day, i64)) -> EvalResult {
    shift_months(call, args, 1)
}

fn minus_months(_: &mut Ctx, call: Call, args: (Day, i64)) -> EvalResult {
    shift_months(call, args, -1)
}

fn plus_years(_: &mut Ctx, call: Call, args: (Day, i64)) -> EvalResult {
    shift_months(call, args, 12)
}

fn minus_years(_: &mut Ctx, call: Call, args: (Day, i64)) -> EvalResult {
    shift_months(call, args, -12)
}

fn ordered(call: Call, (a, b): (Date, Date)) -> Result<std::cmp::Ordering> {
    a.compare(b).ok_or_else(|| {
        call.error(
            ErrorKind::Type,
            "cannot compare a LocalDate with a java.util.Date; convert one of them",
        )
    })
}

fn is_before(_: &mut Ctx, call: Call, dates: (Date, Date)) -> EvalResult {
    Ok(Value::Bool(ordered(call, dates)?.is_lt()))
}

fn is_after(_: &mut Ctx, call: Call, dates: (Date, Date)) -> EvalResult {
    Ok(Value::Bool(ordered(call, dates)?.is_gt()))
}

fn is_equal(_: &mut Ctx, call: Call, dates: (Date, Date)) -> EvalResult {
    Ok(Value::Bool(ordered(call, dates)?.is_eq()))
}

fn get_year(_: &mut Ctx, _: Call, Day(d): Day) -> EvalResult {
    Ok(Value::Int(d.ymd().0))
}

fn get_month_value(_: &mut Ctx, _: Call, Day(d): Day) -> EvalResult {
    Ok(Value::Int(d.ymd().1))
}

fn get_day_of_month(_: &mut Ctx, _: Call, Day(d): Day) -> EvalResult {
    Ok(Value::Int(d.ymd().2))
}

fn get_day_of_year(_: &mut Ctx, _: Call, Day(d): Day) -> EvalResult {
    let (year, _, _) = d.ymd();
    let first = crate::value::date::days_from_civil(year, 1, 1);
    Ok(Value::Int(d.epoch_day() - first + 1))
}

fn get_day_of_week(_: &mut Ctx, _: Call, Day(d): Day) -> EvalResult {
    Ok(Value::string(WEEKDAYS[(d.weekday() - 1) as usize]))
}

fn length_of_month(_: &mut Ctx, _: Call, Day(d): Day) -> EvalResult {
    let (y, m, _) = d.ymd();
    Ok(Value::Int(crate::value::date::days_in_month(y, m)))
}

fn is_leap_year(_: &mut Ctx, _: Call, Day(d): Day) -> EvalResult {
    let (y, _, _) = d.ymd();
    Ok(Value::Bool(crate::value::date::is_leap_year(y)))
}

fn to_epoch_day(_: &mut Ctx, _: Call, Day(d): Day) -> EvalResult {
    Ok(Value::Int(d.epoch_day()))
}

fn with_day_of_month(_: &mut Ctx, call: Call, (Day(d), day): (Day, i64)) -> EvalResult {
    let (y, m, _) = d.ymd();
    Date::from_ymd(y, m, day).map(Value::Date).ok_or_else(|| {
        call.error(
            ErrorKind::Argument,
            format_args!("there is no date {y}-{m:02}-{day:02} (DateTimeException)"),
        )
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

/// `(.between unit a b)`: the unit is checked before the dates.
fn between(_: &mut Ctx, call: Call, (unit_value, a, b): (&Value, &Value, &Value)) -> EvalResult {
    let unit = match unit_value {
        Value::Symbol(s) => s.as_str().strip_prefix("ChronoUnit/").unwrap_or(""),
        _ => "",
    };
    if unit.is_empty() {
        return Err(Error::type_error(format!(
            "{call} is a ChronoUnit method: ({call} java.time.temporal.ChronoUnit/DAYS a b), \
             with DAYS, WEEKS, MONTHS or YEARS; got {}",
            got(unit_value)
        ))
        .into());
    }
    let Day(a) = call.arg(a)?;
    let Day(b) = call.arg(b)?;
    let days = b.epoch_day() - a.epoch_day();
    Ok(Value::Int(match unit {
        "DAYS" => days,
        "WEEKS" => days / 7,
        "MONTHS" => months_between(a, b),
        _ => months_between(a, b) / 12,
    }))
}
