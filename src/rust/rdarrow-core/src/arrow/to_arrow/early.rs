//! Columns converted while their file is still being read: the parser's
//! hook turns each column of a top-level list into its Arrow array at
//! once, and the table conversion takes the array.

use super::column::{take_payload, Converter};
use crate::error::Result;
use crate::tree::*;
use arrow_array::ArrayRef;
use arrow_schema::DataType;
use std::collections::HashMap;
use std::sync::Arc;

/// Columns converted while their file is still being read. The parser
/// hands each column of a top-level list (a data frame's columns) to the
/// hook from [`EarlyColumns::hook`], on the parsing thread, which otherwise
/// waits for the decompressor: the column becomes its Arrow array at once
/// and its R payload is released (a logical vector's 32-bit values, a
/// Date's doubles, a factor's codes are never all held beside the table).
/// The table conversion then takes the array instead of converting again.
pub struct EarlyColumns {
    default_tz: Option<String>,
    done: std::sync::Mutex<HashMap<usize, Result<(DataType, ArrayRef)>>>,
}

impl std::fmt::Debug for EarlyColumns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EarlyColumns").field("default_tz", &self.default_tz).finish()
    }
}

impl EarlyColumns {
    /// `default_tz` as in [`super::TableOptions::default_tz`].
    pub fn new(default_tz: Option<String>) -> Arc<Self> {
        Arc::new(EarlyColumns { default_tz, done: std::sync::Mutex::new(HashMap::new()) })
    }

    /// The parser's hook ([`crate::ReadOptions::column_hook`]).
    pub fn hook(self: &Arc<Self>) -> crate::ColumnHook {
        let me = self.clone();
        Arc::new(move |obj: &mut RObject, refs: &RefTable, header: &crate::StreamHeader| me.convert(obj, refs, header))
    }

    fn convert(&self, obj: &mut RObject, refs: &RefTable, header: &crate::StreamHeader) {
        let conv = Converter::while_reading(refs, header, self.default_tz.as_deref());
        if let RObject::Altrep(a) = obj {
            // a compact sequence or wrapper: expanded and converted now (its
            // node stays, for the table's row count and metadata)
            let attrs = match &a.attributes {
                RObject::Null => None,
                other => Some(other),
            };
            if class_attr_of(attrs, refs).iter().any(|c| c == "data.frame") {
                return;
            }
            let result = conv.column(obj, "");
            self.done.lock().unwrap_or_else(|e| e.into_inner()).insert(object_key(obj), result);
            return;
        }
        let RObject::Vector(v) = obj else { return };
        if class_attr_of(v.attributes.as_ref(), refs).iter().any(|c| c == "data.frame") {
            return;
        }
        // list and data-frame columns convert with their parent
        let Some(payload) = take_payload(obj) else { return };
        let result = conv.column_with(obj, Some(payload), "");
        self.done.lock().unwrap_or_else(|e| e.into_inner()).insert(object_key(obj), result);
    }

    /// The array made from this column while reading, if any.
    pub(super) fn take(&self, obj: &RObject) -> Option<Result<(DataType, ArrayRef)>> {
        self.done.lock().unwrap_or_else(|e| e.into_inner()).remove(&object_key(obj))
    }
}

/// Where a vector or ALTREP node lives (it stays there while the object
/// moves); 0 for anything else.
fn object_key(obj: &RObject) -> usize {
    match obj {
        RObject::Vector(v) => &**v as *const Vector as usize,
        RObject::Altrep(a) => &**a as *const Altrep as usize,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::super::table::tests::wide_doc;
    use super::super::table::{table_from_object, table_from_owned, ColumnRef, TableOptions, PARALLEL_ROWS};
    use super::*;

    #[test]
    fn columns_converted_while_reading_give_the_same_table() {
        for n in [7, PARALLEL_ROWS + 1] {
            let doc = wide_doc(n);
            let bytes = crate::write_document(&doc, Vec::new()).unwrap();
            let expected = table_from_object(&doc, &doc.root, &TableOptions::default()).unwrap();

            let early = EarlyColumns::new(None);
            let read_opts = crate::ReadOptions { column_hook: Some(early.hook()), ..Default::default() };
            let mut read = crate::read_bytes(bytes, &read_opts).unwrap();
            // every column was converted and its payload released while reading
            match &read.root {
                RObject::Vector(v) => match &v.data {
                    VectorData::List(items) => assert!(items.iter().all(|c| matches!(c, RObject::Vector(v) if matches!(v.data, VectorData::Skipped { .. })))),
                    _ => unreachable!(),
                },
                _ => unreachable!(),
            }
            // the object moves (as take_object_named moves it): its columns
            // are found by where they live
            let root = std::mem::replace(&mut read.root, RObject::Null);
            let opts = TableOptions { early_columns: Some(early.clone()), ..Default::default() };
            let got = table_from_owned(&read, root, &opts).unwrap();
            assert_eq!(got.schema, expected.schema);
            assert_eq!(got.batches, expected.batches);

            // a selection that repeats a column, on a read with the hook
            let early = EarlyColumns::new(None);
            let read_opts = crate::ReadOptions { column_hook: Some(early.hook()), ..Default::default() };
            let mut read = crate::read_bytes(crate::write_document(&doc, Vec::new()).unwrap(), &read_opts).unwrap();
            let root = std::mem::replace(&mut read.root, RObject::Null);
            let col_select = Some(vec![ColumnRef::Name("group".into()), ColumnRef::Position(1), ColumnRef::Name("group".into())]);
            let want = table_from_object(&doc, &doc.root, &TableOptions { col_select: col_select.clone(), ..Default::default() }).unwrap();
            let got = table_from_owned(&read, root, &TableOptions { col_select, early_columns: Some(early), ..Default::default() }).unwrap();
            assert_eq!(got.batches, want.batches);
        }
    }
}
