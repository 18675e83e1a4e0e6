//! Experiments across the papers (issue 31): every registry method against every kernel it approximates,
//! on the same data, seeds and budgets. Which method approximates which kernel is declared once, in
//! `rfx_registry::targets`; the kind only runs it.

pub mod cross_benchmark;
