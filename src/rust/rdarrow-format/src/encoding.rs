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

#[cfg(test)]
mod tests {
    use super::*;

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
}
