//! String encodings: what a CHARSXP's levels and the stream's native
//! encoding say about its bytes, and transcoding to UTF-8.

use crate::tree::levels;
use std::borrow::Cow;

/// The encoding R will give a string read from the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CharEncoding {
    /// UTF-8.
    Utf8,
    /// Latin-1.
    Latin1,
    /// Bytes of no declared encoding.
    Bytes,
    /// ASCII, or the writer's native encoding when it is the reader's too.
    Native,
}

/// True when the stream's native encoding name means UTF-8.
pub fn is_utf8_name(name: &[u8]) -> bool {
    let n = String::from_utf8_lossy(name)
        .to_ascii_lowercase()
        .replace(['-', '_'], "");
    n == "utf8"
}

/// Transcode `bytes` from the named encoding to UTF-8 (None if the name is
/// unknown or the bytes are invalid in it).
pub fn decode_named(bytes: &[u8], name: &[u8]) -> Option<String> {
    if bytes.is_ascii() {
        return Some(String::from_utf8(bytes.to_vec()).unwrap());
    }
    if is_utf8_name(name) {
        return String::from_utf8(bytes.to_vec()).ok();
    }
    let lower = String::from_utf8_lossy(name).to_ascii_lowercase();
    if matches!(
        lower.as_str(),
        "latin1" | "iso-8859-1" | "iso8859-1" | "iso_8859-1" | "l1"
    ) {
        return Some(bytes.iter().map(|&b| b as char).collect());
    }
    let label = match lower.as_str() {
        "cp1252" => "windows-1252",
        "cp936" => "gbk",
        "cp950" => "big5",
        "cp932" => "shift_jis",
        "cp949" => "euc-kr",
        "cp1250" => "windows-1250",
        "cp1251" => "windows-1251",
        "cp1253" => "windows-1253",
        "cp1254" => "windows-1254",
        "cp1255" => "windows-1255",
        "cp1256" => "windows-1256",
        "cp1257" => "windows-1257",
        "cp1258" => "windows-1258",
        other => other,
    };
    let enc = encoding_rs::Encoding::for_label(label.as_bytes())?;
    let (s, had_errors) = enc.decode_without_bom_handling(bytes);
    (!had_errors).then(|| s.into_owned())
}

/// The levels R's CHARSXP holds once string `bytes` (written with levels
/// `lv`, in a stream of native encoding `native`) is made in R as
/// [`to_utf8`] says (`mkCharLenCE`: ASCII strings are flagged ASCII only;
/// others by their encoding), with the cache bits R never writes left out.
/// `None` when R would hold other bytes than these (a native string
/// transcoded): what R writes for it is then not these bytes.
pub fn levels_in_r(bytes: &[u8], lv: u16, native: Option<&[u8]>) -> Option<u16> {
    if bytes.is_ascii() {
        return Some(levels::ASCII);
    }
    match to_utf8(bytes, lv, native) {
        (CharEncoding::Latin1, _) => Some(levels::LATIN1),
        (_, Cow::Owned(_)) => None,
        (CharEncoding::Utf8, _) => Some(levels::UTF8),
        (CharEncoding::Bytes, _) => Some(levels::BYTES),
        (CharEncoding::Native, _) => Some(0),
    }
}

/// How R reads a CHARSXP with these levels, and its bytes as UTF-8 where
/// that is possible. `native` is the stream header's encoding (version 3).
///
/// Strings flagged as bytes, and native strings that cannot be
/// transcoded, are returned as they are with `Bytes`/`Native`.
pub fn to_utf8<'a>(
    bytes: &'a [u8],
    lv: u16,
    native: Option<&[u8]>,
) -> (CharEncoding, Cow<'a, [u8]>) {
    if lv & levels::UTF8 != 0 {
        return (CharEncoding::Utf8, Cow::Borrowed(bytes));
    }
    if lv & levels::LATIN1 != 0 {
        if bytes.is_ascii() {
            return (CharEncoding::Latin1, Cow::Borrowed(bytes));
        }
        let s: String = bytes.iter().map(|&b| b as char).collect();
        return (CharEncoding::Latin1, Cow::Owned(s.into_bytes()));
    }
    if lv & levels::BYTES != 0 {
        return (CharEncoding::Bytes, Cow::Borrowed(bytes));
    }
    if lv & levels::ASCII != 0 || bytes.is_ascii() {
        return (CharEncoding::Native, Cow::Borrowed(bytes));
    }
    match native {
        Some(name) if !is_utf8_name(name) => match decode_named(bytes, name) {
            Some(s) => (CharEncoding::Utf8, Cow::Owned(s.into_bytes())),
            None => (CharEncoding::Native, Cow::Borrowed(bytes)),
        },
        _ => (CharEncoding::Native, Cow::Borrowed(bytes)),
    }
}

/// Text for a string whose bytes are not valid UTF-8 (marked UTF-8 yet
/// holding other bytes, flagged as bytes, or in a native encoding that does
/// not decode): rdarrow's one rule, so that every consumer gets valid text.
///
/// - When the string holds no valid multi-byte UTF-8 character and no
///   cut-off one (its bytes above 0x7F stand alone), it is single-byte
///   text: each byte is read as Windows-1252 (Latin-1 with the printable
///   0x80-0x9F; every byte maps), as such text nearly always is.
/// - Otherwise (UTF-8 with damage), each invalid sequence becomes U+FFFD.
pub fn repair_text(bytes: &[u8]) -> String {
    let single_byte = bytes
        .utf8_chunks()
        .all(|c| c.valid().is_ascii() && c.invalid().len() <= 1);
    if single_byte {
        encoding_rs::WINDOWS_1252
            .decode_without_bom_handling(bytes)
            .0
            .into_owned()
    } else {
        String::from_utf8_lossy(bytes).into_owned()
    }
}

