//! Whether the physics two runs printed is the same: exact at 2 ranks,
//! within the spread of the stock runs at more ranks (numbers compared
//! token by token, the first difference named).

use super::*;

/// A token as a number, without the punctuation around it.
pub(super) fn number(tok: &str) -> Option<f64> {
    let t = tok.trim_matches(|c: char| ",;:()[]".contains(c));
    if t.is_empty() || !t.chars().any(|c| c.is_ascii_digit()) {
        return None;
    }
    t.parse::<f64>().ok().filter(|x| x.is_finite())
}

/// Same lines, and the same words where they are not numbers.
pub(super) fn same_shape(a: &[String], b: &[String]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            let (fx, fy): (Vec<&str>, Vec<&str>) = (
                x.split_whitespace().collect(),
                y.split_whitespace().collect(),
            );
            fx.len() == fy.len()
                && fx
                    .iter()
                    .zip(&fy)
                    .all(|(p, q)| p == q || (number(p).is_some() && number(q).is_some()))
        })
}

/// Largest relative difference between the numbers of two same-shaped outputs.
pub(super) fn max_rel(a: &[String], b: &[String]) -> f64 {
    let mut m: f64 = 0.0;
    for (x, y) in a.iter().zip(b) {
        for (p, q) in x.split_whitespace().zip(y.split_whitespace()) {
            if let (Some(u), Some(v)) = (number(p), number(q)) {
                if u != v {
                    m = m.max((u - v).abs() / u.abs().max(v.abs()).max(1e-300));
                }
            }
        }
    }
    m
}

pub(super) fn first_difference(name: &str, a: &[String], ref_name: &str, r: &[String]) -> String {
    let i = r
        .iter()
        .zip(a.iter())
        .position(|(x, y)| x != y)
        .unwrap_or(r.len().min(a.len()));
    format!(
        "{name} differs from {ref_name} at line {} of {}: '{}' vs '{}'{}",
        i + 1,
        r.len(),
        a.get(i).map(String::as_str).unwrap_or("<none>"),
        r.get(i).map(String::as_str).unwrap_or("<none>"),
        if a.len() != r.len() {
            format!(" ({} vs {} lines)", a.len(), r.len())
        } else {
            String::new()
        }
    )
}

/// Compare every run's physics with the first stock run's. `exact`: every
/// heapmpi run must print exactly that. Otherwise each number of a heapmpi
/// run must lie within the range the stock runs span (and every word that
/// is not a number be the same).
pub fn compare(runs: &[(String, Variant, Vec<String>)], exact: bool) -> Verdict {
    let stock: Vec<&(String, Variant, Vec<String>)> =
        runs.iter().filter(|r| r.1 == Variant::Stock).collect();
    let heap: Vec<&(String, Variant, Vec<String>)> =
        runs.iter().filter(|r| r.1 == Variant::Heapmpi).collect();
    let mut v = Verdict {
        exact,
        stock_runs: stock.len(),
        heap_runs: heap.len(),
        stock_identical: true,
        heap_identical: true,
        ..Default::default()
    };
    let Some(reference) = stock.first() else {
        v.ok = false;
        v.heap_identical = false;
        v.difference = Some("no stock run succeeded: nothing to compare with".into());
        return v;
    };
    let (ref_name, _, r) = reference;
    v.lines = r.len();
    for (name, _, s) in stock.iter().skip(1) {
        if s != r {
            v.stock_identical = false;
            if v.stock_difference.is_none() {
                v.stock_difference = Some(first_difference(name, s, ref_name, r));
            }
            if same_shape(s, r) {
                v.max_rel_stock = v.max_rel_stock.max(max_rel(s, r));
            }
        }
    }
    // the range of every number over the stock runs shaped like the first
    let shaped: Vec<&Vec<String>> = stock
        .iter()
        .map(|x| &x.2)
        .filter(|s| same_shape(s, r))
        .collect();
    v.ok = !heap.is_empty();
    for (name, _, h) in &heap {
        if h == r {
            continue;
        }
        v.heap_identical = false;
        let shape = same_shape(h, r);
        if shape {
            v.max_rel_heap = v.max_rel_heap.max(max_rel(h, r));
        }
        if exact || !shape {
            if v.ok || v.difference.is_none() {
                v.difference = Some(first_difference(name, h, ref_name, r));
            }
            v.ok = false;
            continue;
        }
        // within the stock spread?
        'lines: for (i, line) in h.iter().enumerate() {
            for (j, tok) in line.split_whitespace().enumerate() {
                let Some(x) = number(tok) else { continue };
                let vals: Vec<f64> = shaped
                    .iter()
                    .filter_map(|s| s[i].split_whitespace().nth(j).and_then(number))
                    .collect();
                let lo = vals.iter().cloned().fold(f64::INFINITY, f64::min);
                let hi = vals.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                if x < lo || x > hi {
                    if v.ok || v.difference.is_none() {
                        v.difference = Some(format!(
                            "{name} line {}: '{}': {x} outside the stock runs' range [{lo}, {hi}] \
                             (stock {ref_name}: '{}')",
                            i + 1,
                            line,
                            r[i]
                        ));
                    }
                    v.ok = false;
                    break 'lines;
                }
            }
        }
    }
    if v.ok && !v.heap_identical && v.difference.is_none() {
        // within the spread, yet not identical: say where
        if let Some((name, _, h)) = heap.iter().find(|x| x.2 != *r) {
            v.difference = Some(first_difference(name, h, ref_name, r));
        }
    }
    v
}
