//! Columns converted while their file is still being read: the parser's
//! hook turns each column of a top-level list into its Arrow array, kept
//! in the tree in place of the column's R payload
//! ([`VectorData::Consumed`] holding a [`ConvertedColumn`]), where the
//! table conversion finds it.

use crate::metadata::converted::ConvertedColumn;
use crate::to_arrow::column::take_payload;
use crate::to_arrow::column::Converter;
use crate::metadata::strings::KeptStrings;
use crate::metadata::na_bits::NaBits;
use rdarrow_format::tree::*;
use std::sync::Arc;

/// Converts columns while their file is still being read. The parser
/// hands each column of a top-level list (a data frame's columns) to the
/// hook from `EarlyColumns::consumer`, on the parsing thread, which otherwise
/// waits for the decompressor: the column becomes its Arrow array at once
/// and its R payload is released (a logical vector's 32-bit values, a
/// Date's doubles, a factor's codes are never all held beside the table).
/// The column's node keeps its attributes (the schema metadata needs
/// them); the table conversion takes the array instead of converting
/// again.
#[derive(Debug)]
pub struct EarlyColumns {
    default_tz: Option<String>,
    time_unit: Option<arrow_schema::TimeUnit>,
}

impl EarlyColumns {
    /// `default_tz` as in [`super::TableOptions::default_tz`].
    pub fn new(default_tz: Option<String>) -> Arc<Self> {
        Self::with_unit(default_tz, None)
    }

    /// `default_tz` and `time_unit` as in [`super::TableOptions`].
    pub fn with_unit(
        default_tz: Option<String>,
        time_unit: Option<arrow_schema::TimeUnit>,
    ) -> Arc<Self> {
        Arc::new(EarlyColumns {
            default_tz,
            time_unit,
        })
    }

    /// As the reader's consumer ([`rdarrow_format::ReadOptions::consumer`]).
    pub fn consumer(self: &Arc<Self>) -> Arc<dyn rdarrow_format::Consumer> {
        self.clone()
    }

    fn convert(&self, obj: &mut RObject, refs: &RefTable, header: &rdarrow_format::StreamHeader) {
        let conv =
            Converter::while_reading(refs, header, self.default_tz.as_deref(), self.time_unit);
        // data-frame columns convert with their parent
        if obj.inherits(refs, "data.frame") {
            return;
        }
        // a matrix is a fixed-size list column in a data frame but keeps
        // its values in a list: its parent decides
        if crate::mapping::objects::matrix_dims(obj, refs).is_some() {
            return;
        }
        let native = header.native_encoding.as_deref();
        match obj {
            RObject::Altrep(_) => {
                // a compact sequence or wrapper: expanded and converted now;
                // the node becomes a vector holding the array, with the
                // ALTREP node's attributes
                let (sxptype, len) = (obj.sxptype(refs), obj.vector_len(refs));
                let strings = KeptStrings::of_object(obj, refs, native);
                let result = conv.column(obj, "");
                let RObject::Altrep(a) = std::mem::replace(obj, RObject::Null) else {
                    return;
                };
                let attributes = match a.attributes {
                    RObject::Null => None,
                    other => Some(other),
                };
                let data = VectorData::Consumed(Consumed::new(
                    sxptype,
                    len,
                    ConvertedColumn {
                        result,
                        strings,
                        na_bits: None,
                    },
                ));
                *obj = RObject::Vector(Box::new(Vector {
                    flags: a.flags,
                    data,
                    attributes,
                }));
            }
            RObject::Vector(_) => {
                // list columns convert with their parent
                let strings = KeptStrings::of_object(obj, refs, native);
                let Some(payload) = take_payload(obj) else {
                    return;
                };
                let (sxptype, len) = (payload.sxptype(), payload.len());
                let na_bits = NaBits::of_object(obj, &payload, refs);
                let result = conv.column_with(obj, Some(payload), "");
                if let RObject::Vector(v) = obj {
                    v.data = VectorData::Consumed(Consumed::new(
                        sxptype,
                        len,
                        ConvertedColumn {
                            result,
                            strings,
                            na_bits,
                        },
                    ));
                }
            }
            _ => {}
        }
    }
}

