//! Training loop, checkpoints and metrics for the policy/value network. Links libtorch.
//! (Built in a later issue.)
