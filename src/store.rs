//! The session store on disk.
