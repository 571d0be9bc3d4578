//! Tensor messages both ways: shapes, element types and the R
//! attributes they carry, read back as written.

use super::*;

fn array(data: VectorData, dims: &[i32], names: Option<&[&str]>) -> (RObject, RefTable) {
    let mut m = ObjectMaker::with_refs(RefTable::default());
    let mut attrs = vec![("dim", rdarrow_format::tree::make::ints(dims.to_vec()))];
    if let Some(n) = names {
        let list = m.named_list(n, vec![RObject::Null; n.len()]);
        attrs.push(("dimnames", list));
    }
    let obj = m.vector(data, attrs);
    (obj, m.refs)
}

fn message(obj: &RObject, refs: &RefTable) -> Vec<u8> {
    let mut out = Vec::new();
    TensorParts::of(obj, refs).unwrap().write(&mut out).unwrap();
    out
}

#[test]
fn every_type_goes_and_comes_back_as_it_was() {
    let cases = [
        VectorData::Integer(vec![1, 2, i32::MIN, 4, 5, 6].into()),
        VectorData::Logical(vec![1, 0, i32::MIN, 1, 0, 1].into()),
        VectorData::Real(
            vec![1.5, f64::NAN, rdarrow_format::tree::make::na_real(), -0.0, 5.0, 6.0].into(),
        ),
        VectorData::Complex(vec![1.0; 12].into()),
        VectorData::Raw(arrow_buffer::Buffer::from_vec(vec![1u8, 2, 3, 4, 5, 6])),
    ];
    for data in cases {
        let t = data.sxptype();
        let (obj, refs) = array(data, &[2, 3], Some(&["r", "c"]));
        let bytes = message(&obj, &refs);
        // the body starts at a multiple of 64 bytes
        let meta = i32::from_le_bytes(bytes[4..8].try_into().unwrap()) as usize;
        assert_eq!((8 + meta) % 64, 0);
        let h = read_header(&bytes.as_slice()).unwrap();
        assert_eq!(
            h.names,
            vec![Some("r".to_string()), Some("c".to_string())]
                .into_iter()
                .chain((t == sxp::CPLX).then(|| Some("complex".to_string())))
                .collect::<Vec<_>>()
        );
        let (back, brefs) = read_tensor(&bytes.as_slice(), "x", 1 << 20).unwrap();
        // the same bytes again: the same values, type and attributes
        assert_eq!(message(&back, &brefs), bytes, "{}", sxp::type_name(t));
    }
}

#[test]
fn strides_are_r_s_column_major_order() {
    let (obj, refs) = array(VectorData::Real(vec![0.0; 24].into()), &[2, 3, 4], None);
    let p = TensorParts::of(&obj, &refs).unwrap();
    assert_eq!(p.shape, vec![2, 3, 4]);
    assert_eq!(p.strides, vec![8, 16, 48]);
    let (obj, refs) = array(VectorData::Complex(vec![0.0; 12].into()), &[2, 3], None);
    let p = TensorParts::of(&obj, &refs).unwrap();
    assert_eq!((p.shape, p.strides), (vec![2, 3, 2], vec![16, 32, 8]));
}

#[test]
fn gathering_puts_any_order_in_r_s() {
    // row-major 2 x 3 of 0..6 is R's c(0, 3, 1, 4, 2, 5)
    let src: Vec<u8> = (0u8..6).collect();
    let mut out = vec![0u8; 6];
    gather(&src, 1, &[2, 3], &[3, 1], &mut out);
    assert_eq!(out, vec![0, 3, 1, 4, 2, 5]);
}

#[test]
fn damaged_headers_are_errors() {
    let (obj, refs) = array(VectorData::Real(vec![1.0; 6].into()), &[2, 3], None);
    let good = message(&obj, &refs);
    for (bytes, why) in [
        (good[..5].to_vec(), "8-byte prefix"),
        (good[..40].to_vec(), "does not fit"),
        (good[..good.len() - 8].to_vec(), "truncated"),
    ] {
        let e = read_tensor(&bytes.as_slice(), "x", 1 << 20).unwrap_err();
        assert!(e.message.contains(why), "{why}: {}", e.message);
    }
    // a shape beyond memory allowed is refused before allocating
    let e = read_tensor(&good.as_slice(), "x", 8).unwrap_err();
    assert!(e.message.contains("more than the 8 bytes"), "{}", e.message);
}