/// Each column converts as soon as it is read; payloads are decoded into
/// the tree's buffers, which the arrays then wrap.
impl rdarrow_format::Consumer for EarlyColumns {
    fn column(&self, column: rdarrow_format::Column<'_>) {
        self.convert(column.object, column.refs, column.header)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use arrow_schema::DataType;
    use crate::to_arrow::table::tests::wide_doc;
    use crate::to_arrow::table::table_from_object;
    use crate::to_arrow::table::table_from_owned;
    use crate::to_arrow::options::ColumnRef;
    use crate::to_arrow::options::TableOptions;
    use crate::to_arrow::table::PARALLEL_ROWS;
    use super::*;

    #[test]
    fn columns_converted_while_reading_give_the_same_table() {
        let units = [None, Some(arrow_schema::TimeUnit::Nanosecond)];
        for (n, time_unit) in [7, PARALLEL_ROWS + 1].into_iter().zip(units) {
            let doc = wide_doc(n);
            let bytes = rdarrow_format::write_document(&doc, Vec::new()).unwrap();
            let opts = TableOptions {
                time_unit,
                ..Default::default()
            };
            let expected = table_from_object(&doc, &doc.root, &opts).unwrap();
            if time_unit.is_some() {
                // every POSIXct column in the one unit asked for
                assert!(expected.schema.fields().iter().any(|f| matches!(
                    f.data_type(),
                    DataType::Timestamp(arrow_schema::TimeUnit::Nanosecond, _)
                )));
            }

            let early = EarlyColumns::with_unit(None, time_unit);
            let read_opts = rdarrow_format::ReadOptions {
                consumer: Some(early.consumer()),
                ..Default::default()
            };
            let mut read = rdarrow_format::read_bytes(bytes, &read_opts).unwrap();
            // every column was converted and its payload released while reading
            match &read.root {
                RObject::Vector(v) => match &v.data {
                    VectorData::List(items) => assert!(items.iter().all(|c| matches!(c, RObject::Vector(v) if ConvertedColumn::of(&v.data).is_some()))),
                    _ => unreachable!(),
                },
                _ => unreachable!(),
            }
            // the object moves (as take_table_object moves it): its columns
            // hold their arrays
            let root = std::mem::replace(&mut read.root, RObject::Null);
            let got = table_from_owned(&read, root, &opts).unwrap();
            assert_eq!(got.schema, expected.schema);
            assert_eq!(got.batches, expected.batches);

            // a selection that repeats a column, on a read with the hook
            let early = EarlyColumns::new(None);
            let read_opts = rdarrow_format::ReadOptions {
                consumer: Some(early.consumer()),
                ..Default::default()
            };
            let mut read =
                rdarrow_format::read_bytes(rdarrow_format::write_document(&doc, Vec::new()).unwrap(), &read_opts)
                    .unwrap();
            let root = std::mem::replace(&mut read.root, RObject::Null);
            let col_select = Some(vec![
                ColumnRef::Name("group".into()),
                ColumnRef::Position(1),
                ColumnRef::Name("group".into()),
            ]);
            let want = table_from_object(
                &doc,
                &doc.root,
                &TableOptions {
                    col_select: col_select.clone(),
                    ..Default::default()
                },
            )
            .unwrap();
            let got = table_from_owned(
                &read,
                root,
                &TableOptions {
                    col_select,
                    ..Default::default()
                },
            )
            .unwrap();
            assert_eq!(got.batches, want.batches);
        }
    }

    /// A compact sequence 1..n (an ALTREP node) of base type `base`.
    pub(crate) fn compact_seq(
        m: &mut rdarrow_format::tree::make::ObjectMaker,
        class: &str,
        base: u8,
        n: usize,
        attributes: RObject,
    ) -> RObject {
        let cell = |car| Cell {
            sxptype: sxp::LIST,
            flags: Flags::default(),
            attributes: None,
            tag: None,
            car,
        };
        let cells = vec![
            cell(m.symbol(class)),
            cell(m.symbol("base")),
            cell(rdarrow_format::tree::make::ints(vec![base as i32])),
        ];
        let info = RObject::Pairlist(Box::new(Pairlist {
            cells,
            tail: RObject::Null,
        }));
        let object = !matches!(attributes, RObject::Null);
        let state = rdarrow_format::tree::make::reals(vec![n as f64, 1.0, 1.0]);
        RObject::Altrep(Box::new(Altrep {
            flags: Flags { levels: 0, object },
            info,
            state,
            attributes,
        }))
    }

    #[test]
    fn compact_sequences_converted_while_reading_keep_their_attributes() {
        let n = 50;
        let mut m = rdarrow_format::tree::make::ObjectMaker::default();
        let id = compact_seq(&mut m, "compact_intseq", sxp::INT, n, RObject::Null);
        let class = m
            .tagged_pairlist(vec![("class", rdarrow_format::tree::make::strings([Some(&b"Date"[..])]))])
            .unwrap();
        let day = compact_seq(&mut m, "compact_realseq", sxp::REAL, n, class);
        let names = rdarrow_format::tree::make::strings([Some(&b"id"[..]), Some(&b"day"[..])]);
        let frame_class = rdarrow_format::tree::make::strings([Some(&b"data.frame"[..])]);
        let row_names = rdarrow_format::tree::make::ints(vec![na::INTEGER, -(n as i32)]);
        let df = m.vector(
            VectorData::List(vec![id, day]),
            vec![
                ("names", names),
                ("class", frame_class),
                ("row.names", row_names),
            ],
        );
        let doc = crate::to_arrow::table::tests::doc_of(m, df);
        let expected = table_from_object(&doc, &doc.root, &TableOptions::default()).unwrap();
        let types: Vec<String> = expected
            .schema
            .fields()
            .iter()
            .map(|f| f.data_type().to_string())
            .collect();
        assert_eq!(types, ["Int32", "Date32"]);

        let early = EarlyColumns::new(None);
        let read_opts = rdarrow_format::ReadOptions {
            consumer: Some(early.consumer()),
            ..Default::default()
        };
        let mut read =
            rdarrow_format::read_bytes(rdarrow_format::write_document(&doc, Vec::new()).unwrap(), &read_opts)
                .unwrap();
        let root = std::mem::replace(&mut read.root, RObject::Null);
        match &root {
            RObject::Vector(v) => match &v.data {
                VectorData::List(items) => {
                    assert!(items.iter().all(|c| matches!(c, RObject::Vector(v) if ConvertedColumn::of(&v.data).is_some())));
                    assert!(items[1].inherits(&read.refs, "Date"));
                    assert_eq!(
                        (
                            items[1].sxptype(&read.refs),
                            items[1].vector_len(&read.refs)
                        ),
                        (sxp::REAL, n as u64)
                    );
                }
                _ => unreachable!(),
            },
            _ => unreachable!(),
        }
        let got = table_from_owned(&read, root, &TableOptions::default()).unwrap();
        assert_eq!(got.schema, expected.schema);
        assert_eq!(got.batches, expected.batches);
    }
}
