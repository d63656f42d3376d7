//! Dates: the two date types data-processing programs use, `java.time.LocalDate` (a calendar day)
//! and `java.util.Date` (an instant, in milliseconds since 1970-01-01T00:00:00Z).
//!
//! Both live in one [`Date`] word so that [`Value`](super::Value) stays 16 bytes. Days use the
//! proleptic Gregorian calendar, as `java.time` does; instants are always shown in UTC (there is
//! no time zone setting, so a program prints the same text on every machine).

use std::cmp::Ordering;
use std::fmt::Write as _;

/// A calendar day or an instant. The lowest bit tells which; the other bits hold the epoch day or
/// the epoch millisecond.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Date(i64);

/// What a [`Date`] holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DateKind {
    /// A `LocalDate`: days since 1970-01-01 (negative before).
    Day(i64),
    /// A `java.util.Date`: milliseconds since 1970-01-01T00:00:00Z.
    Instant(i64),
}

/// The years a day may fall in (`java.time.LocalDate` allows ±999,999,999; data never needs
/// that many, and a bound keeps every calendar computation far from overflow).
pub const MAX_YEAR: i64 = 999_999;

const MILLIS_PER_DAY: i64 = 86_400_000;

impl Date {
    /// The day `epoch_day` days after 1970-01-01, if it is within about ±999,999 years.
    pub(crate) fn day(epoch_day: i64) -> Option<Date> {
        (epoch_day.abs() <= MAX_YEAR * 366).then_some(Date(epoch_day << 1))
    }

    /// The day `year-month-day`, if it exists (no 2023-02-29) and the year is within range.
    pub fn from_ymd(year: i64, month: i64, day: i64) -> Option<Date> {
        if year.abs() > MAX_YEAR || !(1..=12).contains(&month) {
            return None;
        }
        if day < 1 || day > days_in_month(year, month) {
            return None;
        }
        Date::day(days_from_civil(year, month, day))
    }

    /// The instant `millis` milliseconds after the epoch, if it is within ±999,999 years.
    pub fn instant(millis: i64) -> Option<Date> {
        let limit = (MAX_YEAR * 366 + 1) * MILLIS_PER_DAY;
        (millis.abs() <= limit).then_some(Date((millis << 1) | 1))
    }

    /// A day or an instant, with its number.
    pub fn kind(self) -> DateKind {
        if self.0 & 1 == 0 {
            DateKind::Day(self.0 >> 1)
        } else {
            DateKind::Instant(self.0 >> 1)
        }
    }

    /// The raw word, for hashing.
    pub(crate) fn bits(self) -> i64 {
        self.0
    }

    /// `(year, month, day)` of a day, or of an instant's UTC date.
    pub fn ymd(self) -> (i64, i64, i64) {
        civil_from_days(self.epoch_day())
    }

    /// The epoch day of a day, or of an instant's UTC date.
    pub fn epoch_day(self) -> i64 {
        match self.kind() {
            DateKind::Day(d) => d,
            DateKind::Instant(ms) => ms.div_euclid(MILLIS_PER_DAY),
        }
    }

    /// Ordering within one kind; `None` between a day and an instant (Java refuses to compare
    /// them too).
    pub(crate) fn compare(self, other: Date) -> Option<Ordering> {
        match (self.kind(), other.kind()) {
            (DateKind::Day(a), DateKind::Day(b)) | (DateKind::Instant(a), DateKind::Instant(b)) => {
                Some(a.cmp(&b))
            }
            _ => None,
        }
    }

    /// What `str` gives: `2024-03-15` for a day (`LocalDate.toString`), `Fri Mar 15 10:30:00 UTC
    /// 2024` for an instant (`java.util.Date.toString`, in UTC).
    pub fn to_text(self) -> String {
        match self.kind() {
            DateKind::Day(_) => self.iso_day(),
            DateKind::Instant(ms) => {
                let (y, m, d) = self.ymd();
                let (h, min, s, _) = time_of_day(ms);
                let weekday = WEEKDAYS_SHORT[weekday_index(self.epoch_day())];
                let month = MONTHS_SHORT[(m - 1) as usize];
                format!("{weekday} {month} {d:02} {h:02}:{min:02}:{s:02} UTC {y}")
            }
        }
    }

