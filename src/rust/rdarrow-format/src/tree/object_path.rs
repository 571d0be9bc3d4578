//! Object paths: a place inside a file's objects, so that a data frame or
//! vector nested in lists or in S4 objects' slots is reached as a
//! top-level object is. Written as R users write it, `lst$a`, `lst[[2]]`,
//! `lst$a$b`, `` `a b`$c ``, `lst[["a"]]`, `pbmc@assays$RNA@counts`, or
//! given as parts (`c("lst", "a")` in R, `("lst", 2)` in Python). A name that a top-level object has as it stands is that
//! object, whatever characters it holds; otherwise it is read as a path.
//! Positions count from 1, as in R.

use crate::base::error::{Error, Result};
use crate::tree::{RObject, RefTable, VectorData};

/// One step into a list: by name or by position (from 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// `$name` or `[["name"]]`.
    Name(String),
    /// `[[i]]` (from 1).
    Position(usize),
    /// `@slot`: a slot of an S4 object.
    Slot(String),
}

/// A top-level object and the steps into its nested lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectPath {
    /// The top-level object.
    pub top: String,
    /// The steps into it.
    pub steps: Vec<Step>,
}

impl ObjectPath {
    /// A top-level object.
    pub fn top(name: &str) -> ObjectPath {
        ObjectPath {
            top: name.to_string(),
            steps: Vec::new(),
        }
    }

    /// Read `lst$a[[2]]`: names after `$` (in backticks when they are
    /// not syntactic), positions or quoted names in `[[ ]]`, slots after
    /// `@`.
    pub fn parse(s: &str) -> Result<ObjectPath> {
        let bad = |why: &str| Error::usage(format!("object path '{s}': {why}"));
        let mut rest = s;
        let top = take_name(&mut rest).ok_or_else(|| bad("it does not start with a name"))?;
        let mut steps = Vec::new();
        while !rest.is_empty() {
            if let Some(r) = rest.strip_prefix('$') {
                rest = r;
                let name = take_name(&mut rest).ok_or_else(|| bad("a name must follow '$'"))?;
                steps.push(Step::Name(name));
            } else if let Some(r) = rest.strip_prefix('@') {
                rest = r;
                let name =
                    take_name(&mut rest).ok_or_else(|| bad("a slot's name must follow '@'"))?;
                steps.push(Step::Slot(name));
            } else if let Some(r) = rest.strip_prefix("[[") {
                let end = r.find("]]").ok_or_else(|| bad("'[[' without ']]'"))?;
                let inner = r[..end].trim();
                rest = &r[end + 2..];
                let step = if let Some(q) = inner
                    .strip_prefix('"')
                    .and_then(|q| q.strip_suffix('"'))
                    .or_else(|| inner.strip_prefix('\'').and_then(|q| q.strip_suffix('\'')))
                {
                    Step::Name(q.to_string())
                } else {
                    let n: usize = inner
                        .trim_end_matches('L')
                        .parse()
                        .map_err(|_| bad("'[[ ]]' holds a position (from 1) or a quoted name"))?;
                    if n == 0 {
                        return Err(bad("positions count from 1"));
                    }
                    Step::Position(n)
                };
                steps.push(step);
            } else {
                return Err(bad("expected '$', '@' or '[[' after a name"));
            }
        }
        Ok(ObjectPath { top, steps })
    }

    /// `s` as an object path into a list (`lst$a`), or `None` for a plain
    /// name (or text that is not a path).
    pub fn nested(s: &str) -> Option<ObjectPath> {
        ObjectPath::parse(s).ok().filter(|p| !p.steps.is_empty())
    }

    /// The path as R code would write it.
    pub fn display(&self) -> String {
        let mut s = quote_name(&self.top);
        for step in &self.steps {
            match step {
                Step::Name(n) => {
                    s.push('$');
                    s.push_str(&quote_name(n));
                }
                Step::Position(i) => s.push_str(&format!("[[{i}]]")),
                Step::Slot(n) => {
                    s.push('@');
                    s.push_str(&quote_name(n));
                }
            }
        }
        s
    }

