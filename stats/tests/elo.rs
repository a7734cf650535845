//! Match statistics against values computed by hand (the arithmetic is in the comments).
//!
//! Elo: logistic Elo `elo(s) = -400 log10(1/s - 1)`; the interval is `s ± 1.959964 σ/√n` with
//! `σ²` the variance of the observed per-game (per-pair) scores, each end through `elo`.
//!
//! SPRT: the generalised SPRT of Michel Van den Bergh as fishtest and fastchess run it on game
//! pairs ("A Generalized Sequential Probability Ratio Test" and "Normalized Elo",
//! http://hardy.uhasselt.be/Fishtest/support_MLE_multinomial.pdf and
//! normalized_elo_practical.pdf; fastchess src/matchmaking/sprt/sprt.cpp):
//! `LLR = N/2 ln(var(t0)/var(t1))`, `var(t) = Σ p_i (x_i - t)²` over the pair scores
//! x = 0, 1/4, 1/2, 3/4, 1 with frequencies p_i (empty cells count 0.001 pairs, fishtest's
//! `LLRcalc.regularize`); normalised Elo `nelo` maps to
//! `t = 1/2 + nelo √(2 var) ln10/800`, logistic Elo to `t = 1/(1 + 10^(-elo/400))`.

use varzero_stats::*;

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

#[test]
fn elo_and_interval_from_wdl() {
    // W 12, D 5, L 3 (n = 20): s = (12 + 2.5)/20 = 0.725.
    // Per-game variance: [12 (1-0.725)² + 5 (0.5-0.725)² + 3 (0-0.725)²]/20
    //   = [12·0.075625 + 5·0.050625 + 3·0.525625]/20 = (0.9075 + 0.253125 + 1.576875)/20
    //   = 2.7375/20 = 0.136875; se = √(0.136875/20) = √0.00684375 = 0.0827270.
    // 1.959964·0.0827270 = 0.1621418: interval of s [0.5628581, 0.8871419].
    // elo(0.725) = -400 log10(0.275/0.725) = -400 log10(0.3793103) = 168.402
    // elo(0.5628581) = -400 log10(0.4371419/0.5628581) = -400 log10(0.7766461) = 43.911
    // elo(0.8871419) = -400 log10(0.1128581/0.8871419) = -400 log10(0.1272153) = 358.184
    let w = Wdl {
        wins: 12,
        draws: 5,
        losses: 3,
    };
    assert_eq!(w.points(), 14.5);
    let e = w.elo();
    assert!(close(e.score, 0.725, 1e-12));
    assert!(close(e.elo, 168.402, 1e-3), "{e:?}");
    assert!(close(e.lower, 43.911, 1e-3), "{e:?}");
    assert!(close(e.upper, 358.184, 1e-3), "{e:?}");
    assert_eq!(e.to_string(), "+168 [+44, +358]");

    // Even: W 5 D 10 L 5 is elo 0 with a symmetric interval.
    let even = Wdl {
        wins: 5,
        draws: 10,
        losses: 5,
    }
    .elo();
    assert!(close(even.elo, 0.0, 1e-9));
    assert!(close(even.lower, -even.upper, 1e-9));
    // All wins: +inf, shown as such.
    let all = Wdl {
        wins: 4,
        draws: 0,
        losses: 0,
    }
    .elo();
    assert_eq!(all.elo, f64::INFINITY);
    assert!(all.to_string().starts_with("+inf"));
    // Round trip of the conversion: elo(score(100)) = 100.
    assert!(close(elo_from_score(score_from_elo(100.0)), 100.0, 1e-9));
}

