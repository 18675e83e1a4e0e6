//! Data sets (placeholder, see issue 2).
