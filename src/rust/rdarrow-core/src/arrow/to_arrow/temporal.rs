//! Dates, date-times, times of day and durations: R's days and seconds
//! scaled to the unit of the Arrow type [`types::arrow_type`] chose, and
//! rounded to Arrow's integers.

use super::column::{fused_validity, int_nulls, nulls_from};
use crate::arrow::types::{self, Facts, RKind};
use crate::error::{Error, Result};
use crate::tree::na;
use crate::tree::VectorData;
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

/// Whether `y` is a whole number that fits an i64 (the test `fract() == 0`
/// makes, without its library call).
#[inline]
pub(crate) fn is_whole(y: f64) -> bool {
    y.abs() < 9.0e18 && (y as i64) as f64 == y
}

/// Values scaled by `mult` and rounded to i64, with R's NA as null. Owned
/// doubles that nothing else shares are scaled in their own buffer.
pub(super) fn to_scaled_i64(data: Cow<'_, VectorData>, mult: f64) -> (ScalarBuffer<i64>, Option<NullBuffer>) {
    let scale = |f: f64| if f.is_finite() { round_to_i64(f * mult) } else { 0 };
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
        Cow::Owned(VectorData::Integer(x)) => return scaled_ints(&x, mult),
        Cow::Borrowed(VectorData::Integer(x)) => return scaled_ints(x, mult),
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

fn scaled_ints(x: &[i32], mult: f64) -> (ScalarBuffer<i64>, Option<NullBuffer>) {
    let v: Vec<i64> = x.iter().map(|&i| if i == na::INTEGER { 0 } else { round_to_i64(i as f64 * mult) }).collect();
    (ScalarBuffer::from(v), int_nulls(x))
}

fn all_integral(x: &[f64], mult: f64) -> bool {
    x.iter().all(|&f| !f.is_finite() || is_whole(f * mult))
}

/// An array of `dt`, a timestamp, duration or 64-bit time type, holding
/// `values` in its unit.
fn i64_array(dt: &DataType, values: ScalarBuffer<i64>, nulls: Option<NullBuffer>) -> Result<ArrayRef> {
    use TimeUnit::*;
    Ok(match dt {
        DataType::Timestamp(Second, tz) => Arc::new(TimestampSecondArray::new(values, nulls).with_timezone_opt(tz.clone())),
        DataType::Timestamp(Millisecond, tz) => Arc::new(TimestampMillisecondArray::new(values, nulls).with_timezone_opt(tz.clone())),
        DataType::Timestamp(Microsecond, tz) => Arc::new(TimestampMicrosecondArray::new(values, nulls).with_timezone_opt(tz.clone())),
        DataType::Timestamp(Nanosecond, tz) => Arc::new(TimestampNanosecondArray::new(values, nulls).with_timezone_opt(tz.clone())),
        DataType::Duration(Second) => Arc::new(DurationSecondArray::new(values, nulls)),
        DataType::Duration(Millisecond) => Arc::new(DurationMillisecondArray::new(values, nulls)),
        DataType::Duration(Microsecond) => Arc::new(DurationMicrosecondArray::new(values, nulls)),
        DataType::Duration(Nanosecond) => Arc::new(DurationNanosecondArray::new(values, nulls)),
        DataType::Time64(Microsecond) => Arc::new(Time64MicrosecondArray::new(values, nulls)),
        DataType::Time64(Nanosecond) => Arc::new(Time64NanosecondArray::new(values, nulls)),
        other => return Err(Error::usage(format!("internal: {other} is not a 64-bit time type"))),
    })
}

/// A Date column (days, double or integer).
pub(super) fn date(data: &VectorData) -> Result<(DataType, ArrayRef)> {
    // whole days within date32's range, and validity, in one pass
    let (days, whole) = match data {
        VectorData::Integer(x) => (Some((x.clone(), int_nulls(x))), true),
        VectorData::Real(x) => {
            let mut days: Vec<i32> = Vec::with_capacity(x.len());
            let mut whole = true;
            let nulls = fused_validity(x.len(), |i| {
                let f = x[i];
                if !f.is_finite() {
                    days.push(0);
                    return false;
                }
                if f.abs() < i32::MAX as f64 && (f as i32) as f64 == f {
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
    let dt = types::arrow_type(RKind::Date, &Facts { whole_days: whole, ..Default::default() });
    match (&dt, days) {
        (DataType::Date32, Some((days, nulls))) => Ok((dt, Arc::new(Date32Array::new(days, nulls)))),
        (DataType::Timestamp(unit, _), days) => {
            drop(days);
            // noted in the metadata for the way back (see `assemble`)
            let (v, n) = to_scaled_i64(Cow::Borrowed(data), 86_400.0 * types::units_per_second(*unit));
            let arr = i64_array(&dt, v, n)?;
            Ok((dt, arr))
        }
        (other, _) => Err(Error::usage(format!("internal: a Date cannot become {other}"))),
    }
}

/// A POSIXct column (seconds, double or integer) in zone `zone`. Owned
/// doubles that nothing else shares become the timestamps in place.
pub(super) fn date_time(data: Cow<'_, VectorData>, zone: Option<String>) -> Result<(DataType, ArrayRef)> {
    let dt = types::arrow_type(RKind::PosixCt, &Facts { zone, ..Default::default() });
    let DataType::Timestamp(unit, _) = &dt else {
        return Err(Error::usage(format!("internal: a POSIXct cannot become {dt}")));
    };
    let (v, n) = to_scaled_i64(data, types::units_per_second(*unit));
    let arr = i64_array(&dt, v, n)?;
    Ok((dt, arr))
}

/// An hms column (seconds since midnight, double or integer).
pub(super) fn time_of_day(data: &VectorData) -> Result<(DataType, ArrayRef)> {
    let x: Vec<f64> = match data {
        VectorData::Real(x) => x.to_vec(),
        VectorData::Integer(x) => x.iter().map(|&i| if i == na::INTEGER { f64::NAN } else { i as f64 }).collect(),
        _ => return Err(Error::corrupt("an hms value is neither double nor integer")),
    };
    let nulls = nulls_from(x.len(), |i| x[i].is_finite());
    let fits32 = |m: f64| x.iter().all(|&f| !f.is_finite() || (f * m).abs() <= i32::MAX as f64);
    let r = |m: f64| -> Vec<i64> { x.iter().map(|&f| if f.is_finite() { round_to_i64(f * m) } else { 0 }).collect() };
    let unit = [TimeUnit::Second, TimeUnit::Millisecond]
        .into_iter()
        .find(|&u| all_integral(&x, types::units_per_second(u)) && fits32(types::units_per_second(u)))
        .or_else(|| all_integral(&x, types::units_per_second(TimeUnit::Microsecond)).then_some(TimeUnit::Microsecond));
    let dt = types::arrow_type(RKind::Hms, &Facts { unit, ..Default::default() });
    let arr: ArrayRef = match &dt {
        DataType::Time32(u) => {
            let v = ScalarBuffer::from(r(types::units_per_second(*u)).into_iter().map(|i| i as i32).collect::<Vec<_>>());
            match u {
                TimeUnit::Second => Arc::new(Time32SecondArray::new(v, nulls)),
                _ => Arc::new(Time32MillisecondArray::new(v, nulls)),
            }
        }
        DataType::Time64(u) => i64_array(&dt, ScalarBuffer::from(r(types::units_per_second(*u))), nulls)?,
        other => return Err(Error::usage(format!("internal: an hms cannot become {other}"))),
    };
    Ok((dt, arr))
}

/// A difftime column in `units` (R's names: "secs", "mins", ...).
pub(super) fn duration(data: &VectorData, units: &str) -> Result<(DataType, ArrayRef)> {
    let mult = types::difftime_seconds(units).ok_or_else(|| Error::unsupported(format!("difftime units '{units}' are unknown")))?;
    let x: Vec<f64> = match data {
        VectorData::Real(x) => x.iter().map(|&f| f * mult).collect(),
        VectorData::Integer(x) => x.iter().map(|&i| if i == na::INTEGER { f64::NAN } else { i as f64 * mult }).collect(),
        _ => return Err(Error::corrupt("a difftime is neither double nor integer")),
    };
    let nulls = nulls_from(x.len(), |i| x[i].is_finite());
    let unit = [TimeUnit::Second, TimeUnit::Millisecond, TimeUnit::Microsecond].into_iter().find(|&u| all_integral(&x, types::units_per_second(u)));
    let dt = types::arrow_type(RKind::Difftime, &Facts { unit, ..Default::default() });
    let DataType::Duration(u) = &dt else {
        return Err(Error::usage(format!("internal: a difftime cannot become {dt}")));
    };
    let m = types::units_per_second(*u);
    let v: Vec<i64> = x.iter().map(|&f| if f.is_finite() { round_to_i64(f * m) } else { 0 }).collect();
    let arr = i64_array(&dt, ScalarBuffer::from(v), nulls)?;
    Ok((dt, arr))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_without_the_library_call_matches_f64_round() {
        let mut cases = vec![0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, 0.49999999999999994, -0.49999999999999994, 4503599627370495.5];
        cases.extend([9.0e18, -9.0e18, 1e19, -1e19, f64::MAX, f64::MIN, 1.7e9 * 1e6 + 0.5, 123456.789e6]);
        let mut x: u64 = 0x9e3779b97f4a7c15;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            cases.push((x as i64 as f64) / (1u64 << (x % 60)) as f64);
        }
        for y in cases {
            assert_eq!(round_to_i64(y), y.round() as i64, "{y:e}");
            assert_eq!(is_whole(y), y.fract() == 0.0 && y.abs() < 9.0e18, "{y:e}");
        }
        assert_eq!(round_to_i64(f64::NAN), 0);
    }
}