    /// `yyyy-MM-dd`, as `LocalDate.toString` writes it (years past 9999 get a `+`).
    pub fn iso_day(self) -> String {
        let (y, m, d) = self.ymd();
        let mut out = String::with_capacity(10);
        if y > 9999 {
            out.push('+');
        }
        if y < 0 {
            let _ = write!(out, "-{:04}", -y);
        } else {
            let _ = write!(out, "{y:04}");
        }
        let _ = write!(out, "-{m:02}-{d:02}");
        out
    }

    /// An instant as `#inst` prints it: `1970-01-01T00:00:00.000-00:00`.
    pub(crate) fn inst_text(self) -> String {
        let ms = match self.kind() {
            DateKind::Day(d) => d * MILLIS_PER_DAY,
            DateKind::Instant(ms) => ms,
        };
        let (h, min, s, milli) = time_of_day(ms);
        format!(
            "{}T{h:02}:{min:02}:{s:02}.{milli:03}-00:00",
            Date(ms.div_euclid(MILLIS_PER_DAY) << 1).iso_day()
        )
    }

    /// Add `n` days (a day) or `n` milliseconds (an instant); `None` out of range.
    pub(crate) fn plus_days(self, n: i64) -> Option<Date> {
        match self.kind() {
            DateKind::Day(d) => Date::day(d.checked_add(n)?),
            DateKind::Instant(ms) => Date::instant(ms.checked_add(n.checked_mul(MILLIS_PER_DAY)?)?),
        }
    }

    /// Add `n` months to a day, clamping the day of month as `LocalDate.plusMonths` does
    /// (2024-01-31 plus one month is 2024-02-29).
    pub(crate) fn plus_months(self, n: i64) -> Option<Date> {
        let (y, m, d) = self.ymd();
        let total = (y.checked_mul(12)?).checked_add(m - 1)?.checked_add(n)?;
        let (year, month) = (total.div_euclid(12), total.rem_euclid(12) + 1);
        if year.abs() > MAX_YEAR {
            return None;
        }
        Date::from_ymd(year, month, d.min(days_in_month(year, month)))
    }

    /// Day of the week, 1 (Monday) to 7 (Sunday), as `DayOfWeek.getValue`.
    pub fn weekday(self) -> i64 {
        weekday_index(self.epoch_day()) as i64 + 1
    }
}

impl std::fmt::Debug for Date {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.kind() {
            DateKind::Day(_) => write!(f, "LocalDate({})", self.iso_day()),
            DateKind::Instant(_) => write!(f, "Instant({})", self.inst_text()),
        }
    }
}

/// English weekday names, Monday first, as `DayOfWeek` names them.
pub const WEEKDAYS: [&str; 7] = [
    "MONDAY",
    "TUESDAY",
    "WEDNESDAY",
    "THURSDAY",
    "FRIDAY",
    "SATURDAY",
    "SUNDAY",
];
const WEEKDAYS_SHORT: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
const MONTHS_SHORT: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// 0 for Monday .. 6 for Sunday (1970-01-01 was a Thursday).
fn weekday_index(epoch_day: i64) -> usize {
    (epoch_day + 3).rem_euclid(7) as usize
}

fn time_of_day(ms: i64) -> (i64, i64, i64, i64) {
    let in_day = ms.rem_euclid(MILLIS_PER_DAY);
    (
        in_day / 3_600_000,
        in_day / 60_000 % 60,
        in_day / 1000 % 60,
        in_day % 1000,
    )
}

