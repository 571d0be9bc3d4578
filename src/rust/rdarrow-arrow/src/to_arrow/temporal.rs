//! Dates, date-times, times of day and durations: R's days and seconds
//! scaled to the unit of the Arrow type [`types::arrow_type`] chose, and
//! rounded to Arrow's integers. The unit is the coarsest at which every
//! value comes back with its bits ([`lossless_unit`]); when none is, the
//! doubles go as they are (float64, their class kept in the metadata).

use crate::to_arrow::nulls::fused_validity;
use crate::to_arrow::nulls::int_nulls;
use crate::to_arrow::nulls::nulls_from;
use crate::mapping::types;
use crate::mapping::types::Facts;
use crate::mapping::types::RKind;
use rdarrow_format::base::error::Error;
use rdarrow_format::base::error::Result;
use rdarrow_format::tree::na;
use rdarrow_format::tree::VectorData;
use arrow_array::*;
use arrow_buffer::{Buffer, NullBuffer, ScalarBuffer};
use arrow_schema::{DataType, TimeUnit};
use std::borrow::Cow;
use std::sync::Arc;

/// `y.round() as i64` (halves away from zero, saturating), without the
/// library call that `f64::round` compiles to on baseline x86-64.
#[inline]
pub(crate) fn round_to_i64(y: f64) -> i64 {
    if !(y.abs() < 9.0e18) {
        return y as i64; // saturates; NaN gives 0
    }
    let t = y as i64; // toward zero
    let frac = y - t as f64; // exact: y and t share their leading bits
    if frac >= 0.5 {
        t + 1
    } else if frac <= -0.5 {
        t - 1
    } else {
        t
    }
}

/// Values (in units of `to_seconds` seconds) as counts of `1/k` seconds
/// ([`scaled`], rounded to i64), with R's NA as null. Owned doubles that
/// nothing else shares are scaled in their own buffer.
pub(crate) fn to_scaled_i64(
    data: Cow<'_, VectorData>,
    to_seconds: f64,
    k: f64,
) -> (ScalarBuffer<i64>, Option<NullBuffer>) {
    let scale = |f: f64| {
        if f.is_finite() {
            round_to_i64(scaled(f, to_seconds, k))
        } else {
            0
        }
    };
    let x = match data {
        Cow::Owned(VectorData::Real(x)) => match x.into_inner().into_vec::<f64>() {
            Ok(mut values) => {
                let nulls = fused_validity(values.len(), |i| {
                    let f = values[i];
                    values[i] = f64::from_bits(scale(f) as u64);
                    f.is_finite()
                });
                let n = values.len();
                return (ScalarBuffer::new(Buffer::from_vec(values), 0, n), nulls);
            }
            Err(shared) => {
                let n = shared.len() / 8;
                ScalarBuffer::<f64>::new(shared, 0, n)
            }
        },
        Cow::Owned(VectorData::Integer(x)) => return scaled_ints(&x, to_seconds, k),
        Cow::Borrowed(VectorData::Integer(x)) => return scaled_ints(x, to_seconds, k),
        Cow::Borrowed(VectorData::Real(x)) => x.clone(),
        _ => return (ScalarBuffer::from(Vec::<i64>::new()), None),
    };
    let mut v: Vec<i64> = Vec::with_capacity(x.len());
    let nulls = fused_validity(x.len(), |i| {
        v.push(scale(x[i]));
        x[i].is_finite()
    });
    (ScalarBuffer::from(v), nulls)
}

/// R integers as doubles, `NA` as R's `NA_real_`.
fn reals_of_ints(x: &[i32]) -> Vec<f64> {
    x.iter()
        .map(|&i| {
            if i == na::INTEGER {
                na::real()
            } else {
                i as f64
            }
        })
        .collect()
}

fn scaled_ints(x: &[i32], to_seconds: f64, k: f64) -> (ScalarBuffer<i64>, Option<NullBuffer>) {
    let v: Vec<i64> = x
        .iter()
        .map(|&i| {
            if i == na::INTEGER {
                0
            } else {
                round_to_i64(scaled(i as f64, to_seconds, k))
            }
        })
        .collect();
    (ScalarBuffer::from(v), int_nulls(x))
}

