//! rfx experiments library.
