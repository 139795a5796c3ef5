//! Reporting: what people read. [`compare`] judges two runs against each other; [`html`] renders
//! a result as one self-contained HTML page of interactive charts (the charting library inlined, no
//! network), with the data of every chart as CSV; [`table`] is the summary a terminal shows.

pub mod cells;
pub mod chart;
pub mod compare;
pub mod consistency_page;
pub mod elastic_page;
pub mod experiment_page;
pub mod export;
pub mod html;
pub mod probe_figures;
pub mod run_page;
pub mod saturation_page;
pub mod stored;
pub mod summary;
pub mod table;
pub mod terminal;
pub mod text;
