//! A small deterministic generator (SplitMix64 seeding xoshiro256**) with the distributions the
//! search needs, so that games are reproducible bit for bit from a seed on any platform.

#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E3779B97F4A7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
    z ^ (z >> 31)
}

impl Rng {
    pub fn new(seed: u64) -> Rng {
        let mut x = seed;
        Rng {
            s: [
                splitmix(&mut x),
                splitmix(&mut x),
                splitmix(&mut x),
                splitmix(&mut x),
            ],
        }
    }

    /// A seed derived from a base seed and an index (e.g. the game id).
    pub fn derive(seed: u64, index: u64) -> u64 {
        let mut x = seed ^ index.wrapping_mul(0xD1B54A32D192ED03);
        splitmix(&mut x)
    }

    pub fn next_u64(&mut self) -> u64 {
        let r = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        r
    }

    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.uniform() * n as f64) as usize % n.max(1)
    }

    fn normal(&mut self) -> f64 {
        // Box-Muller.
        let u1 = self.uniform().max(1e-300);
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }

    /// Gamma(shape, 1) by Marsaglia and Tsang (with the boost for shape < 1).
    pub fn gamma(&mut self, shape: f64) -> f64 {
        if shape < 1.0 {
            let u = self.uniform().max(1e-300);
            return self.gamma(shape + 1.0) * u.powf(1.0 / shape);
        }
        let d = shape - 1.0 / 3.0;
        let c = 1.0 / (9.0 * d).sqrt();
        loop {
            let x = self.normal();
            let v = (1.0 + c * x).powi(3);
            if v <= 0.0 {
                continue;
            }
            let u = self.uniform();
            if u < 1.0 - 0.0331 * x.powi(4) || u.ln() < 0.5 * x * x + d * (1.0 - v + v.ln()) {
                return d * v;
            }
        }
    }

    /// A Dirichlet(alpha, ..., alpha) sample of length `out.len()`.
    pub fn dirichlet(&mut self, alpha: f64, out: &mut [f32]) {
        let mut sum = 0.0;
        for x in out.iter_mut() {
            let g = self.gamma(alpha);
            *x = g as f32;
            sum += g;
        }
        if sum > 0.0 {
            for x in out.iter_mut() {
                *x = (*x as f64 / sum) as f32;
            }
        } else {
            let n = out.len() as f32;
            out.iter_mut().for_each(|x| *x = 1.0 / n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_in_range() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
        let mut d = [0f32; 10];
        a.dirichlet(0.3, &mut d);
        let s: f32 = d.iter().sum();
        assert!((s - 1.0).abs() < 1e-4);
        // Gamma mean is the shape.
        let m: f64 = (0..20000).map(|_| a.gamma(2.5)).sum::<f64>() / 20000.0;
        assert!((m - 2.5).abs() < 0.1, "gamma mean {m}");
    }
}
