//! The training objective of a batch: policy cross-entropy over the legal moves (only for
//! positions with a policy target) plus the weighted WDL cross-entropy, with the accuracies
//! that the log shows next to them; where the net has an opponent-policy head, plus its
//! weighted cross-entropy against the next position's policy target (KataGo's auxiliary
//! opponent-policy target).

use tch::{Kind, Tensor};
use varzero_eval_net::Net;

/// The opponent-policy term of a batch: its targets, masks and weight.
pub struct OpponentTargets<'a> {
    pub pol_t: &'a Tensor,
    pub mask: &'a Tensor,
    pub weight: f64,
}

/// Cross-entropy of `target` against the softmax of `logits + mask` (mask 0 on legal moves,
/// -1e9 elsewhere), averaged over the rows that have a target (rows of zeros are left out),
/// with the masked log-probabilities and each row's 0/1 "has a target" flag.
pub fn masked_policy_loss(
    logits: &Tensor,
    target: &Tensor,
    mask: &Tensor,
) -> (Tensor, Tensor, Tensor) {
    let masked = logits + mask;
    let logp = masked.log_softmax(-1, Kind::Float);
    let has_target = target
        .sum_dim_intlist(-1, false, Kind::Float)
        .gt(0.5)
        .to_kind(Kind::Float);
    let n = has_target.sum(Kind::Float).clamp_min(1.0);
    let loss = -((target * &logp).sum_dim_intlist(-1, false, Kind::Float) * &has_target)
        .sum(Kind::Float)
        / &n;
    (loss, masked, has_target)
}

/// Losses and accuracies of a batch: (total, policy, value, policy acc, value acc).
/// `opponent` is used where the net has the opponent-policy head, ignored elsewhere.
#[allow(clippy::too_many_arguments)]
pub fn batch_losses(
    net: &Net,
    x: &Tensor,
    pol_t: &Tensor,
    mask: &Tensor,
    wdl_t: &Tensor,
    train: bool,
    value_weight: f64,
    opponent: Option<OpponentTargets>,
) -> (Tensor, f64, f64, f64, f64) {
    let (logits, v, opp_logits) = net.model.forward_train(x, train);
    let (pol_loss, masked, has_target) = masked_policy_loss(&logits, pol_t, mask);
    let n_pol = has_target.sum(Kind::Float).clamp_min(1.0);
    let val_loss = -(wdl_t * v.log_softmax(-1, Kind::Float))
        .sum_dim_intlist(-1, false, Kind::Float)
        .mean(Kind::Float);
    let mut loss = &pol_loss + &val_loss * value_weight;
    if let (Some(o), Some(l)) = (opponent, opp_logits) {
        let (opp_loss, ..) = masked_policy_loss(&l, o.pol_t, o.mask);
        loss += opp_loss * o.weight;
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// By hand: logits (0, ln 3, 5) with the third move illegal give probabilities 1/4 and 3/4;
    /// a target (1/2, 1/2) costs -(ln(1/4) + ln(3/4)) / 2 = 0.836988; a row of zeros (no
    /// target: the game's last position) is left out of the mean.
    #[test]
    fn the_masked_policy_loss_on_a_hand_made_batch() {
        let logits = Tensor::from_slice(&[0.0f32, 3f32.ln(), 5.0, 1.0, 2.0, 3.0]).view([2, 3]);
        let mask = Tensor::from_slice(&[0.0f32, 0.0, -1e9, 0.0, 0.0, 0.0]).view([2, 3]);
        let target = Tensor::from_slice(&[0.5f32, 0.5, 0.0, 0.0, 0.0, 0.0]).view([2, 3]);
        let (loss, _, has) = masked_policy_loss(&logits, &target, &mask);
        let want = -(0.25f64.ln() + 0.75f64.ln()) / 2.0;
        assert!((loss.double_value(&[]) - want).abs() < 1e-6);
        assert_eq!(Vec::<f32>::try_from(&has).unwrap(), vec![1.0, 0.0]);
    }
}
