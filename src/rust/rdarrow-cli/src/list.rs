//! `rdarrow ls`: the objects of R data files.

use clap::Args;
use rdarrow_arrow::ReadOptions;
use std::io::Write;
use std::path::PathBuf;
use crate::failure::*;

#[derive(Args)]
pub(crate) struct LsArgs {
    /// The R data files (.RData/.rda/.rds/.qs/.qs2/.qdata/.fst, told by their bytes): paths, URLs, directories or glob patterns (** across folders); several get a file column
    #[arg(required = true, value_name = "FILE")]
    pub(crate) files: Vec<PathBuf>,
    /// Print a JSON array instead of a table
    #[arg(long)]
    pub(crate) json: bool,
    /// List what lists hold too, each named by its object path (lst$a, lst[[2]])
    #[arg(short, long)]
    pub(crate) recursive: bool,
}

pub(crate) fn ls(a: LsArgs, read: &ReadOptions) -> Outcome {
    let files = expand_all(&a.files, read)?;
    let several = files.len() > 1;
    let mut infos = Vec::new();
    let mut of_file = Vec::new();
    for file in &files {
        // a small file is read on this thread, as the engine rules
        let (doc, listed) = rdarrow_arrow::read_small_here_or(file, read, |opts| {
            rdarrow_arrow::list_file(file, opts, &stream_name(file), a.recursive)
        })
        .map_err(|e| data_error(file, e))?;
        if let Some(damage) = &doc.damage {
            warn(file, damage);
        }
        of_file.extend(std::iter::repeat_n(file.display().to_string(), listed.len()));
        infos.extend(listed);
    }
    let num = |x: f64| {
        if x.fract() == 0.0 && x.abs() < 9.0e15 {
            format!("{}", x as i64)
        } else {
            format!("{x}")
        }
    };
    let mut out = std::io::stdout().lock();
    let res = if a.json {
        // one object per row, its keys in this order (as pretty JSON)
        let opt = |x: Option<f64>| x.map(|v| serde_json::json!(v as i64)).unwrap_or_default();
        let rows: Vec<String> = infos
            .iter()
            .zip(&of_file)
            .map(|(i, file)| {
                let mut fields = vec![
                    ("name", serde_json::json!(i.name)),
                    ("class", serde_json::json!(i.class)),
                    ("type", serde_json::json!(i.type_name)),
                    ("length", opt(i.length)),
                    ("rows", opt(i.nrow)),
                    ("columns", opt(i.ncol)),
                    (
                        "bytes",
                        i.bytes.map(serde_json::Value::from).unwrap_or_default(),
                    ),
                ];
                if several {
                    fields.insert(0, ("file", serde_json::json!(file)));
                }
                let body: Vec<String> = fields
                    .iter()
                    .map(|(k, v)| format!("    \"{k}\": {v}"))
                    .collect();
                format!("  {{\n{}\n  }}", body.join(",\n"))
            })
            .collect();
        let text = if rows.is_empty() {
            "[]".to_string()
        } else {
            format!("[\n{}\n]", rows.join(",\n"))
        };
        writeln!(out, "{text}")
    } else {
        let mut header = vec![
            "name", "class", "type", "length", "rows", "columns", "bytes",
        ];
        if several {
            header.insert(0, "file");
        }
        // the first column of numbers, right-aligned
        let numbers = header.len() - 4;
        let dash = |x: Option<f64>| x.map(num).unwrap_or_else(|| "-".to_string());
        let rows: Vec<Vec<String>> = infos
            .iter()
            .zip(&of_file)
            .map(|(i, file)| {
                let mut row = vec![
                    i.name.clone(),
                    i.class.clone(),
                    i.type_name.clone(),
                    dash(i.length),
                    dash(i.nrow),
                    dash(i.ncol),
                    i.bytes.map_or_else(|| "-".to_string(), |b| b.to_string()),
                ];
                if several {
                    row.insert(0, file.clone());
                }
                row
            })
            .collect();
        let mut width: Vec<usize> = header.iter().map(|h| h.len()).collect();
        for r in &rows {
            for (w, c) in width.iter_mut().zip(r) {
                *w = (*w).max(c.chars().count());
            }
        }
        let line = |cells: &[String]| -> String {
            let mut s = String::new();
            for (k, c) in cells.iter().enumerate() {
                let pad = width[k] - c.chars().count();
                if k > 0 {
                    s.push_str("  ");
                }
                if k >= numbers {
                    s.push_str(&" ".repeat(pad));
                    s.push_str(c);
                } else {
                    s.push_str(c);
                    if k + 1 < cells.len() {
                        s.push_str(&" ".repeat(pad));
                    }
                }
            }
            s
        };
        let header: Vec<String> = header.into_iter().map(String::from).collect();
        let mut text = line(&header);
        text.push('\n');
        for r in &rows {
            text.push_str(&line(r));
            text.push('\n');
        }
        out.write_all(text.as_bytes())
    };
    res.and_then(|_| out.flush())
        .map_err(|e| Failure::Data(format!("cannot write the listing: {e}")))
}
