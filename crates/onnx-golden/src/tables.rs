//! Text tables for the reports: aligned columns, markdown, XML escaping.

use std::fmt::Write as _;

/// `header` and `rows` as text columns, each padded to its widest cell and
/// separated by two spaces, one line each (trailing spaces trimmed).
pub(crate) fn aligned_table(header: &[String], rows: &[Vec<String>]) -> String {
    let widths: Vec<usize> = (0..header.len())
        .map(|col| {
            rows.iter()
                .map(|r| r[col].len())
                .chain([header[col].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &[String]| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        padded.join("  ").trim_end().to_string() + "\n"
    };
    let mut out = line(header);
    for row in rows {
        out.push_str(&line(row));
    }
    out
}

/// `s` safe inside a markdown table cell: pipes escaped, newlines spaces.
pub(crate) fn markdown_escape(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// Appends `header` and `rows` to `out` as a markdown table, every cell
/// escaped ([`markdown_escape`]).
pub(crate) fn markdown_table(out: &mut String, header: &[String], rows: &[Vec<String>]) {
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let _ = writeln!(out, "|{}", "---|".repeat(header.len()));
    for row in rows {
        let cells: Vec<String> = row.iter().map(|c| markdown_escape(c)).collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
}

/// `s` escaped for XML text and attribute values.
pub(crate) fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}
