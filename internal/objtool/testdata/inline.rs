// A Rust program with deep inlining, generics, closures, traits, iterators
// and the standard library, for the differential test of the object tool
// against llvm-symbolizer (see diff_test.go, which compiles it with rustc
// -O -g, DWARF 4 and 5, legacy and v0 name mangling).
use std::collections::{BTreeMap, HashMap};
use std::env;

mod work {
    pub trait Score {
        fn score(&self) -> u64;
    }

    #[derive(Debug, Clone)]
    pub struct Item {
        pub name: String,
        pub weight: u32,
    }

    impl Score for Item {
        #[inline]
        fn score(&self) -> u64 {
            self.name.bytes().fold(u64::from(self.weight), |h, b| mix(h ^ u64::from(b)))
        }
    }

    #[inline(always)]
    pub fn mix(mut x: u64) -> u64 {
        x ^= x >> 33;
        x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
        x ^= x >> 29;
        x
    }

    #[inline(always)]
    pub fn mix2(x: u64) -> u64 {
        mix(mix(x).wrapping_add(1))
    }

    #[inline]
    pub fn apply<F: Fn(u64) -> u64>(f: F, n: u64) -> u64 {
        (0..n).map(f).fold(0u64, |a, b| a.wrapping_add(b))
    }

    pub struct Acc<T> {
        pub sum: T,
    }

    impl<T: Copy + std::ops::Add<Output = T> + std::ops::Mul<Output = T>> Acc<T> {
        #[inline]
        pub fn add(&mut self, v: T, k: T) {
            self.sum = self.sum + v * k;
        }
    }

    #[inline(never)]
    pub fn total<S: Score>(items: &[S]) -> u64 {
        items.iter().map(|s| mix2(s.score())).fold(0, u64::wrapping_add)
    }
}

use work::Score;

#[inline(never)]
fn build(n: usize) -> Vec<work::Item> {
    (0..n)
        .map(|i| work::Item { name: format!("item-{}", i * 7919 % 1000), weight: (i % 13) as u32 })
        .collect()
}

#[inline(never)]
fn rank(items: &mut Vec<work::Item>) {
    items.sort_by(|a, b| a.score().cmp(&b.score()).then_with(|| a.name.cmp(&b.name)));
}

fn main() {
    let n: usize = env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1000);
    let mut items = build(n);
    rank(&mut items);
    let mut counts: HashMap<String, u32> = HashMap::new();
    let mut ordered: BTreeMap<u64, String> = BTreeMap::new();
    for it in &items {
        *counts.entry(it.name.clone()).or_insert(0) += 1;
        ordered.insert(it.score(), it.name.clone());
    }
    let mut acc = work::Acc { sum: 0u64 };
    for (k, v) in &ordered {
        acc.add(*k % 97, v.len() as u64);
    }
    let a = work::apply(|i| work::mix2(i) % 1000, n as u64);
    let f = work::Acc { sum: 1.5f64 };
    println!(
        "{} {} {} {} {} {}",
        work::total(&items),
        counts.len(),
        ordered.len(),
        acc.sum,
        a,
        f.sum
    );
}