/// A string as Arrow utf8 text: its UTF-8 bytes ([`to_utf8`]), or its
/// repaired text ([`repair_text`]) when they are not valid UTF-8; the flag
/// says it was repaired.
pub fn arrow_text<'a>(bytes: &'a [u8], lv: u16, native: Option<&[u8]>) -> (Cow<'a, str>, bool) {
    let (_, u) = to_utf8(bytes, lv, native);
    match u {
        Cow::Borrowed(b) => match std::str::from_utf8(b) {
            Ok(s) => (Cow::Borrowed(s), false),
            Err(_) => (Cow::Owned(repair_text(bytes)), true),
        },
        Cow::Owned(v) => match String::from_utf8(v) {
            Ok(s) => (Cow::Owned(s), false),
            Err(_) => (Cow::Owned(repair_text(bytes)), true),
        },
    }
}

/// The strings of a character vector that would not come back from their
/// Arrow text as R held them: those repaired ([`arrow_text`]), those
/// flagged as bytes (R compares them byte for byte, encoding included) and
/// those flagged as Latin-1 (their text comes back UTF-8: `identical()`,
/// but not R's bytes). They travel in rdarrow's metadata and are put back.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Unfaithful {
    /// Their positions (0-based).
    pub rows: Vec<usize>,
    /// How many were repaired.
    pub repaired: usize,
    /// The first of those (0-based).
    pub first_repaired: Option<usize>,
}

/// [`Unfaithful`] of `s` (a stream of native encoding `native`): `None`
/// when every string comes back as it is (checked in one pass over the
/// bytes when all are UTF-8 or ASCII).
pub fn unfaithful_strings(
    s: &crate::tree::StringVector,
    native: Option<&[u8]>,
) -> Option<Unfaithful> {
    use crate::tree::StringLevels;
    let native_utf8 = native.is_none_or(is_utf8_name);
    let plain = |l: u16| {
        l & (levels::LATIN1 | levels::BYTES) == 0
            && (l & (levels::UTF8 | levels::ASCII) != 0 || native_utf8)
    };
    let all_plain = match &s.levels {
        StringLevels::Uniform(l) => plain(*l),
        StringLevels::PerElement(v) => v.iter().all(|&l| plain(l)),
    };
    if all_plain && std::str::from_utf8(&s.data).is_ok() {
        return None;
    }
    let mut out = Unfaithful::default();
    for i in 0..s.len() {
        let Some(b) = s.get(i) else { continue };
        let lv = s.levels(i);
        if b.is_ascii() {
            continue;
        }
        let (_, repaired) = arrow_text(b, lv, native);
        if repaired {
            out.repaired += 1;
            out.first_repaired.get_or_insert(i);
            out.rows.push(i);
        } else if lv & (levels::BYTES | levels::LATIN1) != 0 {
            out.rows.push(i);
        }
    }
    (!out.rows.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_in_r_are_mkcharlence_flags() {
        assert_eq!(levels_in_r(b"abc", levels::UTF8, None), Some(levels::ASCII));
        assert_eq!(
            levels_in_r(b"abc", levels::BYTES, None),
            Some(levels::ASCII)
        );
        assert_eq!(
            levels_in_r("é".as_bytes(), levels::UTF8, None),
            Some(levels::UTF8)
        );
        assert_eq!(
            levels_in_r(b"caf\xe9", levels::LATIN1, None),
            Some(levels::LATIN1)
        );
        assert_eq!(
            levels_in_r(b"\xff", levels::BYTES, None),
            Some(levels::BYTES)
        );
        // a native latin-1 string becomes UTF-8 in R: other bytes
        assert_eq!(levels_in_r(b"caf\xe9", 0, Some(b"latin1")), None);
        assert_eq!(levels_in_r("é".as_bytes(), 0, Some(b"UTF-8")), Some(0));
    }

    #[test]
    fn transcodes_latin1_and_cp1252() {
        let (e, b) = to_utf8(b"caf\xe9", levels::LATIN1, None);
        assert_eq!(e, CharEncoding::Latin1);
        assert_eq!(&*b, "café".as_bytes());
        let (e, b) = to_utf8(b"\x80", 0, Some(b"CP1252"));
        assert_eq!(e, CharEncoding::Utf8);
        assert_eq!(&*b, "€".as_bytes());
        let (e, b) = to_utf8(b"\xff", levels::BYTES, Some(b"UTF-8"));
        assert_eq!(e, CharEncoding::Bytes);
        assert_eq!(&*b, b"\xff");
    }

    #[test]
    fn repairs_single_byte_text_as_windows_1252() {
        // a Latin-1 / Windows-1252 name marked UTF-8
        assert_eq!(
            repair_text(b"Jos\xe9 \x93quoted\x94"),
            "José \u{201c}quoted\u{201d}"
        );
        assert_eq!(repair_text(b"a\xcc_b"), "a\u{cc}_b");
        // a lone lead byte at the end is single-byte text too
        assert_eq!(repair_text(b"caf\xe9"), "café");
    }

    #[test]
    fn repairs_damaged_utf8_with_replacement_characters() {
        // valid UTF-8 beside an invalid byte: damaged UTF-8
        assert_eq!(repair_text(b"\xc3\xa9\xff"), "é\u{fffd}");
        // a cut-off three-byte sequence
        assert_eq!(repair_text(b"ab\xe2\x82"), "ab\u{fffd}");
        let (t, repaired) = arrow_text(b"ab\xe2\x82", levels::UTF8, None);
        assert!(repaired);
        assert_eq!(t, "ab\u{fffd}");
        let (t, repaired) = arrow_text("é".as_bytes(), levels::UTF8, None);
        assert!(!repaired);
        assert_eq!(t, "é");
    }
}
