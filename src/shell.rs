//! Shell detection and hook injection.