#[test]
fn pentanomial_elo() {
    // Pairs [LL, LD, WL+DD, WD, WW] = [0, 2, 10, 20, 8], N = 40.
    // Mean pair score (per game) = (2·0.25 + 10·0.5 + 20·0.75 + 8·1)/40 = 28.5/40 = 0.7125.
    // Variance = [2 (0.25-0.7125)² + 10 (0.5-0.7125)² + 20 (0.75-0.7125)² + 8 (1-0.7125)²]/40
    //   = [2·0.21390625 + 10·0.04515625 + 20·0.00140625 + 8·0.08265625]/40
    //   = (0.4278125 + 0.4515625 + 0.028125 + 0.66125)/40 = 1.56875/40 = 0.03921875.
    // se = √(0.03921875/40) = 0.0313124; s ± 1.959964 se = [0.6511287, 0.7738713].
    // elo(0.7125) = 157.659; elo(0.6511287) = 108.401; elo(0.7738713) = 213.725.
    let p = Pentanomial::from_counts(0, 2, 4, 6, 20, 8);
    assert_eq!(p.pairs(), 40);
    let e = p.elo();
    assert!(close(e.score, 0.7125, 1e-12));
    assert!(close(e.elo, 157.659, 1e-3), "{e:?}");
    assert!(close(e.lower, 108.401, 1e-3), "{e:?}");
    assert!(close(e.upper, 213.725, 1e-3), "{e:?}");

    // Pairs from game results: a win and a loss is one 1-1 pair (WL), two draws another (DD).
    let mut q = Pentanomial::default();
    q.add(GameScore::Win, GameScore::Loss);
    q.add(GameScore::Draw, GameScore::Draw);
    q.add(GameScore::Win, GameScore::Draw);
    q.add(GameScore::Loss, GameScore::Loss);
    assert_eq!(q.counts, [1, 0, 2, 1, 0]);
    assert_eq!(q.win_loss, 1);
}

#[test]
fn sprt_llr_normalized_and_logistic() {
    // Pairs [LL, LD, WL+DD, WD, WW] = [1, 3, 10, 5, 1], N = 20; p = [0.05, 0.15, 0.5, 0.25, 0.05].
    // Mean = 0.15·0.25 + 0.5·0.5 + 0.25·0.75 + 0.05·1 = 0.0375 + 0.25 + 0.1875 + 0.05 = 0.525.
    // var = 0.05·0.275625 + 0.15·0.075625 + 0.5·0.000625 + 0.25·0.050625 + 0.05·0.225625
    //     = 0.01378125 + 0.01134375 + 0.0003125 + 0.01265625 + 0.01128125 = 0.049375.
    //
    // Normalised, elo0 = 0, elo1 = 10: k = √(2·0.049375)·ln10/800 = 0.3142451·0.0028782 =
    //   0.00090447; t0 = 0.5, t1 = 0.50904470.
    //   var(t0) = var + (0.525-0.5)² = 0.049375 + 0.000625 = 0.05
    //   var(t1) = var + (0.525-0.5090447)² = 0.049375 + 0.00025457 = 0.04962957
    //   LLR = 10·ln(0.05/0.04962957) = 10·0.0074361 = 0.074361.
    let p = Pentanomial::from_counts(1, 3, 4, 6, 5, 1);
    let norm = Sprt::parse("elo0=0,elo1=10,alpha=0.05,beta=0.05").unwrap();
    assert_eq!(norm.model, EloModel::Normalized);
    let llr = norm.llr(&p);
    assert!(close(llr, 0.074361, 1e-5), "{llr}");
    // Logistic, elo0 = 0, elo1 = 10: t1 = 1/(1 + 10^(-10/400)) = 0.51438718;
    //   var(t1) = 0.049375 + (0.525-0.51438718)² = 0.049375 + 0.00011263 = 0.04948763
    //   LLR = 10·ln(0.05/0.04948763) = 10·0.0103002 = 0.103002.
    let logi = Sprt::parse("elo0=0,elo1=10,alpha=0.05,beta=0.05,model=logistic").unwrap();
    let llr = logi.llr(&p);
    assert!(close(llr, 0.103002, 1e-5), "{llr}");
    // Bounds: ln(0.05/0.95) = -2.944439, ln(0.95/0.05) = 2.944439.
    assert!(close(norm.lower_bound(), -2.944439, 1e-6));
    assert!(close(norm.upper_bound(), 2.944439, 1e-6));
    assert_eq!(norm.decide(0.07), SprtDecision::Continue);
    assert_eq!(norm.decide(3.0), SprtDecision::H1);
    assert_eq!(norm.decide(-3.0), SprtDecision::H0);
}