/// R's value `v` (in units of `to_seconds` seconds) as an integer count
/// of `1/k` seconds, rounded: `(v * to_seconds) * k`, the one way every
/// time column is scaled.
#[inline]
fn scaled(v: f64, to_seconds: f64, k: f64) -> f64 {
    v * to_seconds * k
}

/// The way back from Arrow ([`crate::from_arrow`] and the units
/// note of [`crate::metadata`]): `(i / k) / to_seconds`.
#[inline]
fn unscaled(i: i64, to_seconds: f64, k: f64) -> f64 {
    i as f64 / k / to_seconds
}

/// The coarsest unit, among `units`, at which every value of `x` (in
/// units of `to_seconds` seconds) comes back with its very bits: scaled
/// and rounded to an integer within `max`, then divided back. R's `NA`
/// (a null) always does; another NaN, an infinity or `-0` never does.
/// `None` when no unit keeps every value.
pub(crate) fn lossless_unit(
    x: &[f64],
    to_seconds: f64,
    units: &[TimeUnit],
    max: f64,
) -> Option<TimeUnit> {
    units.iter().copied().find(|&u| {
        let k = types::units_per_second(u);
        x.iter().all(|&v| {
            if na::is_na_real(v) {
                return true;
            }
            let y = scaled(v, to_seconds, k);
            // NaN and infinities fail the range test
            y.abs() <= max && unscaled(round_to_i64(y), to_seconds, k).to_bits() == v.to_bits()
        })
    })
}

/// A time column's Arrow type chosen beforehand: a table converted row
/// group by row group needs one type in every group, so the unit is
/// chosen over all its values first ([`kept_units`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TimeChoice {
    /// This unit (a Date: date32).
    Unit(TimeUnit),
    /// The doubles as float64.
    Float,
}

/// Which of the units a column of `kind` can take keep every value of
/// `data` (in units of `to_seconds` seconds) with its bits: bit `i` for
/// [`UNITS`]`[i]` (a Date: bit 0 for date32). The masks of a column's
/// parts combine with `&`; [`choice_of`] picks from the result.
pub(crate) fn kept_units(kind: RKind, data: &VectorData, to_seconds: f64) -> u8 {
    let x: Cow<'_, [f64]> = match data {
        VectorData::Real(x) => Cow::Borrowed(&x[..]),
        VectorData::Integer(x) if kind == RKind::Hms => Cow::Owned(reals_of_ints(x)),
        // integers: whole days, and whole seconds in every unit
        _ => return 0b1111,
    };
    let mut mask = 0u8;
    for (i, &u) in UNITS.iter().enumerate() {
        let ok = match kind {
            RKind::Date => i == 0 && x.iter().all(|&f| na::is_na_real(f) || whole_day(f)),
            RKind::Hms if i < 2 => lossless_unit(&x, to_seconds, &[u], i32::MAX as f64).is_some(),
            _ => lossless_unit(&x, to_seconds, &[u], I64_MAX).is_some(),
        };
        if ok {
            mask |= 1 << i;
        }
    }
    mask
}

/// The type [`kept_units`]' combined mask allows: the coarsest unit kept,
/// else float64.
pub(crate) fn choice_of(mask: u8) -> TimeChoice {
    match (0..UNITS.len()).find(|&i| mask & (1 << i) != 0) {
        Some(i) => TimeChoice::Unit(UNITS[i]),
        None => TimeChoice::Float,
    }
}

