//! POSIXlt, R's broken-down times (a list of components: `sec`, `min`,
//! `hour`, `mday`, `mon`, `year`, `wday`, `yday`, `isdst` and, with a zone,
//! `zone` and `gmtoff`), and the instants they stand for.
//!
//! R to Arrow, a POSIXlt becomes the timestamps of its instants in its
//! zone (as a POSIXct would: [`instants`]). The way back derives the
//! components from the instants in that zone ([`derive`]); a component
//! that does not come out as it was (a `gmtoff` R left `NA`, fields that
//! were not normalised, a zone abbreviation of another database) travels
//! whole in the column's `"r"` metadata node, with the attributes, so that
//! the POSIXlt comes back `identical()` ([`crate::metadata`]). Zones come
//! from the system's zone database, as R's do.

use rdarrow_format::tree::na;
use rdarrow_format::tree::*;
use jiff::civil::DateTime;
use jiff::tz::{AmbiguousOffset, TimeZone};
use jiff::Timestamp;

/// The components R makes, in R's order.
pub const COMPONENTS: [&str; 11] = [
    "sec", "min", "hour", "mday", "mon", "year", "wday", "yday", "isdst", "zone", "gmtoff",
];

/// Whether an object of these classes and R type is a POSIXlt.
pub fn is_posixlt(classes: &[String], sxptype: u8) -> bool {
    sxptype == sxp::VEC && classes.iter().any(|c| c == "POSIXlt")
}

/// The zone database entry of a zone name (UTC for "UTC", "GMT" and
/// names the database does not know, as R treats them).
pub fn time_zone(name: Option<&str>) -> TimeZone {
    match name {
        None | Some("") | Some("UTC") | Some("GMT") => TimeZone::UTC,
        Some(n) => TimeZone::get(n).unwrap_or(TimeZone::UTC),
    }
}

/// One component of a POSIXlt, by name: its values as doubles (`NaN` for
/// `NA`), and for `zone` its strings.
fn numbers(items: &[(String, &RObject)], name: &str) -> Option<Vec<f64>> {
    let (_, obj) = items.iter().find(|(n, _)| n == name)?;
    let RObject::Vector(v) = obj else { return None };
    Some(match &v.data {
        VectorData::Integer(x) | VectorData::Logical(x) => x
            .iter()
            .map(|&i| if i == na::INTEGER { f64::NAN } else { i as f64 })
            .collect(),
        VectorData::Real(x) => x.iter().copied().collect(),
        _ => return None,
    })
}

