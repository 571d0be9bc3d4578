//! The parser's unit tests: streams made by hand, read back.

#[cfg(test)]
mod tests {
    use super::super::*;
    use crate::wire::header::Container;
    use crate::{read_bytes, write_document, ErrorKind, ReadOptions};

    /// An XDR version-3 stream header followed by `body` ints.
    fn xdr_stream(body: &[i32]) -> Vec<u8> {
        let mut out = crate::write::Output::new(Vec::new(), crate::Format::Xdr, false);
        crate::wire::header::write_header(
            &mut out,
            Container::Stream,
            &StreamHeader::utf8_v3(crate::Format::Xdr),
        )
        .unwrap();
        let mut v = out.finish().unwrap();
        for i in body {
            v.extend(i.to_be_bytes());
        }
        v
    }

    fn parse(bytes: Vec<u8>) -> crate::Result<crate::Document> {
        read_bytes(bytes, &ReadOptions::default())
    }

    #[test]
    fn integer_vector_with_attribute_round_trips() {
        // c(a = 1L, b = NA) : INTSXP with a names attribute
        let mut body = vec![13 | (1 << 9), 2, 1, i32::MIN];
        body.extend([2 | (1 << 10), 1, 9 | (64 << 12), 5]); // LISTSXP, tag SYMSXP, CHARSXP "names"
        let mut bytes = xdr_stream(&body);
        bytes.extend(b"names");
        for i in [16, 2, 9 | (64 << 12), 1] {
            bytes.extend((i as i32).to_be_bytes());
        }
        bytes.extend(b"a");
        for i in [9 | (64 << 12), 1] {
            bytes.extend((i as i32).to_be_bytes());
        }
        bytes.extend(b"b");
        bytes.extend(254i32.to_be_bytes());
        let doc = parse(bytes.clone()).unwrap();
        match &doc.root {
            RObject::Vector(v) => match &v.data {
                VectorData::Integer(x) => assert_eq!(&x[..], &[1, i32::MIN]),
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
        let names = doc
            .root
            .attribute(&doc.refs, "names")
            .unwrap()
            .as_strings()
            .unwrap();
        assert_eq!(names.get(1), Some(&b"b"[..]));
        assert_eq!(write_document(&doc, Vec::new()).unwrap(), bytes);
    }

    /// Memory a test consumer gives: a heap block it owns.
    struct Block(#[allow(dead_code)] Vec<u64>);

    /// A consumer that gives its own memory for every payload.
    struct Giver;

    impl Consumer for Giver {
        fn takes_columns(&self) -> bool {
            false
        }
        fn allocate(&self, sxptype: u8, len: u64) -> Option<Allocation> {
            let bytes = (len * sxp::atomic_width(sxptype)?) as usize;
            let mut block = vec![0u64; bytes.div_ceil(8).max(1)];
            let ptr = std::ptr::NonNull::new(block.as_mut_ptr() as *mut u8).unwrap();
            // SAFETY: the block is moved into the allocation (its heap
            // memory does not move) and has room for `bytes`
            Some(unsafe { Allocation::new(ptr, bytes, Block(block)) })
        }
    }

    #[test]
    fn payloads_are_decoded_into_the_consumers_memory() {
        // list(1:3, structure(c(1.5, 2.5), dim = 2:1), as.raw(c(7, 9)))
        let mut b = xdr_stream(&[19, 3, 13, 3, 1, 2, 3]);
        let int = |b: &mut Vec<u8>, x: i32| b.extend(x.to_be_bytes());
        int(&mut b, 14 | (1 << 9));
        int(&mut b, 2);
        b.extend(1.5f64.to_be_bytes());
        b.extend(2.5f64.to_be_bytes());
        for x in [2 | (1 << 10), 1, 9 | (64 << 12), 3] {
            int(&mut b, x);
        }
        b.extend(b"dim");
        for x in [13, 2, 2, 1, 254, 24, 2] {
            int(&mut b, x);
        }
        b.extend([7u8, 9]);
        let opts = ReadOptions {
            consumer: Some(std::sync::Arc::new(Giver)),
            ..Default::default()
        };
        let doc = read_bytes(b.clone(), &opts).unwrap();
        let RObject::Vector(list) = &doc.root else {
            panic!()
        };
        let VectorData::List(items) = &list.data else {
            panic!()
        };
        let payload = |i: usize| match &items[i] {
            RObject::Vector(v) => match &v.data {
                VectorData::Consumed(c) => {
                    assert!(c.value::<Block>().is_some());
                    c.payload().unwrap()
                }
                other => panic!("not in the consumer's memory: {other:?}"),
            },
            other => panic!("{other:?}"),
        };
        assert!(matches!(payload(0), VectorData::Integer(x) if x[..] == [1, 2, 3]));
        assert!(matches!(payload(1), VectorData::Real(x) if x[..] == [1.5, 2.5]));
        assert!(matches!(payload(2), VectorData::Raw(x) if x[..] == [7, 9]));
        // an attribute's vector stays in the tree's own buffers
        let dim = items[1].attribute(&doc.refs, "dim").unwrap();
        assert!(
            matches!(dim, RObject::Vector(v) if matches!(&v.data, VectorData::Integer(x) if x[..] == [2, 1]))
        );
        // a clone reads the memory but is not the consumer's
        let copy = items[0].clone();
        assert!(
            matches!(&copy, RObject::Vector(v) if matches!(&v.data, VectorData::Integer(x) if x[..] == [1, 2, 3]))
        );
        // and the tree writes back as it was read
        assert_eq!(write_document(&doc, Vec::new()).unwrap(), b);
    }

    #[test]
    fn reference_past_the_table_is_an_error() {
        let err = parse(xdr_stream(&[255 | (99 << 8)])).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Corrupt);
        assert!(err.to_string().contains("reference index 99"), "{err}");
        assert!(err.offset.is_some());
    }

    #[test]
    fn huge_declared_length_fails_before_allocating() {
        // a long vector of 2^40 doubles with 8 bytes behind it
        let err = parse(xdr_stream(&[14, -1, 256, 0, 0, 0])).unwrap_err();
        assert!(
            matches!(err.kind, ErrorKind::Truncated | ErrorKind::Limit),
            "{err}"
        );
        // within the memory limit, still refused: the bytes are not there
        let err = parse(xdr_stream(&[14, 1 << 24, 0, 0])).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Truncated, "{err}");
    }

    #[test]
    fn nesting_is_bounded() {
        let mut body = Vec::new();
        for _ in 0..100 {
            body.extend([19, 1]); // list of one element
        }
        body.push(254);
        let err = read_bytes(
            xdr_stream(&body),
            &ReadOptions {
                max_depth: 50,
                ..Default::default()
            },
        )
        .unwrap_err();
        assert_eq!(err.kind, ErrorKind::Limit);
        assert!(parse(xdr_stream(&body)).is_ok());
    }

    #[test]
    fn nesting_fits_its_stack_budget() {
        // list(pairlist(list(pairlist(...)))): lists and pairlists in
        // turn, the reader's two recursions, on a stack of exactly the
        // budget for their depth (debug builds use far more stack)
        if cfg!(debug_assertions) {
            return;
        }
        let depth = 2000;
        let mut body = Vec::new();
        for _ in 0..depth / 2 {
            body.extend([19, 1, 2]); // a list of one pairlist cell, whose car is next
        }
        body.push(254);
        body.extend(std::iter::repeat_n(254, depth / 2)); // the cells' CDRs
        let bytes = xdr_stream(&body);
        let opts = ReadOptions {
            max_depth: depth + 10,
            parse_here: true,
            ..Default::default()
        };
        let r = std::thread::Builder::new()
            .stack_size(depth * STACK_PER_LEVEL + (64 << 10))
            .spawn(move || read_bytes(bytes, &opts).map(|d| d.root))
            .unwrap()
            .join()
            .unwrap();
        // overflowing the stack would have aborted the process
        let mut root = r.unwrap();
        for _ in 0..depth / 2 {
            let RObject::Vector(v) = root else { panic!() };
            let VectorData::List(mut items) = v.data else {
                panic!()
            };
            let RObject::Pairlist(p) = items.pop().unwrap() else {
                panic!()
            };
            root = p.cells.into_iter().next().unwrap().car;
        }
        assert!(matches!(root, RObject::Null));
    }

    #[test]
    fn environment_cycles_resolve_through_the_table() {
        // e <- new.env(); e$self <- e
        let mut bytes = xdr_stream(&[4, 0, 253, 2 | (1 << 10), 1, 9 | (64 << 12), 4]);
        bytes.extend(b"self");
        for i in [255 | (1 << 8), 254, 254, 254] {
            bytes.extend((i as i32).to_be_bytes());
        }
        let doc = parse(bytes.clone()).unwrap();
        match doc.refs.get(RefId(0)) {
            Some(RefEntry::Environment(e)) => {
                assert!(matches!(
                    e.enclosure,
                    RObject::Special(SpecialValue::GlobalEnv)
                ));
                let frame = crate::tree::pairlist_entries(&e.frame, &doc.refs);
                assert_eq!(frame[0].0, Some(&b"self"[..]));
                assert!(matches!(frame[0].1, RObject::Ref(RefId(0))));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(write_document(&doc, Vec::new()).unwrap(), bytes);
    }

    #[test]
    fn not_r_data_is_recognised() {
        assert_eq!(
            parse(b"a,b\n1,2\n".to_vec()).unwrap_err().kind,
            ErrorKind::NotRData
        );
        assert_eq!(
            parse(b"\x89PNG\r\n\x1a\n".to_vec()).unwrap_err().kind,
            ErrorKind::NotRData
        );
        assert_eq!(parse(Vec::new()).unwrap_err().kind, ErrorKind::NotRData);
    }

    #[test]
    fn truncation_is_reported_with_offset() {
        let mut bytes = xdr_stream(&[13, 4, 1, 2]);
        bytes.truncate(bytes.len() - 2);
        let err = parse(bytes).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Truncated);
        assert!(err.offset.is_some());
    }
}
