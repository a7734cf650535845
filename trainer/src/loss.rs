//! The training objective of a batch: policy cross-entropy over the legal moves (only for
//! positions with a policy target) plus the weighted WDL cross-entropy, with the accuracies
//! that the log shows next to them.

use tch::{Kind, Tensor};
use varzero_eval_net::Net;

/// Losses and accuracies of a batch: (total, policy, value, policy acc, value acc).
pub fn batch_losses(
    net: &Net,
    x: &Tensor,
    pol_t: &Tensor,
    mask: &Tensor,
    wdl_t: &Tensor,
    train: bool,
    value_weight: f64,
) -> (Tensor, f64, f64, f64, f64) {
    let (logits, v) = net.model.forward(x, train);
    let masked = &logits + mask;
    let logp = masked.log_softmax(-1, Kind::Float);
    let has_target = pol_t
        .sum_dim_intlist(-1, false, Kind::Float)
        .gt(0.5)
        .to_kind(Kind::Float);
    let n_pol = has_target.sum(Kind::Float).clamp_min(1.0);
    let pol_loss = -((pol_t * &logp).sum_dim_intlist(-1, false, Kind::Float) * &has_target)
        .sum(Kind::Float)
        / &n_pol;
    let val_loss = -(wdl_t * v.log_softmax(-1, Kind::Float))
        .sum_dim_intlist(-1, false, Kind::Float)
        .mean(Kind::Float);
    let loss = &pol_loss + &val_loss * value_weight;
    let pacc = (masked
        .argmax(-1, false)
        .eq_tensor(&pol_t.argmax(-1, false))
        .to_kind(Kind::Float)
        * &has_target)
        .sum(Kind::Float)
        / &n_pol;
    let vacc = v
        .argmax(-1, false)
        .eq_tensor(&wdl_t.argmax(-1, false))
        .to_kind(Kind::Float)
        .mean(Kind::Float);
    (
        loss,
        pol_loss.double_value(&[]),
        val_loss.double_value(&[]),
        pacc.double_value(&[]),
        vacc.double_value(&[]),
    )
}