    /// The element the steps lead to inside `obj`, with the error (what
    /// exists at the deepest level reached) when there is none.
    pub fn find<'o>(&self, obj: &'o RObject, refs: &RefTable) -> Result<&'o RObject> {
        let mut cur = obj;
        let mut at = ObjectPath::top(&self.top);
        for step in &self.steps {
            if let Step::Slot(n) = step {
                cur = slot(cur, n, &at, refs)?;
                at.steps.push(step.clone());
                continue;
            }
            if !matches!(cur, RObject::Vector(v) if matches!(v.data, VectorData::List(_))) {
                return Err(not_a_list(&at, step, cur, refs));
            }
            let entries = crate::tree::list_entries(cur, refs);
            let names: Vec<String> = entries.iter().map(|(n, _)| n.clone()).collect();
            let items: Vec<&RObject> = entries.iter().map(|(_, v)| *v).collect();
            let k = match step {
                Step::Position(i) => {
                    if *i > items.len() {
                        return Err(Error::usage(format!(
                            "'{}' has {} elements, not {i}",
                            at.display(),
                            items.len()
                        )));
                    }
                    i - 1
                }
                Step::Slot(_) => unreachable!("slots are taken above"),
                Step::Name(n) => names.iter().position(|x| x == n).ok_or_else(|| {
                    let mut missing = at.clone();
                    missing.steps.push(step.clone());
                    Error::usage(format!(
                        "'{}' not found: '{}' holds {}",
                        missing.display(),
                        at.display(),
                        holding(&names, items.len())
                    ))
                })?,
            };
            cur = items[k];
            at.steps.push(step.clone());
        }
        Ok(cur)
    }
}

/// A slot's `NULL` (R keeps it as a symbol of that name).
static NULL_SLOT: RObject = RObject::Null;

/// The slots of an S4 object (its attributes but its class), `None` for
/// an object that is not one.
pub fn slots<'o>(obj: &'o RObject, refs: &RefTable) -> Option<Vec<(String, &'o RObject)>> {
    let attrs = match obj {
        RObject::S4(s) => s.attributes.as_ref(),
        RObject::Vector(v) if v.flags.levels & crate::tree::levels::S4_OBJECT != 0 => {
            v.attributes.as_ref()
        }
        _ => return None,
    };
    let Some(RObject::Pairlist(p)) = attrs else {
        return Some(Vec::new());
    };
    Some(
        p.cells
            .iter()
            .filter_map(|c| {
                let Some(RObject::Ref(id)) = &c.tag else {
                    return None;
                };
                let name = refs.symbol_name(*id)?;
                if name == b"class" {
                    return None;
                }
                let null = matches!(&c.car, RObject::Ref(v)
                    if refs.symbol_name(*v) == Some(crate::tree::S4_NULL));
                Some((
                    String::from_utf8_lossy(name).into_owned(),
                    if null { &NULL_SLOT } else { &c.car },
                ))
            })
            .collect(),
    )
}

/// Slot `name` of the S4 object `obj` (at `at`).
fn slot<'o>(obj: &'o RObject, name: &str, at: &ObjectPath, refs: &RefTable) -> Result<&'o RObject> {
    let Some(all) = slots(obj, refs) else {
        let class = obj.class(refs).join("/");
        return Err(Error::usage(format!(
            "'{}' is not an S4 object (its class is {class}): it has no slots",
            at.display()
        )));
    };
    if let Some((_, v)) = all.iter().find(|(n, _)| n == name) {
        return Ok(v);
    }
    let mut missing = at.clone();
    missing.steps.push(Step::Slot(name.to_string()));
    let names: Vec<String> = all.iter().map(|(n, _)| format!("'{n}'")).collect();
    Err(Error::usage(format!(
        "'{}' not found: '{}' (class {}) has the slots {}",
        missing.display(),
        at.display(),
        obj.class(refs).join("/"),
        names.join(", ")
    )))
}

/// The error for a step into something that is not a list: the place
/// asked for, and why it is not there.
fn not_a_list(at: &ObjectPath, step: &Step, obj: &RObject, refs: &RefTable) -> Error {
    let class = obj.class(refs).join("/");
    let mut missing = at.clone();
    missing.steps.push(step.clone());
    Error::usage(format!(
        "'{}' not found: '{}' is not a list (its class is {class}): it has no elements to choose",
        missing.display(),
        at.display()
    ))
}