pub(crate) fn is_leap_year(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

pub(crate) fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if is_leap_year(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (the era-based method: 400-year eras of
/// 146097 days, years starting in March so the leap day comes last).
pub(crate) fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The inverse of [`days_from_civil`].
pub(crate) fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Parse `yyyy-MM-dd` strictly, as `LocalDate.parse` does; the error is Java's message.
pub(crate) fn parse_iso_day(text: &str) -> Result<Date, String> {
    let fail = |why: &str| {
        if why.is_empty() {
            format!("Text '{text}' could not be parsed at index 0")
        } else {
            format!("Text '{text}' could not be parsed: {why}")
        }
    };
    let (year, month, day) = match split_ymd(text) {
        Some(ymd) => ymd,
        None if text.len() > 10
            && text.is_char_boundary(10)
            && split_ymd(&text[..10]).is_some() =>
        {
            return Err(format!(
                "Text '{text}' could not be parsed, unparsed text found at index 10"
            ));
        }
        None => return Err(fail("")),
    };
    if !(1..=12).contains(&month) {
        return Err(fail(&format!(
            "Invalid value for MonthOfYear (valid values 1 - 12): {month}"
        )));
    }
    if !(1..=31).contains(&day) {
        return Err(fail(&format!(
            "Invalid value for DayOfMonth (valid values 1 - 28/31): {day}"
        )));
    }
    if day > days_in_month(year, month) {
        return Err(fail(&if month == 2 && day == 29 {
            format!("Invalid date 'February 29' as '{year}' is not a leap year")
        } else {
            format!(
                "Invalid date '{} {day}'",
                [
                    "JANUARY",
                    "FEBRUARY",
                    "MARCH",
                    "APRIL",
                    "MAY",
                    "JUNE",
                    "JULY",
                    "AUGUST",
                    "SEPTEMBER",
                    "OCTOBER",
                    "NOVEMBER",
                    "DECEMBER"
                ][(month - 1) as usize]
            )
        }));
    }
    Date::from_ymd(year, month, day).ok_or_else(|| fail("year out of range"))
}

/// `yyyy-MM-dd` (a leading `+` or `-` allowed on the year) into numbers, without range checks.
fn split_ymd(text: &str) -> Option<(i64, i64, i64)> {
    let (sign, rest) = match text.as_bytes().first()? {
        b'+' => (1, &text[1..]),
        b'-' => (-1, &text[1..]),
        _ => (1, text),
    };
    let mut parts = rest.splitn(3, '-');
    let (y, m, d) = (parts.next()?, parts.next()?, parts.next()?);
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    let year_ok = y.len() >= 4 && y.len() <= 6 && y.bytes().all(|b| b.is_ascii_digit());
    if !year_ok || !digits(m, 2) || !digits(d, 2) {
        return None;
    }
    Some((
        sign * y.parse::<i64>().ok()?,
        m.parse().ok()?,
        d.parse().ok()?,
    ))
}

/// Parse an RFC 3339 timestamp as Clojure's `#inst` reader does: `2024-03-15`,
/// `2024-03-15T10:30`, `2024-03-15T10:30:00`, `2024-03-15T10:30:00.123Z`, with an optional `Z`
/// or `±hh:mm` offset (UTC when none is given).
pub(crate) fn parse_inst(text: &str) -> Result<Date, String> {
    let bad = || {
        format!(
            "#inst \"{text}\" is not a timestamp; write it as 2024-03-15 or \
             2024-03-15T10:30:00Z (RFC 3339)"
        )
    };
    let (date_part, time_part) = match text.split_once(['T', 't']) {
        Some((d, t)) => (d, Some(t)),
        None => (text, None),
    };
    let (y, m, d) = split_ymd(date_part).ok_or_else(bad)?;
    let day = Date::from_ymd(y, m, d).ok_or_else(bad)?;
    let mut ms = day.epoch_day() * MILLIS_PER_DAY;
    if let Some(time) = time_part {
        let (clock, offset_minutes) = if let Some(c) = time.strip_suffix(['Z', 'z']) {
            (c, 0)
        } else if let Some(i) = time.rfind(['+', '-']) {
            let (clock, offset) = time.split_at(i);
            let sign = if offset.starts_with('-') { -1 } else { 1 };
            let (oh, om) = offset[1..].split_once(':').ok_or_else(bad)?;
            let (oh, om): (i64, i64) = (
                oh.parse().map_err(|_| bad())?,
                om.parse().map_err(|_| bad())?,
            );
            if oh > 23 || om > 59 {
                return Err(bad());
            }
            (clock, sign * (oh * 60 + om))
        } else {
            (time, 0)
        };
        let (hms, fraction) = match clock.split_once('.') {
            Some((hms, f)) => (hms, Some(f)),
            None => (clock, None),
        };
        let fields: Vec<&str> = hms.split(':').collect();
        if !(2..=3).contains(&fields.len())
            || fields
                .iter()
                .any(|f| f.len() != 2 || !f.bytes().all(|b| b.is_ascii_digit()))
        {
            return Err(bad());
        }
        let num = |i: usize| fields.get(i).map_or(Ok(0), |f| f.parse::<i64>());
        let (h, min, s) = (
            num(0).map_err(|_| bad())?,
            num(1).map_err(|_| bad())?,
            num(2).map_err(|_| bad())?,
        );
        if h > 23 || min > 59 || s > 60 {
            return Err(bad());
        }
        let millis = match fraction {
            Some(f) if !f.is_empty() && f.len() <= 9 && f.bytes().all(|b| b.is_ascii_digit()) => {
                format!("{f:0<3}")[..3].parse::<i64>().map_err(|_| bad())?
            }
            Some(_) => return Err(bad()),
            None => 0,
        };
        ms += ((h * 60 + min - offset_minutes) * 60 + s) * 1000 + millis;
    }
    Date::instant(ms).ok_or_else(bad)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn civil_round_trip() {
        for days in [-800_000i64, -719_468, -1, 0, 1, 19_000, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(days_from_civil(2024, 3, 15), 19_797);
    }

    #[test]
    fn days_print_like_local_date() {
        let d = parse_iso_day("2024-02-28").unwrap();
        assert_eq!(d.to_text(), "2024-02-28");
        assert_eq!(d.plus_days(1).unwrap().to_text(), "2024-02-29");
        assert_eq!(d.plus_days(2).unwrap().to_text(), "2024-03-01");
        let jan31 = parse_iso_day("2023-01-31").unwrap();
        assert_eq!(jan31.plus_months(1).unwrap().to_text(), "2023-02-28");
        assert_eq!(jan31.plus_months(-2).unwrap().to_text(), "2022-11-30");
        assert_eq!(jan31.weekday(), 2);
        assert_eq!(
            Date::from_ymd(12345, 1, 2).unwrap().to_text(),
            "+12345-01-02"
        );
    }

    #[test]
    fn invalid_days_give_java_messages() {
        assert_eq!(
            parse_iso_day("2024-13-45").unwrap_err(),
            "Text '2024-13-45' could not be parsed: Invalid value for MonthOfYear (valid values \
             1 - 12): 13"
        );
        assert_eq!(
            parse_iso_day("2023-02-29").unwrap_err(),
            "Text '2023-02-29' could not be parsed: Invalid date 'February 29' as '2023' is not \
             a leap year"
        );
        assert_eq!(
            parse_iso_day("2024-4-1").unwrap_err(),
            "Text '2024-4-1' could not be parsed at index 0"
        );
        assert_eq!(
            parse_iso_day("2024-03-15T10:00").unwrap_err(),
            "Text '2024-03-15T10:00' could not be parsed, unparsed text found at index 10"
        );
        assert!(parse_iso_day("").is_err());
        assert!(parse_iso_day("-").is_err());
    }

    #[test]
    fn instants_print_in_utc() {
        let epoch = Date::instant(0).unwrap();
        assert_eq!(epoch.to_text(), "Thu Jan 01 00:00:00 UTC 1970");
        assert_eq!(epoch.inst_text(), "1970-01-01T00:00:00.000-00:00");
        let t = parse_inst("2024-03-15T10:30:05.25+02:00").unwrap();
        assert_eq!(t.inst_text(), "2024-03-15T08:30:05.250-00:00");
        assert_eq!(
            Date::instant(-1).unwrap().inst_text(),
            "1969-12-31T23:59:59.999-00:00"
        );
        assert_eq!(
            parse_inst("2024-03-15").unwrap().to_text(),
            "Fri Mar 15 00:00:00 UTC 2024"
        );
        assert!(parse_inst("2024-03-15T25:00").is_err());
        assert!(parse_inst("yesterday").is_err());
    }

    #[test]
    fn days_and_instants_do_not_compare() {
        let day = Date::day(0).unwrap();
        let instant = Date::instant(0).unwrap();
        assert_eq!(day.compare(instant), None);
        assert_ne!(day, instant);
        assert_eq!(day.compare(Date::day(1).unwrap()), Some(Ordering::Less));
    }
}