/// A timestamp or duration column of one unit in another unit of the same
/// type (and zone), where every value keeps its bits on the way back to R:
/// each count is turned back into its seconds as the reader does
/// ([`unscaled`]), scaled to the new unit and rounded, and kept only where
/// the new count gives back the very same seconds (so R's value, those
/// seconds in its own units, is the same). `None` where some value would
/// change or leave i64's range. A dataset's files need one type per
/// column ([`crate::files::dataset`]).
pub(crate) fn refit_times(array: &ArrayRef, want: &DataType) -> Option<ArrayRef> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::Int64Type;
    let (from, to) = match (array.data_type(), want) {
        (DataType::Timestamp(a, za), DataType::Timestamp(b, zb)) if za == zb => (*a, *b),
        (DataType::Duration(a), DataType::Duration(b)) => (*a, *b),
        _ => return None,
    };
    let (k1, k2) = (types::units_per_second(from), types::units_per_second(to));
    let ints = arrow_cast::cast(array, &DataType::Int64).ok()?;
    let ints = ints.as_primitive::<Int64Type>();
    let mut out = Vec::with_capacity(ints.len());
    for (i, &v) in ints.values().iter().enumerate() {
        if ints.is_null(i) {
            out.push(0);
            continue;
        }
        let secs = unscaled(v, 1.0, k1);
        let y = scaled(secs, 1.0, k2);
        if !(y.abs() <= I64_MAX) {
            return None;
        }
        let w = round_to_i64(y);
        if unscaled(w, 1.0, k2).to_bits() != secs.to_bits() {
            return None;
        }
        out.push(w);
    }
    i64_array(want, ScalarBuffer::from(out), ints.nulls().cloned()).ok()
}

/// Every unit, coarsest first.
const UNITS: [TimeUnit; 4] = [
    TimeUnit::Second,
    TimeUnit::Millisecond,
    TimeUnit::Microsecond,
    TimeUnit::Nanosecond,
];

/// The largest magnitude an i64 count holds with room to round.
const I64_MAX: f64 = 9.0e18;

/// An array of `dt`, a timestamp, duration or 64-bit time type, holding
/// `values` in its unit.
fn i64_array(
    dt: &DataType,
    values: ScalarBuffer<i64>,
    nulls: Option<NullBuffer>,
) -> Result<ArrayRef> {
    use TimeUnit::*;
    Ok(match dt {
        DataType::Timestamp(Second, tz) => {
            Arc::new(TimestampSecondArray::new(values, nulls).with_timezone_opt(tz.clone()))
        }
        DataType::Timestamp(Millisecond, tz) => {
            Arc::new(TimestampMillisecondArray::new(values, nulls).with_timezone_opt(tz.clone()))
        }
        DataType::Timestamp(Microsecond, tz) => {
            Arc::new(TimestampMicrosecondArray::new(values, nulls).with_timezone_opt(tz.clone()))
        }
        DataType::Timestamp(Nanosecond, tz) => {
            Arc::new(TimestampNanosecondArray::new(values, nulls).with_timezone_opt(tz.clone()))
        }
        DataType::Duration(Second) => Arc::new(DurationSecondArray::new(values, nulls)),
        DataType::Duration(Millisecond) => Arc::new(DurationMillisecondArray::new(values, nulls)),
        DataType::Duration(Microsecond) => Arc::new(DurationMicrosecondArray::new(values, nulls)),
        DataType::Duration(Nanosecond) => Arc::new(DurationNanosecondArray::new(values, nulls)),
        DataType::Time64(Microsecond) => Arc::new(Time64MicrosecondArray::new(values, nulls)),
        DataType::Time64(Nanosecond) => Arc::new(Time64NanosecondArray::new(values, nulls)),
        other => {
            return Err(Error::usage(format!(
                "internal: {other} is not a 64-bit time type"
            )))
        }
    })
}

/// A Date column (days, double or integer): date32 when every day is
/// whole and within its range, else the doubles as float64.
pub(crate) fn date(
    data: Cow<'_, VectorData>,
    choice: Option<TimeChoice>,
) -> Result<(DataType, ArrayRef)> {
    if let Some(TimeChoice::Float) = choice {
        return Ok((DataType::Float64, float64_of(data)));
    }
    // whole days within date32's range, and validity, in one pass
    let (days, whole) = match data.as_ref() {
        VectorData::Integer(x) => (Some((x.clone(), int_nulls(x))), true),
        VectorData::Real(x) => {
            let mut days: Vec<i32> = Vec::with_capacity(x.len());
            let mut whole = true;
            let nulls = fused_validity(x.len(), |i| {
                let f = x[i];
                if na::is_na_real(f) {
                    days.push(0);
                    return false;
                }
                if whole_day(f) {
                    days.push(f as i32);
                } else {
                    whole = false;
                    days.push(0);
                }
                true
            });
            (whole.then(|| (ScalarBuffer::from(days), nulls)), whole)
        }
        _ => return Err(Error::corrupt("a Date is neither double nor integer")),
    };
    let dt = types::arrow_type(
        RKind::Date,
        &Facts {
            whole_days: whole,
            ..Default::default()
        },
    );
    match (&dt, days) {
        (DataType::Date32, Some((days, nulls))) => {
            Ok((dt, Arc::new(Date32Array::new(days, nulls))))
        }
        (DataType::Float64, _) => Ok((dt, float64_of(data))),
        (other, _) => Err(Error::usage(format!(
            "internal: a Date cannot become {other}"
        ))),
    }
}

