//! The policy/value network: input encoding, model, batched inference as a self-play evaluator,
//! arena and match play. Links libtorch. (Built in a later issue.)