/// The named components of a POSIXlt (a list with names).
pub fn components<'a>(obj: &'a RObject, refs: &RefTable) -> Vec<(String, &'a RObject)> {
    // without names (data.table strips a POSIXlt column's), R's order
    let mut names = crate::mapping::objects::names_of(obj, refs);
    if names.is_empty() {
        names = COMPONENTS.iter().map(|n| n.to_string()).collect();
    }
    match obj {
        RObject::Vector(v) => match &v.data {
            VectorData::List(items) => names.into_iter().zip(items.iter()).collect(),
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// The number of times in a POSIXlt: its longest component (R's
/// `length()` of a POSIXlt).
pub fn length(obj: &RObject, refs: &RefTable) -> usize {
    components(obj, refs)
        .iter()
        .map(|(_, c)| rdarrow_format::read::summary::r_length(c, refs) as usize)
        .max()
        .unwrap_or(0)
}

/// Days from 1970-01-01 to the first day of month `m` (1-12) of year `y`.
fn days_from_civil(y: i64, m: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The instants (seconds since 1970-01-01 UTC, `NA_real_` where a field
/// is `NA`) of a POSIXlt's times in zone `tz`: the fields are read as
/// local time there, out-of-range fields carried over as R does; the
/// offset is `gmtoff` where it is known, else the zone's at that local
/// time (`isdst` choosing in a repeated hour).
pub fn instants(obj: &RObject, refs: &RefTable, tz: &TimeZone) -> Vec<f64> {
    let items = components(obj, refs);
    let n = length(obj, refs);
    let get = |name: &str| numbers(&items, name).unwrap_or_default();
    let (sec, min, hour, mday, mon, year) = (
        get("sec"),
        get("min"),
        get("hour"),
        get("mday"),
        get("mon"),
        get("year"),
    );
    let isdst = get("isdst");
    let gmtoff = get("gmtoff");
    // R recycles short components
    let at = |v: &Vec<f64>, i: usize| {
        if v.is_empty() {
            f64::NAN
        } else {
            v[i % v.len()]
        }
    };
    (0..n)
        .map(|i| {
            let f = [
                at(&year, i),
                at(&mon, i),
                at(&mday, i),
                at(&hour, i),
                at(&min, i),
                at(&sec, i),
            ];
            if f.iter().any(|x| !x.is_finite()) {
                return na_real();
            }
            let [year, mon, mday, hour, min, sec] = f;
            let y = year as i64 + 1900 + (mon as i64).div_euclid(12);
            let m = (mon as i64).rem_euclid(12) + 1;
            let days = days_from_civil(y, m) + mday as i64 - 1;
            let local = days as f64 * 86_400.0 + hour * 3_600.0 + min * 60.0 + sec;
            let off = at(&gmtoff, i);
            if !gmtoff.is_empty() && off.is_finite() {
                return local - off;
            }
            match zone_offset(tz, local, at(&isdst, i)) {
                Some(o) => local - o as f64,
                None => local,
            }
        })
        .collect()
}

fn na_real() -> f64 {
    f64::from_bits(na::REAL_BITS)
}

/// The zone's offset (seconds east of UTC) at local time `local`
/// (seconds since 1970-01-01 as if UTC).
fn zone_offset(tz: &TimeZone, local: f64, isdst: f64) -> Option<i32> {
    let whole = local.floor();
    let ts = Timestamp::from_second(whole as i64).ok()?;
    let dt: DateTime = jiff::tz::Offset::UTC.to_datetime(ts);
    Some(match tz.to_ambiguous_timestamp(dt).offset() {
        AmbiguousOffset::Unambiguous { offset } => offset.seconds(),
        // the hour that repeats: summer time is the earlier offset
        AmbiguousOffset::Fold { before, after } => {
            if isdst == 1.0 {
                before.seconds()
            } else {
                after.seconds()
            }
        }
        // the hour that is skipped: read with the offset before it
        AmbiguousOffset::Gap { before, .. } => before.seconds(),
    })
}

/// The components named `names` of the times at `secs` (seconds since
/// 1970-01-01 UTC) in zone `tz`, as R's `as.POSIXlt()` makes them.
pub fn derive(secs: &[f64], tz: &TimeZone, names: &[String]) -> Vec<(String, VectorData)> {
    let n = secs.len();
    let mut sec = Vec::with_capacity(n);
    let mut ints: [Vec<i32>; 9] = Default::default();
    let mut zone = StringVectorBuilder::new(n);
    for &s in secs {
        let parts = s.is_finite().then(|| {
            let whole = s.floor();
            let ts = Timestamp::from_second(whole as i64).ok()?;
            let info = tz.to_offset_info(ts);
            let dt = info.offset().to_datetime(ts);
            Some((
                s - whole,
                dt,
                info.dst().is_dst(),
                info.abbreviation().to_string(),
                info.offset().seconds(),
            ))
        });
        match parts.flatten() {
            Some((frac, dt, dst, abbrev, off)) => {
                sec.push(dt.second() as f64 + frac);
                let v = [
                    dt.minute() as i32,
                    dt.hour() as i32,
                    dt.day() as i32,
                    dt.month() as i32 - 1,
                    dt.year() as i32 - 1900,
                    dt.weekday().to_sunday_zero_offset() as i32,
                    dt.day_of_year() as i32 - 1,
                    dst as i32,
                    off,
                ];
                for (k, x) in v.into_iter().enumerate() {
                    ints[k].push(x);
                }
                zone.data().extend_from_slice(abbrev.as_bytes());
                zone.end(
                    false,
                    if abbrev.is_ascii() {
                        levels::ASCII
                    } else {
                        levels::UTF8
                    },
                );
            }
            None => {
                sec.push(na_real());
                for (k, v) in ints.iter_mut().enumerate() {
                    // isdst is -1 (unknown) for NA times
                    v.push(if k == 7 { -1 } else { na::INTEGER });
                }
                zone.end(false, levels::ASCII);
            }
        }
    }
    let [min, hour, mday, mon, year, wday, yday, isdst, gmtoff] = ints;
    let mut all: Vec<(&str, VectorData)> = vec![
        ("sec", VectorData::Real(sec.into())),
        ("min", VectorData::Integer(min.into())),
        ("hour", VectorData::Integer(hour.into())),
        ("mday", VectorData::Integer(mday.into())),
        ("mon", VectorData::Integer(mon.into())),
        ("year", VectorData::Integer(year.into())),
        ("wday", VectorData::Integer(wday.into())),
        ("yday", VectorData::Integer(yday.into())),
        ("isdst", VectorData::Integer(isdst.into())),
        ("zone", VectorData::Character(zone.finish())),
        ("gmtoff", VectorData::Integer(gmtoff.into())),
    ];
    names
        .iter()
        .map(|name| match all.iter().position(|(c, _)| c == name) {
            Some(k) => (name.clone(), all.swap_remove(k).1),
            None => (
                name.clone(),
                VectorData::Logical(vec![na::INTEGER; n].into()),
            ),
        })
        .collect()
}

/// Whether two payloads hold the same values (doubles by their bits,
/// strings with their encodings).
pub fn same_values(a: &VectorData, b: &VectorData) -> bool {
    match (a, b) {
        (VectorData::Real(x), VectorData::Real(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y.iter())
                    .all(|(p, q)| p.to_bits() == q.to_bits())
        }
        (VectorData::Integer(x), VectorData::Integer(y)) => x[..] == y[..],
        (VectorData::Logical(x), VectorData::Logical(y)) => x[..] == y[..],
        (VectorData::Character(x), VectorData::Character(y)) => {
            x.len() == y.len()
                && (0..x.len()).all(|i| {
                    x.get(i) == y.get(i)
                        && (x.get(i).is_none_or(|b| b.is_ascii()) || x.levels(i) == y.levels(i))
                })
        }
        _ => false,
    }
}

/// The zone arrow R would give POSIXct values without a `tzone`: the
/// session's (TZ, else the system's zone). For front ends outside R (the
/// command line, Python), where there is no R session to ask.
pub fn session_zone() -> Option<String> {
    if let Ok(tz) = std::env::var("TZ") {
        let tz = tz.trim_start_matches(':').to_string();
        if !tz.is_empty() {
            return Some(tz);
        }
    }
    if let Ok(target) = std::fs::read_link("/etc/localtime") {
        let s = target.to_string_lossy().into_owned();
        if let Some(i) = s.find("zoneinfo/") {
            return Some(s[i + "zoneinfo/".len()..].to_string());
        }
    }
    std::fs::read_to_string("/etc/timezone")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_match_the_calendar() {
        assert_eq!(days_from_civil(1970, 1), 0);
        assert_eq!(days_from_civil(2000, 3), 11_017);
        assert_eq!(days_from_civil(1969, 12), -31);
    }

    #[test]
    fn derived_components_read_back_as_the_same_instants() {
        let tz = time_zone(Some("America/New_York"));
        let secs = [
            1_577_890_800.25,
            1_622_565_000.0,
            f64::from_bits(na::REAL_BITS),
        ];
        let names: Vec<String> = COMPONENTS.iter().map(|s| s.to_string()).collect();
        let parts = derive(&secs, &tz, &names);
        let hour = match &parts[2].1 {
            VectorData::Integer(x) => x.to_vec(),
            _ => unreachable!(),
        };
        assert_eq!(hour, vec![10, 12, na::INTEGER]);
        let zone = match &parts[9].1 {
            VectorData::Character(s) => (0..s.len())
                .map(|i| s.bytes(i).to_vec())
                .collect::<Vec<_>>(),
            _ => unreachable!(),
        };
        assert_eq!(zone, vec![b"EST".to_vec(), b"EDT".to_vec(), Vec::new()]);
        let mut m = rdarrow_format::tree::make::ObjectMaker::default();
        let items: Vec<RObject> = parts
            .into_iter()
            .map(|(_, d)| m.vector(d, vec![]))
            .collect();
        let lt = m.named_list(&COMPONENTS, items);
        let back = instants(&lt, &m.refs, &tz);
        assert_eq!(back[0], secs[0]);
        assert_eq!(back[1], secs[1]);
        assert!(back[2].is_nan());
    }
}