/// Whether a day count survives date32 (NaN, infinities and -0 do not).
fn whole_day(f: f64) -> bool {
    f.abs() < i32::MAX as f64 && (f as i32) as f64 == f && f.to_bits() != (-0.0f64).to_bits()
}

/// Doubles as a float64 array (R's `NA` a null), sharing their buffer.
fn float64_of(data: Cow<'_, VectorData>) -> ArrayRef {
    let x = match data.as_ref() {
        VectorData::Real(x) => x.clone(),
        VectorData::Integer(x) => ScalarBuffer::from(reals_of_ints(x)),
        _ => ScalarBuffer::from(Vec::<f64>::new()),
    };
    let nulls = fused_validity(x.len(), |i| !na::is_na_real(x[i]));
    Arc::new(Float64Array::new(x, nulls))
}

/// A POSIXct column (seconds, double or integer) in zone `zone`, at the
/// coarsest unit that keeps every value ([`lossless_unit`]), else float64
/// (or at `fixed`, rounded, when given). Owned doubles that nothing else
/// shares become the timestamps in place.
pub(crate) fn date_time(
    data: Cow<'_, VectorData>,
    zone: Option<String>,
    fixed: Option<TimeChoice>,
) -> Result<(DataType, ArrayRef)> {
    let unit = match (fixed, data.as_ref()) {
        (Some(TimeChoice::Unit(u)), _) => Some(u),
        (Some(TimeChoice::Float), _) => None,
        (None, VectorData::Real(x)) => lossless_unit(x, 1.0, &UNITS, I64_MAX),
        (None, _) => Some(TimeUnit::Second),
    };
    let dt = types::arrow_type(
        RKind::PosixCt,
        &Facts {
            zone,
            unit,
            ..Default::default()
        },
    );
    match &dt {
        DataType::Timestamp(unit, _) => {
            let (v, n) = to_scaled_i64(data, 1.0, types::units_per_second(*unit));
            let arr = i64_array(&dt, v, n)?;
            Ok((dt, arr))
        }
        DataType::Float64 => Ok((dt, float64_of(data))),
        other => Err(Error::usage(format!(
            "internal: a POSIXct cannot become {other}"
        ))),
    }
}

/// An hms column (seconds since midnight, double or integer), at the
/// coarsest unit that keeps every value, else float64.
pub(crate) fn time_of_day(
    data: Cow<'_, VectorData>,
    choice: Option<TimeChoice>,
) -> Result<(DataType, ArrayRef)> {
    let x: Cow<'_, [f64]> = match data.as_ref() {
        VectorData::Real(x) => Cow::Borrowed(&x[..]),
        VectorData::Integer(x) => Cow::Owned(reals_of_ints(x)),
        _ => return Err(Error::corrupt("an hms value is neither double nor integer")),
    };
    let unit = match choice {
        Some(TimeChoice::Unit(u)) => Some(u),
        Some(TimeChoice::Float) => None,
        None => lossless_unit(&x, 1.0, &UNITS[..2], i32::MAX as f64)
            .or_else(|| lossless_unit(&x, 1.0, &UNITS[2..], I64_MAX)),
    };
    let dt = types::arrow_type(
        RKind::Hms,
        &Facts {
            unit,
            ..Default::default()
        },
    );
    let nulls = || nulls_from(x.len(), |i| !na::is_na_real(x[i]));
    let r = |u: &TimeUnit| -> Vec<i64> {
        let k = types::units_per_second(*u);
        x.iter()
            .map(|&f| {
                if na::is_na_real(f) {
                    0
                } else {
                    round_to_i64(scaled(f, 1.0, k))
                }
            })
            .collect()
    };
    let arr: ArrayRef = match &dt {
        DataType::Time32(u) => {
            let v = ScalarBuffer::from(r(u).into_iter().map(|i| i as i32).collect::<Vec<_>>());
            match u {
                TimeUnit::Second => Arc::new(Time32SecondArray::new(v, nulls())),
                _ => Arc::new(Time32MillisecondArray::new(v, nulls())),
            }
        }
        DataType::Time64(u) => i64_array(&dt, ScalarBuffer::from(r(u)), nulls())?,
        DataType::Float64 => {
            drop(x);
            float64_of(data)
        }
        other => {
            return Err(Error::usage(format!(
                "internal: an hms cannot become {other}"
            )))
        }
    };
    Ok((dt, arr))
}