#[test]
fn sprt_decides_on_a_clear_difference_and_not_on_equal_play() {
    let sprt = Sprt::parse("elo0=0,elo1=10").unwrap();
    // 200 pairs, A clearly better: [LL, LD, WL+DD, WD, WW] = [5, 20, 75, 70, 30]; LLR 3.281.
    let strong = Pentanomial::from_counts(5, 20, 35, 40, 70, 30);
    let llr = sprt.llr(&strong);
    assert_eq!(sprt.decide(llr), SprtDecision::H1, "llr {llr}");
    // Equal play, symmetric counts: the estimate sits on elo0, so the LLR is negative and
    // goes below the lower bound with enough pairs (-4.966 for these 8000).
    let equal = Pentanomial::from_counts(400, 1200, 1200, 1600, 1200, 400);
    let llr = sprt.llr(&equal);
    assert!(llr < 0.0);
    assert_eq!(sprt.decide(llr), SprtDecision::H0, "llr {llr}");
    // No pairs: 0. Every pair won: empty cells count 0.001 pairs (fishtest), so the sample
    // has a variance. In logistic Elo, elo1 = 50 (t1 = 0.571463): var(t0) = 0.249979,
    // var(t1) = 0.183635, LLR = 15.002 ln(0.249979/0.183635) = 4.627: H1.
    assert_eq!(sprt.llr(&Pentanomial::default()), 0.0);
    let logistic = Sprt::parse("elo0=0,elo1=50,model=logistic").unwrap();
    let all_won = logistic.llr(&Pentanomial::from_counts(0, 0, 0, 0, 0, 30));
    assert!(close(all_won, 4.627, 1e-3), "llr {all_won}");
    assert_eq!(logistic.decide(all_won), SprtDecision::H1);
    // (In normalised Elo such a sample says little about 0 against 10: its normalised Elo is
    // enormous, far from both hypotheses, and the LLR stays near 0.)
    assert!(sprt.llr(&Pentanomial::from_counts(0, 0, 0, 0, 0, 30)).abs() < 0.1);
    // Only 1-1 pairs: the estimate is elo 0, the LLR is not positive.
    assert!(sprt.llr(&Pentanomial::from_counts(0, 0, 3, 2, 0, 0)) <= 0.0);
}

#[test]
fn sprt_spec_parsing() {
    let s = Sprt::parse("elo0=-2, elo1=3 alpha=0.1,beta=0.2").unwrap();
    assert_eq!((s.elo0, s.elo1, s.alpha, s.beta), (-2.0, 3.0, 0.1, 0.2));
    assert!(Sprt::parse("elo0=5,elo1=1").is_err());
    assert!(Sprt::parse("alpha=2").is_err());
    assert!(Sprt::parse("elo2=1").is_err());
    assert!(Sprt::parse("model=bayes").is_err());
}

#[test]
fn no_sprt_verdict_on_a_handful_of_pairs() {
    // One pair won and lost: counts [0.001, 0.001, 1, 0.001, 0.001], mean 1/2,
    // var(1/2) = 0.001 (2 * 0.25 + 2 * 0.0625) / 1.004 = 0.000622, t1 = 1/(1 + 10^-0.5) =
    // 0.759747, var(t1) = 0.068091: LLR = 1.004/2 ln(0.000622/0.068091) = -2.357, past
    // ln(0.1/0.9) = -2.197. The formula alone would accept H0 after two games.
    let sprt = Sprt::parse("elo0=0,elo1=200,alpha=0.1,beta=0.1,model=logistic").unwrap();
    let one = Pentanomial::from_counts(0, 0, 1, 0, 0, 0);
    let llr = sprt.llr(&one);
    assert!(close(llr, -2.357, 2e-3), "llr {llr}");
    assert_eq!(sprt.decide(llr), SprtDecision::H0);
    assert_eq!(sprt.verdict(&one), (llr, SprtDecision::Continue));
    // From SPRT_MIN_PAIRS pairs on, the verdict is the formula's.
    let many = Pentanomial::from_counts(0, 0, SPRT_MIN_PAIRS, 0, 0, 0);
    let (llr, d) = sprt.verdict(&many);
    assert_eq!(d, sprt.decide(llr));
    assert_eq!(d, SprtDecision::H0);
}

/// Two matches pooled are the match of all their games: [1, 0, 2, 1, 0] (WL 1) and
/// [0, 1, 1, 2, 1] (WL 0) add to [1, 1, 3, 3, 1] (WL 1); W/D/L 2/3/4 and 5/1/0 to 7/4/4.
#[test]
fn pooled_matches_add_their_counts() {
    let mut p = Pentanomial::from_counts(1, 0, 1, 1, 1, 0);
    p.merge(&Pentanomial::from_counts(0, 1, 0, 1, 2, 1));
    assert_eq!(p, Pentanomial::from_counts(1, 1, 1, 2, 3, 1));
    assert_eq!(p.pairs(), 9);
    let mut w = Wdl {
        wins: 2,
        draws: 3,
        losses: 4,
    };
    w.merge(&Wdl {
        wins: 5,
        draws: 1,
        losses: 0,
    });
    assert_eq!((w.wins, w.draws, w.losses), (7, 4, 4));
}
