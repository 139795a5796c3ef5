//! Reporting: what people read. [`compare`] judges two runs against each other; [`html`] renders
//! a result as one self-contained HTML page of SVG charts (no script, no network), with the data of
//! every chart as CSV.

pub mod compare;
pub mod html;
pub mod svg;
