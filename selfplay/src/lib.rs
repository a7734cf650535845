//! Self-play: batched, multi-threaded PUCT search over the rules core, and the generator that
//! turns compute into training data. (Built in a later issue; the crate exists so the workspace
//! has its final shape.)
