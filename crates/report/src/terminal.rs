//! Tables for a terminal, by comfy-table: columns as wide as their content, no borders, and
//! within the terminal's width (`COLUMNS`, else 100: what an 80-to-100-column terminal shows
//! unwrapped), a cell too long for its column wrapped onto lines of its own.

use comfy_table::{presets::NOTHING, CellAlignment, ColumnConstraint, ContentArrangement, Table};

/// How a column's cells line up: text from the left, numbers from the right.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// The width tables are fitted to: the terminal's `COLUMNS` when the shell exports it, else 100.
pub fn width() -> u16 {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse::<u16>().ok())
        .filter(|c| *c >= 40)
        .unwrap_or(100)
}

/// `text` as lines within [`width`], each after the first indented by two spaces: a sentence of
/// a run's summary, as long as its values make it, on any terminal.
pub fn paragraph(text: &str) -> String {
    let options = textwrap::Options::new(width().into()).subsequent_indent("  ");
    textwrap::fill(text, options)
}

/// `rows` under `header`, each column aligned as `align` says (missing entries: left), one line
/// per row unless a cell must wrap; no trailing spaces.
pub fn text_table(header: &[&str], align: &[Align], rows: &[Vec<String>]) -> String {
    let mut t = Table::new();
    t.load_preset(NOTHING)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(width())
        .set_header(header.iter().copied());
    for r in rows {
        t.add_row(r.iter().map(String::as_str));
    }
    for (i, column) in t.column_iter_mut().enumerate() {
        // One space between columns, none before the first.
        column.set_padding((u16::from(i > 0), 0));
        if align.get(i) == Some(&Align::Right) {
            column.set_cell_alignment(CellAlignment::Right);
        }
        // The first column names the row: it keeps its width, the others wrap first.
        if i == 0 {
            column.set_constraint(ColumnConstraint::ContentWidth);
        }
    }
    let mut text = t.trim_fmt();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_fit_their_content_and_numbers_align_right() {
        let t = text_table(
            &["operation", "count", "p99(us)"],
            &[Align::Left, Align::Right, Align::Right],
            &[
                vec!["READ".into(), "12".into(), "1.5".into()],
                vec!["UPDATE".into(), "3456".into(), "12000.0".into()],
            ],
        );
        assert_eq!(
            t,
            "operation count p99(us)\nREAD         12     1.5\nUPDATE     3456 12000.0\n"
        );
    }

    #[test]
    fn a_long_cell_wraps_within_the_width() {
        let long = "word ".repeat(60);
        let t = text_table(
            &["name", "notes"],
            &[Align::Left, Align::Left],
            &[vec!["a".into(), long.trim().into()]],
        );
        let widest = t.lines().map(|l| l.chars().count()).max().unwrap();
        assert!(widest <= width() as usize, "{widest}: {t}");
        assert!(t.lines().count() > 3, "{t}");
    }
}