/// `'a', 'b'` or, without names, how many elements.
fn holding(names: &[String], len: usize) -> String {
    if names.iter().all(|n| n.is_empty()) {
        return format!("{len} elements without names (choose by position, [[1]] to [[{len}]])");
    }
    names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            if n.is_empty() {
                format!("[[{}]]", i + 1)
            } else {
                format!("'{n}'")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A name at the start of `rest` (backticks allowed), moving past it.
fn take_name(rest: &mut &str) -> Option<String> {
    if let Some(r) = rest.strip_prefix('`') {
        let end = r.find('`')?;
        let name = r[..end].to_string();
        *rest = &r[end + 1..];
        return Some(name);
    }
    let end = rest.find(['$', '[', '@']).unwrap_or(rest.len());
    if end == 0 {
        return None;
    }
    let name = rest[..end].to_string();
    *rest = &rest[end..];
    Some(name)
}

/// A name as R code writes it after `$` or `@` (in backticks when it is not
/// syntactic).
pub fn quote_name(n: &str) -> String {
    let syntactic = !n.is_empty()
        && n.chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '.')
        && n.chars()
            .all(|c| c.is_alphanumeric() || c == '.' || c == '_')
        && !(n.starts_with('.') && n.chars().nth(1).is_some_and(|c| c.is_ascii_digit()));
    if syntactic {
        n.to_string()
    } else {
        format!("`{n}`")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_read_as_r_writes_them() {
        let p = ObjectPath::parse("lst$a[[2]]$`b c`[[\"d$e\"]]").unwrap();
        assert_eq!(p.top, "lst");
        assert_eq!(
            p.steps,
            vec![
                Step::Name("a".into()),
                Step::Position(2),
                Step::Name("b c".into()),
                Step::Name("d$e".into())
            ]
        );
        assert_eq!(p.display(), "lst$a[[2]]$`b c`$`d$e`");
        assert_eq!(ObjectPath::parse(&p.display()).unwrap(), p);
        assert_eq!(ObjectPath::parse("x").unwrap(), ObjectPath::top("x"));
        assert_eq!(ObjectPath::parse("`a$b`").unwrap(), ObjectPath::top("a$b"));
        for bad in [
            "",
            "$a",
            "lst$",
            "lst[[0]]",
            "lst[[x]]",
            "lst[[2",
            "lst a$b[1]",
        ] {
            let e = ObjectPath::parse(bad).unwrap_err();
            assert!(e.message.contains("object path"), "{bad}: {}", e.message);
        }
    }

    /// `new("Pt", x = list(a = 1:2), lab = NULL)` as R writes it: slots as
    /// attributes, a NULL slot as R's symbol, the class with its package.
    fn s4_point() -> (RObject, RefTable) {
        use crate::tree::make::{ints, strings, ObjectMaker};
        use crate::tree::{levels, AttrOnly, Flags};
        let mut m = ObjectMaker::default();
        let x = m.named_list(&["a"], vec![ints(vec![1, 2])]);
        let null = m.symbol(&String::from_utf8_lossy(crate::tree::S4_NULL));
        let mut cls = strings([Some(&b"Pt"[..])]);
        if let RObject::Vector(v) = &mut cls {
            v.attributes =
                m.tagged_pairlist(vec![("package", strings([Some(&b".GlobalEnv"[..])]))]);
        }
        let attrs = m.tagged_pairlist(vec![("x", x), ("lab", null), ("class", cls)]);
        let obj = RObject::S4(Box::new(AttrOnly {
            flags: Flags {
                levels: levels::S4_OBJECT,
                object: true,
            },
            attributes: attrs,
        }));
        (obj, m.refs)
    }

    #[test]
    fn slots_are_reached_with_at() {
        let p = ObjectPath::parse("pbmc@assays$RNA@`counts x`").unwrap();
        assert_eq!(
            p.steps,
            vec![
                Step::Slot("assays".into()),
                Step::Name("RNA".into()),
                Step::Slot("counts x".into())
            ]
        );
        assert_eq!(ObjectPath::parse(&p.display()).unwrap(), p);
        assert!(ObjectPath::parse("pt@").is_err());
        let (obj, refs) = s4_point();
        let a = ObjectPath::parse("pt@x$a")
            .unwrap()
            .find(&obj, &refs)
            .unwrap();
        assert!(
            matches!(a, RObject::Vector(v) if matches!(&v.data, VectorData::Integer(x) if x.to_vec() == vec![1, 2]))
        );
        // a NULL slot is NULL, not R's placeholder symbol
        let lab = ObjectPath::parse("pt@lab")
            .unwrap()
            .find(&obj, &refs)
            .unwrap();
        assert!(matches!(lab, RObject::Null));
        let e = ObjectPath::parse("pt@y")
            .unwrap()
            .find(&obj, &refs)
            .unwrap_err();
        assert!(
            e.message.contains("'pt@y' not found") && e.message.contains("'x', 'lab'"),
            "{}",
            e.message
        );
        assert!(!e.message.contains("'class'"));
        let e = ObjectPath::parse("pt@x@a")
            .unwrap()
            .find(&obj, &refs)
            .unwrap_err();
        assert!(
            e.message.contains("'pt@x' is not an S4 object"),
            "{}",
            e.message
        );
        let e = ObjectPath::parse("pt$x")
            .unwrap()
            .find(&obj, &refs)
            .unwrap_err();
        assert!(e.message.contains("is not a list"), "{}", e.message);
    }
}
