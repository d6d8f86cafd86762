//! Turns markers and output into the session store.
