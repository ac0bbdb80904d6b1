//! Decode core: everything that is not the gate and not the window.