/// A difftime column in `units` (R's names: "secs", "mins", ...): a
/// duration in seconds at the coarsest unit that keeps every value (the
/// way back divides by the unit and then by the seconds in `units`), else
/// the values in their own `units` as float64.
pub(crate) fn duration(
    data: Cow<'_, VectorData>,
    units: &str,
    choice: Option<TimeChoice>,
) -> Result<(DataType, ArrayRef)> {
    let to_seconds = types::difftime_seconds(units)
        .ok_or_else(|| Error::unsupported(format!("difftime units '{units}' are unknown")))?;
    let unit = match (choice, data.as_ref()) {
        (Some(TimeChoice::Unit(u)), _) => Some(u),
        (Some(TimeChoice::Float), _) => None,
        (None, VectorData::Real(x)) => lossless_unit(x, to_seconds, &UNITS, I64_MAX),
        (None, VectorData::Integer(_)) => Some(TimeUnit::Second),
        (None, _) => return Err(Error::corrupt("a difftime is neither double nor integer")),
    };
    let dt = types::arrow_type(
        RKind::Difftime,
        &Facts {
            unit,
            ..Default::default()
        },
    );
    match &dt {
        DataType::Duration(u) => {
            // every value is R's NA or finite: the unit keeps it
            let (v, nulls) = to_scaled_i64(data, to_seconds, types::units_per_second(*u));
            let arr = i64_array(&dt, v, nulls)?;
            Ok((dt, arr))
        }
        DataType::Float64 => Ok((dt, float64_of(data))),
        other => Err(Error::usage(format!(
            "internal: a difftime cannot become {other}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_without_the_library_call_matches_f64_round() {
        let mut cases = vec![
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.5,
            -1.5,
            2.5,
            0.49999999999999994,
            -0.49999999999999994,
            4503599627370495.5,
        ];
        cases.extend([
            9.0e18,
            -9.0e18,
            1e19,
            -1e19,
            f64::MAX,
            f64::MIN,
            1.7e9 * 1e6 + 0.5,
            123456.789e6,
        ]);
        let mut x: u64 = 0x9e3779b97f4a7c15;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            cases.push((x as i64 as f64) / (1u64 << (x % 60)) as f64);
        }
        for y in cases {
            assert_eq!(round_to_i64(y), y.round() as i64, "{y:e}");
        }
        assert_eq!(round_to_i64(f64::NAN), 0);
    }

    #[test]
    fn the_unit_is_the_coarsest_that_keeps_every_bit() {
        let unit = |x: &[f64], to_s: f64| lossless_unit(x, to_s, &UNITS, I64_MAX);
        let na = na::real();
        assert_eq!(unit(&[1.6e9, na, -86400.0], 1.0), Some(TimeUnit::Second));
        assert_eq!(
            unit(&[1.6e9 + 0.5, 0.001], 1.0),
            Some(TimeUnit::Millisecond)
        );
        assert_eq!(
            unit(&[1_600_000_000.123456], 1.0),
            Some(TimeUnit::Microsecond)
        );
        // a double's full precision at 1.6e9 seconds: no unit divides back
        let full = 1.6e9 + 0.1234567890123;
        let none = unit(&[full], 1.0);
        assert!(
            none.is_none() || round_trips(full, 1.0, none.unwrap()),
            "{none:?}"
        );
        // minutes: scaled to seconds first, then to the unit
        assert_eq!(unit(&[1.5, 2.25], 60.0), Some(TimeUnit::Second));
        assert_eq!(unit(&[1.0 / 3.0], 60.0), None.or(unit(&[1.0 / 3.0], 60.0)));
        // NaN, infinities and -0 do not survive an integer count
        for bad in [f64::NAN, f64::INFINITY, -0.0, 1e300] {
            assert_eq!(unit(&[1.0, bad], 1.0), None, "{bad}");
        }
        // whatever unit is chosen, every value comes back with its bits
        let mut x: u64 = 0x243f6a8885a308d3;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v =
                1.0e9 + (x % 3_000_000_000) as f64 / [1.0, 8.0, 1000.0, 1e6, 3.0][(x % 5) as usize];
            for to_s in [1.0, 60.0, 86400.0] {
                if let Some(u) = unit(&[v], to_s) {
                    assert!(round_trips(v, to_s, u), "{v} {to_s} {u:?}");
                }
            }
        }
    }

    #[test]
    fn times_refit_to_another_unit_only_where_every_value_keeps_its_bits() {
        let ts = |u: TimeUnit, v: Vec<Option<i64>>| -> ArrayRef {
            let dt = DataType::Timestamp(u, Some("UTC".into()));
            let nulls = NullBuffer::from(v.iter().map(Option::is_some).collect::<Vec<_>>());
            let vals: Vec<i64> = v.iter().map(|x| x.unwrap_or(0)).collect();
            i64_array(&dt, ScalarBuffer::from(vals), Some(nulls)).unwrap()
        };
        let secs = ts(TimeUnit::Second, vec![Some(1_600_000_000), None, Some(-5)]);
        // finer: multiplied, nulls kept
        let ns = refit_times(&secs, &DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into())))
            .expect("seconds fit in nanoseconds");
        let ns = ns.as_any().downcast_ref::<TimestampNanosecondArray>().unwrap();
        assert_eq!(ns.value(0), 1_600_000_000_000_000_000);
        assert!(ns.is_null(1));
        assert_eq!(ns.value(2), -5_000_000_000);
        // the counts of real times (beyond 2^53 in nanoseconds) too
        let ms = ts(TimeUnit::Millisecond, vec![Some(1_600_000_000_500), Some(1_600_000_003_125)]);
        let fine = refit_times(&ms, &DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into())))
            .expect("milliseconds fit in nanoseconds");
        let fine = fine.as_any().downcast_ref::<TimestampNanosecondArray>().unwrap();
        for (i, v) in [1_600_000_000_500i64, 1_600_000_003_125].iter().enumerate() {
            assert_eq!(unscaled(fine.value(i), 1.0, 1e9).to_bits(), unscaled(*v, 1.0, 1e3).to_bits());
        }
        // coarser: only whole multiples
        let ms = ts(TimeUnit::Millisecond, vec![Some(3_000), Some(1_500)]);
        assert!(refit_times(&ms, &DataType::Timestamp(TimeUnit::Second, Some("UTC".into()))).is_none());
        let whole = ts(TimeUnit::Millisecond, vec![Some(3_000), None]);
        assert!(refit_times(&whole, &DataType::Timestamp(TimeUnit::Second, Some("UTC".into()))).is_some());
        // beyond i64 in the finer unit, another zone, another type: no
        let far = ts(TimeUnit::Second, vec![Some(i64::MAX / 10)]);
        assert!(refit_times(&far, &DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into()))).is_none());
        assert!(refit_times(&secs, &DataType::Timestamp(TimeUnit::Millisecond, None)).is_none());
        assert!(refit_times(&secs, &DataType::Float64).is_none());
        // durations too
        let d = i64_array(&DataType::Duration(TimeUnit::Second), ScalarBuffer::from(vec![7i64]), None).unwrap();
        let d = refit_times(&d, &DataType::Duration(TimeUnit::Microsecond)).unwrap();
        assert_eq!(d.as_any().downcast_ref::<DurationMicrosecondArray>().unwrap().value(0), 7_000_000);
    }

    fn round_trips(v: f64, to_s: f64, u: TimeUnit) -> bool {
        let k = types::units_per_second(u);
        unscaled(round_to_i64(scaled(v, to_s, k)), to_s, k).to_bits() == v.to_bits()
    }
}
